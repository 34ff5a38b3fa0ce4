//! **The fluid session driver: an approximation.** Seed 004's explicit-rate session protocols
//! on large WAN topologies with *fluid* data (each link carries the sum of its sessions' rates,
//! no data packets) and packet-level control packets. It is validated against the packet
//! engine, which gives the verdicts: the same `[sessions]` workloads run as packets
//! (`crate::sim`, `tests/python/test_session_scenario.py` and the reproductions' `*-packet`
//! variants compare the two). It is kept because it runs seed 004's largest studies in seconds.
//!
//! It is a leaf: it imports the generators of the build layer (`xcc_build::sessions`: the
//! transit-stub graph, the workload, the routes) and the engine's event heap and statistics,
//! and no other module of the engine imports it (`tests/python/test_module_graph.py` checks);
//! its one entry point is [`run_experiment`] (`_native.run_sessions`).
//!
//! - [`link`]: a link with fluid data and packet-level control packets.
//! - [`sim`]: the generic driver of a [`xcc_core::session::SessionProtocol`], with the
//!   error metrics of seed 004 against the max-min oracle.
//! - [`protocols`]: the registry's session protocols, dispatched by name.
//! - [`experiment`]: the JSON experiment description.

pub mod experiment;
pub mod link;
pub mod protocols;
pub mod sim;

pub use experiment::{run_experiment, Experiment};
pub use sim::{RunSettings, SessionOutput, SessionSim};
