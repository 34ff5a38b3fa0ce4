//! JetMax (Zhang, Leonard & Loguinov, INFOCOM 2006; laws and header reconstructed): routers
//! keep a fair rate per link, sources follow the bottleneck's. See docs/algorithms/jetmax.md.

pub mod header;
pub mod host;
pub mod link;

pub use header::JetMaxHeader;
pub use host::{JetMax, JetMaxConfig};
pub use link::{JetMaxRouter, JetMaxRouterConfig, JetMaxStats};
