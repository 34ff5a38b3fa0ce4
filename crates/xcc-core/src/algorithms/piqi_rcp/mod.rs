//! PIQI-RCP (Jain & Loguinov, IWQoS 2007; law reconstructed from seeds 002/004): RCP with a
//! bounded-gain, queue-aware rate law; as packet flows and in seed 004's session form
//! ([`session`]). See docs/algorithms/piqi-rcp.md.

pub mod header;
pub mod host;
pub mod link;
pub mod session;

pub use header::PiqiRcpHeader;
pub use host::{PiqiRcp, PiqiRcpConfig};
pub use link::{PiqiRcpKappa, PiqiRcpLaw, PiqiRcpRouter, PiqiRcpRouterConfig};

/// The session form under the names the registry gives it (the packet form's `PiqiRcp` is the
/// sender).
pub use session::{PiqiRcp as PiqiRcpSession, PiqiRcpParams as PiqiRcpSessionParams};
