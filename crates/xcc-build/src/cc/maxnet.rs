//! MaxNet's source (seed 000, Fig. 2, with MaxStart): `cc = "maxnet"` or
//! `{ kind = "maxnet", x_max, t, alpha, eta, dt_min, maxstart, pace }`. The scenario entry as
//! written, its resolved parameters (defaults from `MaxNetConfig`, seed 000 Section VI), and the
//! controller and echoer built from them.

use super::prelude::*;
use xcc_core::algorithms::maxnet::*;

/// `cc = { kind = "maxnet", ... }` (seed 000, Section VI defaults).
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct MaxNetCcSpec {
    pub kind: String,
    pub x_max: Option<String>,
    pub t: Option<String>,
    pub alpha: Option<f64>,
    pub eta: Option<f64>,
    pub dt_min: Option<String>,
    pub maxstart: Option<bool>,
    pub pace: Option<bool>,
}

/// MaxNet source parameters (seed 000).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct MaxNetCcParams {
    pub x_max_bps: f64,
    pub t_s: f64,
    pub alpha: f64,
    pub eta: f64,
    pub dt_min_ns: u64,
    pub maxstart: bool,
    /// Pace at the source rate (ours; `docs/algorithms/maxnet.md`).
    pub pace: bool,
}

impl CcConfig for MaxNetCcParams {
    /// MaxNet's source: seed 000 Section VI (x_max 1e15, T 0.4 s, alpha 0.66, eta 0.06,
    /// dt_min 1 us), MaxStart on.
    fn resolve(res: &Resolver, path: &str, v: Option<&Value>) -> Result<Self, ScenarioError> {
        let m: Option<MaxNetCcSpec> = v.map(|v| typed(v.clone(), path, res.source)).transpose()?;
        let d = MaxNetConfig::default();
        let m = m.unwrap_or(MaxNetCcSpec {
            kind: "maxnet".into(),
            x_max: None,
            t: None,
            alpha: None,
            eta: None,
            dt_min: None,
            maxstart: None,
            pace: None,
        });
        let x_max_bps = match &m.x_max {
            None => d.x_max_bps,
            Some(s) => match parse_rate_bps(s).map_err(|e| res.err(&format!("{path}.x_max"), e))? {
                0 => return Err(res.err(&format!("{path}.x_max"), "expected a positive rate")),
                r => r as f64,
            },
        };
        let t_s = match &m.t {
            None => d.t_s,
            Some(s) => match res.time(&format!("{path}.t"), s)? {
                0 => return Err(res.err(&format!("{path}.t"), "expected a positive time")),
                ns => ns as f64 * 1e-9,
            },
        };
        let alpha = m.alpha.unwrap_or(d.alpha);
        let eta = m.eta.unwrap_or(d.eta);
        for (field, v) in [("alpha", alpha), ("eta", eta)] {
            if !(v > 0.0 && v.is_finite()) {
                return Err(res.err(&format!("{path}.{field}"), format!("{v}: expected a positive number")));
            }
        }
        let dt_min_ns = match &m.dt_min {
            None => d.dt_min.as_ns(),
            Some(s) => res.time(&format!("{path}.dt_min"), s)?,
        };
        Ok(MaxNetCcParams {
            x_max_bps,
            t_s,
            alpha,
            eta,
            dt_min_ns,
            maxstart: m.maxstart.unwrap_or(d.maxstart),
            pace: m.pace.unwrap_or(d.pace),
        })
    }

    fn controller(&self, t: &Transport) -> AnyController {
        let p = self;
        AnyController::MaxNet(MaxNet::new(MaxNetConfig {
            x_max_bps: p.x_max_bps,
            t_s: p.t_s,
            alpha: p.alpha,
            eta: p.eta,
            dt_min: Dur(p.dt_min_ns),
            maxstart: p.maxstart,
            mss_bytes: t.mss_bytes,
            pace: p.pace,
            packet_bytes: full_packet_bytes(t, self.shim()),
        }))
    }

    fn echoer(&self, two_way_delay: Dur) -> AnyEchoer {
        // MaxNet's receiver averages the price over one RTT: the path's two-way propagation
        // delay.
        AnyEchoer::MaxNet(MaxNetEcho::new(two_way_delay))
    }

    fn shim(&self) -> CongestionHeader {
        CongestionHeader::MaxNet(MaxNetHeader::default())
    }

    /// On `--stack kernel` MaxNet runs in Linux (the BPF `maxnet` congestion control).
    fn linux_tcp(&self, kernel_stack: bool) -> Option<&'static str> {
        kernel_stack.then_some("maxnet")
    }
}
