//! The SLBN router link task (seed 004, Fig. 2): three numbers per link, O(1) per packet.

use super::packet::{SlbnKind, SlbnPacket};
use crate::session::{Direction, Forward, Hop, LinkTask};
use crate::time::Time;

/// State of one directed link: `BF`, `NR`, `N` and the capacity `C_e` (bit/s).
#[derive(Clone, Debug, PartialEq)]
pub struct SlbnLink {
    pub capacity: f64,
    /// `BF`: bandwidth of the sessions saturated (restricted elsewhere) at this link.
    pub bf: f64,
    /// `NR`: sessions unsaturated (restricted here).
    pub nr: i64,
    /// `N`: sessions crossing the link.
    pub n: i64,
    /// The variant of protocols.md 6.7-1: Join also lowers `bw` to `shBW` where it counts the
    /// session as restricted (off = the published Fig. 2).
    pub join_lowers_bw: bool,
}

impl SlbnLink {
    pub fn new(capacity: f64, join_lowers_bw: bool) -> SlbnLink {
        SlbnLink { capacity, bf: 0.0, nr: 0, n: 0, join_lowers_bw }
    }

    /// `shBW = max((C - BF) / nr, C / N)` with the denominator given (Join uses `NR + 1`).
    fn share(&self, nr: i64) -> f64 {
        let floor = if self.n > 0 { self.capacity / self.n as f64 } else { self.capacity };
        if nr <= 0 {
            // Not reached by Fig. 2 (NR counts the session itself); keep the floor.
            return floor;
        }
        ((self.capacity - self.bf) / nr as f64).max(floor)
    }

    /// The equitable shared bandwidth offered now (for reports and tests).
    pub fn shared_bandwidth(&self) -> f64 {
        self.share(self.nr)
    }

    /// Fig. 2, lines 4-10.
    fn join(&mut self, e: u16, p: &mut SlbnPacket) {
        self.n += 1;
        let sh = self.share(self.nr + 1);
        if p.bw >= sh {
            p.bottlenecks.insert(e);
            p.last = Some(e);
            self.nr += 1;
            if self.join_lowers_bw {
                p.bw = sh;
            }
        }
    }

    /// Fig. 2, lines 12-25 (Probe, downstream) and 27-40 (ProbeAck, upstream): the same steps
    /// except the value withdrawn from BF for a session that was saturated here: `bw''` on the
    /// way down (it was added in the previous cycle), `bw'` on the way up (added on the way down).
    fn probe(&mut self, e: u16, p: &mut SlbnPacket, withdraw: f64) {
        if p.bottlenecks.contains(e) {
            p.bottlenecks.remove(e);
        } else {
            self.bf -= withdraw;
            self.nr += 1;
        }
        let sh = self.share(self.nr);
        if p.last == Some(e) || p.bw >= sh {
            p.bottlenecks.insert(e);
            p.bw = sh;
            p.last = Some(e);
        } else {
            self.bf += p.bw1;
            self.nr -= 1;
        }
    }

    /// Fig. 2, lines 42-50.
    fn leave(&mut self, e: u16, p: &SlbnPacket) {
        if p.bottlenecks.contains(e) {
            self.nr -= 1;
        } else {
            self.bf -= p.bw1;
        }
        self.n -= 1;
    }
}

impl LinkTask for SlbnLink {
    type Packet = SlbnPacket;

    fn on_packet(&mut self, _now: Time, hop: Hop, p: &mut SlbnPacket) -> Forward {
        let e = hop.index;
        match (p.kind, hop.dir) {
            (SlbnKind::Join, Direction::Downstream) => self.join(e, p),
            (SlbnKind::Probe, Direction::Downstream) => {
                let withdraw = p.bw2;
                self.probe(e, p, withdraw)
            }
            (SlbnKind::ProbeAck, Direction::Upstream) => {
                let withdraw = p.bw1;
                self.probe(e, p, withdraw)
            }
            (SlbnKind::Leave, Direction::Downstream) => self.leave(e, p),
            // A packet type on the wrong leg is a driver bug; Fig. 2 has no rule for it.
            (kind, dir) => panic!("SLBN link: {kind:?} travelling {dir:?}"),
        }
        Forward::Pass
    }

    /// `0 <= NR <= N` whatever the churn (every session is counted once in N, at most once in NR).
    fn check(&self) -> Result<(), String> {
        if self.n < 0 || self.nr < 0 || self.nr > self.n {
            return Err(format!("SLBN link: N = {}, NR = {} (expected 0 <= NR <= N)", self.n, self.nr));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::slbn::packet::HopSet;

    fn hop(index: u16, dir: Direction) -> Hop {
        Hop { session: 0, link: 9, index, path_len: 3, dir }
    }

    fn pkt(kind: SlbnKind, bw2: f64, bw1: f64, bw: f64, b: &[u16], last: Option<u16>) -> SlbnPacket {
        let mut set = HopSet::default();
        for &i in b {
            set.insert(i);
        }
        SlbnPacket { kind, bw2, bw1, bw, bottlenecks: set, last }
    }

    /// One 100-unit link (path position 1), three sessions, by hand:
    /// s1 joins greedy: N=1, shBW = max(100/1, 100/1) = 100, inf >= 100 -> NR=1, B={1}, b=1.
    /// s2 joins with D=30: N=2, shBW = max(100/2, 50) = 50; 30 < 50 -> saturated, NR stays 1.
    /// s1's ProbeAck: 1 in B -> removed; shBW = max(100/1, 50) = 100; e = b -> bw = 100.
    /// s2's ProbeAck (bw'=0): not in B -> BF -= 0, NR = 2; shBW = max(100/2, 50) = 50;
    ///   30 < 50 -> BF += bw' (0), NR = 1.
    /// s2's Probe (bw''=0, bw'=30, bw=30): BF -= 0, NR = 2, shBW = 50, 30 < 50 -> BF = 30, NR = 1.
    /// s1's Probe (0, 100, 100, {1}, 1): in B; shBW = max((100-30)/1, 50) = 70; e = b -> bw = 70.
    /// s3 joins greedy: N = 3, shBW = max(70/2, 100/3) = 35 -> NR = 2.
    /// s2 leaves (ack fields bw'=30, not in B): BF = 0, N = 2.
    #[test]
    fn join_probe_ack_leave_by_hand() {
        let mut l = SlbnLink::new(100.0, false);
        let e = 1;
        let mut s1 = SlbnPacket::join(f64::INFINITY);
        l.on_packet(Time::ZERO, hop(e, Direction::Downstream), &mut s1);
        assert_eq!((l.n, l.nr, l.bf), (1, 1, 0.0));
        assert!(s1.bottlenecks.contains(e) && s1.last == Some(e));
        assert_eq!(s1.bw, f64::INFINITY, "Join does not lower bw in the published figure");

        let mut s2 = SlbnPacket::join(30.0);
        l.on_packet(Time::ZERO, hop(e, Direction::Downstream), &mut s2);
        assert_eq!((l.n, l.nr, l.bf), (2, 1, 0.0));
        assert!(!s2.bottlenecks.contains(e) && s2.last.is_none());

        s1.kind = SlbnKind::ProbeAck;
        l.on_packet(Time::ZERO, hop(e, Direction::Upstream), &mut s1);
        assert_eq!(s1.bw, 100.0);
        assert_eq!((l.n, l.nr, l.bf), (2, 1, 0.0));

        s2.kind = SlbnKind::ProbeAck;
        l.on_packet(Time::ZERO, hop(e, Direction::Upstream), &mut s2);
        assert_eq!(s2.bw, 30.0);
        assert_eq!((l.n, l.nr, l.bf), (2, 1, 0.0));

        let mut p2 = pkt(SlbnKind::Probe, 0.0, 30.0, 30.0, &[], None);
        l.on_packet(Time::ZERO, hop(e, Direction::Downstream), &mut p2);
        assert_eq!((l.n, l.nr, l.bf), (2, 1, 30.0));
        assert_eq!(p2.bw, 30.0);

        let mut p1 = pkt(SlbnKind::Probe, 0.0, 100.0, 100.0, &[e], Some(e));
        l.on_packet(Time::ZERO, hop(e, Direction::Downstream), &mut p1);
        assert_eq!(p1.bw, 70.0);
        assert_eq!(l.shared_bandwidth(), 70.0);

        let mut s3 = SlbnPacket::join(f64::INFINITY);
        l.on_packet(Time::ZERO, hop(e, Direction::Downstream), &mut s3);
        assert_eq!((l.n, l.nr, l.bf), (3, 2, 30.0));
        assert_eq!(l.shared_bandwidth(), 35.0);

        let leave2 = pkt(SlbnKind::Leave, 0.0, 30.0, 30.0, &[], None);
        let mut leave2b = leave2;
        l.on_packet(Time::ZERO, hop(e, Direction::Downstream), &mut leave2b);
        assert_eq!(leave2b, leave2, "links do not rewrite Leave");
        assert_eq!((l.n, l.nr, l.bf), (2, 2, 0.0));
        assert_eq!(l.shared_bandwidth(), 50.0);

        let mut leave1 = pkt(SlbnKind::Leave, 100.0, 70.0, 70.0, &[e], Some(e));
        l.on_packet(Time::ZERO, hop(e, Direction::Downstream), &mut leave1);
        assert_eq!((l.n, l.nr, l.bf), (1, 1, 0.0));
    }

    /// A session restricted elsewhere moves F -> R and back: downstream withdraws bw'',
    /// upstream withdraws bw' (what the downstream pass added).
    /// Link C = 90, one other session unsaturated here (NR = 1 before), our session saturated
    /// here last cycle with 20 (BF = 20), N = 2.
    /// Probe(bw''=20, bw'=25, bw=25): BF = 0, NR = 2; shBW = max(90/2, 45) = 45; 25 < 45 ->
    ///   BF = 25, NR = 1.
    /// ProbeAck(20, 25, bw=10): BF = 0, NR = 2; shBW = 45; 10 < 45 -> BF = 25, NR = 1.
    /// A later Probe(25, 10, 10) finds BF = 25 - 25 + 10 = 10.
    #[test]
    fn saturated_session_withdraws_bw2_down_and_bw1_up() {
        let mut l = SlbnLink { capacity: 90.0, bf: 20.0, nr: 1, n: 2, join_lowers_bw: false };
        let e = 0;
        let mut p = pkt(SlbnKind::Probe, 20.0, 25.0, 25.0, &[], Some(2));
        l.on_packet(Time::ZERO, hop(e, Direction::Downstream), &mut p);
        assert_eq!((l.nr, l.bf), (1, 25.0));
        assert_eq!(p.bw, 25.0);
        let mut a = pkt(SlbnKind::ProbeAck, 20.0, 25.0, 10.0, &[2], Some(2));
        l.on_packet(Time::ZERO, hop(e, Direction::Upstream), &mut a);
        assert_eq!((l.nr, l.bf), (1, 25.0));
        assert_eq!(a.bw, 10.0);
        let mut p = pkt(SlbnKind::Probe, 25.0, 10.0, 10.0, &[2], Some(2));
        l.on_packet(Time::ZERO, hop(e, Direction::Downstream), &mut p);
        assert_eq!((l.nr, l.bf), (1, 10.0));
    }

    /// BF larger than C (transient): the C/N floor keeps shBW positive.
    /// C = 100, BF = 150, NR = 0 -> our unsaturated session (in B), N = 4: NR is 1 after the
    /// e in B branch only if it was counted; here it was (NR = 1). shBW = max(-50, 25) = 25.
    #[test]
    fn floor_c_over_n_when_bf_exceeds_capacity() {
        let mut l = SlbnLink { capacity: 100.0, bf: 150.0, nr: 1, n: 4, join_lowers_bw: false };
        let mut p = pkt(SlbnKind::Probe, 0.0, 40.0, 40.0, &[3], Some(3));
        l.on_packet(Time::ZERO, hop(3, Direction::Downstream), &mut p);
        assert_eq!(p.bw, 25.0);
        assert!(p.bottlenecks.contains(3));
    }

    /// The last bottleneck b takes the (higher) share even when bw is below it (line 19).
    #[test]
    fn last_bottleneck_raises_bw_to_its_share() {
        let mut l = SlbnLink { capacity: 100.0, bf: 0.0, nr: 2, n: 2, join_lowers_bw: false };
        let mut p = pkt(SlbnKind::Probe, 0.0, 30.0, 30.0, &[1], Some(1));
        l.on_packet(Time::ZERO, hop(1, Direction::Downstream), &mut p);
        assert_eq!(p.bw, 50.0);
        assert_eq!((l.nr, l.bf), (2, 0.0));
    }

    #[test]
    fn check_flags_inconsistent_counters() {
        let ok = SlbnLink { capacity: 1.0, bf: 0.0, nr: 1, n: 2, join_lowers_bw: false };
        assert!(ok.check().is_ok());
        let bad = SlbnLink { nr: 3, ..ok.clone() };
        assert!(bad.check().unwrap_err().contains("NR = 3"));
        let bad = SlbnLink { n: -1, nr: 0, ..ok };
        assert!(bad.check().is_err());
    }

    #[test]
    fn join_variant_lowers_bw() {
        let mut l = SlbnLink::new(100.0, true);
        let mut p = SlbnPacket::join(f64::INFINITY);
        l.on_packet(Time::ZERO, hop(0, Direction::Downstream), &mut p);
        assert_eq!(p.bw, 100.0);
    }
}
