//! JetMax's source (reconstructed, see docs/algorithms/jetmax.md and `link::jetmax`).
//!
//! Rate-based and paced. Once per RTT (its control interval) the source moves a fraction `tau`
//! of the way to the fair rate `F` echoed from its bottleneck, and adopts the echoed candidate
//! hop as its bottleneck id for the packets that follow:
//!
//! ```text
//! x(n) = x(n-1) + tau (F - x(n-1))           0 < tau <= 1
//! ```
//!
//! On one link `F = gamma C / N` does not depend on the rates (the router counts flows, not
//! bits), so the error shrinks by `1 - tau` per step for any capacity and any delay, never
//! overshooting; `tau = 0.6` puts every flow within 1 % of the stationary point after 6 steps
//! (`0.4^6 = 0.4 %`; the papers' claim is "within 1 % in 6 control intervals").
//!
//! Joining: the source first probes with one packet in flight, naming no bottleneck; links
//! count such a packet as a flow (share = the probe spacing, one RTT, or `probe_wait` before an
//! RTT is known), so they lower their fair rates for it before it sends. It takes its first step
//! from `x = 0` (to `tau F`) once two probes came back and `probe_wait` has passed since the
//! first left, so that the echoed `F` comes from a control interval that counted it (our choice
//! for the papers' "overshoot-free" joins; `probe_wait` must cover a router interval).

use crate::algorithms::jetmax::header::NO_HOP;
use crate::algorithms::jetmax::JetMaxHeader;
use crate::host::{AckEvent, CongestionEvent, Controller};
use crate::time::{Dur, Time};
use crate::wire::CongestionHeader;

/// Source parameters.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct JetMaxConfig {
    /// Step gain tau in (0, 1] (our choice 0.6, see the module docs).
    pub tau: f64,
    /// A full-size data packet on the wire (payload, transport header, shim): its pacing time at
    /// rate x is the share each packet carries.
    pub packet_bytes: u32,
    /// Segment payload: the probe's window.
    pub mss_bytes: u32,
    /// Shortest probing time before the first step (twice the routers' default interval).
    pub probe_wait: Dur,
}

impl Default for JetMaxConfig {
    fn default() -> Self {
        JetMaxConfig { tau: 0.6, packet_bytes: 1460 + 40 + 13, mss_bytes: 1460, probe_wait: Dur::from_ms(100) }
    }
}

/// A JetMax source.
#[derive(Clone, Debug)]
pub struct JetMax {
    cfg: JetMaxConfig,
    /// Current rate (bit/s on the wire); 0 until the first echo.
    rate_bps: f64,
    /// Latest echo: fair rate and the hop that set it.
    fair_bps: Option<f64>,
    candidate: u8,
    /// The bottleneck hop the packets name.
    bottleneck: u8,
    next_step: Time,
    steps: u64,
    /// Probing: echoes received and when the first probe left.
    echoes: u32,
    first_probe: Option<Time>,
    srtt: Dur,
}

impl JetMax {
    pub fn new(cfg: JetMaxConfig) -> JetMax {
        JetMax {
            cfg,
            rate_bps: 0.0,
            fair_bps: None,
            candidate: NO_HOP,
            bottleneck: NO_HOP,
            next_step: Time::ZERO,
            steps: 0,
            echoes: 0,
            first_probe: None,
            srtt: Dur::ZERO,
        }
    }

    /// The current rate (bit/s on the wire).
    pub fn rate_bps(&self) -> f64 {
        self.rate_bps
    }

    /// Rate updates made so far.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// The bottleneck hop the source's packets name.
    pub fn bottleneck(&self) -> u8 {
        self.bottleneck
    }

    fn step(&mut self, now: Time, srtt: Dur) {
        let Some(f) = self.fair_bps else { return };
        self.rate_bps += self.cfg.tau * (f - self.rate_bps);
        self.bottleneck = self.candidate;
        self.steps += 1;
        self.next_step = now + srtt;
    }
}

impl Controller for JetMax {
    fn on_ack(&mut self, now: Time, ack: &AckEvent) {
        self.srtt = ack.srtt;
        if self.rate_bps == 0.0 {
            let waited = self.first_probe.is_some_and(|t| now.saturating_since(t) >= self.cfg.probe_wait);
            if self.echoes < 2 || !waited {
                return;
            }
        }
        if self.fair_bps.is_some() && now >= self.next_step {
            self.step(now, ack.srtt);
        }
    }

    /// The rate is set by the routers alone.
    fn on_congestion_event(&mut self, _now: Time, _event: CongestionEvent, _flight_size: u64) {}

    fn on_feedback(&mut self, _now: Time, echo: &CongestionHeader) {
        if let CongestionHeader::JetMax(h) = echo {
            if h.fair_bps.is_finite() && h.fair_bps > 0.0 && h.candidate != NO_HOP {
                self.fair_bps = Some(h.fair_bps as f64);
                self.candidate = h.candidate;
                self.echoes = self.echoes.saturating_add(1);
            }
        }
    }

    fn window_bytes(&self) -> u64 {
        if self.rate_bps > 0.0 {
            u64::MAX
        } else {
            self.cfg.mss_bytes as u64
        }
    }

    fn pacing_rate_bps(&self) -> Option<f64> {
        (self.rate_bps > 0.0).then_some(self.rate_bps)
    }

    fn stamp(&mut self, now: Time, hdr: &mut CongestionHeader) {
        let share_s = if self.rate_bps > 0.0 {
            (8.0 * self.cfg.packet_bytes as f64 / self.rate_bps) as f32
        } else {
            // A probe stands for the time until the next one: one RTT, once known.
            self.first_probe.get_or_insert(now);
            if self.srtt > Dur::ZERO { self.srtt } else { self.cfg.probe_wait }.as_secs_f64() as f32
        };
        *hdr =
            CongestionHeader::JetMax(JetMaxHeader { share_s, bottleneck: self.bottleneck, ..JetMaxHeader::default() });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn echo(fair: f32, candidate: u8) -> CongestionHeader {
        CongestionHeader::JetMax(JetMaxHeader { fair_bps: fair, candidate, ..JetMaxHeader::default() })
    }

    fn ack(srtt_ms: u64) -> AckEvent {
        AckEvent { srtt: Dur::from_ms(srtt_ms), ..AckEvent::default() }
    }

    fn ms(k: u64) -> Time {
        Time::ZERO + Dur::from_ms(k)
    }

    /// Hand computation: F = 100 Mb/s, tau = 0.6, one step per RTT (50 ms):
    /// x = 60, 84, 93.6, 97.44, 98.976, 99.5904 Mb/s: within 1 % of F at the 5th step, 0.41 %
    /// at the 6th; never above F. Echoes between steps only update the target.
    #[test]
    fn steps_once_per_rtt_towards_the_fair_rate() {
        let mut s = JetMax::new(JetMaxConfig::default());
        assert_eq!((s.window_bytes(), s.pacing_rate_bps()), (1460, None));
        // Probing: two echoes and probe_wait (100 ms) since the first probe before stepping.
        s.stamp(ms(0), &mut CongestionHeader::None);
        s.on_feedback(ms(50), &echo(100e6, 2));
        s.on_ack(ms(50), &ack(50));
        assert_eq!(s.pacing_rate_bps(), None, "one echo is not enough");
        let expect = [60e6, 84e6, 93.6e6, 97.44e6, 98.976e6, 99.5904e6];
        for (k, &x) in expect.iter().enumerate() {
            let t = ms(100 + 50 * k as u64);
            s.on_feedback(t, &echo(100e6, 2));
            s.on_ack(t, &ack(50));
            // A second ACK in the same RTT does not step again.
            s.on_ack(t + Dur::from_ms(10), &ack(50));
            assert!((s.rate_bps() - x).abs() < 1e-6, "step {k}: {}", s.rate_bps());
            assert!(s.rate_bps() <= 100e6);
        }
        assert_eq!((s.steps(), s.bottleneck(), s.window_bytes()), (6, 2, u64::MAX));
        assert!((s.rate_bps() / 100e6 - 1.0).abs() < 0.01);
    }

    /// Packets carry share = packet bits / x and the adopted bottleneck; probes carry no
    /// bottleneck and a share of probe_wait, then of one RTT once known.
    #[test]
    fn stamps_share_and_bottleneck() {
        let mut s = JetMax::new(JetMaxConfig::default());
        let mut h = CongestionHeader::None;
        s.stamp(ms(0), &mut h);
        assert_eq!(h, CongestionHeader::JetMax(JetMaxHeader { share_s: 0.1, ..JetMaxHeader::default() }));
        s.on_feedback(ms(20), &echo(10e6, 1));
        s.on_ack(ms(20), &ack(20));
        s.stamp(ms(20), &mut h);
        assert_eq!(h, CongestionHeader::JetMax(JetMaxHeader { share_s: 0.02, ..JetMaxHeader::default() }));
        s.on_feedback(ms(120), &echo(10e6, 1));
        s.on_ack(ms(120), &ack(20));
        s.stamp(ms(120), &mut h);
        let CongestionHeader::JetMax(j) = h else { unreachable!() };
        let (bottleneck, share) = (j.bottleneck, j.share_s as f64);
        assert_eq!(bottleneck, 1);
        assert!((share - 8.0 * 1513.0 / 6e6).abs() < 1e-9, "{share}");
    }

    /// A decreasing fair rate is approached from above without undershoot.
    #[test]
    fn decreases_monotonically() {
        let cfg = JetMaxConfig { probe_wait: Dur::ZERO, ..JetMaxConfig::default() };
        let mut s = JetMax::new(cfg);
        s.stamp(ms(0), &mut CongestionHeader::None);
        s.on_feedback(ms(0), &echo(100e6, 0));
        s.on_feedback(ms(0), &echo(100e6, 0));
        s.on_ack(ms(0), &ack(10));
        let mut prev = s.rate_bps();
        s.on_feedback(ms(10), &echo(10e6, 0));
        for k in 1..20 {
            s.on_ack(ms(10 * k), &ack(10));
            assert!(s.rate_bps() < prev && s.rate_bps() >= 10e6);
            prev = s.rate_bps();
        }
    }
}
