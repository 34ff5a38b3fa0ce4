//! CUBIC as Linux runs it (RFC 9438, `tcp_cubic.c`; docs/algorithms/cubic.md): `cc = "cubic"`
//! or `{ kind = "cubic", beta = 717, hystart_delay = false, ... }` with the fields of
//! [`CubicParams`]. On real packets the kernel's own `cubic` carries the flow.

use super::prelude::*;
use xcc_core::algorithms::cubic::{Cubic, CubicParams};

/// The table as written, without its `kind`, read as [`CubicParams`] (defaults: Linux's).
fn params(res: &Resolver, path: &str, v: Option<&Value>) -> Result<CubicParams, ScenarioError> {
    let Some(Value::Object(m)) = v else { return Ok(CubicParams::default()) };
    let mut m = m.clone();
    m.remove("kind");
    let p: CubicParams = typed(Value::Object(m), path, res.source)?;
    p.check().map_err(|e| {
        let (field, msg) = e.split_once(": ").unwrap_or(("", &e));
        res.err(&format!("{path}.{field}"), msg)
    })?;
    Ok(p)
}

/// CUBIC's resolved parameters (recorded in `run.json` under `kind = "cubic"`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct CubicCcParams(pub CubicParams);

impl CcConfig for CubicCcParams {
    fn resolve(res: &Resolver, path: &str, v: Option<&Value>) -> Result<Self, ScenarioError> {
        params(res, path, v).map(CubicCcParams)
    }

    fn controller(&self, t: &Transport) -> AnyController {
        AnyController::Cubic(Cubic::new(self.0, t.mss_bytes))
    }

    /// Linux's own CUBIC on real packets.
    fn linux_tcp(&self, _kernel_stack: bool) -> Option<&'static str> {
        Some("cubic")
    }
}
