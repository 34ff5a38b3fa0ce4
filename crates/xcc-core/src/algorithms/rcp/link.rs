//! RCP's router (Dukkipati et al., IWQoS 2005) as in the Stanford ns-2 code "rcp.cc v4" and the
//! NetFPGA daemon (protocols.md 3.2-3.3): one rate `R` per output link, offered to every flow.
//!
//! Per packet on arrival: `input += s` (every packet); for data and probes carrying an RTT,
//! `sum_rtt_bytes += rtt s` and `sum_bytes += s`. Per data or probe packet on departure: the
//! header's rate becomes `min(rate, R)` (ACKs are never stamped). Every `T = min(d, 10 ms)`:
//!
//! ```text
//! sample = sum_rtt_bytes / sum_bytes                       byte-weighted mean RTT of the slot
//! g      = T/d  if sample >= d,  else (R / gC) (sample/d) (T/d)   (rise fast, fall slowly)
//! d      = g sample + (1 - g) d
//! y      = input / T
//! R      = R [1 + (T/d) (alpha (gC - y) - beta Q / d) / (gC)]    (gamma = virtual capacity)
//! R      = clamp(R, min_pprtt * 1000 B / d, gC)
//! ```
//!
//! with `Q` the instantaneous queue (bytes) at the timer. Initial `R = 0.05 gC`, `d = 200 ms`.
//! Decisions: the slot-boundary "spill" of ns-2's input counter is not modelled (our arrivals are
//! whole packets at their arrival instant); only data and probes contribute RTTs (ns-2 counts
//! any packet with an RTT; our ACKs copy the data's header, so counting them would let a
//! reverse-path link average the forward flows' RTTs twice).

use crate::analysis::opcount::Scalar;
use crate::link::{LinkAlgorithm, QueueView, Verdict};
use crate::packet::Packet;
use crate::time::{Dur, Time};
use crate::wire::CongestionHeader;

/// How the router's average RTT `d` follows the per-interval byte-weighted samples.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default, serde::Serialize)]
pub enum RcpRttFilter {
    /// ns-2 v4: rise with gain T/d, fall with gain (R/C)(sample/d)(T/d) (protocols.md 3.3).
    #[default]
    #[serde(rename = "ns2")]
    Ns2Ewma,
    /// `d` = the last interval's sample (no memory): an RCP whose `d` follows the traffic mix at
    /// once, for the instability study of seed 000 Section IX.
    #[serde(rename = "last")]
    LastSample,
}

/// Router parameters (protocols.md 3.6).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct RcpRouterConfig {
    pub alpha: f64,
    pub beta: f64,
    /// Virtual-capacity factor gamma (1 = the link's capacity).
    pub gamma: f64,
    /// Initial rate as a fraction of gamma C (ns-2 `init_rate_fact_` 0.05).
    pub init_rate_fact: f64,
    /// Rate floor in packets of 1000 B per average RTT (ns-2 `min_pprtt_` 0.01).
    pub min_pprtt: f64,
    /// Longest control interval (ns-2 `upd_timeslot_` 10 ms).
    pub upd_timeslot: Dur,
    /// Average RTT before any sample (ns-2: 200 ms).
    pub initial_rtt: Dur,
    pub rtt_filter: RcpRttFilter,
}

/// The parameter sets that circulate (protocols.md 3.6), by name.
pub const RCP_PRESETS: [(&str, f64, f64, &str); 3] = [
    ("stanford", 0.4, 1.0, "alpha 0.4, beta 1: Stanford single-bottleneck script, seed 000 Section IX"),
    ("fct", 0.1, 1.0, "alpha 0.1, beta 1: flow-completion-time paper reproduction, seed 004"),
    ("ns2", 0.4, 0.4, "alpha 0.4, beta 0.4: ns-2 ns-default.tcl"),
];

impl RcpRouterConfig {
    /// The configuration of a named preset (`stanford`, `fct`, `ns2`).
    pub fn preset(name: &str) -> Option<RcpRouterConfig> {
        RCP_PRESETS.iter().find(|p| p.0 == name).map(|&(_, alpha, beta, _)| RcpRouterConfig {
            alpha,
            beta,
            ..RcpRouterConfig::default()
        })
    }
}

impl Default for RcpRouterConfig {
    /// The `stanford` preset (alpha 0.4, beta 1), ns-2 defaults for the rest.
    fn default() -> Self {
        RcpRouterConfig {
            alpha: 0.4,
            beta: 1.0,
            gamma: 1.0,
            init_rate_fact: 0.05,
            min_pprtt: 0.01,
            upd_timeslot: Dur::from_ms(10),
            initial_rtt: Dur::from_ms(200),
            rtt_filter: RcpRttFilter::Ns2Ewma,
        }
    }
}

/// Packet size ns-2 uses in the rate floor.
const FLOOR_PACKET_BYTES: f64 = 1000.0;

/// Accumulators of one control interval.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct RcpAccumulators<S> {
    pub input_bytes: S,
    pub sum_rtt_bytes: S,
    pub sum_bytes: S,
}

/// Per-packet work on arrival; `rtt` is the RTT of a data or probe packet that carries one.
#[inline]
pub fn rcp_on_arrival<S: Scalar>(acc: &mut RcpAccumulators<S>, size: S, rtt: Option<S>) {
    acc.input_bytes = acc.input_bytes + size;
    if let Some(rtt) = rtt {
        acc.sum_rtt_bytes = acc.sum_rtt_bytes + rtt * size;
        acc.sum_bytes = acc.sum_bytes + size;
    }
}

/// Per-packet work on departure: the rate the packet leaves with.
#[inline]
pub fn rcp_on_departure<S: Scalar>(rate: S, carried: S) -> S {
    carried.min(rate)
}

/// One output link's RCP state.
#[derive(Clone, Debug)]
pub struct RcpRouter {
    cfg: RcpRouterConfig,
    /// gamma C in bytes/s.
    target: f64,
    /// Offered rate R in bytes/s.
    rate: f64,
    /// Average RTT d in seconds.
    avg_rtt: f64,
    /// Current control interval T in seconds.
    interval: f64,
    acc: RcpAccumulators<f64>,
    last_update: Time,
    next_update: Time,
}

impl RcpRouter {
    /// A router for a link of `capacity_bps`; the first update at `start + phase`.
    pub fn new(cfg: RcpRouterConfig, capacity_bps: u64, start: Time, phase: Dur) -> RcpRouter {
        let target = cfg.gamma * capacity_bps as f64 / 8.0;
        let d = cfg.initial_rtt.as_secs_f64();
        RcpRouter {
            cfg,
            target,
            rate: cfg.init_rate_fact * target,
            avg_rtt: d,
            interval: d.min(cfg.upd_timeslot.as_secs_f64()),
            acc: RcpAccumulators::default(),
            last_update: start,
            next_update: start + phase,
        }
    }

    /// Offered rate in bytes/s.
    pub fn rate(&self) -> f64 {
        self.rate
    }
    pub fn avg_rtt(&self) -> f64 {
        self.avg_rtt
    }
    pub fn interval(&self) -> f64 {
        self.interval
    }

    /// One control interval driven from outside, for drivers whose data is not packets (the
    /// session simulator's fluid): `acc` holds what arrived during the last `t` seconds (input
    /// bytes; bytes and RTT-weighted bytes of the traffic that carried an RTT), `queue_bytes`
    /// is the backlog now. Runs the law of the module docs; [`RcpRouter::interval`] is the
    /// next `T = min(d, 10 ms)`, for the driver to schedule.
    pub fn interval_update(&mut self, t: f64, acc: RcpAccumulators<f64>, queue_bytes: f64) {
        if t > 0.0 {
            self.acc = acc;
            self.update(t, queue_bytes);
        }
    }

    /// The control law for an interval of `t` seconds with `q` bytes queued (module docs).
    fn update(&mut self, t: f64, q: f64) {
        let c = self.cfg;
        let acc = self.acc;
        if acc.sum_bytes > 0.0 {
            let sample = acc.sum_rtt_bytes / acc.sum_bytes;
            let d = self.avg_rtt;
            self.avg_rtt = match c.rtt_filter {
                RcpRttFilter::Ns2Ewma => {
                    let g = if sample >= d { t / d } else { (self.rate / self.target) * (sample / d) * (t / d) };
                    let g = g.min(1.0);
                    g * sample + (1.0 - g) * d
                }
                RcpRttFilter::LastSample => sample,
            };
        }
        let d = self.avg_rtt;
        let y = acc.input_bytes / t;
        let change = (t / d) * (c.alpha * (self.target - y) - c.beta * q / d) / self.target;
        let floor = c.min_pprtt * FLOOR_PACKET_BYTES / d;
        self.rate = (self.rate * (1.0 + change)).clamp(floor, self.target);
        self.interval = d.min(c.upd_timeslot.as_secs_f64());
        self.acc = RcpAccumulators::default();
    }
}

/// Data and probes are stamped and carry RTTs; ACKs are not.
fn stamped_kind(pkt: &Packet) -> bool {
    pkt.is_data()
}

impl LinkAlgorithm for RcpRouter {
    fn on_enqueue(&mut self, _now: Time, pkt: &mut Packet, _queue: &mut dyn QueueView) -> Verdict {
        let rtt = match (stamped_kind(pkt), &pkt.cc) {
            (true, CongestionHeader::Rcp(h)) if h.rtt_us != 0 => Some(h.rtt_s()),
            _ => None,
        };
        rcp_on_arrival(&mut self.acc, pkt.wire_bytes as f64, rtt);
        Verdict::Queue
    }

    fn wants_dequeue(&self) -> bool {
        true
    }

    fn on_dequeue(&mut self, _now: Time, pkt: &mut Packet, _backlog_bytes: u64) {
        if !stamped_kind(pkt) {
            return;
        }
        if let CongestionHeader::Rcp(h) = &mut pkt.cc {
            // Carried as f32 (the wire precision).
            let r = rcp_on_departure(self.rate, h.rate as f64);
            if r < h.rate as f64 {
                h.rate = r as f32;
            }
        }
    }

    fn poll_timeout(&self) -> Option<Time> {
        Some(self.next_update)
    }

    fn on_timeout(&mut self, now: Time, backlog_bytes: u64) {
        if now < self.next_update {
            return;
        }
        let t = now.saturating_since(self.last_update).as_secs_f64();
        if t > 0.0 {
            self.update(t, backlog_bytes as f64);
        }
        self.last_update = now;
        self.next_update = now + Dur::from_secs_f64(self.interval);
    }

    /// The offered rate R in bit/s.
    fn gauge(&self) -> f64 {
        8.0 * self.rate
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::rcp::RcpHeader;
    use crate::analysis::opcount::{count, Counted, OpCounts};
    use crate::link::fake_queue::FakeQueue;
    use crate::wire::{Segment, SegmentKind};

    fn data(bytes: u32, rtt_us: u32) -> Packet {
        Packet {
            wire_bytes: bytes,
            seg: Segment { kind: SegmentKind::Data, ..Segment::default() },
            cc: CongestionHeader::Rcp(RcpHeader { rate: f32::INFINITY, rtt_us }),
            ..Packet::default()
        }
    }

    fn rate_of(p: &Packet) -> f32 {
        match p.cc {
            CongestionHeader::Rcp(h) => h.rate,
            _ => unreachable!(),
        }
    }

    const C: u64 = 100_000_000; // 12.5e6 B/s

    /// Presets by name.
    #[test]
    fn presets_are_selectable_by_name() {
        let p = RcpRouterConfig::preset("fct").unwrap();
        assert_eq!((p.alpha, p.beta), (0.1, 1.0));
        let p = RcpRouterConfig::preset("ns2").unwrap();
        assert_eq!((p.alpha, p.beta), (0.4, 0.4));
        assert_eq!(RcpRouterConfig::preset("stanford"), Some(RcpRouterConfig::default()));
        assert_eq!(RcpRouterConfig::preset("nope"), None);
    }

    /// One interval by hand. C = 12.5e6 B/s, R0 = 0.05 C = 625e3 B/s, d0 = 0.2 s, T = 10 ms.
    /// In 10 ms: 50 packets of 1000 B, all with rtt 0.1 s: sample = 0.1 < d, so
    /// g = (R/C)(sample/d)(T/d) = 0.05 * 0.5 * 0.05 = 0.00125, d = 0.00125 * 0.1 + 0.99875 * 0.2
    /// = 0.199875; y = 5e6 B/s; Q = 10 kB;
    /// R = 625e3 [1 + (0.01/d)(0.4 (12.5e6 - 5e6) - 1e4 / d) / 12.5e6].
    #[test]
    fn control_interval_matches_a_hand_computation() {
        let mut r = RcpRouter::new(RcpRouterConfig::default(), C, Time::ZERO, Dur::from_ms(10));
        let mut q = FakeQueue::empty(0);
        for k in 0..50u64 {
            r.on_enqueue(Time::ZERO + Dur::from_us(200 * k), &mut data(1000, 100_000), &mut q);
        }
        r.on_timeout(Time::ZERO + Dur::from_ms(10), 10_000);
        let d = 0.00125 * 0.1 + 0.99875 * 0.2;
        assert!((r.avg_rtt() - d).abs() < 1e-12, "d {}", r.avg_rtt());
        let want = 625e3 * (1.0 + (0.01 / d) * (0.4 * (12.5e6 - 5e6) - 1e4 / d) / 12.5e6);
        assert!((r.rate() - want).abs() < 1e-6, "R {} want {want}", r.rate());
        assert_eq!(r.interval(), 0.01);
        assert_eq!(r.poll_timeout(), Some(Time::ZERO + Dur::from_ms(20)));
    }

    /// With no cap (`upd_timeslot` beyond any RTT) the interval is the average RTT d itself,
    /// the law as the RCP papers write it: T = d after each update, and the next timer d later.
    #[test]
    fn uncapped_interval_follows_the_average_rtt() {
        let cfg = RcpRouterConfig { upd_timeslot: Dur(u64::MAX), ..RcpRouterConfig::default() };
        let mut r = RcpRouter::new(cfg, C, Time::ZERO, Dur::from_ms(200));
        assert_eq!(r.interval(), 0.2);
        let mut q = FakeQueue::empty(0);
        r.on_enqueue(Time::ZERO + Dur::from_ms(1), &mut data(1000, 300_000), &mut q);
        r.on_timeout(Time::ZERO + Dur::from_ms(200), 0);
        // sample 0.3 >= d: g = T/d = 1, so d jumps to the sample and T follows it.
        assert!((r.avg_rtt() - 0.3).abs() < 1e-12, "d {}", r.avg_rtt());
        assert_eq!(r.interval(), r.avg_rtt());
        assert_eq!(r.poll_timeout(), Some(Time::ZERO + Dur::from_ms(500)));
    }

    /// The externally driven interval runs the same law as the timer: the hand computation of
    /// `control_interval_matches_a_hand_computation` with the accumulators given directly.
    #[test]
    fn interval_update_from_outside_matches_the_timer() {
        let mut r = RcpRouter::new(RcpRouterConfig::default(), C, Time::ZERO, Dur::from_ms(10));
        let acc = RcpAccumulators { input_bytes: 50_000.0, sum_rtt_bytes: 0.1 * 50_000.0, sum_bytes: 50_000.0 };
        r.interval_update(0.01, acc, 10_000.0);
        let d = 0.00125 * 0.1 + 0.99875 * 0.2;
        assert!((r.avg_rtt() - d).abs() < 1e-12, "d {}", r.avg_rtt());
        let want = 625e3 * (1.0 + (0.01 / d) * (0.4 * (12.5e6 - 5e6) - 1e4 / d) / 12.5e6);
        assert!((r.rate() - want).abs() < 1e-6, "R {} want {want}", r.rate());
        // A zero-length interval changes nothing.
        r.interval_update(0.0, acc, 1e9);
        assert!((r.rate() - want).abs() < 1e-6);
    }

    /// A slot of longer RTTs raises d with gain T/d; T = min(d, 10 ms) follows a short d.
    #[test]
    fn average_rtt_rises_fast_and_sets_the_interval() {
        let cfg = RcpRouterConfig { initial_rtt: Dur::from_ms(4), ..RcpRouterConfig::default() };
        let mut r = RcpRouter::new(cfg, C, Time::ZERO, Dur::from_ms(4));
        assert_eq!(r.interval(), 0.004);
        let mut q = FakeQueue::empty(0);
        r.on_enqueue(Time::ZERO, &mut data(1000, 8_000), &mut q);
        r.on_timeout(Time::ZERO + Dur::from_ms(4), 0);
        // sample 8 ms >= d = 4 ms: g = T/d = 1, d = 8 ms; T = 8 ms.
        assert!((r.avg_rtt() - 0.008).abs() < 1e-12);
        assert!((r.interval() - 0.008).abs() < 1e-12);
    }

    /// The rate never leaves [min_pprtt 1000 B / d, gamma C].
    #[test]
    fn rate_is_clamped_between_floor_and_capacity() {
        let mut r = RcpRouter::new(RcpRouterConfig::default(), C, Time::ZERO, Dur::from_ms(10));
        for k in 1..=2000u64 {
            r.on_timeout(Time::ZERO + Dur::from_ms(10 * k), 0);
        }
        assert_eq!(r.rate(), 12.5e6, "idle link offers its capacity");
        // A huge queue drives the rate to the floor 0.01 * 1000 / 0.2 = 50 B/s.
        r.on_timeout(Time::ZERO + Dur::from_ms(20_010), 1_000_000_000);
        assert!((r.rate() - 50.0).abs() < 1e-9, "{}", r.rate());
    }

    /// Fixed point: with y = C and no queue the rate does not move.
    #[test]
    fn full_utilisation_without_queue_is_a_fixed_point() {
        let mut r = RcpRouter::new(RcpRouterConfig::default(), C, Time::ZERO, Dur::from_ms(10));
        r.rate = 3e6;
        let mut q = FakeQueue::empty(0);
        for _ in 0..125 {
            r.on_enqueue(Time::ZERO, &mut data(1000, 0), &mut q);
        }
        r.on_timeout(Time::ZERO + Dur::from_ms(10), 0);
        assert!((r.rate() - 3e6).abs() < 1e-6);
    }

    /// Departure stamps data with min(carried, R); ACKs keep theirs.
    #[test]
    fn departure_stamps_the_smaller_rate_on_data_only() {
        let mut r = RcpRouter::new(RcpRouterConfig::default(), C, Time::ZERO, Dur::from_ms(10));
        let mut p = data(1000, 0);
        r.on_dequeue(Time::ZERO, &mut p, 0);
        assert_eq!(rate_of(&p), 625e3);
        let mut low = data(1000, 0);
        if let CongestionHeader::Rcp(h) = &mut low.cc {
            h.rate = 1e3;
        }
        r.on_dequeue(Time::ZERO, &mut low, 0);
        assert_eq!(rate_of(&low), 1e3);
        let mut ack = data(40, 0);
        ack.seg.kind = SegmentKind::Ack;
        r.on_dequeue(Time::ZERO, &mut ack, 0);
        assert_eq!(rate_of(&ack), f32::INFINITY);
    }

    /// The last-sample filter takes each interval's byte-weighted RTT as d.
    #[test]
    fn last_sample_filter_follows_the_traffic_mix_at_once() {
        let cfg = RcpRouterConfig { rtt_filter: RcpRttFilter::LastSample, ..RcpRouterConfig::default() };
        let mut r = RcpRouter::new(cfg, C, Time::ZERO, Dur::from_ms(10));
        let mut q = FakeQueue::empty(0);
        // 3 packets at 4 ms and 1 at 200 ms, equal sizes: d = (3 * 4 + 200) / 4 = 53 ms.
        for rtt in [4_000, 4_000, 4_000, 200_000] {
            r.on_enqueue(Time::ZERO, &mut data(1000, rtt), &mut q);
        }
        r.on_timeout(Time::ZERO + Dur::from_ms(10), 0);
        assert!((r.avg_rtt() - 0.053).abs() < 1e-12, "{}", r.avg_rtt());
    }

    /// Per-packet work: arrival 3 additions + 1 multiplication, departure 1 comparison.
    #[test]
    fn per_packet_work_is_counted_from_the_code() {
        let ((), a) = count(|| {
            let mut acc =
                RcpAccumulators { input_bytes: Counted(0.0), sum_rtt_bytes: Counted(0.0), sum_bytes: Counted(0.0) };
            rcp_on_arrival(&mut acc, Counted(1000.0), Some(Counted(0.1)));
        });
        assert_eq!(a, OpCounts { adds: 3, muls: 1, divs: 0, cmps: 0 });
        let (_, d) = count(|| rcp_on_departure(Counted(1e6), Counted(2e6)));
        assert_eq!(d, OpCounts { adds: 0, muls: 0, divs: 0, cmps: 1 });
    }
}
