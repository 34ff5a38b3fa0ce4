//! Real packets through the TUN router between two network namespaces (needs root and
//! /dev/net/tun; skipped with the reason otherwise).
//!
//! Topology: host `a` -- host `b`, 20 Mbit/s each way, 5 ms one-way delay (RTT 10 ms).

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use xcc_build::Network;
use xcc_emu::hosts::apps;
use xcc_emu::os::netns::{self, Topology};
use xcc_emu::os::sys;
use xcc_emu::router::event_loop::Router;
use xcc_emu::run::plan::Plan;

const RATE_BPS: f64 = 20e6;

fn scenario(queue: &str, buffer_pkt: u32) -> xcc_build::Scenario {
    let text = format!(
        r#"
name = "emu-two-hosts"
duration = "10s"
[[host]]
name = "a"
[[host]]
name = "b"
[[link]]
between = ["a", "b"]
rate = "20Mbps"
delay = "5ms"
buffer = "{buffer_pkt}pkt"
queue = {queue}
"#
    );
    xcc_build::resolve(&text, "emu-two-hosts.toml", xcc_build::Format::Toml).expect("valid scenario")
}

fn skip_reason() -> Option<String> {
    netns::check_environment().err().map(|e| e.to_string())
}

fn addr(plan: &Plan, port: usize, p: u16) -> SocketAddr {
    let a = plan.hosts[port].addr;
    SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::from(a), p))
}

/// Brings the plan up, runs `body` with the router running in its own thread, stops the router
/// and returns it (for its counters) with the kernel's TUN counters of every host.
fn with_router<T>(plan: Plan, body: impl FnOnce(&Plan) -> T) -> (T, Router, Vec<netns::DevCounters>) {
    let Plan { scenario, sessions, host_nodes, hosts, fabric } = plan;
    let mut topo = Topology::create(hosts.clone()).expect("namespaces");
    let shell = Plan {
        scenario,
        sessions,
        host_nodes,
        hosts,
        fabric: xcc_emu::router::fabric::Fabric::new(
            vec![],
            vec![],
            vec![],
            xcc_emu::router::carrier::Carriers::standard(),
        ),
    };
    let att = shell.attachments();
    let stop = Arc::new(AtomicBool::new(false));
    let stop2 = stop.clone();
    let router = thread::spawn(move || {
        let mut r = Router::open(fabric, &att).expect("router attaches to the TUN devices");
        r.run(&stop2, None).expect("router loop");
        r
    });
    thread::sleep(Duration::from_millis(100));
    let out = body(&shell);
    stop.store(true, Ordering::Relaxed);
    let router = router.join().expect("router thread");
    let counters =
        shell.hosts.iter().map(|h| netns::dev_counters(&h.path(), netns::TUN_DEV).expect("counters")).collect();
    topo.destroy().expect("namespaces removed");
    (out, router, counters)
}

#[test]
fn two_hosts_through_the_tun_router() {
    if let Some(why) = skip_reason() {
        eprintln!("SKIPPED two_hosts_through_the_tun_router: {why}");
        return;
    }
    let prefix = format!("{}t", netns::run_prefix());

    // 1. RTT and bulk TCP throughput over DropTail (buffer 2 BDP so Reno keeps the link busy).
    let plan = Plan::new(Network::build(scenario("\"droptail\"", 34)).unwrap(), &prefix, "reno");
    let ((rtts, sink, sent), router, counters) = with_router(plan, |p| {
        let ns_a = p.hosts[0].path();
        let ns_b = p.hosts[1].path();
        // RTT: small UDP probes to an echo in b, with the CPUs kept out of idle (a halted vCPU
        // of this VM wakes a few hundred microseconds late: `sys::KeepAwake`).
        let awake = sys::KeepAwake::start();
        let echo = sys::in_netns(&ns_b, || UdpSocket::bind(addr(p, 1, 7000))).unwrap();
        let echo_thread = thread::spawn(move || apps::udp_echo(echo));
        let client = sys::in_netns(&ns_a, || UdpSocket::bind(addr(p, 0, 7001))).unwrap();
        let rtts = apps::udp_ping(&client, addr(p, 1, 7000), 20, 64, Duration::from_millis(10)).unwrap();
        client.send_to(&[], addr(p, 1, 7000)).unwrap();
        echo_thread.join().unwrap().unwrap();
        drop(awake);
        // Bulk TCP a -> b for 4 s.
        let listener = sys::in_netns(&ns_b, || TcpListener::bind(addr(p, 1, 5001))).unwrap();
        let sink = thread::spawn(move || apps::tcp_sink(listener));
        let stream = sys::in_netns(&ns_a, || TcpStream::connect(addr(p, 1, 5001))).unwrap();
        apps::set_tcp_congestion(&stream, "reno").unwrap();
        let sent = apps::tcp_bulk_send(stream, Duration::from_secs(4)).unwrap();
        (rtts, sink.join().unwrap().unwrap(), sent)
    });

    // RTT = 2 x 5 ms + serialisation of 92-byte datagrams both ways (2 x 36.8 µs).
    assert!(rtts.len() >= 18, "probes lost: {} of 20 came back", rtts.len());
    let mut sorted = rtts.clone();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    let expected = 0.010 + 2.0 * 92.0 * 8.0 / RATE_BPS;
    eprintln!("rtt median {:.3} ms (expected {:.3} ms), all {:?}", median * 1e3, expected * 1e3, sorted);
    assert!((median - expected).abs() < 0.5e-3, "median RTT {median} s vs configured {expected} s (tolerance 0.5 ms)");

    // Throughput: a Linux TCP segment is 1448 payload bytes in a 1500-byte packet (IP 20, TCP
    // 20, timestamps 12), so a full 20 Mbit/s link carries 20e6 * 1448 / 1500 bit/s of goodput.
    let goodput = sink.goodput_bps(1.0, 3.8).expect("samples cover 1-3.8 s");
    let full = RATE_BPS * 1448.0 / 1500.0;
    eprintln!(
        "goodput {:.3} Mbit/s (full link {:.3}), sent {} B, retrans {}",
        goodput / 1e6,
        full / 1e6,
        sent.bytes,
        sent.info.total_retrans
    );
    assert!((goodput - full).abs() / full < 0.03, "goodput {goodput} vs {full} (tolerance 3 %)");
    let link = &router.fabric.links[0];
    eprintln!("link a->b: {:?}; router: {:?}", link.stats, summary(&router));
    for c in &counters {
        assert_eq!((c.tx_dropped, c.rx_dropped), (0, 0), "kernel-side TUN drops: {c:?}");
    }
    assert_eq!(router.fabric.stats.write_failures, 0);

    // 2. RED marks CE; the Linux sender counts CE-echoed deliveries and no data is dropped.
    let red = "{ kind = \"red\", min_th = \"3pkt\", max_th = \"15pkt\", max_p = 0.1, w_q = 0.02, action = \"mark\" }";
    let plan = Plan::new(Network::build(scenario(red, 100)).unwrap(), &format!("{prefix}r"), "reno");
    let (sent, router, counters) = with_router(plan, |p| {
        let listener = sys::in_netns(&p.hosts[1].path(), || TcpListener::bind(addr(p, 1, 5002))).unwrap();
        let sink = thread::spawn(move || apps::tcp_sink(listener));
        let stream = sys::in_netns(&p.hosts[0].path(), || TcpStream::connect(addr(p, 1, 5002))).unwrap();
        apps::set_tcp_congestion(&stream, "reno").unwrap();
        let sent = apps::tcp_bulk_send(stream, Duration::from_secs(2)).unwrap();
        sink.join().unwrap().unwrap();
        sent
    });
    let link = &router.fabric.links[0];
    eprintln!("RED link a->b: {:?}; sender tcp_info {:?}", link.stats, sent.info);
    assert!(link.stats.marks > 0, "RED marked nothing");
    // Mark mode marks ECT packets; a not-ECT one is dropped instead (RFC 3168 6.1.1). Linux
    // sends its data ECT but header-only segments (a closing FIN or RST) not-ECT, so the only
    // drops allowed are header-only packets, and no data is lost (no retransmission, below).
    assert!(
        link.stats.drop_bytes <= link.stats.drops * 60,
        "RED in mark mode with a 100-packet buffer dropped a data packet: {} packets, {} bytes",
        link.stats.drops,
        link.stats.drop_bytes
    );
    assert!(router.fabric.stats.ce_written > 0);
    assert!(sent.info.delivered_ce > 0, "the sender saw no CE echo: {:?}", sent.info);
    assert_eq!(sent.info.total_retrans, 0, "no loss, so no retransmission");
    for c in &counters {
        assert_eq!((c.tx_dropped, c.rx_dropped), (0, 0), "kernel-side TUN drops: {c:?}");
    }

    // 3. Nothing is left behind.
    assert_eq!(netns::list_with_prefix(&prefix).unwrap(), Vec::<String>::new());
}

fn summary(r: &Router) -> String {
    let s = &r.fabric.stats;
    format!(
        "read {} forwarded {} link-drops {} late p50 {:?} p99 {:?} µs",
        s.packets_read,
        s.forwarded,
        s.dropped_by_links,
        s.lateness_quantile_us(0.5),
        s.lateness_quantile_us(0.99)
    )
}
