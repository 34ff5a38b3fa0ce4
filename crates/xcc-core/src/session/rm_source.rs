//! The ABR source end system shared by ERICA and BFYZ (ATM TM 4.0, simplified as protocols.md
//! 7.5 allows for these comparisons): the allowed cell rate `ACR` is `min(ER, demand)` from the
//! latest backward RM cell; RM cells go out in proportion to the data, here within the
//! session's control budget (about 1 % of its rate, seed 004), each carrying `CCR = ACR` and
//! `ER = demand` (the PCR). The budget pays for both cells of an RM cell's round trip: the
//! forward cell and the backward cell the destination turns it into (which queues on the
//! reverse path), as SLBN's budget pays for a Probe and its ProbeAck. Counting the forward cell
//! alone let a converged bottleneck carry 99 % data, 1 % forward cells and the backward cells
//! of the sessions going the other way: its queue then grew for as long as a run lasted. With `closed_loop` (an option; the papers' RM cells are a constant
//! fraction of the cells) one cell is in flight at a time, the next leaving when it is back and
//! the budget allows, like SLBN's Probe cycles.
//! Before the first answer the source has no rate and sends no data;
//! its first RM cell goes at once and the next only when that one has come back. The same
//! holds whenever ACR is 0 (ERICA may answer 0 in its first averaging interval): with nothing
//! to pace by, one cell at a time is outstanding. On leave a `Close` cell removes the
//! session's state along the path.
//!
//! Not modelled: TM 4.0's additive increase limit `ACR + RIF * PCR` (meaningless for greedy
//! sessions, whose PCR is infinite), CI/NI bits, and the use-it-or-lose-it rules.

use super::budget::ControlBudget;
use super::rm_cell::{RmCell, RmKind};
use super::SourceTask;
use crate::time::Time;
use serde::{Deserialize, Serialize};

/// The parameters of an ABR protocol over [`RmSource`] (ERICA, BFYZ): the switch algorithm's
/// configuration `L` and the sources' RM-cell budget.
#[derive(Copy, Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct AbrParams<L> {
    pub link: L,
    /// RM cells' share of the session's rate (seed 004: about 1 %) and their size.
    pub budget: ControlBudget,
    /// `false` (default, as the papers): RM cells are a constant fraction of the session's cells,
    /// a steady stream at the budget's pace, many per round trip. `true`: one RM cell in flight
    /// (the next when it is back, within the budget), like SLBN's Probe cycles: some 40 times
    /// fewer control packets, for runs at the Large scale, but less accurate under churn
    /// (docs/algorithms/erica.md).
    pub closed_loop: bool,
}

impl<L: Default> Default for AbrParams<L> {
    fn default() -> Self {
        AbrParams {
            link: L::default(),
            budget: ControlBudget { fraction: 0.01, packet_bytes: RmCell::WIRE_BYTES },
            closed_loop: false,
        }
    }
}

/// Cells per RM round trip that the budget pays for (forward and backward).
const CELLS_PER_RM: u32 = 2;

#[derive(Clone, Debug)]
pub struct RmSource {
    /// One RM cell in flight at a time (the next leaves when the last is back and the budget
    /// allows), rather than a steady stream at the budget's pace.
    closed_loop: bool,
    demand: f64,
    /// ACR, bit/s; `None` before the first backward RM cell.
    acr: Option<f64>,
    /// When the next RM cell may leave; `None` while waiting for the first answer.
    next_rm: Option<Time>,
    last_sent: Time,
    budget: ControlBudget,
    /// Leave was called: send Close next.
    closing: bool,
    finished: bool,
}

impl RmSource {
    pub fn new(budget: ControlBudget, closed_loop: bool) -> RmSource {
        RmSource {
            closed_loop,
            demand: f64::INFINITY,
            acr: None,
            next_rm: None,
            last_sent: Time::ZERO,
            budget,
            closing: false,
            finished: false,
        }
    }
}

impl SourceTask for RmSource {
    type Packet = RmCell;

    fn join(&mut self, now: Time, demand: f64) {
        self.demand = demand;
        self.next_rm = Some(now);
    }

    fn leave(&mut self, _now: Time) {
        self.closing = true;
    }

    fn change(&mut self, _now: Time, demand: f64) {
        self.demand = demand;
        if let Some(acr) = self.acr {
            self.acr = Some(acr.min(demand));
        }
    }

    /// A backward RM cell: ACR = min(ER, demand); if the source was waiting for it (no rate
    /// to pace by), the next cell is due as the budget allows.
    fn on_packet(&mut self, now: Time, cell: RmCell) {
        debug_assert_eq!(cell.kind, RmKind::Rm);
        if self.finished {
            return;
        }
        self.acr = Some(cell.er.min(self.demand));
        if self.next_rm.is_none() {
            self.next_rm = Some(self.budget.next_cycle(self.last_sent, self.acr, CELLS_PER_RM).max(now));
        }
    }

    fn poll_transmit(&mut self, now: Time) -> Option<RmCell> {
        if self.finished {
            return None;
        }
        if self.closing {
            self.finished = true;
            return Some(RmCell { kind: RmKind::Close, ccr: 0.0, er: 0.0 });
        }
        match self.next_rm {
            Some(t) if t <= now => {
                self.last_sent = now;
                // Paced by the budget while there is a rate; without one, wait for the answer.
                self.next_rm = match self.acr {
                    Some(r) if r > 0.0 && !self.closed_loop => {
                        Some(self.budget.next_cycle(now, self.acr, CELLS_PER_RM))
                    }
                    _ => None,
                };
                Some(RmCell { kind: RmKind::Rm, ccr: self.acr.unwrap_or(0.0), er: self.demand })
            }
            _ => None,
        }
    }

    fn next_wakeup(&self) -> Option<Time> {
        if self.finished {
            None
        } else if self.closing {
            Some(self.last_sent)
        } else {
            self.next_rm
        }
    }

    fn rate(&self) -> Option<f64> {
        self.acr
    }

    fn is_finished(&self) -> bool {
        self.finished
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Dur;

    fn ms(n: u64) -> Time {
        Time::ZERO + Dur::from_ms(n)
    }

    /// Join sends one RM cell at once (CCR 0, ER = demand) and waits; the answer sets ACR and
    /// starts the budget clock: 53-byte cells, each paying for itself and its backward cell,
    /// at 1 % of 10 Mb/s leave every 2 x 424 bits / 100 kb/s = 8.48 ms.
    #[test]
    fn join_then_paced_rm_cells() {
        let mut s = RmSource::new(ControlBudget { fraction: 0.01, packet_bytes: 53 }, false);
        s.join(ms(0), 50e6);
        assert_eq!(s.rate(), None);
        assert_eq!(s.poll_transmit(ms(0)), Some(RmCell { kind: RmKind::Rm, ccr: 0.0, er: 50e6 }));
        assert_eq!(s.poll_transmit(ms(1)), None);
        assert_eq!(s.next_wakeup(), None, "waits for the first answer");
        s.on_packet(ms(10), RmCell { kind: RmKind::Rm, ccr: 0.0, er: 10e6 });
        assert_eq!(s.rate(), Some(10e6));
        assert_eq!(s.next_wakeup(), Some(ms(10)), "the budget since t = 0 is long paid");
        let c = s.poll_transmit(ms(10)).unwrap();
        assert_eq!((c.ccr, c.er), (10e6, 50e6));
        assert_eq!(s.next_wakeup(), Some(ms(10) + Dur::from_us(8480)));
        // An answer larger than the demand is capped by it.
        s.on_packet(ms(11), RmCell { kind: RmKind::Rm, ccr: 10e6, er: 80e6 });
        assert_eq!(s.rate(), Some(50e6));
    }

    /// Closed loop: one cell in flight; the answer releases the next, within the budget.
    #[test]
    fn closed_loop_waits_for_each_answer() {
        let mut s = RmSource::new(ControlBudget { fraction: 0.01, packet_bytes: 53 }, true);
        s.join(ms(0), f64::INFINITY);
        s.poll_transmit(ms(0));
        s.on_packet(ms(10), RmCell { kind: RmKind::Rm, ccr: 0.0, er: 10e6 });
        assert!(s.poll_transmit(ms(10)).is_some());
        assert_eq!(s.next_wakeup(), None, "waits for the answer, not for the budget");
        s.on_packet(ms(12), RmCell { kind: RmKind::Rm, ccr: 10e6, er: 10e6 });
        assert_eq!(s.next_wakeup(), Some(ms(10) + Dur::from_us(8480)), "then the budget");
    }

    /// An answer of 0 leaves nothing to pace by: one cell outstanding at a time (no flood).
    #[test]
    fn zero_rate_waits_for_each_answer() {
        let mut s = RmSource::new(ControlBudget::default(), false);
        s.join(ms(0), f64::INFINITY);
        s.poll_transmit(ms(0));
        s.on_packet(ms(10), RmCell { kind: RmKind::Rm, ccr: 0.0, er: 0.0 });
        assert_eq!(s.rate(), Some(0.0));
        assert!(s.poll_transmit(ms(10)).is_some());
        assert_eq!(s.poll_transmit(ms(10)), None);
        assert_eq!(s.next_wakeup(), None);
        s.on_packet(ms(20), RmCell { kind: RmKind::Rm, ccr: 0.0, er: 5e6 });
        assert_eq!(s.next_wakeup(), Some(ms(10) + Dur::from_us(20_480)), "2 x 64 B at 1 % of 5 Mb/s after the last");
    }

    #[test]
    fn leave_sends_close_and_finishes() {
        let mut s = RmSource::new(ControlBudget::default(), false);
        s.join(ms(0), f64::INFINITY);
        s.poll_transmit(ms(0));
        s.leave(ms(3));
        assert_eq!(s.next_wakeup(), Some(ms(0)));
        assert_eq!(s.poll_transmit(ms(3)).map(|c| c.kind), Some(RmKind::Close));
        assert!(s.is_finished());
        assert_eq!(s.poll_transmit(ms(4)), None);
        s.on_packet(ms(5), RmCell { kind: RmKind::Rm, ccr: 0.0, er: 1.0 }); // late answer: ignored
    }
}
