//! RED, Random Early Detection (Floyd & Jacobson 1993), classic or gentle as ns-2 runs it, in
//! packet or byte mode, dropping or marking. See docs/algorithms/red.md.

pub mod link;

pub use link::{Red, RedAction, RedConfig, RedStats, RedUnit, RedVariant};
