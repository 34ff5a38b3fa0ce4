//! RCP (Dukkipati et al.): routers advertise one fair rate per link, sources send at the
//! smallest on their path; as packet flows (link, host, header) and in seed 004's session form
//! ([`session`]). See docs/algorithms/rcp.md.

pub mod header;
pub mod host;
pub mod link;
pub mod session;

pub use header::RcpHeader;
pub use host::{Rcp, RcpConfig};
pub use link::{RcpRouter, RcpRouterConfig, RcpRttFilter, RCP_PRESETS};

/// The session form under the names the registry gives it (the packet form's `Rcp` is the
/// sender).
pub use session::{Rcp as RcpSession, RcpParams as RcpSessionParams};
