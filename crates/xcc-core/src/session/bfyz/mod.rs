//! BFYZ (Bartal, Farach-Colton, Yooseph, Zhang; Algorithmica 2002), seed 004's second
//! per-session-state baseline, **reconstructed** (only the abstract could be read): the frugal
//! consistent-marking link task of [`link`] on both passes of RM cells, the ABR source of
//! [`crate::session::rm_source`]. See docs/algorithms/bfyz.md.

pub mod link;

pub use link::{BfyzConfig, BfyzLink, BfyzReturnPass};

use super::rm_cell::RmCell;
use super::rm_source::{AbrParams, RmSource};
use super::{SessionId, SessionProtocol};

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
