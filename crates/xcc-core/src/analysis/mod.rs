//! Analysis that needs no simulation: the centralised references experiments are checked
//! against (the max-min fair oracle today; MaxNet's stability design and price encoding next).

pub mod maxmin;

pub use maxmin::{max_min_fair, Allocation, Bottleneck, MaxMinProblem};
