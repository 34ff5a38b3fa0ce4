//! HPCC, High Precision Congestion Control (Li et al., SIGCOMM 2019): a window sender driven by
//! in-band telemetry ([`crate::algorithms::int`]). [`host`] is the sender law; its typed
//! parameters are here. docs/algorithms/hpcc.md states the law, its sources and whose code
//! each constant comes from.

pub mod host;

pub use host::HpccSender;

use serde::{Deserialize, Serialize};

/// HPCC's parameters.
#[derive(Copy, Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct HpccParams {
    /// Target utilisation eta: the sender aims at `U = eta` on its most loaded hop.
    /// 0.95: the paper, section 3.3, and the authors' ns-3 code (`rdma-hw.cc` attribute
    /// `TargetUtil` 0.95, `run.py --utgt 95`).
    pub eta: f64,
    /// maxStage: reference-window updates of additive increase before a multiplicative one
    /// while `U < eta`. 5: the paper, section 3.3, and the authors' `rdma-hw.cc` (attribute
    /// `MiThresh`, default 5: `if (c >= 1 || incStage >= m_miThresh)` multiplies, else adds;
    /// read this session). Their `run.py` passes `MI_THRESH 0` (every update multiplicative)
    /// and their project page calls eta = 0.99 with maxStage = 0 "the best setting"; set 0 to
    /// run as they did.
    pub max_stage: u32,
    /// W_AI in bytes; `None` takes the paper's rule `W_AI = W_init·(1 − eta)/N` (section 3.3)
    /// with `N = ai_flows`.
    pub w_ai_bytes: Option<f64>,
    /// N of the paper's W_AI rule, "the expected number of concurrent flows on a link". 125:
    /// with eta = 0.95 it gives `W_AI = W_init/2500`, what the authors ran (`run.py`: rate AI
    /// `10·bw/25` Mbit/s, 40 Mbit/s at 100 Gbit/s, times T).
    pub ai_flows: u32,
    /// Least sending rate in bit/s; the window never falls below `min_rate·T`. 1 Gbit/s: the
    /// authors' `run.py` (`MIN_RATE 1000Mb/s`).
    pub min_rate_bps: f64,
}

impl Default for HpccParams {
    fn default() -> Self {
        HpccParams { eta: 0.95, max_stage: 5, w_ai_bytes: None, ai_flows: 125, min_rate_bps: 1e9 }
    }
}

impl HpccParams {
    /// Every field in range, or the name of the first one that is not.
    pub fn check(&self) -> Result<(), String> {
        if !(self.eta > 0.0 && self.eta <= 1.0) {
            return Err(format!("hpcc.eta must be in (0, 1], got {}", self.eta));
        }
        if let Some(w) = self.w_ai_bytes {
            if !(w > 0.0 && w.is_finite()) {
                return Err(format!("hpcc.w_ai_bytes must be a positive number of bytes, got {w}"));
            }
        }
        if self.ai_flows == 0 {
            return Err("hpcc.ai_flows must be at least 1".into());
        }
        if !(self.min_rate_bps > 0.0 && self.min_rate_bps.is_finite()) {
            return Err(format!("hpcc.min_rate_bps must be positive, got {}", self.min_rate_bps));
        }
        Ok(())
    }

    /// W_AI for a sender whose initial window is `w_init` bytes.
    pub fn w_ai(&self, w_init: f64) -> f64 {
        self.w_ai_bytes.unwrap_or(w_init * (1.0 - self.eta) / self.ai_flows as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_pass_and_each_bad_field_is_named() {
        assert_eq!(HpccParams::default().check(), Ok(()));
        let bad = |p: HpccParams, field: &str| assert!(p.check().unwrap_err().contains(field), "{field}");
        bad(HpccParams { eta: 0.0, ..Default::default() }, "hpcc.eta");
        bad(HpccParams { eta: 1.5, ..Default::default() }, "hpcc.eta");
        bad(HpccParams { w_ai_bytes: Some(-1.0), ..Default::default() }, "hpcc.w_ai_bytes");
        bad(HpccParams { ai_flows: 0, ..Default::default() }, "hpcc.ai_flows");
        bad(HpccParams { min_rate_bps: f64::NAN, ..Default::default() }, "hpcc.min_rate_bps");
    }

    #[test]
    fn w_ai_follows_the_papers_rule_unless_given() {
        // W_init = 125,000 B (100 Gbit/s x 10 us): 125,000 x 0.05 / 125 = 50 B.
        assert!((HpccParams::default().w_ai(125_000.0) - 50.0).abs() < 1e-9);
        assert_eq!(HpccParams { w_ai_bytes: Some(80.0), ..Default::default() }.w_ai(125_000.0), 80.0);
    }

    #[test]
    fn parses_from_toml_shaped_json_and_rejects_unknown_fields() {
        let p: HpccParams = serde_json::from_str(r#"{"eta": 0.9, "max_stage": 0}"#).unwrap();
        assert_eq!((p.eta, p.max_stage, p.ai_flows), (0.9, 0, 125));
        assert!(serde_json::from_str::<HpccParams>(r#"{"etta": 0.9}"#).is_err());
    }
}
