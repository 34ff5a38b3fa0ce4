//! Software segmentation of the super-packets a TUN device with offloads hands the router.
//!
//! Why segment at all: the link model decides per packet (each segment's serialisation time,
//! its own queue / mark / drop decision), so a 64 KiB TCP super-packet must enter the links as
//! the MTU-sized segments the sender's NIC would have put on the wire. Segmenting as the packet
//! is read, before classification, keeps everything behind it (routes, links, carriers,
//! rewrites, statistics) working on plain IP packets: a dropped segment is simply never
//! written, a CE mark lands on the one segment the algorithm marked. What the offload saves is
//! on the sending side: the hosts' TCP stacks build and hand over one super-packet where they
//! would send some 40 packets, and the router reads it with one system call.
//!
//! Each segment is what Linux's own `tcp_gso_segment` makes: the IP header copied with its
//! total length set and its id incremented per segment, the TCP sequence number advanced by
//! `gso_size` per segment, CWR only on the first segment, FIN and PSH only on the last, and
//! both checksums computed in full. `UDP_SEGMENT` super-packets (`GSO_UDP_L4`) become
//! datagrams of `gso_size` payload bytes with their own UDP length and checksum. A single
//! packet whose transport checksum the kernel left to the device (`F_NEEDS_CSUM`) gets it
//! finished.

use crate::router::checksum;
use crate::router::ipv4::{PROTO_TCP, PROTO_UDP};
use crate::router::vnet::{self, VnetHdr};

/// Why a packet read with a vnet header could not be turned into IP packets.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum GsoError {
    /// Headers shorter than they say, or not IPv4.
    BadHeader,
    /// A `gso_type` the router did not ask the kernel for (IPv6, UFO).
    Unsupported,
    /// A segment would not fit the router's packet buffers.
    TooLarge,
}

/// How a packet read from the TUN device splits into IP packets: [`Split::count`] of them,
/// the `i`-th written by [`Split::write`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Split {
    kind: Kind,
    /// IP header length, transport header length, payload bytes per segment.
    ip_len: usize,
    l4_len: usize,
    seg: usize,
    /// Payload bytes of the whole packet (after both headers).
    payload: usize,
    /// Where to finish a partial checksum (`F_NEEDS_CSUM` on a single packet).
    csum: Option<(usize, usize)>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Kind {
    Single,
    Tcp,
    Udp,
}

const TCP_CWR: u8 = 0x80;
const TCP_PSH: u8 = 0x08;
const TCP_FIN: u8 = 0x01;

impl Split {
    /// Looks at `pkt` (the bytes after the vnet header `h`); `max_len` is the largest segment
    /// the caller can take.
    pub fn new(h: &VnetHdr, pkt: &[u8], max_len: usize) -> Result<Split, GsoError> {
        let single = |csum| Split { kind: Kind::Single, ip_len: 0, l4_len: 0, seg: 0, payload: 0, csum };
        if h.gso_kind() == vnet::GSO_NONE {
            if pkt.len() > max_len {
                return Err(GsoError::TooLarge);
            }
            if h.flags & vnet::F_NEEDS_CSUM == 0 {
                return Ok(single(None));
            }
            let (start, at) = (h.csum_start as usize, h.csum_start as usize + h.csum_offset as usize);
            if at + 2 > pkt.len() {
                return Err(GsoError::BadHeader);
            }
            return Ok(single(Some((start, at))));
        }
        let kind = match h.gso_kind() {
            vnet::GSO_TCPV4 => Kind::Tcp,
            vnet::GSO_UDP_L4 => Kind::Udp,
            _ => return Err(GsoError::Unsupported),
        };
        if pkt.len() < 20 || pkt[0] >> 4 != 4 {
            return Err(GsoError::BadHeader);
        }
        let ip_len = (pkt[0] & 0x0F) as usize * 4;
        let proto = pkt[9];
        let l4_len = match kind {
            Kind::Tcp if proto == PROTO_TCP && pkt.len() >= ip_len + 20 => (pkt[ip_len + 12] >> 4) as usize * 4,
            Kind::Udp if proto == PROTO_UDP => 8,
            _ => return Err(GsoError::BadHeader),
        };
        let seg = h.gso_size as usize;
        if ip_len < 20 || l4_len < 8 || pkt.len() < ip_len + l4_len || seg == 0 {
            return Err(GsoError::BadHeader);
        }
        if ip_len + l4_len + seg > max_len {
            return Err(GsoError::TooLarge);
        }
        Ok(Split { kind, ip_len, l4_len, seg, payload: pkt.len() - ip_len - l4_len, csum: None })
    }

    /// How many IP packets `pkt` becomes.
    pub fn count(&self) -> usize {
        match self.kind {
            Kind::Single => 1,
            _ => self.payload.div_ceil(self.seg).max(1),
        }
    }

    /// Writes packet `i` of `pkt` into `out`; returns its length.
    pub fn write(&self, pkt: &[u8], i: usize, out: &mut [u8]) -> usize {
        if self.kind == Kind::Single {
            out[..pkt.len()].copy_from_slice(pkt);
            if let Some((start, at)) = self.csum {
                finish_partial(&mut out[..pkt.len()], start, at);
            }
            return pkt.len();
        }
        let (ip_len, l4_len) = (self.ip_len, self.l4_len);
        let hdrs = ip_len + l4_len;
        let from = hdrs + i * self.seg;
        let n = self.seg.min(pkt.len() - from);
        let total = hdrs + n;
        out[..hdrs].copy_from_slice(&pkt[..hdrs]);
        out[hdrs..total].copy_from_slice(&pkt[from..from + n]);
        // IP: total length, one more id per segment, header checksum.
        out[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        let id = u16::from_be_bytes([pkt[4], pkt[5]]).wrapping_add(i as u16);
        out[4..6].copy_from_slice(&id.to_be_bytes());
        out[10..12].copy_from_slice(&[0, 0]);
        let c = checksum::checksum(&out[..ip_len]);
        out[10..12].copy_from_slice(&c.to_be_bytes());
        let l4 = &mut out[ip_len..total];
        let check_at = match self.kind {
            Kind::Tcp => {
                let seq = u32::from_be_bytes([l4[4], l4[5], l4[6], l4[7]]).wrapping_add((i * self.seg) as u32);
                l4[4..8].copy_from_slice(&seq.to_be_bytes());
                if i > 0 {
                    l4[13] &= !TCP_CWR;
                }
                if i + 1 < self.count() {
                    l4[13] &= !(TCP_FIN | TCP_PSH);
                }
                16
            }
            _ => {
                l4[4..6].copy_from_slice(&((l4_len + n) as u16).to_be_bytes());
                6
            }
        };
        l4[check_at..check_at + 2].copy_from_slice(&[0, 0]);
        let pseudo = pseudo_header_sum(&out[..ip_len], (l4_len + n) as u16);
        let l4 = &mut out[ip_len..total];
        let mut c = checksum::finish(checksum::sum(l4, pseudo));
        if self.kind == Kind::Udp && c == 0 {
            c = 0xFFFF; // a computed zero is sent as all ones (RFC 768)
        }
        l4[check_at..check_at + 2].copy_from_slice(&c.to_be_bytes());
        total
    }
}

/// The sum of the IPv4 pseudo-header (RFC 793 / 768): addresses, protocol, transport length.
fn pseudo_header_sum(ip: &[u8], l4_len: u16) -> u32 {
    let acc = checksum::sum(&ip[12..20], 0);
    acc + ip[9] as u32 + l4_len as u32
}

/// Finishes a checksum the sending kernel left partial: the field at `at` holds the
/// pseudo-header sum, and the checksum covers everything from `start` to the end.
fn finish_partial(pkt: &mut [u8], start: usize, at: usize) {
    if start > at || at + 2 > pkt.len() {
        return;
    }
    let mut c = checksum::finish(checksum::sum(&pkt[start..], 0));
    // A UDP checksum of zero means "none": sent as all ones instead (RFC 768).
    if c == 0 && at - start == 6 && pkt.len() > 9 && pkt[9] == PROTO_UDP {
        c = 0xFFFF;
    }
    pkt[at..at + 2].copy_from_slice(&c.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::router::ipv4::{self, Ipv4};

    /// A TCP/IPv4 packet as a sending kernel hands it over with offloads: the IP total length
    /// of the whole super-packet, the TCP checksum field holding only the pseudo-header sum.
    fn tcp_super(payload: &[u8], flags: u8, id: u16, seq: u32) -> Vec<u8> {
        let (ip_len, tcp_len) = (20, 32); // TCP with 12 bytes of options (timestamps)
        let total = ip_len + tcp_len + payload.len();
        let mut b = vec![0u8; total];
        b[0] = 0x45;
        b[1] = 0x02; // ECT(0)
        b[2..4].copy_from_slice(&(total.min(65535) as u16).to_be_bytes());
        b[4..6].copy_from_slice(&id.to_be_bytes());
        b[6] = 0x40; // DF
        b[8] = 64;
        b[9] = PROTO_TCP;
        b[12..16].copy_from_slice(&[10, 0, 0, 1]);
        b[16..20].copy_from_slice(&[10, 0, 0, 2]);
        let c = checksum::checksum(&b[..20]);
        b[10..12].copy_from_slice(&c.to_be_bytes());
        let t = &mut b[20..];
        t[0..2].copy_from_slice(&40000u16.to_be_bytes());
        t[2..4].copy_from_slice(&5001u16.to_be_bytes());
        t[4..8].copy_from_slice(&seq.to_be_bytes());
        t[8..12].copy_from_slice(&7u32.to_be_bytes());
        t[12] = 8 << 4;
        t[13] = flags;
        t[14..16].copy_from_slice(&512u16.to_be_bytes());
        t[20..32].copy_from_slice(&[1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2]);
        t[32..].copy_from_slice(payload);
        b
    }

    /// Verifies a TCP or UDP checksum from scratch over pseudo-header, header and payload.
    fn l4_checksum_ok(p: &[u8]) -> bool {
        let ip = Ipv4::parse(p).expect("valid IPv4 with a good header checksum");
        let l4 = &p[ip.header_len..ip.total_len];
        checksum::finish(checksum::sum(l4, pseudo_header_sum(&p[..20], l4.len() as u16))) == 0
    }

    fn all(h: &VnetHdr, pkt: &[u8]) -> Vec<Vec<u8>> {
        let s = Split::new(h, pkt, 2048).unwrap();
        (0..s.count())
            .map(|i| {
                let mut out = vec![0u8; 2048];
                let n = s.write(pkt, i, &mut out);
                out.truncate(n);
                out
            })
            .collect()
    }

    /// 3000 payload bytes with gso_size 1448, CWR|PSH|FIN|ACK:
    ///
    /// ```text
    ///   super-packet  seq 1000, id 77, 3000 B ──► seg 0: seq 1000, id 77, 1448 B, CWR|ACK
    ///                                             seg 1: seq 2448, id 78, 1448 B, ACK
    ///                                             seg 2: seq 3896, id 79,  104 B, PSH|FIN|ACK
    /// ```
    #[test]
    fn tcp_super_packet_becomes_segments_with_their_own_headers() {
        let payload: Vec<u8> = (0..3000u32).map(|i| (i * 7 + 3) as u8).collect();
        let pkt = tcp_super(&payload, 0x80 | 0x10 | 0x08 | 0x01, 77, 1000);
        let h = VnetHdr {
            flags: vnet::F_NEEDS_CSUM,
            gso_type: vnet::GSO_TCPV4 | vnet::GSO_ECN,
            hdr_len: 52,
            gso_size: 1448,
            csum_start: 20,
            csum_offset: 16,
        };
        let segs = all(&h, &pkt);
        assert_eq!(segs.len(), 3);
        let mut joined = Vec::new();
        for (i, s) in segs.iter().enumerate() {
            let ip = Ipv4::parse(s).unwrap();
            assert_eq!(ip.total_len, s.len());
            assert_eq!(ip.ecn, xcc_core::wire::Ecn::Ect0, "ECN bits copied");
            assert_eq!(u16::from_be_bytes([s[4], s[5]]), 77 + i as u16);
            assert!(l4_checksum_ok(s), "segment {i}: TCP checksum");
            let seq = u32::from_be_bytes([s[24], s[25], s[26], s[27]]);
            assert_eq!(seq, 1000 + 1448 * i as u32);
            let flags = s[33];
            let want = match i {
                0 => 0x80 | 0x10,
                1 => 0x10,
                _ => 0x10 | 0x08 | 0x01,
            };
            assert_eq!(flags, want, "segment {i}: flags");
            assert_eq!(&s[20..24], &pkt[20..24], "ports kept");
            assert_eq!(&s[40..52], &pkt[40..52], "options kept");
            joined.extend_from_slice(&s[52..]);
        }
        assert_eq!(segs[0].len(), 1500);
        assert_eq!(segs[2].len(), 52 + 104);
        assert_eq!(joined, payload, "the payload, in order, nothing lost or repeated");
    }

    /// A CE mark written by the router into one segment keeps both checksums valid.
    #[test]
    fn a_segment_can_be_marked_alone() {
        let pkt = tcp_super(&[9u8; 2000], 0x10, 1, 1);
        let h = VnetHdr { gso_type: vnet::GSO_TCPV4, gso_size: 1448, ..VnetHdr::default() };
        let mut segs = all(&h, &pkt);
        ipv4::set_ecn(&mut segs[1], xcc_core::wire::Ecn::Ce);
        assert_eq!(Ipv4::parse(&segs[1]).unwrap().ecn, xcc_core::wire::Ecn::Ce);
        assert_eq!(Ipv4::parse(&segs[0]).unwrap().ecn, xcc_core::wire::Ecn::Ect0);
        assert!(l4_checksum_ok(&segs[1]));
    }

    /// A super-packet no longer than one segment still gets exact lengths and checksums.
    #[test]
    fn short_super_packet_is_one_segment() {
        let pkt = tcp_super(&[1, 2, 3], 0x18, 5, 9);
        let h = VnetHdr { gso_type: vnet::GSO_TCPV4, gso_size: 1448, ..VnetHdr::default() };
        let segs = all(&h, &pkt);
        assert_eq!(segs.len(), 1);
        assert_eq!(segs[0].len(), pkt.len());
        assert_eq!(&segs[0][..36], &pkt[..36], "headers as they were, checksum aside");
        assert_eq!(&segs[0][38..], &pkt[38..]);
        assert!(l4_checksum_ok(&segs[0]));
    }

    /// `UDP_SEGMENT`: each datagram gets its own UDP length and checksum.
    #[test]
    fn udp_super_packet_becomes_datagrams() {
        let payload: Vec<u8> = (0..2500u32).map(|i| (i % 251) as u8).collect();
        let pkt = ipv4::tests::udp_packet([10, 0, 0, 1], [10, 0, 0, 2], 9870, 9871, &payload, 0);
        let h = VnetHdr { gso_type: vnet::GSO_UDP_L4, gso_size: 1000, ..VnetHdr::default() };
        let segs = all(&h, &pkt);
        assert_eq!(segs.iter().map(Vec::len).collect::<Vec<_>>(), vec![1028, 1028, 528]);
        for (i, s) in segs.iter().enumerate() {
            assert_eq!(u16::from_be_bytes([s[24], s[25]]) as usize, s.len() - 20);
            assert!(l4_checksum_ok(s), "datagram {i}");
            assert_eq!(&s[28..], &payload[i * 1000..(i * 1000 + 1000).min(2500)]);
        }
    }

    /// `F_NEEDS_CSUM` on a single packet: the pseudo-header sum in the field becomes the full
    /// checksum.
    #[test]
    fn partial_checksum_is_finished() {
        let mut pkt = tcp_super(&[0xAB; 100], 0x18, 3, 4);
        let pseudo = checksum::sum(&pkt[12..20], 0) + 6 + 132;
        let folded = !checksum::finish(pseudo);
        pkt[36..38].copy_from_slice(&folded.to_be_bytes());
        let h = VnetHdr { flags: vnet::F_NEEDS_CSUM, csum_start: 20, csum_offset: 16, ..VnetHdr::default() };
        let segs = all(&h, &pkt);
        assert_eq!(segs.len(), 1);
        assert!(l4_checksum_ok(&segs[0]));
        assert_eq!(&segs[0][..36], &pkt[..36]);
    }

    #[test]
    fn refuses_what_it_cannot_segment() {
        let pkt = tcp_super(&[0; 3000], 0x10, 0, 0);
        let h = VnetHdr { gso_type: 4, gso_size: 1448, ..VnetHdr::default() }; // TCPv6
        assert_eq!(Split::new(&h, &pkt, 2048), Err(GsoError::Unsupported));
        let h = VnetHdr { gso_type: vnet::GSO_TCPV4, gso_size: 0, ..VnetHdr::default() };
        assert_eq!(Split::new(&h, &pkt, 2048), Err(GsoError::BadHeader));
        let h = VnetHdr { gso_type: vnet::GSO_TCPV4, gso_size: 4000, ..VnetHdr::default() };
        assert_eq!(Split::new(&h, &pkt, 2048), Err(GsoError::TooLarge));
        let h = VnetHdr { gso_type: vnet::GSO_TCPV4, gso_size: 1448, ..VnetHdr::default() };
        assert_eq!(Split::new(&h, &pkt[..30], 2048), Err(GsoError::BadHeader));
        let h = VnetHdr { gso_type: vnet::GSO_UDP_L4, gso_size: 1448, ..VnetHdr::default() };
        assert_eq!(Split::new(&h, &pkt, 2048), Err(GsoError::BadHeader), "TCP bytes under a UDP type");
        let h = VnetHdr { flags: vnet::F_NEEDS_CSUM, csum_start: 20, csum_offset: 4000, ..VnetHdr::default() };
        assert_eq!(Split::new(&h, &pkt[..100], 2048), Err(GsoError::BadHeader));
    }
}
