//! Where a real packet carries its congestion header, and how to put a rewritten one back.
//!
//! This is the router's one pluggable classification point. A [`Carrier`] recognises packets
//! of one encapsulation, reads the [`CongestionHeader`] the link algorithms work on (and the
//! segment kind, so AQMs can tell data from ACKs), and later writes the algorithm's rewrite back
//! into the bytes, fixing checksums. The router asks its carriers in order; the first that
//! claims a packet wins, and a packet nobody claims travels as plain IP with no header (its
//! `Packet` says data if it has a transport payload).
//!
//! Carriers today:
//! - [`UdpShim`]: xcclab's own transport over UDP (port [`XCC_UDP_PORT`] on either side), laid
//!   out as `xcc_core::wire::datagram` (and the simulator's capture) encodes it:
//!   `UDP | shim proto len body | segment`, the shim right after the UDP header.
//! - [`TcpMaxNetOption`]: kernel MaxNet's TCP option (docs/kernel.md) in Linux TCP segments.
//!
//! Adding one (for instance MaxNet's price in a TCP option, rewritten by a function of
//! `xcc-core::wire`): implement [`Carrier`] and push it in [`Carriers::standard`].

use crate::router::checksum;
use crate::router::ipv4::{Ipv4, PROTO_TCP, PROTO_UDP};
pub use xcc_build::capture::XCC_UDP_PORT;
use xcc_core::algorithms::maxnet::tcp_option;
use xcc_core::wire::datagram;
use xcc_core::wire::{CongestionHeader, SegmentKind};
use xcc_core::Packet;

/// What a carrier made of a packet.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Found {
    /// Not this carrier's kind of packet.
    NotMine,
    /// This carrier's packet; `pkt.seg`/`pkt.cc` are filled in; the header is at `offset`
    /// (from the start of the IP packet), where [`Carrier::write`] will put a rewrite.
    Carried { offset: usize },
    /// This carrier's kind of packet, but its header does not parse: the router forwards it
    /// untouched, as plain IP, and counts it.
    Malformed,
}

/// One way of carrying a congestion header in real packets.
pub trait Carrier: Send {
    /// Short name for statistics (`udp-shim`, `tcp-option`, ...).
    fn name(&self) -> &'static str;
    /// Looks at a packet whose IPv4 header `ip` was checked; fills `pkt.seg` and `pkt.cc`.
    fn find(&self, ip: &Ipv4, buf: &[u8], pkt: &mut Packet) -> Found;
    /// Writes `new` over the header `find` reported at `offset` (`old` is what was there, the
    /// same protocol and length) and fixes the transport checksum.
    fn write(&self, ip: &Ipv4, buf: &mut [u8], offset: usize, old: &CongestionHeader, new: &CongestionHeader);
}

/// The carriers a router tries, in order.
pub struct Carriers {
    pub list: Vec<Box<dyn Carrier>>,
}

impl Carriers {
    /// Every carrier xcclab knows.
    pub fn standard() -> Carriers {
        Carriers::with_modelled_header(SIM_HEADER_BYTES)
    }

    /// [`Carriers::standard`], the UDP transport's packets billed with `header_bytes` of headers
    /// (the scenario's `transport.header`; see [`UdpShim`]).
    pub fn with_modelled_header(header_bytes: u32) -> Carriers {
        Carriers { list: vec![Box::new(UdpShim { header_bytes }), Box::new(TcpMaxNetOption)] }
    }
}

/// The simulator's header bytes per packet (IPv4 + TCP), `transport.header`'s default.
pub const SIM_HEADER_BYTES: u32 = 40;

/// xcclab's transport over UDP: `UDP | shim | segment | payload` (`xcc_core::wire::datagram`).
/// The shim is at a fixed offset, the first byte of the UDP payload; the segment behind it is
/// parsed too, because the link algorithms tell data from ACKs (and probes) by it.
///
/// Its packets are billed to the links at the size the simulator gives the same packet,
/// `header_bytes + shim + payload`, not at their length on the wire (IPv4 20 + UDP 8 + segment
/// 32 + 8 per SACK block + shim + payload: 20 bytes more for data, 20-52 more for an ACK, +34 %
/// for an XCP ACK). The hosts' transport already paces and counts by the simulator's sizes
/// (it runs the simulator's `TransportConfig`), so the links must too, or the reverse links of a
/// comparison carry a third more bytes than the simulated ones. The UDP encoding is how the
/// lab carries the simulated transport, not part of the modelled network.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct UdpShim {
    /// Header bytes the model adds to every packet (the scenario's `transport.header`).
    pub header_bytes: u32,
}

impl Default for UdpShim {
    fn default() -> Self {
        UdpShim { header_bytes: SIM_HEADER_BYTES }
    }
}

impl Carrier for UdpShim {
    fn name(&self) -> &'static str {
        "udp-shim"
    }

    fn find(&self, ip: &Ipv4, buf: &[u8], pkt: &mut Packet) -> Found {
        if ip.proto != PROTO_UDP {
            return Found::NotMine;
        }
        let p = ip.payload(buf);
        if p.len() < 8 {
            return Found::NotMine;
        }
        let (sport, dport) = (u16::from_be_bytes([p[0], p[1]]), u16::from_be_bytes([p[2], p[3]]));
        if sport != XCC_UDP_PORT && dport != XCC_UDP_PORT {
            return Found::NotMine;
        }
        let udp_len = u16::from_be_bytes([p[4], p[5]]) as usize;
        if udp_len < 8 || udp_len > p.len() {
            return Found::Malformed;
        }
        let Ok(h) = datagram::parse(&p[8..udp_len]) else { return Found::Malformed };
        if !h.cc.meaningful() {
            // A host may lie in its own header, but a NaN or an infinite inter-packet time would
            // poison the link algorithm's aggregates for every flow: not handed to it.
            return Found::Malformed;
        }
        pkt.seg = h.seg;
        pkt.cc = h.cc;
        // The payload actually carried (not the segment's claim), with the model's headers.
        let payload = (udp_len - 8 - h.len) as u32;
        pkt.wire_bytes = self.header_bytes + h.cc.wire_len() as u32 + payload;
        Found::Carried { offset: ip.header_len + 8 + datagram::SHIM_OFFSET }
    }

    fn write(&self, ip: &Ipv4, buf: &mut [u8], offset: usize, old: &CongestionHeader, new: &CongestionHeader) {
        debug_assert_eq!(old.body_len(), new.body_len());
        let n = congestion_shim_len(new);
        let mut bytes = [0u8; 64];
        if new.emit(&mut bytes[..n]).is_err() || offset + n > buf.len() {
            return;
        }
        let before: Vec<u8> = buf[offset..offset + n].to_vec();
        buf[offset..offset + n].copy_from_slice(&bytes[..n]);
        // UDP checksum 0 means "none" (IPv4): leave it so.
        let at = ip.header_len + 6;
        let check = u16::from_be_bytes([buf[at], buf[at + 1]]);
        if check != 0 {
            let odd = (offset - ip.header_len) % 2 == 1;
            let mut fixed = checksum::update_bytes(check, &before, &bytes[..n], odd);
            if fixed == 0 {
                fixed = 0xFFFF; // a computed zero is sent as all ones (RFC 768)
            }
            buf[at..at + 2].copy_from_slice(&fixed.to_be_bytes());
        }
    }
}

fn congestion_shim_len(h: &CongestionHeader) -> usize {
    xcc_core::wire::congestion::SHIM_LEN + h.body_len()
}

/// Kernel MaxNet's TCP option (docs/kernel.md): `254 10 "MX" echo:u24 price:u24` in a TCP
/// header, found and rewritten (TCP checksum fixed incrementally) by
/// `xcc_core::algorithms::maxnet::tcp_option`. Segments with a payload are data, the others ACKs, so the
/// MaxNet link stamps and counts what it would in the simulator.
pub struct TcpMaxNetOption;

impl Carrier for TcpMaxNetOption {
    fn name(&self) -> &'static str {
        "tcp-maxnet-option"
    }

    fn find(&self, ip: &Ipv4, buf: &[u8], pkt: &mut Packet) -> Found {
        if ip.proto != PROTO_TCP {
            return Found::NotMine;
        }
        match tcp_option::find(&buf[..ip.total_len]) {
            Ok(None) => Found::NotMine,
            Ok(Some(f)) => {
                pkt.cc = CongestionHeader::MaxNet(f.header);
                pkt.seg.kind = plain_kind(f.payload_len > 0);
                pkt.seg.payload_bytes = f.payload_len as u32;
                Found::Carried { offset: f.body_offset }
            }
            // Options that do not parse: forwarded untouched (and counted) as the kernel
            // receiving it would ignore them.
            Err(_) => Found::Malformed,
        }
    }

    fn write(&self, ip: &Ipv4, buf: &mut [u8], offset: usize, _old: &CongestionHeader, new: &CongestionHeader) {
        let CongestionHeader::MaxNet(new) = new else { return };
        let total = ip.total_len;
        if let Ok(Some(found)) = tcp_option::find(&buf[..total]) {
            if found.body_offset == offset {
                tcp_option::rewrite(&mut buf[..total], &found, *new);
            }
        }
    }
}

/// Data-ness of a packet nobody claimed: TCP or UDP with a payload counts as data.
pub fn plain_kind(has_payload: bool) -> SegmentKind {
    if has_payload {
        SegmentKind::Data
    } else {
        SegmentKind::Ack
    }
}
