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
//! Per-session state: `CCR[i]` and the interval in which the session was last seen (to count
//! `N_active`). Per packet (data included): one addition and one table lookup; per backward RM
//! cell O(1). The input rate counts every packet on the link (data and control), as ABR
//! counts every cell.
//!
//! Decisions where the sources leave room (docs/algorithms/erica.md):
//! - An idle link (`z = 0`) makes `VCShare` infinite; `VCShare` is capped at
//!   `TargetABRCapacity` before it enters (11), so `MaxAllocCurrent` stays finite
//!   (protocols.md 7.7-3).
//! - Before the first interval has ended nothing is measured: `z = 0`, `FairShare = U C`, and
//!   no allocation has been given yet (`MaxAllocPrevious = MaxAllocCurrent = 0`).
//! - `N_active` counts sessions that sent any packet in the interval, and is at least 1.

use crate::link::session_table::SessionTable;
use crate::time::{Dur, Time};

/// ERICA's parameters.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct EricaConfig {
    /// Target utilisation U (`Fraction`): the share of the link ERICA hands out (0.9 typical).
    pub target_utilisation: f64,
    /// Width of the band above z = 1 still treated as underload (delta, 0.1 typical).
    pub delta: f64,
    /// Averaging interval.
    pub interval: Dur,
    /// Equation (12): a session below FairShare is raised to at most FairShare at once.
    pub limit_jumps: bool,
}

impl Default for EricaConfig {
    /// protocols.md 7.6: U = 0.9, delta = 0.1; a 5 ms interval holds a few packets of every
    /// session at WAN rates (the seed does not state its settings).
    fn default() -> Self {
        EricaConfig { target_utilisation: 0.9, delta: 0.1, interval: Dur::from_ms(5), limit_jumps: true }
    }
}

/// What a link keeps per session.
#[derive(Copy, Clone, Debug, Default)]
struct VcState {
    /// Current cell rate from the last forward RM cell, bit/s.
    ccr: f64,
    /// Averaging interval in which the session was last counted as active (+1; 0 = never).
    seen_in: u64,
}

/// One output link's ERICA state.
#[derive(Clone, Debug)]
pub struct EricaLink {
    cfg: EricaConfig,
    /// U C in bit/s.
    target: f64,
    /// Averaging intervals started so far (the current one's number).
    interval_no: u64,
    interval_end: Time,
    /// Bits that arrived in the current interval.
    input_bits: f64,
    /// Sessions seen in the current interval.
    active_now: u32,
    z: f64,
    fair_share: f64,
    max_alloc_previous: f64,
    max_alloc_current: f64,
    vcs: SessionTable<VcState>,
}

impl EricaLink {
    /// ERICA on a link of `capacity_bps`; the first interval ends at `start + interval`.
    pub fn new(cfg: EricaConfig, capacity_bps: f64, start: Time) -> EricaLink {
        let target = cfg.target_utilisation * capacity_bps;
        EricaLink {
            cfg,
            target,
            interval_no: 1,
            interval_end: start + cfg.interval,
            input_bits: 0.0,
            active_now: 0,
            z: 0.0,
            fair_share: target,
            max_alloc_previous: 0.0,
            max_alloc_current: 0.0,
            vcs: SessionTable::default(),
        }
    }

    /// Any packet of `session` (data or control) of `bytes` arrives: input rate and activity.
    #[inline]
    pub fn on_packet(&mut self, session: u32, bytes: u32) {
        self.input_bits += 8.0 * bytes as f64;
        let vc = self.vcs.entry(session).or_default();
        if vc.seen_in != self.interval_no {
            vc.seen_in = self.interval_no;
            self.active_now += 1;
        }
    }

    /// A forward RM cell: remember the session's current cell rate.
    pub fn on_forward_rm(&mut self, session: u32, ccr: f64) {
        self.vcs.entry(session).or_default().ccr = ccr;
    }

    /// A backward RM cell carrying `er_in_cell`: returns the explicit rate it leaves with.
    pub fn on_backward_rm(&mut self, session: u32, er_in_cell: f64) -> f64 {
        let ccr = self.vcs.get(&session).map_or(0.0, |v| v.ccr);
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
        er_in_cell.min(er).min(self.target)
    }

    /// The session left: its per-session state goes.
    pub fn on_leave(&mut self, session: u32) {
        self.vcs.remove(&session);
    }

    /// End of the current averaging interval.
    pub fn poll_timeout(&self) -> Option<Time> {
        Some(self.interval_end)
    }

    /// Closes the averaging interval due at or before `now` (early calls do nothing).
    pub fn on_timeout(&mut self, now: Time) {
        if now < self.interval_end {
            return;
        }
        let input_rate = self.input_bits / self.cfg.interval.as_secs_f64();
        self.z = if self.target > 0.0 { input_rate / self.target } else { f64::INFINITY };
        self.fair_share = self.target / self.active_now.max(1) as f64;
        self.max_alloc_previous = self.max_alloc_current;
        self.max_alloc_current = self.fair_share;
        self.input_bits = 0.0;
        self.active_now = 0;
        self.interval_no += 1;
        self.interval_end += self.cfg.interval;
        if self.interval_end <= now {
            // Woken late (the driver never should): resynchronise rather than loop.
            self.interval_end = now + self.cfg.interval;
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    const C: f64 = 100e6;

    fn link(limit_jumps: bool) -> EricaLink {
        let cfg = EricaConfig { interval: Dur::from_ms(10), limit_jumps, ..EricaConfig::default() };
        EricaLink::new(cfg, C, Time::ZERO)
    }

    /// Feeds `rate` bit/s of session `s` for one 10 ms interval as 1250-byte packets.
    fn feed(l: &mut EricaLink, s: u32, rate: f64) {
        let packets = (rate * 0.010 / 8.0 / 1250.0).round() as u32;
        for _ in 0..packets {
            l.on_packet(s, 1250);
        }
    }

    /// Before any measurement the link offers its whole target capacity, U C = 90 Mb/s, and a
    /// new session (CCR 0 < FairShare = 90) is held at FairShare by equation (12).
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
        feed(&mut l, 1, 60e6);
        feed(&mut l, 2, 30e6);
        l.on_forward_rm(1, 60e6);
        l.on_forward_rm(2, 30e6);
        l.on_timeout(Time::ZERO + Dur::from_ms(10));
        assert!((l.load_factor() - 1.0).abs() < 1e-12, "z = 90/90");
        assert_eq!(l.fair_share(), 45e6);
        assert!((l.on_backward_rm(1, 1e9) - 60e6).abs() < 1e-6);
        assert!((l.on_backward_rm(2, 1e9) - 30e6).abs() < 1e-6);
        feed(&mut l, 1, 60e6);
        feed(&mut l, 2, 30e6);
        l.on_timeout(Time::ZERO + Dur::from_ms(20));
        assert_eq!(l.on_backward_rm(2, 1e9), 45e6, "(12): CCR 30 < FairShare 45");
    }

    /// Overload: 90 + 90 Mb/s on a 90 Mb/s target: z = 2 > 1.1; FairShare 45, VCShare 90/2
    /// = 45: ER = max(45, 45) = 45. With 120 and 60: z = 2, VCShare 60 and 30, FairShare 45:
    /// ER = 60 and 45: the larger one is cut in proportion, the smaller raised to FairShare.
    #[test]
    fn hand_computed_interval_overload() {
        let mut l = link(true);
        feed(&mut l, 1, 120e6);
        feed(&mut l, 2, 60e6);
        l.on_forward_rm(1, 120e6);
        l.on_forward_rm(2, 60e6);
        l.on_timeout(Time::ZERO + Dur::from_ms(10));
        assert!((l.load_factor() - 2.0).abs() < 1e-12);
        assert!((l.on_backward_rm(1, 1e9) - 60e6).abs() < 1e-6);
        assert!((l.on_backward_rm(2, 1e9) - 45e6).abs() < 1e-6);
    }

    /// Equation (10) without (12): in underload a session below the others is raised to the
    /// largest allocation of the previous interval at once (that is what makes ERICA max-min).
    #[test]
    fn underload_raises_to_max_alloc_previous() {
        let mut l = link(false);
        feed(&mut l, 1, 50e6);
        feed(&mut l, 2, 10e6);
        l.on_forward_rm(1, 50e6);
        l.on_forward_rm(2, 10e6);
        l.on_timeout(Time::ZERO + Dur::from_ms(10));
        // z = 60/90; VCShare = CCR/z = 75 and 15; MaxAllocPrevious = 0 (nothing given yet).
        assert!((l.on_backward_rm(1, 1e9) - 75e6).abs() < 1e-6);
        assert!((l.on_backward_rm(2, 1e9) - 15e6).abs() < 1e-6);
        feed(&mut l, 1, 50e6);
        feed(&mut l, 2, 10e6);
        l.on_timeout(Time::ZERO + Dur::from_ms(20));
        // MaxAllocCurrent of the last interval was max(FairShare 45, 75, 15) = 75.
        assert!((l.on_backward_rm(2, 1e9) - 75e6).abs() < 1e-6);
    }

    /// N_active counts sessions seen in the interval, not sessions with state.
    #[test]
    fn active_sessions_are_counted_per_interval() {
        let mut l = link(true);
        for s in 0..3 {
            feed(&mut l, s, 10e6);
        }
        l.on_timeout(Time::ZERO + Dur::from_ms(10));
        assert_eq!(l.fair_share(), 30e6);
        feed(&mut l, 0, 10e6);
        l.on_timeout(Time::ZERO + Dur::from_ms(20));
        assert_eq!(l.fair_share(), 90e6);
        assert_eq!(l.sessions(), 3);
        l.on_leave(1);
        assert_eq!(l.sessions(), 2);
        // An empty interval: z = 0 and N_active floored at 1.
        l.on_timeout(Time::ZERO + Dur::from_ms(30));
        assert_eq!(l.load_factor(), 0.0);
        assert_eq!(l.fair_share(), 90e6);
    }

    #[test]
    fn early_timeout_does_nothing() {
        let mut l = link(true);
        feed(&mut l, 1, 90e6);
        l.on_timeout(Time::ZERO + Dur::from_ms(9));
        assert_eq!(l.load_factor(), 0.0);
        assert_eq!(l.poll_timeout(), Some(Time::ZERO + Dur::from_ms(10)));
    }
}
