//! PIQI-RCP's router (Jain and Loguinov, "PIQI-RCP: Design and Analysis of Rate-Based Explicit
//! Congestion Control", IWQoS 2007), **reconstructed**: the paper's text was not reachable (only
//! its abstract, seed 002's slides and seed 004's parameter statement were); see
//! docs/algorithms/piqi-rcp.md for exactly what is known and what we chose.
//!
//! Known: one advertised rate per link, stamped into data packets (minimum along the path),
//! sources pace at it; the rate law has no queue term ("queue-independent"); a fixed control
//! interval `T = 5 ms`; a gain `kappa` bounded by `kappa* = T / (2 (T + RTT))` (the paper's
//! Eq. 35); it "uses the history of recent rate assignments" (seed 004).
//!
//! Reconstructed law, every `T` (`y`: bits that arrived during the interval over `T`, every
//! packet counted; `R_hist`: the rate this link advertised one RTT ago, from a ring of past
//! assignments; `N = y / R_hist`: flows it is carrying, counted in units of its own rate):
//!
//! ```text
//! R(n) = R(n-1) + kappa (gamma C - y(n)) / max(N(n), 1)        clamped to [R_min, C]
//! ```
//!
//! i.e. an integral controller of the rate mismatch, normalised by the flow count so that the
//! loop gain is `kappa` whatever the number of flows and the capacity. Linearised on one link
//! with `N` flows of delay `d` intervals, `r(n) = r(n-1) - kappa r(n-d)`, for which `kappa <=
//! 1 / (2 (d + 1))`, i.e. `kappa* = T / (2 (T + RTT))`, is a sufficient stability condition;
//! with heterogeneous delays the largest RTT is the binding one, so `kappa = auto` uses the
//! largest RTT carried by packets (a larger sample replaces it at once; without one it decays
//! with a time constant of 1 s).
//!
//! Per packet: on arrival one addition (bytes) and one comparison (largest RTT); on departure,
//! data packets only (RCP's rule, protocols.md 3.7.5), one comparison and maybe a store (rate).

use crate::link::control_interval::ControlInterval;
use crate::link::{LinkAlgorithm, QueueView, Verdict};
use crate::packet::Packet;
use crate::time::{Dur, Time};
use crate::wire::CongestionHeader;

/// How the gain is chosen.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum PiqiRcpKappa {
    /// `kappa* = T / (2 (T + RTT_max))`, `RTT_max` the largest RTT carried by packets, forgotten
    /// only slowly (time constant 1 s; before any, `rtt0`): the paper's bound, as seed 004 ran it.
    Auto,
    /// A fixed gain.
    Fixed(f64),
}

/// Which update law runs (both reconstructions; docs/algorithms/piqi-rcp.md).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum PiqiRcpLaw {
    /// `R + kappa (gamma C - y) / max(N, 1)`: the rate mismatch shared among the `N` flows.
    #[default]
    FlowNormalised,
    /// `R (1 + kappa (gamma C - y) / C)`: the multiplicative form protocols.md 4.1 recalls
    /// (unverified; run as a sensitivity of the reconstruction).
    Multiplicative,
}

/// Router parameters.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct PiqiRcpRouterConfig {
    /// Control interval T (5 ms: seed 004, "as suggested" by the paper).
    pub interval: Dur,
    /// Gain kappa.
    pub kappa: PiqiRcpKappa,
    /// Target utilisation gamma (our choice 0.98: without a queue term, only a target below
    /// capacity drains a transient queue).
    pub gamma: f64,
    /// Initial rate as a fraction of C (RCP's `init_rate_fact` 0.05, protocols.md 3.3).
    pub initial_fraction: f64,
    /// Floor as a fraction of C (the rate never reaches zero, protocols.md 3.7.3).
    pub min_fraction: f64,
    /// RTT assumed before any packet carried one (RCP's d0 = 200 ms).
    pub rtt0: Dur,
    /// The update law.
    pub law: PiqiRcpLaw,
}

impl Default for PiqiRcpRouterConfig {
    fn default() -> Self {
        PiqiRcpRouterConfig {
            interval: Dur::from_ms(5),
            kappa: PiqiRcpKappa::Auto,
            gamma: 0.98,
            initial_fraction: 0.05,
            min_fraction: 1e-5,
            rtt0: Dur::from_ms(200),
            law: PiqiRcpLaw::FlowNormalised,
        }
    }
}

/// Past assignments kept for `R_hist`: enough for an RTT of 256 control intervals (1.28 s at
/// 5 ms); longer RTTs use the oldest kept.
const HISTORY: usize = 256;

/// Time constant (s) over which a large RTT is forgotten once no packet carries it.
const RTT_MEMORY_S: f64 = 1.0;

/// One output link's PIQI-RCP state.
#[derive(Clone, Debug)]
pub struct PiqiRcpRouter {
    cfg: PiqiRcpRouterConfig,
    capacity_bps: f64,
    rate_bps: f64,
    /// Past rates, `history[(pos - k) % HISTORY]` = the rate k intervals ago.
    history: Box<[f64; HISTORY]>,
    pos: usize,
    /// Bytes arrived this interval (every packet).
    bytes: f64,
    /// Largest RTT (us) carried by a packet this interval.
    rtt_max_us: u32,
    /// RTT (s) the gain and the history lag use: the last interval's largest, or rtt0.
    rtt_s: f64,
    kappa: f64,
    /// Input rate of the last interval (bit/s), for traces and tests.
    last_input_bps: f64,
    updates: ControlInterval,
}

impl PiqiRcpRouter {
    /// A router for a link of `capacity_bps`; the first update is at `start + T`.
    pub fn new(cfg: PiqiRcpRouterConfig, capacity_bps: u64, start: Time) -> PiqiRcpRouter {
        let c = capacity_bps as f64;
        let r0 = (cfg.initial_fraction * c).max(cfg.min_fraction * c);
        let mut r = PiqiRcpRouter {
            cfg,
            capacity_bps: c,
            rate_bps: r0,
            history: Box::new([r0; HISTORY]),
            pos: 0,
            bytes: 0.0,
            rtt_max_us: 0,
            rtt_s: cfg.rtt0.as_secs_f64(),
            kappa: 0.0,
            last_input_bps: 0.0,
            updates: ControlInterval::starting(start, cfg.interval),
        };
        r.kappa = r.gain();
        r
    }

    /// The rate this link advertises (bit/s on the wire).
    pub fn rate_bps(&self) -> f64 {
        self.rate_bps
    }

    /// The gain used by the last update.
    pub fn kappa(&self) -> f64 {
        self.kappa
    }

    /// Input rate measured over the last interval (bit/s).
    pub fn input_bps(&self) -> f64 {
        self.last_input_bps
    }

    fn gain(&self) -> f64 {
        match self.cfg.kappa {
            PiqiRcpKappa::Fixed(k) => k,
            PiqiRcpKappa::Auto => {
                let t = self.cfg.interval.as_secs_f64();
                t / (2.0 * (t + self.rtt_s))
            }
        }
    }

    /// One control interval driven from outside (the session simulator, whose data is fluid):
    /// `bits` arrived during the interval, `rtt_max_us` is the largest RTT carried meanwhile.
    pub fn interval_update(&mut self, bits: f64, rtt_max_us: u32) {
        self.bytes = bits / 8.0;
        self.rtt_max_us = self.rtt_max_us.max(rtt_max_us);
        self.update();
    }

    /// The rate advertised `k` intervals ago (k = 0: the current one).
    fn rate_ago(&self, k: usize) -> f64 {
        let k = k.min(HISTORY - 1);
        self.history[(self.pos + HISTORY - k) % HISTORY]
    }

    /// One control interval: measures y and N, applies the law, records the new rate.
    fn update(&mut self) {
        let t = self.cfg.interval.as_secs_f64();
        // The binding RTT is the largest on the link: keep a large one for about a second
        // after its flow went quiet (a new flow's first packets carry no RTT yet), so the gain
        // never jumps up while a long-RTT flow is still being served.
        let seen = self.rtt_max_us as f64 * 1e-6;
        self.rtt_s = seen.max(self.rtt_s * (1.0 - t / RTT_MEMORY_S));
        self.kappa = self.gain();
        let y = 8.0 * self.bytes / t;
        // The traffic arriving now was sent at the rates advertised about one RTT ago.
        let lag = (self.rtt_s / t).round() as usize;
        let flows = (y / self.rate_ago(lag)).max(1.0);
        let c = self.capacity_bps;
        let next = match self.cfg.law {
            PiqiRcpLaw::FlowNormalised => self.rate_bps + self.kappa * (self.cfg.gamma * c - y) / flows,
            PiqiRcpLaw::Multiplicative => self.rate_bps * (1.0 + self.kappa * (self.cfg.gamma * c - y) / c),
        };
        self.rate_bps = next.clamp(self.cfg.min_fraction * c, c);
        self.pos = (self.pos + 1) % HISTORY;
        self.history[self.pos] = self.rate_bps;
        self.last_input_bps = y;
        self.bytes = 0.0;
        self.rtt_max_us = 0;
    }
}

impl LinkAlgorithm for PiqiRcpRouter {
    fn on_enqueue(&mut self, _now: Time, pkt: &mut Packet, _queue: &mut dyn QueueView) -> Verdict {
        self.bytes += pkt.wire_bytes as f64;
        if let CongestionHeader::PiqiRcp(h) = &pkt.cc {
            if pkt.is_data() && h.rtt_us > self.rtt_max_us {
                self.rtt_max_us = h.rtt_us;
            }
        }
        Verdict::Queue
    }

    fn wants_dequeue(&self) -> bool {
        true
    }

    /// Stamps on departure, data packets only (RCP's rule).
    fn on_dequeue(&mut self, _now: Time, pkt: &mut Packet, _backlog_bytes: u64) {
        if let (true, CongestionHeader::PiqiRcp(h)) = (pkt.is_data(), &mut pkt.cc) {
            if (self.rate_bps as f32) < h.rate_bps {
                h.rate_bps = self.rate_bps as f32;
            }
        }
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
        self.rate_bps
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::piqi_rcp::PiqiRcpHeader;
    use crate::link::fake_queue::FakeQueue;
    use crate::wire::{Segment, SegmentKind};

    const C: u64 = 100_000_000;

    fn data(bytes: u32, rtt_us: u32) -> Packet {
        Packet {
            wire_bytes: bytes,
            seg: Segment { kind: SegmentKind::Data, ..Segment::default() },
            cc: CongestionHeader::PiqiRcp(PiqiRcpHeader::request(rtt_us)),
            ..Packet::default()
        }
    }

    fn rate_of(p: &Packet) -> f32 {
        match p.cc {
            CongestionHeader::PiqiRcp(h) => h.rate_bps,
            _ => unreachable!(),
        }
    }

    fn ms(k: u64) -> Time {
        Time::ZERO + Dur::from_ms(k)
    }

    /// Feeds `packets` of 1250 B (10 kbit) carrying `rtt_us` during interval `k`, then ticks.
    fn interval(r: &mut PiqiRcpRouter, k: u64, packets: u32, rtt_us: u32) {
        for _ in 0..packets {
            r.on_enqueue(ms(5 * k), &mut data(1250, rtt_us), &mut FakeQueue::empty(C));
        }
        r.on_timeout(ms(5 * (k + 1)), 0);
    }

    /// kappa* = T / (2 (T + RTT)): RTT 100 ms gives 0.0238, 20 ms gives 0.1 (protocols.md 4.1).
    #[test]
    fn auto_gain_is_the_papers_bound_for_the_largest_rtt() {
        let mut r = PiqiRcpRouter::new(PiqiRcpRouterConfig::default(), C, Time::ZERO);
        assert!((r.kappa() - 0.005 / (2.0 * 0.205)).abs() < 1e-12, "rtt0 = 200 ms before any packet");
        // Packets with 20 ms and 100 ms RTTs: the largest binds.
        r.on_enqueue(ms(0), &mut data(1250, 20_000), &mut FakeQueue::empty(C));
        r.on_enqueue(ms(0), &mut data(1250, 100_000), &mut FakeQueue::empty(C));
        r.on_timeout(ms(5), 0);
        // rtt0 decayed one step (0.2 * 0.995 = 0.199) is above 100 ms: it still binds.
        assert!((r.kappa() - 0.005 / (2.0 * (0.005 + 0.199))).abs() < 1e-12, "{}", r.kappa());
        // Only 20 ms samples for 3 s: the remembered RTT decays to them (0.995^600 * 0.2 < 0.02).
        for k in 1..600 {
            interval(&mut r, k, 1, 20_000);
        }
        assert!((r.kappa() - 0.1).abs() < 1e-12, "{}", r.kappa());
        // A 100 ms sample binds at once.
        interval(&mut r, 600, 1, 100_000);
        assert!((r.kappa() - 0.005 / 0.21).abs() < 1e-12, "{}", r.kappa());
    }

    /// Hand computation of one interval. C = 100 Mb/s, gamma = 0.98, kappa = 0.1 fixed, R0 =
    /// 5 Mb/s (0.05 C), RTT 20 ms = 4 intervals. 60 packets of 10 kbit in 5 ms: y = 120 Mb/s.
    /// R_hist = R0 (history starts full of R0): N = 120/5 = 24.
    /// R1 = 5e6 + 0.1 (98e6 - 120e6) / 24 = 5e6 - 91 666.67 = 4 908 333.33 bit/s.
    #[test]
    fn one_interval_by_hand() {
        let cfg = PiqiRcpRouterConfig { kappa: PiqiRcpKappa::Fixed(0.1), ..PiqiRcpRouterConfig::default() };
        let mut r = PiqiRcpRouter::new(cfg, C, Time::ZERO);
        interval(&mut r, 0, 60, 20_000);
        assert!((r.input_bps() - 120e6).abs() < 1e-3);
        assert!((r.rate_bps() - (5e6 - 0.1 * 22e6 / 24.0)).abs() < 1e-6, "{}", r.rate_bps());
    }

    /// The alternative law by hand, same interval: R1 = R0 (1 + kappa (gamma C - y) / C)
    /// = 5e6 (1 + 0.1 (98e6 - 120e6) / 100e6) = 5e6 (1 - 0.022) = 4 890 000 bit/s.
    #[test]
    fn multiplicative_law_by_hand() {
        let cfg = PiqiRcpRouterConfig {
            kappa: PiqiRcpKappa::Fixed(0.1),
            law: PiqiRcpLaw::Multiplicative,
            ..PiqiRcpRouterConfig::default()
        };
        let mut r = PiqiRcpRouter::new(cfg, C, Time::ZERO);
        interval(&mut r, 0, 60, 20_000);
        assert!((r.rate_bps() - 4_890_000.0).abs() < 1e-6, "{}", r.rate_bps());
    }

    /// The flow count uses the rate advertised one RTT ago, not the current one: after the rate
    /// changed, N = y / R(n - RTT/T). RTT 10 ms = 2 intervals (also rtt0, so the lag is 2 from
    /// the start); kappa 0.5 fixed; C = 100 Mb/s.
    ///   n=0: y = 0           -> R1 = 5e6 + 0.5 (98e6 - 0)/1 = 54e6
    ///   n=1: y = 0           -> R2 = 54e6 + 0.5 * 98e6 = 103e6 -> clamped to C = 100e6
    ///   n=2: y = 10 Mb/s (5 pkts), R_hist = R(2 - 2) = R0... the ring holds [R0, R1, R2]:
    ///        two intervals before R2 is R0 = 5e6 -> N = 2
    ///        R3 = 100e6 + 0.5 (98e6 - 10e6) / 2 = 122e6 -> clamped to 100e6
    ///   n=3: y = 200 Mb/s (100 pkts), R_hist = R1 = 54e6 -> N = 3.7037
    ///        R4 = 100e6 + 0.5 (98e6 - 200e6) / 3.7037 = 100e6 - 13.77e6 = 86.23e6
    #[test]
    fn flow_count_uses_the_rate_of_one_rtt_ago() {
        let cfg = PiqiRcpRouterConfig {
            kappa: PiqiRcpKappa::Fixed(0.5),
            rtt0: Dur::from_ms(10),
            ..PiqiRcpRouterConfig::default()
        };
        let mut r = PiqiRcpRouter::new(cfg, C, Time::ZERO);
        interval(&mut r, 0, 0, 0);
        assert!((r.rate_bps() - 54e6).abs() < 1e-6);
        interval(&mut r, 1, 0, 0);
        assert_eq!(r.rate_bps(), 100e6);
        interval(&mut r, 2, 5, 10_000);
        assert_eq!(r.rate_bps(), 100e6);
        interval(&mut r, 3, 100, 10_000);
        let n = 200e6 / 54e6;
        assert!((r.rate_bps() - (100e6 - 0.5 * 102e6 / n)).abs() < 1e-3, "{}", r.rate_bps());
    }

    /// Fixed point on one link: N flows each sending R(n - d) -> R settles at gamma C / N and
    /// the input at gamma C (utilisation at target, rates equal). Simulated as a delay line of
    /// d = 4 intervals (RTT 20 ms), kappa = kappa*, for N = 1, 3 and 10, C 100 Mb/s and 10 Gb/s.
    #[test]
    fn single_link_fixed_point_is_gamma_c_over_n() {
        for &(c, n) in &[(C, 1u32), (C, 3), (C, 10), (10_000_000_000, 3)] {
            let mut r = PiqiRcpRouter::new(PiqiRcpRouterConfig::default(), c, Time::ZERO);
            let mut sent = std::collections::VecDeque::from(vec![r.rate_bps(); 4]);
            for k in 0..2000u64 {
                // Bits the N flows sent at the rate they heard 4 intervals ago.
                let rate = sent.pop_front().unwrap();
                r.bytes = rate * n as f64 * 0.005 / 8.0;
                r.rtt_max_us = 20_000;
                r.on_timeout(ms(5 * (k + 1)), 0);
                sent.push_back(r.rate_bps());
            }
            let target = 0.98 * c as f64 / n as f64;
            assert!((r.rate_bps() / target - 1.0).abs() < 1e-6, "c {c} n {n}: {} vs {target}", r.rate_bps());
            assert!((r.input_bps() / (0.98 * c as f64) - 1.0).abs() < 1e-5);
        }
    }

    /// Data packets leave with min(carried, R); ACKs keep their echo; R is clamped to [R_min, C].
    #[test]
    fn stamps_the_minimum_on_departing_data_only() {
        let cfg = PiqiRcpRouterConfig { rtt0: Dur::from_ms(1), ..PiqiRcpRouterConfig::default() };
        let mut r = PiqiRcpRouter::new(cfg, C, Time::ZERO);
        let mut p = data(1500, 0);
        r.on_dequeue(ms(0), &mut p, 0);
        assert_eq!(rate_of(&p), 5e6);
        let mut low = data(1500, 0);
        low.cc = CongestionHeader::PiqiRcp(PiqiRcpHeader { rate_bps: 1e6, rtt_us: 0 });
        r.on_dequeue(ms(0), &mut low, 0);
        assert_eq!(rate_of(&low), 1e6);
        let mut ack = data(40, 0);
        ack.seg.kind = SegmentKind::Ack;
        r.on_dequeue(ms(0), &mut ack, 0);
        assert_eq!(rate_of(&ack), f32::INFINITY);
        // Normalised by the flow count, one interval takes off at most kappa R (here kappa* =
        // 0.005 / (2 * 0.006) for RTT 1 ms); a lasting overload drives R to the floor, not below.
        interval(&mut r, 0, 10_000, 1000);
        assert!(r.rate_bps() >= (1.0 - r.kappa()) * 5e6);
        for k in 1..40 {
            interval(&mut r, k, 10_000, 1000);
        }
        assert_eq!(r.rate_bps(), 1e-5 * C as f64);
    }
}
