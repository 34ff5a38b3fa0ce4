//! XCP's router: `queue = "xcp"` or `{ kind = "xcp", alpha, beta, gamma }`.
//! The scenario entry as written, its resolved parameters, and the algorithm built from them.

use super::prelude::*;
use xcc_core::algorithms::xcp::*;

/// `queue = { kind = "xcp", ... }` (alpha 0.4, beta 0.226, gamma 0.1 by default).
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct XcpQueueSpec {
    pub kind: String,
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

impl QueueConfig for XcpRouterParams {
    /// XCP's router: alpha 0.4, beta 0.226, gamma 0.1 unless given.
    fn resolve(res: &Resolver, path: &str, v: Option<&Value>) -> Result<Self, ScenarioError> {
        let m: Option<XcpQueueSpec> = v.map(|v| typed(v.clone(), path, res.source)).transpose()?;
        let d = xcc_core::algorithms::xcp::XcpRouterConfig::default();
        let (alpha, beta, gamma) = match m {
            None => (d.alpha, d.beta, d.gamma),
            Some(m) => (m.alpha.unwrap_or(d.alpha), m.beta.unwrap_or(d.beta), m.gamma.unwrap_or(d.gamma)),
        };
        for (field, v) in [("alpha", alpha), ("beta", beta), ("gamma", gamma)] {
            if !(v >= 0.0 && v.is_finite()) {
                return Err(res.err(&format!("{path}.{field}"), format!("{v}: expected a number >= 0")));
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
