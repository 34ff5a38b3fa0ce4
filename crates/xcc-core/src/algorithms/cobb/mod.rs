//! COBB (Cobb and Gouda, SSS 2008 / TCS 2011), seed 004's stateless baseline,
//! **reconstructed** (only the abstracts could be read): links keep a constant amount of state
//! rebuilt every period T ([`link`]), sources send one packet per period ([`source`]).
//! See docs/algorithms/cobb.md.

pub mod link;
pub mod packet;
pub mod source;

pub use link::{CobbConfig, CobbLink};
pub use packet::CobbPacket;
pub use source::CobbSource;

use crate::session::{SessionId, SessionProtocol};
use crate::time::Dur;
use serde::{Deserialize, Serialize};

/// COBB's parameters.
#[derive(Copy, Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct CobbParams {
    /// The period T in milliseconds (seed 004: 70 ms "to accommodate to WAN RTTs").
    pub period_ms: f64,
}

impl Default for CobbParams {
    fn default() -> Self {
        CobbParams { period_ms: 70.0 }
    }
}

impl CobbParams {
    fn period(&self) -> Dur {
        Dur::from_secs_f64(self.period_ms * 1e-3)
    }
}

/// The protocol, for drivers generic over [`SessionProtocol`].
pub struct Cobb;

impl SessionProtocol for Cobb {
    const NAME: &'static str = "cobb";
    type Packet = CobbPacket;
    type Link = CobbLink;
    type Source = CobbSource;
    type Params = CobbParams;

    fn new_link(params: &CobbParams, capacity: f64) -> CobbLink {
        CobbLink::new(CobbConfig { period: params.period() }, capacity)
    }

    fn new_source(params: &CobbParams, _session: SessionId) -> CobbSource {
        CobbSource::new(params.period())
    }
}

impl crate::session::data_share::DataShare for Cobb {
    /// COBB sends one packet per period whatever the rate: the paper's ~1 % for data's sake.
    fn data_share(_: &Self::Params) -> f64 {
        0.99
    }
}

/// Its number in the session framing on real packets (unique: a test checks it).
impl crate::wire::session::SessionWire for Cobb {
    const PROTO: u8 = 4;
}
