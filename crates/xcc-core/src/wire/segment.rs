//! The xcclab transport segment: the header of the one reliable transport every host algorithm
//! shares. In the simulator it travels as a `Segment` value; in the real-network mode it is the
//! first bytes of the UDP payload (encoding below).
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
    pub fn emit(&self, ecn: Ecn, buf: &mut [u8]) -> Result<usize, WireError> {
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
        if sack_len as usize > MAX_SACK_BLOCKS || buf[1] & 0xF0 != 0 {
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
