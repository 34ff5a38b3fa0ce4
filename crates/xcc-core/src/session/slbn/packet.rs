//! SLBN control packets (seed 004, Section III): `type(s, bw'', bw', bw, B, b)`.

use crate::session::ControlPacket;

/// The four packet types of Figs. 1 and 2.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SlbnKind {
    Join,
    Probe,
    ProbeAck,
    Leave,
}

/// A set of links of one session's path, named by their position on the path (bit `i` = the
/// `i`-th link). The paper bounds B's size by the network diameter; 128 hops is far beyond any
/// path of the topologies used here, and the driver refuses longer paths.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub struct HopSet(pub u128);

impl HopSet {
    /// Longest path whose links a `HopSet` can name.
    pub const MAX_HOPS: usize = 128;

    pub fn contains(self, hop: u16) -> bool {
        self.0 >> hop & 1 == 1
    }
    pub fn insert(&mut self, hop: u16) {
        self.0 |= 1u128 << hop;
    }
    pub fn remove(&mut self, hop: u16) {
        self.0 &= !(1u128 << hop);
    }
    pub fn len(self) -> u32 {
        self.0.count_ones()
    }
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

/// One SLBN protocol packet. Rates are bit/s.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct SlbnPacket {
    pub kind: SlbnKind,
    /// `bw''`: bandwidth computed two Probe cycles ago.
    pub bw2: f64,
    /// `bw'`: bandwidth computed in the previous Probe cycle.
    pub bw1: f64,
    /// `bw`: bandwidth being computed in this cycle.
    pub bw: f64,
    /// `B`: links where the session is currently restricted (unsaturated, counted in NR).
    pub bottlenecks: HopSet,
    /// `b`: the latest link added to B (path position), `None` for the paper's -1.
    pub last: Option<u16>,
}

impl SlbnPacket {
    /// `Join(s, 0, 0, D, {}, -1)` (Fig. 1, line 6).
    pub fn join(demand: f64) -> SlbnPacket {
        SlbnPacket { kind: SlbnKind::Join, bw2: 0.0, bw1: 0.0, bw: demand, bottlenecks: HopSet::default(), last: None }
    }

    /// Bytes on the wire: type (1), session (4), three rates (3 x 8), B as a bitmap of the path
    /// (16), b (2), plus a 20-byte IP header: 67, rounded to 68.
    pub const WIRE_BYTES: u32 = 68;
}

impl ControlPacket for SlbnPacket {
    /// "The destination node simply drops Leave packets, and bounces Join and Probe packets
    /// back upstream as ProbeAck packets" (fields unchanged).
    fn at_destination(self) -> Option<SlbnPacket> {
        match self.kind {
            SlbnKind::Join | SlbnKind::Probe => Some(SlbnPacket { kind: SlbnKind::ProbeAck, ..self }),
            SlbnKind::Leave => None,
            SlbnKind::ProbeAck => panic!("SLBN destination received a ProbeAck"),
        }
    }

    fn wire_bytes(&self) -> u32 {
        SlbnPacket::WIRE_BYTES
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hop_set_insert_remove_contains() {
        let mut s = HopSet::default();
        assert!(s.is_empty());
        s.insert(0);
        s.insert(127);
        assert!(s.contains(0) && s.contains(127) && !s.contains(5));
        assert_eq!(s.len(), 2);
        s.remove(0);
        assert!(!s.contains(0) && s.contains(127));
    }
}
