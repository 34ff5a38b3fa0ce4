//! ERICA (Kalyanaraman et al., IEEE/ACM ToN 2000), seed 004's first per-session-state baseline:
//! the switch algorithm of [`link`] at every link, the ABR source of
//! [`crate::session::rm_source`], RM cells turned around by the destination.
//! See docs/algorithms/erica.md.

pub mod link;

pub use link::{EricaConfig, EricaLink};

use super::budget::ControlBudget;
use super::rm_cell::RmCell;
use super::rm_source::RmSource;
use super::{SessionId, SessionProtocol};
use serde::Deserialize;

/// ERICA's parameters: the switch's and the sources' RM-cell budget.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EricaParams {
    pub link: EricaConfig,
    /// RM cells' share of the session's rate (seed 004: about 1 %) and their size.
    pub budget: ControlBudget,
}

impl Default for EricaParams {
    fn default() -> Self {
        EricaParams {
            link: EricaConfig::default(),
            budget: ControlBudget { fraction: 0.01, packet_bytes: RmCell::WIRE_BYTES },
        }
    }
}

/// The protocol, for drivers generic over [`SessionProtocol`].
pub struct Erica;

impl SessionProtocol for Erica {
    const NAME: &'static str = "erica";
    type Packet = RmCell;
    type Link = EricaLink;
    type Source = RmSource;
    type Params = EricaParams;

    fn new_link(params: &EricaParams, capacity: f64) -> EricaLink {
        EricaLink::new(params.link, capacity)
    }

    fn new_source(params: &EricaParams, _session: SessionId) -> RmSource {
        RmSource::new(params.budget)
    }

    fn at_destination(cell: RmCell) -> Option<RmCell> {
        cell.at_destination()
    }

    fn wire_bytes(_cell: &RmCell) -> u32 {
        RmCell::WIRE_BYTES
    }
}
