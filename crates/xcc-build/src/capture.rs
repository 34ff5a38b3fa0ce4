//! Packet capture: the packets departing one link direction, encoded as real IPv4 datagrams.
//!
//! The simulator passes `Packet` values (style habit 5) and never encodes on the hot path. When a
//! capture is requested, the chosen link keeps a copy of every packet at the moment its
//! transmission starts (after the link algorithm's `on_dequeue` stamp, so the feedback fields are
//! what leaves the router), and this module turns those copies into the bytes the real-network
//! mode puts on the wire:
//!
//! ```text
//! IPv4 (20 B, no options) | UDP (8 B) | congestion shim (CongestionHeader::emit: proto:u8 len:u8
//!   body) | segment (Segment::emit, 32 B + 8 B per SACK block) | payload (not captured)
//! ```
//!
//! The UDP payload is `xcc_core::wire::datagram`'s, the very encoding the emulator's transport
//! sends and its router rewrites: the shim right after the UDP header (seed 002's congestion
//! layer between transport and network).
//!
//! - Addresses: node `n` (its index in the resolved scenario, hosts and routers in declaration
//!   order) is `10.0.0.0 + n + 1`, i.e. `10.a.b.c` with `a.b.c` the 24 bits of `n + 1`.
//! - Ports: the receiving side of every flow listens on [`XCC_UDP_PORT`]; the sending side uses
//!   `32768 + flow_id % 32768`. Data and datagrams go sender -> receiver, ACKs come back.
//! - IP: TOS carries the packet's ECN bits (DSCP 0), DF set, TTL 64, identification counts the
//!   captured packets, header checksum filled in. UDP checksum 0 ("none", allowed over IPv4):
//!   the payload is not captured, so no checksum could be verified anyway.
//! - The shim is written even for `CongestionHeader::None` (`proto 0, len 0`) so that the
//!   capture is self-describing; inside the simulator `None` adds no bytes (`wire_len` 0).
//! - Only the headers are captured: the IP and UDP lengths count the payload, and the pcap
//!   record's original length says how long the datagram was (like `tcpdump -s`).

use xcc_core::wire::{datagram, SegmentKind};
use xcc_core::{Packet, Time};

/// The UDP port xcclab's transport uses (the Wireshark dissector registers on it).
pub const XCC_UDP_PORT: u16 = 9870;
/// First port of the senders' side.
pub const SENDER_PORT_BASE: u16 = 32768;

const IPV4_LEN: usize = 20;
const UDP_LEN: usize = 8;

/// One captured packet: when its transmission started and its encoded headers.
#[derive(Clone, Debug, PartialEq)]
pub struct CapturedPacket {
    pub time: Time,
    /// IPv4 + UDP + shim + segment bytes (the payload is left out).
    pub bytes: Vec<u8>,
    /// Length of the whole datagram on the wire, payload included.
    pub orig_len: u32,
}

/// The IPv4 address of node `n`: `10.0.0.0 + n + 1`.
pub fn node_address(node: u32) -> [u8; 4] {
    let v = node + 1;
    [10, (v >> 16) as u8, (v >> 8) as u8, v as u8]
}

/// The sending side's UDP port of flow `flow`.
pub fn sender_port(flow: u32) -> u16 {
    SENDER_PORT_BASE + (flow % 32768) as u16
}

/// Encodes `pkt` of a flow from node `flow_src` to node `flow_dst` (see the module doc).
/// `ident` is the IPv4 identification.
pub fn encode(pkt: &Packet, flow_src: u32, flow_dst: u32, ident: u16) -> CapturedPacket {
    let backwards = pkt.seg.kind == SegmentKind::Ack;
    let (src, dst) = if backwards { (flow_dst, flow_src) } else { (flow_src, flow_dst) };
    let sport = sender_port(pkt.flow.0);
    let (sport, dport) = if backwards { (XCC_UDP_PORT, sport) } else { (sport, XCC_UDP_PORT) };

    let xcc_len = datagram::header_len(&pkt.cc, &pkt.seg);
    let header_len = IPV4_LEN + UDP_LEN + xcc_len;
    let udp_total = UDP_LEN + xcc_len + pkt.seg.payload_bytes as usize;
    let ip_total = IPV4_LEN + udp_total;
    let mut buf = vec![0u8; header_len];

    // IPv4 (RFC 791).
    buf[0] = 0x45; // version 4, IHL 5 words
    buf[1] = pkt.ecn.bits(); // DSCP 0, ECN (RFC 3168 section 5)
    buf[2..4].copy_from_slice(&(ip_total.min(u16::MAX as usize) as u16).to_be_bytes());
    buf[4..6].copy_from_slice(&ident.to_be_bytes());
    buf[6..8].copy_from_slice(&0x4000u16.to_be_bytes()); // DF, offset 0
    buf[8] = 64; // TTL
    buf[9] = 17; // UDP
    buf[12..16].copy_from_slice(&node_address(src));
    buf[16..20].copy_from_slice(&node_address(dst));
    let sum = checksum(&buf[..IPV4_LEN]);
    buf[10..12].copy_from_slice(&sum.to_be_bytes());

    // UDP (RFC 768); checksum 0: not computed.
    buf[20..22].copy_from_slice(&sport.to_be_bytes());
    buf[22..24].copy_from_slice(&dport.to_be_bytes());
    buf[24..26].copy_from_slice(&(udp_total.min(u16::MAX as usize) as u16).to_be_bytes());

    // The congestion shim and the transport segment, exactly as the wire module emits them.
    datagram::emit(&pkt.cc, &pkt.seg, pkt.ecn, &mut buf[IPV4_LEN + UDP_LEN..])
        .expect("a simulated segment always encodes into a buffer of its length");
    CapturedPacket { time: Time(0), bytes: buf, orig_len: ip_total as u32 }
}

/// The Internet checksum (RFC 1071) of `data` (even length).
fn checksum(data: &[u8]) -> u16 {
    let mut sum: u32 = data.chunks(2).map(|c| u16::from_be_bytes([c[0], c[1]]) as u32).sum();
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    !(sum as u16)
}

#[cfg(test)]
mod tests {
    use super::*;
    use xcc_core::wire::{CongestionHeader, Ecn, Flags, Segment};
    use xcc_core::FlowId;

    fn data_packet() -> Packet {
        Packet {
            flow: FlowId(3),
            wire_bytes: 1500,
            ecn: Ecn::Ce,
            seg: Segment {
                kind: SegmentKind::Data,
                flags: Flags::CWR,
                seq: 7,
                payload_bytes: 1460,
                ts_val: Time(123),
                ..Segment::default()
            },
            cc: CongestionHeader::None,
        }
    }

    /// Node 0 sends flow 3's data to node 5 through the captured link:
    ///
    /// ```text
    /// 10.0.0.1:32771  --data seq 7, CE-->  10.0.0.6:9870
    /// ```
    #[test]
    fn data_packet_encodes_ip_udp_shim_and_segment() {
        let c = encode(&data_packet(), 0, 5, 42);
        assert_eq!(c.bytes.len(), 20 + 8 + 32 + 2);
        assert_eq!(c.orig_len, 20 + 8 + 32 + 2 + 1460);
        let b = &c.bytes;
        assert_eq!(b[0], 0x45);
        assert_eq!(b[1], 0b11, "ECN CE in the TOS byte");
        assert_eq!(u16::from_be_bytes([b[2], b[3]]) as u32, c.orig_len);
        assert_eq!(u16::from_be_bytes([b[4], b[5]]), 42);
        assert_eq!(b[9], 17);
        assert_eq!(checksum(&b[..20]), 0, "a correct header checksums to zero");
        assert_eq!(&b[12..16], &[10, 0, 0, 1]);
        assert_eq!(&b[16..20], &[10, 0, 0, 6]);
        assert_eq!(u16::from_be_bytes([b[20], b[21]]), 32771);
        assert_eq!(u16::from_be_bytes([b[22], b[23]]), XCC_UDP_PORT);
        assert_eq!(u16::from_be_bytes([b[24], b[25]]) as u32, c.orig_len - 20);
        // Right after UDP: the shim (proto 0, len 0), then the segment, each parsing back with
        // the wire module's own parsers.
        assert_eq!(b[28..30], [0, 0]);
        assert_eq!(CongestionHeader::parse(&b[28..]), Ok((CongestionHeader::None, 2)));
        let (seg, ecn, n) = Segment::parse(&b[30..]).unwrap();
        assert_eq!((seg, ecn, n), (data_packet().seg, Ecn::Ce, 32));
    }

    /// ACKs travel from the flow's destination back to its source, from the xcclab port.
    #[test]
    fn ack_goes_backwards() {
        let mut p = data_packet();
        p.seg = Segment { kind: SegmentKind::Ack, ack: 8, ..Segment::default() };
        let c = encode(&p, 0, 5, 1);
        assert_eq!(&c.bytes[12..16], &[10, 0, 0, 6]);
        assert_eq!(&c.bytes[16..20], &[10, 0, 0, 1]);
        assert_eq!(u16::from_be_bytes([c.bytes[20], c.bytes[21]]), XCC_UDP_PORT);
        assert_eq!(u16::from_be_bytes([c.bytes[22], c.bytes[23]]), 32771);
        assert_eq!(c.orig_len as usize, c.bytes.len());
    }

    #[test]
    fn addresses_cover_24_bits() {
        assert_eq!(node_address(0), [10, 0, 0, 1]);
        assert_eq!(node_address(255), [10, 0, 1, 0]);
        assert_eq!(node_address(70_000), [10, 1, 17, 113]);
    }
}
