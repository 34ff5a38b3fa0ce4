//! DropTail: a FIFO that drops arrivals beyond the link's buffer (ns-2 DropTail, packet mode).
//! See docs/algorithms/droptail.md.

pub mod link;

pub use link::{DropTail, DropTailConfig};

use serde::Serialize;

use crate::link::AnyLinkAlgorithm;
use crate::params::{AnyTable, LinkParams, ParamError};
use crate::rng::Pcg64Mcg;

// ---- `queue = ...`: DropTail: FIFO tail drop (its limit is the link's buffer). The scenario entry as written, its resolved parameters, and the algorithm built from them.
/// DropTail has no parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct DropTailParams {}

impl LinkParams for DropTailParams {
    type Spec = AnyTable;
    fn resolve(spec: Option<Self::Spec>) -> Result<Self, ParamError> {
        match spec {
            None => Ok(DropTailParams {}),
            Some(o) if o.is_empty() => Ok(DropTailParams {}),
            Some(_) => Err(ParamError::new("", "droptail takes no parameters (its limit is the link's buffer)")),
        }
    }

    fn build(&self, _rng: Pcg64Mcg, _rate_bps: u64) -> AnyLinkAlgorithm {
        AnyLinkAlgorithm::DropTail(DropTail::new(DropTailConfig::default()))
    }
}
