//! Analysis that needs no simulation: the centralised references experiments are checked
//! against (the max-min fair oracle today; MaxNet's stability design and price encoding next),
//! and the per-packet operation counter of the explicit routers.

pub mod maxmin;
pub mod opcount;

pub use maxmin::{max_min_fair, Allocation, Bottleneck, MaxMinProblem};
pub use opcount::{count, Counted, OpCounts, Scalar};
