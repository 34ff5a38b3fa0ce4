//! Kernel MaxNet's TCP option through the router without I/O: the fabric finds the option in a
//! Linux TCP segment, the MaxNet link raises its price (data only, as in the simulator), and the
//! segment leaves with a valid TCP checksum (docs/kernel.md).

use xcc_core::algorithms::maxnet::header::{decode_price, encode_price, MAXSTART_FLAG};
use xcc_core::algorithms::maxnet::tcp_option::{self, EXID, KIND, LEN};
use xcc_core::algorithms::maxnet::MaxNetHeader;
use xcc_core::algorithms::maxnet::{MaxNetRouter, MaxNetRouterConfig};
use xcc_core::link::AnyLinkAlgorithm;
use xcc_core::wire::HeaderBody;
use xcc_core::Time;
use xcc_emu::router::carrier::{Carrier, Carriers, Found, TcpMaxNetOption};
use xcc_emu::router::fabric::{Fabric, Port};
use xcc_emu::router::ipv4::Ipv4;
use xcc_emu::router::link::EmuLink;

const A: [u8; 4] = [10, 0, 0, 1];
const B: [u8; 4] = [10, 0, 0, 2];

/// An IPv4/TCP segment from A to B with NOP, NOP, timestamps and the MaxNet option, as Linux
/// lays them out, and valid IPv4 and TCP checksums.
fn segment(price: u32, payload: usize) -> Vec<u8> {
    let mut opts = vec![1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2, KIND, LEN, (EXID >> 8) as u8, EXID as u8];
    let mut body = [0u8; 6];
    MaxNetHeader { echo: 0x00_1234, price }.emit_body(&mut body);
    opts.extend(body);
    opts.extend([1, 1]);
    let total = 20 + 20 + opts.len() + payload;
    let mut p = vec![0u8; total];
    p[0] = 0x45;
    p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    p[8] = 64;
    p[9] = 6;
    p[12..16].copy_from_slice(&A);
    p[16..20].copy_from_slice(&B);
    let ip_check = xcc_emu::router::checksum::checksum(&p[..20]);
    p[10..12].copy_from_slice(&ip_check.to_be_bytes());
    p[32] = (((20 + opts.len()) / 4) as u8) << 4;
    p[33] = 0x18;
    p[40..40 + opts.len()].copy_from_slice(&opts);
    let c = tcp_option::tcp_checksum(&p).unwrap();
    p[36..38].copy_from_slice(&c.to_be_bytes());
    p
}

fn checksum_ok(p: &[u8]) -> bool {
    tcp_option::tcp_checksum(p) == Some(u16::from_be_bytes([p[36], p[37]]))
}

#[test]
fn the_carrier_reads_the_option_and_the_segment_kind() {
    let p = segment(encode_price(3.0), 100);
    let ip = Ipv4::parse(&p).unwrap();
    let mut pkt = xcc_core::Packet::default();
    assert!(matches!(TcpMaxNetOption.find(&ip, &p, &mut pkt), Found::Carried { .. }));
    assert!(pkt.is_data());
    assert_eq!(pkt.seg.payload_bytes, 100);
    let ack = segment(0, 0);
    let mut pkt = xcc_core::Packet::default();
    TcpMaxNetOption.find(&Ipv4::parse(&ack).unwrap(), &ack, &mut pkt);
    assert!(!pkt.is_data());
    // A broken option length: claimed as malformed, forwarded untouched by the fabric.
    let mut bad = segment(0, 10);
    bad[53] = 40;
    let mut pkt = xcc_core::Packet::default();
    assert_eq!(TcpMaxNetOption.find(&Ipv4::parse(&bad).unwrap(), &bad, &mut pkt), Found::Malformed);
}

/// Through a fabric with one MaxNet link: a data segment leaves with the link's price, an ACK
/// untouched, a MaxStart request with the spare capacity's price; every checksum valid.
#[test]
fn the_maxnet_link_stamps_tcp_segments_through_the_fabric() {
    let c_bps = 10_000_000u64;
    let cfg = MaxNetRouterConfig::default();
    let p_min = cfg.t_s * (cfg.x_max_bps / c_bps as f64).ln();
    let algo = AnyLinkAlgorithm::MaxNet(MaxNetRouter::new(cfg, c_bps, Time::ZERO));
    let link = EmuLink::new("a->b".into(), c_bps, 1_000_000, 1000, u64::MAX, algo);
    let ports = vec![Port { name: "a".into(), addr: A }, Port { name: "b".into(), addr: B }];
    let mut fabric = Fabric::new(ports, vec![link], vec![(0, 1, vec![0])], Carriers::standard());
    let mut out: Vec<Vec<u8>> = Vec::new();
    for p in [segment(encode_price(1.0), 1000), segment(0, 0), segment(MAXSTART_FLAG, 1000)] {
        let slot = fabric.alloc();
        fabric.buf_mut(slot)[..p.len()].copy_from_slice(&p);
        fabric.ingress(Time::ZERO, 0, slot, p.len());
    }
    fabric.run_due(Time::from_ns(1_000_000_000), &mut |host, bytes| {
        assert_eq!(host, 1);
        out.push(bytes.to_vec());
        true
    });
    assert_eq!(out.len(), 3);
    let price = |p: &[u8]| tcp_option::find(p).unwrap().unwrap().header.price;
    assert!(out.iter().all(|p| checksum_ok(p)));
    assert!((decode_price(price(&out[0])) - p_min).abs() < 1e-5, "data stamped with p_min = {p_min}");
    assert_eq!(price(&out[1]), 0, "ACKs are not stamped (as in the simulator)");
    assert_ne!(price(&out[2]) & MAXSTART_FLAG, 0);
    assert!(price(&out[2]) & !MAXSTART_FLAG > 0, "MaxStart request answered");
    assert!(fabric.stats.header_rewrites >= 2);
}
