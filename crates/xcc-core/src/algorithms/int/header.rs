//! The INT header: a hop count, a number of slots the sender reserved, and one 16-byte record
//! per slot.
//!
//! ```text
//!  0        1        2                                   2 + 16·slots
//! +--------+--------+-----------------------------------+
//! | hops   | slots  | slot 0 | slot 1 | ... | slot s-1   |
//! +--------+--------+-----------------------------------+
//!
//! one slot (all big-endian u32):
//! +----------------+----------------+----------------+----------------+
//! | queue bytes    | tx bytes       | timestamp ns   | line rate      |
//! | (saturating)   | (mod 2^32)     | (mod 2^32)     | (kbit/s, > 0)  |
//! +----------------+----------------+----------------+----------------+
//! ```
//!
//! The sender reserves `slots` records when it sends the packet (HPCC's ns-3 code reserves
//! `IntHeader::maxHop = 5`, one per switch of a three-tier fat-tree path), so the packet does
//! not grow on its way and the INT bytes cost capacity on every link it crosses, as in the
//! paper. Each INT-capable egress port fills the next free slot and increments `hops`; unused
//! slots stay zero, and a full header is left as it is.
//!
//! Why not the paper's 8-byte record: HPCC packs a hop into 64 bits (24-bit timestamp, 20-bit
//! txBytes in 128-byte units, 17-bit queue in 80-byte units, a 3-bit code for 25/50/100/200/400
//! Gbit/s; the authors' `int-header.h`). Its rate code cannot name the 10 Mbit/s to 1 Gbit/s
//! links xcclab also runs, and its units lose the precision a unit test wants. These 16 bytes
//! are exact: cumulative bytes and timestamps wrap at 2^32 and the sender takes differences
//! modulo 2^32 ([`IntHop::tx_bytes_since`], [`IntHop::time_since`]), unambiguous while two
//! samples of a hop are less than 4 GiB and 4.29 s apart; rates are kbit/s up to 4.29 Tbit/s.
//! The cost: 82 bytes with 5 slots where the paper's header is 42.

use crate::time::{Dur, Time};
use crate::wire::body::{BodyField, FieldKind, HeaderBody};
use crate::wire::WireError;

/// Bytes of the preamble (hop count and slot count).
pub const INT_PREAMBLE_LEN: usize = 2;
/// Bytes of one hop record.
pub const INT_HOP_LEN: usize = 16;
/// Most slots a header may reserve: 5, the HPCC authors' `IntHeader::maxHop` (`int-header.h`),
/// one per switch of a three-tier fat-tree path. The records are held inline in every packet
/// (docs/algorithms/hpcc.md, "On the wire"), so this bound is also the packet's size.
pub const INT_MAX_SLOTS: usize = 5;

/// What one egress port stamped.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct IntHop {
    /// Bytes waiting in the port's queue when the packet left (saturates at `u32::MAX`).
    pub queue_bytes: u32,
    /// Bytes the port has transmitted since it started, modulo 2^32.
    pub tx_bytes: u32,
    /// The port's clock in nanoseconds when the packet left, modulo 2^32.
    pub timestamp_ns: u32,
    /// The port's line rate in kbit/s (never zero in a stamped record).
    pub line_rate_kbps: u32,
}

impl IntHop {
    /// The record a port with `queue_bytes` waiting, `tx_bytes_total` sent since it started and
    /// line rate `line_rate_bps` stamps at `now`. The rate is rounded to the nearest kbit/s and
    /// kept at least 1 kbit/s; the queue saturates; bytes and time wrap.
    pub fn stamp(queue_bytes: u64, tx_bytes_total: u64, now: Time, line_rate_bps: f64) -> IntHop {
        let kbps = (line_rate_bps / 1e3).round();
        let line_rate_kbps = if kbps.is_nan() || kbps < 1.0 {
            1
        } else if kbps >= u32::MAX as f64 {
            u32::MAX
        } else {
            kbps as u32
        };
        IntHop {
            queue_bytes: queue_bytes.min(u32::MAX as u64) as u32,
            tx_bytes: tx_bytes_total as u32,
            timestamp_ns: now.as_ns() as u32,
            line_rate_kbps,
        }
    }

    /// Line rate in bit/s.
    pub fn line_rate_bps(&self) -> f64 {
        self.line_rate_kbps as f64 * 1e3
    }

    /// Line rate in bytes per second.
    pub fn line_rate_bytes_per_sec(&self) -> f64 {
        self.line_rate_kbps as f64 * 125.0
    }

    /// Bytes transmitted between `earlier` and this record (modulo 2^32).
    pub fn tx_bytes_since(&self, earlier: &IntHop) -> u64 {
        self.tx_bytes.wrapping_sub(earlier.tx_bytes) as u64
    }

    /// Time between `earlier` and this record (modulo 2^32 ns).
    pub fn time_since(&self, earlier: &IntHop) -> Dur {
        Dur::from_ns(self.timestamp_ns.wrapping_sub(earlier.timestamp_ns) as u64)
    }

    fn emit(&self, buf: &mut [u8]) {
        buf[0..4].copy_from_slice(&self.queue_bytes.to_be_bytes());
        buf[4..8].copy_from_slice(&self.tx_bytes.to_be_bytes());
        buf[8..12].copy_from_slice(&self.timestamp_ns.to_be_bytes());
        buf[12..16].copy_from_slice(&self.line_rate_kbps.to_be_bytes());
    }

    fn parse(buf: &[u8]) -> IntHop {
        let word = |i: usize| u32::from_be_bytes([buf[i], buf[i + 1], buf[i + 2], buf[i + 3]]);
        IntHop { queue_bytes: word(0), tx_bytes: word(4), timestamp_ns: word(8), line_rate_kbps: word(12) }
    }
}

/// Why an INT header was refused.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum IntError {
    /// The buffer holds fewer bytes than the header says it has.
    Truncated { needed: usize, available: usize },
    /// A header must reserve at least one slot.
    NoSlots,
    /// More slots than [`INT_MAX_SLOTS`].
    TooManySlots { slots: usize },
    /// The hop count exceeds the reserved slots.
    HopsAboveSlots { hops: usize, slots: usize },
    /// A stamped hop has line rate zero (no port has one; it would divide by zero).
    ZeroLineRate { hop: usize },
    /// A slot past the hop count holds non-zero bytes.
    UnusedSlotNotZero { slot: usize },
}

impl core::fmt::Display for IntError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            IntError::Truncated { needed, available } => {
                write!(f, "INT header truncated: needs {needed} bytes, {available} available")
            }
            IntError::NoSlots => write!(f, "INT header reserves no slot (slots must be 1..={INT_MAX_SLOTS})"),
            IntError::TooManySlots { slots } => {
                write!(f, "INT header reserves {slots} slots, at most {INT_MAX_SLOTS} allowed")
            }
            IntError::HopsAboveSlots { hops, slots } => {
                write!(f, "INT hop count {hops} exceeds its {slots} reserved slots")
            }
            IntError::ZeroLineRate { hop } => write!(f, "INT hop {hop} has line rate 0"),
            IntError::UnusedSlotNotZero { slot } => {
                write!(f, "INT slot {slot} lies past the hop count but is not zero")
            }
        }
    }
}
impl std::error::Error for IntError {}

/// An INT header: `slots` reserved records of which the first `hops` are stamped.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct IntHeader {
    slots: u8,
    hops: u8,
    records: [IntHop; INT_MAX_SLOTS],
}

impl IntHeader {
    /// An empty header reserving `slots` records (what a sender puts on a data packet).
    pub fn new(slots: usize) -> Result<IntHeader, IntError> {
        Self::check_slots(slots)?;
        Ok(IntHeader { slots: slots as u8, hops: 0, records: [IntHop::default(); INT_MAX_SLOTS] })
    }

    /// A header with `slots` reserved and `hops` stamped, checked as untrusted input: the slot
    /// count in range, no more hops than slots, no hop with line rate zero.
    pub fn from_hops(slots: usize, hops: &[IntHop]) -> Result<IntHeader, IntError> {
        let mut h = Self::new(slots)?;
        if hops.len() > slots {
            return Err(IntError::HopsAboveSlots { hops: hops.len(), slots });
        }
        for (i, hop) in hops.iter().enumerate() {
            if hop.line_rate_kbps == 0 {
                return Err(IntError::ZeroLineRate { hop: i });
            }
            h.records[i] = *hop;
        }
        h.hops = hops.len() as u8;
        Ok(h)
    }

    fn check_slots(slots: usize) -> Result<(), IntError> {
        match slots {
            0 => Err(IntError::NoSlots),
            s if s > INT_MAX_SLOTS => Err(IntError::TooManySlots { slots: s }),
            _ => Ok(()),
        }
    }

    /// Reserved slots.
    pub fn slots(&self) -> usize {
        self.slots as usize
    }

    /// The stamped hops, in path order.
    pub fn hops(&self) -> &[IntHop] {
        &self.records[..self.hops as usize]
    }

    /// Appends a port's record; returns false (and changes nothing) when every slot is taken.
    /// A record with line rate zero is stamped as 1 kbit/s, the least a port can have.
    pub fn push(&mut self, hop: IntHop) -> bool {
        if self.hops >= self.slots {
            return false;
        }
        let mut hop = hop;
        hop.line_rate_kbps = hop.line_rate_kbps.max(1);
        self.records[self.hops as usize] = hop;
        self.hops += 1;
        true
    }

    /// Bytes on the wire: the preamble and every reserved slot, stamped or not.
    pub fn wire_len(&self) -> usize {
        Self::len_for_slots(self.slots as usize)
    }

    /// Bytes on the wire of a header reserving `slots` records.
    pub const fn len_for_slots(slots: usize) -> usize {
        INT_PREAMBLE_LEN + INT_HOP_LEN * slots
    }

    /// Writes the header into `buf[..wire_len()]` and returns its length.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, IntError> {
        let len = self.wire_len();
        if buf.len() < len {
            return Err(IntError::Truncated { needed: len, available: buf.len() });
        }
        buf[0] = self.hops;
        buf[1] = self.slots;
        for slot in 0..self.slots as usize {
            let at = INT_PREAMBLE_LEN + slot * INT_HOP_LEN;
            // Unused slots go out as zeros, whatever the array holds.
            let rec = if slot < self.hops as usize { self.records[slot] } else { IntHop::default() };
            rec.emit(&mut buf[at..at + INT_HOP_LEN]);
        }
        Ok(len)
    }

    /// Reads a header from the start of `buf`; returns it and the bytes it took. Every rule of
    /// [`IntHeader::from_hops`] is checked, and unused slots must be zero.
    pub fn parse(buf: &[u8]) -> Result<(IntHeader, usize), IntError> {
        if buf.len() < INT_PREAMBLE_LEN {
            return Err(IntError::Truncated { needed: INT_PREAMBLE_LEN, available: buf.len() });
        }
        let hops = buf[0] as usize;
        let slots = buf[1] as usize;
        Self::check_slots(slots)?;
        let len = Self::len_for_slots(slots);
        if buf.len() < len {
            return Err(IntError::Truncated { needed: len, available: buf.len() });
        }
        if hops > slots {
            return Err(IntError::HopsAboveSlots { hops, slots });
        }
        let mut records = [IntHop::default(); INT_MAX_SLOTS];
        for (slot, rec) in records.iter_mut().enumerate().take(slots) {
            let at = INT_PREAMBLE_LEN + slot * INT_HOP_LEN;
            let bytes = &buf[at..at + INT_HOP_LEN];
            if slot >= hops && bytes.iter().any(|&b| b != 0) {
                return Err(IntError::UnusedSlotNotZero { slot });
            }
            *rec = IntHop::parse(bytes);
        }
        Ok((Self::from_hops(slots, &records[..hops])?, len))
    }
}

/// INT in the wire registry (shim protocol 47): the preamble and one record in the field table,
/// the record repeated `slots` times on the wire.
impl HeaderBody for IntHeader {
    /// Unused by the other headers (42-46) and the session bodies (1-6).
    const PROTO: u8 = 47;
    const NAME: &'static str = "int";
    const LEN: usize = Self::len_for_slots(1);
    const RECORD_LEN: usize = INT_HOP_LEN;
    const FIELDS: &'static [BodyField] = &[
        BodyField { name: "hops", label: "INT hops stamped", offset: 0, kind: FieldKind::U8 },
        BodyField { name: "slots", label: "INT slots reserved", offset: 1, kind: FieldKind::U8 },
        BodyField { name: "queue_bytes", label: "Queue (bytes)", offset: 2, kind: FieldKind::U32 },
        BodyField { name: "tx_bytes", label: "Transmitted (bytes, mod 2^32)", offset: 6, kind: FieldKind::U32 },
        BodyField { name: "timestamp_ns", label: "Timestamp (ns, mod 2^32)", offset: 10, kind: FieldKind::U32 },
        BodyField { name: "line_rate_kbps", label: "Line rate (kbit/s)", offset: 14, kind: FieldKind::U32 },
    ];

    fn emit_body(&self, buf: &mut [u8]) {
        self.emit(buf).expect("the shim sized the buffer from wire_len");
    }

    /// Infallible form for a buffer already checked by [`HeaderBody::parse_sized`]; a refused
    /// one gives an empty one-slot header.
    fn parse_body(buf: &[u8]) -> Self {
        Self::parse_sized(buf).unwrap_or(IntHeader { slots: 1, hops: 0, records: [IntHop::default(); INT_MAX_SLOTS] })
    }

    #[inline]
    fn body_len(&self) -> usize {
        self.wire_len()
    }

    /// Every rule of [`IntHeader::parse`], and the shim's length must be the header's own.
    fn parse_sized(buf: &[u8]) -> Result<Self, WireError> {
        match IntHeader::parse(buf) {
            Ok((h, used)) if used == buf.len() => Ok(h),
            _ => Err(WireError::Malformed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hop(q: u32, tx: u32, ts: u32, kbps: u32) -> IntHop {
        IntHop { queue_bytes: q, tx_bytes: tx, timestamp_ns: ts, line_rate_kbps: kbps }
    }

    #[test]
    fn emits_the_documented_bytes() {
        let h = IntHeader::from_hops(2, &[hop(0x0102_0304, 5, 6, 100_000_000)]).unwrap();
        let mut buf = [0xAAu8; 40];
        assert_eq!(h.emit(&mut buf), Ok(34));
        #[rustfmt::skip]
        let want: [u8; 34] = [
            1, 2,                                   // one hop stamped, two slots
            0x01, 0x02, 0x03, 0x04,                 // queue bytes
            0, 0, 0, 5,                             // tx bytes
            0, 0, 0, 6,                             // timestamp
            0x05, 0xF5, 0xE1, 0x00,                 // 100,000,000 kbit/s = 100 Gbit/s
            0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // slot 1, unused
        ];
        assert_eq!(&buf[..34], &want);
        assert_eq!(buf[34], 0xAA, "nothing written past the header");
    }

    #[test]
    fn round_trips_every_hop_count() {
        for slots in 1..=INT_MAX_SLOTS {
            for n in 0..=slots {
                let hops: Vec<IntHop> =
                    (0..n as u32).map(|i| hop(i * 1000, u32::MAX - i, i * 7 + 1, 1 + i * 10_000)).collect();
                let h = IntHeader::from_hops(slots, &hops).unwrap();
                let mut buf = vec![0u8; h.wire_len()];
                assert_eq!(h.emit(&mut buf), Ok(2 + 16 * slots));
                let (back, used) = IntHeader::parse(&buf).unwrap();
                assert_eq!(used, buf.len());
                assert_eq!(back, h);
                assert_eq!(back.hops(), &hops[..]);
            }
        }
    }

    #[test]
    fn refuses_malformed_input_by_name() {
        assert_eq!(IntHeader::parse(&[0]), Err(IntError::Truncated { needed: 2, available: 1 }));
        assert_eq!(IntHeader::parse(&[0, 0]), Err(IntError::NoSlots));
        assert_eq!(IntHeader::parse(&[0, 9]), Err(IntError::TooManySlots { slots: 9 }));
        assert_eq!(IntHeader::parse(&[0, 6]), Err(IntError::TooManySlots { slots: 6 }));
        assert_eq!(IntHeader::parse(&[0, 1, 0, 0]), Err(IntError::Truncated { needed: 18, available: 4 }));
        let mut buf = [0u8; 18];
        buf[0] = 2;
        buf[1] = 1;
        assert_eq!(IntHeader::parse(&buf), Err(IntError::HopsAboveSlots { hops: 2, slots: 1 }));
        buf[0] = 1;
        assert_eq!(IntHeader::parse(&buf), Err(IntError::ZeroLineRate { hop: 0 }));
        buf[0] = 0;
        buf[5] = 1;
        assert_eq!(IntHeader::parse(&buf), Err(IntError::UnusedSlotNotZero { slot: 0 }));
        assert_eq!(
            IntHeader::from_hops(1, &[hop(0, 0, 0, 1), hop(0, 0, 0, 1)]),
            Err(IntError::HopsAboveSlots { hops: 2, slots: 1 })
        );
        assert_eq!(IntHeader::new(0), Err(IntError::NoSlots));
        let h = IntHeader::new(3).unwrap();
        assert_eq!(h.emit(&mut [0u8; 10]), Err(IntError::Truncated { needed: 50, available: 10 }));
        // Every error names what was wrong.
        assert!(IntError::ZeroLineRate { hop: 3 }.to_string().contains("hop 3"));
    }

    /// Through the registry's shim: proto 47, len 2 + 16·slots; a length that is not the
    /// header's own, or a refused body, is malformed.
    #[test]
    fn shim_round_trips_and_refuses_bad_bodies() {
        use crate::wire::CongestionHeader;
        let h = IntHeader::from_hops(5, &[hop(1500, 7, 9, 100_000_000)]).unwrap();
        let c = CongestionHeader::Int(h);
        assert_eq!((c.proto(), c.body_len(), c.wire_len()), (47, 82, 84));
        let mut buf = [0u8; 84];
        assert_eq!(c.emit(&mut buf), Ok(84));
        assert_eq!(buf[..4], [47, 82, 1, 5]);
        assert_eq!(CongestionHeader::parse(&buf), Ok((c, 84)));
        let mut short = buf;
        short[1] = 34; // two slots' length with five slots declared
        assert_eq!(CongestionHeader::parse(&short), Err(WireError::Malformed));
        let mut zero_rate = buf;
        zero_rate[2 + 2 + 15] = 0;
        zero_rate[2 + 2 + 14] = 0;
        zero_rate[2 + 2 + 13] = 0;
        zero_rate[2 + 2 + 12] = 0;
        assert_eq!(CongestionHeader::parse(&zero_rate), Err(WireError::Malformed));
    }

    #[test]
    fn push_fills_slots_in_order_and_stops_when_full() {
        let mut h = IntHeader::new(2).unwrap();
        assert!(h.push(hop(1, 1, 1, 1)));
        assert!(h.push(hop(2, 2, 2, 0)));
        assert!(!h.push(hop(3, 3, 3, 3)));
        assert_eq!(h.hops().len(), 2);
        assert_eq!(h.hops()[1].line_rate_kbps, 1, "a zero rate is stamped as the least rate");
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            /// Any bytes: parse never panics; what it accepts emits back to the same bytes.
            #[test]
            fn parse_is_total_and_exact(buf in proptest::collection::vec(any::<u8>(), 0..160)) {
                if let Ok((h, used)) = IntHeader::parse(&buf) {
                    let mut out = vec![0u8; used];
                    prop_assert_eq!(h.emit(&mut out), Ok(used));
                    prop_assert_eq!(&out[..], &buf[..used]);
                }
            }

            /// Any valid header survives emit then parse.
            #[test]
            fn emit_then_parse_round_trips(
                slots in 1usize..=INT_MAX_SLOTS,
                raw in proptest::collection::vec((any::<u32>(), any::<u32>(), any::<u32>(), 1u32..), 0..=INT_MAX_SLOTS),
            ) {
                let hops: Vec<IntHop> = raw.iter().take(slots).map(|&(q, tx, ts, r)| hop(q, tx, ts, r)).collect();
                let h = IntHeader::from_hops(slots, &hops).unwrap();
                let mut buf = vec![0u8; h.wire_len()];
                h.emit(&mut buf).unwrap();
                prop_assert_eq!(IntHeader::parse(&buf), Ok((h, buf.len())));
            }
        }
    }

    #[test]
    fn stamp_wraps_counters_and_differences_undo_the_wrap() {
        // A 100 Gbit/s port at 5 s with 2^32 + 10 bytes sent.
        let a = IntHop::stamp(7_000_000_000, (1u64 << 32) - 100, Time::from_ns((1u64 << 32) - 50), 100e9);
        let b = IntHop::stamp(64, (1u64 << 32) + 10, Time::from_ns((1u64 << 32) + 950), 100e9);
        assert_eq!(a.queue_bytes, u32::MAX, "the queue saturates");
        assert_eq!(b.tx_bytes, 10);
        assert_eq!(b.tx_bytes_since(&a), 110);
        assert_eq!(b.time_since(&a), Dur::from_ns(1000));
        assert_eq!(b.line_rate_kbps, 100_000_000);
        assert_eq!(b.line_rate_bytes_per_sec(), 12.5e9);
        assert_eq!(IntHop::stamp(0, 0, Time::ZERO, 10e6).line_rate_kbps, 10_000);
        assert_eq!(IntHop::stamp(0, 0, Time::ZERO, 0.0).line_rate_kbps, 1);
    }
}
