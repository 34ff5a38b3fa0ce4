//! PowerTCP and theta-PowerTCP (Addanki, Michel and Schmid, "PowerTCP: Pushing the
//! Performance Limits of Datacenter Networks", NSDI 2022): window senders that react to the
//! *power* of the bottleneck, the product of its arrival rate and its queueing delay plus base
//! RTT, so they see a queue growing before it is long. PowerTCP measures power from INT
//! ([`crate::algorithms::int`]); theta-PowerTCP from RTT samples alone. [`host`] holds both
//! laws; docs/algorithms/powertcp.md states them and whose code each constant comes from.

pub mod host;

pub use host::{PowerTcp, PowerTcpSender, PowerVariant};

use std::num::NonZeroU64;

use serde::{Deserialize, Serialize};

use crate::algorithms::hpcc::{named_check, resolve_path_fields, rtt_and_rate};
use crate::algorithms::int::IntHeader;
use crate::host::AnyController;
use crate::params::{HostContext, HostParams, ParamError};
use crate::wire::CongestionHeader;

/// PowerTCP's parameters (both variants).
#[derive(Copy, Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct PowerTcpParams {
    /// gamma, the weight of the new window in `cwnd = gamma·(cwnd_old/Γ + beta) + (1 −
    /// gamma)·cwnd` (paper, Algorithm 1). `None`: 0.9 for PowerTCP and 0.7 for theta-PowerTCP,
    /// what the authors' ns-3 code runs (`rdma-hw.cc`, `UpdateRatePower`).
    pub gamma: Option<f64>,
    /// eta, the normalised power the sender settles at: Γ is divided by it before the update.
    /// `None`: 0.95 for PowerTCP (the code's `m_targetUtil`, 95 % of capacity) and 1.05 for
    /// theta-PowerTCP (the code divides by `1.05·baseRtt`: an RTT 5 % above the base, the
    /// queue an RTT-only signal needs to see). The paper's equation is eta = 1.
    pub eta: Option<f64>,
    /// beta, the additive increase, in bytes. `None`: 150 Mbit/s times the base RTT, the
    /// authors' code (`DataRate("150Mbps")` added to the rate before the gamma average).
    pub beta_bytes: Option<f64>,
    /// The least arrival rate (PowerTCP) or RTT-gradient term `1 + dθ/dt` (theta) counted in
    /// the power, as a fraction of the line rate (or of 1): a queue draining fast would
    /// otherwise give a negative power. 0.5: the authors' code (`A < 0.5·LineRate`).
    pub arrival_floor: f64,
    /// Least sending rate in bit/s; the window never falls below `min_rate·τ`. 1 Gbit/s, as
    /// HPCC's (the code shares HPCC's `m_minRate`).
    pub min_rate_bps: f64,
}

impl Default for PowerTcpParams {
    fn default() -> Self {
        PowerTcpParams { gamma: None, eta: None, beta_bytes: None, arrival_floor: 0.5, min_rate_bps: 1e9 }
    }
}

impl PowerTcpParams {
    /// Every field in range, or the name of the first one that is not.
    pub fn check(&self) -> Result<(), String> {
        if let Some(g) = self.gamma {
            if !(g > 0.0 && g <= 1.0) {
                return Err(format!("powertcp.gamma must be in (0, 1], got {g}"));
            }
        }
        if let Some(e) = self.eta {
            if !(e > 0.0 && e.is_finite()) {
                return Err(format!("powertcp.eta must be positive, got {e}"));
            }
        }
        if let Some(b) = self.beta_bytes {
            if !(b >= 0.0 && b.is_finite()) {
                return Err(format!("powertcp.beta_bytes must be >= 0, got {b}"));
            }
        }
        if !(self.arrival_floor >= 0.0 && self.arrival_floor <= 1.0) {
            return Err(format!("powertcp.arrival_floor must be in [0, 1], got {}", self.arrival_floor));
        }
        if !(self.min_rate_bps > 0.0 && self.min_rate_bps.is_finite()) {
            return Err(format!("powertcp.min_rate_bps must be positive, got {}", self.min_rate_bps));
        }
        Ok(())
    }
}

// ---- `cc = "powertcp"` or `{ kind = "powertcp", variant = "theta", ... }`: the sender.

/// `cc = { kind = "powertcp", ... }` as written: the variant, the law's fields (as
/// [`PowerTcpParams`]) and the sender's (as HPCC's: `base_rtt`, `line_rate`, `int_slots`).
#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct PowerTcpCcSpec {
    /// `"int"` (PowerTCP, the default) or `"theta"` (theta-PowerTCP, RTTs only, no INT).
    pub variant: Option<PowerVariant>,
    pub gamma: Option<f64>,
    pub eta: Option<f64>,
    pub beta_bytes: Option<f64>,
    pub arrival_floor: Option<f64>,
    pub min_rate_bps: Option<f64>,
    pub base_rtt: Option<String>,
    pub line_rate: Option<String>,
    pub int_slots: Option<u32>,
}

/// PowerTCP's resolved sender parameters, the variant's defaults applied (kept small: every
/// flow record of the simulator holds one).
#[derive(Copy, Clone, Debug, PartialEq, Serialize)]
pub struct PowerTcpCcParams {
    pub variant: PowerVariant,
    pub gamma: f64,
    pub eta: f64,
    /// `None`: 150 Mbit/s times τ (τ is known when the sender is built).
    pub beta_bytes: Option<f64>,
    pub arrival_floor: f64,
    pub min_rate_bps: f64,
    /// τ in ns, when given; otherwise the path's base RTT.
    pub base_rtt_ns: Option<NonZeroU64>,
    /// The NIC's rate in bit/s, when given; otherwise the first link's.
    pub line_rate_bps: Option<NonZeroU64>,
    /// INT records reserved per data packet (PowerTCP; theta sends none).
    pub int_slots: u8,
}

impl HostParams for PowerTcpCcParams {
    type Spec = PowerTcpCcSpec;

    fn resolve(spec: Option<PowerTcpCcSpec>) -> Result<Self, ParamError> {
        let s = spec.unwrap_or_default();
        let d = PowerTcpParams::default();
        let law = PowerTcpParams {
            gamma: s.gamma.or(d.gamma),
            eta: s.eta.or(d.eta),
            beta_bytes: s.beta_bytes.or(d.beta_bytes),
            arrival_floor: s.arrival_floor.unwrap_or(d.arrival_floor),
            min_rate_bps: s.min_rate_bps.unwrap_or(d.min_rate_bps),
        };
        law.check().map_err(|e| named_check(e, "powertcp."))?;
        let (base_rtt_ns, line_rate_bps, int_slots) = resolve_path_fields(&s.base_rtt, &s.line_rate, s.int_slots)?;
        let variant = s.variant.unwrap_or(PowerVariant::Int);
        let (gamma, eta) = match variant {
            PowerVariant::Int => (law.gamma.unwrap_or(0.9), law.eta.unwrap_or(0.95)),
            PowerVariant::Theta => (law.gamma.unwrap_or(0.7), law.eta.unwrap_or(1.05)),
        };
        Ok(PowerTcpCcParams {
            variant,
            gamma,
            eta,
            beta_bytes: law.beta_bytes,
            arrival_floor: law.arrival_floor,
            min_rate_bps: law.min_rate_bps,
            base_rtt_ns,
            line_rate_bps,
            int_slots,
        })
    }

    fn controller(&self, t: &HostContext) -> AnyController {
        let (rtt, rate) = rtt_and_rate(self.base_rtt_ns, self.line_rate_bps, t);
        let params = PowerTcpParams {
            gamma: Some(self.gamma),
            eta: Some(self.eta),
            beta_bytes: self.beta_bytes,
            arrival_floor: self.arrival_floor,
            min_rate_bps: self.min_rate_bps,
        };
        let law = PowerTcpSender::new(self.variant, params, rate, rtt).expect("parameters checked when resolved");
        AnyController::PowerTcp(PowerTcp::new(law, self.variant, self.int_slots as usize))
    }

    /// PowerTCP: an INT header of `int_slots` records; theta-PowerTCP: none.
    fn shim(&self) -> CongestionHeader {
        match self.variant {
            PowerVariant::Int => {
                CongestionHeader::Int(IntHeader::new(self.int_slots as usize).expect("int_slots checked when resolved"))
            }
            PowerVariant::Theta => CongestionHeader::None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_pass_and_each_bad_field_is_named() {
        assert_eq!(PowerTcpParams::default().check(), Ok(()));
        let bad = |p: PowerTcpParams, field: &str| assert!(p.check().unwrap_err().contains(field), "{field}");
        bad(PowerTcpParams { gamma: Some(0.0), ..Default::default() }, "powertcp.gamma");
        bad(PowerTcpParams { eta: Some(-1.0), ..Default::default() }, "powertcp.eta");
        bad(PowerTcpParams { beta_bytes: Some(f64::INFINITY), ..Default::default() }, "powertcp.beta_bytes");
        bad(PowerTcpParams { arrival_floor: 2.0, ..Default::default() }, "powertcp.arrival_floor");
        bad(PowerTcpParams { min_rate_bps: 0.0, ..Default::default() }, "powertcp.min_rate_bps");
        assert!(serde_json::from_str::<PowerTcpParams>(r#"{"gama": 0.9}"#).is_err());
    }

    #[test]
    fn the_scenario_entry_picks_the_variant_and_its_header() {
        let p = PowerTcpCcParams::resolve(None).unwrap();
        assert_eq!((p.variant, p.int_slots, p.shim().wire_len()), (PowerVariant::Int, 5, 84));
        let theta: PowerTcpCcSpec = serde_json::from_str(r#"{"variant": "theta", "gamma": 0.8}"#).unwrap();
        let p = PowerTcpCcParams::resolve(Some(theta)).unwrap();
        assert_eq!((p.variant, p.gamma, p.eta, p.shim()), (PowerVariant::Theta, 0.8, 1.05, CongestionHeader::None));
        assert!(serde_json::from_str::<PowerTcpCcSpec>(r#"{"variant": "delta"}"#).is_err());
        let bad = PowerTcpCcSpec { arrival_floor: Some(2.0), ..Default::default() };
        assert_eq!(PowerTcpCcParams::resolve(Some(bad)).unwrap_err().field, "arrival_floor");
    }
}
