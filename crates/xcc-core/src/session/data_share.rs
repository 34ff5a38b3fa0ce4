//! The share of a session's assigned rate its source sends as data, the rest being the control
//! budget, as every driver of real or simulated packets (the simulator's session flows, the
//! emulator's session sources) asks it; each protocol's share is in its folder under
//! [`crate::algorithms`].

use super::SessionProtocol;

/// A protocol whose sources pace data packets beside their control packets.
pub trait DataShare: SessionProtocol {
    /// Share of the assigned rate a source sends as data.
    fn data_share(params: &Self::Params) -> f64;
}

/// Control packets share the session's rate within `fraction` of it (seed 004, Section II);
/// data gets the rest.
pub fn after_budget(fraction: f64) -> f64 {
    1.0 - fraction.clamp(0.0, 1.0)
}
