//! BBR v1 as Linux runs it (`tcp_bbr.c`; docs/algorithms/bbr.md): `cc = "bbr"` or
//! `{ kind = "bbr", probe_rtt_ms = 200, ... }` with the fields of [`BbrParams`]. On real
//! packets the kernel's own `bbr` carries the flow.

use super::prelude::*;
use xcc_core::algorithms::bbr::{Bbr, BbrParams};

/// The table as written, without its `kind`, read as [`BbrParams`] (defaults: Linux's).
fn params(res: &Resolver, path: &str, v: Option<&Value>) -> Result<BbrParams, ScenarioError> {
    let Some(Value::Object(m)) = v else { return Ok(BbrParams::default()) };
    let mut m = m.clone();
    m.remove("kind");
    let p: BbrParams = typed(Value::Object(m), path, res.source)?;
    p.check().map_err(|e| {
        let (field, msg) = e.split_once(": ").unwrap_or(("", &e));
        res.err(&format!("{path}.{field}"), msg)
    })?;
    Ok(p)
}

/// BBR's resolved parameters (recorded in `run.json` under `kind = "bbr"`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct BbrCcParams(pub BbrParams);

impl CcConfig for BbrCcParams {
    fn resolve(res: &Resolver, path: &str, v: Option<&Value>) -> Result<Self, ScenarioError> {
        params(res, path, v).map(BbrCcParams)
    }

    fn controller(&self, t: &Transport) -> AnyController {
        AnyController::Bbr(Box::new(Bbr::new(self.0, t.mss_bytes).with_header_bytes(t.header_bytes)))
    }

    /// Linux's own BBR on real packets.
    fn linux_tcp(&self, _kernel_stack: bool) -> Option<&'static str> {
        Some("bbr")
    }
}
