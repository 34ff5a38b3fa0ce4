//! DropTail: FIFO tail drop (its limit is the link's buffer).
//! The scenario entry as written, its resolved parameters, and the algorithm built from them.

use super::prelude::*;
use xcc_core::algorithms::droptail::*;

/// DropTail has no parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct DropTailParams {}

impl QueueConfig for DropTailParams {
    fn resolve(res: &Resolver, path: &str, v: Option<&Value>) -> Result<Self, ScenarioError> {
        match v {
            None => Ok(DropTailParams {}),
            Some(Value::Object(o)) if o.len() == 1 => Ok(DropTailParams {}),
            Some(_) => Err(res.err(path, "droptail takes no parameters (its limit is the link's buffer)")),
        }
    }

    fn build(&self, _rng: Pcg64Mcg, _rate_bps: u64) -> AnyLinkAlgorithm {
        AnyLinkAlgorithm::DropTail(DropTail::new(DropTailConfig::default()))
    }
}
