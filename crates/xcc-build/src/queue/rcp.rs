//! RCP's router: `queue = "rcp"` or `{ kind = "rcp", preset, ... }`.
//! The scenario entry as written, its resolved parameters, and the algorithm built from them.

use super::prelude::*;

/// `queue = { kind = "rcp", preset = "stanford", ... }`: a named parameter set, then overrides.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct RcpQueueSpec {
    pub kind: String,
    pub preset: Option<String>,
    pub alpha: Option<f64>,
    pub beta: Option<f64>,
    /// Virtual-capacity factor.
    pub gamma: Option<f64>,
    pub init_rate_fact: Option<f64>,
    pub min_pprtt: Option<f64>,
    /// "ns2" (default: ns-2 v4's asymmetric EWMA) or "last" (each interval's sample).
    pub rtt_filter: Option<String>,
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
}

impl QueueConfig for RcpRouterParams {
    const TARGET_UTILISATION: Option<&'static str> = Some("gamma");

    /// RCP's router: a named preset (default "stanford": alpha 0.4, beta 1), then overrides.
    fn resolve(res: &Resolver, path: &str, v: Option<&Value>) -> Result<Self, ScenarioError> {
        let m: Option<RcpQueueSpec> = v.map(|v| typed(v.clone(), path, res.source)).transpose()?;
        use xcc_core::link::{RcpRouterConfig, RCP_PRESETS};
        let m = m.unwrap_or(RcpQueueSpec {
            kind: "rcp".into(),
            preset: None,
            alpha: None,
            beta: None,
            gamma: None,
            init_rate_fact: None,
            min_pprtt: None,
            rtt_filter: None,
        });
        let name = m.preset.as_deref().unwrap_or("stanford");
        let Some(&(preset, ..)) = RCP_PRESETS.iter().find(|p| p.0 == name) else {
            let known: Vec<&str> = RCP_PRESETS.iter().map(|p| p.0).collect();
            return Err(res
                .err(&format!("{path}.preset"), format!("unknown RCP preset '{name}' (known: {})", known.join(", "))));
        };
        let d = RcpRouterConfig::preset(preset).expect("preset listed");
        let alpha = m.alpha.unwrap_or(d.alpha);
        let beta = m.beta.unwrap_or(d.beta);
        let gamma = m.gamma.unwrap_or(d.gamma);
        let init_rate_fact = m.init_rate_fact.unwrap_or(d.init_rate_fact);
        let min_pprtt = m.min_pprtt.unwrap_or(d.min_pprtt);
        for (field, v) in [("alpha", alpha), ("beta", beta), ("min_pprtt", min_pprtt)] {
            if !(v >= 0.0 && v.is_finite()) {
                return Err(res.err(&format!("{path}.{field}"), format!("{v}: expected a number >= 0")));
            }
        }
        for (field, v) in [("gamma", gamma), ("init_rate_fact", init_rate_fact)] {
            if !(v > 0.0 && v <= 1.0) {
                return Err(res.err(&format!("{path}.{field}"), format!("{v}: expected 0 < {field} <= 1")));
            }
        }
        let rtt_filter = match m.rtt_filter.as_deref() {
            None | Some("ns2") => RcpRttFilter::Ns2Ewma,
            Some("last") => RcpRttFilter::LastSample,
            Some(other) => {
                return Err(res.err(&format!("{path}.rtt_filter"), format!("'{other}': expected \"ns2\" or \"last\"")))
            }
        };
        Ok(RcpRouterParams { preset, alpha, beta, gamma, init_rate_fact, min_pprtt, rtt_filter })
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
            ..RcpRouterConfig::default()
        };
        let t = cfg.upd_timeslot.min(cfg.initial_rtt).as_secs_f64();
        let phase = Dur::from_secs_f64(t * (0.8 + 0.4 * uniform01(&mut rng)));
        AnyLinkAlgorithm::Rcp(RcpRouter::new(cfg, rate_bps, Time::ZERO, phase))
    }
}
