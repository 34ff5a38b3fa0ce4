//! BFYZ (Bartal, Farach-Colton, Yooseph, Zhang; Algorithmica 2002), seed 004's second
//! per-session-state baseline, **reconstructed** (only the abstract could be read): the frugal
//! consistent-marking link task of [`link`] on both passes of RM cells, the ABR source of
//! [`crate::session::rm_source`]. See docs/algorithms/bfyz.md.

pub mod link;

pub use link::{BfyzConfig, BfyzLink, BfyzReturnPass};

use crate::session::rm_cell::RmCell;
use crate::session::rm_source::{AbrParams, RmSource};
use crate::session::{SessionId, SessionProtocol};

/// BFYZ's parameters.
pub type BfyzParams = AbrParams<BfyzConfig>;

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
}

impl crate::session::data_share::DataShare for Bfyz {
    fn data_share(p: &Self::Params) -> f64 {
        crate::session::data_share::after_budget(p.budget.fraction)
    }
}

/// Its number in the session framing on real packets (unique: a test checks it).
impl crate::wire::session::SessionWire for Bfyz {
    const PROTO: u8 = 2;
}
