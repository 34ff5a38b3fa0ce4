//! MarkMax (seed 003): ECN marking of the flow with the largest backlog, on the whole backlog
//! (MarkMax-B) or on its tail (MarkMax-T). See docs/algorithms/markmax.md.

pub mod link;

pub use link::{MarkMax, MarkMaxConfig, MarkMaxStats, MarkMaxUnit, MarkMaxVariant};

use serde::{Deserialize, Serialize};

use crate::link::AnyLinkAlgorithm;
use crate::params::{LinkParams, ParamError};
use crate::rng::Pcg64Mcg;
use crate::units::{parse_amount, Amount};

// ---- `queue = ...`: MarkMax-B/T (seed 003): `queue = { kind = "markmax", variant, theta, ... }`. The scenario entry as written, its resolved parameters, and the algorithm built from them.
/// `queue = { kind = "markmax", variant = "b", theta = "240pkt", ... }`.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct MarkMaxSpec {
    pub variant: Option<String>,
    pub theta: String,
    pub theta_l: Option<String>,
    pub theta_h: Option<String>,
    pub tail: Option<f64>,
}

/// MarkMax parameters (seed 003): thresholds in `unit`, `θ_l < θ < θ_h`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct MarkMaxParams {
    pub variant: MarkMaxLetter,
    pub unit: MarkMaxUnit,
    pub theta_l: u64,
    pub theta: u64,
    pub theta_h: u64,
    /// MarkMax-T's tail fraction in (0, 1]; `None` for MarkMax-B.
    pub tail: Option<f64>,
}

/// Which MarkMax (seed 003): the whole backlog (B) or the tail backlog (T).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MarkMaxLetter {
    B,
    T,
}

impl LinkParams for MarkMaxParams {
    type Spec = MarkMaxSpec;
    /// MarkMax (seed 003): `theta` required; `theta_l`, `theta_h` default to the paper's
    /// guideline 0.85·θ and 1.15·θ (rounded to whole units); all three in one unit.
    fn resolve(spec: Option<Self::Spec>) -> Result<Self, ParamError> {
        let Some(v) = spec else {
            return Err(ParamError::new(
                "",
                "markmax needs its thresholds: { kind = \"markmax\", variant = \"b\", theta = \"240pkt\" }",
            ));
        };
        let m = v;
        let amount = |field: &str, s: &str| -> Result<(MarkMaxUnit, f64), ParamError> {
            match parse_amount(s, false).map_err(|e| ParamError::new(field, e))? {
                Amount::Packets(p) => Ok((MarkMaxUnit::Packets, p)),
                Amount::Bytes(b) => Ok((MarkMaxUnit::Bytes, b)),
                Amount::Unlimited => Err(ParamError::new(field, "expected packets or bytes")),
            }
        };
        let whole = |field: &str, v: f64| -> Result<u64, ParamError> {
            if v.fract() != 0.0 || v < 0.0 {
                return Err(ParamError::new(field, format!("{v}: expected a whole number of units")));
            }
            Ok(v as u64)
        };
        let (unit, theta) = amount("theta", &m.theta)?;
        let theta = whole("theta", theta)?;
        let side = |field: &str, v: &Option<String>, factor: f64| -> Result<u64, ParamError> {
            match v {
                None => Ok((theta as f64 * factor).round() as u64),
                Some(s) => {
                    let (u, x) = amount(field, s)?;
                    if u != unit {
                        return Err(ParamError::new(
                            field,
                            "theta_l, theta and theta_h must use the same unit (all packets or all bytes)",
                        ));
                    }
                    whole(field, x)
                }
            }
        };
        let theta_l = side("theta_l", &m.theta_l, 0.85)?;
        let theta_h = side("theta_h", &m.theta_h, 1.15)?;
        if theta_l >= theta {
            return Err(ParamError::new("theta_l", format!("expected theta_l < theta, found {theta_l} >= {theta}")));
        }
        if theta_h <= theta {
            return Err(ParamError::new("theta_h", format!("expected theta_h > theta, found {theta_h} <= {theta}")));
        }
        let variant = match m.variant.as_deref().unwrap_or("b") {
            "b" | "B" => MarkMaxLetter::B,
            "t" | "T" => MarkMaxLetter::T,
            other => return Err(ParamError::new("variant", format!("'{other}': expected \"b\" or \"t\""))),
        };
        let tail = match (variant, m.tail) {
            (MarkMaxLetter::B, Some(_)) => {
                return Err(ParamError::new("tail", "only MarkMax-T (variant = \"t\") takes a tail fraction"))
            }
            (MarkMaxLetter::B, None) => None,
            (_, t) => {
                let t = t.unwrap_or(0.1);
                if !(t > 0.0 && t <= 1.0) {
                    return Err(ParamError::new("tail", format!("{t}: expected a fraction in (0, 1]")));
                }
                Some(t)
            }
        };
        Ok(MarkMaxParams { variant, unit, theta_l, theta, theta_h, tail })
    }

    fn build(&self, _rng: Pcg64Mcg, _rate_bps: u64) -> AnyLinkAlgorithm {
        let p = self;
        AnyLinkAlgorithm::MarkMax(MarkMax::new(MarkMaxConfig {
            variant: match p.tail {
                Some(fraction) => MarkMaxVariant::Tail { fraction },
                None => MarkMaxVariant::Backlog,
            },
            unit: p.unit,
            theta_l: p.theta_l,
            theta: p.theta,
            theta_h: p.theta_h,
        }))
    }
}
