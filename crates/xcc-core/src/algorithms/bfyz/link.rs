//! BFYZ's link task, **reconstructed**: Bartal, Farach-Colton, Yooseph and Zhang, "Fast, Fair
//! and Frugal Bandwidth Allocation in ATM Networks" (SODA 1999; Algorithmica 33, 2002). Only
//! the abstract could be read: a *frugal* RM-cell protocol, O(1) work per RM cell and O(1)
//! space per session at each link, converging to the max-min fair rates in a linear number of
//! round trips, as fast as Charny-style consistent marking, whose per-cell work is linear in
//! the number of sessions. The marking rule below is the closest reconstruction we could make
//! from that description (docs/algorithms/bfyz.md says what is and is not from the paper).
//!
//! Consistent marking (Charny) keeps, per session, the rate it was last seen at and a mark
//! "restricted elsewhere"; the link advertises `mu = (C - sum of marked rates) / #unmarked`,
//! and after each update re-marks *every* session (O(n)). The frugal version re-marks only the
//! session whose RM cell is being processed, in both directions of the cell, as Charny's
//! algorithm processes every RM cell "both in forward and reverse directions":
//!
//! ```text
//! on the RM cell of session s carrying (CCR, ER), downstream:
//!   take s out of the aggregates (N_u or S_m) if it was known, else N += 1
//!   mu_s = (C - S_m) / (N_u + 1)          s's share if it were restricted here
//!   mu_s = max(mu_s, C / N)               (option, on by default) a share never below C/N
//!   if 0 < CCR < mu_s: s is marked (restricted elsewhere): S_m += CCR
//!   else:              s is unmarked (restricted here, or new and wanting a share): N_u += 1
//!   record CCR for s;  ER = min(ER, mu_s)
//! on the same cell coming back upstream (if the link knows s):
//!   the same update with CCR := ER (the rate s will send at), and ER = min(ER, mu_s)
//! on Close(s): N -= 1 and take s out of the aggregates
//! ```
//!
//! The way back re-marks the session by the rate it is about to get (one round trip before its
//! CCR would show it) and lowers that rate to the link's share *as it is when the cell comes
//! back*. The second part is what keeps mass arrivals in check: a share handed out on the way
//! down is stale by the time the cell returns if other sessions joined the link meanwhile (the
//! k-th of n sessions arriving together is offered C/k on the way down, C/n on the way back;
//! without the second stamp a link hands out C (1 + 1/2 + ... + 1/n) in all, and the queues this
//! builds hold back every later RM cell). SLBN's ProbeAck recomputes its share on the way up for
//! the same reason (seed 004, Fig. 2 lines 27-39). docs/algorithms/bfyz.md has the measurements;
//! [`BfyzReturnPass`] keeps the earlier variants (no return pass; marking only) for comparison.
//!
//! At the max-min point every session bottlenecked at the link has `CCR = mu_s`, every other
//! `CCR < mu_s`, so nothing moves; marking at equality is value-neutral (a session marked with
//! `CCR = mu` leaves `mu` unchanged), so floating-point ties do not matter. The `C/N` floor is
//! the lower bound SLBN also uses (seed 004, Section III): the level of any bottleneck is at
//! least `C/N`, so the floor cannot hold a session below its max-min rate at the fixed point;
//! it only keeps stale marks from advertising less than that during transients. A session
//! without a rate yet (`CCR = 0`, its first RM cell) counts as unmarked: it will want a share,
//! and marking it at rate 0 would offer the others its bandwidth too (a burst of arrivals
//! would be told the whole link each).

use crate::session::rm_cell::{RmCell, RmKind};
use crate::session::session_table::SessionTable;
use crate::session::{Direction, Forward, Hop, LinkTask};
use crate::time::Time;
use serde::{Deserialize, Serialize};

/// BFYZ's link parameters.
#[derive(Copy, Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct BfyzConfig {
    /// Never advertise less than C / N (see the module comment).
    pub floor_c_over_n: bool,
    /// What the link does with a cell on its way back to the source.
    pub return_pass: BfyzReturnPass,
}

/// The backward pass of an RM cell at a link (module docs).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BfyzReturnPass {
    /// Nothing: links act on forward cells only.
    Ignore,
    /// Re-mark the session by the explicit rate the cell brings back; the rate is not lowered.
    Mark,
    /// Re-mark it and lower the explicit rate to the link's current share (the default).
    MarkAndStamp,
}

impl Default for BfyzConfig {
    fn default() -> Self {
        BfyzConfig { floor_c_over_n: true, return_pass: BfyzReturnPass::MarkAndStamp }
    }
}

/// What a link keeps per session: the rate it was last seen at and its mark.
#[derive(Copy, Clone, Debug, PartialEq)]
struct SessionMark {
    rate: f64,
    restricted_elsewhere: bool,
}

/// One output link's BFYZ state.
#[derive(Clone, Debug)]
pub struct BfyzLink {
    cfg: BfyzConfig,
    capacity: f64,
    /// Sum of the recorded rates of marked sessions (S_m).
    sum_marked: f64,
    /// Unmarked sessions (N_u).
    unmarked: u32,
    sessions: SessionTable<SessionMark>,
}

impl BfyzLink {
    /// BFYZ on a link of `capacity_bps`.
    pub fn new(cfg: BfyzConfig, capacity_bps: f64) -> BfyzLink {
        BfyzLink { cfg, capacity: capacity_bps, sum_marked: 0.0, unmarked: 0, sessions: SessionTable::default() }
    }

    /// Processes the RM cell of `session` carrying its current rate `ccr` and the explicit rate
    /// `er` so far; returns the explicit rate the cell leaves with.
    pub fn on_rm(&mut self, session: u32, ccr: f64, er: f64) -> f64 {
        if let Some(old) = self.sessions.get(&session).copied() {
            self.withdraw(old);
        }
        let n = self.sessions.len() as u32 + u32::from(!self.sessions.contains_key(&session));
        let mut share = (self.capacity - self.sum_marked) / (self.unmarked + 1) as f64;
        if self.cfg.floor_c_over_n {
            share = share.max(self.capacity / n as f64);
        }
        let share = share.max(0.0);
        let restricted_elsewhere = ccr > 0.0 && ccr < share;
        if restricted_elsewhere {
            self.sum_marked += ccr;
        } else {
            self.unmarked += 1;
        }
        self.sessions.insert(session, SessionMark { rate: ccr, restricted_elsewhere });
        er.min(share)
    }

    /// The session left: its state and its part of the aggregates go.
    pub fn on_leave(&mut self, session: u32) {
        if let Some(old) = self.sessions.remove(&session) {
            self.withdraw(old);
        }
        if self.sessions.is_empty() {
            // Nothing is left to account for: drop the rounding residue of the sums.
            self.sum_marked = 0.0;
        }
    }

    fn withdraw(&mut self, old: SessionMark) {
        if old.restricted_elsewhere {
            self.sum_marked -= old.rate;
        } else {
            self.unmarked -= 1;
        }
    }

    /// The share a new unmarked session would get now (for traces).
    pub fn advertised_rate(&self) -> f64 {
        let n = (self.sessions.len() as u32).max(1);
        let mut share = (self.capacity - self.sum_marked) / self.unmarked.max(1) as f64;
        if self.cfg.floor_c_over_n {
            share = share.max(self.capacity / n as f64);
        }
        share.max(0.0)
    }

    /// Sessions with state at this link (N).
    pub fn sessions(&self) -> usize {
        self.sessions.len()
    }

    /// Unmarked sessions (N_u) and the sum of marked rates (S_m), for tests and traces.
    pub fn aggregates(&self) -> (u32, f64) {
        (self.unmarked, self.sum_marked)
    }
}

impl LinkTask for BfyzLink {
    type Packet = RmCell;

    /// Forward cells are marked by their CCR and stamped; backward cells as
    /// [`BfyzConfig::return_pass`] says, by the ER they carry home.
    fn on_packet(&mut self, _now: Time, hop: Hop, cell: &mut RmCell) -> Forward {
        match (cell.kind, hop.dir) {
            (RmKind::Rm, Direction::Downstream) => cell.er = self.on_rm(hop.session, cell.ccr, cell.er),
            // Only a session the link knows: a cell still coming back after the session's
            // Close went down must not bring its state back.
            (RmKind::Rm, Direction::Upstream) if self.sessions.contains_key(&hop.session) => {
                match self.cfg.return_pass {
                    BfyzReturnPass::Ignore => {}
                    BfyzReturnPass::Mark => {
                        self.on_rm(hop.session, cell.er, f64::INFINITY);
                    }
                    BfyzReturnPass::MarkAndStamp => cell.er = self.on_rm(hop.session, cell.er, cell.er),
                }
            }
            (RmKind::Rm, Direction::Upstream) => {}
            (RmKind::Close, _) => self.on_leave(hop.session),
        }
        Forward::Pass
    }

    /// The aggregates agree with the table: N_u counts the unmarked sessions, S_m sums the
    /// marked rates (up to rounding).
    fn check(&self) -> Result<(), String> {
        let unmarked = self.sessions.values().filter(|m| !m.restricted_elsewhere).count() as u32;
        let sum: f64 = self.sessions.values().filter(|m| m.restricted_elsewhere).map(|m| m.rate).sum();
        if unmarked != self.unmarked || (sum - self.sum_marked).abs() > 1e-6 * self.capacity.max(sum) {
            return Err(format!(
                "BFYZ link: N_u = {} and S_m = {} but the table holds {unmarked} unmarked sessions and {sum} marked",
                self.unmarked, self.sum_marked
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const INF: f64 = f64::INFINITY;

    /// Single link C = 12, three greedy sessions joining (CCR 0, hand computation):
    /// s1: N = 1, mu = 12/1 = 12; new, so unmarked (N_u 1). ER 12.
    /// s2: N = 2, mu = 12/(1 + 1) = 6, unmarked (N_u 2). ER 6.
    /// s3: N = 3, mu = 12/3 = 4, unmarked (N_u 3). ER 4.
    /// Second round at CCR 12, 6, 4: each is taken out (N_u 2) and put back: mu = 12/3 = 4.
    #[test]
    fn single_link_hand_computed_rounds() {
        let mut l = BfyzLink::new(BfyzConfig::default(), 12.0);
        assert_eq!(l.on_rm(1, 0.0, INF), 12.0);
        assert_eq!(l.on_rm(2, 0.0, INF), 6.0);
        assert_eq!(l.on_rm(3, 0.0, INF), 4.0);
        assert_eq!(l.aggregates(), (3, 0.0));
        assert_eq!(l.on_rm(1, 12.0, INF), 4.0);
        assert_eq!(l.on_rm(2, 6.0, INF), 4.0);
        assert_eq!(l.on_rm(3, 4.0, INF), 4.0);
        assert_eq!(l.aggregates(), (3, 0.0));
        // Converged: each at 4 stays at 4; a smaller ER in the cell is kept.
        for s in 1..=3 {
            assert_eq!(l.on_rm(s, 4.0, INF), 4.0);
        }
        assert_eq!(l.on_rm(2, 4.0, 3.0), 3.0);
    }

    /// A session restricted elsewhere (rate 2) is marked; the other two share 12 - 2 = 10.
    /// From all three unmarked at 4 (hand computation of the first three cells), then rounds
    /// in which each source adopts the ER it was given (s3 held to 2 elsewhere).
    #[test]
    fn restricted_elsewhere_session_is_marked_and_others_share_the_rest() {
        let mut l = BfyzLink::new(BfyzConfig::default(), 12.0);
        // CCR 12 for all: mu = 12, 12/2 = 6, 12/3 = 4: all unmarked.
        assert_eq!([l.on_rm(1, 12.0, INF), l.on_rm(2, 12.0, INF), l.on_rm(3, 12.0, INF)], [12.0, 6.0, 4.0]);
        assert_eq!(l.aggregates(), (3, 0.0));
        // s3 now at 2: out of N_u (2 left), mu = 12/3 = 4, 2 < 4: marked, S_m = 2.
        assert_eq!(l.on_rm(3, 2.0, INF), 4.0);
        assert_eq!(l.aggregates(), (2, 2.0));
        // s1 at 4: out (N_u 1), mu = (12 - 2)/2 = 5; 4 < 5: marked, S_m = 6.
        assert_eq!(l.on_rm(1, 4.0, INF), 5.0);
        // s2 at 4: out (N_u 0), mu = (12 - 6)/1 = 6; 4 < 6: marked, S_m = 10.
        assert_eq!(l.on_rm(2, 4.0, INF), 6.0);
        let mut rate = [5.0, 6.0, 2.0];
        for _round in 0..4 {
            for (s, r) in rate.iter_mut().enumerate() {
                let er = l.on_rm(s as u32 + 1, *r, INF);
                *r = if s == 2 { er.min(2.0) } else { er };
            }
        }
        assert_eq!(rate, [5.0, 5.0, 2.0]);
        assert_eq!(l.aggregates(), (2, 2.0));
    }

    /// Without the floor, stale marks can advertise less than C/N; with it, never.
    #[test]
    fn the_c_over_n_floor_bounds_transient_shares() {
        let mut with = BfyzLink::new(BfyzConfig::default(), 12.0);
        let mut without =
            BfyzLink::new(BfyzConfig { floor_c_over_n: false, return_pass: BfyzReturnPass::Ignore }, 12.0);
        for l in [&mut with, &mut without] {
            // Two sessions marked at 5 each (stale), then a third arrives.
            l.on_rm(1, 5.0, INF);
            l.on_rm(2, 5.0, INF);
        }
        // without: s1 marked? mu = 12 -> 5 < 12 marked; s2: mu = (12-5)/1 = 7, 5 < 7 marked.
        assert_eq!(without.aggregates(), (0, 10.0));
        assert_eq!(without.on_rm(3, 0.0, INF), 2.0, "(12 - 10)/1");
        assert_eq!(with.on_rm(3, 0.0, INF), 4.0, "max(2, 12/3)");
    }

    /// The backward pass re-marks the session with the ER it brings home: s1 joins (CCR 0,
    /// unmarked), comes back held to 3 elsewhere: out (N_u 0), mu = 12, 3 < 12: marked, S_m 3.
    /// A newcomer is then offered (12 - 3)/1 = 9 at once instead of 12/2 = 6.
    #[test]
    fn returning_cell_marks_the_session_with_its_new_rate() {
        let mut l = BfyzLink::new(BfyzConfig::default(), 12.0);
        let hop = |dir| Hop { session: 1, link: 0, index: 0, path_len: 2, dir };
        let mut cell = RmCell { kind: RmKind::Rm, ccr: 0.0, er: INF };
        l.on_packet(Time::ZERO, hop(Direction::Downstream), &mut cell);
        assert_eq!((cell.er, l.aggregates()), (12.0, (1, 0.0)));
        cell.er = 3.0; // lowered downstream of this link
        l.on_packet(Time::ZERO, hop(Direction::Upstream), &mut cell);
        assert_eq!(cell.er, 3.0, "the share here (12) is above what it brings");
        assert_eq!(l.aggregates(), (0, 3.0));
        assert_eq!(l.on_rm(2, 0.0, INF), 9.0);
        let mut close = RmCell { kind: RmKind::Close, ccr: 0.0, er: 0.0 };
        l.on_packet(Time::ZERO, hop(Direction::Downstream), &mut close);
        assert_eq!(l.aggregates(), (1, 0.0));
        // A cell of s1 still on its way back after the Close: ignored, s1 stays gone.
        let mut late = RmCell { kind: RmKind::Rm, ccr: 3.0, er: 3.0 };
        l.on_packet(Time::ZERO, hop(Direction::Upstream), &mut late);
        assert_eq!((l.sessions(), l.aggregates()), (1, (1, 0.0)));
    }

    /// Mass arrival on one link, C = 12, four greedy sessions whose forward cells all pass
    /// before any comes back (hand computation). Down: s_k is new, unmarked, offered
    /// 12 / k: 12, 6, 4, 3. Back (in the same order), each carrying its offer: s_k out
    /// (N_u 3), mu = 12 / 4 = 3; its ER >= 3, so it stays unmarked and, with the stamp, goes home
    /// with 3. Without it the ERs that come home sum to 12 (1 + 1/2 + 1/3 + 1/4) = 25: a
    /// twofold overload before a single cell has taken the arrivals into account.
    #[test]
    fn mass_arrival_is_stamped_with_the_share_on_the_way_back() {
        let hop = |s, dir| Hop { session: s, link: 0, index: 0, path_len: 1, dir };
        let mut home = Vec::new();
        for pass in [BfyzReturnPass::MarkAndStamp, BfyzReturnPass::Mark, BfyzReturnPass::Ignore] {
            let mut l = BfyzLink::new(BfyzConfig { return_pass: pass, ..BfyzConfig::default() }, 12.0);
            let mut cells: Vec<RmCell> = (1..=4)
                .map(|s| {
                    let mut c = RmCell { kind: RmKind::Rm, ccr: 0.0, er: INF };
                    l.on_packet(Time::ZERO, hop(s, Direction::Downstream), &mut c);
                    c
                })
                .collect();
            assert_eq!(cells.iter().map(|c| c.er).collect::<Vec<_>>(), [12.0, 6.0, 4.0, 3.0]);
            for (s, c) in (1..=4).zip(cells.iter_mut()) {
                l.on_packet(Time::ZERO, hop(s, Direction::Upstream), c);
            }
            home.push(cells.iter().map(|c| c.er).collect::<Vec<_>>());
            assert_eq!(l.sessions(), 4);
        }
        assert_eq!(home[0], [3.0, 3.0, 3.0, 3.0]);
        assert_eq!(home[1], [12.0, 6.0, 4.0, 3.0]);
        assert_eq!(home[1].iter().sum::<f64>(), 25.0);
        assert_eq!(home[2], home[1]);
    }

    #[test]
    fn check_compares_the_aggregates_with_the_table() {
        let mut l = BfyzLink::new(BfyzConfig::default(), 12.0);
        l.on_rm(1, 2.0, INF);
        l.on_rm(2, 12.0, INF);
        assert_eq!(l.check(), Ok(()));
        l.unmarked += 1;
        assert!(l.check().is_err());
        l.unmarked -= 1;
        l.sum_marked += 1.0;
        assert!(l.check().is_err());
    }

    #[test]
    fn leave_withdraws_the_session() {
        let mut l = BfyzLink::new(BfyzConfig::default(), 12.0);
        l.on_rm(1, 2.0, INF); // marked at 2
        l.on_rm(2, 12.0, INF); // unmarked
        assert_eq!(l.aggregates(), (1, 2.0));
        l.on_leave(1);
        assert_eq!(l.aggregates(), (1, 0.0));
        assert_eq!(l.sessions(), 1);
        l.on_leave(2);
        l.on_leave(2); // unknown: nothing happens
        assert_eq!(l.aggregates(), (0, 0.0));
        assert_eq!(l.advertised_rate(), 12.0);
    }
}
