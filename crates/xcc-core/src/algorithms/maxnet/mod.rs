//! MaxNet (seed 000): routers advertise the largest link price on the path in a 24-bit field;
//! sources set their rate from it (with MaxStart). See docs/algorithms/maxnet.md.

pub mod header;
pub mod host;
pub mod link;
pub mod tcp_option;

pub use header::MaxNetHeader;
pub use host::{MaxNet, MaxNetConfig, MaxNetEcho};
pub use link::{MaxNetRouter, MaxNetRouterConfig};

use serde::{Deserialize, Serialize};

use crate::host::{AnyController, AnyEchoer};
use crate::link::AnyLinkAlgorithm;
use crate::params::{time, HostContext, HostParams, LinkParams, ParamError};
use crate::rng::{uniform01, Pcg64Mcg};
use crate::units::parse_rate_bps;
use crate::wire::CongestionHeader;
use crate::{Dur, Time};

// ---- `queue = ...`: MaxNet's router (seed 000): `queue = "maxnet"` or `{ kind = "maxnet", mu, dt_p, t0, t, x_max }`. The scenario entry as written, its resolved parameters, and the algorithm built from them.
/// `queue = { kind = "maxnet", ... }` (seed 000, Section VI defaults).
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct MaxNetQueueSpec {
    pub mu: Option<f64>,
    pub dt_p: Option<String>,
    pub t0: Option<String>,
    pub t: Option<String>,
    pub x_max: Option<String>,
}

/// MaxNet router parameters (seed 000).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct MaxNetRouterParams {
    pub mu: f64,
    pub dt_p_ns: u64,
    pub t0_ns: u64,
    pub t_s: f64,
    pub x_max_bps: f64,
}

impl LinkParams for MaxNetRouterParams {
    type Spec = MaxNetQueueSpec;
    const TARGET_UTILISATION: Option<&'static str> = Some("mu");

    /// MaxNet's router: seed 000's defaults (dt_p 1 ms, T0 130 ms, T 0.4 s, x_max 1e15), mu 0.9.
    fn resolve(spec: Option<Self::Spec>) -> Result<Self, ParamError> {
        let m = spec;
        let d = MaxNetRouterConfig::default();
        let (mu, dt_p, t0, t, x_max) = match m {
            None => (None, None, None, None, None),
            Some(m) => (m.mu, m.dt_p, m.t0, m.t, m.x_max),
        };
        let mu = mu.unwrap_or(d.mu);
        if !(mu > 0.0 && mu <= 1.0) {
            return Err(ParamError::new("mu", format!("{mu}: expected 0 < mu <= 1")));
        }
        let positive_time = |field: &str, v: Option<String>, default: u64| -> Result<u64, ParamError> {
            match v {
                None => Ok(default),
                Some(s) => match time(field, &s)? {
                    0 => Err(ParamError::new(field, "expected a positive time")),
                    ns => Ok(ns),
                },
            }
        };
        let dt_p_ns = positive_time("dt_p", dt_p, d.dt_p.as_ns())?;
        let t0_ns = positive_time("t0", t0, d.t0.as_ns())?;
        let t_s = positive_time("t", t, (d.t_s * 1e9) as u64)? as f64 * 1e-9;
        let x_max_bps = match x_max {
            None => d.x_max_bps,
            Some(s) => match parse_rate_bps(&s).map_err(|m| ParamError::new("x_max", m))? {
                0 => return Err(ParamError::new("x_max", "expected a positive rate")),
                r => r as f64,
            },
        };
        Ok(MaxNetRouterParams { mu, dt_p_ns, t0_ns, t_s, x_max_bps })
    }

    fn build(&self, mut rng: Pcg64Mcg, rate_bps: u64) -> AnyLinkAlgorithm {
        let p = self;

        // Control intervals start at a random phase per link (protocols.md 14.4).
        let phase = Time((uniform01(&mut rng) * p.dt_p_ns as f64) as u64);
        let cfg =
            MaxNetRouterConfig { mu: p.mu, dt_p: Dur(p.dt_p_ns), t0: Dur(p.t0_ns), t_s: p.t_s, x_max_bps: p.x_max_bps };
        AnyLinkAlgorithm::MaxNet(MaxNetRouter::new(cfg, rate_bps, phase))
    }
}

// ---- `cc = ...`: MaxNet's source (seed 000, Fig. 2, with MaxStart): `cc = "maxnet"` or `{ kind = "maxnet", x_max, t, alpha, eta, dt_min, maxstart, pace }`. The scenario entry as written, its resolved parameters (defaults from `MaxNetConfig`, seed 000 Section VI), and the controller and echoer built from them.
/// `cc = { kind = "maxnet", ... }` (seed 000, Section VI defaults).
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct MaxNetCcSpec {
    pub x_max: Option<String>,
    pub t: Option<String>,
    pub alpha: Option<f64>,
    pub eta: Option<f64>,
    pub dt_min: Option<String>,
    pub maxstart: Option<bool>,
    pub pace: Option<bool>,
}

/// MaxNet source parameters (seed 000).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct MaxNetCcParams {
    pub x_max_bps: f64,
    pub t_s: f64,
    pub alpha: f64,
    pub eta: f64,
    pub dt_min_ns: u64,
    pub maxstart: bool,
    /// Pace at the source rate (ours; `docs/algorithms/maxnet.md`).
    pub pace: bool,
}

impl HostParams for MaxNetCcParams {
    type Spec = MaxNetCcSpec;
    /// MaxNet's source: seed 000 Section VI (x_max 1e15, T 0.4 s, alpha 0.66, eta 0.06,
    /// dt_min 1 us), MaxStart on.
    fn resolve(spec: Option<Self::Spec>) -> Result<Self, ParamError> {
        let m = spec;
        let d = MaxNetConfig::default();
        let m = m.unwrap_or(MaxNetCcSpec {
            x_max: None,
            t: None,
            alpha: None,
            eta: None,
            dt_min: None,
            maxstart: None,
            pace: None,
        });
        let x_max_bps = match &m.x_max {
            None => d.x_max_bps,
            Some(s) => match parse_rate_bps(s).map_err(|e| ParamError::new("x_max", e))? {
                0 => return Err(ParamError::new("x_max", "expected a positive rate")),
                r => r as f64,
            },
        };
        let t_s = match &m.t {
            None => d.t_s,
            Some(s) => match time("t", s)? {
                0 => return Err(ParamError::new("t", "expected a positive time")),
                ns => ns as f64 * 1e-9,
            },
        };
        let alpha = m.alpha.unwrap_or(d.alpha);
        let eta = m.eta.unwrap_or(d.eta);
        for (field, v) in [("alpha", alpha), ("eta", eta)] {
            if !(v > 0.0 && v.is_finite()) {
                return Err(ParamError::new(field, format!("{v}: expected a positive number")));
            }
        }
        let dt_min_ns = match &m.dt_min {
            None => d.dt_min.as_ns(),
            Some(s) => time("dt_min", s)?,
        };
        Ok(MaxNetCcParams {
            x_max_bps,
            t_s,
            alpha,
            eta,
            dt_min_ns,
            maxstart: m.maxstart.unwrap_or(d.maxstart),
            pace: m.pace.unwrap_or(d.pace),
        })
    }

    fn controller(&self, t: &HostContext) -> AnyController {
        let p = self;
        AnyController::MaxNet(MaxNet::new(MaxNetConfig {
            x_max_bps: p.x_max_bps,
            t_s: p.t_s,
            alpha: p.alpha,
            eta: p.eta,
            dt_min: Dur(p.dt_min_ns),
            maxstart: p.maxstart,
            mss_bytes: t.mss_bytes,
            pace: p.pace,
            packet_bytes: t.full_packet_bytes(self.shim()),
        }))
    }

    fn echoer(&self, two_way_delay: Dur) -> AnyEchoer {
        // MaxNet's receiver averages the price over one RTT: the path's two-way propagation
        // delay.
        AnyEchoer::MaxNet(MaxNetEcho::new(two_way_delay))
    }

    fn shim(&self) -> CongestionHeader {
        CongestionHeader::MaxNet(MaxNetHeader::default())
    }

    /// On `--stack kernel` MaxNet runs in Linux (the BPF `maxnet` congestion control).
    fn linux_tcp(&self, kernel_stack: bool) -> Option<&'static str> {
        kernel_stack.then_some("maxnet")
    }
}
