//! The share of a session's assigned rate its source sends as data, the rest being the control
//! budget. One place for every driver of real or simulated packets (the simulator's session
//! flows, the emulator's session sources).

use super::bfyz::Bfyz;
use super::cobb::Cobb;
use super::erica::Erica;
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
