//! The share of a session's assigned rate its source sends as data, the rest being the control
//! budget. One place for every driver of real or simulated packets (the simulator's session
//! flows, the emulator's session sources).

use super::bfyz::Bfyz;
use super::cobb::Cobb;
use super::erica::Erica;
use super::piqi_rcp::PiqiRcp;
use super::rcp::Rcp;
use super::slbn::Slbn;
use super::SessionProtocol;

/// A protocol whose sources pace data packets beside their control packets.
pub trait DataShare: SessionProtocol {
    /// Share of the assigned rate a source sends as data.
    fn data_share(params: &Self::Params) -> f64;
}

/// Control packets share the session's rate within `fraction` of it (seed 004, Section II);
/// data gets the rest.
fn after_budget(fraction: f64) -> f64 {
    1.0 - fraction.clamp(0.0, 1.0)
}

impl DataShare for Slbn {
    fn data_share(p: &Self::Params) -> f64 {
        after_budget(p.budget.fraction)
    }
}
impl DataShare for Bfyz {
    fn data_share(p: &Self::Params) -> f64 {
        after_budget(p.budget.fraction)
    }
}
impl DataShare for Erica {
    fn data_share(p: &Self::Params) -> f64 {
        after_budget(p.budget.fraction)
    }
}
impl DataShare for Cobb {
    /// COBB sends one packet per period whatever the rate: the paper's ~1 % for data's sake.
    fn data_share(_: &Self::Params) -> f64 {
        0.99
    }
}

/// RCP and PIQI-RCP in seed 004's session form: one 40 B feedback packet per round trip,
/// far under the paper's ~1 % control budget; data gets the same 99 % of the assigned rate as
/// every other protocol here (and as the session driver's `data_share`), so no protocol is
/// compared at a different load.
impl DataShare for Rcp {
    fn data_share(_: &Self::Params) -> f64 {
        0.99
    }
}
impl DataShare for PiqiRcp {
    fn data_share(_: &Self::Params) -> f64 {
        0.99
    }
}
