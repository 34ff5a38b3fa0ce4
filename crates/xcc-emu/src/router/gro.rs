//! Coalescing on the way out: consecutive TCP segments (or UDP datagrams) of one flow that
//! leave the router in the same pass (all due by the same instant) are written to the
//! receiving host's TUN as one super-packet, as wireguard-go's and tailscale's TUN writers do.
//!
//! Why: the receiving kernel's cost is per packet it is handed (an allocation, the IP and TCP
//! receive path, an ACK every other segment), and at 1 Gbit/s and more that cost, paid on the
//! router's time, is what limits the rate. A super-packet goes up the stack once, as if the
//! host's NIC had done GRO.
//!
//! What it never does: hold a segment back. Only segments already due are merged; the pass
//! ends with a flush. Every segment still went through the links on its own (its own
//! serialisation, queue, mark or drop decision), and what is merged is exactly what Linux's
//! own GRO would merge (`tcp_gro_receive`): the same addresses, ports, TOS byte (so a CE-marked
//! segment is never merged with an unmarked one), ACK number and options, consecutive sequence
//! numbers, every segment but the last of the full segment size, plain ACK flags (PSH allowed
//! on the last). UDP datagrams are merged as `UDP_SEGMENT` sends them (`GSO_UDP_L4`): same
//! addresses, ports and TOS byte, every datagram but the last of the first one's size; the
//! receiving kernel cuts them back into the very datagrams (payload bytes untouched, so
//! xcclab's per-datagram shim, already rewritten, arrives as written) unless the socket asked
//! for UDP GRO. Anything else is written on its own, as it was.

use crate::router::checksum;
use crate::router::ipv4::{PROTO_TCP, PROTO_UDP};
use crate::router::vnet::{self, VnetHdr};

/// Largest super-packet written (an IPv4 total length).
const MAX_LEN: usize = 65_535;
const TCP_ACK: u8 = 0x10;
const TCP_PSH: u8 = 0x08;
/// Most datagrams in one UDP super-packet (the kernel's `UDP_MAX_SEGMENTS` is 128; older 64).
const UDP_MAX_SEGS: usize = 64;

/// Writes `(host, vnet header, bytes)` to a host's TUN; false if the kernel refused it.
pub type Write<'a> = dyn FnMut(usize, &VnetHdr, &[u8]) -> bool + 'a;

/// The super-packet being built, and what was refused.
pub struct Coalescer {
    buf: Vec<u8>,
    len: usize,
    host: usize,
    /// Segments in `buf` (0: nothing pending).
    segs: usize,
    /// Whether `buf` holds UDP datagrams (else TCP segments).
    udp: bool,
    ip_len: usize,
    tcp_len: usize,
    /// Payload bytes of the first segment (the super-packet's `gso_size`).
    mss: usize,
    next_seq: u32,
    /// Whether another segment may still join (the last one was full, no PSH yet).
    open: bool,
    /// Segments whose write the kernel refused.
    pub failed: u64,
    /// Super-packets written, and the segments in them.
    pub merged_writes: u64,
    pub merged_segments: u64,
}

impl Default for Coalescer {
    fn default() -> Self {
        Coalescer::new()
    }
}

impl Coalescer {
    pub fn new() -> Coalescer {
        Coalescer {
            buf: vec![0u8; MAX_LEN],
            len: 0,
            host: 0,
            segs: 0,
            udp: false,
            ip_len: 0,
            tcp_len: 0,
            mss: 0,
            next_seq: 0,
            open: false,
            failed: 0,
            merged_writes: 0,
            merged_segments: 0,
        }
    }

    /// Hands over one packet (a checked IPv4 packet) for `host`: merged with the pending
    /// super-packet, or the pending one is written and this one starts the next or is written
    /// at once.
    pub fn push(&mut self, host: usize, pkt: &[u8], write: &mut Write) {
        if self.segs > 0 && self.joins(host, pkt) {
            self.append(pkt);
            return;
        }
        self.flush(write);
        if let Some((ip_len, tcp_len, TCP_ACK)) = tcp_data(pkt) {
            self.start(host, pkt, ip_len, tcp_len, false);
            self.next_seq = seq(&pkt[ip_len..]).wrapping_add(self.mss as u32);
        } else if udp_data(pkt) {
            self.start(host, pkt, 20, 8, true);
        } else if !write(host, &VnetHdr::default(), pkt) {
            self.failed += 1;
        }
    }

    fn start(&mut self, host: usize, pkt: &[u8], ip_len: usize, l4_len: usize, udp: bool) {
        self.buf[..pkt.len()].copy_from_slice(pkt);
        self.len = pkt.len();
        self.host = host;
        self.segs = 1;
        self.udp = udp;
        self.ip_len = ip_len;
        self.tcp_len = l4_len;
        self.mss = pkt.len() - ip_len - l4_len;
        self.open = true;
    }

    /// Writes the pending super-packet (or single segment), if any.
    pub fn flush(&mut self, write: &mut Write) {
        if self.segs == 0 {
            return;
        }
        let (segs, host, len) = (self.segs, self.host, self.len);
        self.segs = 0;
        if segs == 1 {
            if !write(host, &VnetHdr::default(), &self.buf[..len]) {
                self.failed += 1;
            }
            return;
        }
        let (ip_len, tcp_len) = (self.ip_len, self.tcp_len);
        let b = &mut self.buf[..len];
        b[2..4].copy_from_slice(&(len as u16).to_be_bytes());
        b[10..12].copy_from_slice(&[0, 0]);
        let c = checksum::checksum(&b[..ip_len]);
        b[10..12].copy_from_slice(&c.to_be_bytes());
        // The transport checksum is left to the receiving kernel, as a sending kernel leaves it
        // to its NIC: the field holds the pseudo-header sum (RFC 793, 768) over the whole
        // length, `F_NEEDS_CSUM` says so.
        let l4 = (len - ip_len) as u32;
        let (proto, check_at, gso_type) = if self.udp {
            b[ip_len + 4..ip_len + 6].copy_from_slice(&(l4 as u16).to_be_bytes());
            (PROTO_UDP, 6, vnet::GSO_UDP_L4)
        } else {
            (PROTO_TCP, 16, vnet::GSO_TCPV4)
        };
        let pseudo = checksum::sum(&b[12..20], 0) + proto as u32 + l4;
        let folded = !checksum::finish(pseudo);
        b[ip_len + check_at..ip_len + check_at + 2].copy_from_slice(&folded.to_be_bytes());
        let h = VnetHdr {
            flags: vnet::F_NEEDS_CSUM,
            gso_type,
            hdr_len: (ip_len + tcp_len) as u16,
            gso_size: self.mss as u16,
            csum_start: ip_len as u16,
            csum_offset: check_at as u16,
        };
        if write(host, &h, b) {
            self.merged_writes += 1;
            self.merged_segments += segs as u64;
        } else {
            self.failed += segs as u64;
        }
    }

    fn joins(&self, host: usize, pkt: &[u8]) -> bool {
        if self.udp {
            let p = &self.buf[..self.len];
            let payload = pkt.len().saturating_sub(28);
            return self.open
                && host == self.host
                && udp_data(pkt)
                && payload <= self.mss
                && self.segs < UDP_MAX_SEGS
                && self.len + payload <= MAX_LEN
                && pkt[..2] == p[..2]
                && pkt[6..10] == p[6..10]
                && pkt[12..24] == p[12..24];
        }
        let Some((ip_len, tcp_len, flags)) = tcp_data(pkt) else { return false };
        let p = &self.buf[..self.len];
        let payload = pkt.len() - ip_len - tcp_len;
        let (t, pt) = (&pkt[ip_len..], &p[ip_len..]);
        self.open
            && host == self.host
            && ip_len == self.ip_len
            && tcp_len == self.tcp_len
            && (flags == TCP_ACK || flags == TCP_ACK | TCP_PSH)
            && payload <= self.mss
            && self.len + payload <= MAX_LEN
            && pkt[..2] == p[..2]
            && pkt[6..10] == p[6..10]
            && pkt[12..ip_len] == p[12..ip_len]
            && t[..4] == pt[..4]
            && t[8..12] == pt[8..12]
            && t[18..tcp_len] == pt[18..tcp_len]
            && seq(t) == self.next_seq
    }

    fn append(&mut self, pkt: &[u8]) {
        let (ip_len, tcp_len) = (self.ip_len, self.tcp_len);
        let payload = &pkt[ip_len + tcp_len..];
        self.buf[self.len..self.len + payload.len()].copy_from_slice(payload);
        self.len += payload.len();
        self.segs += 1;
        if self.udp {
            self.open = payload.len() == self.mss;
            return;
        }
        self.next_seq = self.next_seq.wrapping_add(payload.len() as u32);
        // The latest flags (PSH) and window stand for the whole, as in Linux's GRO.
        self.buf[ip_len + 13] = pkt[ip_len + 13];
        self.buf[ip_len + 14..ip_len + 16].copy_from_slice(&pkt[ip_len + 14..ip_len + 16]);
        self.open = payload.len() == self.mss && pkt[ip_len + 13] & TCP_PSH == 0;
    }
}

/// IP header length, TCP header length and flags of a TCP/IPv4 packet with a payload, no IP
/// options and no fragmentation; `None` for anything else.
fn tcp_data(pkt: &[u8]) -> Option<(usize, usize, u8)> {
    if pkt.len() < 40 || pkt[0] != 0x45 || pkt[9] != PROTO_TCP {
        return None;
    }
    // More-fragments or a fragment offset: never merged.
    if u16::from_be_bytes([pkt[6], pkt[7]]) & 0x3FFF != 0 {
        return None;
    }
    let ip_len = 20;
    let tcp_len = (pkt[ip_len + 12] >> 4) as usize * 4;
    if tcp_len < 20 || pkt.len() <= ip_len + tcp_len || u16::from_be_bytes([pkt[2], pkt[3]]) as usize != pkt.len() {
        return None;
    }
    Some((ip_len, tcp_len, pkt[ip_len + 13]))
}

/// Whether `pkt` is a UDP/IPv4 datagram with a payload and a checksum, no IP options and no
/// fragmentation, its lengths consistent.
fn udp_data(pkt: &[u8]) -> bool {
    pkt.len() > 28
        && pkt[0] == 0x45
        && pkt[9] == PROTO_UDP
        && u16::from_be_bytes([pkt[6], pkt[7]]) & 0x3FFF == 0
        && u16::from_be_bytes([pkt[2], pkt[3]]) as usize == pkt.len()
        && u16::from_be_bytes([pkt[24], pkt[25]]) as usize == pkt.len() - 20
        && pkt[26..28] != [0, 0]
}

fn seq(tcp: &[u8]) -> u32 {
    u32::from_be_bytes([tcp[4], tcp[5], tcp[6], tcp[7]])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::router::gso::Split;
    use crate::router::ipv4::{self, Ipv4};

    /// A TCP super-packet as a sending kernel makes it (see gso.rs's tests), cut by
    /// [`Split`] into segments with full checksums.
    fn segments(payload: usize, flags: u8, seq0: u32) -> Vec<Vec<u8>> {
        let mut b = vec![0u8; 52 + payload];
        b[0] = 0x45;
        b[1] = 0x02;
        b[2..4].copy_from_slice(&((52 + payload).min(65535) as u16).to_be_bytes());
        b[6] = 0x40;
        b[8] = 64;
        b[9] = PROTO_TCP;
        b[12..16].copy_from_slice(&[10, 0, 0, 1]);
        b[16..20].copy_from_slice(&[10, 0, 0, 2]);
        b[20..22].copy_from_slice(&40000u16.to_be_bytes());
        b[22..24].copy_from_slice(&5001u16.to_be_bytes());
        b[24..28].copy_from_slice(&seq0.to_be_bytes());
        b[32] = 8 << 4;
        b[33] = flags;
        b[34..36].copy_from_slice(&512u16.to_be_bytes());
        b[40..52].copy_from_slice(&[1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2]);
        for (i, x) in b[52..].iter_mut().enumerate() {
            *x = (i * 13 + 5) as u8;
        }
        let h = VnetHdr { gso_type: vnet::GSO_TCPV4, gso_size: 1448, ..VnetHdr::default() };
        let s = Split::new(&h, &b, 2048).unwrap();
        (0..s.count())
            .map(|i| {
                let mut out = vec![0u8; 2048];
                let n = s.write(&b, i, &mut out);
                out.truncate(n);
                out
            })
            .collect()
    }

    type Written = Vec<(VnetHdr, Vec<u8>)>;

    fn run(packets: &[Vec<u8>]) -> Written {
        let mut out: Written = Vec::new();
        let mut c = Coalescer::new();
        let mut w = |_h: usize, v: &VnetHdr, b: &[u8]| {
            out.push((*v, b.to_vec()));
            true
        };
        for p in packets {
            c.push(0, p, &mut w);
        }
        c.flush(&mut w);
        out
    }

    /// Finishes a partial TCP checksum as the receiving kernel would and checks it.
    fn finished_checksum_ok(h: &VnetHdr, b: &[u8]) -> bool {
        let mut b = b.to_vec();
        let start = h.csum_start as usize;
        let c = checksum::checksum(&b[start..]);
        b[start + h.csum_offset as usize..start + h.csum_offset as usize + 2].copy_from_slice(&c.to_be_bytes());
        let pseudo = checksum::sum(&b[12..20], 0) + 6 + (b.len() - 20) as u32;
        checksum::finish(checksum::sum(&b[20..], pseudo)) == 0
    }

    /// [`finished_checksum_ok`] for TCP or UDP (`csum_offset` 16 or 6).
    fn finished_checksum_ok_any(h: &VnetHdr, b: &[u8]) -> bool {
        let mut b = b.to_vec();
        let start = h.csum_start as usize;
        let at = start + h.csum_offset as usize;
        let c = checksum::checksum(&b[start..]);
        b[at..at + 2].copy_from_slice(&c.to_be_bytes());
        let pseudo = checksum::sum(&b[12..20], 0) + b[9] as u32 + (b.len() - 20) as u32;
        checksum::finish(checksum::sum(&b[20..], pseudo)) == 0
    }

    /// ```text
    ///   seg 0 (1448) ┐
    ///   seg 1 (1448) ├─► one write: TCPv4 super-packet, gso_size 1448, 4000 payload bytes
    ///   seg 2 (1104) ┘
    /// ```
    #[test]
    fn consecutive_segments_become_one_super_packet() {
        let segs = segments(4000, TCP_ACK | TCP_PSH, 100);
        let out = run(&segs);
        assert_eq!(out.len(), 1);
        let (h, b) = &out[0];
        assert_eq!((h.gso_type, h.gso_size, h.flags), (vnet::GSO_TCPV4, 1448, vnet::F_NEEDS_CSUM));
        assert_eq!((h.csum_start, h.csum_offset, h.hdr_len), (20, 16, 52));
        assert_eq!(b.len(), 52 + 4000);
        assert!(Ipv4::parse(b).is_ok(), "IP length and header checksum");
        assert_eq!(b[33], TCP_ACK | TCP_PSH, "PSH of the last segment");
        let payload: Vec<u8> = segs.iter().flat_map(|s| s[52..].to_vec()).collect();
        assert_eq!(&b[52..], &payload[..]);
        assert!(finished_checksum_ok(h, b));
    }

    /// A CE-marked segment, a gap (a dropped segment) or a retransmission are never merged
    /// across: each breaks the super-packet, and a lone segment is written unchanged.
    #[test]
    fn marks_gaps_and_reordering_break_the_run() {
        let segs = segments(1448 * 5, TCP_ACK, 7);
        let mut marked = segs.clone();
        ipv4::set_ecn(&mut marked[2], xcc_core::wire::Ecn::Ce);
        let out = run(&marked);
        let sizes: Vec<usize> = out.iter().map(|(_, b)| (b.len() - 52) / 1448).collect();
        assert_eq!(sizes, vec![2, 1, 2], "the CE segment alone, its neighbours merged");
        assert_eq!(out[1].0, VnetHdr::default());
        assert_eq!(out[1].1, marked[2], "a lone segment goes out byte for byte");
        let gap = [segs[0].clone(), segs[1].clone(), segs[3].clone(), segs[4].clone()];
        let out = run(&gap);
        assert_eq!(out.len(), 2, "the dropped segment splits the run");
        let back = [segs[1].clone(), segs[0].clone()];
        assert_eq!(run(&back).len(), 2);
    }

    /// Cutting a merged super-packet again (as the receiving kernel does) gives back the very
    /// packets that were merged, TCP segments and UDP datagrams alike.
    #[test]
    fn merged_super_packets_cut_back_into_the_same_packets() {
        let tcp = segments(1448 * 3 + 500, TCP_ACK, 42);
        let payload: Vec<u8> = (0..3300u32).map(|i| (i * 29 + 1) as u8).collect();
        let big = ipv4::tests::udp_packet([10, 0, 0, 1], [10, 0, 0, 2], 9870, 40001, &payload, 0x02);
        let h = VnetHdr { gso_type: vnet::GSO_UDP_L4, gso_size: 1400, ..VnetHdr::default() };
        let s = Split::new(&h, &big, 2048).unwrap();
        let udp: Vec<Vec<u8>> = (0..s.count())
            .map(|i| {
                let mut out = vec![0u8; 2048];
                let n = s.write(&big, i, &mut out);
                out.truncate(n);
                out
            })
            .collect();
        for packets in [tcp, udp] {
            let out = run(&packets);
            assert_eq!(out.len(), 1);
            let (h, b) = &out[0];
            assert!(finished_checksum_ok_any(h, b));
            let s = Split::new(h, b, 2048).unwrap();
            let again: Vec<Vec<u8>> = (0..s.count())
                .map(|i| {
                    let mut o = vec![0u8; 2048];
                    let n = s.write(b, i, &mut o);
                    o.truncate(n);
                    o
                })
                .collect();
            assert_eq!(again, packets);
        }
    }

    /// UDP datagrams of different sizes (but the last), or with different TOS bytes, are not
    /// merged.
    #[test]
    fn udp_merges_only_equal_datagrams() {
        let a = ipv4::tests::udp_packet([10, 0, 0, 1], [10, 0, 0, 2], 9870, 1, &[1u8; 100], 0);
        let b = ipv4::tests::udp_packet([10, 0, 0, 1], [10, 0, 0, 2], 9870, 1, &[2u8; 100], 0);
        let c = ipv4::tests::udp_packet([10, 0, 0, 1], [10, 0, 0, 2], 9870, 1, &[3u8; 60], 0);
        let ce = ipv4::tests::udp_packet([10, 0, 0, 1], [10, 0, 0, 2], 9870, 1, &[4u8; 100], 3);
        let with_sum = |mut p: Vec<u8>| {
            let pseudo = checksum::sum(&p[12..20], 0) + 17 + (p.len() - 20) as u32;
            let c = checksum::finish(checksum::sum(&p[20..], pseudo));
            p[26..28].copy_from_slice(&c.to_be_bytes());
            p
        };
        let (a, b, c, ce) = (with_sum(a), with_sum(b), with_sum(c), with_sum(ce));
        let out = run(&[a.clone(), b.clone(), c.clone(), a.clone()]);
        assert_eq!(out.len(), 2, "a+b+c merged (c the shorter last), then a alone");
        assert_eq!(out[0].0.gso_type, vnet::GSO_UDP_L4);
        assert_eq!(out[0].1.len(), 28 + 260);
        assert_eq!(out[1].1, a);
        assert_eq!(run(&[a.clone(), ce.clone()]).len(), 2, "CE never merged with not-CE");
        assert_eq!(run(&[c.clone(), a.clone()]).len(), 2, "a short datagram ends the run");
        let mut no_sum = a.clone();
        no_sum[26..28].copy_from_slice(&[0, 0]);
        assert_eq!(run(&[no_sum.clone(), no_sum.clone()]).len(), 2, "checksum 0 (none): untouched");
    }

    /// Different flows, ACK-only packets and SYN/FIN segments are written as they came.
    #[test]
    fn other_packets_pass_untouched() {
        let a = segments(1448 * 2, TCP_ACK, 1);
        let mut other = a[1].clone();
        other[20..22].copy_from_slice(&40001u16.to_be_bytes());
        let fin = segments(100, TCP_ACK | 0x01, 9);
        let udp = ipv4::tests::udp_packet([10, 0, 0, 1], [10, 0, 0, 2], 1, 2, b"x", 0);
        let out = run(&[a[0].clone(), other.clone(), fin[0].clone(), udp.clone()]);
        let bytes: Vec<Vec<u8>> = out.iter().map(|(_, b)| b.clone()).collect();
        assert_eq!(bytes, vec![a[0].clone(), other, fin[0].clone(), udp]);
        assert!(out.iter().all(|(h, _)| *h == VnetHdr::default()));
    }
}
