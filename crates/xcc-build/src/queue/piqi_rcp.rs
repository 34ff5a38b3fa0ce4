//! PIQI-RCP's router (reconstructed): `queue = "piqi-rcp"` or `{ kind = "piqi-rcp", ... }`.
//! The scenario entry as written, its resolved parameters, and the algorithm built from them.

use super::prelude::*;
use xcc_core::algorithms::piqi_rcp::*;

/// `queue = { kind = "piqi-rcp", ... }` (reconstructed law; docs/algorithms/piqi-rcp.md).
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct PiqiRcpQueueSpec {
    pub kind: String,
    pub interval: Option<String>,
    /// A number, or "auto" for kappa* = T / (2 (T + RTT_max)).
    pub kappa: Option<Value>,
    pub gamma: Option<f64>,
    pub initial: Option<f64>,
    pub rtt0: Option<String>,
    /// "normalised" (default) or "multiplicative" (the sensitivity law).
    pub law: Option<PiqiRcpLawSpec>,
}

/// `law = ...` of a PIQI-RCP router.
#[derive(Deserialize, Debug, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub enum PiqiRcpLawSpec {
    Normalised,
    Multiplicative,
}

/// PIQI-RCP router parameters (reconstructed law).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PiqiRcpRouterParams {
    pub interval_ns: u64,
    /// `None`: kappa* from the largest RTT carried ("auto").
    pub kappa: Option<f64>,
    pub gamma: f64,
    pub initial_fraction: f64,
    pub rtt0_ns: u64,
    /// The alternative law R (1 + kappa (gamma C - y) / C); written only when chosen, so the
    /// resolved scenario of the default law is unchanged.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub multiplicative_law: bool,
}

impl QueueConfig for PiqiRcpRouterParams {
    const TARGET_UTILISATION: Option<&'static str> = Some("gamma");

    /// PIQI-RCP's router (reconstructed): T 5 ms, kappa auto (kappa*), gamma 0.98, R0 0.05 C,
    /// RTT before any sample 200 ms.
    fn resolve(res: &Resolver, path: &str, v: Option<&Value>) -> Result<Self, ScenarioError> {
        let m: Option<PiqiRcpQueueSpec> = v.map(|v| typed(v.clone(), path, res.source)).transpose()?;
        let d = xcc_core::algorithms::piqi_rcp::PiqiRcpRouterConfig::default();
        let m = m.unwrap_or(PiqiRcpQueueSpec {
            kind: "piqi-rcp".into(),
            interval: None,
            kappa: None,
            gamma: None,
            initial: None,
            rtt0: None,
            law: None,
        });
        let interval_ns = res.positive_time_or(&format!("{path}.interval"), &m.interval, d.interval.as_ns())?;
        let kappa = match &m.kappa {
            None => None,
            Some(Value::String(s)) if s == "auto" => None,
            Some(Value::Number(n)) => match n.as_f64() {
                Some(k) if k > 0.0 && k <= 1.0 => Some(k),
                _ => return Err(res.err(&format!("{path}.kappa"), format!("{n}: expected 0 < kappa <= 1"))),
            },
            Some(other) => {
                return Err(res
                    .err(&format!("{path}.kappa"), format!("expected a number in (0, 1] or \"auto\", found {other}")))
            }
        };
        let gamma = res.utilisation(&format!("{path}.gamma"), m.gamma, d.gamma)?;
        let initial_fraction = m.initial.unwrap_or(d.initial_fraction);
        if !(initial_fraction > 0.0 && initial_fraction <= 1.0) {
            return Err(
                res.err(&format!("{path}.initial"), format!("{initial_fraction}: expected a fraction of C in (0, 1]"))
            );
        }
        let rtt0_ns = res.positive_time_or(&format!("{path}.rtt0"), &m.rtt0, d.rtt0.as_ns())?;
        let multiplicative_law = matches!(m.law, Some(PiqiRcpLawSpec::Multiplicative));
        Ok(PiqiRcpRouterParams { interval_ns, kappa, gamma, initial_fraction, rtt0_ns, multiplicative_law })
    }

    fn build(&self, mut rng: Pcg64Mcg, rate_bps: u64) -> AnyLinkAlgorithm {
        let p = self;

        let phase = Time((uniform01(&mut rng) * p.interval_ns as f64) as u64);
        let cfg = PiqiRcpRouterConfig {
            interval: Dur(p.interval_ns),
            kappa: p.kappa.map_or(PiqiRcpKappa::Auto, PiqiRcpKappa::Fixed),
            gamma: p.gamma,
            initial_fraction: p.initial_fraction,
            rtt0: Dur(p.rtt0_ns),
            law: if p.multiplicative_law { PiqiRcpLaw::Multiplicative } else { PiqiRcpLaw::FlowNormalised },
            ..PiqiRcpRouterConfig::default()
        };
        AnyLinkAlgorithm::PiqiRcp(PiqiRcpRouter::new(cfg, rate_bps, phase))
    }
}
