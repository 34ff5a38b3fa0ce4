//! XCP (Katabi et al., SIGCOMM 2002, in its ns-2.35 form): per-packet window feedback from an
//! efficiency and a fairness controller. See docs/algorithms/xcp.md.

pub mod header;
pub mod host;
pub mod link;

pub use header::XcpHeader;
pub use host::{Xcp, XcpConfig, XcpEcho};
pub use link::{XcpRouter, XcpRouterConfig};
