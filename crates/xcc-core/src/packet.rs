//! The packet every driver moves: a transport segment, its ECN bits and its congestion header.

use crate::wire::{CongestionHeader, Ecn, Segment};

/// Identifies a connection (a transport flow) end to end. Drivers allocate them densely so they
/// can index tables by `FlowId.0` instead of hashing.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct FlowId(pub u32);

/// A packet as the state machines see it. Drivers wrap it with their own routing state.
#[derive(Copy, Clone, Debug, PartialEq, Default)]
pub struct Packet {
    pub flow: FlowId,
    /// Size on the link, all headers included: what serialisation time and buffers count.
    pub wire_bytes: u32,
    pub ecn: Ecn,
    pub seg: Segment,
    pub cc: CongestionHeader,
}

impl Packet {
    /// True for segments that carry flow data (what goodput, marks and most AQMs care about).
    pub fn is_data(&self) -> bool {
        self.seg.kind == crate::wire::SegmentKind::Data
    }
}
