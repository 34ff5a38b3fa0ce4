//! XCP (Katabi et al., SIGCOMM 2002, in its ns-2.35 form): per-packet window feedback from an
//! efficiency and a fairness controller. See docs/algorithms/xcp.md.

pub mod header;
pub mod host;
pub mod link;

pub use header::XcpHeader;
pub use host::{Xcp, XcpConfig, XcpEcho};
pub use link::{XcpRouter, XcpRouterConfig};

use serde::{Deserialize, Serialize};

use crate::host::{AnyController, AnyEchoer};
use crate::link::AnyLinkAlgorithm;
use crate::params::{CcTableSpec, HostContext, HostParams, LinkParams, ParamError};
use crate::rng::{uniform01, Pcg64Mcg};
use crate::wire::CongestionHeader;
use crate::{Dur, Time};

// ---- `queue = ...`: XCP's router: `queue = "xcp"` or `{ kind = "xcp", alpha, beta, gamma }`. The scenario entry as written, its resolved parameters, and the algorithm built from them.
/// `queue = { kind = "xcp", ... }` (alpha 0.4, beta 0.226, gamma 0.1 by default).
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct XcpQueueSpec {
    pub alpha: Option<f64>,
    pub beta: Option<f64>,
    pub gamma: Option<f64>,
}

/// XCP router parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct XcpRouterParams {
    pub alpha: f64,
    pub beta: f64,
    pub gamma: f64,
}

impl LinkParams for XcpRouterParams {
    type Spec = XcpQueueSpec;
    /// XCP's router: alpha 0.4, beta 0.226, gamma 0.1 unless given.
    fn resolve(spec: Option<Self::Spec>) -> Result<Self, ParamError> {
        let m = spec;
        let d = XcpRouterConfig::default();
        let (alpha, beta, gamma) = match m {
            None => (d.alpha, d.beta, d.gamma),
            Some(m) => (m.alpha.unwrap_or(d.alpha), m.beta.unwrap_or(d.beta), m.gamma.unwrap_or(d.gamma)),
        };
        for (field, v) in [("alpha", alpha), ("beta", beta), ("gamma", gamma)] {
            if !(v >= 0.0 && v.is_finite()) {
                return Err(ParamError::new(field, format!("{v}: expected a number >= 0")));
            }
        }
        Ok(XcpRouterParams { alpha, beta, gamma })
    }

    fn build(&self, mut rng: Pcg64Mcg, rate_bps: u64) -> AnyLinkAlgorithm {
        let p = self;

        let cfg = XcpRouterConfig { alpha: p.alpha, beta: p.beta, gamma: p.gamma, ..XcpRouterConfig::default() };
        // ns-2.35 starts the timers at N(T, 0.2 T); a uniform phase in [0.8 T, 1.2 T] here.
        let phase = Dur::from_secs_f64(cfg.initial_rtt.as_secs_f64() * (0.8 + 0.4 * uniform01(&mut rng)));
        AnyLinkAlgorithm::Xcp(XcpRouter::new(cfg, rate_bps, Time::ZERO, phase))
    }
}

// ---- `cc = ...`: XCP's sender (Katabi et al. 2002, ns-2.35 form): `cc = "xcp"`, no parameters. The scenario entry, its (empty) resolved parameters, and the controller and echoer.
/// XCP's sender takes no parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct XcpCcParams {}

impl HostParams for XcpCcParams {
    type Spec = CcTableSpec;
    fn resolve(spec: Option<Self::Spec>) -> Result<Self, ParamError> {
        let table = spec;
        if table.is_some_and(|t| t.initial_window.is_some()) {
            return Err(ParamError::new("initial_window", "xcp takes no parameters"));
        }
        Ok(XcpCcParams {})
    }

    fn controller(&self, t: &HostContext) -> AnyController {
        AnyController::Xcp(Xcp::new(XcpConfig { mss_bytes: t.mss_bytes, ..XcpConfig::default() }))
    }

    fn echoer(&self, _two_way_delay: Dur) -> AnyEchoer {
        AnyEchoer::Xcp(XcpEcho::default())
    }

    fn shim(&self) -> CongestionHeader {
        CongestionHeader::Xcp(XcpHeader::default())
    }
}
