//! COBB's link task, **reconstructed**: J. A. Cobb and M. G. Gouda, "Stabilization of Max-Min
//! Fair Networks without Per-flow State" (SSS 2008, LNCS 5340; Theoretical Computer Science
//! 2011). Only the abstracts and seed 004's description could be read: routers keep a constant
//! amount of state (no per-flow state), the protocol is self-stabilising, and it depends on a
//! constant period `T` that must exceed the control-packet round-trip time (seed 004 ran it
//! with T = 70 ms). The rules below are the closest reconstruction we could make from that
//! (docs/algorithms/cobb.md says what is and is not from the papers).
//!
//! Time at every link is cut into periods `[kT, (k+1)T)`. Each flow sends one control packet
//! per period carrying its current rate `r` and an explicit rate `ER` (its demand at the
//! source). During a period the link adds up, from the packets it sees, how many flows are
//! restricted here and how much bandwidth the others use; what it advertises during period
//! `k + 1` is computed from period `k`'s sums only:
//!
//! ```text
//! on a packet (r, ER) in period k, with mu the share advertised in period k:
//!   if r >= mu or r == 0: n_here += 1              (held to mu here, or new: wants a share)
//!   else:                 b_else += r; r_max = max(r_max, r)   (held below mu elsewhere)
//!   ER = min(ER, mu)
//! at the end of period k, if it saw any packet:
//!   mu = (C - b_else) / n_here                    if n_here > 0
//!   mu = C - b_else + r_max                       otherwise (what one flow could grow to)
//!   mu = max(mu, 0)
//! (a period without packets leaves mu as it was: no information, no change)
//! n_here = b_else = r_max = 0
//! ```
//!
//! State: six numbers per link whatever the number of flows, rebuilt every period from the
//! packets seen, so corrupted state is flushed one period after packets flow again (the
//! self-stabilisation argument). A flow counted twice or not at all in a period (its packets
//! spaced unevenly by queueing, or a round trip longer than T) makes the next share wrong:
//! that is the fragility seed 004 observed.
//!
//! Three choices of ours (docs/algorithms/cobb.md): a flow without a rate yet (`r = 0`) counts
//! as restricted here, so a burst of arrivals is offered `C / n` rather than `C` each; an
//! empty period keeps the share, so packets delayed past a period boundary by a queue do not
//! reset it to the whole capacity; and a new link offers 0 until it has counted one period.

use super::packet::CobbPacket;
use crate::session::{Direction, Forward, Hop, LinkTask};
use crate::time::{Dur, Time};

/// COBB's parameters.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct CobbConfig {
    /// The period T (seed 004: 70 ms for WAN round-trip times).
    pub period: Dur,
}

impl Default for CobbConfig {
    fn default() -> Self {
        CobbConfig { period: Dur::from_ms(70) }
    }
}

/// One output link's COBB state (constant size).
#[derive(Clone, Debug)]
pub struct CobbLink {
    capacity: f64,
    period: Dur,
    /// End of the current period.
    period_end: Time,
    /// Share advertised during the current period.
    share: f64,
    /// Flows restricted here, seen in the current period.
    n_here: u32,
    /// Bandwidth of flows restricted elsewhere, seen in the current period.
    b_else: f64,
    /// Largest rate among them.
    r_max: f64,
    /// Packets seen in the current period.
    seen: u32,
}

impl CobbLink {
    /// COBB on a link of `capacity_bps`; periods start at `Time::ZERO` (every link uses the
    /// same boundaries, the common clock the period structure assumes). Until it has counted
    /// its flows for one period the link offers nothing (share 0): handing out the whole
    /// capacity to a first burst of flows builds a queue that outlives the burst (at full
    /// utilisation it drains only through the control budget), and the queue's delay moves
    /// packets across period boundaries, which is exactly what the period rule cannot absorb.
    pub fn new(cfg: CobbConfig, capacity_bps: f64) -> CobbLink {
        CobbLink {
            capacity: capacity_bps,
            period: cfg.period,
            period_end: Time::ZERO + cfg.period,
            share: 0.0,
            n_here: 0,
            b_else: 0.0,
            r_max: 0.0,
            seen: 0,
        }
    }

    /// A control packet of a flow at rate `rate` carrying explicit rate `er` arrives at `now`;
    /// returns the explicit rate it leaves with. Periods that ended before `now` are closed
    /// first (lazily: the link needs no timer).
    pub fn count_and_lower(&mut self, now: Time, rate: f64, er: f64) -> f64 {
        self.close_periods(now);
        self.seen += 1;
        if rate >= self.share || rate == 0.0 {
            self.n_here += 1;
        } else {
            self.b_else += rate;
            self.r_max = self.r_max.max(rate);
        }
        er.min(self.share)
    }

    fn close_periods(&mut self, now: Time) {
        while now >= self.period_end {
            if self.seen > 0 {
                let spare = self.capacity - self.b_else;
                let share = if self.n_here > 0 { spare / self.n_here as f64 } else { spare + self.r_max };
                self.share = share.max(0.0);
            }
            self.seen = 0;
            self.n_here = 0;
            self.b_else = 0.0;
            self.r_max = 0.0;
            self.period_end += self.period;
        }
    }

    /// Share advertised in the current period (as of the last packet), bit/s.
    pub fn share(&self) -> f64 {
        self.share
    }
}

impl LinkTask for CobbLink {
    type Packet = CobbPacket;

    /// Counted and lowered on the way downstream; the way back carries the answer home.
    fn on_packet(&mut self, now: Time, hop: Hop, p: &mut CobbPacket) -> Forward {
        if hop.dir == Direction::Downstream {
            p.er = self.count_and_lower(now, p.rate, p.er);
        }
        Forward::Pass
    }

    /// The share is a rate: finite and non-negative.
    fn check(&self) -> Result<(), String> {
        if !(self.share.is_finite() && self.share >= 0.0) {
            return Err(format!("COBB link: share {}", self.share));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const INF: f64 = f64::INFINITY;

    fn at_ms(ms: u64) -> Time {
        Time::ZERO + Dur::from_ms(ms)
    }

    /// Single link C = 12, two greedy flows starting without a rate (hand computation):
    /// period 0: share 0 (nothing counted yet); both r = 0 count as here: n_here = 2; ER 0.
    /// period 1: share = 12 / 2 = 6; both (still at 0) count here again; ER 6.
    /// period 2: share = 6; both at 6 >= 6: share stays 6.
    #[test]
    fn single_link_hand_computed_periods() {
        let mut l = CobbLink::new(CobbConfig { period: Dur::from_ms(10) }, 12.0);
        assert_eq!(l.count_and_lower(at_ms(1), 0.0, INF), 0.0);
        assert_eq!(l.count_and_lower(at_ms(2), 0.0, INF), 0.0);
        assert_eq!(l.count_and_lower(at_ms(11), 0.0, INF), 6.0);
        assert_eq!(l.count_and_lower(at_ms(12), 0.0, INF), 6.0);
        assert_eq!(l.count_and_lower(at_ms(21), 6.0, INF), 6.0);
        assert_eq!(l.count_and_lower(at_ms(22), 6.0, 5.0), 5.0, "a smaller ER stays");
        assert_eq!(l.count_and_lower(at_ms(31), 6.0, INF), 6.0);
    }

    /// Flows held elsewhere: the link's share is what one of them could grow to.
    /// C = 10, two flows at 4: period 0 counts both here (share 0), period 1 offers 10/2 = 5,
    /// where both (at 4 < 5) are held elsewhere: period 2 offers 10 - 8 + 4 = 6.
    #[test]
    fn no_flow_restricted_here_gives_the_growth_room_of_the_largest() {
        let mut l = CobbLink::new(CobbConfig { period: Dur::from_ms(10) }, 10.0);
        l.count_and_lower(at_ms(1), 4.0, INF);
        l.count_and_lower(at_ms(2), 4.0, INF);
        assert_eq!(l.count_and_lower(at_ms(11), 4.0, INF), 5.0);
        l.count_and_lower(at_ms(12), 4.0, INF);
        l.count_and_lower(at_ms(21), 4.0, INF);
        assert_eq!(l.share(), 6.0);
    }

    /// A flow counted twice in one period (uneven spacing) halves the next share: the
    /// fragility of a period. A period with no packets keeps the share it had.
    #[test]
    fn double_counted_and_empty_periods() {
        let mut l = CobbLink::new(CobbConfig { period: Dur::from_ms(10) }, 12.0);
        l.count_and_lower(at_ms(1), 12.0, INF);
        l.count_and_lower(at_ms(9), 12.0, INF); // the same flow again: counted twice
        assert_eq!(l.count_and_lower(at_ms(15), 6.0, INF), 6.0, "12 / 2");
        l.count_and_lower(at_ms(16), 2.0, INF); // held elsewhere at 2
                                                // Period 2's share is (12 - 2) / 1 = 10; periods 2 and 3 see nothing: it stays 10.
        assert_eq!(l.count_and_lower(at_ms(45), 10.0, INF), 10.0);
    }

    /// Corrupted state is flushed after one period (self-stabilisation).
    #[test]
    fn corrupted_counters_are_forgotten_after_one_period() {
        let mut l = CobbLink::new(CobbConfig { period: Dur::from_ms(10) }, 12.0);
        l.n_here = 1_000_000;
        l.b_else = -5e9;
        l.share = f64::MAX;
        l.seen = 7;
        // Period 0's garbage gives period 1 a wrong share, (12 + 5e9) / 1e6 = 5000: both
        // flows (at 12) look restricted elsewhere, b_else = 24.
        l.count_and_lower(at_ms(11), 12.0, INF);
        l.count_and_lower(at_ms(12), 12.0, INF);
        assert!((l.share() - 5000.000012).abs() < 1e-6);
        // Period 2: share = 12 - 24 + 12 = 0; both flows (told 0) count as restricted here.
        assert_eq!(l.count_and_lower(at_ms(21), 0.0, INF), 0.0);
        l.count_and_lower(at_ms(22), 0.0, INF);
        // Period 3 is computed from clean sums only: 12 / 2 = 6, the right share.
        l.count_and_lower(at_ms(31), 0.0, INF);
        assert_eq!(l.share(), 6.0);
    }
}
