//! NewReno + ECN (RFC 6582/3168): `cc = "newreno"` or `{ kind = "newreno", initial_window = 10 }`.
//! The scenario entry as written, its resolved parameters, and the controller built from them.

use super::prelude::*;
use xcc_core::algorithms::newreno::*;

/// `cc = { kind = "newreno", initial_window = N }` (also the table form of xcp and rcp, which
/// take no parameters).
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct CcTableSpec {
    pub kind: String,
    pub initial_window: Option<u32>,
}

/// NewReno's parameters: the initial window in segments (2 unless given, RFC 5681's lower
/// value; the seeds' NS-2 runs use 2).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct NewRenoParams {
    pub initial_window: u32,
}

impl CcConfig for NewRenoParams {
    fn resolve(res: &Resolver, path: &str, v: Option<&Value>) -> Result<Self, ScenarioError> {
        let table: Option<CcTableSpec> = v.map(|v| typed(v.clone(), path, res.source)).transpose()?;
        let initial_window = table.and_then(|t| t.initial_window).unwrap_or(2);
        if initial_window == 0 {
            return Err(res.err(&format!("{path}.initial_window"), "expected at least 1 segment"));
        }
        Ok(NewRenoParams { initial_window })
    }

    fn controller(&self, t: &Transport) -> AnyController {
        AnyController::NewReno(NewReno::new(NewRenoConfig {
            mss_bytes: t.mss_bytes,
            initial_window_segments: self.initial_window,
            ..NewRenoConfig::default()
        }))
    }

    /// NewReno on real packets is Linux's own TCP Reno.
    fn linux_tcp(&self, _kernel_stack: bool) -> Option<&'static str> {
        Some("reno")
    }
}
