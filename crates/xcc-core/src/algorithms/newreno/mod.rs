//! NewReno with ECN (RFC 6582, RFC 3168, on RFC 5681): the loss-based baseline.
//! See docs/algorithms/newreno.md.

pub mod host;

pub use host::{NewReno, NewRenoConfig};

use serde::Serialize;

use crate::host::AnyController;
use crate::params::{CcTableSpec, HostContext, HostParams, ParamError};

// ---- `cc = ...`: NewReno + ECN (RFC 6582/3168): `cc = "newreno"` or `{ kind = "newreno", initial_window = 10 }`. The scenario entry as written, its resolved parameters, and the controller built from them.
/// NewReno's parameters: the initial window in segments (2 unless given, RFC 5681's lower
/// value; the seeds' NS-2 runs use 2).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct NewRenoParams {
    pub initial_window: u32,
}

impl HostParams for NewRenoParams {
    type Spec = CcTableSpec;
    fn resolve(spec: Option<Self::Spec>) -> Result<Self, ParamError> {
        let table = spec;
        let initial_window = table.and_then(|t| t.initial_window).unwrap_or(2);
        if initial_window == 0 {
            return Err(ParamError::new("initial_window", "expected at least 1 segment"));
        }
        Ok(NewRenoParams { initial_window })
    }

    fn controller(&self, t: &HostContext) -> AnyController {
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
