//! RCP as a session protocol (seed 004 compares it with SLBN, alpha 0.1 and beta 1 "as
//! suggested in \[10\]"): the router law of [`crate::algorithms::rcp::link`] (Stanford ns-2 v4, protocols.md
//! 3.2-3.3), run on each link's measured input, with the rate carried to sources by
//! [`feedback`](crate::session::feedback) packets (docs/algorithms/rcp.md, "Session experiments").
//!
//! What the link sees, against the packet simulator's RCP:
//!
//! - **input `y`**: every bit that entered the link during the interval (the session driver's
//!   fluid data and every control packet), as ns-2 counts every packet;
//! - **average RTT `d`**: byte-weighted, as ns-2: a feedback packet stands for the data its
//!   session sent since its previous one (`data_bits`), so it adds `rtt * data_bits` and
//!   `data_bits` to the interval's sums, what those data packets would have added;
//! - **queue `Q`**: the link's backlog at the end of the interval;
//! - **stamping**: on the way down, `rate = min(rate, R)` (the departure stamp of data packets);
//!   the destination echoes it and the source adopts it;
//! - **interval**: each link updates once `T = min(d, 10 ms)` has elapsed, checked on the
//!   driver's common tick (`tick_ms`, 1 ms by default), with the law applied to the real elapsed
//!   time. There is no random phase per link (protocols.md 14.4): the driver's tick is common,
//!   and the fluid data has no packet-level synchronisation for a phase to break.

use crate::algorithms::rcp::link::{RcpAccumulators, RcpRouter, RcpRouterConfig};
use crate::session::feedback::{FeedbackPacket, FeedbackSource};
use crate::session::{Direction, Forward, Hop, LinkLoad, LinkTask, SessionId, SessionProtocol};
use crate::time::{Dur, Time};
use serde::{Deserialize, Serialize};

/// The parameter sets of `link::rcp::RCP_PRESETS`, by name.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RcpPreset {
    /// alpha 0.4, beta 1 (Stanford single-bottleneck script, seed 000 Section IX).
    Stanford,
    /// alpha 0.1, beta 1 (the flow-completion-time paper; seed 004's setting).
    Fct,
    /// alpha 0.4, beta 0.4 (ns-2 `ns-default.tcl`).
    Ns2,
}

impl RcpPreset {
    fn name(self) -> &'static str {
        match self {
            RcpPreset::Stanford => "stanford",
            RcpPreset::Fct => "fct",
            RcpPreset::Ns2 => "ns2",
        }
    }
}

/// RCP's session parameters; the default is seed 004's setting (preset `fct`: alpha 0.1,
/// beta 1; the other values are ns-2's).
#[derive(Copy, Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct RcpParams {
    pub preset: RcpPreset,
    /// The driver's tick, milliseconds: how often links check whether their `T` has elapsed
    /// (and the granularity of `T` below 10 ms).
    pub tick_ms: f64,
}

impl Default for RcpParams {
    fn default() -> Self {
        RcpParams { preset: RcpPreset::Fct, tick_ms: 1.0 }
    }
}

impl RcpParams {
    /// The router configuration of the preset.
    pub fn config(&self) -> RcpRouterConfig {
        RcpRouterConfig::preset(self.preset.name()).expect("every RcpPreset names a preset")
    }
}

/// One link: the router and what arrived since its last update.
#[derive(Clone, Debug)]
pub struct RcpLink {
    router: RcpRouter,
    tick: Dur,
    /// RTT-weighted and plain data bits of the feedback packets since the last update.
    sum_rtt_bits: f64,
    sum_bits: f64,
    /// Input bits and time since the last update.
    input_bits: f64,
    elapsed_s: f64,
}

impl RcpLink {
    /// The rate this link offers, bit/s.
    pub fn rate_bps(&self) -> f64 {
        8.0 * self.router.rate()
    }

    /// The router (average RTT, interval) for tests and traces.
    pub fn router(&self) -> &RcpRouter {
        &self.router
    }
}

impl LinkTask for RcpLink {
    type Packet = FeedbackPacket;

    fn on_packet(&mut self, _now: Time, hop: Hop, p: &mut FeedbackPacket) -> Forward {
        if hop.dir == Direction::Downstream {
            p.rate = p.rate.min(self.rate_bps());
            if p.rtt_us != 0 && p.data_bits > 0.0 {
                self.sum_rtt_bits += p.rtt_us as f64 * 1e-6 * p.data_bits;
                self.sum_bits += p.data_bits;
            }
        }
        Forward::Pass
    }

    fn tick_interval(&self) -> Option<Dur> {
        Some(self.tick)
    }

    /// Accumulates the tick's input; once `T` has elapsed (to within half a tick), runs the law
    /// over everything since the last update.
    fn on_tick(&mut self, _now: Time, load: &LinkLoad) {
        let dt = load.interval.as_secs_f64();
        self.input_bits += load.input_rate * dt;
        self.elapsed_s += dt;
        if self.elapsed_s + 0.5 * self.tick.as_secs_f64() < self.router.interval() {
            return;
        }
        let acc = RcpAccumulators {
            input_bytes: self.input_bits / 8.0,
            sum_rtt_bytes: self.sum_rtt_bits / 8.0,
            sum_bytes: self.sum_bits / 8.0,
        };
        self.router.interval_update(self.elapsed_s, acc, load.queue_bits / 8.0);
        self.sum_rtt_bits = 0.0;
        self.sum_bits = 0.0;
        self.input_bits = 0.0;
        self.elapsed_s = 0.0;
    }
}

/// The protocol, for drivers generic over [`SessionProtocol`].
pub struct Rcp;

impl SessionProtocol for Rcp {
    const NAME: &'static str = "rcp";
    type Packet = FeedbackPacket;
    type Link = RcpLink;
    type Source = FeedbackSource;
    type Params = RcpParams;

    fn new_link(params: &RcpParams, capacity: f64) -> RcpLink {
        RcpLink {
            router: RcpRouter::new(params.config(), capacity as u64, Time::ZERO, Dur::ZERO),
            tick: Dur::from_secs_f64(params.tick_ms * 1e-3),
            sum_rtt_bits: 0.0,
            sum_bits: 0.0,
            input_bits: 0.0,
            elapsed_s: 0.0,
        }
    }

    fn new_source(_params: &RcpParams, _session: SessionId) -> FeedbackSource {
        FeedbackSource::new()
    }
}

/// RCP in seed 004's session form: one 40 B feedback packet per round trip,
/// far under the paper's ~1 % control budget; data gets the same 99 % of the assigned rate as
/// every other protocol here (and as the session driver's `data_share`), so no protocol is
/// compared at a different load.
impl crate::session::data_share::DataShare for Rcp {
    fn data_share(_: &Self::Params) -> f64 {
        0.99
    }
}

/// Its number in the session framing on real packets (unique: a test checks it).
impl crate::wire::session::SessionWire for Rcp {
    const PROTO: u8 = 5;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hop(dir: Direction) -> Hop {
        Hop { session: 0, link: 0, index: 0, path_len: 1, dir }
    }

    fn tick(l: &mut RcpLink, input_rate: f64, queue_bits: f64) {
        l.on_tick(Time::ZERO, &LinkLoad { input_rate, queue_bits, interval: Dur::from_ms(1) });
    }

    /// The default is seed 004's RCP (alpha 0.1, beta 1); every preset is the link's preset of
    /// the same name. (Parsing, and refusing unknown presets, is tested in xcc-sim.)
    #[test]
    fn defaults_are_seed_004s_and_presets_match_the_link() {
        let c = RcpParams::default().config();
        assert_eq!((c.alpha, c.beta, c.gamma), (0.1, 1.0, 1.0));
        for p in [RcpPreset::Stanford, RcpPreset::Fct, RcpPreset::Ns2] {
            let params = RcpParams { preset: p, ..RcpParams::default() };
            assert_eq!(Some(params.config()), RcpRouterConfig::preset(p.name()));
        }
    }

    /// Stamps the link's rate downstream only (R0 = 0.05 C), and accumulates the packet's RTT
    /// weighted by the data it stands for.
    #[test]
    fn stamps_downstream_only() {
        let mut l = Rcp::new_link(&RcpParams::default(), 100e6);
        assert_eq!(l.rate_bps(), 5e6);
        let mut p =
            FeedbackPacket { rate: f64::INFINITY, rtt_us: 50_000, sent_at: Time::ZERO, echoed: false, data_bits: 1e5 };
        l.on_packet(Time::ZERO, hop(Direction::Downstream), &mut p);
        assert_eq!(p.rate, 5e6);
        assert_eq!((l.sum_rtt_bits, l.sum_bits), (0.05 * 1e5, 1e5));
        let mut up = FeedbackPacket { rate: 1.0, echoed: true, ..p };
        l.on_packet(Time::ZERO, hop(Direction::Upstream), &mut up);
        assert_eq!(up.rate, 1.0);
        assert_eq!(l.sum_bits, 1e5, "the way back adds nothing");
    }

    /// The law runs once T has elapsed: d0 = 200 ms, so T = 10 ms: ticks 1-9 only accumulate,
    /// tick 10 updates. By hand (C = 100 Mb/s = 12.5e6 B/s, R0 = 625e3 B/s, alpha 0.1, beta 1):
    /// 10 ms of 40 Mb/s input (y = 5e6 B/s), packets standing for 50 kbit at RTT 100 ms, a
    /// 80 kbit (10 kB) queue at the end: sample 0.1 < d, g = (R/C)(sample/d)(T/d) = 0.05 * 0.5
    /// * 0.05 = 0.00125, d = 0.199875, R = 625e3 [1 + (0.01/d)(0.1 (12.5e6 - 5e6) - 1e4/d) / 12.5e6].
    #[test]
    fn law_runs_every_t_on_the_accumulated_input() {
        let mut l = Rcp::new_link(&RcpParams::default(), 100e6);
        let mut p =
            FeedbackPacket { rate: f64::INFINITY, rtt_us: 100_000, sent_at: Time::ZERO, echoed: false, data_bits: 5e4 };
        l.on_packet(Time::ZERO, hop(Direction::Downstream), &mut p);
        for _ in 0..9 {
            tick(&mut l, 40e6, 0.0);
        }
        assert_eq!(l.rate_bps(), 5e6, "no update before T");
        tick(&mut l, 40e6, 80_000.0);
        let d = 0.00125 * 0.1 + 0.99875 * 0.2;
        assert!((l.router().avg_rtt() - d).abs() < 1e-12, "d {}", l.router().avg_rtt());
        let want = 625e3 * (1.0 + (0.01 / d) * (0.1 * (12.5e6 - 5e6) - 1e4 / d) / 12.5e6);
        assert!((l.rate_bps() - 8.0 * want).abs() < 1e-3, "R {} want {}", l.rate_bps(), 8.0 * want);
        assert_eq!((l.input_bits, l.elapsed_s, l.sum_bits), (0.0, 0.0, 0.0), "accumulators reset");
    }

    /// An idle link's rate rises to its capacity and a full one without a queue stays put.
    #[test]
    fn idle_link_rises_to_capacity_full_link_is_a_fixed_point() {
        let mut l = Rcp::new_link(&RcpParams::default(), 100e6);
        for _ in 0..20_000 {
            tick(&mut l, 0.0, 0.0);
        }
        assert_eq!(l.rate_bps(), 100e6);
        let r = l.rate_bps();
        for _ in 0..100 {
            tick(&mut l, 100e6, 0.0);
        }
        assert!((l.rate_bps() - r).abs() < 1e-6 * r);
    }
}
