//! # xcc-build: scenarios and construction, shared by every driver
//!
//! - [`scenario`]: the TOML/JSON scenario format, strict parsing and resolution into integers.
//! - [`construct`]: the xcc-core state machines a resolved scenario asks for.
//! - [`topology`]: adjacency and per-flow routes.
//! - [`network`]: one [`network::Network`] from a resolved scenario (links with their
//!   algorithms and random streams, routes and their checks, the `[sessions]` expansion),
//!   which both drivers take.
//! - [`schema`]: the result tables' columns, declared once for both drivers and Python.
//! - [`session`]: a session flow's `protocol` (seed 004's explicit-rate session protocols).
//! - [`sessions`]: a `[sessions]` table's generators (transit-stub graph, workload, routes)
//!   and its expansion into nodes, links and flows.
//! - [`pfc`]: `[pfc]`, the lossless fabric's thresholds and their checks against the links.
//! - [`window_cap`]: the check that a window-based flow's path fits the transport's window cap.
//! - [`capture`]: the wire image of a packet between scenario nodes (addresses, ports, pcap).
//!
//! The simulator (`xcc-sim`) and the emulator (`xcc-emu`) both depend on this crate and neither
//! on the other.

pub mod capture;
pub mod cc;
pub mod construct;
pub mod network;
pub mod pfc;
pub mod queue;
pub mod scenario;
pub mod schema;
pub mod session;
pub mod sessions;
pub mod topology;
pub mod window_cap;

pub use network::Network;
pub use scenario::{resolve, Format, Scenario, ScenarioError};
