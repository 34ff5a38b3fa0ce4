//! PIQI-RCP's sender (reconstructed; docs/algorithms/piqi-rcp.md): `cc = "piqi-rcp"`, no
//! parameters. The scenario entry, its (empty) resolved parameters, and the controller.

use super::prelude::*;
use xcc_core::algorithms::piqi_rcp::*;

/// PIQI-RCP's sender takes no parameters (its rate is the routers').
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PiqiRcpCcParams {}

impl CcConfig for PiqiRcpCcParams {
    fn resolve(res: &Resolver, path: &str, v: Option<&Value>) -> Result<Self, ScenarioError> {
        match v {
            Some(Value::Object(m)) if m.len() > 1 => {
                Err(res.err(path, "piqi-rcp's source takes no parameters (its rate is the routers')"))
            }
            _ => Ok(PiqiRcpCcParams {}),
        }
    }

    fn controller(&self, t: &Transport) -> AnyController {
        AnyController::PiqiRcp(PiqiRcp::new(PiqiRcpConfig { mss_bytes: t.mss_bytes }))
    }

    fn shim(&self) -> CongestionHeader {
        CongestionHeader::PiqiRcp(PiqiRcpHeader::default())
    }
}
