//! The generators of a `[sessions]` table (seed 004's WAN workloads), shared by every driver:
//! the packet simulator and the emulator expand them into scenario nodes, links and flows
//! ([`mod@expand`]), the fluid session driver (`xcc_sim::fluid`) runs on them directly.
//!
//! - [`graph`]: routers joined by duplex links, hosts whose links exist only once a session
//!   uses them, and the table of directed links.
//! - [`mod@transit_stub`]: the GT-ITM-style transit-stub generator (Medium, Large, or parameters).
//! - [`workload`]: arrivals and departures over windows, Pareto sizes.
//! - [`routes`]: shortest paths, one tree per source router.
//! - [`mod@expand`]: a `[sessions]` table as nodes, links and session flows of the scenario.

pub mod expand;
pub mod graph;
pub mod routes;
pub mod transit_stub;
pub mod workload;

pub use expand::{expand, Generated};
pub use graph::{Edge, Graph, LinkTable};
pub use routes::{session_paths, Paths, RouteError};
pub use transit_stub::{transit_stub, TopologySpec, TransitStubParams};
pub use workload::{generate, ParetoSize, Sessions, Window, WorkloadSpec};
