//! HPCC, High Precision Congestion Control (Li et al., SIGCOMM 2019): a window sender driven by
//! in-band telemetry ([`crate::algorithms::int`]). [`host`] is the sender law; its typed
//! parameters are here. docs/algorithms/hpcc.md states the law, its sources and whose code
//! each constant comes from.

pub mod host;

pub use host::{Hpcc, HpccSender};

use serde::{Deserialize, Serialize};

use std::num::NonZeroU64;

use crate::algorithms::int::{IntHeader, INT_MAX_SLOTS};
use crate::host::AnyController;
use crate::params::{HostContext, HostParams, ParamError};
use crate::time::Dur;
use crate::units::parse_rate_bps;
use crate::wire::CongestionHeader;

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

// ---- `cc = "hpcc"` or `{ kind = "hpcc", ... }`: the sender on the shared transport.

/// `cc = { kind = "hpcc", ... }` as written: the law's fields (as [`HpccParams`]) and the
/// sender's.
#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct HpccCcSpec {
    pub eta: Option<f64>,
    pub max_stage: Option<u32>,
    pub w_ai_bytes: Option<f64>,
    pub ai_flows: Option<u32>,
    pub min_rate_bps: Option<f64>,
    /// T, the base RTT (`"8us"`); default: the flow's path (see [`crate::params::PathContext`]).
    pub base_rtt: Option<String>,
    /// B_NIC (`"100Gbps"`); default: the rate of the flow's first link.
    pub line_rate: Option<String>,
    /// INT records each data packet reserves; default 5 (the authors' `maxHop`).
    pub int_slots: Option<u32>,
}

/// HPCC's resolved sender parameters.
#[derive(Copy, Clone, Debug, PartialEq, Serialize)]
pub struct HpccCcParams {
    #[serde(flatten)]
    pub law: HpccParams,
    /// T in ns, when given; otherwise the path's.
    pub base_rtt_ns: Option<NonZeroU64>,
    /// B_NIC in bit/s, when given; otherwise the first link's.
    pub line_rate_bps: Option<NonZeroU64>,
    /// INT records reserved per data packet, 1 to [`INT_MAX_SLOTS`]. (The resolved entry is
    /// kept small: every flow record of the simulator holds one.)
    pub int_slots: u8,
}

/// T and B_NIC when neither the parameters nor the driver give them (a driver without path
/// knowledge, and no `base_rtt` or `line_rate` written): the HPCC paper's testbed-scale
/// fabric, 100 Gbit/s NICs and a 10 us RTT. The simulator always knows the path.
const FALLBACK_RTT: Dur = Dur::from_us(10);
const FALLBACK_RATE_BPS: u64 = 100_000_000_000;

/// The field a `check()` message of the form `"<prefix>field must ..."` names.
pub(crate) fn named_check(message: String, prefix: &str) -> ParamError {
    let field = message.strip_prefix(prefix).and_then(|r| r.split(' ').next()).unwrap_or("").to_string();
    ParamError::new(field, message)
}

/// Resolves `base_rtt`, `line_rate` and `int_slots`, shared with PowerTCP.
pub(crate) fn resolve_path_fields(
    base_rtt: &Option<String>,
    line_rate: &Option<String>,
    int_slots: Option<u32>,
) -> Result<(Option<NonZeroU64>, Option<NonZeroU64>, u8), ParamError> {
    let rtt = match base_rtt {
        None => None,
        Some(s) => NonZeroU64::new(crate::params::positive_time_or("base_rtt", &Some(s.clone()), 0)?),
    };
    let rate = match line_rate {
        None => None,
        Some(s) => match parse_rate_bps(s).map_err(|m| ParamError::new("line_rate", m))? {
            0 => return Err(ParamError::new("line_rate", "expected a positive rate")),
            r => NonZeroU64::new(r),
        },
    };
    let slots = int_slots.unwrap_or(5);
    if slots == 0 || slots as usize > INT_MAX_SLOTS {
        return Err(ParamError::new("int_slots", format!("{slots}: expected 1 to {INT_MAX_SLOTS}")));
    }
    Ok((rtt, rate, slots as u8))
}

/// T and B_NIC for a sender: the parameters', else the path's, else the fallback.
pub(crate) fn rtt_and_rate(
    base_rtt_ns: Option<NonZeroU64>,
    line_rate_bps: Option<NonZeroU64>,
    t: &HostContext,
) -> (Dur, f64) {
    let rtt = base_rtt_ns.map(|n| Dur(n.get())).or(t.path.map(|p| p.base_rtt)).unwrap_or(FALLBACK_RTT);
    let rate = line_rate_bps.map(|n| n.get()).or(t.path.map(|p| p.nic_rate_bps)).unwrap_or(FALLBACK_RATE_BPS);
    (rtt, rate as f64)
}

impl HostParams for HpccCcParams {
    type Spec = HpccCcSpec;

    fn resolve(spec: Option<HpccCcSpec>) -> Result<Self, ParamError> {
        let s = spec.unwrap_or_default();
        let d = HpccParams::default();
        let law = HpccParams {
            eta: s.eta.unwrap_or(d.eta),
            max_stage: s.max_stage.unwrap_or(d.max_stage),
            w_ai_bytes: s.w_ai_bytes.or(d.w_ai_bytes),
            ai_flows: s.ai_flows.unwrap_or(d.ai_flows),
            min_rate_bps: s.min_rate_bps.unwrap_or(d.min_rate_bps),
        };
        law.check().map_err(|e| named_check(e, "hpcc."))?;
        let (base_rtt_ns, line_rate_bps, int_slots) = resolve_path_fields(&s.base_rtt, &s.line_rate, s.int_slots)?;
        Ok(HpccCcParams { law, base_rtt_ns, line_rate_bps, int_slots })
    }

    fn controller(&self, t: &HostContext) -> AnyController {
        let (rtt, rate) = rtt_and_rate(self.base_rtt_ns, self.line_rate_bps, t);
        let law = HpccSender::new(self.law, rate, rtt).expect("parameters checked when resolved");
        AnyController::Hpcc(Hpcc::new(law, self.int_slots as usize))
    }

    /// An INT header of `int_slots` records: what sizes its packets, and what tells the
    /// scenario check that its path needs INT-capable ports.
    fn shim(&self) -> CongestionHeader {
        CongestionHeader::Int(IntHeader::new(self.int_slots as usize).expect("int_slots checked when resolved"))
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
    fn the_scenario_entry_resolves_with_defaults_and_names_bad_fields() {
        let p = HpccCcParams::resolve(None).unwrap();
        assert_eq!((p.law, p.base_rtt_ns, p.line_rate_bps, p.int_slots), (HpccParams::default(), None, None, 5));
        assert_eq!(p.shim().wire_len(), 84, "shim 2 + preamble 2 + 5 records of 16");
        let spec = |f: fn(&mut HpccCcSpec)| {
            let mut s = HpccCcSpec::default();
            f(&mut s);
            HpccCcParams::resolve(Some(s))
        };
        let p = spec(|s| {
            s.base_rtt = Some("8us".into());
            s.line_rate = Some("25Gbps".into());
            s.max_stage = Some(0);
        })
        .unwrap();
        assert_eq!((p.base_rtt_ns, p.line_rate_bps, p.law.max_stage), (NonZeroU64::new(8_000), NonZeroU64::new(25_000_000_000), 0));
        assert_eq!(spec(|s| s.eta = Some(1.5)).unwrap_err().field, "eta");
        assert_eq!(spec(|s| s.base_rtt = Some("0us".into())).unwrap_err().field, "base_rtt");
        assert_eq!(spec(|s| s.line_rate = Some("fast".into())).unwrap_err().field, "line_rate");
        assert_eq!(spec(|s| s.int_slots = Some(6)).unwrap_err().field, "int_slots");
        // T and B_NIC: the parameters', else the path's, else the fallback.
        let ctx = |path| HostContext { mss_bytes: 1000, header_bytes: 40, path };
        let path = crate::params::PathContext { base_rtt: Dur::from_us(9), nic_rate_bps: 40_000_000_000 };
        assert_eq!(rtt_and_rate(None, None, &ctx(Some(path))), (Dur::from_us(9), 40e9));
        assert_eq!(rtt_and_rate(NonZeroU64::new(8_000), None, &ctx(Some(path))), (Dur::from_us(8), 40e9));
        assert_eq!(rtt_and_rate(None, None, &ctx(None)), (FALLBACK_RTT, 100e9));
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
