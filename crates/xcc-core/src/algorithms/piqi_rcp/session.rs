//! PIQI-RCP as a session protocol (seed 004 compares it with SLBN): the reconstructed router
//! law of `link/piqi_rcp.rs` (see docs/algorithms/piqi-rcp.md), run every T on the measured
//! input of the link, with the rate carried to sources by [`feedback`](crate::session::feedback) packets.

use crate::algorithms::piqi_rcp::link::{PiqiRcpKappa, PiqiRcpRouter, PiqiRcpRouterConfig};
use crate::session::feedback::{FeedbackPacket, FeedbackSource};
use crate::session::{Direction, Forward, Hop, LinkLoad, LinkTask, SessionId, SessionProtocol};
use crate::time::{Dur, Time};
use serde::{Deserialize, Serialize};

/// Seed 004's settings: T = 5 ms and kappa = kappa* = T / (2 (T + RTT)) (`kappa: null`).
#[derive(Copy, Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct PiqiRcpParams {
    pub interval_ms: f64,
    /// A fixed gain; `None`: the paper's bound with the largest RTT seen.
    pub kappa: Option<f64>,
    pub gamma: f64,
    pub initial_fraction: f64,
}

impl Default for PiqiRcpParams {
    fn default() -> Self {
        let d = PiqiRcpRouterConfig::default();
        PiqiRcpParams {
            interval_ms: d.interval.as_secs_f64() * 1e3,
            kappa: None,
            gamma: d.gamma,
            initial_fraction: d.initial_fraction,
        }
    }
}

impl PiqiRcpParams {
    fn config(&self) -> PiqiRcpRouterConfig {
        PiqiRcpRouterConfig {
            interval: Dur::from_secs_f64(self.interval_ms * 1e-3),
            kappa: self.kappa.map_or(PiqiRcpKappa::Auto, PiqiRcpKappa::Fixed),
            gamma: self.gamma,
            initial_fraction: self.initial_fraction,
            ..PiqiRcpRouterConfig::default()
        }
    }
}

/// One link: the router and the largest RTT carried since the last tick.
#[derive(Clone, Debug)]
pub struct PiqiRcpLink {
    router: PiqiRcpRouter,
    interval: Dur,
    rtt_max_us: u32,
}

impl PiqiRcpLink {
    pub fn rate_bps(&self) -> f64 {
        self.router.rate_bps()
    }
}

impl LinkTask for PiqiRcpLink {
    type Packet = FeedbackPacket;

    fn on_packet(&mut self, _now: Time, hop: Hop, p: &mut FeedbackPacket) -> Forward {
        if hop.dir == Direction::Downstream {
            p.rate = p.rate.min(self.router.rate_bps());
            self.rtt_max_us = self.rtt_max_us.max(p.rtt_us);
        }
        Forward::Pass
    }

    fn tick_interval(&self) -> Option<Dur> {
        Some(self.interval)
    }

    fn on_tick(&mut self, _now: Time, load: &LinkLoad) {
        let bits = load.input_rate * load.interval.as_secs_f64();
        self.router.interval_update(bits, std::mem::take(&mut self.rtt_max_us));
    }
}

pub struct PiqiRcp;

impl SessionProtocol for PiqiRcp {
    const NAME: &'static str = "piqi-rcp";
    type Packet = FeedbackPacket;
    type Link = PiqiRcpLink;
    type Source = FeedbackSource;
    type Params = PiqiRcpParams;

    fn new_link(params: &PiqiRcpParams, capacity: f64) -> PiqiRcpLink {
        let cfg = params.config();
        PiqiRcpLink {
            router: PiqiRcpRouter::new(cfg, capacity as u64, Time::ZERO),
            interval: cfg.interval,
            rtt_max_us: 0,
        }
    }

    fn new_source(_params: &PiqiRcpParams, _session: SessionId) -> FeedbackSource {
        FeedbackSource::new()
    }
}

impl crate::session::data_share::DataShare for PiqiRcp {
    fn data_share(_: &Self::Params) -> f64 {
        0.99
    }
}

/// Its number in the session framing on real packets (unique: a test checks it).
impl crate::wire::session::SessionWire for PiqiRcp {
    const PROTO: u8 = 6;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The link stamps its rate downstream only, and its law runs on the measured input: with
    /// no input at all the rate rises (kappa (gamma C - 0) / 1 per tick).
    #[test]
    fn stamps_downstream_and_updates_on_ticks() {
        let p = PiqiRcpParams { kappa: Some(0.1), ..Default::default() };
        let mut l = PiqiRcp::new_link(&p, 1e9);
        let r0 = l.rate_bps();
        assert_eq!(r0, 0.05 * 1e9);
        let hop = |dir| Hop { session: 0, link: 0, index: 0, path_len: 1, dir };
        let mut pkt =
            FeedbackPacket { rate: f64::INFINITY, rtt_us: 20_000, sent_at: Time::ZERO, echoed: false, data_bits: 0.0 };
        l.on_packet(Time::ZERO, hop(Direction::Downstream), &mut pkt);
        assert_eq!(pkt.rate, r0);
        let mut up = FeedbackPacket { rate: 1.0, echoed: true, ..pkt };
        l.on_packet(Time::ZERO, hop(Direction::Upstream), &mut up);
        assert_eq!(up.rate, 1.0);
        l.on_tick(Time::from_ns(5_000_000), &LinkLoad { input_rate: 0.0, queue_bits: 0.0, interval: Dur::from_ms(5) });
        assert!((l.rate_bps() - (r0 + 0.1 * 0.98e9)).abs() < 1.0, "{}", l.rate_bps());
    }

    /// Two ticks by hand with the paper's own gain (kappa* = T / (2 (T + RTT)), `kappa: None`),
    /// C = 100 Mb/s, T = 5 ms, gamma 0.98, R0 = 5 Mb/s, d0 = 200 ms:
    /// - a feedback packet downstream carries RTT 20 ms; tick 1 sees 40 Mb/s of input. The RTT
    ///   kept is max(0.02, 0.2 (1 - T / 1 s)) = 0.199 s (a long RTT is remembered for about a
    ///   second), kappa = 0.005 / (2 x 0.204); the traffic was sent at the rate of
    ///   round(0.199 / T) = 40 intervals ago (R0), so N = 40 / 5 = 8 flows and
    ///   R1 = R0 + kappa (98e6 - 40e6) / 8;
    /// - an upstream packet's RTT (500 ms) is not the link's; tick 2 sees 120 Mb/s: RTT
    ///   0.199 x 0.995, N = 120 / 5 = 24, R2 = R1 + kappa' (98e6 - 120e6) / 24.
    #[test]
    fn ticks_by_hand_with_the_papers_gain() {
        let mut l = PiqiRcp::new_link(&PiqiRcpParams::default(), 100e6);
        assert_eq!(l.rate_bps(), 5e6);
        let hop = |dir| Hop { session: 0, link: 0, index: 0, path_len: 1, dir };
        let load = |bps: f64| LinkLoad { input_rate: bps, queue_bits: 0.0, interval: Dur::from_ms(5) };
        let mut down =
            FeedbackPacket { rate: f64::INFINITY, rtt_us: 20_000, sent_at: Time::ZERO, echoed: false, data_bits: 0.0 };
        l.on_packet(Time::ZERO, hop(Direction::Downstream), &mut down);
        l.on_tick(Time::from_ns(5_000_000), &load(40e6));
        let rtt1 = 0.2 * (1.0 - 0.005);
        let kappa1 = 0.005 / (2.0 * (0.005 + rtt1));
        let r1 = 5e6 + kappa1 * (0.98e8 - 40e6) / 8.0;
        assert!((l.rate_bps() - r1).abs() < 1e-6, "R1 {} want {r1}", l.rate_bps());
        assert!((r1 - 5_088_848.04).abs() < 0.01, "the hand value: {r1}");
        let mut up = FeedbackPacket { rtt_us: 500_000, echoed: true, ..down };
        l.on_packet(Time::ZERO, hop(Direction::Upstream), &mut up);
        l.on_tick(Time::from_ns(10_000_000), &load(120e6));
        let rtt2 = rtt1 * (1.0 - 0.005);
        let kappa2 = 0.005 / (2.0 * (0.005 + rtt2));
        let r2 = r1 + kappa2 * (0.98e8 - 120e6) / 24.0;
        assert!((l.rate_bps() - r2).abs() < 1e-6, "R2 {} want {r2}", l.rate_bps());
        // The next packet downstream is stamped with the new rate.
        let mut next = FeedbackPacket { rate: f64::INFINITY, ..down };
        l.on_packet(Time::ZERO, hop(Direction::Downstream), &mut next);
        assert_eq!(next.rate, r2);
    }
}
