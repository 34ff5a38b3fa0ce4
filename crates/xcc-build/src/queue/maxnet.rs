//! MaxNet's router (seed 000): `queue = "maxnet"` or `{ kind = "maxnet", mu, dt_p, t0, t, x_max }`.
//! The scenario entry as written, its resolved parameters, and the algorithm built from them.

use super::prelude::*;
use xcc_core::algorithms::maxnet::*;

/// `queue = { kind = "maxnet", ... }` (seed 000, Section VI defaults).
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct MaxNetQueueSpec {
    pub kind: String,
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

impl QueueConfig for MaxNetRouterParams {
    const TARGET_UTILISATION: Option<&'static str> = Some("mu");

    /// MaxNet's router: seed 000's defaults (dt_p 1 ms, T0 130 ms, T 0.4 s, x_max 1e15), mu 0.9.
    fn resolve(res: &Resolver, path: &str, v: Option<&Value>) -> Result<Self, ScenarioError> {
        let m: Option<MaxNetQueueSpec> = v.map(|v| typed(v.clone(), path, res.source)).transpose()?;
        let d = xcc_core::algorithms::maxnet::MaxNetRouterConfig::default();
        let (mu, dt_p, t0, t, x_max) = match m {
            None => (None, None, None, None, None),
            Some(m) => (m.mu, m.dt_p, m.t0, m.t, m.x_max),
        };
        let mu = mu.unwrap_or(d.mu);
        if !(mu > 0.0 && mu <= 1.0) {
            return Err(res.err(&format!("{path}.mu"), format!("{mu}: expected 0 < mu <= 1")));
        }
        let positive_time = |field: &str, v: Option<String>, default: u64| -> Result<u64, ScenarioError> {
            match v {
                None => Ok(default),
                Some(s) => match res.time(&format!("{path}.{field}"), &s)? {
                    0 => Err(res.err(&format!("{path}.{field}"), "expected a positive time")),
                    ns => Ok(ns),
                },
            }
        };
        let dt_p_ns = positive_time("dt_p", dt_p, d.dt_p.as_ns())?;
        let t0_ns = positive_time("t0", t0, d.t0.as_ns())?;
        let t_s = positive_time("t", t, (d.t_s * 1e9) as u64)? as f64 * 1e-9;
        let x_max_bps = match x_max {
            None => d.x_max_bps,
            Some(s) => match parse_rate_bps(&s).map_err(|m| res.err(&format!("{path}.x_max"), m))? {
                0 => return Err(res.err(&format!("{path}.x_max"), "expected a positive rate")),
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
