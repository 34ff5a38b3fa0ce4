//! Session experiments (seed 004): explicit-rate session protocols on large WAN topologies.
//!
//! - [`network`]: routers, duplex links, hosts whose links exist only once a session uses them.
//! - [`transit_stub`]: the GT-ITM-style transit-stub generator (Medium, Large).
//! - [`routes`]: shortest paths, one tree per source router.
//! - [`workload`]: arrivals and departures over windows, Pareto sizes.
//! - [`fluid`]: a link with fluid data and packet-level control packets.
//! - [`sim`]: the generic driver of a [`xcc_core::session::SessionProtocol`], with the
//!   error metrics of seed 004 against the max-min oracle.
//! - [`experiment`]: the JSON experiment description and the protocol registry.

pub mod experiment;
pub mod fluid;
pub mod network;
pub mod protocols;
pub mod routes;
pub mod sim;
pub mod stats;
pub mod transit_stub;
pub mod workload;

pub use experiment::{run_experiment, Experiment};
pub use sim::{RunSettings, SessionOutput, SessionSim};
