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

/// `kind:u8 bw'':f64 bw':f64 bw:f64 B:u128 b:u16` (b = 0xFFFF for the paper's -1).
impl crate::wire::session::SessionBody for SlbnPacket {
    const LEN: usize = 43;

    fn emit_body(&self, buf: &mut [u8]) {
        buf[0] = match self.kind {
            SlbnKind::Join => 0,
            SlbnKind::Probe => 1,
            SlbnKind::ProbeAck => 2,
            SlbnKind::Leave => 3,
        };
        buf[1..9].copy_from_slice(&self.bw2.to_be_bytes());
        buf[9..17].copy_from_slice(&self.bw1.to_be_bytes());
        buf[17..25].copy_from_slice(&self.bw.to_be_bytes());
        buf[25..41].copy_from_slice(&self.bottlenecks.0.to_be_bytes());
        buf[41..43].copy_from_slice(&self.last.unwrap_or(u16::MAX).to_be_bytes());
    }

    fn parse_body(buf: &[u8]) -> Result<SlbnPacket, crate::wire::WireError> {
        let kind = match buf[0] {
            0 => SlbnKind::Join,
            1 => SlbnKind::Probe,
            2 => SlbnKind::ProbeAck,
            3 => SlbnKind::Leave,
            _ => return Err(crate::wire::WireError::Malformed),
        };
        let mut set = [0u8; 16];
        set.copy_from_slice(&buf[25..41]);
        let last = match u16::from_be_bytes([buf[41], buf[42]]) {
            u16::MAX => None,
            b if (b as usize) < HopSet::MAX_HOPS => Some(b),
            _ => return Err(crate::wire::WireError::Malformed),
        };
        Ok(SlbnPacket {
            kind,
            bw2: crate::wire::session::rate_at(buf, 1)?,
            bw1: crate::wire::session::rate_at(buf, 9)?,
            bw: crate::wire::session::rate_at(buf, 17)?,
            bottlenecks: HopSet(u128::from_be_bytes(set)),
            last,
        })
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
