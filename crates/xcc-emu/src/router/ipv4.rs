//! Just enough of IPv4, UDP and TCP to route a packet, find its flow and rewrite its ECN bits,
//! all from untrusted bytes: every length is checked before it is used.

use crate::router::checksum;
use xcc_core::wire::Ecn;

pub const PROTO_TCP: u8 = 6;
pub const PROTO_UDP: u8 = 17;

/// Why a packet could not be read as IPv4.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Ipv4Error {
    /// Not version 4 (IPv6 is switched off in the namespaces; anything else is noise).
    NotIpv4,
    /// Shorter than its header, or the header/total lengths contradict the buffer.
    BadLength,
    /// The header checksum does not verify (RFC 791): a router drops such a packet.
    BadChecksum,
}

/// The fields of an IPv4 header the router needs, with the header length checked.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Ipv4 {
    pub header_len: usize,
    /// Total length from the header (never more than the bytes read).
    pub total_len: usize,
    pub proto: u8,
    pub src: [u8; 4],
    pub dst: [u8; 4],
    pub ecn: Ecn,
}

impl Ipv4 {
    pub fn parse(buf: &[u8]) -> Result<Ipv4, Ipv4Error> {
        if buf.is_empty() || buf[0] >> 4 != 4 {
            return Err(Ipv4Error::NotIpv4);
        }
        if buf.len() < 20 {
            return Err(Ipv4Error::BadLength);
        }
        let header_len = (buf[0] & 0x0F) as usize * 4;
        let total_len = u16::from_be_bytes([buf[2], buf[3]]) as usize;
        if header_len < 20 || total_len < header_len || total_len > buf.len() {
            return Err(Ipv4Error::BadLength);
        }
        if crate::router::checksum::checksum(&buf[..header_len]) != 0 {
            return Err(Ipv4Error::BadChecksum);
        }
        Ok(Ipv4 {
            header_len,
            total_len,
            proto: buf[9],
            src: [buf[12], buf[13], buf[14], buf[15]],
            dst: [buf[16], buf[17], buf[18], buf[19]],
            ecn: Ecn::from_bits(buf[1]),
        })
    }

    /// The transport part: from the end of the IP header to the total length.
    pub fn payload<'a>(&self, buf: &'a [u8]) -> &'a [u8] {
        &buf[self.header_len..self.total_len]
    }
}

/// Ports and, for TCP, where the payload starts (both from checked lengths).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct L4 {
    pub sport: u16,
    pub dport: u16,
    /// Offset of the transport payload within the IP payload.
    pub payload_offset: usize,
}

/// Reads UDP or TCP ports; `None` for other protocols or truncated headers.
pub fn l4(ip: &Ipv4, buf: &[u8]) -> Option<L4> {
    let p = ip.payload(buf);
    match ip.proto {
        PROTO_UDP if p.len() >= 8 => {
            let udp_len = u16::from_be_bytes([p[4], p[5]]) as usize;
            if udp_len < 8 || udp_len > p.len() {
                return None;
            }
            Some(L4 {
                sport: u16::from_be_bytes([p[0], p[1]]),
                dport: u16::from_be_bytes([p[2], p[3]]),
                payload_offset: 8,
            })
        }
        PROTO_TCP if p.len() >= 20 => {
            let off = (p[12] >> 4) as usize * 4;
            if off < 20 || off > p.len() {
                return None;
            }
            Some(L4 {
                sport: u16::from_be_bytes([p[0], p[1]]),
                dport: u16::from_be_bytes([p[2], p[3]]),
                payload_offset: off,
            })
        }
        _ => None,
    }
}

/// Rewrites the ECN bits of the TOS byte and fixes the header checksum incrementally.
/// The caller has parsed `buf` with [`Ipv4::parse`].
pub fn set_ecn(buf: &mut [u8], ecn: Ecn) {
    let old = [buf[0], buf[1]];
    buf[1] = (buf[1] & !0b11) | ecn.bits();
    let check = u16::from_be_bytes([buf[10], buf[11]]);
    let new = checksum::update_bytes(check, &old, &[buf[0], buf[1]], false);
    buf[10..12].copy_from_slice(&new.to_be_bytes());
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A minimal IPv4/UDP packet with a correct header checksum.
    pub fn udp_packet(src: [u8; 4], dst: [u8; 4], sport: u16, dport: u16, payload: &[u8], tos: u8) -> Vec<u8> {
        let total = 28 + payload.len();
        let mut b = vec![0u8; total];
        b[0] = 0x45;
        b[1] = tos;
        b[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        b[8] = 64;
        b[9] = PROTO_UDP;
        b[12..16].copy_from_slice(&src);
        b[16..20].copy_from_slice(&dst);
        let c = checksum::checksum(&b[..20]);
        b[10..12].copy_from_slice(&c.to_be_bytes());
        b[20..22].copy_from_slice(&sport.to_be_bytes());
        b[22..24].copy_from_slice(&dport.to_be_bytes());
        b[24..26].copy_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
        b[28..].copy_from_slice(payload);
        b
    }

    #[test]
    fn parses_and_rejects_lying_lengths() {
        let p = udp_packet([10, 0, 0, 1], [10, 0, 0, 2], 1, 2, b"hello", 0b10);
        let ip = Ipv4::parse(&p).unwrap();
        assert_eq!((ip.header_len, ip.total_len, ip.proto, ip.ecn), (20, 33, PROTO_UDP, Ecn::Ect0));
        assert_eq!(l4(&ip, &p), Some(L4 { sport: 1, dport: 2, payload_offset: 8 }));
        assert_eq!(Ipv4::parse(&p[..19]), Err(Ipv4Error::BadLength));
        assert_eq!(Ipv4::parse(&[0x60; 40]), Err(Ipv4Error::NotIpv4));
        assert_eq!(Ipv4::parse(&[]), Err(Ipv4Error::NotIpv4));
        let mut lie = p.clone();
        lie[2..4].copy_from_slice(&200u16.to_be_bytes()); // total length beyond the buffer
        assert_eq!(Ipv4::parse(&lie), Err(Ipv4Error::BadLength));
        let mut lie = p.clone();
        lie[0] = 0x4F; // 60-byte header in a 33-byte packet
        assert_eq!(Ipv4::parse(&lie), Err(Ipv4Error::BadLength));
        let mut lie = p.clone();
        lie[24..26].copy_from_slice(&300u16.to_be_bytes()); // UDP length beyond the datagram
        assert_eq!(l4(&Ipv4::parse(&lie).unwrap(), &lie), None);
    }

    #[test]
    fn marking_ce_keeps_the_header_checksum_valid() {
        let mut p = udp_packet([10, 0, 0, 1], [10, 0, 0, 2], 1, 2, b"x", 0xB8 | 0b10);
        set_ecn(&mut p, Ecn::Ce);
        assert_eq!(p[1], 0xB8 | 0b11, "DSCP kept, CE set");
        assert_eq!(checksum::checksum(&p[..20]), 0);
    }
}
