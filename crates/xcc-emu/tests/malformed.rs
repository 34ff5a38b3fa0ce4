//! Untrusted bytes through the router's fabric (no namespaces needed): malformed packets are
//! counted and dropped, or forwarded untouched; nothing panics; every packet read is accounted
//! for. A proptest fuzzes the parsers with arbitrary and with mutated valid packets.

use proptest::prelude::*;
use xcc_core::algorithms::droptail::{DropTail, DropTailConfig};
use xcc_core::algorithms::maxnet::MaxNetHeader;
use xcc_core::algorithms::maxnet::{MaxNetRouter, MaxNetRouterConfig};
use xcc_core::link::AnyLinkAlgorithm;
use xcc_core::wire::{CongestionHeader, Ecn, Segment, SegmentKind};
use xcc_core::{Dur, FlowId, Packet, Time};
use xcc_emu::router::carrier::Carriers;
use xcc_emu::router::fabric::{Fabric, Port};
use xcc_emu::router::link::EmuLink;

const A: [u8; 4] = [10, 0, 0, 1];
const B: [u8; 4] = [10, 0, 0, 2];

fn fabric(maxnet: bool) -> Fabric {
    let algo = || {
        if maxnet {
            let cfg =
                MaxNetRouterConfig { mu: 0.9, dt_p: Dur::from_ms(1), t0: Dur::from_ms(1), t_s: 0.4, x_max_bps: 1e15 };
            AnyLinkAlgorithm::MaxNet(MaxNetRouter::new(cfg, 10_000_000, Time::ZERO))
        } else {
            AnyLinkAlgorithm::DropTail(DropTail::new(DropTailConfig::default()))
        }
    };
    let links = vec![
        EmuLink::new("a->b".into(), 10_000_000, 1_000_000, 1000, u64::MAX, algo()),
        EmuLink::new("b->a".into(), 10_000_000, 1_000_000, 1000, u64::MAX, algo()),
    ];
    let ports = vec![Port { name: "a".into(), addr: A }, Port { name: "b".into(), addr: B }];
    Fabric::new(ports, links, vec![(0, 1, vec![0]), (1, 0, vec![1])], Carriers::standard())
}

/// Feeds `packets` from host a at 1 µs intervals and collects what reaches b.
fn through(f: &mut Fabric, packets: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for (i, p) in packets.iter().enumerate() {
        let slot = f.alloc();
        let n = p.len().min(xcc_emu::router::fabric::BUF_LEN);
        f.buf_mut(slot)[..n].copy_from_slice(&p[..n]);
        f.ingress(Time(i as u64 * 1000), 0, slot, n);
    }
    // Long enough for every packet to arrive (1 ms links); MaxNet ticks every 1 ms meanwhile.
    f.run_due(Time(packets.len() as u64 * 1000 + 100_000_000), &mut |h, b| {
        assert_eq!(h, 1, "everything goes to b");
        out.push(b.to_vec());
        true
    });
    out
}

fn accounted(f: &Fabric) {
    let s = &f.stats;
    let ends = s.not_ipv4 + s.bad_ipv4 + s.bad_ipv4_checksum + s.unroutable + s.dropped_by_links + s.forwarded;
    assert_eq!(ends, s.packets_read, "every packet read ends somewhere: {s:?}");
    assert_eq!(f.in_flight(), 0, "no buffer leaked");
}

fn checksum(data: &[u8]) -> u16 {
    xcc_emu::router::checksum::checksum(data)
}

/// An IPv4/UDP datagram from a to b with a correct UDP checksum.
fn udp(sport: u16, dport: u16, payload: &[u8]) -> Vec<u8> {
    let total = 28 + payload.len();
    let mut b = vec![0u8; total];
    b[0] = 0x45;
    b[1] = 0b10;
    b[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    b[8] = 64;
    b[9] = 17;
    b[12..16].copy_from_slice(&A);
    b[16..20].copy_from_slice(&B);
    let c = checksum(&b[..20]);
    b[10..12].copy_from_slice(&c.to_be_bytes());
    b[20..22].copy_from_slice(&sport.to_be_bytes());
    b[22..24].copy_from_slice(&dport.to_be_bytes());
    b[24..26].copy_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
    b[28..].copy_from_slice(payload);
    let c = udp_checksum(&b);
    b[26..28].copy_from_slice(&c.to_be_bytes());
    b
}

fn udp_checksum(b: &[u8]) -> u16 {
    let udp = &b[20..];
    let mut pseudo = Vec::new();
    pseudo.extend_from_slice(&b[12..20]);
    pseudo.extend_from_slice(&[0, 17]);
    pseudo.extend_from_slice(&(udp.len() as u16).to_be_bytes());
    let mut zeroed = udp.to_vec();
    zeroed[6] = 0;
    zeroed[7] = 0;
    pseudo.extend_from_slice(&zeroed);
    match checksum(&pseudo) {
        0 => 0xFFFF,
        c => c,
    }
}

/// `b` with its IPv4 header checksum recomputed.
fn with_ip_checksum(mut b: Vec<u8>) -> Vec<u8> {
    b[10..12].copy_from_slice(&[0, 0]);
    let c = checksum(&b[..20]);
    b[10..12].copy_from_slice(&c.to_be_bytes());
    b
}

/// The xcclab transport payload of a MaxNet data packet (8-byte shim, segment, payload).
fn maxnet_payload(price: u32, payload: usize) -> Vec<u8> {
    let pkt = Packet {
        flow: FlowId(0),
        wire_bytes: 0,
        ecn: Ecn::Ect0,
        seg: Segment { kind: SegmentKind::Data, seq: 3, payload_bytes: payload as u32, ..Segment::default() },
        cc: CongestionHeader::MaxNet(MaxNetHeader { echo: 0, price }),
    };
    let mut buf = Vec::new();
    xcc_emu::hosts::udp_transport::encode_payload(&pkt, &mut buf).unwrap();
    buf
}

const XCC: u16 = xcc_emu::router::carrier::XCC_UDP_PORT;

#[test]
fn malformed_packets_are_counted_and_dropped_or_forwarded_untouched() {
    let mut f = fabric(true);
    let good = udp(40000, XCC, &maxnet_payload(0, 100));
    let mut cases: Vec<(Vec<u8>, &str)> = vec![
        (vec![], "empty"),
        (vec![0x60; 40], "IPv6"),
        (good[..19].to_vec(), "truncated IPv4 header"),
        (
            {
                let mut b = good.clone();
                b[2..4].copy_from_slice(&2000u16.to_be_bytes());
                b
            },
            "IP total length beyond the bytes",
        ),
        (
            {
                let mut b = good[..40].to_vec();
                b[2..4].copy_from_slice(&40u16.to_be_bytes());
                b[0] = 0x4F; // a 60-byte header in a 40-byte packet
                b
            },
            "IHL beyond the total length",
        ),
        (
            {
                let mut b = good.clone();
                b[16..20].copy_from_slice(&[10, 9, 9, 9]);
                with_ip_checksum(b)
            },
            "unknown destination",
        ),
        (
            {
                let mut b = good.clone();
                b[10] ^= 0x5A; // header checksum that does not verify
                b
            },
            "bad IPv4 header checksum",
        ),
        (
            {
                let mut b = good.clone();
                b[16..20].copy_from_slice(&[10, 9, 9, 9]); // checksum not updated
                b
            },
            "address rewritten without the checksum",
        ),
    ];
    let dropped = cases.len();
    // Forwarded untouched: the carrier claims them (xcclab port) but cannot parse the header.
    let untouched: Vec<(Vec<u8>, &str)> = vec![
        (udp(40000, XCC, &[0u8; 10]), "segment truncated"),
        (
            udp(40000, XCC, &{
                let mut p = maxnet_payload(0, 0);
                p[8] = 9; // unknown segment kind (after the 8-byte shim)
                p
            }),
            "unknown segment kind",
        ),
        (
            udp(40000, XCC, &{
                let mut p = maxnet_payload(0, 0);
                p[0] = 99; // unknown shim protocol
                p
            }),
            "unknown protocol id",
        ),
        (
            udp(40000, XCC, &{
                let mut p = maxnet_payload(0, 0);
                p[1] = 5; // MaxNet with the wrong body length
                p
            }),
            "wrong shim length",
        ),
        (
            udp(40000, XCC, &{
                let mut p = maxnet_payload(0, 0);
                p[1] = 200; // a length that runs past the datagram
                p
            }),
            "shim length past the end",
        ),
        (
            {
                let mut b = udp(40000, XCC, &maxnet_payload(0, 10));
                b[24..26].copy_from_slice(&4u16.to_be_bytes()); // UDP length below its header
                b
            },
            "UDP length below 8",
        ),
    ];
    cases.extend(untouched.iter().cloned());
    let out = through(&mut f, &cases.iter().map(|c| c.0.clone()).collect::<Vec<_>>());
    let s = &f.stats;
    assert_eq!(s.not_ipv4, 2, "empty and IPv6");
    assert_eq!(s.bad_ipv4, 3);
    assert_eq!(s.unroutable, 1);
    assert_eq!(s.bad_ipv4_checksum, 2, "dropped as a router does");
    assert_eq!(s.malformed_header, untouched.len() as u64);
    assert_eq!(s.header_rewrites, 0, "nothing it could not parse was rewritten");
    assert_eq!(out.len(), cases.len() - dropped);
    for (got, (want, what)) in out.iter().zip(&untouched) {
        assert_eq!(got, want, "{what}: forwarded untouched");
    }
    accounted(&f);
}

/// A lying field that still parses (a MaxNet price far above anything a router would write)
/// is the protocol's business: the router applies its max() and fixes the checksum.
#[test]
fn lying_but_parseable_fields_keep_checksums_valid() {
    let mut f = fabric(true);
    let mut pkts = Vec::new();
    for price in [0u32, 1, 0x7F_FFFF, 0xFF_FFFF] {
        pkts.push(udp(40000, XCC, &maxnet_payload(price, 50)));
    }
    let out = through(&mut f, &pkts);
    assert_eq!(out.len(), 4);
    for b in &out {
        assert_eq!(checksum(&b[..20]), 0, "IPv4 header checksum");
        assert_eq!(udp_checksum(b), u16::from_be_bytes([b[26], b[27]]), "UDP checksum after rewrite");
    }
    accounted(&f);
}

fn arb_packet() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..200),
        // Valid packets with a few bytes overwritten at random places.
        // Valid packets with a few bytes overwritten at random places; mostly with the IPv4
        // header checksum made right again, so the mutations reach the parsers behind it.
        (0u32..0xFF_FFFF, 0usize..300, proptest::collection::vec((0usize..400, any::<u8>()), 0..6), any::<u8>())
            .prop_map(|(price, len, muts, fix)| {
                let mut b = udp(40000, XCC, &maxnet_payload(price, len));
                for (i, v) in muts {
                    let n = b.len();
                    b[i % n] = v;
                }
                if fix % 4 != 0 && b.len() >= 20 {
                    b = with_ip_checksum(b);
                }
                b
            }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Anything at all: no panic, every packet accounted for, forwarded packets keep a valid
    /// IPv4 header checksum if they had one.
    #[test]
    fn arbitrary_bytes_never_crash_the_router(pkts in proptest::collection::vec(arb_packet(), 1..20), maxnet in any::<bool>()) {
        let mut f = fabric(maxnet);
        let out = through(&mut f, &pkts);
        accounted(&f);
        prop_assert_eq!(out.len() as u64, f.stats.forwarded);
    }

    /// The header parsers alone, on arbitrary bytes: they return, and what parses re-emits to
    /// the same bytes.
    #[test]
    fn header_parsers_round_trip(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        if let Ok((h, n)) = CongestionHeader::parse(&bytes) {
            let mut out = vec![0u8; n];
            prop_assert_eq!(h.emit(&mut out), Ok(n));
            prop_assert_eq!(&out[..], &bytes[..n]);
        }
        if let Ok((seg, ecn, n)) = Segment::parse(&bytes) {
            let mut out = vec![0u8; n];
            prop_assert_eq!(seg.emit(ecn, &mut out), Ok(n));
        }
        let _ = xcc_core::wire::datagram::parse(&bytes);
        let _ = xcc_emu::router::ipv4::Ipv4::parse(&bytes);
    }

    /// The UDP payload header (shim, then segment) with bytes overwritten and cut at random:
    /// the parser returns, and what parses re-emits to the same length and shim bytes.
    #[test]
    fn datagram_parser_on_mutated_headers(
        price in 0u32..0xFF_FFFF,
        muts in proptest::collection::vec((0usize..48, any::<u8>()), 0..4),
        cut in 0usize..48,
    ) {
        let mut b = maxnet_payload(price, 0);
        for (i, v) in muts {
            let n = b.len();
            b[i % n] = v;
        }
        b.truncate(cut.max(b.len() / 2));
        if let Ok(h) = xcc_core::wire::datagram::parse(&b) {
            let mut out = vec![0u8; h.len];
            prop_assert_eq!(xcc_core::wire::datagram::emit(&h.cc, &h.seg, h.ecn_hint, &mut out), Ok(h.len));
            let shim = 2 + h.cc.body_len();
            prop_assert_eq!(&out[..shim], &b[..shim]);
        }
    }
}
