//! NewReno with ECN (RFC 6582, RFC 3168, on RFC 5681): the loss-based baseline.
//! See docs/algorithms/newreno.md.

pub mod host;

pub use host::{NewReno, NewRenoConfig};
