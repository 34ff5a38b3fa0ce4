//! PowerTCP's and theta-PowerTCP's senders (Addanki et al., NSDI 2022, Algorithms 1 and 2),
//! as sans-IO state machines.
//!
//! Power is the product of a link's arrival rate λ and its queueing delay plus the base RTT
//! (section 3); normalised by the base power `e = b²·τ` of a full link with no queue it is 1 at
//! the ideal operating point. Per ACK, τ the base RTT:
//!
//! ```text
//! PowerTCP (INT), each hop j against the previous ACK's record:
//!     dt = ts − ts_prev;  q̇ = (q − q_prev)/dt;  μ = (tx − tx_prev)/dt;  λ = max(q̇ + μ, floor·b)
//!     Γ_j = λ·(q + b·τ) / (b²·τ)                       the hop with the largest Γ_j and its dt win
//! theta-PowerTCP (RTT θ only), against the previous ACK:
//!     dt = t − t_prev;    λ/b ≈ max(1 + (θ − θ_prev)/dt, floor);   Γ = (λ/b)·θ/τ
//! both:
//!     Δt = min(dt, τ);    Γ_s = (Γ_s·(τ − Δt) + Γ·Δt)/τ                    (smoothing, Γ_s starts at 1)
//!     W  = γ·(Wc/(Γ_s/η) + β) + (1 − γ)·Wc,   W within [min_rate·τ, b_NIC·τ]
//!     update = ack.seq > lastUpdateSeq:  Wc = W, lastUpdateSeq = snd_nxt
//! ```
//!
//! The paper's `cwnd_old` is the window when the acknowledged packet left and its `(1 − γ)`
//! term uses the current window; the authors' ns-3 code (`UpdateRatePower`, which this follows)
//! keeps a reference updated once per RTT (as HPCC's `Wc`) and uses it in both terms, reacting
//! on every ACK from it. The floor on λ (half the line rate) and the per-variant γ and η are
//! the code's; [`super::PowerTcpParams`] cites each.

use super::PowerTcpParams;
use crate::algorithms::int::IntHeader;
use crate::host::{AckEvent, CongestionEvent, Controller};
use crate::time::{Dur, Time};
use crate::wire::CongestionHeader;

/// Which signal the sender measures power from.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PowerVariant {
    /// PowerTCP: per-hop INT records.
    Int,
    /// theta-PowerTCP: RTT samples only.
    Theta,
}

/// A PowerTCP or theta-PowerTCP sender. Windows in bytes, rates in bit/s.
#[derive(Clone, Debug)]
pub struct PowerTcpSender {
    variant: PowerVariant,
    gamma: f64,
    eta: f64,
    beta: f64,
    floor: f64,
    /// τ, the base RTT, in seconds.
    tau: f64,
    w_init: f64,
    w_min: f64,
    window: f64,
    reference: f64,
    /// Γ_s, the smoothed normalised power.
    power: f64,
    last_update_seq: Option<u64>,
    last_int: Option<IntHeader>,
    /// (arrival time, RTT in seconds) of the previous ACK, for theta.
    last_rtt: Option<(Time, f64)>,
}

impl PowerTcpSender {
    /// A sender of `variant` on a NIC of `line_rate_bps` with base RTT `base_rtt`, at W = b·τ.
    pub fn new(
        variant: PowerVariant,
        params: PowerTcpParams,
        line_rate_bps: f64,
        base_rtt: Dur,
    ) -> Result<PowerTcpSender, String> {
        params.check()?;
        if !(line_rate_bps > 0.0 && line_rate_bps.is_finite()) {
            return Err(format!("powertcp: the NIC's line rate must be positive, got {line_rate_bps} bit/s"));
        }
        if base_rtt == Dur::ZERO {
            return Err("powertcp: the base RTT must be positive".into());
        }
        let tau = base_rtt.as_secs_f64();
        let w_init = line_rate_bps / 8.0 * tau;
        let (gamma, eta) = match variant {
            PowerVariant::Int => (params.gamma.unwrap_or(0.9), params.eta.unwrap_or(0.95)),
            PowerVariant::Theta => (params.gamma.unwrap_or(0.7), params.eta.unwrap_or(1.05)),
        };
        Ok(PowerTcpSender {
            variant,
            gamma,
            eta,
            beta: params.beta_bytes.unwrap_or(150e6 / 8.0 * tau),
            floor: params.arrival_floor,
            tau,
            w_init,
            w_min: (params.min_rate_bps / 8.0 * tau).min(w_init),
            window: w_init,
            reference: w_init,
            power: 1.0,
            last_update_seq: None,
            last_int: None,
            last_rtt: None,
        })
    }

    /// PowerTCP: an ACK echoing `int` arrived (`ack_seq` acknowledged, `snd_nxt` next to send).
    pub fn on_ack_int(&mut self, ack_seq: u64, snd_nxt: u64, int: &IntHeader) {
        debug_assert_eq!(self.variant, PowerVariant::Int, "INT fed to theta-PowerTCP");
        let Some(last) = self.last_int.filter(|l| l.hops().len() == int.hops().len()) else {
            self.last_int = Some(*int);
            self.last_update_seq.get_or_insert(snd_nxt);
            return;
        };
        let sample = self.int_power(&last, int);
        self.last_int = Some(*int);
        self.react(sample, ack_seq, snd_nxt);
    }

    /// theta-PowerTCP: an ACK arrived at `now` with RTT sample `rtt`.
    pub fn on_ack_rtt(&mut self, now: Time, ack_seq: u64, snd_nxt: u64, rtt: Dur) {
        debug_assert_eq!(self.variant, PowerVariant::Theta, "RTT-only update fed to PowerTCP");
        let theta = rtt.as_secs_f64();
        let Some((t_prev, theta_prev)) = self.last_rtt else {
            self.last_rtt = Some((now, theta));
            self.last_update_seq.get_or_insert(snd_nxt);
            return;
        };
        let dt = now.saturating_since(t_prev).as_secs_f64();
        if dt <= 0.0 {
            // Two ACKs at one instant: no gradient; keep the earlier reference point.
            return;
        }
        let a = (1.0 + (theta - theta_prev) / dt).max(self.floor);
        self.last_rtt = Some((now, theta));
        self.react(Some((a * theta / self.tau, dt)), ack_seq, snd_nxt);
    }

    /// NormPower for INT: the largest per-hop normalised power and its interval.
    fn int_power(&self, last: &IntHeader, now: &IntHeader) -> Option<(f64, f64)> {
        let mut best: Option<(f64, f64)> = None;
        for (old, new) in last.hops().iter().zip(now.hops()) {
            let dt = new.time_since(old).as_secs_f64();
            if dt <= 0.0 {
                continue;
            }
            let b = new.line_rate_bytes_per_sec();
            let q_dot = (new.queue_bytes as f64 - old.queue_bytes as f64) / dt;
            let mu = new.tx_bytes_since(old) as f64 / dt;
            let lambda = (q_dot + mu).max(self.floor * b);
            let power = lambda * (new.queue_bytes as f64 + b * self.tau) / (b * b * self.tau);
            if !matches!(best, Some((p, _)) if power <= p) {
                best = Some((power, dt));
            }
        }
        best
    }

    /// Smoothing and UpdateWindow.
    fn react(&mut self, sample: Option<(f64, f64)>, ack_seq: u64, snd_nxt: u64) {
        let update = !matches!(self.last_update_seq, Some(s) if ack_seq <= s);
        if let Some((power, dt)) = sample {
            let dt = dt.min(self.tau);
            self.power = (self.power * (self.tau - dt) + power * dt) / self.tau;
            let w = self.gamma * (self.reference / (self.power / self.eta) + self.beta)
                + (1.0 - self.gamma) * self.reference;
            self.window = w.clamp(self.w_min, self.w_init);
            if update {
                self.reference = self.window;
            }
        }
        if update {
            self.last_update_seq = Some(snd_nxt);
        }
    }

    /// W in bytes.
    pub fn window_bytes(&self) -> f64 {
        self.window
    }

    /// The reference window in bytes (moved once per RTT).
    pub fn reference_window_bytes(&self) -> f64 {
        self.reference
    }

    /// The pacing rate `W/τ` in bit/s.
    pub fn rate_bps(&self) -> f64 {
        self.window * 8.0 / self.tau
    }

    /// Γ_s, the smoothed normalised power.
    pub fn normalised_power(&self) -> f64 {
        self.power
    }

    /// β in bytes.
    pub fn additive_increase_bytes(&self) -> f64 {
        self.beta
    }
}

/// PowerTCP or theta-PowerTCP on the shared transport, as HPCC's [`crate::algorithms::hpcc::Hpcc`]:
/// the window limits the bytes in flight and packets are paced at `W/τ`. PowerTCP's data
/// packets reserve an INT header of `slots` records and read the echo; theta-PowerTCP's carry
/// none and read each ACK's RTT sample. Losses leave the window alone (a lossless fabric; the
/// authors' code has no loss reaction either).
#[derive(Clone, Debug)]
pub struct PowerTcp {
    law: PowerTcpSender,
    variant: PowerVariant,
    slots: usize,
    acked: u64,
    echo: Option<IntHeader>,
}

impl PowerTcp {
    /// A sender of `law`'s variant; `slots` INT records per data packet (PowerTCP only).
    pub fn new(law: PowerTcpSender, variant: PowerVariant, slots: usize) -> PowerTcp {
        PowerTcp { law, variant, slots, acked: 0, echo: None }
    }

    /// The law's state.
    pub fn law(&self) -> &PowerTcpSender {
        &self.law
    }
}

impl Controller for PowerTcp {
    fn on_feedback(&mut self, _now: Time, echo: &CongestionHeader) {
        if let CongestionHeader::Int(h) = echo {
            self.echo = Some(*h);
        }
    }

    fn on_ack(&mut self, now: Time, ack: &AckEvent) {
        self.acked += ack.newly_acked_bytes;
        let snd_nxt = self.acked + ack.flight_bytes;
        match self.variant {
            PowerVariant::Int => {
                if let Some(int) = self.echo.take().filter(|h| !h.hops().is_empty()) {
                    self.law.on_ack_int(self.acked, snd_nxt, &int);
                }
            }
            PowerVariant::Theta => {
                if let Some(rtt) = ack.rtt_sample {
                    self.law.on_ack_rtt(now, self.acked, snd_nxt, rtt);
                }
            }
        }
    }

    fn on_congestion_event(&mut self, _now: Time, _event: CongestionEvent, _flight_size: u64) {}

    fn window_bytes(&self) -> u64 {
        self.law.window_bytes() as u64
    }

    fn pacing_rate_bps(&self) -> Option<f64> {
        Some(self.law.rate_bps())
    }

    fn stamp(&mut self, _now: Time, hdr: &mut CongestionHeader) {
        if self.variant == PowerVariant::Int {
            *hdr = CongestionHeader::Int(IntHeader::new(self.slots).expect("slots checked when the parameters resolved"));
        }
    }

    fn is_rate_based(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::int::IntHop;

    // NIC and hop at 100 Gbit/s: b = 12.5e9 B/s; τ = 10 us: b·τ = 125,000 B;
    // β = 150 Mbit/s·τ = 187.5 B.
    const BDP: f64 = 125_000.0;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[track_caller]
    fn expect(s: &PowerTcpSender, power: f64, w: f64, wc: f64) {
        assert!(close(s.normalised_power(), power), "Γ = {}, expected {power}", s.normalised_power());
        assert!(close(s.window_bytes(), w), "W = {}, expected {w}", s.window_bytes());
        assert!(close(s.reference_window_bytes(), wc), "Wc = {}, expected {wc}", s.reference_window_bytes());
    }

    fn int1(q: u32, tx: u32, t_us: u32) -> IntHeader {
        IntHeader::from_hops(
            5,
            &[IntHop { queue_bytes: q, tx_bytes: tx, timestamp_ns: t_us * 1000, line_rate_kbps: 100_000_000 }],
        )
        .unwrap()
    }

    fn powertcp() -> PowerTcpSender {
        PowerTcpSender::new(PowerVariant::Int, PowerTcpParams::default(), 100e9, Dur::from_us(10)).unwrap()
    }

    // ack  seq      INT (q, tx, ts)              λ                         Γ                          Γ_s
    // 1    1000     (112,500, 0, 0us)            first record: stored                                 1
    // 2    126,000  (112,500, 125,000, 10us)     q̇ = 0, μ = b: λ = b       (112,500 + b·τ)/(b·τ) = 1.9  1.9 (Δt = τ)
    //      update:  W = 0.9·(125,000/(1.9/0.95) + 187.5) + 0.1·125,000 = 0.9·62,687.5 + 12,500 = 68,918.75 = Wc
    // 3    127,000  (125,000, 187,500, 15us)     q̇ = 12,500 B/5us = 0.2b, μ = b: λ = 1.2b
    //                                            Γ = 1.2·(125,000 + 125,000)/125,000 = 2.4
    //                                            Δt = τ/2: Γ_s = 0.5·1.9 + 0.5·2.4 = 2.15
    //      fast:    W = 0.9·(68,918.75/(2.15/0.95) + 187.5) + 0.1·68,918.75 = 34,467.8488..., Wc stays
    #[test]
    fn power_and_window_from_int() {
        let mut s = powertcp();
        assert!(close(s.additive_increase_bytes(), 187.5));
        s.on_ack_int(1000, 100_000, &int1(112_500, 0, 0));
        expect(&s, 1.0, BDP, BDP);
        s.on_ack_int(126_000, 226_000, &int1(112_500, 125_000, 10));
        expect(&s, 1.9, 68_918.75, 68_918.75);
        s.on_ack_int(127_000, 227_000, &int1(125_000, 187_500, 15));
        expect(&s, 2.15, 34_467.848_837_209_3, 68_918.75);
    }

    // At the operating point (no queue, arrival 0.95·b) Γ = 0.95 = η, so each update adds γ·β:
    // W = 0.9·(Wc/1 + 187.5) + 0.1·Wc = Wc + 168.75. From a halved window, 62,500:
    // 62,668.75, then 62,837.5.
    #[test]
    fn at_the_operating_point_the_window_grows_by_gamma_beta_per_rtt() {
        let p = PowerTcpParams { min_rate_bps: 1e6, ..Default::default() };
        let mut s = PowerTcpSender::new(PowerVariant::Int, p, 100e9, Dur::from_us(10)).unwrap();
        s.reference = 62_500.0;
        s.on_ack_int(1000, 100_000, &int1(0, 0, 0));
        s.on_ack_int(126_000, 226_000, &int1(0, 118_750, 10));
        expect(&s, 0.95, 62_668.75, 62_668.75);
        s.on_ack_int(251_000, 351_000, &int1(0, 237_500, 20));
        expect(&s, 0.95, 62_837.5, 62_837.5);
    }

    // A queue draining at 2b while the port sends at b: q̇ + μ = −b, floored at 0.5·b (the
    // authors' code), so Γ = 0.5·(0 + b·τ)/(b·τ) = 0.5 and the window doubles toward b·τ:
    // 0.9·(62,500/(0.5/0.95) + 187.5) + 0.1·62,500 = 0.9·118,937.5 + 6,250 = 113,293.75.
    #[test]
    fn a_draining_queue_is_floored_at_half_the_line_rate() {
        let mut s = powertcp();
        s.reference = 62_500.0;
        s.on_ack_int(1000, 100_000, &int1(250_000, 0, 0));
        s.on_ack_int(126_000, 226_000, &int1(0, 125_000, 10));
        expect(&s, 0.5, 113_293.75, 113_293.75);
    }

    // theta-PowerTCP, γ = 0.7, η = 1.05:
    // ack  t     θ      1 + dθ/dt              Γ = (1 + dθ/dt)·θ/τ     Γ_s
    // 1    0us   10us   first sample: stored                           1
    // 2    10us  12us   1 + 2/10 = 1.2          1.2·12/10 = 1.44        1.44 (Δt = τ)
    //      update: W = 0.7·(125,000/(1.44/1.05) + 187.5) + 0.3·125,000 = 0.7·91,333.33 + 37,500 = 101,433.33
    // 3    15us  11us   1 − 1/5 = 0.8           0.8·11/10 = 0.88        0.5·1.44 + 0.5·0.88 = 1.16
    //      fast:   W = 0.7·(101,433.33/(1.16/1.05) + 187.5) + 0.3·101,433.33 = 94,831.5086...
    #[test]
    fn theta_power_and_window_from_rtts() {
        let mut s =
            PowerTcpSender::new(PowerVariant::Theta, PowerTcpParams::default(), 100e9, Dur::from_us(10)).unwrap();
        let us = |n: u64| Time::from_ns(n * 1000);
        s.on_ack_rtt(us(0), 1000, 100_000, Dur::from_us(10));
        expect(&s, 1.0, BDP, BDP);
        s.on_ack_rtt(us(10), 126_000, 226_000, Dur::from_us(12));
        let w2 = 101_433.0 + 1.0 / 3.0;
        expect(&s, 1.44, w2, w2);
        s.on_ack_rtt(us(15), 127_000, 227_000, Dur::from_us(11));
        expect(&s, 1.16, 94_831.508_620_689_65, w2);
        // Two ACKs at one instant give no gradient and change nothing.
        s.on_ack_rtt(us(15), 128_000, 228_000, Dur::from_us(30));
        expect(&s, 1.16, 94_831.508_620_689_65, w2);
    }

    #[test]
    fn bad_construction_is_refused() {
        let p = PowerTcpParams::default();
        assert!(PowerTcpSender::new(PowerVariant::Int, p, -1.0, Dur::from_us(10)).is_err());
        assert!(PowerTcpSender::new(PowerVariant::Int, p, 1e9, Dur::ZERO).is_err());
        let bad = PowerTcpParams { gamma: Some(2.0), ..p };
        assert!(PowerTcpSender::new(PowerVariant::Theta, bad, 1e9, Dur::from_us(10))
            .unwrap_err()
            .contains("powertcp.gamma"));
    }
}
