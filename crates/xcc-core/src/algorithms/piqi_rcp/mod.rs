//! PIQI-RCP (Jain & Loguinov, IWQoS 2007; law reconstructed from seeds 002/004): RCP with a
//! bounded-gain, queue-aware rate law; as packet flows and in seed 004's session form
//! ([`session`]). See docs/algorithms/piqi-rcp.md.

pub mod header;
pub mod host;
pub mod link;
pub mod session;

pub use header::PiqiRcpHeader;
pub use host::{PiqiRcp, PiqiRcpConfig};
pub use link::{PiqiRcpKappa, PiqiRcpLaw, PiqiRcpRouter, PiqiRcpRouterConfig};

/// The session form under the names the registry gives it (the packet form's `PiqiRcp` is the
/// sender).
pub use session::{PiqiRcp as PiqiRcpSession, PiqiRcpParams as PiqiRcpSessionParams};

use serde::{Deserialize, Serialize};

use crate::host::AnyController;
use crate::link::AnyLinkAlgorithm;
use crate::params::{positive_time_or, utilisation, AnyTable, HostContext, HostParams, LinkParams, ParamError};
use crate::rng::{uniform01, Pcg64Mcg};
use crate::wire::CongestionHeader;
use crate::{Dur, Time};

// ---- `queue = ...`: PIQI-RCP's router (reconstructed): `queue = "piqi-rcp"` or `{ kind = "piqi-rcp", ... }`. The scenario entry as written, its resolved parameters, and the algorithm built from them.
/// `queue = { kind = "piqi-rcp", ... }` (reconstructed law; docs/algorithms/piqi-rcp.md).
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct PiqiRcpQueueSpec {
    pub interval: Option<String>,
    /// A number, or "auto" for kappa* = T / (2 (T + RTT_max)).
    pub kappa: Option<KappaSpec>,
    pub gamma: Option<f64>,
    pub initial: Option<f64>,
    pub rtt0: Option<String>,
    /// "normalised" (default) or "multiplicative" (the sensitivity law).
    pub law: Option<PiqiRcpLawSpec>,
}

/// `kappa = 0.5` or `kappa = "auto"`.
#[derive(Deserialize, Debug)]
#[serde(untagged)]
pub enum KappaSpec {
    Number(f64),
    Word(String),
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

impl LinkParams for PiqiRcpRouterParams {
    type Spec = PiqiRcpQueueSpec;
    const TARGET_UTILISATION: Option<&'static str> = Some("gamma");

    /// PIQI-RCP's router (reconstructed): T 5 ms, kappa auto (kappa*), gamma 0.98, R0 0.05 C,
    /// RTT before any sample 200 ms.
    fn resolve(spec: Option<Self::Spec>) -> Result<Self, ParamError> {
        let m = spec;
        let d = PiqiRcpRouterConfig::default();
        let m = m.unwrap_or(PiqiRcpQueueSpec {
            interval: None,
            kappa: None,
            gamma: None,
            initial: None,
            rtt0: None,
            law: None,
        });
        let interval_ns = positive_time_or("interval", &m.interval, d.interval.as_ns())?;
        let kappa = match &m.kappa {
            None => None,
            Some(KappaSpec::Word(s)) if s == "auto" => None,
            Some(KappaSpec::Number(k)) if *k > 0.0 && *k <= 1.0 => Some(*k),
            Some(KappaSpec::Number(n)) => {
                return Err(ParamError::new("kappa", format!("{n}: expected 0 < kappa <= 1")))
            }
            Some(KappaSpec::Word(other)) => {
                return Err(ParamError::new(
                    "kappa",
                    format!("expected a number in (0, 1] or \"auto\", found {other:?}"),
                ))
            }
        };
        let gamma = utilisation("gamma", m.gamma, d.gamma)?;
        let initial_fraction = m.initial.unwrap_or(d.initial_fraction);
        if !(initial_fraction > 0.0 && initial_fraction <= 1.0) {
            return Err(ParamError::new("initial", format!("{initial_fraction}: expected a fraction of C in (0, 1]")));
        }
        let rtt0_ns = positive_time_or("rtt0", &m.rtt0, d.rtt0.as_ns())?;
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

// ---- `cc = ...`: PIQI-RCP's sender (reconstructed; docs/algorithms/piqi-rcp.md): `cc = "piqi-rcp"`, no parameters. The scenario entry, its (empty) resolved parameters, and the controller.
/// PIQI-RCP's sender takes no parameters (its rate is the routers').
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PiqiRcpCcParams {}

impl HostParams for PiqiRcpCcParams {
    type Spec = AnyTable;
    fn resolve(spec: Option<Self::Spec>) -> Result<Self, ParamError> {
        match spec {
            Some(m) if !m.is_empty() => {
                Err(ParamError::new("", "piqi-rcp's source takes no parameters (its rate is the routers')"))
            }
            _ => Ok(PiqiRcpCcParams {}),
        }
    }

    fn controller(&self, t: &HostContext) -> AnyController {
        AnyController::PiqiRcp(PiqiRcp::new(PiqiRcpConfig { mss_bytes: t.mss_bytes }))
    }

    fn shim(&self) -> CongestionHeader {
        CongestionHeader::PiqiRcp(PiqiRcpHeader::default())
    }
}
