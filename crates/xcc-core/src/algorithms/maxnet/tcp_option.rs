//! MaxNet's fields in a TCP option, as kernel MaxNet writes them (docs/kernel.md): a router finds
//! the option in an IPv4/TCP packet, raises the price with the same `max` rule as
//! [`crate::algorithms::maxnet::link`] and fixes the TCP checksum incrementally (RFC 1624). Sans-IO: bytes
//! in, bytes out.
//!
//! The option is RFC 6994's experimental kind 254 with our 16-bit ExID, then Fig. 4's two 24-bit
//! fields (seed 000): `254 10 0x4d 0x58 echo:u24 price:u24`, 10 bytes where Fig. 4's kind 42
//! took 8 (docs/kernel.md says why not 42).

use super::header::{MaxNetHeader, MAXSTART_FLAG};
use crate::wire::body::HeaderBody;
use crate::wire::WireError;

/// RFC 6994 experimental option kind.
pub const KIND: u8 = 254;
/// Kind, length, ExID (2), echo (3), price (3).
pub const LEN: u8 = 10;
/// Our experiment identifier ("MX"; unregistered, lab use only).
pub const EXID: u16 = 0x4d58;

const PROTO_TCP: u8 = 6;
const TCP_MIN_HEADER: usize = 20;

/// Where a packet's MaxNet option is and what it says.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TcpMaxNetOption {
    /// Offset of the 6-byte body (`echo price`) from the start of the IPv4 packet.
    pub body_offset: usize,
    /// Offset of the TCP header from the start of the IPv4 packet.
    pub tcp_offset: usize,
    /// The two fields as carried.
    pub header: MaxNetHeader,
    /// TCP payload bytes (0: a pure ACK).
    pub payload_len: usize,
}

/// Finds the MaxNet option in an IPv4 packet. `Ok(None)`: not TCP, a non-first fragment, or a
/// TCP segment without the option. `Err`: the IPv4 or TCP header, or an option, is malformed
/// (the router forwards such packets untouched).
pub fn find(packet: &[u8]) -> Result<Option<TcpMaxNetOption>, WireError> {
    if packet.len() < 20 {
        return Err(WireError::Truncated);
    }
    if packet[0] >> 4 != 4 {
        return Err(WireError::Malformed);
    }
    let ihl = (packet[0] & 0x0f) as usize * 4;
    let total = u16::from_be_bytes([packet[2], packet[3]]) as usize;
    if ihl < 20 || total < ihl {
        return Err(WireError::Malformed);
    }
    if total > packet.len() {
        return Err(WireError::Truncated);
    }
    let fragment_offset = u16::from_be_bytes([packet[6], packet[7]]) & 0x1fff;
    if packet[9] != PROTO_TCP || fragment_offset != 0 {
        return Ok(None);
    }
    let tcp = &packet[ihl..total];
    if tcp.len() < TCP_MIN_HEADER {
        return Err(WireError::Truncated);
    }
    let doff = (tcp[12] >> 4) as usize * 4;
    if doff < TCP_MIN_HEADER {
        return Err(WireError::Malformed);
    }
    if doff > tcp.len() {
        return Err(WireError::Truncated);
    }
    let options = &tcp[TCP_MIN_HEADER..doff];
    let mut i = 0;
    while i < options.len() {
        match options[i] {
            0 => break,
            1 => i += 1,
            kind => {
                let len = *options.get(i + 1).ok_or(WireError::Malformed)? as usize;
                if len < 2 || i + len > options.len() {
                    return Err(WireError::Malformed);
                }
                let ours = kind == KIND && len >= 4 && u16::from_be_bytes([options[i + 2], options[i + 3]]) == EXID;
                if ours {
                    if len != LEN as usize {
                        return Err(WireError::Malformed);
                    }
                    let body_offset = ihl + TCP_MIN_HEADER + i + 4;
                    return Ok(Some(TcpMaxNetOption {
                        body_offset,
                        tcp_offset: ihl,
                        header: MaxNetHeader::parse_body(&packet[body_offset..body_offset + MaxNetHeader::LEN]),
                        payload_len: tcp.len() - doff,
                    }));
                }
                i += len;
            }
        }
    }
    Ok(None)
}

/// Writes `new` over the option `found` reported and fixes the TCP checksum incrementally.
/// Returns whether any byte changed.
pub fn rewrite(packet: &mut [u8], found: &TcpMaxNetOption, new: MaxNetHeader) -> bool {
    if new == found.header {
        return false;
    }
    // The checksum sums 16-bit words aligned to the TCP header's start: update over the aligned
    // span that covers the 6 body bytes.
    let rel = found.body_offset - found.tcp_offset;
    let start = found.tcp_offset + (rel & !1);
    let end = found.tcp_offset + ((rel + MaxNetHeader::LEN + 1) & !1);
    let mut old_span = [0u8; 8];
    let n = end - start;
    old_span[..n].copy_from_slice(&packet[start..end]);
    let mut body = [0u8; MaxNetHeader::LEN];
    new.emit_body(&mut body);
    packet[found.body_offset..found.body_offset + MaxNetHeader::LEN].copy_from_slice(&body);
    let at = found.tcp_offset + 16;
    let check = u16::from_be_bytes([packet[at], packet[at + 1]]);
    let fixed = update_checksum(check, &old_span[..n], &packet[start..end]);
    packet[at..at + 2].copy_from_slice(&fixed.to_be_bytes());
    true
}

/// The router's `max` rule on a price field (as [`crate::algorithms::maxnet::link`]): a price rises to the
/// link's `price_code`; a MaxStart field (flag set) rises to the link's `spare_code`, the
/// price-equivalent of its spare capacity, so the path keeps its smallest spare capacity.
pub fn stamp_field(field: u32, price_code: u32, spare_code: u32) -> u32 {
    if field & MAXSTART_FLAG != 0 {
        MAXSTART_FLAG | (field & !MAXSTART_FLAG).max(spare_code & !MAXSTART_FLAG)
    } else {
        field.max(price_code & !MAXSTART_FLAG)
    }
}

/// Finds the option and stamps its price field with [`stamp_field`]; returns the option as
/// found (`None`: no option) and whether the packet changed.
pub fn stamp(
    packet: &mut [u8],
    price_code: u32,
    spare_code: u32,
) -> Result<Option<(TcpMaxNetOption, bool)>, WireError> {
    let Some(found) = find(packet)? else { return Ok(None) };
    let new = MaxNetHeader { echo: found.header.echo, price: stamp_field(found.header.price, price_code, spare_code) };
    let changed = rewrite(packet, &found, new);
    Ok(Some((found, changed)))
}

/// RFC 1624 eq. 3: `HC' = ~(~HC + ~m + m')`, over the 16-bit words of `old` and `new`.
fn update_checksum(check: u16, old: &[u8], new: &[u8]) -> u16 {
    let mut sum = !check as u32;
    for (o, n) in old.chunks(2).zip(new.chunks(2)) {
        let word = |c: &[u8]| u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]) as u32;
        sum += !word(o) as u16 as u32;
        sum += word(n);
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// The TCP checksum of an IPv4/TCP packet computed from scratch (pseudo-header included),
/// with the checksum field counted as zero. For tests and for checking a packet.
pub fn tcp_checksum(packet: &[u8]) -> Option<u16> {
    let ihl = (*packet.first()? & 0x0f) as usize * 4;
    let total = u16::from_be_bytes([*packet.get(2)?, *packet.get(3)?]) as usize;
    let tcp = packet.get(ihl..total)?;
    if tcp.len() < TCP_MIN_HEADER {
        return None;
    }
    let mut sum: u32 = 0;
    let mut add = |bytes: &[u8]| {
        for c in bytes.chunks(2) {
            sum += u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]) as u32;
        }
    };
    add(&packet[12..20]);
    add(&[0, PROTO_TCP]);
    add(&(tcp.len() as u16).to_be_bytes());
    add(&tcp[..16]);
    add(&tcp[18..]);
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    Some(!(sum as u16))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::maxnet::header::{encode_price, CODE_MAX};

    /// An IPv4/TCP packet with the given options (padded to 4 bytes) and payload, checksummed.
    fn packet(options: &[u8], payload: &[u8]) -> Vec<u8> {
        let mut opts = options.to_vec();
        while !opts.len().is_multiple_of(4) {
            opts.push(1);
        }
        let tcp_len = 20 + opts.len() + payload.len();
        let total = 20 + tcp_len;
        let mut p = vec![0u8; total];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        p[8] = 64;
        p[9] = PROTO_TCP;
        p[12..16].copy_from_slice(&[10, 0, 0, 1]);
        p[16..20].copy_from_slice(&[10, 0, 0, 2]);
        let t = &mut p[20..];
        t[0..2].copy_from_slice(&5201u16.to_be_bytes());
        t[2..4].copy_from_slice(&40000u16.to_be_bytes());
        t[12] = (((20 + opts.len()) / 4) as u8) << 4;
        t[13] = 0x10;
        t[20..20 + opts.len()].copy_from_slice(&opts);
        t[20 + opts.len()..].copy_from_slice(payload);
        let c = tcp_checksum(&p).unwrap();
        p[36..38].copy_from_slice(&c.to_be_bytes());
        p
    }

    fn option(echo: u32, price: u32) -> Vec<u8> {
        let mut o = vec![KIND, LEN, 0x4d, 0x58, 0, 0, 0, 0, 0, 0];
        MaxNetHeader { echo, price }.emit_body(&mut o[4..]);
        o
    }

    fn checksum_ok(p: &[u8]) -> bool {
        tcp_checksum(p) == Some(u16::from_be_bytes([p[36], p[37]]))
    }

    #[test]
    fn finds_the_option_among_others() {
        // NOP NOP timestamps (10 bytes), then ours: the kernel's layout.
        let mut opts = vec![1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2];
        opts.extend(option(0x12_3456, 0x00_0789));
        let p = packet(&opts, b"hello");
        let f = find(&p).unwrap().unwrap();
        assert_eq!(f.header, MaxNetHeader { echo: 0x12_3456, price: 0x789 });
        assert_eq!(f.payload_len, 5);
        assert_eq!(f.body_offset, 20 + 20 + 12 + 4);
    }

    #[test]
    fn no_option_other_exid_or_other_protocol_is_none() {
        assert_eq!(find(&packet(&[1, 1, 1, 1], b"")).unwrap(), None);
        // Kind 254 with TCP Fast Open's ExID 0xF989 is not ours.
        assert_eq!(find(&packet(&[254, 4, 0xf9, 0x89], b"")).unwrap(), None);
        let mut udp = packet(&option(0, 0), b"");
        udp[9] = 17;
        assert_eq!(find(&udp).unwrap(), None);
        let mut frag = packet(&option(0, 0), b"");
        frag[7] = 1; // fragment offset 8: no TCP header here
        assert_eq!(find(&frag).unwrap(), None);
    }

    #[test]
    fn malformed_headers_and_options_are_errors() {
        let good = packet(&option(1, 2), b"x");
        assert_eq!(find(&good[..19]), Err(WireError::Truncated));
        let mut v6 = good.clone();
        v6[0] = 0x65;
        assert_eq!(find(&v6), Err(WireError::Malformed));
        let mut long = good.clone();
        long[3] = long[3].wrapping_add(40); // total length beyond the buffer
        assert_eq!(find(&long), Err(WireError::Truncated));
        let mut doff = good.clone();
        doff[32] = 0x40; // data offset 16 bytes < 20
        assert_eq!(find(&doff), Err(WireError::Malformed));
        // An option whose length runs past the header, or is below 2.
        assert_eq!(find(&packet(&[8, 40, 0, 0], b"")), Err(WireError::Malformed));
        assert_eq!(find(&packet(&[8, 1, 0, 0], b"")), Err(WireError::Malformed));
        // Our ExID with the wrong length.
        assert_eq!(find(&packet(&[254, 8, 0x4d, 0x58, 0, 0, 0, 0], b"")), Err(WireError::Malformed));
        // A lone kind byte at the end of the options.
        assert_eq!(find(&packet(&[1, 1, 1, 8], b"")), Err(WireError::Malformed));
    }

    #[test]
    fn end_of_options_stops_the_search() {
        let mut opts = vec![0, 0, 0, 0];
        opts.extend(option(1, 2));
        assert_eq!(find(&packet(&opts, b"")).unwrap(), None);
    }

    /// max() stamping, as the link algorithm: prices only rise; a MaxStart field keeps its flag
    /// and rises to the spare capacity's equivalent price.
    #[test]
    fn stamping_keeps_the_maximum_and_the_checksum() {
        let (low, high) = (encode_price(5.0), encode_price(6.0));
        let mut p = packet(&option(7, low), b"data");
        let (f, changed) = stamp(&mut p, high, 0).unwrap().unwrap();
        assert!(changed);
        assert_eq!(f.header.price, low);
        assert_eq!(find(&p).unwrap().unwrap().header, MaxNetHeader { echo: 7, price: high });
        assert!(checksum_ok(&p));
        // A lower link price leaves it alone.
        let (_, changed) = stamp(&mut p, low, 0).unwrap().unwrap();
        assert!(!changed);
        assert_eq!(find(&p).unwrap().unwrap().header.price, high);
        // MaxStart.
        let mut q = packet(&option(0, MAXSTART_FLAG), b"");
        stamp(&mut q, high, low).unwrap().unwrap();
        assert_eq!(find(&q).unwrap().unwrap().header.price, MAXSTART_FLAG | low);
        assert!(checksum_ok(&q));
    }

    /// The same rule as the router of `link::maxnet` on a CongestionHeader.
    #[test]
    fn stamp_field_matches_the_rule() {
        assert_eq!(stamp_field(3, 5, 9), 5);
        assert_eq!(stamp_field(7, 5, 9), 7);
        assert_eq!(stamp_field(MAXSTART_FLAG | 3, 5, 9), MAXSTART_FLAG | 9);
        assert_eq!(stamp_field(MAXSTART_FLAG | 11, 5, 9), MAXSTART_FLAG | 11);
        assert_eq!(stamp_field(CODE_MAX, CODE_MAX, 0), CODE_MAX);
    }

    #[test]
    fn odd_aligned_option_keeps_a_valid_checksum() {
        // One NOP first: the body starts at an odd offset in the TCP header.
        let mut opts = vec![1];
        opts.extend(option(0xab_cdef, 0x01_2345));
        let mut p = packet(&opts, b"odd");
        assert!(checksum_ok(&p));
        let f = find(&p).unwrap().unwrap();
        assert_eq!((f.body_offset - f.tcp_offset) % 2, 1);
        assert!(rewrite(&mut p, &f, MaxNetHeader { echo: 0x7f_ffff, price: 0x70_0001 }));
        assert!(checksum_ok(&p));
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            /// Any bytes: find never panics, and whatever it finds lies inside the packet.
            #[test]
            fn find_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..120)) {
                if let Ok(Some(f)) = find(&bytes) {
                    prop_assert!(f.body_offset + 6 <= bytes.len());
                }
            }

            /// Random options before ours, any alignment and fields: stamping keeps the TCP
            /// checksum valid and leaves the price at max(old, link).
            #[test]
            fn stamping_preserves_the_checksum(
                nops in 0usize..8,
                echo in 0u32..(1 << 24),
                price in 0u32..(1 << 24),
                link in 0u32..(1 << 23),
                spare in 0u32..(1 << 23),
                payload in proptest::collection::vec(any::<u8>(), 0..64),
            ) {
                let mut opts = vec![1u8; nops];
                opts.extend(option(echo, price));
                let mut p = packet(&opts, &payload);
                let before = p.clone();
                let (f, changed) = stamp(&mut p, link, spare).unwrap().unwrap();
                prop_assert!(checksum_ok(&p));
                let now = find(&p).unwrap().unwrap().header;
                prop_assert_eq!(now.echo, echo);
                prop_assert_eq!(now.price, stamp_field(price, link, spare));
                prop_assert_eq!(changed, now.price != f.header.price);
                // Only the price bytes and the checksum may differ.
                for (i, (a, b)) in before.iter().zip(&p).enumerate() {
                    let in_price = (f.body_offset + 3..f.body_offset + 6).contains(&i);
                    if !(in_price || i == 36 || i == 37) {
                        prop_assert_eq!(a, b, "byte {} changed", i);
                    }
                }
            }

            /// Corrupting any one byte of the options never makes find panic or point outside.
            #[test]
            fn corrupted_options_are_handled(at in 0usize..12, value in any::<u8>()) {
                let mut opts = vec![1, 1];
                opts.extend(option(1, 2));
                let mut p = packet(&opts, b"");
                let i = 40 + at.min(11);
                p[i] = value;
                if let Ok(Some(f)) = find(&p) {
                    prop_assert!(f.body_offset + 6 <= p.len());
                }
            }
        }
    }
}
