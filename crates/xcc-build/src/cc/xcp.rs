//! XCP's sender (Katabi et al. 2002, ns-2.35 form): `cc = "xcp"`, no parameters.
//! The scenario entry, its (empty) resolved parameters, and the controller and echoer.

use super::newreno::CcTableSpec;
use super::prelude::*;
use xcc_core::algorithms::xcp::*;

/// XCP's sender takes no parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct XcpCcParams {}

impl CcConfig for XcpCcParams {
    fn resolve(res: &Resolver, path: &str, v: Option<&Value>) -> Result<Self, ScenarioError> {
        let table: Option<CcTableSpec> = v.map(|v| typed(v.clone(), path, res.source)).transpose()?;
        if table.is_some_and(|t| t.initial_window.is_some()) {
            return Err(res.err(&format!("{path}.initial_window"), "xcp takes no parameters"));
        }
        Ok(XcpCcParams {})
    }

    fn controller(&self, t: &Transport) -> AnyController {
        AnyController::Xcp(Xcp::new(XcpConfig { mss_bytes: t.mss_bytes, ..XcpConfig::default() }))
    }

    fn echoer(&self, _two_way_delay: Dur) -> AnyEchoer {
        AnyEchoer::Xcp(XcpEcho::default())
    }

    fn shim(&self) -> CongestionHeader {
        CongestionHeader::Xcp(XcpHeader::default())
    }
}
