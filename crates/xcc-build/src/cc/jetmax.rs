//! JetMax's sender (reconstructed; docs/algorithms/jetmax.md): `cc = "jetmax"` or
//! `{ kind = "jetmax", tau = 0.6, probe_wait = "100ms" }`. The scenario entry as written, its
//! resolved parameters (defaults from `JetMaxConfig`), and the controller built from them.

use super::prelude::*;
use xcc_core::algorithms::jetmax::*;

/// `cc = { kind = "jetmax", tau = 0.6, probe_wait = "100ms" }`.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct JetMaxCcSpec {
    pub kind: String,
    pub tau: Option<f64>,
    pub probe_wait: Option<String>,
}

/// JetMax's sender parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct JetMaxCcParams {
    pub tau: f64,
    pub probe_wait_ns: u64,
}

impl CcConfig for JetMaxCcParams {
    fn resolve(res: &Resolver, path: &str, v: Option<&Value>) -> Result<Self, ScenarioError> {
        let d = JetMaxConfig::default();
        let Some(v) = v else {
            return Ok(JetMaxCcParams { tau: d.tau, probe_wait_ns: d.probe_wait.as_ns() });
        };
        let spec: JetMaxCcSpec = typed(v.clone(), path, res.source)?;
        let tau = spec.tau.unwrap_or(d.tau);
        if !(tau > 0.0 && tau <= 1.0) {
            return Err(res.err(&format!("{path}.tau"), format!("{tau}: expected 0 < tau <= 1")));
        }
        let probe_wait_ns = match &spec.probe_wait {
            None => d.probe_wait.as_ns(),
            Some(s) => res.time(&format!("{path}.probe_wait"), s)?,
        };
        let _ = spec.kind;
        Ok(JetMaxCcParams { tau, probe_wait_ns })
    }

    fn controller(&self, t: &Transport) -> AnyController {
        AnyController::JetMax(JetMax::new(JetMaxConfig {
            tau: self.tau,
            // A full-size packet on the wire: the share each packet stands for.
            packet_bytes: full_packet_bytes(t, self.shim()),
            mss_bytes: t.mss_bytes,
            probe_wait: Dur(self.probe_wait_ns),
        }))
    }

    fn shim(&self) -> CongestionHeader {
        CongestionHeader::JetMax(JetMaxHeader::default())
    }
}
