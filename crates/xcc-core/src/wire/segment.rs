//! The xcclab transport segment: the header of the one reliable transport every host algorithm
//! shares. In the simulator it travels as a `Segment` value; in the real-network mode it follows
//! the congestion shim in the UDP payload ([`super::datagram`]; encoding below).
//!
//! Sequence numbers count segments, not bytes (like ns-2's one-way TCP agents that the papers'
//! numbers come from): segment `n` carries bytes `[n*mss, (n+1)*mss)` of the flow.

use super::{Ecn, WireError};
use crate::time::Time;

/// What a segment is for.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum SegmentKind {
    /// Carries flow data (reliably delivered).
    #[default]
    Data,
    /// Pure acknowledgement from the receiver.
    Ack,
    /// Unreliable datagram (constant-bit-rate traffic); never acknowledged.
    Datagram,
}

/// Transport flags (TCP's meaning).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub struct Flags(pub u8);

impl Flags {
    pub const SYN: Flags = Flags(0x01);
    pub const FIN: Flags = Flags(0x02);
    /// ECN-Echo: the receiver saw CE (RFC 3168 section 6.1.3).
    pub const ECE: Flags = Flags(0x04);
    /// Congestion Window Reduced: the sender reacted to ECE.
    pub const CWR: Flags = Flags(0x08);
    /// A rate probe (RCP's REF packet, protocols.md 3.5): a payload-less data segment outside
    /// the sequence space, answered at once by an ACK with the same flag that only carries the
    /// echoed congestion header.
    pub const PROBE: Flags = Flags(0x10);

    pub const fn contains(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }
    pub fn insert(&mut self, other: Flags) {
        self.0 |= other.0;
    }
    pub fn remove(&mut self, other: Flags) {
        self.0 &= !other.0;
    }
}

/// A SACK block: segments `[start, end)` received above the cumulative ACK (RFC 2018).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub struct SackBlock {
    pub start: u32,
    pub end: u32,
}

/// Most SACK blocks an ACK carries (RFC 2018 allows 3 alongside timestamps).
pub const MAX_SACK_BLOCKS: usize = 3;

/// The transport header, as a value.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub struct Segment {
    pub kind: SegmentKind,
    pub flags: Flags,
    /// Data: this segment's number. Ack: unused (zero).
    pub seq: u32,
    /// Ack: the next segment the receiver expects (cumulative). Data: unused (zero).
    pub ack: u32,
    /// Application bytes carried (zero for a pure ACK).
    pub payload_bytes: u32,
    /// Sender's clock when sent (RFC 7323 TSval, in nanoseconds).
    pub ts_val: Time,
    /// Echo of the `ts_val` of the data segment this ACK answers (RFC 7323 TSecr).
    pub ts_echo: Time,
    /// How many entries of `sack` are valid.
    pub sack_len: u8,
    pub sack: [SackBlock; MAX_SACK_BLOCKS],
}

impl Segment {
    pub fn sack_blocks(&self) -> &[SackBlock] {
        &self.sack[..self.sack_len as usize]
    }
}

/// Bytes the segment header occupies on the wire when encoded by [`Segment::emit`].
pub fn encoded_len(seg: &Segment) -> usize {
    FIXED_LEN + seg.sack_len as usize * 8
}

const FIXED_LEN: usize = 32;

impl Segment {
    /// Writes the header into `buf` (which must hold `encoded_len` bytes); returns bytes written.
    ///
    /// Layout (network byte order):
    /// `kind:u8 flags:u8 ecn_hint:u8 sack_len:u8 seq:u32 ack:u32 payload:u32 ts_val:u64 ts_echo:u64`
    /// then `sack_len` blocks of `start:u32 end:u32`.
    ///
    /// Refuses (`Malformed`) a segment that [`Segment::parse`] would refuse: more than
    /// [`MAX_SACK_BLOCKS`] blocks, unknown flag bits, or an empty/inverted SACK block.
    pub fn emit(&self, ecn: Ecn, buf: &mut [u8]) -> Result<usize, WireError> {
        // Checked first: `sack_blocks()` would panic on sack_len > 3, and bytes the parser
        // rejects must never reach the wire.
        if self.sack_len as usize > MAX_SACK_BLOCKS
            || self.flags.0 & 0xE0 != 0
            || self.sack_blocks().iter().any(|b| b.end <= b.start)
        {
            return Err(WireError::Malformed);
        }
        let len = encoded_len(self);
        if buf.len() < len {
            return Err(WireError::Truncated);
        }
        buf[0] = match self.kind {
            SegmentKind::Data => 0,
            SegmentKind::Ack => 1,
            SegmentKind::Datagram => 2,
        };
        buf[1] = self.flags.0;
        buf[2] = ecn.bits();
        buf[3] = self.sack_len;
        buf[4..8].copy_from_slice(&self.seq.to_be_bytes());
        buf[8..12].copy_from_slice(&self.ack.to_be_bytes());
        buf[12..16].copy_from_slice(&self.payload_bytes.to_be_bytes());
        buf[16..24].copy_from_slice(&self.ts_val.0.to_be_bytes());
        buf[24..32].copy_from_slice(&self.ts_echo.0.to_be_bytes());
        for (i, b) in self.sack_blocks().iter().enumerate() {
            let o = FIXED_LEN + i * 8;
            buf[o..o + 4].copy_from_slice(&b.start.to_be_bytes());
            buf[o + 4..o + 8].copy_from_slice(&b.end.to_be_bytes());
        }
        Ok(len)
    }

    /// Parses a header from untrusted bytes; returns it, the ECN hint and the bytes consumed.
    pub fn parse(buf: &[u8]) -> Result<(Segment, Ecn, usize), WireError> {
        if buf.len() < FIXED_LEN {
            return Err(WireError::Truncated);
        }
        let kind = match buf[0] {
            0 => SegmentKind::Data,
            1 => SegmentKind::Ack,
            2 => SegmentKind::Datagram,
            _ => return Err(WireError::Malformed),
        };
        let sack_len = buf[3];
        if sack_len as usize > MAX_SACK_BLOCKS || buf[1] & 0xE0 != 0 {
            return Err(WireError::Malformed);
        }
        let u32_at = |o: usize| u32::from_be_bytes(buf[o..o + 4].try_into().unwrap());
        let u64_at = |o: usize| u64::from_be_bytes(buf[o..o + 8].try_into().unwrap());
        let mut seg = Segment {
            kind,
            flags: Flags(buf[1]),
            seq: u32_at(4),
            ack: u32_at(8),
            payload_bytes: u32_at(12),
            ts_val: Time(u64_at(16)),
            ts_echo: Time(u64_at(24)),
            sack_len,
            sack: [SackBlock::default(); MAX_SACK_BLOCKS],
        };
        let len = encoded_len(&seg);
        if buf.len() < len {
            return Err(WireError::Truncated);
        }
        for i in 0..sack_len as usize {
            let o = FIXED_LEN + i * 8;
            let b = SackBlock { start: u32_at(o), end: u32_at(o + 4) };
            if b.end <= b.start {
                return Err(WireError::Malformed);
            }
            seg.sack[i] = b;
        }
        Ok((seg, Ecn::from_bits(buf[2]), len))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{self, uniform01};

    const ALL_ECN: [Ecn; 4] = [Ecn::NotEct, Ecn::Ect1, Ecn::Ect0, Ecn::Ce];
    const KINDS: [SegmentKind; 3] = [SegmentKind::Data, SegmentKind::Ack, SegmentKind::Datagram];
    const U32S: [u32; 6] = [0, 1, 0x7FFF_FFFF, 0x8000_0000, u32::MAX - 1, u32::MAX];
    const U64S: [u64; 5] = [0, 1, 1 << 63, u64::MAX - 1, u64::MAX];

    /// Emits into a buffer of exactly `encoded_len` bytes, checks the length, parses back and
    /// checks value, ECN hint and consumed length; also with trailing garbage after the header.
    fn round_trip(seg: &Segment, ecn: Ecn) {
        let len = encoded_len(seg);
        let mut buf = vec![0u8; len];
        assert_eq!(seg.emit(ecn, &mut buf), Ok(len));
        assert_eq!(Segment::parse(&buf), Ok((*seg, ecn, len)), "{seg:?}");
        buf.extend_from_slice(&[0xAB; 9]);
        assert_eq!(Segment::parse(&buf), Ok((*seg, ecn, len)));
        // One byte short of the header: emit refuses, parse of the prefix refuses.
        assert_eq!(seg.emit(ecn, &mut buf[..len - 1]), Err(WireError::Truncated));
        assert_eq!(Segment::parse(&buf[..len - 1]), Err(WireError::Truncated));
    }

    /// `n` valid SACK blocks covering extreme values: [0,1), [2^31, 2^31+7), [MAX−1, MAX).
    fn sack_with(n: u8) -> [SackBlock; MAX_SACK_BLOCKS] {
        let all = [
            SackBlock { start: 0, end: 1 },
            SackBlock { start: 0x8000_0000, end: 0x8000_0007 },
            SackBlock { start: u32::MAX - 1, end: u32::MAX },
        ];
        let mut s = [SackBlock::default(); MAX_SACK_BLOCKS];
        s[..n as usize].copy_from_slice(&all[..n as usize]);
        s
    }

    /// Every kind × every valid flag combination × 0..=3 SACK blocks × every ECN codepoint,
    /// with extreme seq/ack/payload/timestamps rotating through the combinations.
    #[test]
    fn round_trip_all_kinds_flags_and_sack_counts() {
        let mut i = 0usize;
        for kind in KINDS {
            for flags in 0u8..16 {
                for sack_len in 0..=MAX_SACK_BLOCKS as u8 {
                    for ecn in ALL_ECN {
                        let seg = Segment {
                            kind,
                            flags: Flags(flags),
                            seq: U32S[i % U32S.len()],
                            ack: U32S[(i / 2) % U32S.len()],
                            payload_bytes: U32S[(i / 3) % U32S.len()],
                            ts_val: Time(U64S[i % U64S.len()]),
                            ts_echo: Time(U64S[(i / 7) % U64S.len()]),
                            sack_len,
                            sack: sack_with(sack_len),
                        };
                        round_trip(&seg, ecn);
                        i += 1;
                    }
                }
            }
        }
        assert_eq!(i, 3 * 16 * 4 * 4);
    }

    /// 5000 random segments (fixed seed): random fields, random valid SACK blocks.
    #[test]
    fn round_trip_random_segments() {
        let mut r = rng::component_rng(7, 99, 0);
        let u32r = |r: &mut rng::Pcg64Mcg| (uniform01(r) * 4_294_967_296.0) as u32;
        for _ in 0..5000 {
            let sack_len = (uniform01(&mut r) * 4.0) as u8;
            let mut sack = [SackBlock::default(); MAX_SACK_BLOCKS];
            for b in sack.iter_mut().take(sack_len as usize) {
                let start = u32r(&mut r).min(u32::MAX - 1);
                let width = 1 + u32r(&mut r) % 64;
                *b = SackBlock { start, end: start.saturating_add(width) };
            }
            let seg = Segment {
                kind: KINDS[(uniform01(&mut r) * 3.0) as usize],
                flags: Flags((uniform01(&mut r) * 16.0) as u8),
                seq: u32r(&mut r),
                ack: u32r(&mut r),
                payload_bytes: u32r(&mut r),
                ts_val: Time(rand_core::RngCore::next_u64(&mut r)),
                ts_echo: Time(rand_core::RngCore::next_u64(&mut r)),
                sack_len,
                sack,
            };
            round_trip(&seg, ALL_ECN[(uniform01(&mut r) * 4.0) as usize]);
        }
    }

    /// The exact bytes of one ACK with ECE, ECT(0) hint and one SACK block (network order):
    /// ```text
    /// 01 04 02 01 | 01 02 03 04 | 0a 0b 0c 0d | 00 00 05 a8
    /// 11 22 33 44 55 66 77 88   | 99 aa bb cc dd ee ff 00
    /// de ad be ef | ff ff ff ff
    /// ```
    #[test]
    fn exact_byte_layout() {
        let mut seg = Segment {
            kind: SegmentKind::Ack,
            flags: Flags::ECE,
            seq: 0x0102_0304,
            ack: 0x0A0B_0C0D,
            payload_bytes: 1448,
            ts_val: Time(0x1122_3344_5566_7788),
            ts_echo: Time(0x99AA_BBCC_DDEE_FF00),
            sack_len: 1,
            ..Segment::default()
        };
        seg.sack[0] = SackBlock { start: 0xDEAD_BEEF, end: 0xFFFF_FFFF };
        let mut buf = [0u8; 40];
        assert_eq!(seg.emit(Ecn::Ect0, &mut buf), Ok(40));
        #[rustfmt::skip]
        let expect: [u8; 40] = [
            0x01, 0x04, 0x02, 0x01,
            0x01, 0x02, 0x03, 0x04,
            0x0a, 0x0b, 0x0c, 0x0d,
            0x00, 0x00, 0x05, 0xa8,
            0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
            0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x00,
            0xde, 0xad, 0xbe, 0xef,
            0xff, 0xff, 0xff, 0xff,
        ];
        assert_eq!(buf, expect);
        assert_eq!(encoded_len(&seg), 40);
        assert_eq!(encoded_len(&Segment::default()), 32);
    }

    /// A valid 3-block header to corrupt.
    fn valid_bytes() -> Vec<u8> {
        let seg = Segment { kind: SegmentKind::Ack, sack_len: 3, sack: sack_with(3), ..Segment::default() };
        let mut buf = vec![0u8; encoded_len(&seg)];
        seg.emit(Ecn::Ect0, &mut buf).unwrap();
        buf
    }

    #[test]
    fn truncated_inputs() {
        let buf = valid_bytes();
        assert_eq!(buf.len(), 56);
        // Shorter than the fixed part, including empty.
        for n in 0..FIXED_LEN {
            assert_eq!(Segment::parse(&buf[..n]), Err(WireError::Truncated), "len {n}");
        }
        // Fixed part present but fewer SACK bytes than sack_len announces.
        for n in FIXED_LEN..buf.len() {
            assert_eq!(Segment::parse(&buf[..n]), Err(WireError::Truncated), "len {n}");
        }
        assert!(Segment::parse(&buf).is_ok());
        // emit into buffers that are too small.
        let seg = Segment::default();
        assert_eq!(seg.emit(Ecn::NotEct, &mut []), Err(WireError::Truncated));
        assert_eq!(seg.emit(Ecn::NotEct, &mut [0u8; 31]), Err(WireError::Truncated));
    }

    #[test]
    fn malformed_inputs() {
        let corrupt = |f: &dyn Fn(&mut Vec<u8>)| {
            let mut b = valid_bytes();
            f(&mut b);
            Segment::parse(&b)
        };
        // Unknown kinds.
        for k in [3u8, 4, 0x80, 0xFF] {
            assert_eq!(corrupt(&|b| b[0] = k), Err(WireError::Malformed), "kind {k}");
        }
        // Unknown flag bits (only the low five are defined).
        for f in [0x20u8, 0x40, 0x80, 0xFF] {
            assert_eq!(corrupt(&|b| b[1] = f), Err(WireError::Malformed), "flags {f:#x}");
        }
        // More than three SACK blocks, even with enough bytes behind.
        for n in [4u8, 5, 0xFF] {
            assert_eq!(
                corrupt(&|b| {
                    b[3] = n;
                    b.resize(FIXED_LEN + 8 * n as usize, 0x01);
                }),
                Err(WireError::Malformed),
                "sack_len {n}"
            );
        }
        // Empty block (start == end) and inverted block (end < start), in each position.
        for i in 0..3 {
            let o = FIXED_LEN + 8 * i;
            assert_eq!(corrupt(&|b| b.copy_within(o..o + 4, o + 4)), Err(WireError::Malformed), "empty block {i}");
            assert_eq!(
                corrupt(&|b| {
                    b[o..o + 4].copy_from_slice(&9u32.to_be_bytes());
                    b[o + 4..o + 8].copy_from_slice(&3u32.to_be_bytes());
                }),
                Err(WireError::Malformed),
                "inverted block {i}"
            );
        }
    }

    /// emit refuses what parse would refuse (it used to panic on sack_len > 3).
    #[test]
    fn emit_refuses_unparseable_segments() {
        let mut buf = [0u8; 128];
        let seg = Segment { sack_len: 4, ..Segment::default() };
        assert_eq!(seg.emit(Ecn::NotEct, &mut buf), Err(WireError::Malformed));
        let seg = Segment { sack_len: 255, ..Segment::default() };
        assert_eq!(seg.emit(Ecn::NotEct, &mut buf), Err(WireError::Malformed));
        let seg = Segment { flags: Flags(0x20), ..Segment::default() };
        assert_eq!(seg.emit(Ecn::NotEct, &mut buf), Err(WireError::Malformed));
        let mut seg = Segment { sack_len: 2, sack: sack_with(2), ..Segment::default() };
        seg.sack[1] = SackBlock { start: 5, end: 5 };
        assert_eq!(seg.emit(Ecn::NotEct, &mut buf), Err(WireError::Malformed));
        seg.sack[1] = SackBlock { start: 6, end: 5 };
        assert_eq!(seg.emit(Ecn::NotEct, &mut buf), Err(WireError::Malformed));
        // Garbage in unused SACK entries is ignored, not emitted.
        let mut seg = Segment { sack_len: 1, sack: sack_with(1), ..Segment::default() };
        seg.sack[2] = SackBlock { start: 9, end: 1 };
        assert_eq!(seg.emit(Ecn::NotEct, &mut buf), Ok(40));
    }
}
