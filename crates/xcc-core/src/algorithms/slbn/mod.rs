//! SLBN, StateLess B-Neck (seed 004): an explicit end-to-end rate protocol whose routers keep
//! three numbers per link (`BF`, `NR`, `N`) and whose sources run Probe cycles
//! (Join / Probe -> ProbeAck, then Leave) that end with the session's max-min fair rate.
//! See docs/algorithms/slbn.md.

pub mod link;
pub mod packet;
pub mod source;

pub use link::SlbnLink;
pub use packet::{HopSet, SlbnKind, SlbnPacket};
pub use source::SlbnSource;

use crate::session::budget::ControlBudget;
use crate::session::{SessionId, SessionProtocol};
use serde::{Deserialize, Serialize};

/// SLBN has no gains; these are the choices around it.
#[derive(Copy, Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct SlbnParams {
    /// Control packets' share of the session's rate (paper: about 1 %); the packet size is
    /// SLBN's own (68 B), whatever `budget.packet_bytes` says.
    pub budget: ControlBudget,
    /// protocols.md 6.7-1: also set `bw = shBW` when Join counts the session as restricted
    /// (the published Fig. 2 does not; off by default).
    pub join_lowers_bw: bool,
}

/// The protocol, for drivers generic over [`SessionProtocol`].
pub struct Slbn;

impl SessionProtocol for Slbn {
    const NAME: &'static str = "slbn";
    type Packet = SlbnPacket;
    type Link = SlbnLink;
    type Source = SlbnSource;
    type Params = SlbnParams;

    fn new_link(params: &SlbnParams, capacity: f64) -> SlbnLink {
        SlbnLink::new(capacity, params.join_lowers_bw)
    }

    fn new_source(params: &SlbnParams, _session: SessionId) -> SlbnSource {
        SlbnSource::new(ControlBudget { packet_bytes: SlbnPacket::WIRE_BYTES, ..params.budget })
    }
}

impl crate::session::data_share::DataShare for Slbn {
    fn data_share(p: &Self::Params) -> f64 {
        crate::session::data_share::after_budget(p.budget.fraction)
    }
}

/// Its number in the session framing on real packets (unique: a test checks it).
impl crate::wire::session::SessionWire for Slbn {
    const PROTO: u8 = 1;
}
