//! JetMax (Zhang, Leonard & Loguinov, INFOCOM 2006; laws and header reconstructed): routers
//! keep a fair rate per link, sources follow the bottleneck's. See docs/algorithms/jetmax.md.

pub mod header;
pub mod host;
pub mod link;

pub use header::JetMaxHeader;
pub use host::{JetMax, JetMaxConfig};
pub use link::{JetMaxRouter, JetMaxRouterConfig, JetMaxStats};

use serde::{Deserialize, Serialize};

use crate::host::AnyController;
use crate::link::AnyLinkAlgorithm;
use crate::params::{positive_time_or, time, utilisation, HostContext, HostParams, LinkParams, ParamError};
use crate::rng::{uniform01, Pcg64Mcg};
use crate::wire::CongestionHeader;
use crate::{Dur, Time};

// ---- `queue = ...`: JetMax's router (reconstructed): `queue = "jetmax"` or `{ kind = "jetmax", gamma, interval }`. The scenario entry as written, its resolved parameters, and the algorithm built from them.
/// `queue = { kind = "jetmax", ... }` (reconstructed law; docs/algorithms/jetmax.md).
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct JetMaxQueueSpec {
    pub gamma: Option<f64>,
    pub interval: Option<String>,
}

/// JetMax router parameters (reconstructed law).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct JetMaxRouterParams {
    pub gamma: f64,
    pub interval_ns: u64,
}

impl LinkParams for JetMaxRouterParams {
    type Spec = JetMaxQueueSpec;
    const TARGET_UTILISATION: Option<&'static str> = Some("gamma");

    /// JetMax's router (reconstructed): gamma 0.95, D 20 ms.
    fn resolve(spec: Option<Self::Spec>) -> Result<Self, ParamError> {
        let m = spec;
        let d = JetMaxRouterConfig::default();
        let (gamma, interval) = match m {
            None => (None, None),
            Some(m) => (m.gamma, m.interval),
        };
        let gamma = utilisation("gamma", gamma, d.gamma)?;
        let interval_ns = positive_time_or("interval", &interval, d.interval.as_ns())?;
        Ok(JetMaxRouterParams { gamma, interval_ns })
    }

    fn build(&self, mut rng: Pcg64Mcg, rate_bps: u64) -> AnyLinkAlgorithm {
        let p = self;

        let phase = Time((uniform01(&mut rng) * p.interval_ns as f64) as u64);
        let cfg = JetMaxRouterConfig { gamma: p.gamma, interval: Dur(p.interval_ns), ..JetMaxRouterConfig::default() };
        AnyLinkAlgorithm::JetMax(JetMaxRouter::new(cfg, rate_bps, phase))
    }
}

// ---- `cc = ...`: JetMax's sender (reconstructed; docs/algorithms/jetmax.md): `cc = "jetmax"` or `{ kind = "jetmax", tau = 0.6, probe_wait = "100ms" }`. The scenario entry as written, its resolved parameters (defaults from `JetMaxConfig`), and the controller built from them.
/// `cc = { kind = "jetmax", tau = 0.6, probe_wait = "100ms" }`.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct JetMaxCcSpec {
    pub tau: Option<f64>,
    pub probe_wait: Option<String>,
}

/// JetMax's sender parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct JetMaxCcParams {
    pub tau: f64,
    pub probe_wait_ns: u64,
}

impl HostParams for JetMaxCcParams {
    type Spec = JetMaxCcSpec;
    fn resolve(spec: Option<Self::Spec>) -> Result<Self, ParamError> {
        let d = JetMaxConfig::default();
        let Some(v) = spec else {
            return Ok(JetMaxCcParams { tau: d.tau, probe_wait_ns: d.probe_wait.as_ns() });
        };
        let spec = v;
        let tau = spec.tau.unwrap_or(d.tau);
        if !(tau > 0.0 && tau <= 1.0) {
            return Err(ParamError::new("tau", format!("{tau}: expected 0 < tau <= 1")));
        }
        let probe_wait_ns = match &spec.probe_wait {
            None => d.probe_wait.as_ns(),
            Some(s) => time("probe_wait", s)?,
        };
        Ok(JetMaxCcParams { tau, probe_wait_ns })
    }

    fn controller(&self, t: &HostContext) -> AnyController {
        AnyController::JetMax(JetMax::new(JetMaxConfig {
            tau: self.tau,
            // A full-size packet on the wire: the share each packet stands for.
            packet_bytes: t.full_packet_bytes(self.shim()),
            mss_bytes: t.mss_bytes,
            probe_wait: Dur(self.probe_wait_ns),
        }))
    }

    fn shim(&self) -> CongestionHeader {
        CongestionHeader::JetMax(JetMaxHeader::default())
    }
}
