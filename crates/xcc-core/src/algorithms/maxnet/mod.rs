//! MaxNet (seed 000): routers advertise the largest link price on the path in a 24-bit field;
//! sources set their rate from it (with MaxStart). See docs/algorithms/maxnet.md.

pub mod header;
pub mod host;
pub mod link;
pub mod tcp_option;

pub use header::MaxNetHeader;
pub use host::{MaxNet, MaxNetConfig, MaxNetEcho};
pub use link::{MaxNetRouter, MaxNetRouterConfig};
