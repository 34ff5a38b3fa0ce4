//! RCP over real UDP through the TUN router: the bytes are the simulator's (a shared test
//! vector: the transport's encoding and the RCP link's rewrite), and two RCP flows sharing a
//! bottleneck, one of them limited by a second link, reach their max-min rates.

use xcc_core::algorithms::rcp::RcpHeader;
use xcc_core::algorithms::rcp::{RcpRouter, RcpRouterConfig};
use xcc_core::analysis::{max_min_fair, MaxMinProblem};
use xcc_core::link::{AnyLinkAlgorithm, LinkAlgorithm, QueueView};
use xcc_core::wire::{CongestionHeader, Ecn, Segment, SegmentKind};
use xcc_core::{Dur, FlowId, Packet, Time};
use xcc_emu::hosts::udp_transport;
use xcc_emu::os::netns;
use xcc_emu::router::carrier::Carriers;
use xcc_emu::router::fabric::{Fabric, Port};
use xcc_emu::router::link::EmuLink;
use xcc_emu::run::runner;

/// An RCP data packet of flow 3, node 0 -> node 1, with no request yet (rate +infinity) and a
/// 20 ms RTT, as the simulator's capture encodes it.
fn vector_packet(rate: f32) -> Packet {
    Packet {
        flow: FlowId(3),
        wire_bytes: 1500,
        ecn: Ecn::NotEct,
        seg: Segment {
            kind: SegmentKind::Data,
            seq: 7,
            payload_bytes: 1430,
            ts_val: Time(0x0102_0304),
            ..Segment::default()
        },
        cc: CongestionHeader::Rcp(RcpHeader { rate, rtt_us: 20_000 }),
    }
}

/// The shared test vector: IPv4 | UDP | shim (proto 44, len 8, rate +inf, rtt 20 000 µs) |
/// segment of `vector_packet(f32::INFINITY)`.
const VECTOR: &str = "450005dc002a4000401120e50a0000010a000002\
                      8003268e05c80000\
                      2c087f80000000004e20\
                      0000000000000007000000000000059600000000010203040000000000000000";

/// The same packet after a 20 Mbit/s RCP link stamped its initial rate, 5 % of C:
/// 125 000 bytes/s = 0x47f42400 in IEEE 754 single precision.
const VECTOR_STAMPED: &str = "2c0847f4240000004e20";

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// A link with nothing waiting, as the simulator's link shows it to an arriving packet.
struct Idle;
impl QueueView for Idle {
    fn backlog_bytes(&self) -> u64 {
        0
    }
    fn backlog_packets(&self) -> u32 {
        0
    }
    fn idle_since(&self) -> Option<Time> {
        Some(Time::ZERO)
    }
    fn rate_bps(&self) -> u64 {
        20_000_000
    }
    fn visit_from_tail(&self, _f: &mut dyn FnMut(FlowId, u32) -> bool) {}
    fn mark_first_of(&mut self, _flow: FlowId) -> bool {
        false
    }
}

fn rcp_link() -> RcpRouter {
    RcpRouter::new(RcpRouterConfig::default(), 20_000_000, Time::ZERO, Dur::from_ms(10))
}

/// The Internet checksum of the UDP datagram in `b` with its pseudo-header (RFC 768).
fn udp_checksum(b: &[u8]) -> u16 {
    let mut pseudo = Vec::new();
    pseudo.extend_from_slice(&b[12..20]);
    pseudo.extend_from_slice(&[0, 17]);
    pseudo.extend_from_slice(&((b.len() - 20) as u16).to_be_bytes());
    let mut udp = b[20..].to_vec();
    udp[6..8].copy_from_slice(&[0, 0]);
    pseudo.extend_from_slice(&udp);
    match xcc_emu::router::checksum::checksum(&pseudo) {
        0 => 0xFFFF,
        c => c,
    }
}

//  transport ──(shim 44: rate +inf, rtt 20 ms)──> router: RCP link a->b, R = 125 000 B/s
//            ──(shim 44: rate 125 000, rtt 20 ms)──> b
//  Each arrow's bytes equal the simulator's capture of the packet at that point.
#[test]
fn rcp_header_bytes_are_the_simulators() {
    let sent = vector_packet(f32::INFINITY);
    let sim = xcc_build::capture::encode(&sent, 0, 1, 42);
    assert_eq!(hex(&sim.bytes), VECTOR, "simulator capture encoding");
    let mut payload = Vec::new();
    udp_transport::encode_payload(&sent, &mut payload).unwrap();
    assert_eq!(hex(&payload[..sim.bytes.len() - 28]), VECTOR[56..], "emulator transport encoding");
    assert_eq!(payload.len() as u32 + 28, sim.orig_len, "same packet length");

    // What the simulator's RCP link does to the packet value...
    let mut stamped = sent;
    let mut link = rcp_link();
    link.on_enqueue(Time::ZERO, &mut stamped, &mut Idle);
    link.on_dequeue(Time::ZERO, &mut stamped, 0);
    let sim_after = xcc_build::capture::encode(&stamped, 0, 1, 42);
    assert_eq!(hex(&sim_after.bytes[28..38]), VECTOR_STAMPED);

    // ...and what the router does to the real bytes (with a valid UDP checksum, as the kernel
    // sends them) through a fabric with the same link.
    let mut bytes = sim.bytes.clone();
    bytes.resize(sim.orig_len as usize, 0);
    let c = udp_checksum(&bytes);
    bytes[26..28].copy_from_slice(&c.to_be_bytes());
    let links = vec![
        EmuLink::new("a->b".into(), 20_000_000, 1_000_000, 100, u64::MAX, AnyLinkAlgorithm::Rcp(rcp_link())),
        EmuLink::new("b->a".into(), 20_000_000, 1_000_000, 100, u64::MAX, AnyLinkAlgorithm::Rcp(rcp_link())),
    ];
    let ports = vec![Port { name: "a".into(), addr: [10, 0, 0, 1] }, Port { name: "b".into(), addr: [10, 0, 0, 2] }];
    let mut fabric = Fabric::new(ports, links, vec![(0, 1, vec![0]), (1, 0, vec![1])], Carriers::standard());
    let slot = fabric.alloc();
    fabric.buf_mut(slot)[..bytes.len()].copy_from_slice(&bytes);
    fabric.ingress(Time::ZERO, 0, slot, bytes.len());
    let mut out = Vec::new();
    fabric.run_due(Time(10_000_000), &mut |h, b| {
        assert_eq!(h, 1);
        out.push(b.to_vec());
        true
    });
    assert_eq!(out.len(), 1);
    let got = &out[0];
    assert_eq!(fabric.stats.header_rewrites, 1);
    assert_eq!(hex(&got[..26]), hex(&sim_after.bytes[..26]), "IP and UDP ports/length unchanged");
    assert_eq!(hex(&got[28..sim_after.bytes.len()]), hex(&sim_after.bytes[28..]), "shim and segment");
    assert_eq!(u16::from_be_bytes([got[26], got[27]]), udp_checksum(got), "UDP checksum fixed");
    // The receiving transport reads back what the simulator's receiver would get.
    let back = udp_transport::decode_payload(3, &got[28..], 0).unwrap();
    assert_eq!((back.seg, back.cc), (stamped.seg, stamped.cc));
}

/// Parking lot on real packets: flow A from s1 to d1 over L1 (40 Mbit/s) and L2 (12 Mbit/s),
/// flow B from s2 to d2 over L1 only, both RCP with target utilisation gamma = 0.95 on both
/// links. The oracle's max-min rates of the scaled capacities (0.95 C): A = 11.4 Mbit/s (L2
/// alone), B = 38 - 11.4 = 26.6 Mbit/s of wire bits; payload rates are those times 1430/1500
/// (28 B IP/UDP, 10 B shim, 32 B segment). Tolerance 5 % on the median of the 500 ms samples
/// from 5 s to 12 s (RCP converges in about 3 s here, in the simulator as in the emulator; the
/// median, because on a loaded 2-core machine one interval may lose the CPU).
#[test]
fn two_rcp_flows_reach_their_max_min_rates_through_the_router() {
    if let Err(e) = netns::check_environment() {
        eprintln!("SKIPPED two_rcp_flows_reach_their_max_min_rates_through_the_router: {e}");
        return;
    }
    let text = r#"
name = "emu-rcp-parking-lot"
duration = "12s"
[[host]]
name = "s{i}"
count = 2
[[host]]
name = "d{i}"
count = 2
[[router]]
name = "r{i}"
count = 3
[[link]]
between = ["s{i}", "r1"]
count = 2
rate = "100Mbps"
delay = "1ms"
buffer = "unlimited"
[[link]]
between = ["r1", "r2"]
rate = "40Mbps"
delay = "10ms"
buffer = "unlimited"
queue = { kind = "rcp", gamma = 0.95 }
[[link]]
between = ["r2", "r3"]
rate = "12Mbps"
delay = "10ms"
buffer = "unlimited"
queue = { kind = "rcp", gamma = 0.95 }
[[link]]
between = ["r3", "d1"]
rate = "100Mbps"
delay = "1ms"
buffer = "unlimited"
[[link]]
between = ["r2", "d2"]
rate = "100Mbps"
delay = "1ms"
buffer = "unlimited"
[[flow]]
name = "f{i}"
count = 2
src = "s{i}"
dst = "d{i}"
cc = "rcp"
transport = { mss = "1430B", header = "60B" }
[metrics]
interval = "500ms"
"#;
    let s = xcc_build::resolve(text, "emu-rcp-parking-lot.toml", xcc_build::Format::Toml).unwrap();
    let out = runner::emulate(&s).expect("emulated run");
    let oracle = max_min_fair(&MaxMinProblem {
        capacity: vec![0.95 * 40e6, 0.95 * 12e6],
        paths: vec![vec![0, 1], vec![0]],
        demand: vec![],
    })
    .unwrap();
    let series = &out.json["tables"]["flow_series"];
    let times = series["time_s"].as_array().unwrap();
    let ids = series["flow_id"].as_array().unwrap();
    let rates = series["rate_bps"].as_array().unwrap();
    for flow in 0..2u64 {
        let want = oracle.rate[flow as usize] * 1430.0 / 1500.0;
        let mut window: Vec<f64> = (0..times.len())
            .filter(|&k| ids[k].as_u64() == Some(flow) && times[k].as_f64().unwrap() > 5.0)
            .map(|k| rates[k].as_f64().unwrap())
            .collect();
        window.sort_by(f64::total_cmp);
        let median = window[window.len() / 2];
        eprintln!(
            "flow {flow}: rates {window:?}; median {median:.0} vs oracle {want:.0} ({:+.2} %)",
            100.0 * (median / want - 1.0)
        );
        assert!((median / want - 1.0).abs() < 0.05, "flow {flow}: median rate {median} vs oracle {want} (5 %)");
    }
    eprintln!("router {:?}", out.json["stats"]);
    assert!(out.router.header_rewrites > 0, "the routers stamped their rates");
    assert_eq!(out.json["tables"]["flows"]["retransmits"][0], 0);
    assert_eq!(out.json["tables"]["flows"]["retransmits"][1], 0);
    assert!(out.kernel.iter().all(|k| k.drops() == 0), "{:?}", out.kernel);
    assert_eq!(netns::list_with_prefix(&netns::run_prefix()).unwrap(), Vec::<String>::new());
}
