//! MaxNet's source (seed 000, Section III and Fig. 2) with MaxStart (Section IV-B), and its
//! receiver, which echoes the price averaged over one RTT (Section VI).
//!
//! Per ACK, if `dt_min` has elapsed since the last update (`dt`), with `q` the latest echoed
//! price and `tau` the flow's minimum RTT (eq. (10)):
//!
//! ```text
//! xi += (alpha eta dt / tau^2) ((T alpha / tau - 1) q - T xi)   clipped at xi*(q) if it overshoots
//! W   = tau x_max exp(xi - q alpha / tau)                       (bits in flight)
//! ```
//!
//! with the equilibrium `xi*(q) = alpha q / tau - q / T`, where `W = tau D(q)`, `D(q) = x_max
//! exp(-q/T)`: every flow whose path maximum price is `q` gets the same rate, whatever its RTT.
//! As in the paper's Linux implementation, losses do not change the window (the transport still
//! retransmits).
//!
//! MaxStart: the first data packet (the SYN, when the connection opens with one) asks the path
//! for its smallest spare capacity `S`; the flow
//! starts at rate `r = S`, then on the first ACK at least `tau/16` after the previous update
//! `r += Delta dt / (2 tau)`, `Delta = D(q) - S`, until `r` exceeds the price rate `D(q)`; then
//! `xi` starts at `xi*(q)` (protocols.md 1.7 P4) and eq. (10) takes over. Until the first echo
//! arrives the window is one segment.
//!
//! Paced (`pace`, our option): the fluid model's source rate `x = W / tau` is also the pacing
//! rate, and the window gets two segments of headroom, so that flows whose `W` is a fraction of
//! a segment (short RTTs, low rates) send at `x` instead of at the one-segment floor's
//! `mss / RTT`.

use crate::algorithms::maxnet::header::{maxstart_field, price_field, read_field, MaxNetField};
use crate::algorithms::maxnet::MaxNetHeader;
use crate::host::{AckEvent, CongestionEvent, Controller, Echoer};
use crate::time::{Dur, Time};
use crate::wire::CongestionHeader;

/// A paced source sends at least one packet per this many minimum RTTs.
const PACE_FLOOR_RTTS: f64 = 8.0;

/// Source parameters (seed 000, Section VI).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct MaxNetConfig {
    /// Largest supported rate x_max in bit/s (1e15).
    pub x_max_bps: f64,
    /// Demand-function scale T in seconds (0.4).
    pub t_s: f64,
    /// Overall loop gain alpha (0.66).
    pub alpha: f64,
    /// Lead-lag zero eta (0.06).
    pub eta: f64,
    /// Minimum interval between window updates dt_min (1 us: every ACK).
    pub dt_min: Dur,
    /// Start with MaxStart (true, as the paper) or with one segment and the price law.
    pub maxstart: bool,
    /// Segment payload, for the one-segment floor.
    pub mss_bytes: u32,
    /// Pace at the source rate `x = W / tau` (ours; the paper's sources are window-based).
    pub pace: bool,
    /// A full data packet on the wire: pacing spaces packets by this, so the payload rate is `x`.
    pub packet_bytes: u32,
}

impl Default for MaxNetConfig {
    fn default() -> Self {
        MaxNetConfig {
            x_max_bps: 1e15,
            t_s: 0.4,
            alpha: 0.66,
            eta: 0.06,
            dt_min: Dur::from_us(1),
            maxstart: true,
            mss_bytes: 1460,
            pace: false,
            packet_bytes: 1500,
        }
    }
}

#[derive(Copy, Clone, Debug, PartialEq)]
enum Phase {
    /// Waiting for the first echo (MaxStart's spare capacity, or the first price).
    Probing,
    /// Ramping linearly from the spare capacity towards the price rate.
    MaxStart { rate_bps: f64, start_bps: f64, last: Time },
    /// Eq. (10).
    Price,
}

/// A MaxNet source.
#[derive(Clone, Debug)]
pub struct MaxNet {
    cfg: MaxNetConfig,
    phase: Phase,
    xi: f64,
    /// Latest echoed price (seconds), once one arrived.
    q: Option<f64>,
    /// MaxStart's spare capacity (bit/s), once echoed.
    spare_bps: Option<f64>,
    tau: f64,
    /// Smallest RTT sample of an ACK of data: `tau` once there is one. A SYN's sample has no
    /// payload to serialise, so it is shorter than any data packet's (by 1.2 ms per 1500 B at
    /// 10 Mbit/s); as `tau` it would make `W = tau D(q)` a rate `tau / RTT` short of `D(q)`,
    /// which the price cannot make up once it sits at its lower clip. It serves until the
    /// first data is acknowledged (MaxStart's first window).
    data_min_rtt: Option<Dur>,
    last_update: Time,
    window_bits: f64,
    stamped: u64,
}

impl MaxNet {
    pub fn new(cfg: MaxNetConfig) -> MaxNet {
        MaxNet {
            cfg,
            phase: Phase::Probing,
            xi: 0.0,
            q: None,
            spare_bps: None,
            tau: 0.0,
            data_min_rtt: None,
            last_update: Time::ZERO,
            window_bits: 8.0 * cfg.mss_bytes as f64,
            stamped: 0,
        }
    }

    /// D(q) = x_max exp(-q / T): the rate a price asks for.
    pub fn demand(&self, q: f64) -> f64 {
        self.cfg.x_max_bps * (-q / self.cfg.t_s).exp()
    }

    /// xi*(q): the equilibrium of eq. (10) for price q.
    fn xi_star(&self, q: f64) -> f64 {
        self.cfg.alpha * q / self.tau - q / self.cfg.t_s
    }

    /// The target rate (bit/s) the window encodes.
    pub fn rate_bps(&self) -> f64 {
        if self.tau > 0.0 {
            self.window_bits / self.tau
        } else {
            0.0
        }
    }

    pub fn xi(&self) -> f64 {
        self.xi
    }

    /// Pacing applies: the option is on and the source has a rate (after the first echo).
    fn paced(&self) -> bool {
        self.cfg.pace && self.phase != Phase::Probing && self.tau > 0.0
    }

    /// `tau` is the smallest RTT measured so far (seed 000's "minimum RTT measurement"), so it
    /// changes: from the SYN's sample to the first data sample, and down as queues drain. The
    /// window `W = tau D(q) exp(xi - xi*(q))` must not jump when it does: `xi` moves with its
    /// equilibrium `xi*(q) = alpha q / tau - q / T`, so `xi - xi*` is kept. Left alone, a `tau`
    /// falling from 280 to 160 ms (a 10,000-packet queue drained) cuts `W` by
    /// `exp(alpha q (1/0.16 - 1/0.28))`, about 10^4 at q = 5.5 s, and a `tau` rising from the
    /// SYN's 10 ms to a queued 130 ms multiplies it by 10^145 (issue #35: the 8 GiB abort).
    fn rebase_xi(&mut self, tau: f64) {
        if self.phase == Phase::Price && self.tau > 0.0 && tau != self.tau {
            if let Some(q) = self.q {
                self.xi += self.cfg.alpha * q * (1.0 / tau - 1.0 / self.tau);
            }
        }
    }

    fn price_law(&mut self, now: Time, q: f64) {
        let c = &self.cfg;
        let dt = now.saturating_since(self.last_update).as_secs_f64();
        let star = self.xi_star(q);
        let step =
            c.alpha * c.eta * dt / (self.tau * self.tau) * ((c.t_s * c.alpha / self.tau - 1.0) * q - c.t_s * self.xi);
        let next = self.xi + step;
        // Clip at the equilibrium if the discrete step jumped over it (Section VI).
        self.xi = if (self.xi - star) * (next - star) < 0.0 { star } else { next };
        self.window_bits = self.tau * c.x_max_bps * (self.xi - q * c.alpha / self.tau).exp();
        self.last_update = now;
    }
}

impl Controller for MaxNet {
    fn on_ack(&mut self, now: Time, ack: &AckEvent) {
        if ack.min_rtt == Dur::ZERO {
            return;
        }
        if let (Some(r), true) = (ack.rtt_sample, ack.newly_acked_bytes > 0) {
            self.data_min_rtt = Some(self.data_min_rtt.map_or(r, |m| m.min(r)));
        }
        let tau = self.data_min_rtt.unwrap_or(ack.min_rtt).as_secs_f64();
        self.rebase_xi(tau);
        self.tau = tau;
        match self.phase {
            Phase::Probing => {
                if let Some(s) = self.spare_bps {
                    self.phase = Phase::MaxStart { rate_bps: s, start_bps: s, last: now };
                    self.window_bits = s * self.tau;
                } else if let (Some(q), false) = (self.q, self.cfg.maxstart) {
                    self.xi = self.xi_star(q);
                    self.last_update = now;
                    self.phase = Phase::Price;
                    self.price_law(now, q);
                }
            }
            Phase::MaxStart { rate_bps, start_bps, last } => {
                let Some(q) = self.q else { return };
                let price_rate = self.demand(q);
                if rate_bps > price_rate {
                    // MaxStart ends: continue from the equilibrium of the current price (P4).
                    self.xi = self.xi_star(q);
                    self.last_update = now;
                    self.phase = Phase::Price;
                    self.price_law(now, q);
                } else if now.saturating_since(last).as_secs_f64() >= self.tau / 16.0 {
                    let dt = now.saturating_since(last).as_secs_f64();
                    let rate = rate_bps + (price_rate - start_bps) * dt / (2.0 * self.tau);
                    self.phase = Phase::MaxStart { rate_bps: rate, start_bps, last: now };
                    self.window_bits = rate * self.tau;
                }
            }
            Phase::Price => {
                if let Some(q) = self.q {
                    if now.saturating_since(self.last_update) >= self.cfg.dt_min {
                        self.price_law(now, q);
                    }
                }
            }
        }
    }

    /// Losses and ECN leave the window alone: it is set by the price (seed 000 Section VI).
    fn on_congestion_event(&mut self, _now: Time, _event: CongestionEvent, _flight: u64) {}

    fn on_feedback(&mut self, _now: Time, echo: &CongestionHeader) {
        if let CongestionHeader::MaxNet(h) = echo {
            match read_field(h.echo) {
                MaxNetField::MaxStart(qs) if self.spare_bps.is_none() => self.spare_bps = Some(self.demand(qs)),
                MaxNetField::MaxStart(_) => {}
                MaxNetField::Price(q) if q > 0.0 => self.q = Some(q),
                MaxNetField::Price(_) => {}
            }
        }
    }

    fn window_bytes(&self) -> u64 {
        let floor = self.cfg.mss_bytes as u64;
        let w = ((self.window_bits / 8.0) as u64).max(floor);
        if self.paced() {
            // Headroom: the pacer sets the rate, not the window's granularity.
            w + 2 * floor
        } else {
            w
        }
    }

    /// Paced: the transport re-times its pacer when the rate changes (a flow that started at
    /// a tiny MaxStart rate must not wait out that rate's gap).
    fn is_rate_based(&self) -> bool {
        self.cfg.pace
    }

    /// At least one packet per `PACE_FLOOR_RTTS` minimum RTTs: the law runs on ACKs, so a
    /// flow paced at a near-zero rate (MaxStart on a full path starts at its tiny spare
    /// capacity) would otherwise never hear the price again.
    fn pacing_rate_bps(&self) -> Option<f64> {
        if !self.paced() {
            return None;
        }
        let wire = self.cfg.packet_bytes as f64 * 8.0;
        let x = self.rate_bps() * self.cfg.packet_bytes as f64 / self.cfg.mss_bytes as f64;
        Some(x.max(wire / (PACE_FLOOR_RTTS * self.tau)))
    }

    fn stamp(&mut self, _now: Time, hdr: &mut CongestionHeader) {
        // The first data packet asks for the spare capacity (routers raise the equivalent
        // price from 0), the others for the price.
        let price = if self.stamped == 0 && self.cfg.maxstart { maxstart_field(0.0) } else { price_field(0.0) };
        self.stamped += 1;
        *hdr = CongestionHeader::MaxNet(MaxNetHeader { echo: 0, price });
    }

    /// The SYN asks what the first data packet would (seed 000: MaxStart "fills the pipe one
    /// RTT after the SYN"), every SYN again since a lost one brings nothing back; the data
    /// that follows asks for the price.
    fn stamp_syn(&mut self, _now: Time, hdr: &mut CongestionHeader) {
        let price = if self.cfg.maxstart { maxstart_field(0.0) } else { price_field(0.0) };
        self.stamped = self.stamped.max(1);
        *hdr = CongestionHeader::MaxNet(MaxNetHeader { echo: 0, price });
    }
}

/// MaxNet's receiver: echoes the price averaged over the last `window` (one RTT), each sample
/// weighted by the time since the previous one (seed 000 Section VI); a MaxStart value is echoed
/// as it came, at once.
#[derive(Clone, Debug)]
pub struct MaxNetEcho {
    window: Dur,
    /// (arrival time, price, weight in ns) of the samples in the window.
    samples: std::collections::VecDeque<(Time, f64, f64)>,
    sum: f64,
    weight: f64,
    last: Option<Time>,
    pending_maxstart: Option<u32>,
}

impl MaxNetEcho {
    /// `window` is the averaging horizon: the flow's RTT, which the driver knows from the path.
    pub fn new(window: Dur) -> MaxNetEcho {
        MaxNetEcho {
            window,
            samples: std::collections::VecDeque::new(),
            sum: 0.0,
            weight: 0.0,
            last: None,
            pending_maxstart: None,
        }
    }

    /// The current average price.
    pub fn average(&self) -> Option<f64> {
        match (self.samples.back(), self.weight > 0.0) {
            (_, true) => Some(self.sum / self.weight),
            (Some(&(_, q, _)), false) => Some(q),
            (None, false) => None,
        }
    }
}

impl Echoer for MaxNetEcho {
    fn on_data(&mut self, now: Time, hdr: &CongestionHeader) {
        let CongestionHeader::MaxNet(h) = hdr else { return };
        match read_field(h.price) {
            MaxNetField::MaxStart(_) => self.pending_maxstart = Some(h.price),
            MaxNetField::Price(q) => {
                let w = self.last.map_or(0.0, |t| now.saturating_since(t).as_ns() as f64);
                self.last = Some(now);
                self.samples.push_back((now, q, w));
                self.sum += q * w;
                self.weight += w;
                while let Some(&(t, q0, w0)) = self.samples.front() {
                    if now.saturating_since(t) <= self.window || self.samples.len() == 1 {
                        break;
                    }
                    self.samples.pop_front();
                    self.sum -= q0 * w0;
                    self.weight -= w0;
                }
                if self.weight <= 0.0 {
                    // Rounding drift or a lone sample: restart the sums from what is held.
                    self.sum = self.samples.iter().map(|s| s.1 * s.2).sum();
                    self.weight = self.samples.iter().map(|s| s.2).sum();
                }
            }
        }
    }

    fn echo(&mut self, _now: Time) -> CongestionHeader {
        let echo = match self.pending_maxstart.take() {
            Some(field) => field,
            None => self.average().map_or(0, price_field),
        };
        CongestionHeader::MaxNet(MaxNetHeader { echo, price: 0 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(min_rtt_ms: u64) -> AckEvent {
        AckEvent { min_rtt: Dur::from_ms(min_rtt_ms), ..AckEvent::default() }
    }

    fn echo_price(q: f64) -> CongestionHeader {
        CongestionHeader::MaxNet(MaxNetHeader { echo: price_field(q), price: 0 })
    }

    /// At a fixed price the window converges to tau D(q): the same rate for every RTT.
    #[test]
    fn equilibrium_rate_is_the_demand_whatever_the_rtt() {
        let q = 5.6;
        for rtt_ms in [10u64, 29, 150] {
            let mut s = MaxNet::new(MaxNetConfig { maxstart: false, ..MaxNetConfig::default() });
            s.on_feedback(Time::ZERO, &echo_price(q));
            let mut now = Time::ZERO;
            for _ in 0..200_000 {
                now += Dur::from_us(100);
                s.on_ack(now, &ack(rtt_ms));
            }
            let want = 1e15 * (-decode(q) / 0.4).exp();
            assert!((s.rate_bps() / want - 1.0).abs() < 1e-6, "rtt {rtt_ms}: {} vs {want}", s.rate_bps());
        }
    }

    fn decode(q: f64) -> f64 {
        crate::algorithms::maxnet::header::decode_price(price_field(q))
    }

    /// Starting away from equilibrium, xi moves towards xi*(q) and never past it (the clip).
    #[test]
    fn xi_approaches_its_equilibrium_without_overshoot() {
        let mut s = MaxNet::new(MaxNetConfig { maxstart: false, ..MaxNetConfig::default() });
        s.on_feedback(Time::ZERO, &echo_price(6.0));
        s.on_ack(Time::ZERO + Dur::from_ms(1), &ack(30));
        let star = s.xi_star(decode(6.0));
        // Price changes: the new equilibrium is above; xi rises monotonically to it.
        s.on_feedback(Time::ZERO, &echo_price(5.0));
        let star5 = s.xi_star(decode(5.0));
        assert!(star5 < star);
        let mut prev = s.xi();
        let mut now = Time::ZERO + Dur::from_ms(1);
        for _ in 0..10_000 {
            now += Dur::from_ms(10); // big steps would overshoot without the clip
            s.on_ack(now, &ack(30));
            assert!(s.xi() <= prev + 1e-12 && s.xi() >= star5 - 1e-12);
            prev = s.xi();
        }
        assert!((s.xi() - star5).abs() < 1e-9);
    }

    /// MaxStart: probe with the flag, start at the echoed spare capacity, ramp by
    /// Delta dt / (2 tau) no more often than tau/16, then hand over to the price law.
    #[test]
    fn maxstart_ramps_from_spare_capacity_to_the_price_rate() {
        let mut s = MaxNet::new(MaxNetConfig::default());
        let mut hdr = CongestionHeader::None;
        s.stamp(Time::ZERO, &mut hdr);
        let CongestionHeader::MaxNet(h) = hdr else { panic!() };
        assert!(matches!(read_field(h.price), MaxNetField::MaxStart(_)));
        s.stamp(Time::ZERO, &mut hdr);
        let CongestionHeader::MaxNet(h) = hdr else { panic!() };
        assert!(matches!(read_field(h.price), MaxNetField::Price(_)));
        // Spare 100 Mb/s echoed, then a price asking for 500 Mb/s.
        let qs = 0.4 * (1e15f64 / 1e8).ln();
        s.on_feedback(Time::ZERO, &CongestionHeader::MaxNet(MaxNetHeader { echo: maxstart_field(qs), price: 0 }));
        let t0 = Time::ZERO + Dur::from_ms(20);
        s.on_ack(t0, &ack(20));
        assert!((s.rate_bps() / 1e8 - 1.0).abs() < 1e-3);
        let q = 0.4 * (1e15f64 / 5e8).ln();
        s.on_feedback(t0, &echo_price(q));
        // An ACK sooner than tau/16 = 1.25 ms changes nothing.
        s.on_ack(t0 + Dur::from_ms(1), &ack(20));
        assert!((s.rate_bps() / 1e8 - 1.0).abs() < 1e-3);
        // One tau later the rate has risen by Delta/2.
        let mut now = t0;
        for _ in 0..16 {
            now += Dur::from_us(1250);
            s.on_ack(now, &ack(20));
        }
        assert!((s.rate_bps() / 3e8 - 1.0).abs() < 1e-2, "{}", s.rate_bps());
        for _ in 0..40 {
            now += Dur::from_us(1250);
            s.on_ack(now, &ack(20));
        }
        assert!(matches!(s.phase, Phase::Price), "left MaxStart above the price rate");
    }

    #[test]
    fn losses_leave_the_window_alone() {
        let mut s = MaxNet::new(MaxNetConfig { maxstart: false, ..MaxNetConfig::default() });
        s.on_feedback(Time::ZERO, &echo_price(6.0));
        s.on_ack(Time::ZERO + Dur::from_ms(1), &ack(30));
        let w = s.window_bytes();
        s.on_congestion_event(Time::ZERO, CongestionEvent::Loss, w);
        s.on_congestion_event(Time::ZERO, CongestionEvent::Timeout, w);
        assert_eq!(s.window_bytes(), w);
    }

    /// Paced: the pacing rate is the window's rate on the wire, and a window below one segment
    /// no longer floors the rate at one segment per RTT.
    #[test]
    fn paced_source_sends_at_its_rate_below_one_segment_per_rtt() {
        let cfg = MaxNetConfig { maxstart: false, pace: true, packet_bytes: 1500, ..MaxNetConfig::default() };
        let mut s = MaxNet::new(cfg);
        assert_eq!(s.pacing_rate_bps(), None, "no rate before the first echo");
        // A price asking for 2 Mb/s on a 4 ms RTT: W = 8000 bits, 0.68 segments.
        let q = 0.4 * (1e15f64 / 2e6).ln();
        s.on_feedback(Time::ZERO, &echo_price(q));
        s.on_ack(Time::ZERO + Dur::from_ms(4), &ack(4));
        let x = s.rate_bps();
        assert!((x / 2e6 - 1.0).abs() < 1e-3, "{x}");
        let r = s.pacing_rate_bps().unwrap();
        assert!((r - x * 1500.0 / 1460.0).abs() < 1e-6, "{r}");
        assert_eq!(s.window_bytes(), 3 * 1460, "one-segment floor plus two segments of headroom");
        let unpaced = MaxNet::new(MaxNetConfig { maxstart: false, ..MaxNetConfig::default() });
        assert_eq!(unpaced.pacing_rate_bps(), None);
        // A price asking for almost nothing: still one packet per 8 minimum RTTs, so ACKs keep
        // bringing the price.
        s.on_feedback(Time::ZERO, &echo_price(0.4 * (1e15f64).ln()));
        for k in 2..200 {
            s.on_ack(Time::ZERO + Dur::from_ms(4 * k), &ack(4));
        }
        assert!(s.rate_bps() < 1e3, "{}", s.rate_bps());
        assert_eq!(s.pacing_rate_bps(), Some(1500.0 * 8.0 / (8.0 * 0.004)));
    }

    /// The receiver's average weights each sample by the time since the previous one and forgets
    /// samples older than the window.
    #[test]
    fn receiver_averages_over_one_rtt() {
        let mut e = MaxNetEcho::new(Dur::from_ms(10));
        let data = |q: f64| CongestionHeader::MaxNet(MaxNetHeader { echo: 0, price: price_field(q) });
        e.on_data(Time::ZERO, &data(4.0));
        e.on_data(Time::ZERO + Dur::from_ms(1), &data(6.0)); // weight 1 ms
        e.on_data(Time::ZERO + Dur::from_ms(4), &data(8.0)); // weight 3 ms
        let avg = e.average().unwrap();
        assert!((avg - (6.0 + 3.0 * 8.0) / 4.0).abs() < 1e-4, "{avg}");
        // 20 ms later only recent samples count.
        e.on_data(Time::ZERO + Dur::from_ms(24), &data(5.0));
        e.on_data(Time::ZERO + Dur::from_ms(25), &data(5.0));
        assert!((e.average().unwrap() - 5.0).abs() < 1e-4);
        // A MaxStart value goes back at once, untouched.
        let flagged = maxstart_field(3.0);
        e.on_data(Time::ZERO + Dur::from_ms(26), &CongestionHeader::MaxNet(MaxNetHeader { echo: 0, price: flagged }));
        assert_eq!(e.echo(Time::ZERO), CongestionHeader::MaxNet(MaxNetHeader { echo: flagged, price: 0 }));
    }

    /// Issue #35: `tau` changes under the price law (the SYN's sample, then a queued data
    /// sample, then the queue drains). The window must stay `tau D(q)` times the same factor,
    /// not jump by `exp(alpha q (1/tau_old - 1/tau_new))`.
    #[test]
    fn a_changing_min_rtt_does_not_make_the_window_jump() {
        let q = 0.4 * (1e15f64 / 1e9).ln();
        let mut s = MaxNet::new(MaxNetConfig { maxstart: false, ..MaxNetConfig::default() });
        s.on_feedback(Time::ZERO, &echo_price(q));
        // The SYN-ACK: a 10 ms sample, no data acknowledged.
        s.on_ack(Time::ZERO + Dur::from_ms(10), &ack(10));
        let w0 = s.window_bytes() as f64;
        let want0 = 0.010 * 1e15 * (-decode(q) / 0.4).exp() / 8.0;
        assert!((w0 / want0 - 1.0).abs() < 1e-6, "{w0} vs {want0}");
        // The first data ACK saw 120 ms of queueing: tau = 130 ms. W = tau D(q), not 10^145 times it.
        let data = AckEvent {
            min_rtt: Dur::from_ms(10),
            rtt_sample: Some(Dur::from_ms(130)),
            newly_acked_bytes: 1460,
            ..AckEvent::default()
        };
        s.on_ack(Time::ZERO + Dur::from_ms(140), &data);
        let w1 = s.window_bytes() as f64;
        let want1 = 0.130 * 1e15 * (-decode(q) / 0.4).exp() / 8.0;
        assert!((w1 / want1 - 1.0).abs() < 1e-3, "{w1} vs {want1}");
        // The queue drains: a 20 ms sample. The window follows tau down, it does not collapse.
        let drained = AckEvent { rtt_sample: Some(Dur::from_ms(20)), ..data };
        s.on_ack(Time::ZERO + Dur::from_ms(150), &drained);
        let w2 = s.window_bytes() as f64;
        let want2 = 0.020 * 1e15 * (-decode(q) / 0.4).exp() / 8.0;
        assert!((w2 / want2 - 1.0).abs() < 1e-3, "{w2} vs {want2}");
    }
}
