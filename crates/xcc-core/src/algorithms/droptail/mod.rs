//! DropTail: a FIFO that drops arrivals beyond the link's buffer (ns-2 DropTail, packet mode).
//! See docs/algorithms/droptail.md.

pub mod link;

pub use link::{DropTail, DropTailConfig};
