//! XCP's router (Katabi, Handley & Rohrs, SIGCOMM 2002) in the ns-2.35 form (the USC/ISI
//! rewrite following draft-falk-xcp-spec; protocols.md 2.3-2.6), chosen over Katabi's original
//! ns-2 code because its units are explicit (feedback is a throughput change in bytes/s, no
//! kilobyte scaling, no experimental x1.1 on the feedback constants) and it is the version the
//! draft and later implementations follow. See docs/algorithms/xcp.md.
//!
//! Per packet on arrival (estimation), for every packet `input += s`; for XCP data with an RTT,
//! `sum_x += x` and `sum_rtt_x += min(rtt, 1 s) x`, where `x = rtt s / cwnd` is carried in the
//! header. Every control interval `Te = max(d, 1 ms)`:
//!
//! ```text
//! d   = sum_rtt_x / sum_x                       flow-weighted mean RTT (kept if no samples)
//! y   = input / Te
//! phi = alpha (C - y) - beta Q / d              aggregate feedback, bytes/s
//! h   = max(0, gamma y - |phi|)                 shuffled traffic
//! residue_pos = max(phi, 0) + h    residue_neg = max(-phi, 0) + h
//! Cp  = residue_pos / sum_x        Cn = residue_neg / input
//! ```
//!
//! Per XCP data packet on departure: `pos = min(residue_pos, Cp x)`, `neg = min(residue_neg,
//! Cn s)`, `fb = pos - neg`; the header keeps the smaller of its feedback and `fb`; the residues
//! are consumed by what was actually given (the ns-2.35 `else` branch when an upstream router
//! gave less), so a router never hands out more than `phi + h` per interval.
//!
//! `Q` is the persistent queue: the minimum queue seen over the last queue interval `Tq =
//! max(2 ms, (d - q / C) / 2)` (ns-2.35).

use crate::analysis::opcount::Scalar;
use crate::link::{LinkAlgorithm, QueueView, Verdict};
use crate::packet::Packet;
use crate::time::{Dur, Time};
use crate::wire::CongestionHeader;

/// Router parameters (protocols.md 2.8).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct XcpRouterConfig {
    pub alpha: f64,
    pub beta: f64,
    pub gamma: f64,
    /// `d`, `Te` and `Tq` before the first RTT samples (ns-2.35: 50 ms).
    pub initial_rtt: Dur,
}

impl Default for XcpRouterConfig {
    /// alpha = 0.4, beta = 0.226, gamma = 0.1 (paper, ns-2.35, seed 002).
    fn default() -> Self {
        XcpRouterConfig { alpha: 0.4, beta: 0.226, gamma: 0.1, initial_rtt: Dur::from_ms(50) }
    }
}

/// ns-2.35 `XCP_MIN_INTERVAL`.
const MIN_INTERVAL: Dur = Dur::from_ms(1);
/// ns-2.35 caps a packet's RTT at `XCP_MAX_INTERVAL` = 1 s in the average.
const MAX_RTT_S: f64 = 1.0;
/// Smallest queue-estimation interval (ns-2.35).
const MIN_TQ: Dur = Dur::from_ms(2);

/// What a control interval hands out and what is left of it.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct XcpBudget<S> {
    /// Positive feedback per unit of `x` (bytes/s per second of x).
    pub cp: S,
    /// Negative feedback per byte.
    pub cn: S,
    pub residue_pos: S,
    pub residue_neg: S,
}

/// Estimation accumulators of one control interval.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct XcpAccumulators<S> {
    pub input_bytes: S,
    pub sum_x: S,
    pub sum_rtt_x: S,
}

/// Per-packet estimation on arrival (protocols.md 2.4). `xcp` is `(x, rtt)` for XCP data with
/// an RTT estimate.
#[inline]
pub fn xcp_on_arrival<S: Scalar>(acc: &mut XcpAccumulators<S>, size: S, xcp: Option<(S, S)>) {
    acc.input_bytes = acc.input_bytes + size;
    if let Some((x, rtt)) = xcp {
        acc.sum_x = acc.sum_x + x;
        acc.sum_rtt_x = acc.sum_rtt_x + rtt.min(S::lit(MAX_RTT_S)) * x;
    }
}

/// Per-packet feedback on departure (protocols.md 2.6); returns the packet's new feedback.
#[inline]
pub fn xcp_on_departure<S: Scalar>(b: &mut XcpBudget<S>, x: S, size: S, carried: S) -> S {
    let zero = S::lit(0.0);
    let mut pos = b.residue_pos.min(b.cp * x);
    let mut neg = b.residue_neg.min(b.cn * size);
    let fb = pos - neg;
    let out = if fb.lt(carried) {
        fb
    } else {
        // An upstream router gave less: spend our budget consistently with what was given.
        neg = b.residue_neg.min(neg + (fb - carried));
        pos = (carried + neg).max(zero);
        carried
    };
    b.residue_pos = (b.residue_pos - pos).max(zero);
    b.residue_neg = (b.residue_neg - neg).max(zero);
    if !zero.lt(b.residue_pos) {
        b.cp = zero;
    }
    if !zero.lt(b.residue_neg) {
        b.cn = zero;
    }
    out
}

/// One output link's XCP state.
#[derive(Clone, Debug)]
pub struct XcpRouter {
    cfg: XcpRouterConfig,
    /// Capacity in bytes/s.
    capacity: f64,
    acc: XcpAccumulators<f64>,
    budget: XcpBudget<f64>,
    /// Flow-weighted average RTT `d` in seconds.
    avg_rtt: f64,
    /// Persistent queue `Q` (bytes) and the running minimum of the current queue interval.
    persistent_queue: f64,
    running_min: f64,
    last_control: Time,
    next_control: Time,
    next_queue: Time,
    /// Last aggregate feedback phi (bytes/s), for the gauge and tests.
    phi: f64,
}

impl XcpRouter {
    /// A router for a link of `capacity_bps`; timers first fire at `start + phase` (random per
    /// link, protocols.md 14.4).
    pub fn new(cfg: XcpRouterConfig, capacity_bps: u64, start: Time, phase: Dur) -> XcpRouter {
        let d = cfg.initial_rtt;
        XcpRouter {
            cfg,
            capacity: capacity_bps as f64 / 8.0,
            acc: XcpAccumulators::default(),
            budget: XcpBudget::default(),
            avg_rtt: d.as_secs_f64(),
            persistent_queue: 0.0,
            running_min: f64::INFINITY,
            last_control: start,
            next_control: start + phase,
            next_queue: start + phase,
            phi: 0.0,
        }
    }

    pub fn avg_rtt(&self) -> f64 {
        self.avg_rtt
    }
    pub fn budget(&self) -> XcpBudget<f64> {
        self.budget
    }
    pub fn phi(&self) -> f64 {
        self.phi
    }
    pub fn persistent_queue(&self) -> f64 {
        self.persistent_queue
    }

    /// The control-interval computation (protocols.md 2.5) for an interval of `te` seconds.
    fn control(&mut self, te: f64) {
        let c = &self.cfg;
        let acc = self.acc;
        if acc.sum_x > 0.0 {
            self.avg_rtt = acc.sum_rtt_x / acc.sum_x;
        }
        let y = acc.input_bytes / te;
        let phi = c.alpha * (self.capacity - y) - c.beta * self.persistent_queue / self.avg_rtt;
        let h = (c.gamma * y - phi.abs()).max(0.0);
        let residue_pos = phi.max(0.0) + h;
        let residue_neg = (-phi).max(0.0) + h;
        self.budget = XcpBudget {
            cp: if acc.sum_x > 0.0 { residue_pos / acc.sum_x } else { 0.0 },
            cn: if acc.input_bytes > 0.0 { residue_neg / acc.input_bytes } else { 0.0 },
            residue_pos,
            residue_neg,
        };
        self.phi = phi;
        self.acc = XcpAccumulators::default();
    }
}

impl LinkAlgorithm for XcpRouter {
    fn on_enqueue(&mut self, _now: Time, pkt: &mut Packet, queue: &mut dyn QueueView) -> Verdict {
        self.running_min = self.running_min.min(queue.backlog_bytes() as f64);
        let xcp = match (pkt.is_data(), &pkt.cc) {
            (true, CongestionHeader::Xcp(h)) if h.rtt_us != 0 => Some((h.x as f64, h.rtt_s())),
            _ => None,
        };
        xcp_on_arrival(&mut self.acc, pkt.wire_bytes as f64, xcp);
        Verdict::Queue
    }

    fn wants_dequeue(&self) -> bool {
        true
    }

    fn on_dequeue(&mut self, _now: Time, pkt: &mut Packet, backlog_bytes: u64) {
        self.running_min = self.running_min.min(backlog_bytes as f64);
        if !pkt.is_data() {
            return;
        }
        let size = pkt.wire_bytes as f64;
        if let CongestionHeader::Xcp(h) = &mut pkt.cc {
            if h.rtt_us == 0 {
                h.delta_throughput = 0.0;
                return;
            }
            let fb = xcp_on_departure(&mut self.budget, h.x as f64, size, h.delta_throughput as f64);
            h.delta_throughput = fb as f32;
        }
    }

    fn poll_timeout(&self) -> Option<Time> {
        Some(self.next_control.min(self.next_queue))
    }

    fn on_timeout(&mut self, now: Time, backlog_bytes: u64) {
        if now >= self.next_queue {
            let q = backlog_bytes as f64;
            self.persistent_queue = if self.running_min.is_finite() { self.running_min.min(q) } else { q };
            self.running_min = q;
            let tq = ((self.avg_rtt - q / self.capacity) / 2.0).max(MIN_TQ.as_secs_f64());
            self.next_queue = now + Dur::from_secs_f64(tq);
        }
        if now >= self.next_control {
            let te = now.saturating_since(self.last_control).as_secs_f64();
            if te > 0.0 {
                self.control(te);
            }
            self.last_control = now;
            self.next_control = now + Dur::from_secs_f64(self.avg_rtt).max(MIN_INTERVAL);
        }
    }

    /// The aggregate feedback phi of the last interval, in bit/s.
    fn gauge(&self) -> f64 {
        8.0 * self.phi
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::xcp::XcpHeader;
    use crate::analysis::opcount::{count, Counted, OpCounts};
    use crate::link::fake_queue::FakeQueue;
    use crate::wire::{Segment, SegmentKind};

    fn data(bytes: u32, rtt_us: u32, x: f32, fb: f32) -> Packet {
        Packet {
            wire_bytes: bytes,
            seg: Segment { kind: SegmentKind::Data, ..Segment::default() },
            cc: CongestionHeader::Xcp(XcpHeader { rtt_us, x, delta_throughput: fb, reverse_feedback: 0.0 }),
            ..Packet::default()
        }
    }

    fn fb_of(p: &Packet) -> f64 {
        match p.cc {
            CongestionHeader::Xcp(h) => h.delta_throughput as f64,
            _ => unreachable!(),
        }
    }

    fn ms(v: u64) -> Time {
        Time::ZERO + Dur::from_ms(v)
    }

    /// One interval's inputs, by hand. C = 10 Mb/s = 1.25e6 B/s. In 100 ms: 100 packets of
    /// 1000 B from two flows, flow A (rtt 100 ms, cwnd 50 kB: x = 2 ms) and flow B (rtt 200 ms,
    /// cwnd 100 kB: x = 2 ms), 50 packets each. Persistent queue 0.
    /// d = (50 * 0.1 * 0.002 + 50 * 0.2 * 0.002) / (100 * 0.002) = 0.15 s;
    /// y = 1e5 / 0.1 = 1e6 B/s; phi = 0.4 (1.25e6 - 1e6) = 1e5 B/s;
    /// h = max(0, 0.1 * 1e6 - 1e5) = 0; Cp = 1e5 / 0.2 = 5e5; Cn = 0.
    #[test]
    fn control_interval_matches_a_hand_computation() {
        let mut r = XcpRouter::new(XcpRouterConfig::default(), 10_000_000, Time::ZERO, Dur::from_ms(100));
        let mut q = FakeQueue::bytes(0);
        for k in 0..100 {
            let rtt = if k % 2 == 0 { 100_000 } else { 200_000 };
            r.on_enqueue(ms(k), &mut data(1000, rtt, 0.002, 1e9), &mut q);
        }
        r.on_timeout(ms(100), 0);
        assert!((r.avg_rtt() - 0.15).abs() < 1e-6, "d {}", r.avg_rtt());
        assert!((r.phi() - 1e5).abs() < 1e-3, "phi {}", r.phi());
        let b = r.budget();
        assert!((b.cp / 5e5 - 1.0).abs() < 1e-6 && b.cn == 0.0, "{b:?}");
        assert_eq!((b.residue_pos, b.residue_neg), (r.phi(), 0.0));
        // The next interval is d long.
        // Next: the queue timer, Tq = (d - q/C)/2 with the d it saw (the initial 50 ms).
        assert_eq!(r.poll_timeout(), Some(ms(125)));
        // Each departing packet gets Cp x = 1000 B/s; 100 of them exhaust the residue.
        let mut p = data(1000, 100_000, 0.002, 1e9);
        r.on_dequeue(ms(101), &mut p, 0);
        assert!((fb_of(&p) - 1000.0).abs() < 1e-3);
        for _ in 0..99 {
            r.on_dequeue(ms(102), &mut data(1000, 100_000, 0.002, 1e9), 0);
        }
        let mut last = data(1000, 100_000, 0.002, 1e9);
        r.on_dequeue(ms(103), &mut last, 0);
        assert!(fb_of(&last).abs() < 1e-3, "residue spent: {}", fb_of(&last));
    }

    /// Overload with a persistent queue: C = 1.25e6 B/s, y = 1.5e6 B/s over 100 ms, Q = 50 kB
    /// (the minimum over the queue interval), d = 0.1 s:
    /// phi = 0.4 (1.25e6 - 1.5e6) - 0.226 * 5e4 / 0.1 = -1e5 - 1.13e5 = -2.13e5;
    /// h = max(0, 1.5e5 - 2.13e5) = 0; Cn = 2.13e5 / 1.5e5 = 1.42 per byte.
    #[test]
    fn overload_and_queue_give_negative_feedback_proportional_to_bytes() {
        let mut r = XcpRouter::new(XcpRouterConfig::default(), 10_000_000, Time::ZERO, Dur::from_ms(100));
        let mut q = FakeQueue::bytes(50_000);
        for k in 0..150 {
            r.on_enqueue(ms(k * 2 / 3), &mut data(1000, 100_000, 0.002, 1e9), &mut q);
        }
        r.on_timeout(ms(100), 50_000);
        assert_eq!(r.persistent_queue(), 50_000.0);
        assert!((r.avg_rtt() - 0.1).abs() < 1e-6);
        assert!((r.phi() + 2.13e5).abs() < 1.0, "phi {}", r.phi());
        let b = r.budget();
        assert!((b.cn - 1.42).abs() < 1e-6 && b.residue_pos == 0.0, "{b:?}");
        let mut p = data(1500, 100_000, 0.002, 1e9);
        r.on_dequeue(ms(101), &mut p, 0);
        assert!((fb_of(&p) + 1.42 * 1500.0).abs() < 1e-2, "fb {}", fb_of(&p));
    }

    /// Shuffling: at y = C with no queue phi = 0 and h = gamma y; half goes up (equal per flow,
    /// by x), half down (proportional to bytes).
    #[test]
    fn efficient_link_shuffles_gamma_of_the_traffic() {
        let mut r = XcpRouter::new(XcpRouterConfig::default(), 10_000_000, Time::ZERO, Dur::from_ms(100));
        let mut q = FakeQueue::bytes(0);
        for k in 0..125 {
            r.on_enqueue(ms(k * 4 / 5), &mut data(1000, 100_000, 0.002, 1e9), &mut q);
        }
        r.on_timeout(ms(100), 0);
        let b = r.budget();
        assert!(r.phi().abs() < 1e-6);
        assert!((b.residue_pos - 1.25e5).abs() < 1e-3 && (b.residue_neg - 1.25e5).abs() < 1e-3, "{b:?}");
        // A packet gets Cp x - Cn s = 1.25e5 / 0.25 * 0.002 - 1.25e5 / 1.25e5 * 1000 = 0.
        let mut p = data(1000, 100_000, 0.002, 1e9);
        r.on_dequeue(ms(101), &mut p, 0);
        assert!(fb_of(&p).abs() < 1e-6);
    }

    /// An upstream router already gave less: the packet keeps the smaller value and this router
    /// consumes its residues consistently (ns-2.35's else branch): neg grows by the gap, pos =
    /// carried + neg.
    #[test]
    fn smaller_upstream_feedback_is_kept_and_budget_consumed_consistently() {
        let mut b = XcpBudget { cp: 1000.0, cn: 0.5, residue_pos: 1e6, residue_neg: 1e6 };
        // pos = 1000 * 0.002 = 2, neg = 0.5 * 1000 = 500, fb = -498; carried -600 < fb.
        let out = xcp_on_departure(&mut b, 0.002, 1000.0, -600.0);
        assert_eq!(out, -600.0);
        // neg = 500 + 102 = 602, pos = max(0, -600 + 602) = 2.
        assert!((b.residue_neg - (1e6 - 602.0)).abs() < 1e-6);
        assert!((b.residue_pos - (1e6 - 2.0)).abs() < 1e-6);
        // Exhausted residues zero the constants.
        let mut b = XcpBudget { cp: 1000.0, cn: 0.5, residue_pos: 1.0, residue_neg: 100.0 };
        let out = xcp_on_departure(&mut b, 0.002, 1000.0, 1e9);
        assert_eq!(out, 1.0 - 100.0);
        assert_eq!((b.cp, b.cn, b.residue_pos, b.residue_neg), (0.0, 0.0, 0.0, 0.0));
    }

    /// ACKs and first packets (rtt 0) are counted as input but get no feedback.
    #[test]
    fn acks_and_rttless_packets_get_no_feedback() {
        let mut r = XcpRouter::new(XcpRouterConfig::default(), 10_000_000, Time::ZERO, Dur::from_ms(100));
        r.budget = XcpBudget { cp: 1e6, cn: 0.0, residue_pos: 1e9, residue_neg: 0.0 };
        let mut first = data(1000, 0, 0.0, 1e9);
        r.on_dequeue(ms(1), &mut first, 0);
        assert_eq!(fb_of(&first), 0.0);
        let mut ack = data(40, 100_000, 0.002, 7.0);
        ack.seg.kind = SegmentKind::Ack;
        r.on_dequeue(ms(1), &mut ack, 0);
        assert_eq!(fb_of(&ack), 7.0);
        let mut q = FakeQueue::bytes(0);
        r.on_enqueue(ms(1), &mut ack, &mut q);
        assert_eq!(r.acc.input_bytes, 40.0);
        assert_eq!(r.acc.sum_x, 0.0);
    }

    /// The per-packet work of this implementation: arrival 3 additions + 1 multiplication,
    /// departure 3 additions + 2 multiplications: 6 + 3, seed 002's count for XCP.
    #[test]
    fn per_packet_work_is_six_additions_and_three_multiplications() {
        let ((), a) = count(|| {
            let mut acc = XcpAccumulators { input_bytes: Counted(0.0), sum_x: Counted(0.0), sum_rtt_x: Counted(0.0) };
            xcp_on_arrival(&mut acc, Counted(1000.0), Some((Counted(0.002), Counted(0.1))));
        });
        assert_eq!(a, OpCounts { adds: 3, muls: 1, divs: 0, cmps: 1 });
        let (_, d) = count(|| {
            let mut b =
                XcpBudget { cp: Counted(1e3), cn: Counted(0.5), residue_pos: Counted(1e6), residue_neg: Counted(1e6) };
            xcp_on_departure(&mut b, Counted(0.002), Counted(1000.0), Counted(1e9))
        });
        assert_eq!((d.adds, d.muls, d.divs, d.cmps), (3, 2, 0, 7));
        assert_eq!(a.adds + d.adds, 6);
        assert_eq!(a.muls + d.muls, 3);
    }
}
