//! RCP (Dukkipati et al.): routers advertise one fair rate per link, sources send at the
//! smallest on their path; as packet flows (link, host, header) and in seed 004's session form
//! ([`session`]). See docs/algorithms/rcp.md.

pub mod header;
pub mod host;
pub mod link;
pub mod session;

pub use header::RcpHeader;
pub use host::{Rcp, RcpConfig};
pub use link::{RcpRouter, RcpRouterConfig, RcpRttFilter, RCP_PRESETS};

/// The session form under the names the registry gives it (the packet form's `Rcp` is the
/// sender).
pub use session::{Rcp as RcpSession, RcpParams as RcpSessionParams};

use serde::{Deserialize, Serialize};

use crate::host::AnyController;
use crate::link::AnyLinkAlgorithm;
use crate::params::{positive_time_or, CcTableSpec, HostContext, HostParams, LinkParams, ParamError};
use crate::rng::{uniform01, Pcg64Mcg};
use crate::wire::CongestionHeader;
use crate::{Dur, Time};

// ---- `queue = ...`: RCP's router: `queue = "rcp"` or `{ kind = "rcp", preset, ... }`. The scenario entry as written, its resolved parameters, and the algorithm built from them.
/// `queue = { kind = "rcp", preset = "stanford", ... }`: a named parameter set, then overrides.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct RcpQueueSpec {
    pub preset: Option<String>,
    pub alpha: Option<f64>,
    pub beta: Option<f64>,
    /// Virtual-capacity factor.
    pub gamma: Option<f64>,
    pub init_rate_fact: Option<f64>,
    pub min_pprtt: Option<f64>,
    /// "ns2" (default: ns-2 v4's asymmetric EWMA) or "last" (each interval's sample).
    pub rtt_filter: Option<String>,
    /// Longest control interval: a time (default "10ms", ns-2's `upd_timeslot_`), or "rtt" for
    /// no cap (T = d, the average RTT, as in the RCP papers' equations).
    pub max_interval: Option<String>,
}

/// RCP router parameters (the preset's name is recorded for the report).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct RcpRouterParams {
    pub preset: &'static str,
    pub alpha: f64,
    pub beta: f64,
    pub gamma: f64,
    pub init_rate_fact: f64,
    pub min_pprtt: f64,
    pub rtt_filter: RcpRttFilter,
    /// Longest control interval in ns; `None`: no cap, T = d. Left out of `run.json` at its
    /// ns-2 default so that runs made before it existed keep their bytes.
    #[serde(skip_serializing_if = "is_ns2_timeslot")]
    pub max_interval_ns: Option<u64>,
}

/// The default cap of the control interval, ns-2's `upd_timeslot_` (10 ms)?
fn is_ns2_timeslot(v: &Option<u64>) -> bool {
    *v == Some(RcpRouterConfig::default().upd_timeslot.as_ns())
}

impl LinkParams for RcpRouterParams {
    type Spec = RcpQueueSpec;
    const TARGET_UTILISATION: Option<&'static str> = Some("gamma");

    /// RCP's router: a named preset (default "stanford": alpha 0.4, beta 1), then overrides.
    fn resolve(spec: Option<Self::Spec>) -> Result<Self, ParamError> {
        let m = spec;
        use {RcpRouterConfig, RCP_PRESETS};
        let m = m.unwrap_or(RcpQueueSpec {
            preset: None,
            alpha: None,
            beta: None,
            gamma: None,
            init_rate_fact: None,
            min_pprtt: None,
            rtt_filter: None,
            max_interval: None,
        });
        let name = m.preset.as_deref().unwrap_or("stanford");
        let Some(&(preset, ..)) = RCP_PRESETS.iter().find(|p| p.0 == name) else {
            let known: Vec<&str> = RCP_PRESETS.iter().map(|p| p.0).collect();
            return Err(ParamError::new(
                "preset",
                format!("unknown RCP preset '{name}' (known: {})", known.join(", ")),
            ));
        };
        let d = RcpRouterConfig::preset(preset).expect("preset listed");
        let alpha = m.alpha.unwrap_or(d.alpha);
        let beta = m.beta.unwrap_or(d.beta);
        let gamma = m.gamma.unwrap_or(d.gamma);
        let init_rate_fact = m.init_rate_fact.unwrap_or(d.init_rate_fact);
        let min_pprtt = m.min_pprtt.unwrap_or(d.min_pprtt);
        for (field, v) in [("alpha", alpha), ("beta", beta), ("min_pprtt", min_pprtt)] {
            if !(v >= 0.0 && v.is_finite()) {
                return Err(ParamError::new(field, format!("{v}: expected a number >= 0")));
            }
        }
        for (field, v) in [("gamma", gamma), ("init_rate_fact", init_rate_fact)] {
            if !(v > 0.0 && v <= 1.0) {
                return Err(ParamError::new(field, format!("{v}: expected 0 < {field} <= 1")));
            }
        }
        let rtt_filter = match m.rtt_filter.as_deref() {
            None | Some("ns2") => RcpRttFilter::Ns2Ewma,
            Some("last") => RcpRttFilter::LastSample,
            Some(other) => {
                return Err(ParamError::new("rtt_filter", format!("'{other}': expected \"ns2\" or \"last\"")))
            }
        };
        let max_interval_ns = match m.max_interval.as_deref() {
            Some("rtt") => None,
            other => Some(positive_time_or("max_interval", &other.map(str::to_string), d.upd_timeslot.as_ns())?),
        };
        Ok(RcpRouterParams { preset, alpha, beta, gamma, init_rate_fact, min_pprtt, rtt_filter, max_interval_ns })
    }

    fn build(&self, mut rng: Pcg64Mcg, rate_bps: u64) -> AnyLinkAlgorithm {
        let p = self;

        let cfg = RcpRouterConfig {
            alpha: p.alpha,
            beta: p.beta,
            gamma: p.gamma,
            init_rate_fact: p.init_rate_fact,
            min_pprtt: p.min_pprtt,
            rtt_filter: p.rtt_filter,
            upd_timeslot: Dur(p.max_interval_ns.unwrap_or(u64::MAX)),
            ..RcpRouterConfig::default()
        };
        let t = cfg.upd_timeslot.min(cfg.initial_rtt).as_secs_f64();
        let phase = Dur::from_secs_f64(t * (0.8 + 0.4 * uniform01(&mut rng)));
        AnyLinkAlgorithm::Rcp(RcpRouter::new(cfg, rate_bps, Time::ZERO, phase))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(v: serde_json::Value) -> Result<RcpRouterParams, ParamError> {
        RcpRouterParams::resolve(Some(serde_json::from_value(v).unwrap()))
    }

    /// ns-2's cap by default (and absent from run.json), a time, or "rtt" for T = d.
    #[test]
    fn max_interval_is_ns2_by_default_a_time_or_the_rtt() {
        let d = resolve(serde_json::json!({})).unwrap();
        assert_eq!(d.max_interval_ns, Some(10_000_000));
        assert!(serde_json::to_value(d).unwrap().get("max_interval_ns").is_none());
        let t = resolve(serde_json::json!({"max_interval": "2ms"})).unwrap();
        assert_eq!(t.max_interval_ns, Some(2_000_000));
        assert_eq!(serde_json::to_value(t).unwrap()["max_interval_ns"], 2_000_000);
        let rtt = resolve(serde_json::json!({"max_interval": "rtt"})).unwrap();
        assert_eq!(rtt.max_interval_ns, None);
        for bad in ["0s", "fast"] {
            let e = resolve(serde_json::json!({"max_interval": bad})).unwrap_err();
            assert_eq!(e.field, "max_interval", "{e:?}");
        }
    }
}

// ---- `cc = ...`: RCP's sender (Dukkipati et al., Stanford ns-2 v4): `cc = "rcp"`, no parameters. The scenario entry, its (empty) resolved parameters, and the controller built from them.
/// RCP's sender takes no parameters (its rate is the routers').
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct RcpCcParams {}

impl HostParams for RcpCcParams {
    type Spec = CcTableSpec;
    fn resolve(spec: Option<Self::Spec>) -> Result<Self, ParamError> {
        let table = spec;
        if table.is_some_and(|t| t.initial_window.is_some()) {
            return Err(ParamError::new("initial_window", "rcp takes no parameters"));
        }
        Ok(RcpCcParams {})
    }

    fn controller(&self, t: &HostContext) -> AnyController {
        AnyController::Rcp(Rcp::new(RcpConfig {
            mss_bytes: t.mss_bytes,
            packet_bytes: t.full_packet_bytes(self.shim()),
            ..RcpConfig::default()
        }))
    }

    fn shim(&self) -> CongestionHeader {
        CongestionHeader::Rcp(RcpHeader::default())
    }
}
