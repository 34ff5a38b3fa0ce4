//! RCP's sender (Dukkipati et al., Stanford ns-2 v4): `cc = "rcp"`, no parameters.
//! The scenario entry, its (empty) resolved parameters, and the controller built from them.

use super::newreno::CcTableSpec;
use super::prelude::*;
use xcc_core::algorithms::rcp::*;

/// RCP's sender takes no parameters (its rate is the routers').
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct RcpCcParams {}

impl CcConfig for RcpCcParams {
    fn resolve(res: &Resolver, path: &str, v: Option<&Value>) -> Result<Self, ScenarioError> {
        let table: Option<CcTableSpec> = v.map(|v| typed(v.clone(), path, res.source)).transpose()?;
        if table.is_some_and(|t| t.initial_window.is_some()) {
            return Err(res.err(&format!("{path}.initial_window"), "rcp takes no parameters"));
        }
        Ok(RcpCcParams {})
    }

    fn controller(&self, t: &Transport) -> AnyController {
        AnyController::Rcp(Rcp::new(RcpConfig {
            mss_bytes: t.mss_bytes,
            packet_bytes: full_packet_bytes(t, self.shim()),
            ..RcpConfig::default()
        }))
    }

    fn shim(&self) -> CongestionHeader {
        CongestionHeader::Rcp(RcpHeader::default())
    }
}
