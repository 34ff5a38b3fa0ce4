//! JetMax's router (Zhang, Leonard and Loguinov, INFOCOM 2006 / Computer Networks 2008),
//! **reconstructed**: the papers' equations were not reachable (only their abstracts, seed 000
//! Section IX and seed 002's slides); see docs/algorithms/jetmax.md for what is known and what we
//! chose.
//!
//! Known: each router computes a fair rate by estimating the number of flows bottlenecked at its
//! link and the capacity used by flows bottlenecked elsewhere; packets carry explicit bottleneck
//! identification; three additions per packet; tunable utilisation; max-min fair.
//!
//! Reconstructed, per data packet (on arrival): the link learns its hop index on the packet's
//! path from the `hop` counter (and increments it); if the packet names this hop as its flow's
//! bottleneck, its share (`packet_bits / x`, precomputed by the source) and its bytes are added
//! to the bottlenecked accumulators; every packet's bytes go to the input accumulator (three
//! additions). A packet of a joining flow, which names no bottleneck yet, is counted at every
//! link it crosses (its share capped at `D`), so that links make room for it before it starts.
//! If this link's fair rate is below the packet's `fair_bps`, the link writes its rate and its
//! hop index (`candidate`). Every control interval `D`:
//!
//! ```text
//! y   = input bits / D               (every packet: data, ACKs, other protocols)
//! N   = sum of shares / D            (flows bottlenecked here: each counts 1 whatever its rate)
//! S   = y - bottlenecked bits / D    (rate of traffic limited elsewhere)
//! A   = gamma C - S                  (what the flows bottlenecked here may use)
//! F   = A / max(N, 1)                if N > 0
//!     = gamma C                      if N = 0 and A >= 0 (no flow would gain by moving here)
//!     = F gamma C / y                if N = 0 and A < 0  (overloaded by flows counted elsewhere:
//!                                                         pull them in multiplicatively)
//! F is clamped to [F_min, gamma C].
//! ```
//!
//! A flow limited elsewhere at rate `x` moves here exactly when it would get less here, since
//! `x > A / N` iff `x > (A + x) / (N + 1)` (the mediant lies between the two): comparing with
//! `A / N` needs no per-flow work. At the fixed point every flow is counted at the link with the
//! smallest fair rate on its path, and the rates are the max-min allocation of `gamma C`.

use crate::algorithms::jetmax::header::NO_HOP;
use crate::link::control_interval::ControlInterval;
use crate::link::{LinkAlgorithm, QueueView, Verdict};
use crate::packet::Packet;
use crate::time::{Dur, Time};
use crate::wire::CongestionHeader;

/// Router parameters.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct JetMaxRouterConfig {
    /// Target utilisation gamma (tunable, the papers' claim; our default 0.95).
    pub gamma: f64,
    /// Control interval D (our choice 50 ms: the flow count errs by up to one packet's share per
    /// flow and interval, under 1 % for a flow sending 100 full-size packets per interval,
    /// i.e. from 24 Mb/s on).
    pub interval: Dur,
    /// Floor of the fair rate as a fraction of C.
    pub min_fraction: f64,
}

impl Default for JetMaxRouterConfig {
    fn default() -> Self {
        JetMaxRouterConfig { gamma: 0.95, interval: Dur::from_ms(50), min_fraction: 1e-6 }
    }
}

/// One output link's JetMax state.
#[derive(Clone, Debug)]
pub struct JetMaxRouter {
    cfg: JetMaxRouterConfig,
    capacity_bps: f64,
    fair_bps: f64,
    /// Bytes arrived this interval: all packets, and those of flows counted here.
    input_bytes: f64,
    bottlenecked_bytes: f64,
    share_sum_s: f64,
    interval_s: f64,
    /// Last interval's measurements, for traces and tests.
    last: JetMaxStats,
    updates: ControlInterval,
}

/// What the last control interval measured.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct JetMaxStats {
    /// Input rate y (bit/s).
    pub input_bps: f64,
    /// Flows counted as bottlenecked here, N.
    pub flows: f64,
    /// Rate of traffic limited elsewhere, S (bit/s).
    pub elsewhere_bps: f64,
}

impl JetMaxRouter {
    /// A router for a link of `capacity_bps`; the first update is at `start + D`. It starts
    /// advertising gamma C (no flow counted yet).
    pub fn new(cfg: JetMaxRouterConfig, capacity_bps: u64, start: Time) -> JetMaxRouter {
        let c = capacity_bps as f64;
        JetMaxRouter {
            cfg,
            capacity_bps: c,
            fair_bps: cfg.gamma * c,
            input_bytes: 0.0,
            bottlenecked_bytes: 0.0,
            share_sum_s: 0.0,
            interval_s: cfg.interval.as_secs_f64(),
            last: JetMaxStats::default(),
            updates: ControlInterval::starting(start, cfg.interval),
        }
    }

    /// The fair rate this link advertises (bit/s on the wire).
    pub fn fair_bps(&self) -> f64 {
        self.fair_bps
    }

    /// The last interval's measurements.
    pub fn stats(&self) -> JetMaxStats {
        self.last
    }

    fn update(&mut self) {
        let d = self.cfg.interval.as_secs_f64();
        let target = self.cfg.gamma * self.capacity_bps;
        let y = 8.0 * self.input_bytes / d;
        let n = self.share_sum_s / d;
        let s = y - 8.0 * self.bottlenecked_bytes / d;
        let a = target - s;
        let f = if n > 0.0 {
            a / n.max(1.0)
        } else if a >= 0.0 {
            target
        } else {
            self.fair_bps * target / y
        };
        self.fair_bps = f.clamp(self.cfg.min_fraction * self.capacity_bps, target);
        self.last = JetMaxStats { input_bps: y, flows: n, elsewhere_bps: s };
        self.input_bytes = 0.0;
        self.bottlenecked_bytes = 0.0;
        self.share_sum_s = 0.0;
    }
}

impl LinkAlgorithm for JetMaxRouter {
    fn on_enqueue(&mut self, _now: Time, pkt: &mut Packet, _queue: &mut dyn QueueView) -> Verdict {
        let bytes = pkt.wire_bytes as f64;
        self.input_bytes += bytes;
        if let (true, CongestionHeader::JetMax(h)) = (pkt.is_data(), &mut pkt.cc) {
            let hop = h.hop;
            h.hop = hop.saturating_add(1);
            if h.bottleneck == hop {
                self.share_sum_s += h.share_s as f64;
                self.bottlenecked_bytes += bytes;
            } else if h.bottleneck == NO_HOP {
                // A joining flow that does not know its bottleneck yet is counted at every link
                // it crosses (a probe stands for at most one flow per interval), so the links
                // make room before it starts.
                self.share_sum_s += (h.share_s as f64).min(self.interval_s);
                self.bottlenecked_bytes += bytes;
            }
            if (self.fair_bps as f32) < h.fair_bps {
                h.fair_bps = self.fair_bps as f32;
                h.candidate = hop;
            }
        }
        Verdict::Queue
    }

    fn poll_timeout(&self) -> Option<Time> {
        Some(self.updates.due())
    }

    fn on_timeout(&mut self, now: Time, _backlog_bytes: u64) {
        if !self.updates.take(now) {
            return;
        }
        self.update();
    }

    fn gauge(&self) -> f64 {
        self.fair_bps
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::jetmax::header::NO_HOP;
    use crate::algorithms::jetmax::JetMaxHeader;
    use crate::link::fake_queue::FakeQueue;
    use crate::wire::{Segment, SegmentKind};

    const C: u64 = 100_000_000;

    /// The defaults with a 20 ms interval, which the hand computations below use.
    const CFG: JetMaxRouterConfig = JetMaxRouterConfig { gamma: 0.95, interval: Dur::from_ms(20), min_fraction: 1e-6 };

    fn data(bytes: u32, h: JetMaxHeader) -> Packet {
        Packet {
            wire_bytes: bytes,
            seg: Segment { kind: SegmentKind::Data, ..Segment::default() },
            cc: CongestionHeader::JetMax(h),
            ..Packet::default()
        }
    }

    fn header(p: &Packet) -> JetMaxHeader {
        match p.cc {
            CongestionHeader::JetMax(h) => h,
            _ => unreachable!(),
        }
    }

    fn ms(k: u64) -> Time {
        Time::ZERO + Dur::from_ms(k)
    }

    /// `k` packets of 1250 B (10 kbit) from a flow sending at `x` bit/s that names `bottleneck`.
    fn send(r: &mut JetMaxRouter, k: u32, x: f64, bottleneck: u8) {
        for _ in 0..k {
            let h = JetMaxHeader { share_s: (10_000.0 / x) as f32, bottleneck, ..JetMaxHeader::default() };
            r.on_enqueue(ms(0), &mut data(1250, h), &mut FakeQueue::empty(C));
        }
    }

    /// Hand computation of one 20 ms interval on C = 100 Mb/s, gamma = 0.95 (target 95 Mb/s):
    /// flow a at 40 Mb/s and flow b at 20 Mb/s both counted here (80 and 40 packets of 10 kbit:
    /// shares 0.25 ms and 0.5 ms, sum 20 + 20 ms = 2 D: N = 2); flow c at 10 Mb/s limited
    /// elsewhere (20 packets), and 10 ACKs of 40 B of a reverse flow (3.2 kbit).
    ///   y = (80 + 40 + 20) x 10 kbit + 3.2 kbit = 1 403 200 bit / 20 ms
    ///     = 70.16 Mb/s; S = y - 1.2 Mbit / 20 ms = 70.16 - 60 = 10.16 Mb/s
    ///   F = (95 - 10.16) / 2 = 42.42 Mb/s
    #[test]
    fn one_interval_by_hand() {
        let mut r = JetMaxRouter::new(CFG, C, Time::ZERO);
        send(&mut r, 80, 40e6, 0);
        send(&mut r, 40, 20e6, 0);
        send(&mut r, 20, 10e6, 3);
        for _ in 0..10 {
            let mut ack = data(40, JetMaxHeader::default());
            ack.seg.kind = SegmentKind::Ack;
            r.on_enqueue(ms(0), &mut ack, &mut FakeQueue::empty(C));
        }
        r.on_timeout(ms(20), 0);
        let s = r.stats();
        assert!((s.flows - 2.0).abs() < 1e-6, "{s:?}");
        assert!((s.input_bps - 70.16e6).abs() < 1.0, "{s:?}");
        assert!((s.elsewhere_bps - 10.16e6).abs() < 1.0, "{s:?}");
        assert!((r.fair_bps() - 42.42e6).abs() < 10.0, "{}", r.fair_bps());
    }

    /// No flow counted here: a link with room advertises gamma C; one overloaded by flows
    /// counted elsewhere scales its rate by gamma C / y (here 95/190: from 95 to 47.5 Mb/s).
    #[test]
    fn no_counted_flow_advertises_room_or_pulls_flows_in() {
        let mut r = JetMaxRouter::new(CFG, C, Time::ZERO);
        send(&mut r, 100, 50e6, 1); // 50 Mb/s limited elsewhere
        r.on_timeout(ms(20), 0);
        assert_eq!(r.fair_bps(), 95e6);
        send(&mut r, 380, 190e6, 1); // 190 Mb/s limited elsewhere
        r.on_timeout(ms(40), 0);
        assert!((r.fair_bps() - 47.5e6).abs() < 1.0, "{}", r.fair_bps());
    }

    /// Forward pass: each link increments the hop counter and keeps the smallest fair rate with
    /// its own hop index; a link only counts the packets naming its own hop; ACKs are untouched.
    #[test]
    fn packets_learn_hops_and_the_smallest_fair_rate() {
        let mut fast = JetMaxRouter::new(CFG, 10 * C, Time::ZERO);
        let mut slow = JetMaxRouter::new(CFG, C, Time::ZERO);
        let mut third = JetMaxRouter::new(CFG, 10 * C, Time::ZERO);
        let h = JetMaxHeader { share_s: 1e-3, bottleneck: 1, ..JetMaxHeader::default() };
        let mut p = data(1250, h);
        for r in [&mut fast, &mut slow, &mut third] {
            r.on_enqueue(ms(0), &mut p, &mut FakeQueue::empty(C));
        }
        let h = header(&p);
        assert_eq!((h.hop, h.candidate, h.fair_bps), (3, 1, 95e6));
        assert_eq!((fast.share_sum_s, slow.share_sum_s, third.share_sum_s), (0.0, 1e-3f32 as f64, 0.0));
        let mut ack = data(40, JetMaxHeader { fair_bps: 1.0, candidate: NO_HOP, ..JetMaxHeader::default() });
        ack.seg.kind = SegmentKind::Ack;
        slow.on_enqueue(ms(0), &mut ack, &mut FakeQueue::empty(C));
        assert_eq!(header(&ack), JetMaxHeader { fair_bps: 1.0, candidate: NO_HOP, ..JetMaxHeader::default() });
    }

    /// Probes of a joining flow (bottleneck none) count at every link, each at most one flow
    /// per interval: a 40 ms share counts 40/20 -> capped at 1; two 5 ms shares count 0.5.
    #[test]
    fn joining_flows_count_everywhere_at_most_once_per_probe() {
        let mut r = JetMaxRouter::new(CFG, C, Time::ZERO);
        let probe = |share: f32| data(40, JetMaxHeader { share_s: share, ..JetMaxHeader::default() });
        r.on_enqueue(ms(0), &mut probe(0.04), &mut FakeQueue::empty(C));
        r.on_timeout(ms(20), 0);
        assert!((r.stats().flows - 1.0).abs() < 1e-9);
        r.on_enqueue(ms(20), &mut probe(0.005), &mut FakeQueue::empty(C));
        r.on_enqueue(ms(20), &mut probe(0.005), &mut FakeQueue::empty(C));
        r.on_timeout(ms(40), 0);
        assert!((r.stats().flows - 0.5).abs() < 1e-6, "{:?}", r.stats());
    }

    /// Single-link fixed point, any capacity: N flows counted here at any rates give F = gamma C
    /// / N at once (the count does not depend on the rates); sources that follow F settle with
    /// utilisation gamma and equal rates. 1 Mb/s, 10 Gb/s and 1e100 b/s (the papers' claim).
    #[test]
    fn single_link_fixed_point_for_any_capacity() {
        for &c in &[1e6, 1e10, 1e100] {
            let mut r = JetMaxRouter::new(CFG, 1, Time::ZERO);
            r.capacity_bps = c;
            let d = 0.02;
            // Three flows at very different rates, all counted here; feed the accumulators as a
            // fluid (packet quantisation is the simulator's business).
            let mut x = [c * 1e-3, c * 0.2, c * 0.9];
            for k in 0..40u64 {
                r.input_bytes = x.iter().sum::<f64>() * d / 8.0;
                r.bottlenecked_bytes = r.input_bytes;
                r.share_sum_s = 3.0 * d;
                r.on_timeout(ms(20 * (k + 1)), 0);
                for xi in x.iter_mut() {
                    *xi += 0.6 * (r.fair_bps() - *xi);
                }
            }
            let f = r.fair_bps();
            assert!((f / (0.95 * c / 3.0) - 1.0).abs() < 1e-9, "c {c}: {f}");
            for xi in x {
                assert!((xi / f - 1.0).abs() < 1e-9);
            }
        }
    }
}
