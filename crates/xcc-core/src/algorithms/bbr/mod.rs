//! BBR v1 (Cardwell et al., "BBR: Congestion-Based Congestion Control", ACM Queue 2016) as
//! Linux runs it (`net/ipv4/tcp_bbr.c`): a model-based sender that estimates the bottleneck
//! bandwidth (the windowed maximum of delivery-rate samples over 10 round trips) and the
//! round-trip propagation delay (the minimum RTT over 10 s), paces at `pacing_gain x bw` and
//! caps the data in flight at `cwnd_gain x bw x min_rtt`.
//!
//! Its state machine: STARTUP (gain 2/ln 2 until the bandwidth stops growing by 25 % for three
//! rounds), DRAIN (the inverse gain until the queue STARTUP built is gone), PROBE_BW (an
//! 8-phase pacing-gain cycle 5/4, 3/4, 1 x 6, each phase about one min RTT) and PROBE_RTT
//! (every 10 s without a new minimum: 4 packets in flight for max(200 ms, one round)). Losses do
//! not change the model; in recovery the window follows packet conservation for one round,
//! then may grow again, and the pre-recovery window is restored after. ECN is ignored.
//!
//! The law is in [`host`]; the delivery-rate samples it needs come from the shared transport
//! ([`crate::transport::RateSample`]). docs/algorithms/bbr.md describes it and where it differs
//! from Linux.

pub mod filter;
pub mod host;

use serde::{Deserialize, Serialize};

pub use host::{Bbr, BbrMode};

/// BBR's parameters: the constants of Linux's `tcp_bbr.c` (it has no module parameters), for
/// experiments; the defaults are the kernel's.
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BbrParams {
    /// Initial window in segments. Default 10: Linux's `TCP_INIT_CWND` (RFC 6928).
    pub initial_window: u32,
    /// Length of the bandwidth filter, in round trips. Default 10: `bbr_bw_rtts = CYCLE_LEN + 2`.
    pub bw_window_rounds: u32,
    /// Length of the min-RTT filter, in seconds. Default 10: `bbr_min_rtt_win_sec`.
    pub min_rtt_window_s: f64,
    /// Time held at the minimum window in PROBE_RTT, in ms. Default 200: `bbr_probe_rtt_mode_ms`.
    pub probe_rtt_ms: u32,
    /// STARTUP's pacing and window gain. Default 2.88672 (= 739/256): `bbr_high_gain`,
    /// 2/ln 2 rounded up in 1/256.
    pub high_gain: f64,
    /// PROBE_BW's window gain. Default 2: `bbr_cwnd_gain`.
    pub cwnd_gain: f64,
    /// Paced this fraction below the estimated bandwidth. Default 0.01:
    /// `bbr_pacing_margin_percent = 1`.
    pub pacing_margin: f64,
    /// Minimum window in segments (and PROBE_RTT's window). Default 4: `bbr_cwnd_min_target`.
    pub min_cwnd_segments: u32,
    /// Add Linux's TSO/GSO quantization budget to the window (3 times the TSO burst goal,
    /// rounded to an even number of segments, `bbr_quantization_budget`). Default true: the
    /// kernel does, whether or not the device offloads.
    pub quantization_budget: bool,
    /// Detect token-bucket policers (`bbr_lt_bw_sampling`: two lossy intervals of consistent
    /// rate pin the bandwidth for 48 rounds). Default true, as in Linux.
    pub long_term_sampling: bool,
}

impl Default for BbrParams {
    fn default() -> Self {
        BbrParams {
            initial_window: 10,
            bw_window_rounds: 10,
            min_rtt_window_s: 10.0,
            probe_rtt_ms: 200,
            high_gain: 739.0 / 256.0,
            cwnd_gain: 2.0,
            pacing_margin: 0.01,
            min_cwnd_segments: 4,
            quantization_budget: true,
            long_term_sampling: true,
        }
    }
}

impl BbrParams {
    /// Checks every field's range; the error names the field and what was expected.
    pub fn check(&self) -> Result<(), String> {
        if self.initial_window == 0 {
            return Err("initial_window: expected at least 1 segment".into());
        }
        if self.bw_window_rounds == 0 {
            return Err("bw_window_rounds: expected at least 1 round".into());
        }
        if !(self.min_rtt_window_s > 0.0 && self.min_rtt_window_s.is_finite()) {
            return Err(format!("min_rtt_window_s: {} is not a positive number of seconds", self.min_rtt_window_s));
        }
        if !(self.high_gain > 1.0 && self.high_gain.is_finite()) {
            return Err(format!("high_gain: {} must be above 1", self.high_gain));
        }
        if !(self.cwnd_gain >= 1.0 && self.cwnd_gain.is_finite()) {
            return Err(format!("cwnd_gain: {} must be at least 1", self.cwnd_gain));
        }
        if !(0.0..0.5).contains(&self.pacing_margin) {
            return Err(format!("pacing_margin: {} is not in [0, 0.5)", self.pacing_margin));
        }
        if self.min_cwnd_segments == 0 {
            return Err("min_cwnd_segments: expected at least 1 segment".into());
        }
        Ok(())
    }
}

/// The sender as the registry holds it: boxed, since BBR's state (about 400 bytes) would otherwise
/// size every flow's controller.
pub type BoxedBbr = Box<Bbr>;

/// `cc = "bbr"` or `{ kind = "bbr", ... }` with the fields of [`BbrParams`] (defaults: Linux's). On
/// real packets the kernel's own `bbr` carries the flow.
impl crate::params::HostParams for BbrParams {
    type Spec = BbrParams;

    fn resolve(spec: Option<BbrParams>) -> Result<Self, crate::params::ParamError> {
        let p = spec.unwrap_or_default();
        p.check().map_err(|e| crate::params::ParamError::from_check(&e))?;
        Ok(p)
    }

    fn controller(&self, t: &crate::params::HostContext) -> crate::host::AnyController {
        use crate::host::AnyController;
        AnyController::Bbr(Box::new(Bbr::new(*self, t.mss_bytes).with_header_bytes(t.header_bytes)))
    }

    /// Linux's own BBR on real packets.
    fn linux_tcp(&self, _kernel_stack: bool) -> Option<&'static str> {
        Some("bbr")
    }
}
