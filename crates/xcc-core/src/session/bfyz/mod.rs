//! BFYZ (Bartal, Farach-Colton, Yooseph, Zhang; Algorithmica 2002), seed 004's second
//! per-session-state baseline, **reconstructed** (only the abstract could be read): the frugal
//! consistent-marking link task of [`link`] on both passes of RM cells, the ABR source of
//! [`crate::session::rm_source`]. See docs/algorithms/bfyz.md.

pub mod link;

pub use link::{BfyzConfig, BfyzLink, BfyzReturnPass};

use super::budget::ControlBudget;
use super::rm_cell::RmCell;
use super::rm_source::RmSource;
use super::{SessionId, SessionProtocol};
use serde::Deserialize;

/// BFYZ's parameters.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BfyzParams {
    pub link: BfyzConfig,
    /// RM cells' share of the session's rate (seed 004: about 1 %) and their size.
    pub budget: ControlBudget,
    /// `false` (default, as the papers): RM cells are a constant fraction of the session's cells,
    /// a steady stream at the budget's pace, many per round trip. `true`: one RM cell in flight
    /// (the next when it is back, within the budget), like SLBN's Probe cycles: some 40 times
    /// fewer control packets, for runs at the Large scale, but less accurate under churn
    /// (docs/algorithms/erica.md).
    pub closed_loop: bool,
}

impl Default for BfyzParams {
    fn default() -> Self {
        BfyzParams {
            link: BfyzConfig::default(),
            budget: ControlBudget { fraction: 0.01, packet_bytes: RmCell::WIRE_BYTES },
            closed_loop: false,
        }
    }
}

/// The protocol, for drivers generic over [`SessionProtocol`].
pub struct Bfyz;

impl SessionProtocol for Bfyz {
    const NAME: &'static str = "bfyz";
    type Packet = RmCell;
    type Link = BfyzLink;
    type Source = RmSource;
    type Params = BfyzParams;

    fn new_link(params: &BfyzParams, capacity: f64) -> BfyzLink {
        BfyzLink::new(params.link, capacity)
    }

    fn new_source(params: &BfyzParams, _session: SessionId) -> RmSource {
        RmSource::new(params.budget, params.closed_loop)
    }

    fn at_destination(cell: RmCell) -> Option<RmCell> {
        cell.at_destination()
    }

    fn wire_bytes(_cell: &RmCell) -> u32 {
        RmCell::WIRE_BYTES
    }
}
