//! JetMax's router (reconstructed): `queue = "jetmax"` or `{ kind = "jetmax", gamma, interval }`.
//! The scenario entry as written, its resolved parameters, and the algorithm built from them.

use super::prelude::*;
use xcc_core::algorithms::jetmax::*;

/// `queue = { kind = "jetmax", ... }` (reconstructed law; docs/algorithms/jetmax.md).
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct JetMaxQueueSpec {
    pub kind: String,
    pub gamma: Option<f64>,
    pub interval: Option<String>,
}

/// JetMax router parameters (reconstructed law).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct JetMaxRouterParams {
    pub gamma: f64,
    pub interval_ns: u64,
}

impl QueueConfig for JetMaxRouterParams {
    const TARGET_UTILISATION: Option<&'static str> = Some("gamma");

    /// JetMax's router (reconstructed): gamma 0.95, D 20 ms.
    fn resolve(res: &Resolver, path: &str, v: Option<&Value>) -> Result<Self, ScenarioError> {
        let m: Option<JetMaxQueueSpec> = v.map(|v| typed(v.clone(), path, res.source)).transpose()?;
        let d = xcc_core::algorithms::jetmax::JetMaxRouterConfig::default();
        let (gamma, interval) = match m {
            None => (None, None),
            Some(m) => (m.gamma, m.interval),
        };
        let gamma = res.utilisation(&format!("{path}.gamma"), gamma, d.gamma)?;
        let interval_ns = res.positive_time_or(&format!("{path}.interval"), &interval, d.interval.as_ns())?;
        Ok(JetMaxRouterParams { gamma, interval_ns })
    }

    fn build(&self, mut rng: Pcg64Mcg, rate_bps: u64) -> AnyLinkAlgorithm {
        let p = self;

        let phase = Time((uniform01(&mut rng) * p.interval_ns as f64) as u64);
        let cfg = JetMaxRouterConfig { gamma: p.gamma, interval: Dur(p.interval_ns), ..JetMaxRouterConfig::default() };
        AnyLinkAlgorithm::JetMax(JetMaxRouter::new(cfg, rate_bps, phase))
    }
}
