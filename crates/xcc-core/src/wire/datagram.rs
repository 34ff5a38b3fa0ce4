//! xcclab's transport on a real network: the UDP payload of every xcclab packet.
//!
//! ```text
//! IPv4 | UDP | congestion shim (proto:u8 len:u8 body[len]) | segment (32 B + 8 B per SACK block) | payload
//! ```
//!
//! The congestion shim comes first, right after the UDP header: it is the "congestion layer
//! between transport and network" of seed 002. A router finds it at a fixed place (the first
//! byte of the UDP payload) and knows the protocol from its first byte, whatever the transport
//! segment behind it looks like; hosts read both. The simulator's pcap capture
//! (`xcc_build::capture`), the emulator's UDP transport and the TUN router's carrier all use these
//! two functions, so their bytes are the same by construction (and shared test vectors check
//! it).

use super::congestion::{CongestionHeader, SHIM_LEN};
use super::segment::{self, Segment};
use super::{Ecn, WireError};

/// Where the congestion shim starts in the UDP payload.
pub const SHIM_OFFSET: usize = 0;

/// Bytes of the shim and the segment (everything before the payload).
pub fn header_len(cc: &CongestionHeader, seg: &Segment) -> usize {
    SHIM_LEN + cc.body_len() + segment::encoded_len(seg)
}

/// Writes `shim | segment` into `buf`; returns the bytes written ([`header_len`]).
/// The shim is written even for [`CongestionHeader::None`] (`proto 0, len 0`), so every
/// datagram says what it carries.
pub fn emit(cc: &CongestionHeader, seg: &Segment, ecn: Ecn, buf: &mut [u8]) -> Result<usize, WireError> {
    if buf.len() < header_len(cc, seg) {
        // Nothing is written into a short buffer; a segment the parser would refuse is
        // reported as such (`Segment::emit` checks that before the length).
        return Err(match seg.emit(ecn, &mut []) {
            Err(WireError::Malformed) => WireError::Malformed,
            _ => WireError::Truncated,
        });
    }
    let n = cc.emit(&mut buf[SHIM_OFFSET..])?;
    let m = seg.emit(ecn, &mut buf[SHIM_OFFSET + n..])?;
    Ok(SHIM_OFFSET + n + m)
}

/// The headers of one datagram, as parsed from untrusted bytes.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Header {
    pub cc: CongestionHeader,
    pub seg: Segment,
    /// The segment's copy of the sender's ECN bits.
    pub ecn_hint: Ecn,
    /// Bytes of shim and segment: the payload starts here.
    pub len: usize,
}

/// Parses `shim | segment` from the start of a UDP payload (trailing payload bytes are not
/// looked at).
pub fn parse(buf: &[u8]) -> Result<Header, WireError> {
    let (cc, n) = CongestionHeader::parse(buf.get(SHIM_OFFSET..).ok_or(WireError::Truncated)?)?;
    let (seg, ecn_hint, m) = Segment::parse(&buf[SHIM_OFFSET + n..])?;
    Ok(Header { cc, seg, ecn_hint, len: SHIM_OFFSET + n + m })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::maxnet::MaxNetHeader;
    use crate::algorithms::rcp::RcpHeader;
    use crate::time::Time;
    use crate::wire::{SackBlock, SegmentKind};

    fn seg() -> Segment {
        Segment { kind: SegmentKind::Data, seq: 7, payload_bytes: 1000, ts_val: Time(5), ..Segment::default() }
    }

    /// The shim leads: `proto len body`, then the segment's first byte (its kind).
    #[test]
    fn shim_comes_first_then_the_segment() {
        let cc = CongestionHeader::MaxNet(MaxNetHeader { echo: 0xABCDEF, price: 0x000102 });
        let mut buf = [0xEEu8; 64];
        let n = emit(&cc, &seg(), Ecn::Ect0, &mut buf).unwrap();
        assert_eq!(n, 8 + 32);
        assert_eq!(buf[..8], [42, 6, 0xAB, 0xCD, 0xEF, 0x00, 0x01, 0x02]);
        assert_eq!(buf[8], 0, "segment kind: data");
        assert_eq!(buf[10], Ecn::Ect0.bits(), "segment's ECN hint");
        assert_eq!(buf[n..], [0xEE; 24], "nothing written past the headers");
        let h = parse(&buf).unwrap();
        assert_eq!(h, Header { cc, seg: seg(), ecn_hint: Ecn::Ect0, len: n });
    }

    /// No congestion header still writes the two shim bytes; SACK blocks lengthen the segment.
    #[test]
    fn none_and_sack_blocks_round_trip() {
        let mut s = Segment { kind: SegmentKind::Ack, ack: 9, ..Segment::default() };
        s.sack[0] = SackBlock { start: 11, end: 13 };
        s.sack_len = 1;
        for cc in [CongestionHeader::None, CongestionHeader::Rcp(RcpHeader { rate: 1e6, rtt_us: 20_000 })] {
            let mut buf = vec![0u8; header_len(&cc, &s)];
            assert_eq!(buf.len(), 2 + cc.body_len() + 40);
            assert_eq!(emit(&cc, &s, Ecn::NotEct, &mut buf), Ok(buf.len()));
            assert_eq!(buf[0], cc.proto());
            let h = parse(&buf).unwrap();
            assert_eq!((h.cc, h.seg, h.len), (cc, s, buf.len()));
        }
    }

    /// Short buffers: emit writes nothing and says so; parse reports truncation of either part,
    /// and an unknown protocol is malformed before the segment is looked at.
    #[test]
    fn short_or_bad_input_is_refused() {
        let cc = CongestionHeader::Rcp(RcpHeader::default());
        let mut buf = [0x55u8; 41];
        assert_eq!(emit(&cc, &seg(), Ecn::NotEct, &mut buf), Err(WireError::Truncated));
        assert_eq!(buf, [0x55; 41]);
        let mut full = [0u8; 42];
        emit(&cc, &seg(), Ecn::NotEct, &mut full).unwrap();
        assert_eq!(parse(&full[..1]), Err(WireError::Truncated));
        assert_eq!(parse(&full[..9]), Err(WireError::Truncated), "shim cut");
        assert_eq!(parse(&full[..41]), Err(WireError::Truncated), "segment cut");
        full[0] = 99;
        assert_eq!(parse(&full), Err(WireError::Malformed));
        let mut bad = seg();
        bad.sack_len = 4;
        assert_eq!(emit(&cc, &bad, Ecn::NotEct, &mut [0u8; 8]), Err(WireError::Malformed));
    }
}
