//! MarkMax (seed 003): ECN marking of the flow with the largest backlog, on the whole backlog
//! (MarkMax-B) or on its tail (MarkMax-T). See docs/algorithms/markmax.md.

pub mod link;

pub use link::{MarkMax, MarkMaxConfig, MarkMaxStats, MarkMaxUnit, MarkMaxVariant};
