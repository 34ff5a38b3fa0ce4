//! ERICA's switch algorithm (Kalyanaraman, Jain, Fahmy, Goyal, Vandalore, IEEE/ACM ToN 8(1),
//! 2000; ATM Forum 96-1172), one instance per output link, as the OSU page of ERICA+ writes it
//! (atm98-0408, equations (1)-(12)) with a constant `Fraction` = target utilisation `U` (plain
//! ERICA: no queue term).
//!
//! End of each averaging interval:
//!
//! ```text
//! TargetABRCapacity = U * C                                   (1)-(2), no VBR class here
//! z                 = ABR input rate / TargetABRCapacity      (4) overload factor
//! FairShare         = TargetABRCapacity / N_active            (5) N_active: sessions seen
//! MaxAllocPrevious  = MaxAllocCurrent                         (6)
//! MaxAllocCurrent   = FairShare                               (7)
//! ```
//!
//! Forward RM cell of session i: `CCR[i] = CCR in cell`. Backward RM cell of session i:
//!
//! ```text
//! VCShare = CCR[i] / z                                        (8)
//! ER = z > 1 + delta ? max(FairShare, VCShare)                (9)  overload
//!                    : max(MaxAllocPrevious, VCShare)         (10) underload
//! MaxAllocCurrent = max(MaxAllocCurrent, ER)                  (11)
//! if ER > FairShare and CCR[i] < FairShare: ER = FairShare    (12) no sudden jumps
//! ER in cell = min(ER in cell, ER, TargetABRCapacity)
//! ```
//!
//! Refinement from the complete description (96-1172, "one ER per VC per interval"): the
//! explicit rate is computed on the first backward RM cell of a session in an averaging
//! interval and repeated on its later ones in the same interval. Without it a source whose RM
//! cells come faster than the interval compounds `CCR / z` several times on one stale `z`.
//!
//! Per-session state: `CCR[i]` and the ER given in the current interval. Per RM cell: one table lookup and O(1) arithmetic. The ABR
//! input rate is what the driver measured on the link over the interval (data and control, as
//! ABR counts every cell).
//!
//! Decisions where the sources leave room (docs/algorithms/erica.md):
//! - An idle link (`z = 0`) makes `VCShare` infinite; `VCShare` is capped at
//!   `TargetABRCapacity` before it enters (11), so `MaxAllocCurrent` stays finite
//!   (protocols.md 7.7-3).
//! - Before the first interval has ended nothing is measured: `z = 0`, `FairShare = U C`, and
//!   no allocation has been given yet (`MaxAllocPrevious = MaxAllocCurrent = 0`).
//! - `N_active` is the number of sessions with state at the link (at least 1): the session
//!   driver moves data as a fluid, so every session present sends cells in every interval;
//!   a session's state is created by its first RM cell and removed by its Close cell.
//! - The ER is computed on the backward RM cell at the forward link's state (the driver hands
//!   the upstream pass to the forward link), as the algorithm specifies.

use crate::session::rm_cell::{RmCell, RmKind};
use crate::session::session_table::SessionTable;
use crate::session::{Direction, Forward, Hop, LinkLoad, LinkTask};
use crate::time::{Dur, Time};
use serde::{Deserialize, Serialize};

/// ERICA's switch parameters.
#[derive(Copy, Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct EricaConfig {
    /// Target utilisation U (`Fraction`): the share of the link ERICA hands out (0.9 typical).
    pub target_utilisation: f64,
    /// Width of the band above z = 1 still treated as underload (delta, 0.1 typical).
    pub delta: f64,
    /// Averaging interval, milliseconds.
    pub interval_ms: f64,
    /// Equation (12): a session below FairShare is raised to at most FairShare at once.
    pub limit_jumps: bool,
}

impl Default for EricaConfig {
    /// delta = 0.1 and a 5 ms interval (protocols.md 7.6; seed 004 does not state its
    /// settings). U = 1: seed 004 scores every protocol against the max-min rates of the full
    /// capacity and finds ERICA "a little bit over the exact rate", which only U close to 1
    /// produces (U = 0.9 would sit 10 % below). Experiments may set 0.9 (protocols.md 7.6).
    fn default() -> Self {
        EricaConfig { target_utilisation: 1.0, delta: 0.1, interval_ms: 5.0, limit_jumps: true }
    }
}

/// One output link's ERICA state.
#[derive(Clone, Debug)]
pub struct EricaLink {
    cfg: EricaConfig,
    /// U C in bit/s.
    target: f64,
    interval: Dur,
    z: f64,
    fair_share: f64,
    max_alloc_previous: f64,
    max_alloc_current: f64,
    /// Averaging intervals ended so far.
    intervals: u32,
    /// The per-session state.
    vcs: SessionTable<Vc>,
}

/// What the link keeps per session.
#[derive(Copy, Clone, Debug, Default)]
struct Vc {
    /// Current cell rate from the last forward RM cell, bit/s.
    ccr: f64,
    /// The ER computed in interval `er_interval` (valid when `er_interval == intervals + 1`).
    er: f64,
    er_interval: u32,
}

impl EricaLink {
    /// ERICA on a link of `capacity_bps`.
    pub fn new(cfg: EricaConfig, capacity_bps: f64) -> EricaLink {
        let target = cfg.target_utilisation * capacity_bps;
        EricaLink {
            cfg,
            target,
            interval: Dur::from_secs_f64(cfg.interval_ms * 1e-3),
            z: 0.0,
            fair_share: target,
            max_alloc_previous: 0.0,
            max_alloc_current: 0.0,
            intervals: 0,
            vcs: SessionTable::default(),
        }
    }

    /// A forward RM cell: remember the session's current cell rate.
    pub fn on_forward_rm(&mut self, session: u32, ccr: f64) {
        self.vcs.entry(session).or_default().ccr = ccr;
    }

    /// A backward RM cell carrying `er_in_cell`: returns the explicit rate it leaves with.
    pub fn on_backward_rm(&mut self, session: u32, er_in_cell: f64) -> f64 {
        let stamp = self.intervals + 1;
        // A session without state (a cell coming back after its Close passed) gets the answer
        // of a session at CCR 0 and is not recorded.
        let vc = self.vcs.get(&session).copied().unwrap_or_default();
        if vc.er_interval == stamp {
            return er_in_cell.min(vc.er);
        }
        let ccr = vc.ccr;
        let vc_share = if self.z > 0.0 { (ccr / self.z).min(self.target) } else { self.target };
        let mut er = if self.z > 1.0 + self.cfg.delta {
            self.fair_share.max(vc_share)
        } else {
            self.max_alloc_previous.max(vc_share)
        };
        self.max_alloc_current = self.max_alloc_current.max(er);
        if self.cfg.limit_jumps && er > self.fair_share && ccr < self.fair_share {
            er = self.fair_share;
        }
        let er = er.min(self.target);
        if let Some(v) = self.vcs.get_mut(&session) {
            v.er = er;
            v.er_interval = stamp;
        }
        er_in_cell.min(er)
    }

    /// The session left: its per-session state goes.
    pub fn on_leave(&mut self, session: u32) {
        self.vcs.remove(&session);
    }

    /// End of an averaging interval in which the ABR input rate was `input_rate` bit/s:
    /// equations (1)-(7).
    pub fn end_interval(&mut self, input_rate: f64) {
        self.z = if self.target > 0.0 { input_rate / self.target } else { f64::INFINITY };
        self.fair_share = self.target / self.vcs.len().max(1) as f64;
        self.max_alloc_previous = self.max_alloc_current;
        self.max_alloc_current = self.fair_share;
        self.intervals += 1;
    }

    /// Load factor z of the last interval.
    pub fn load_factor(&self) -> f64 {
        self.z
    }

    /// FairShare of the last interval, bit/s.
    pub fn fair_share(&self) -> f64 {
        self.fair_share
    }

    /// Sessions with state at this link.
    pub fn sessions(&self) -> usize {
        self.vcs.len()
    }
}

impl LinkTask for EricaLink {
    type Packet = RmCell;

    fn on_packet(&mut self, _now: Time, hop: Hop, cell: &mut RmCell) -> Forward {
        match (cell.kind, hop.dir) {
            (RmKind::Rm, Direction::Downstream) => self.on_forward_rm(hop.session, cell.ccr),
            (RmKind::Rm, Direction::Upstream) => cell.er = self.on_backward_rm(hop.session, cell.er),
            (RmKind::Close, _) => self.on_leave(hop.session),
        }
        Forward::Pass
    }

    fn tick_interval(&self) -> Option<Dur> {
        Some(self.interval)
    }

    fn on_tick(&mut self, _now: Time, load: &LinkLoad) {
        self.end_interval(load.input_rate);
    }

    /// Allocations are finite and non-negative (VCShare is capped before it enters them).
    fn check(&self) -> Result<(), String> {
        let ok = |x: f64| x.is_finite() && x >= 0.0;
        if !(ok(self.fair_share) && ok(self.max_alloc_previous) && ok(self.max_alloc_current)) {
            return Err(format!(
                "ERICA link: FairShare {}, MaxAllocPrevious {}, MaxAllocCurrent {}",
                self.fair_share, self.max_alloc_previous, self.max_alloc_current
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const C: f64 = 100e6;

    /// U = 0.9 so that the target (90 Mb/s) differs from the capacity in the hand computations.
    fn link(limit_jumps: bool) -> EricaLink {
        let cfg = EricaConfig { target_utilisation: 0.9, limit_jumps, ..EricaConfig::default() };
        EricaLink::new(cfg, C)
    }

    /// Before any measurement (z = 0) the link offers its whole target capacity U C = 90 Mb/s.
    #[test]
    fn unmeasured_link_offers_the_target_capacity() {
        let mut l = link(true);
        l.on_forward_rm(1, 0.0);
        assert_eq!(l.on_backward_rm(1, 1e9), 90e6);
        assert_eq!(l.on_backward_rm(1, 10e6), 10e6, "a smaller ER in the cell stays");
    }

    /// Two sessions at 60 and 30 Mb/s on 100 Mb/s, U = 0.9: input 90 = target, z = 1;
    /// FairShare = 90/2 = 45; underload branch: ER = max(MaxAllocPrevious, CCR/z).
    /// First interval: MaxAllocPrevious = 0, so ER = CCR: 60 and 30, and MaxAllocCurrent
    /// becomes 60. Second interval: ER = max(60, 30) = 60 for the slow session, but (12) holds
    /// it at FairShare 45 because its CCR is below FairShare.
    #[test]
    fn hand_computed_interval_underload() {
        let mut l = link(true);
        l.on_forward_rm(1, 60e6);
        l.on_forward_rm(2, 30e6);
        l.end_interval(90e6);
        assert!((l.load_factor() - 1.0).abs() < 1e-12, "z = 90/90");
        assert_eq!(l.fair_share(), 45e6);
        assert!((l.on_backward_rm(1, 1e9) - 60e6).abs() < 1e-6);
        assert!((l.on_backward_rm(2, 1e9) - 30e6).abs() < 1e-6);
        l.end_interval(90e6);
        assert_eq!(l.on_backward_rm(2, 1e9), 45e6, "(12): CCR 30 < FairShare 45");
    }

    /// Overload: 120 + 60 Mb/s on a 90 Mb/s target: z = 2 > 1.1; VCShare 60 and 30,
    /// FairShare 45: ER = 60 and 45: the larger is cut in proportion, the smaller raised to
    /// FairShare.
    #[test]
    fn hand_computed_interval_overload() {
        let mut l = link(true);
        l.on_forward_rm(1, 120e6);
        l.on_forward_rm(2, 60e6);
        l.end_interval(180e6);
        assert!((l.load_factor() - 2.0).abs() < 1e-12);
        assert!((l.on_backward_rm(1, 1e9) - 60e6).abs() < 1e-6);
        assert!((l.on_backward_rm(2, 1e9) - 45e6).abs() < 1e-6);
    }

    /// Equation (10) without (12): in underload a session below the others is raised to the
    /// largest allocation of the previous interval at once (what makes ERICA max-min fair).
    #[test]
    fn underload_raises_to_max_alloc_previous() {
        let mut l = link(false);
        l.on_forward_rm(1, 50e6);
        l.on_forward_rm(2, 10e6);
        l.end_interval(60e6);
        // z = 60/90; VCShare = CCR/z = 75 and 15; MaxAllocPrevious = 0 (nothing given yet).
        assert!((l.on_backward_rm(1, 1e9) - 75e6).abs() < 1e-6);
        assert!((l.on_backward_rm(2, 1e9) - 15e6).abs() < 1e-6);
        l.end_interval(60e6);
        // MaxAllocCurrent of the last interval was max(FairShare 45, 75, 15) = 75.
        assert!((l.on_backward_rm(2, 1e9) - 75e6).abs() < 1e-6);
    }

    /// N_active is the number of sessions with state; Close removes one; an empty interval
    /// gives z = 0 and FairShare = U C.
    #[test]
    fn active_sessions_and_close() {
        let mut l = link(true);
        let hop = |s, dir| Hop { session: s, link: 0, index: 0, path_len: 1, dir };
        for s in 0..3 {
            let mut c = RmCell { kind: RmKind::Rm, ccr: 10e6, er: f64::INFINITY };
            assert_eq!(l.on_packet(Time::ZERO, hop(s, Direction::Downstream), &mut c), Forward::Pass);
        }
        l.on_tick(Time::ZERO, &LinkLoad { input_rate: 30e6, queue_bits: 0.0, interval: Dur::from_ms(5) });
        assert_eq!(l.fair_share(), 30e6);
        let mut close = RmCell { kind: RmKind::Close, ccr: 0.0, er: 0.0 };
        l.on_packet(Time::ZERO, hop(1, Direction::Downstream), &mut close);
        assert_eq!(l.sessions(), 2);
        l.end_interval(0.0);
        assert_eq!(l.fair_share(), 45e6);
        assert_eq!(l.load_factor(), 0.0);
        // The backward pass writes the ER into the cell: z = 0 -> VCShare capped at U C;
        // MaxAllocPrevious 30 -> ER = 90; (12): CCR 10 < FairShare 45 -> 45.
        let mut c = RmCell { kind: RmKind::Rm, ccr: 10e6, er: f64::INFINITY };
        l.on_packet(Time::ZERO, hop(0, Direction::Upstream), &mut c);
        assert_eq!(c.er, 45e6);
        assert_eq!(l.tick_interval(), Some(Dur::from_ms(5)));
        // A late backward cell of the closed session 1 does not bring its state back.
        let mut late = RmCell { kind: RmKind::Rm, ccr: 10e6, er: f64::INFINITY };
        l.on_packet(Time::ZERO, hop(1, Direction::Upstream), &mut late);
        assert_eq!(l.sessions(), 2);
    }

    /// One ER per session per interval: a second backward RM cell in the same interval gets
    /// the ER of the first even though the CCR rose meanwhile (z = 0.5: 40 / 0.5 = 80, not
    /// 80 / 0.5 capped at 90); the next interval computes afresh.
    #[test]
    fn one_er_per_session_per_interval() {
        let mut l = link(false);
        l.on_forward_rm(1, 40e6);
        l.end_interval(45e6);
        assert!((l.on_backward_rm(1, 1e9) - 80e6).abs() < 1e-6);
        l.on_forward_rm(1, 80e6);
        assert!((l.on_backward_rm(1, 1e9) - 80e6).abs() < 1e-6);
        l.end_interval(45e6);
        assert_eq!(l.on_backward_rm(1, 1e9), 90e6, "80 / 0.5 = 160, capped at U C");
    }
}
