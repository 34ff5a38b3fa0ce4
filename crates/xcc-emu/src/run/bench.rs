//! `xcc-emu bench`: how fast and how accurately the router forwards on this machine.
//!
//! Two hosts, one link of the given rate (1 ms delay, DropTail of 1000 packets), and one of two
//! loads ([`Mode`]):
//! - **TCP**: Linux TCP (NewReno, the namespaces' default) from host `a` to host `b`, a few
//!   connections writing as fast as they can (the applications' threads at real-time priority
//!   below the router's, as the UDP sender: at 2.5 Gbit/s on a machine busy with other work
//!   they, not the router, fell behind); the 1000-packet buffer is several times the
//!   path's bandwidth-delay product, so after slow start the link never idles. Measured over a
//!   steady window (after a warm-up): the bottleneck's output (bytes the link model sent, IP
//!   lengths) against the configured rate, and the receivers' goodput against the most the
//!   link can carry.
//! - **UDP**: host `a` (this thread, at real-time priority below the router's) offers
//!   1500-byte IP packets at 1.05 times the link rate; host `b` has a socket bound that never
//!   reads (the kernel discards at the socket, no ICMP comes back). The achieved rate is the
//!   bytes the router wrote to `b` over the busy period (first to last write).
//!
//! Both record the delay error (how late each packet left the router behind its virtual-time
//! delivery instant: the histogram of `FabricStats::lateness_us`, 1 µs buckets), kernel-side
//! drops at the TUN devices (`tx_dropped`: the router did not read fast enough; `rx_dropped`:
//! the host did not take what it wrote), and the machine's state: load average before and
//! after, and how busy each CPU was during the run (`/proc/stat`).

use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::os::netns::{self, Topology};
use crate::os::sys;
use crate::router::event_loop::Router;
use crate::run::plan::Plan;

/// The load the bench offers.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Linux TCP connections (the issue's "real TCP").
    Tcp,
    /// Paced 1500-byte UDP packets from a userspace sender.
    Udp,
}

impl Mode {
    pub fn parse(s: &str) -> Option<Mode> {
        match s {
            "tcp" => Some(Mode::Tcp),
            "udp" => Some(Mode::Udp),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Mode::Tcp => "tcp",
            Mode::Udp => "udp",
        }
    }
}

/// TCP connections of the TCP load: a few, so one connection's loss recovery does not idle
/// the link, and few enough that each still has a window of many segments.
const TCP_CONNECTIONS: usize = 4;
/// Warm-up excluded from the TCP measurement (slow start, the first losses), at most a third
/// of the run.
const TCP_WARMUP: Duration = Duration::from_millis(1000);
const TCP_PORT: u16 = 5001;

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

/// Per-CPU jiffies from `/proc/stat`: (busy, total) for each `cpuN` line.
fn cpu_times() -> Vec<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    text.lines()
        .filter(|l| l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(u8::is_ascii_digit))
        .map(|l| {
            let v: Vec<u64> = l.split_whitespace().skip(1).filter_map(|x| x.parse().ok()).collect();
            let total: u64 = v.iter().take(8).sum();
            // idle and iowait are the 4th and 5th fields.
            let idle = v.get(3).copied().unwrap_or(0) + v.get(4).copied().unwrap_or(0);
            (total - idle, total)
        })
        .collect()
}

fn load_average() -> Value {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let v: Vec<f64> = text.split_whitespace().take(3).filter_map(|x| x.parse().ok()).collect();
    json!(v)
}

/// One measurement of `mode` at `rate_mbps` for `seconds`.
pub fn measure(mode: Mode, rate_mbps: u64, seconds: f64) -> io::Result<Value> {
    netns::check_environment()?;
    let load_before = load_average();
    let s = scenario(rate_mbps)?;
    let prefix = format!("{}b", netns::run_prefix());
    let network =
        xcc_build::Network::build(s).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
    let mut plan = Plan::new(network, &prefix, "reno");
    let hosts = plan.hosts.clone();
    let forward = plan.fabric.route(0, 1).and_then(|r| r.first().copied()).unwrap_or(0);
    let mut topo = Topology::create(hosts.clone())?;
    let att = plan.attachments();
    let fabric = std::mem::replace(&mut plan.fabric, crate::router::fabric::Fabric::empty());
    let stop = Arc::new(AtomicBool::new(false));
    let stop_r = stop.clone();
    let (attached_tx, attached_rx) = std::sync::mpsc::channel::<()>();
    let sample_ns = 100_000_000;
    let router = thread::spawn(move || -> io::Result<Router> {
        let mut r = Router::open(fabric, &att)?;
        r.sample_every = Some(sample_ns);
        let _ = attached_tx.send(());
        r.run(&stop_r, None)?;
        Ok(r)
    });
    if attached_rx.recv().is_err() {
        return match router.join() {
            Ok(Err(e)) => Err(e),
            _ => Err(io::Error::other("the router thread ended before attaching")),
        };
    }
    netns::wait_until_running(&hosts, Duration::from_secs(2));
    let kernel_before: Vec<_> =
        hosts.iter().map(|h| netns::dev_counters(&h.path(), netns::TUN_DEV)).collect::<io::Result<_>>()?;
    let awake = sys::KeepAwake::start();
    let rt_throttling = crate::os::sysctl_lift::Lift::rt_throttling();
    let backlog = crate::os::sysctl_lift::Lift::receive_backlog();
    let keep_awake = awake.method();
    let cpu_before = cpu_times();
    let load = match mode {
        Mode::Udp => udp_load(&hosts, rate_mbps, seconds),
        Mode::Tcp => tcp_load(&hosts, seconds),
    };
    let cpu_after = cpu_times();
    drop(awake);
    // Let the queue drain before stopping the router.
    thread::sleep(Duration::from_millis(1500 * 8 * 1000 / (rate_mbps * 1000) + 50));
    stop.store(true, Ordering::Relaxed);
    let r = router.join().map_err(|_| io::Error::other("router thread panicked"))??;
    let load = load?;
    let kernel: Vec<_> = hosts
        .iter()
        .zip(&kernel_before)
        .map(|(h, b)| netns::dev_counters(&h.path(), netns::TUN_DEV).map(|c| c.since(b)))
        .collect::<io::Result<_>>()?;
    topo.destroy()?;
    let st = &r.fabric.stats;
    let configured = rate_mbps as f64 * 1e6;
    let busy: Vec<f64> =
        cpu_before.iter().zip(&cpu_after).map(|(b, a)| (a.0 - b.0) as f64 / ((a.1 - b.1) as f64).max(1.0)).collect();
    let mut out = json!({
        "mode": mode.name(),
        "rate_mbps": rate_mbps,
        "seconds": seconds,
        "forwarded_packets": st.forwarded,
        "packets_read": st.packets_read,
        "delay_error_us": {
            "p50": st.lateness_quantile_us(0.5),
            "p90": st.lateness_quantile_us(0.9),
            "p99": st.lateness_quantile_us(0.99),
            "p999": st.lateness_quantile_us(0.999),
            "max": st.lateness_max_us,
        },
        "link_drops": st.dropped_by_links,
        "kernel_tx_dropped": kernel.iter().map(|k| k.tx_dropped).sum::<u64>(),
        "kernel_rx_dropped": kernel.iter().map(|k| k.rx_dropped).sum::<u64>(),
        "write_failures": st.write_failures,
        "realtime": r.realtime,
        "tun_offload": r.offload,
        "router_cpu": r.cpu,
        "router_cpu_share": r.cpu_ns as f64 / (r.wall_ns as f64).max(1.0),
        "gro_writes": r.coalesce.as_ref().map_or(0, |c| c.merged_writes),
        "gro_segments": r.coalesce.as_ref().map_or(0, |c| c.merged_segments),
        "router_busy_share": r.busy_iterations as f64 / (r.iterations as f64).max(1.0),
        "super_packets": st.super_packets,
        "bad_offload": st.bad_offload,
        "keep_awake": keep_awake,
        "rt_throttling_lifted": rt_throttling.lifted(),
        "receive_backlog_raised": backlog.lifted(),
        "load_average_before": load_before,
        "load_average_after": load_average(),
        "cpu_busy": busy,
    });
    match load {
        Load::Udp { sent, send_errors, sender_rt, gso } => {
            out["sender_udp_segment"] = json!(gso);
            let busy_s = (st.last_delivery_ns - st.first_delivery_ns.unwrap_or(0)) as f64 * 1e-9;
            let achieved = st.bytes_delivered as f64 * 8.0 / busy_s.max(1e-9);
            out["offered_packets"] = json!(sent);
            out["send_errors"] = json!(send_errors);
            out["sender_realtime"] = json!(sender_rt);
            out["packets_per_s"] = json!(st.forwarded as f64 / busy_s.max(1e-9));
            out["achieved_mbps"] = json!(achieved / 1e6);
            out["rate_error"] = json!(achieved / configured - 1.0);
        }
        Load::Tcp { window, goodput_bytes, apps_rt } => {
            out["apps_realtime"] = json!(apps_rt);
            // The bottleneck's output over the window, from the router's samples (cumulative
            // bytes every 100 ms on the run clock).
            let (from, to) = (window.0.saturating_sub(r.t0_ns), window.1.saturating_sub(r.t0_ns));
            let rows: Vec<_> = r.fabric.series.iter().filter(|x| x.link == forward).collect();
            let first = rows.iter().find(|x| x.time_ns >= from);
            let last = rows.iter().rev().find(|x| x.time_ns <= to);
            let (Some(a), Some(b)) = (first, last) else {
                return Err(io::Error::other("the TCP window holds no link samples"));
            };
            let dt = (b.time_ns - a.time_ns) as f64 * 1e-9;
            let achieved = (b.bytes_out - a.bytes_out) as f64 * 8.0 / dt.max(1e-9);
            let goodput = goodput_bytes as f64 * 8.0 / ((window.1 - window.0) as f64 * 1e-9);
            out["connections"] = json!(TCP_CONNECTIONS);
            out["window_s"] = json!(dt);
            out["achieved_mbps"] = json!(achieved / 1e6);
            out["rate_error"] = json!(achieved / configured - 1.0);
            out["packets_per_s"] = json!(st.forwarded as f64 / ((st.last_delivery_ns as f64) * 1e-9).max(1e-9));
            out["goodput_mbps"] = json!(goodput / 1e6);
        }
    }
    Ok(out)
}

enum Load {
    Udp {
        sent: u64,
        send_errors: u64,
        sender_rt: bool,
        /// Whether the sender's bursts went out as `UDP_SEGMENT` super-packets.
        gso: bool,
    },
    /// Monotonic instants of the measurement window, and the bytes the receivers read in it.
    Tcp { window: (u64, u64), goodput_bytes: u64, apps_rt: bool },
}

fn udp_load(hosts: &[netns::HostNs], rate_mbps: u64, seconds: f64) -> io::Result<Load> {
    let dst = SocketAddrV4::new(Ipv4Addr::from(hosts[1].addr), 9);
    let _sink = sys::in_netns(&hosts[1].path(), || UdpSocket::bind(dst))?;
    let tx = sys::in_netns(&hosts[0].path(), || UdpSocket::bind(SocketAddrV4::new(Ipv4Addr::from(hosts[0].addr), 9)))?;
    tx.connect(dst)?;
    // Bursts of 8 packets, one system call each (`UDP_SEGMENT`: the kernel cuts the burst into
    // 1500-byte packets, or the TUN device hands it to the router whole): one send per packet
    // could not offer more than about 1.7 Gbit/s here.
    const BURST: u64 = 8;
    let gso = set_udp_segment(&tx, 1472);
    let payload = vec![0u8; if gso { 1472 * BURST as usize } else { 1472 }];
    let per_send = if gso { BURST } else { 1 };
    // The offered load must not be what limits the measurement: the sender gets real-time
    // priority too (below the router's), or on a busy machine it cannot fill the link.
    let sender_rt = sys::realtime_priority(30);
    let gap_ns = 1500.0 * 8.0 / (rate_mbps as f64 * 1e6 * 1.05) * 1e9;
    // Sleeping between bursts (absolute deadlines): a spinning sender would compete with the
    // router for the two cores.
    let start = Instant::now();
    let mut sent = 0u64;
    let mut send_errors = 0u64;
    let t0 = sys::monotonic_ns();
    while start.elapsed().as_secs_f64() < seconds {
        for _ in 0..BURST / per_send {
            if tx.send(&payload).is_err() {
                send_errors += per_send;
            }
            sent += per_send;
        }
        let due = t0 + (sent as f64 * gap_ns) as u64;
        sys::sleep_until(due);
    }
    if sender_rt {
        // Back to normal scheduling for the rest of the bench.
        let p = libc::sched_param { sched_priority: 0 };
        // SAFETY: pid 0 is the calling thread; valid sched_param.
        unsafe { libc::sched_setscheduler(0, libc::SCHED_OTHER, &p) };
    }
    Ok(Load::Udp { sent, send_errors, sender_rt, gso })
}

/// Asks the kernel to cut each send on `sock` into datagrams of `size` bytes (`UDP_SEGMENT`,
/// Linux 4.18); false where it cannot.
fn set_udp_segment(sock: &UdpSocket, size: u16) -> bool {
    let v = size as libc::c_int;
    // SAFETY: valid fd and option value of its size.
    unsafe {
        libc::setsockopt(
            std::os::fd::AsRawFd::as_raw_fd(sock),
            libc::SOL_UDP,
            libc::UDP_SEGMENT,
            (&v as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        ) == 0
    }
}

fn tcp_load(hosts: &[netns::HostNs], seconds: f64) -> io::Result<Load> {
    let dst = SocketAddrV4::new(Ipv4Addr::from(hosts[1].addr), TCP_PORT);
    let listener = sys::in_netns(&hosts[1].path(), || TcpListener::bind(dst))?;
    let received = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let mut threads = Vec::new();
    let mut senders = Vec::new();
    // XCC_BENCH_APPS_RT=0 leaves the applications at normal priority (docs/emu.md measures both).
    let apps_rt = std::env::var("XCC_BENCH_APPS_RT").map_or(true, |v| v != "0");
    for _ in 0..TCP_CONNECTIONS {
        let s = sys::in_netns(&hosts[0].path(), || crate::hosts::apps::tcp_connect_with(dst.into(), "reno"))?;
        let (mut r, _) = listener.accept()?;
        let received = received.clone();
        threads.push(thread::spawn(move || {
            // The hosts' applications at real-time priority below the router's, as the UDP
            // sender: the bench measures the router, not the applications' share of a machine
            // busy with other work.
            if apps_rt {
                sys::realtime_priority(30);
                crate::os::cpu::keep_off_router_cpu();
            }
            let mut buf = vec![0u8; 256 * 1024];
            while let Ok(n) = r.read(&mut buf) {
                if n == 0 {
                    break;
                }
                received.fetch_add(n as u64, Ordering::Relaxed);
            }
        }));
        let done = done.clone();
        s.set_write_timeout(Some(Duration::from_millis(50)))?;
        senders.push(thread::spawn(move || {
            if apps_rt {
                sys::realtime_priority(30);
                crate::os::cpu::keep_off_router_cpu();
            }
            let mut s = s;
            let chunk = vec![0x5Au8; 256 * 1024];
            while !done.load(Ordering::Relaxed) {
                match s.write(&chunk) {
                    Ok(_) => {}
                    Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {}
                    Err(_) => break,
                }
            }
            // Reset rather than drain megabytes of send buffer after the measurement.
            let linger = libc::linger { l_onoff: 1, l_linger: 0 };
            // SAFETY: valid fd and struct linger.
            unsafe {
                libc::setsockopt(
                    std::os::fd::AsRawFd::as_raw_fd(&s),
                    libc::SOL_SOCKET,
                    libc::SO_LINGER,
                    (&linger as *const libc::linger).cast(),
                    std::mem::size_of::<libc::linger>() as libc::socklen_t,
                )
            };
        }));
    }
    let start = sys::monotonic_ns();
    let warm = start + (TCP_WARMUP.as_nanos() as u64).min((seconds * 1e9 / 3.0) as u64);
    let end = start + (seconds * 1e9) as u64;
    sys::sleep_until(warm);
    let (t_a, b_a) = (sys::monotonic_ns(), received.load(Ordering::Relaxed));
    sys::sleep_until(end);
    let (t_b, b_b) = (sys::monotonic_ns(), received.load(Ordering::Relaxed));
    done.store(true, Ordering::Relaxed);
    for t in senders.into_iter().chain(threads) {
        let _ = t.join();
    }
    Ok(Load::Tcp { window: (t_a, t_b), goodput_bytes: b_b - b_a, apps_rt })
}
