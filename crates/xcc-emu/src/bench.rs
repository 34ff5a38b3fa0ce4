//! `xcc-emu bench`: how fast and how accurately the router forwards on this machine.
//!
//! Two hosts, one link of the given rate (1 ms delay, DropTail of 1000 packets). Host `a`
//! (this thread, at real-time priority below the router's)
//! offers 1500-byte IP packets (UDP) at 1.05 times the link rate for a few seconds, so the link
//! is busy all the time; host `b` has a socket bound that never reads (the kernel discards at
//! the socket, no ICMP comes back). Measured:
//! - packets/s and Mbit/s the router wrote to `b`, and the achieved rate against the configured
//!   one over the busy period (first to last write);
//! - delay error: how late each packet left the router behind its virtual-time delivery
//!   instant (the histogram of `FabricStats::lateness_us`, 1 µs buckets);
//! - kernel-side drops at the TUN devices (`tx_dropped`: the router did not read fast enough).

use std::io;
use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::netns::{self, Topology};
use crate::plan::Plan;
use crate::router::Router;
use crate::sys;

fn scenario(rate_mbps: u64) -> io::Result<xcc_build::Scenario> {
    let text = format!(
        r#"name = "emu-bench-{rate_mbps}"
duration = "10s"
[[host]]
name = "a"
[[host]]
name = "b"
[[link]]
between = ["a", "b"]
rate = "{rate_mbps}Mbps"
delay = "1ms"
buffer = "1000pkt"
"#
    );
    xcc_build::resolve(&text, "bench", xcc_build::Format::Toml).map_err(|e| io::Error::other(e.to_string()))
}

/// One measurement at `rate_mbps` for `seconds`.
pub fn measure(rate_mbps: u64, seconds: f64) -> io::Result<Value> {
    netns::check_environment()?;
    let s = scenario(rate_mbps)?;
    let prefix = format!("{}b", netns::run_prefix());
    let mut plan = Plan::new(&s, &prefix, "reno");
    let hosts = plan.hosts.clone();
    let mut topo = Topology::create(hosts.clone())?;
    let att = plan.attachments();
    let fabric = std::mem::replace(&mut plan.fabric, crate::fabric::Fabric::empty());
    let stop = Arc::new(AtomicBool::new(false));
    let stop_r = stop.clone();
    let router = thread::spawn(move || -> io::Result<Router> {
        let mut r = Router::open(fabric, &att)?;
        r.run(&stop_r, None)?;
        Ok(r)
    });
    thread::sleep(Duration::from_millis(50));
    let dst = SocketAddrV4::new(Ipv4Addr::from(hosts[1].addr), 9);
    let _sink = sys::in_netns(&hosts[1].path(), || UdpSocket::bind(dst))?;
    let tx = sys::in_netns(&hosts[0].path(), || UdpSocket::bind(SocketAddrV4::new(Ipv4Addr::from(hosts[0].addr), 9)))?;
    tx.connect(dst)?;
    let payload = vec![0u8; 1472];
    // The offered load must not be what limits the measurement: the sender gets real-time
    // priority too (below the router's), or on a busy machine it cannot fill the link.
    let sender_rt = sys::realtime_priority(30);
    let gap_ns = 1500.0 * 8.0 / (rate_mbps as f64 * 1e6 * 1.05) * 1e9;
    // Bursts of 8 packets, sleeping in between (absolute deadlines): a spinning sender would
    // compete with the router for the two cores.
    const BURST: u64 = 8;
    let start = Instant::now();
    let mut sent = 0u64;
    let mut send_errors = 0u64;
    let t0 = sys::monotonic_ns();
    while start.elapsed().as_secs_f64() < seconds {
        for _ in 0..BURST {
            if tx.send(&payload).is_err() {
                send_errors += 1;
            }
            sent += 1;
        }
        let due = t0 + (sent as f64 * gap_ns) as u64;
        sys::sleep_until(due);
    }
    // Let the queue drain before stopping the router.
    thread::sleep(Duration::from_millis(1500 * 8 * 1000 / (rate_mbps * 1000) + 50));
    stop.store(true, Ordering::Relaxed);
    let r = router.join().map_err(|_| io::Error::other("router thread panicked"))??;
    let kernel: Vec<_> =
        hosts.iter().map(|h| netns::dev_counters(&h.path(), netns::TUN_DEV)).collect::<io::Result<_>>()?;
    topo.destroy()?;
    let st = &r.fabric.stats;
    let busy_s = (st.last_delivery_ns - st.first_delivery_ns.unwrap_or(0)) as f64 * 1e-9;
    let achieved = st.bytes_delivered as f64 * 8.0 / busy_s.max(1e-9);
    let configured = rate_mbps as f64 * 1e6;
    Ok(json!({
        "rate_mbps": rate_mbps,
        "seconds": seconds,
        "offered_packets": sent,
        "send_errors": send_errors,
        "forwarded_packets": st.forwarded,
        "packets_per_s": st.forwarded as f64 / busy_s.max(1e-9),
        "achieved_mbps": achieved / 1e6,
        "rate_error": achieved / configured - 1.0,
        "delay_error_us": {
            "p50": st.lateness_quantile_us(0.5),
            "p90": st.lateness_quantile_us(0.9),
            "p99": st.lateness_quantile_us(0.99),
            "p999": st.lateness_quantile_us(0.999),
        },
        "link_drops": st.dropped_by_links,
        "kernel_tx_dropped": kernel.iter().map(|k| k.tx_dropped).sum::<u64>(),
        "kernel_rx_dropped": kernel.iter().map(|k| k.rx_dropped).sum::<u64>(),
        "write_failures": st.write_failures,
        "realtime": r.realtime,
        "sender_realtime": sender_rt,
    }))
}
