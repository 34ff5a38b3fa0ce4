//! RED: Random Early Detection (Floyd & Jacobson 1993, "FJ93"), with the "gentle" variant.
//!
//! RED keeps an exponentially weighted moving average `avg` of the queue length and, once it
//! passes a minimum threshold, drops (or ECN-marks) arriving packets with a probability that grows
//! with `avg`. This file follows protocols.md §11.1, which is FJ93's algorithm (Fig. 2 of the
//! paper) plus Floyd's 2000 "gentle" ramp:
//!
//! ```text
//! on arrival:
//!   link busy:  avg ← (1 − w_q)·avg + w_q·q                       q = waiting packets or bytes
//!   link idle:  avg ← (1 − w_q)^m · avg,  m = idle_time / s        s = tx time of a mean packet
//!   avg < min_th:                      count ← −1, queue
//!   early region (see below):          count ← count + 1
//!                                      pb ← marking_probability(avg)   (· size/mean in byte mode)
//!                                      pa ← pb / (1 − count·pb)        (1 if count·pb ≥ 1)
//!                                      with probability pa: mark/drop, count ← 0
//!   forced region:                     mark/drop every packet, count ← 0
//! ```
//!
//! - Classic: early region `[min_th, max_th)` with `pb = max_p·(avg − min_th)/(max_th − min_th)`;
//!   forced region `avg ≥ max_th`, where ECT packets are marked in [`RedAction::Mark`] mode (as
//!   Linux `sch_red` without `harddrop`) and everything else is dropped.
//! - Gentle: the early region extends to `2·max_th` with
//!   `pb = max_p + (1 − max_p)·(avg − max_th)/max_th`; at `avg ≥ 2·max_th` every packet is
//!   dropped, ECN-capable or not (protocols.md §11.1; ns-2's forced drop).
//!
//! The count rule `pa = pb/(1 − count·pb)` makes the number of packets between two congestion
//! signals uniform on `{1, …, ⌈1/pb⌉ − 1}` instead of geometric (FJ93 §7), so signals are spread
//! evenly instead of arriving in bursts that hit one flow several times.
//!
//! What this implementation deliberately does *not* copy (see docs/algorithms/red.md):
//! ns-2's `wait_` rule and its "no early drop when at most one packet waits" test, Linux's
//! fixed-point arithmetic, and the `count` reset ns-2 performs after a buffer-overflow drop (the
//! driver applies the buffer limit after our verdict and does not report overflow drops back).
//!
//! The algorithm owns no queue and no clock (style.md, habit 1): the driver passes `now` and a
//! [`QueueView`]; randomness comes from the link's own PCG stream (habit 7).

use serde::{Deserialize, Serialize};

use crate::link::{LinkAlgorithm, QueueView, Verdict};
use crate::packet::Packet;
use crate::rng::{self, Pcg64Mcg};
use crate::time::Time;

/// Where the early region ends and what happens above `max_th`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RedVariant {
    /// FJ93: probability ramps from 0 at `min_th` to `max_p` at `max_th`; every packet is
    /// marked or dropped at `avg ≥ max_th`. The setting of seed 001's testbed (Linux `sch_red`
    /// has no gentle mode).
    #[default]
    Classic,
    /// Floyd's "gentle" RED: above `max_th` the probability ramps on linearly from `max_p` to 1
    /// at `2·max_th`, avoiding the jump from `max_p` to 1 that makes classic RED oscillate.
    Gentle,
}

/// What RED does to a packet it selects.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RedAction {
    /// Drop every selected packet, ECN-capable or not.
    #[default]
    Drop,
    /// Set CE on selected ECN-capable packets (RFC 3168 §5); drop selected Not-ECT packets.
    Mark,
}

/// The unit of the queue average and of the thresholds.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RedUnit {
    /// Thresholds and `avg` count waiting packets; every packet has the same probability.
    #[default]
    Packets,
    /// Thresholds and `avg` count waiting bytes; a packet's probability is scaled by
    /// `size / mean_packet_bytes` (FJ93 §4, "byte mode"), so large packets are hit more often.
    Bytes,
}

/// RED's parameters. Thresholds are in the unit given by `unit`.
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RedConfig {
    /// Weight of the newest sample in the queue average, `0 < w_q ≤ 1` (dimensionless).
    pub w_q: f64,
    /// Average queue at which early marking/dropping starts (packets or bytes).
    pub min_th: f64,
    /// Average queue at which the probability reaches `max_p` (packets or bytes).
    pub max_th: f64,
    /// Probability at `avg = max_th`, `0 < max_p ≤ 1`.
    pub max_p: f64,
    /// Whether thresholds count packets or bytes.
    pub unit: RedUnit,
    /// Classic or gentle ramp above `max_th`.
    pub variant: RedVariant,
    /// Drop, or ECN-mark ECT packets.
    pub action: RedAction,
    /// Mean packet size in bytes: sets the idle-decay time step `s` (both units) and the byte
    /// mode's probability scale.
    pub mean_packet_bytes: u32,
}

impl Default for RedConfig {
    /// Seed 001's "RED parameters for web traffic" (from Floyd, Gummadi & Shenker 1999 and
    /// Christiansen et al.): `w_q = 0.002`, `min_th = 30`, `max_th = 90` packets, `max_p = 0.1`,
    /// on a Linux testbed, hence classic RED (Linux `sch_red` has no gentle mode) and dropping
    /// (Reno without ECN). `mean_packet_bytes = 1500`: a full Ethernet frame, the packet size of
    /// the bulk traffic that builds the queue.
    fn default() -> RedConfig {
        RedConfig {
            w_q: 0.002,
            min_th: 30.0,
            max_th: 90.0,
            max_p: 0.1,
            unit: RedUnit::Packets,
            variant: RedVariant::Classic,
            action: RedAction::Drop,
            mean_packet_bytes: 1500,
        }
    }
}

impl RedConfig {
    /// Checks the ranges FJ93 requires; the message names the offending field.
    ///
    /// `0 < w_q ≤ 1`, `0 ≤ min_th < max_th` (finite), `0 < max_p ≤ 1`, `mean_packet_bytes > 0`.
    pub fn validate(&self) -> Result<(), String> {
        // Written as negated range tests so that NaN fails every check.
        if !(self.w_q > 0.0 && self.w_q <= 1.0) {
            return Err(format!("RED w_q must be in (0, 1], got {}", self.w_q));
        }
        if self.min_th.is_nan() || self.min_th < 0.0 {
            return Err(format!("RED min_th must be >= 0, got {}", self.min_th));
        }
        if !(self.max_th > self.min_th && self.max_th.is_finite()) {
            return Err(format!(
                "RED max_th must be finite and greater than min_th ({}), got {}",
                self.min_th, self.max_th
            ));
        }
        if !(self.max_p > 0.0 && self.max_p <= 1.0) {
            return Err(format!("RED max_p must be in (0, 1], got {}", self.max_p));
        }
        if self.mean_packet_bytes == 0 {
            return Err("RED mean_packet_bytes must be > 0".to_string());
        }
        Ok(())
    }
}

/// Which part of the RED curve an average falls in.
#[derive(Copy, Clone, Debug, PartialEq)]
enum Region {
    /// `avg < min_th`: never signal.
    Below,
    /// Probabilistic signal with this `pb` (before count uniformisation and byte scaling).
    Early(f64),
    /// Signal every packet.
    Forced,
}

fn region(cfg: &RedConfig, avg: f64) -> Region {
    if avg < cfg.min_th {
        return Region::Below;
    }
    if avg < cfg.max_th {
        // FJ93 Fig. 2: pb ← max_p (avg − min_th)/(max_th − min_th).
        return Region::Early(cfg.max_p * (avg - cfg.min_th) / (cfg.max_th - cfg.min_th));
    }
    match cfg.variant {
        RedVariant::Classic => Region::Forced,
        // Gentle RED: a second linear piece from (max_th, max_p) to (2·max_th, 1).
        RedVariant::Gentle if avg < 2.0 * cfg.max_th => {
            Region::Early(cfg.max_p + (1.0 - cfg.max_p) * (avg - cfg.max_th) / cfg.max_th)
        }
        RedVariant::Gentle => Region::Forced,
    }
}

/// The RED curve: the probability `pb` for an average queue `avg` (in `cfg.unit`), before the
/// count uniformisation and before byte-mode scaling; 1 in the forced region.
///
/// Classic: 0 below `min_th`, linear to `max_p` at `max_th`, then 1. Gentle: linear on from
/// `max_p` at `max_th` to 1 at `2·max_th`, then 1.
pub fn marking_probability(cfg: &RedConfig, avg: f64) -> f64 {
    match region(cfg, avg) {
        Region::Below => 0.0,
        Region::Early(pb) => pb,
        Region::Forced => 1.0,
    }
}

/// Counters the driver may sample (style.md, habit 10: stats, not logs).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct RedStats {
    /// Packets offered to RED.
    pub arrivals: u64,
    /// Probabilistic (early-region) drops.
    pub early_drops: u64,
    /// Probabilistic (early-region) CE marks.
    pub early_marks: u64,
    /// Drops in the forced region (classic `avg ≥ max_th`, gentle `avg ≥ 2·max_th`).
    pub forced_drops: u64,
    /// CE marks in the classic forced region (mark mode, ECT packets).
    pub forced_marks: u64,
}

/// One link's RED state.
#[derive(Clone, Debug)]
pub struct Red {
    cfg: RedConfig,
    rng: Pcg64Mcg,
    /// Average queue, in `cfg.unit`.
    avg: f64,
    /// Packets since the last signal in the early region; −1 below `min_th` (FJ93 Fig. 2), so
    /// the first packet of a congestion episode gets `pa = pb`.
    count: i64,
    stats: RedStats,
}

impl Red {
    /// A RED queue with an empty average, drawing from `rng` (the link's own stream, e.g.
    /// `rng::component_rng(seed, rng::kind::LINK, link_id)`).
    ///
    /// # Panics
    /// If `cfg.validate()` fails: the scenario loader must validate first.
    pub fn new(cfg: RedConfig, rng: Pcg64Mcg) -> Red {
        if let Err(e) = cfg.validate() {
            panic!("invalid RED configuration: {e}");
        }
        Red { cfg, rng, avg: 0.0, count: -1, stats: RedStats::default() }
    }

    /// The configuration in use.
    pub fn config(&self) -> &RedConfig {
        &self.cfg
    }

    /// The average queue (packets or bytes, as configured) after the last arrival.
    pub fn avg(&self) -> f64 {
        self.avg
    }

    /// Counters since creation.
    pub fn stats(&self) -> &RedStats {
        &self.stats
    }

    /// Updates `avg` for an arrival at `now` (protocols.md §11.1, FJ93 §4).
    fn update_avg(&mut self, now: Time, queue: &dyn QueueView) {
        let w = self.cfg.w_q;
        match queue.idle_since() {
            Some(since) => {
                // The link has been idle since `since`: decay avg as if m packets of the mean
                // size had arrived to an empty queue, m = idle_time / s. FJ93 leaves f() linear
                // but unspecified; we take s = serialisation time of `mean_packet_bytes` and keep
                // m fractional (ns-2 truncates it to an integer, Linux uses a lookup table).
                let rate = queue.rate_bps();
                if rate > 0 {
                    let idle_ns = now.saturating_since(since).as_ns() as f64;
                    let s_ns = self.cfg.mean_packet_bytes as f64 * 8e9 / rate as f64;
                    self.avg *= (1.0 - w).powf(idle_ns / s_ns);
                }
            }
            None => {
                // avg ← (1 − w_q) avg + w_q q, written so that q = avg leaves avg unchanged.
                // An empty queue behind a packet still on the wire counts as q = 0 (busy link).
                let q = match self.cfg.unit {
                    RedUnit::Packets => queue.backlog_packets() as f64,
                    RedUnit::Bytes => queue.backlog_bytes() as f64,
                };
                self.avg += w * (q - self.avg);
            }
        }
    }

    /// The congestion signal for a selected packet: CE if allowed, otherwise a drop.
    fn signal(&mut self, pkt: &Packet, forced: bool) -> Verdict {
        // Only ECN-capable packets may carry CE (RFC 3168 §5); gentle's last region drops all.
        let may_mark = self.cfg.action == RedAction::Mark
            && pkt.ecn.is_ect()
            && !(forced && self.cfg.variant == RedVariant::Gentle);
        let s = &mut self.stats;
        match (may_mark, forced) {
            (true, false) => s.early_marks += 1,
            (true, true) => s.forced_marks += 1,
            (false, false) => s.early_drops += 1,
            (false, true) => s.forced_drops += 1,
        }
        if may_mark {
            Verdict::Mark
        } else {
            Verdict::Drop
        }
    }
}

impl LinkAlgorithm for Red {
    /// Updates the average, then decides: [`Verdict::Queue`], [`Verdict::Mark`] (ECT packets in
    /// mark mode) or [`Verdict::Drop`]. The driver still applies the buffer limit afterwards, as
    /// ns-2 RED does after its early-drop test.
    fn on_enqueue(&mut self, now: Time, pkt: &mut Packet, queue: &mut dyn QueueView) -> Verdict {
        self.stats.arrivals += 1;
        self.update_avg(now, queue);
        match region(&self.cfg, self.avg) {
            Region::Below => {
                self.count = -1;
                Verdict::Queue
            }
            Region::Forced => {
                self.count = 0;
                self.signal(pkt, true)
            }
            Region::Early(pb) => {
                self.count += 1;
                // FJ93 Fig. 2 order: scale pb by the packet size first (byte mode), then
                // uniformise with the count.
                let pb = match self.cfg.unit {
                    RedUnit::Packets => pb,
                    RedUnit::Bytes => (pb * pkt.wire_bytes as f64 / self.cfg.mean_packet_bytes as f64).min(1.0),
                };
                let c = self.count as f64 * pb;
                // pa = pb / (1 − count·pb), saturating at 1 once count·pb ≥ 1: after ⌈1/pb⌉ − 1
                // unsignalled packets the next one is always selected.
                let pa = if c >= 1.0 { 1.0 } else { pb / (1.0 - c) };
                let selected = pa >= 1.0 || (pa > 0.0 && rng::uniform01(&mut self.rng) < pa);
                if selected {
                    self.count = 0;
                    self.signal(pkt, false)
                } else {
                    Verdict::Queue
                }
            }
        }
    }

    /// The average queue, in the configured unit (packets or bytes).
    fn gauge(&self) -> f64 {
        self.avg
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::fake_queue::FakeQueue;
    use crate::packet::FlowId;
    use crate::time::Dur;
    use crate::wire::Ecn;

    fn pkt(ecn: Ecn, bytes: u32) -> Packet {
        Packet { flow: FlowId(1), wire_bytes: bytes, ecn, ..Packet::default() }
    }

    fn red(cfg: RedConfig) -> Red {
        Red::new(cfg, rng::component_rng(2024, rng::kind::LINK, 3))
    }

    /// min_th 10, max_th 30, max_p 0.1: at avg = 20 packets, pb = 0.05.
    fn cfg_10_30() -> RedConfig {
        RedConfig { min_th: 10.0, max_th: 30.0, max_p: 0.1, ..RedConfig::default() }
    }

    /// Offers `n` packets at 1 µs spacing and returns the verdicts.
    fn offer(r: &mut Red, q: &mut FakeQueue, p: Packet, n: usize) -> Vec<Verdict> {
        (0..n)
            .map(|i| {
                let mut p = p;
                r.on_enqueue(Time::from_ns(i as u64 * 1000), &mut p, q)
            })
            .collect()
    }

    /// Constant q on a busy link: avg_n = q + (avg_0 − q)(1 − w_q)^n (protocols.md §11.4-1).
    /// Packet mode must read the packet count, not the bytes.
    #[test]
    fn avg_follows_ewma_under_constant_queue() {
        let mut r = red(RedConfig { min_th: 1000.0, max_th: 3000.0, ..RedConfig::default() });
        let mut q = FakeQueue { packets: 40, bytes: 1, idle_since: None, rate_bps: 10_000_000 };
        let w = r.config().w_q;
        for n in 1..=2000 {
            let mut p = pkt(Ecn::NotEct, 1500);
            assert_eq!(r.on_enqueue(Time::from_ns(n * 1000), &mut p, &mut q), Verdict::Queue);
            if n % 250 == 0 {
                let expect = 40.0 + (0.0 - 40.0) * (1.0 - w).powi(n as i32);
                assert!((r.avg() - expect).abs() < 1e-9 * 40.0, "n={n}: {} vs {expect}", r.avg());
                assert_eq!(r.gauge(), r.avg());
            }
        }
        // Then the queue drops to 5: avg decays towards 5 from where it was.
        let avg0 = r.avg();
        q.packets = 5;
        offer(&mut r, &mut q, pkt(Ecn::NotEct, 1500), 300);
        let expect = 5.0 + (avg0 - 5.0) * (1.0 - w).powi(300);
        assert!((r.avg() - expect).abs() < 1e-9 * avg0);
    }

    /// Idle link: avg ← (1 − w_q)^m avg with m = idle / s, s = 1500 B at 10 Mb/s = 1.2 ms.
    /// ```text
    /// t=1s link idle ........ t=1s+12ms arrival  => m = 10
    ///                         t=1s+15ms arrival  => m = 12.5 (fractional, measured from 1 s)
    /// ```
    /// A busy link with nothing waiting does not decay: it averages in q = 0 once.
    #[test]
    fn idle_period_decays_avg() {
        let w = 0.1;
        let mut r = red(RedConfig { w_q: w, min_th: 1000.0, max_th: 3000.0, ..RedConfig::default() });
        let t0 = Time::from_ns(1_000_000_000);
        let mut q = FakeQueue { packets: 0, bytes: 0, idle_since: Some(t0), rate_bps: 10_000_000 };

        r.avg = 50.0;
        let mut p = pkt(Ecn::NotEct, 1500);
        assert_eq!(r.on_enqueue(t0 + Dur::from_ms(12), &mut p, &mut q), Verdict::Queue);
        let expect = 50.0 * (1.0 - w).powi(10);
        assert!((r.avg() - expect).abs() < 1e-12, "{} vs {expect}", r.avg());

        r.avg = 50.0;
        r.on_enqueue(t0 + Dur::from_ms(15), &mut p, &mut q);
        let expect = 50.0 * (1.0 - w).powf(12.5);
        assert!((r.avg() - expect).abs() < 1e-12);

        // Arrival at the very instant the link went idle: m = 0, no change.
        r.avg = 50.0;
        r.on_enqueue(t0, &mut p, &mut q);
        assert_eq!(r.avg(), 50.0);

        // Busy link, empty queue: one EWMA step with q = 0.
        q.idle_since = None;
        r.on_enqueue(t0 + Dur::from_secs(10), &mut p, &mut q);
        assert!((r.avg() - 50.0 * (1.0 - w)).abs() < 1e-12);
    }

    /// Gentle curve (protocols.md §11.4-2): p(max_th) = max_p, p(1.5 max_th) = (1 + max_p)/2,
    /// p(2 max_th) = 1, and the classic part below max_th is unchanged.
    #[test]
    fn gentle_curve() {
        let cfg = RedConfig { variant: RedVariant::Gentle, ..RedConfig::default() }; // 30/90/0.1
        let p = |avg| marking_probability(&cfg, avg);
        assert_eq!(p(0.0), 0.0);
        assert_eq!(p(29.999), 0.0);
        assert_eq!(p(30.0), 0.0);
        assert!((p(60.0) - 0.05).abs() < 1e-12);
        assert!((p(90.0) - 0.1).abs() < 1e-12);
        assert!((p(135.0) - 0.55).abs() < 1e-12);
        assert!((p(179.999) - 1.0).abs() < 1e-4);
        assert_eq!(p(180.0), 1.0);
        assert_eq!(p(1e9), 1.0);
        // Continuous and non-decreasing over [0, 200].
        let mut last = 0.0;
        for i in 0..=20_000 {
            let v = p(i as f64 * 0.01);
            assert!(v >= last && v - last < 1e-3, "jump at {}", i as f64 * 0.01);
            last = v;
        }
    }

    /// Classic curve: linear from (min_th, 0) to (max_th, max_p), then a jump to 1.
    #[test]
    fn classic_curve() {
        let cfg = RedConfig::default();
        let p = |avg| marking_probability(&cfg, avg);
        assert_eq!(p(10.0), 0.0);
        assert!((p(60.0) - 0.05).abs() < 1e-12);
        assert!((p(89.999) - 0.1).abs() < 1e-5);
        assert_eq!(p(90.0), 1.0);
        assert_eq!(p(135.0), 1.0);
    }

    /// Classic, avg ≥ max_th: every packet is signalled. Drop mode drops everything; mark mode
    /// marks ECT packets and drops Not-ECT ones.
    #[test]
    fn classic_above_max_th_always_signals() {
        let mut q = FakeQueue::busy(100);
        let mut r = red(RedConfig::default());
        r.avg = 100.0;
        let v = offer(&mut r, &mut q, pkt(Ecn::Ect0, 1500), 1000);
        assert!(v.iter().all(|v| *v == Verdict::Drop));
        assert_eq!(r.stats().forced_drops, 1000);

        let mut r = red(RedConfig { action: RedAction::Mark, ..RedConfig::default() });
        r.avg = 100.0;
        let v = offer(&mut r, &mut q, pkt(Ecn::Ect0, 1500), 1000);
        assert!(v.iter().all(|v| *v == Verdict::Mark));
        let v = offer(&mut r, &mut q, pkt(Ecn::NotEct, 1500), 1000);
        assert!(v.iter().all(|v| *v == Verdict::Drop));
        let s = r.stats();
        assert_eq!((s.arrivals, s.forced_marks, s.forced_drops), (2000, 1000, 1000));
        assert_eq!((s.early_marks, s.early_drops), (0, 0));
    }

    /// avg < min_th: nothing is ever signalled, whatever the instantaneous queue.
    #[test]
    fn below_min_th_never_signals() {
        let mut r = red(RedConfig::default());
        // A burst: the instantaneous queue (500) is far above max_th, but the average starts
        // at 0 and 20 arrivals bring it only to 500·(1 − 0.998^20) ≈ 19.6 < min_th.
        let mut q = FakeQueue::busy(500);
        let v = offer(&mut r, &mut q, pkt(Ecn::NotEct, 1500), 20);
        assert!(r.avg() < 30.0);
        assert!(v.iter().all(|v| *v == Verdict::Queue));
        // And a long run at a steady 29 packets.
        let mut r = red(RedConfig::default());
        r.avg = 29.0;
        let mut q = FakeQueue::busy(29);
        let v = offer(&mut r, &mut q, pkt(Ecn::NotEct, 1500), 100_000);
        assert!(v.iter().all(|v| *v == Verdict::Queue));
        assert_eq!(r.stats().early_drops + r.stats().forced_drops, 0);
    }

    /// Early region in mark mode: ECT packets are marked (never dropped), Not-ECT packets are
    /// dropped (never marked). Drop mode drops ECT packets too.
    #[test]
    fn ecn_mode_marks_ect_and_drops_not_ect() {
        let mut q = FakeQueue::busy(20);
        let mut r = red(RedConfig { action: RedAction::Mark, ..cfg_10_30() });
        r.avg = 20.0;
        let v = offer(&mut r, &mut q, pkt(Ecn::Ect0, 1500), 5000);
        let marks = v.iter().filter(|v| **v == Verdict::Mark).count();
        assert!(v.iter().all(|v| *v != Verdict::Drop));
        // Mean gap ≈ 1/(2 pb) = 10 packets ⇒ about 500 marks.
        assert!((400..600).contains(&marks), "{marks} marks");
        assert_eq!(r.stats().early_marks, marks as u64);
        let v = offer(&mut r, &mut q, pkt(Ecn::NotEct, 1500), 5000);
        assert!(v.iter().all(|v| *v != Verdict::Mark));
        assert!(v.contains(&Verdict::Drop));

        let mut r = red(cfg_10_30());
        r.avg = 20.0;
        let v = offer(&mut r, &mut q, pkt(Ecn::Ect1, 1500), 5000);
        assert!(v.iter().all(|v| *v != Verdict::Mark));
        assert!(v.contains(&Verdict::Drop));
    }

    /// Gentle: between max_th and 2·max_th marks stay probabilistic (ECT marked); from 2·max_th
    /// on every packet is dropped, even ECT ones in mark mode.
    #[test]
    fn gentle_regions_in_mark_mode() {
        let cfg = RedConfig { variant: RedVariant::Gentle, action: RedAction::Mark, ..cfg_10_30() };
        let mut r = red(cfg);
        r.avg = 45.0; // pb = 0.1 + 0.9·15/30 = 0.55
        let mut q = FakeQueue::busy(45);
        let v = offer(&mut r, &mut q, pkt(Ecn::Ect0, 1500), 2000);
        assert!(v.contains(&Verdict::Queue) && v.contains(&Verdict::Mark));
        assert!(!v.contains(&Verdict::Drop));

        let mut r = red(cfg);
        r.avg = 60.0;
        let mut q = FakeQueue::busy(60);
        let v = offer(&mut r, &mut q, pkt(Ecn::Ect0, 1500), 100);
        assert!(v.iter().all(|v| *v == Verdict::Drop));
        assert_eq!(r.stats().forced_drops, 100);
    }

    /// Byte mode: avg counts bytes, and the first packet of an episode (count = 0, so pa = pb')
    /// is selected with pb' = pb · size / mean_packet_bytes. With thresholds 15 000/45 000 B,
    /// max_p 0.1 and avg = 30 000 B, pb = 0.05: 750 B → 0.025, 1500 B → 0.05, 3000 B → 0.1,
    /// 60 000 B → 1 (capped). 200 000 trials each: the standard error is below 1.5 % of p, the
    /// tolerance is 6 % of p (≥ 4 standard errors).
    #[test]
    fn byte_mode_scales_probability_with_size() {
        let cfg =
            RedConfig { unit: RedUnit::Bytes, min_th: 15_000.0, max_th: 45_000.0, max_p: 0.1, ..RedConfig::default() };
        // avg reads bytes, not packets.
        let mut r = red(RedConfig { w_q: 1.0, ..cfg });
        let mut q = FakeQueue { packets: 3, bytes: 12_345, idle_since: None, rate_bps: 10_000_000 };
        let mut p = pkt(Ecn::NotEct, 1500);
        r.on_enqueue(Time::ZERO, &mut p, &mut q);
        assert_eq!(r.avg(), 12_345.0);

        let mut q = FakeQueue { packets: 20, bytes: 30_000, idle_since: None, rate_bps: 10_000_000 };
        for (size, expect) in [(750u32, 0.025), (1500, 0.05), (3000, 0.1), (60_000, 1.0)] {
            let mut r = red(cfg);
            r.avg = 30_000.0;
            let n = 200_000;
            let mut hits = 0;
            for i in 0..n {
                r.count = -1; // every trial is the first packet of an episode
                let mut p = pkt(Ecn::NotEct, size);
                if r.on_enqueue(Time::from_ns(i), &mut p, &mut q) == Verdict::Drop {
                    hits += 1;
                }
            }
            let freq = hits as f64 / n as f64;
            assert!((freq - expect).abs() <= 0.06 * expect, "size {size}: {freq} vs {expect}");
        }
    }

    /// With avg fixed the count rule makes the gap (packets from one mark to the next,
    /// the marked one included) uniform (protocols.md §11.4-1). For pb = 0.05 the survival after
    /// n packets is Π_{k=1..n} (1 − pb/(1 − k·pb)) = (1 − (n+1)pb)/(1 − pb), so
    /// P(gap = n) = pb/(1 − pb) = 1/19 for n = 1..19 and 0 beyond (n = 19 has pa = 1).
    /// 19 000 gaps: 1000 expected per bin, standard deviation ≈ 31; tolerance ±15 % (±150,
    /// about 5 σ). Mean gap 10 ± 2 % (σ of the mean ≈ 0.04, so ±0.2 is 5 σ).
    #[test]
    fn inter_mark_gap_is_uniform() {
        let mut r = red(RedConfig { action: RedAction::Mark, ..cfg_10_30() });
        r.avg = 20.0;
        let mut q = FakeQueue::busy(20);
        assert!((marking_probability(r.config(), 20.0) - 0.05).abs() < 1e-12);

        let mut hist = [0u32; 21];
        let (mut gaps, mut since, mut first) = (0, 0usize, true);
        let mut t = 0u64;
        while gaps < 19_000 {
            t += 1000;
            let mut p = pkt(Ecn::Ect0, 1500);
            since += 1;
            if r.on_enqueue(Time::from_ns(t), &mut p, &mut q) == Verdict::Mark {
                // The first gap starts at count = −1 and is not from the stationary law.
                if !first {
                    assert!(since <= 19, "gap {since} exceeds 1/pb − 1");
                    hist[since] += 1;
                    gaps += 1;
                }
                first = false;
                since = 0;
            }
        }
        assert_eq!(r.avg(), 20.0, "avg must stay fixed for this test to mean anything");
        for (n, &h) in hist.iter().enumerate().skip(1).take(19) {
            assert!((850..=1150).contains(&h), "gap {n}: {h} (expected 1000 ± 150)");
        }
        let mean = hist.iter().enumerate().map(|(n, &h)| n as f64 * h as f64).sum::<f64>() / 19_000.0;
        assert!((mean - 10.0).abs() < 0.2, "mean gap {mean}");
    }

    /// Same seed, same packets ⇒ same verdicts (habit 7).
    #[test]
    fn deterministic_for_a_seed() {
        let run = || {
            let mut r = red(cfg_10_30());
            r.avg = 20.0;
            offer(&mut r, &mut FakeQueue::busy(20), pkt(Ecn::NotEct, 1500), 1000)
        };
        assert_eq!(run(), run());
    }

    #[test]
    fn validation_errors() {
        assert_eq!(RedConfig::default().validate(), Ok(()));
        let bad = |f: fn(&mut RedConfig)| {
            let mut c = RedConfig::default();
            f(&mut c);
            c.validate()
        };
        assert!(bad(|c| c.w_q = 0.0).unwrap_err().contains("w_q"));
        assert!(bad(|c| c.w_q = 1.5).unwrap_err().contains("w_q"));
        assert!(bad(|c| c.w_q = f64::NAN).unwrap_err().contains("w_q"));
        assert_eq!(bad(|c| c.w_q = 1.0), Ok(()));
        assert!(bad(|c| c.min_th = -1.0).unwrap_err().contains("min_th"));
        assert!(bad(|c| c.min_th = f64::NAN).unwrap_err().contains("min_th"));
        assert_eq!(bad(|c| c.min_th = 0.0), Ok(()));
        assert!(bad(|c| c.max_th = 30.0).unwrap_err().contains("max_th"));
        assert!(bad(|c| c.max_th = 10.0).unwrap_err().contains("max_th"));
        assert!(bad(|c| c.max_th = f64::INFINITY).unwrap_err().contains("max_th"));
        assert!(bad(|c| c.max_p = 0.0).unwrap_err().contains("max_p"));
        assert!(bad(|c| c.max_p = 1.01).unwrap_err().contains("max_p"));
        assert_eq!(bad(|c| c.max_p = 1.0), Ok(()));
        assert!(bad(|c| c.mean_packet_bytes = 0).unwrap_err().contains("mean_packet_bytes"));
    }

    #[test]
    #[should_panic(expected = "invalid RED configuration")]
    fn new_rejects_invalid_config() {
        red(RedConfig { max_p: 0.0, ..RedConfig::default() });
    }
}
