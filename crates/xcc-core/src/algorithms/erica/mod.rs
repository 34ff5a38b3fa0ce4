//! ERICA (Kalyanaraman et al., IEEE/ACM ToN 2000), seed 004's first per-session-state baseline:
//! the switch algorithm of [`link`] at every link, the ABR source of
//! [`crate::session::rm_source`], RM cells turned around by the destination.
//! See docs/algorithms/erica.md.

pub mod link;

pub use link::{EricaConfig, EricaLink};

use crate::session::rm_cell::RmCell;
use crate::session::rm_source::{AbrParams, RmSource};
use crate::session::{SessionId, SessionProtocol};

/// ERICA's parameters: the switch's and the sources' RM-cell budget.
pub type EricaParams = AbrParams<EricaConfig>;

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
        RmSource::new(params.budget, params.closed_loop)
    }
}

impl crate::session::data_share::DataShare for Erica {
    fn data_share(p: &Self::Params) -> f64 {
        crate::session::data_share::after_budget(p.budget.fraction)
    }
}

/// Its number in the session framing on real packets (unique: a test checks it).
impl crate::wire::session::SessionWire for Erica {
    const PROTO: u8 = 3;
}
