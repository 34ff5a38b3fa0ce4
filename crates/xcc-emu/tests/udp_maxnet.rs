//! xcclab's transport over real UDP through the TUN router: the bytes are the simulator's
//! (a shared test vector), and a MaxNet flow reaches its oracle rate.

use xcc_core::algorithms::maxnet::MaxNetHeader;
use xcc_core::analysis::{max_min_fair, MaxMinProblem};
use xcc_core::wire::{CongestionHeader, Ecn, SackBlock, Segment, SegmentKind, MAX_SACK_BLOCKS};
use xcc_core::{FlowId, Packet, Time};
use xcc_emu::hosts::udp_transport;
use xcc_emu::os::netns;
use xcc_emu::router::carrier::{Carrier, Found, UdpShim};
use xcc_emu::router::ipv4::Ipv4;
use xcc_emu::run::runner;

/// A MaxNet data packet of flow 3, node 0 -> node 1, as the simulator captures it.
fn vector_packet(price: u32) -> Packet {
    Packet {
        flow: FlowId(3),
        wire_bytes: 1500,
        ecn: Ecn::Ect0,
        seg: Segment {
            kind: SegmentKind::Data,
            seq: 7,
            payload_bytes: 1432,
            ts_val: Time(0x0102_0304),
            ..Segment::default()
        },
        cc: CongestionHeader::MaxNet(MaxNetHeader { echo: 0xABCDEF, price }),
    }
}

/// The shared test vector: IPv4 | UDP | shim | segment of `vector_packet(0x000102)`.
const VECTOR: &str = "450205dc002a4000401120e30a0000010a000002\
                      8003268e05c80000\
                      2a06abcdef000102\
                      0000020000000007000000000000059800000000010203040000000000000000";

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[test]
fn header_bytes_are_the_simulators() {
    let sim = xcc_build::capture::encode(&vector_packet(0x000102), 0, 1, 42);
    assert_eq!(hex(&sim.bytes), VECTOR, "simulator capture encoding");
    // The emulator's transport writes the same shim and segment after the UDP header.
    let mut payload = Vec::new();
    udp_transport::encode_payload(&vector_packet(0x000102), &mut payload).unwrap();
    assert_eq!(hex(&payload[..sim.bytes.len() - 28]), VECTOR[56..], "emulator transport encoding");
    assert_eq!(payload.len() as u32 + 28, sim.orig_len, "same packet length");
    // The router's carrier reads the header the simulator wrote...
    let mut full = sim.bytes.clone();
    full.resize(sim.orig_len as usize, 0);
    let ip = Ipv4::parse(&full).unwrap();
    let mut pkt = Packet::default();
    let Found::Carried { offset } = UdpShim::default().find(&ip, &full, &mut pkt) else { panic!("not recognised") };
    assert_eq!(pkt.cc, vector_packet(0x000102).cc);
    assert_eq!(pkt.seg, vector_packet(0x000102).seg);
    // Billed at the simulator's size (header 40 + shim 8 + payload), not the 1500 on the wire;
    // with the scenario's `transport.header = 60 B`, at 1500.
    assert_eq!(pkt.wire_bytes, 40 + 8 + 1432);
    let mut p60 = Packet::default();
    UdpShim { header_bytes: 60 }.find(&ip, &full, &mut p60);
    assert_eq!(p60.wire_bytes, 1500);
    // ...and a rewrite leaves exactly the bytes the simulator would capture after the stamp.
    let stamped = vector_packet(0x7F0000);
    UdpShim::default().write(&ip, &mut full, offset, &pkt.cc, &stamped.cc);
    let sim_after = xcc_build::capture::encode(&stamped, 0, 1, 42);
    assert_eq!(hex(&full[..sim_after.bytes.len()]), hex(&sim_after.bytes));
}

/// An ACK with SACK blocks is 32 + 8 per block of segment on the wire, where the simulator
/// counts a header of `transport.header` bytes: billed as the simulator sizes it (issue 19, the
/// reverse links of a comparison).
#[test]
fn acks_with_sack_blocks_are_billed_at_the_simulators_size() {
    let mut sack = [SackBlock::default(); MAX_SACK_BLOCKS];
    sack[0] = SackBlock { start: 10, end: 20 };
    sack[1] = SackBlock { start: 30, end: 40 };
    let ack = Packet {
        flow: FlowId(3),
        wire_bytes: 40 + 8,
        ecn: Ecn::NotEct,
        seg: Segment { kind: SegmentKind::Ack, ack: 9, sack_len: 2, sack, ..Segment::default() },
        cc: CongestionHeader::MaxNet(MaxNetHeader { echo: 0x000102, price: 0 }),
    };
    let cap = xcc_build::capture::encode(&ack, 0, 1, 7);
    assert_eq!(cap.orig_len, 28 + 8 + 32 + 16, "on the wire");
    assert_eq!(cap.bytes.len() as u32, cap.orig_len, "an ACK has no payload: captured whole");
    let ip = Ipv4::parse(&cap.bytes).unwrap();
    let mut pkt = Packet::default();
    assert!(matches!(UdpShim::default().find(&ip, &cap.bytes, &mut pkt), Found::Carried { .. }));
    assert_eq!(pkt.seg.kind, SegmentKind::Ack);
    assert_eq!(pkt.wire_bytes, ack.wire_bytes, "the simulator's size");
}

/// One MaxNet flow alone on a 20 Mbit/s, 10 ms RTT link with mu = 0.9: the oracle gives it
/// mu C in wire bits; its payload rate is that times 1432/1500 (28 B IP/UDP, 8 B shim,
/// 32 B segment). Tolerance 5 % on the median of the 500 ms rate samples from 3 s to 8 s (the
/// median, because on a loaded 2-core machine one interval may lose the CPU).
#[test]
fn maxnet_flow_reaches_its_oracle_rate_through_the_router() {
    if let Err(e) = netns::check_environment() {
        eprintln!("SKIPPED maxnet_flow_reaches_its_oracle_rate_through_the_router: {e}");
        return;
    }
    let text = r#"
name = "emu-maxnet-one"
duration = "8s"
[[host]]
name = "a"
[[host]]
name = "b"
[[link]]
between = ["a", "b"]
rate = "20Mbps"
delay = "5ms"
buffer = "unlimited"
queue = { kind = "maxnet", mu = 0.9 }
[[flow]]
name = "f"
src = "a"
dst = "b"
cc = "maxnet"
transport = { mss = "1432B", header = "68B" }
[metrics]
interval = "500ms"
"#;
    let s = xcc_build::resolve(text, "emu-maxnet-one.toml", xcc_build::Format::Toml).unwrap();
    let out = runner::emulate(&s).expect("emulated run");
    let oracle =
        max_min_fair(&MaxMinProblem { capacity: vec![0.9 * 20e6], paths: vec![vec![0]], demand: vec![] }).unwrap();
    let want = oracle.rate[0] * 1432.0 / 1500.0;
    let series = &out.json["tables"]["flow_series"];
    let times = series["time_s"].as_array().unwrap();
    let rates = series["rate_bps"].as_array().unwrap();
    let mut window: Vec<f64> =
        times.iter().zip(rates).filter(|(t, _)| t.as_f64().unwrap() > 3.0).map(|(_, r)| r.as_f64().unwrap()).collect();
    window.sort_by(f64::total_cmp);
    let median = window[window.len() / 2];
    eprintln!("rates {window:?}; median {median:.0} vs oracle {want:.0}; router {:?}", out.json["stats"]);
    assert!((median / want - 1.0).abs() < 0.05, "median rate {median} vs oracle {want} (5 %)");
    assert!(out.router.header_rewrites > 0, "the router stamped its price");
    assert_eq!(out.json["tables"]["flows"]["retransmits"][0], 0);
    assert!(out.kernel.iter().all(|k| k.tx_dropped == 0 && k.rx_dropped == 0));
    assert_eq!(netns::list_with_prefix(&netns::run_prefix()).unwrap(), Vec::<String>::new());
}
