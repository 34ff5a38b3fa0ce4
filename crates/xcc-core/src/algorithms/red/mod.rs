//! RED, Random Early Detection (Floyd & Jacobson 1993), classic or gentle as ns-2 runs it, in
//! packet or byte mode, dropping or marking. See docs/algorithms/red.md.

pub mod link;

pub use link::{Red, RedAction, RedConfig, RedStats, RedUnit, RedVariant};

use serde::Deserialize;

use crate::link::AnyLinkAlgorithm;
use crate::params::{LinkParams, ParamError};
use crate::rng::Pcg64Mcg;
use crate::units::{parse_amount, parse_bytes, Amount};

// ---- `queue = ...`: RED (Floyd & Jacobson 1993): `queue = { kind = "red", min_th, max_th, ... }`. The scenario entry as written, its resolved parameters, and the algorithm built from them.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct RedSpec {
    pub w_q: Option<f64>,
    pub min_th: String,
    pub max_th: String,
    pub max_p: Option<f64>,
    pub variant: Option<String>,
    pub action: Option<String>,
    pub mean_packet: Option<String>,
}

/// RED's resolved parameters are xcc-core's own configuration (thresholds in `unit`).
pub type RedParams = RedConfig;

impl LinkParams for RedParams {
    type Spec = RedSpec;
    fn resolve(spec: Option<Self::Spec>) -> Result<Self, ParamError> {
        let Some(v) = spec else {
            return Err(ParamError::new(
                "",
                "red needs its thresholds: { kind = \"red\", min_th = \"30pkt\", max_th = \"90pkt\" }",
            ));
        };
        let r = v;
        let min = parse_amount(&r.min_th, false).map_err(|m| ParamError::new("min_th", m))?;
        let max = parse_amount(&r.max_th, false).map_err(|m| ParamError::new("max_th", m))?;
        let (unit, min_th, max_th) = match (min, max) {
            (Amount::Packets(a), Amount::Packets(b)) => (RedUnit::Packets, a, b),
            (Amount::Bytes(a), Amount::Bytes(b)) => (RedUnit::Bytes, a, b),
            _ => {
                return Err(ParamError::new(
                    "max_th",
                    "min_th and max_th must use the same unit (both packets or both bytes)",
                ))
            }
        };
        if min_th >= max_th {
            return Err(ParamError::new("max_th", format!("expected max_th > min_th, found {max_th} <= {min_th}")));
        }
        let w_q = r.w_q.unwrap_or(0.002);
        if !(w_q > 0.0 && w_q <= 1.0) {
            return Err(ParamError::new("w_q", format!("{w_q}: expected 0 < w_q <= 1")));
        }
        let max_p = r.max_p.unwrap_or(0.1);
        if !(max_p > 0.0 && max_p <= 1.0) {
            return Err(ParamError::new("max_p", format!("{max_p}: expected 0 < max_p <= 1")));
        }
        let variant = match r.variant.as_deref().unwrap_or("classic") {
            "gentle" => RedVariant::Gentle,
            "classic" => RedVariant::Classic,
            other => return Err(ParamError::new("variant", format!("'{other}': expected \"gentle\" or \"classic\""))),
        };
        let action = match r.action.as_deref().unwrap_or("drop") {
            "drop" => RedAction::Drop,
            "mark" => RedAction::Mark,
            other => return Err(ParamError::new("action", format!("'{other}': expected \"drop\" or \"mark\""))),
        };
        let mean_packet_bytes = match r.mean_packet {
            None => 1500,
            Some(s) => match parse_bytes(&s).map_err(|m| ParamError::new("mean_packet", m))? {
                0 => return Err(ParamError::new("mean_packet", "expected a positive size")),
                b if b > 65_535 => {
                    return Err(ParamError::new("mean_packet", format!("'{s}': expected at most 65535 B")))
                }
                b => b as u32,
            },
        };
        Ok(RedParams { w_q, min_th, max_th, max_p, unit, variant, action, mean_packet_bytes })
    }

    fn build(&self, rng: Pcg64Mcg, _rate_bps: u64) -> AnyLinkAlgorithm {
        AnyLinkAlgorithm::Red(Red::new(*self, rng))
    }
}
