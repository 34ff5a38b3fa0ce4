//! PIQI-RCP as a session protocol (seed 004 compares it with SLBN): the reconstructed router
//! law of `link/piqi_rcp.rs` (see docs/algorithms/piqi-rcp.md), run every T on the measured
//! input of the link, with the rate carried to sources by [`feedback`](super::feedback) packets.

use super::feedback::{FeedbackPacket, FeedbackSource};
use super::{Direction, Forward, Hop, LinkLoad, LinkTask, SessionId, SessionProtocol};
use crate::link::piqi_rcp::{PiqiRcpKappa, PiqiRcpRouter, PiqiRcpRouterConfig};
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
    const NAME: &'static str = "piqi_rcp";
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
}
