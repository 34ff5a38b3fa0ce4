//! # xcc-sim: a deterministic packet-level simulator for the xcc-core state machines
//!
//! - [`scenario`], [`topology`], [`construct`], [`network`]: from xcc-build (re-exported);
//!   a run builds one [`Network`] and the [`Simulation`] takes it.
//! - [`engine`]: the (time, sequence)-ordered event queue.
//! - [`link`]: a directed link in virtual time (one event per packet-hop).
//! - [`sim`]: the simulation itself: traffic, hosts, metrics, invariants.
//! - [`partition`], [`parallel`]: the network cut into domains, and the windowed engine that
//!   runs them on several threads with the same bytes for any thread count.
//! - [`output`]: columnar results.
//! - [`fluid`]: the fluid session driver of seed 004 (explicit-rate protocols, fluid data, WAN
//!   topologies), an approximation validated against the packet engine; nothing here imports it.
//! - [`session_group`]: the same protocols on the packet engine (`kind = "session"` flows).
//!
//! ```no_run
//! let text = std::fs::read_to_string("scenarios/dumbbell-10.toml").unwrap();
//! let out = xcc_sim::run_text(&text, "dumbbell-10.toml", xcc_sim::Format::Toml, None, true, None).unwrap();
//! println!("{} events", out.1.stats.events);
//! ```

pub mod engine;
pub mod event_heap;
pub mod fluid;
pub mod link;
pub mod output;
pub mod parallel;
pub mod partition;
pub mod session_group;
pub mod sim;
pub mod stats;

// The scenario format, topology and construction live in xcc-build (shared with xcc-emu).
pub use network::Network;
pub use xcc_build::{capture, construct, network, scenario, schema, topology};

pub use output::{RunOutput, RunStats, Table};
pub use scenario::{resolve, Format, Scenario, ScenarioError};
pub use sim::{RunError, Simulation};

/// Resolves and runs a scenario: returns the resolved scenario and the results.
/// `seed` overrides the scenario's seed.
pub fn run_text(
    text: &str,
    source: &str,
    format: Format,
    seed: Option<u64>,
    metrics: bool,
    progress: Option<&mut dyn FnMut(f64)>,
) -> Result<(Scenario, RunOutput), RunError> {
    run_text_capturing(text, source, format, seed, metrics, None, progress)
}

/// [`run_text`], also capturing the packets that depart link direction `capture` (`"a->b"`)
/// into `RunOutput::capture` (see [`capture`]).
pub fn run_text_capturing(
    text: &str,
    source: &str,
    format: Format,
    seed: Option<u64>,
    metrics: bool,
    capture: Option<&str>,
    progress: Option<&mut dyn FnMut(f64)>,
) -> Result<(Scenario, RunOutput), RunError> {
    run_text_threads(text, source, format, seed, metrics, capture, 1, progress).map(|(s, out, _)| (s, out))
}

/// [`run_text_capturing`] on `threads` threads (the parallel engine, [`parallel`]): the same
/// bytes for every thread count. Also returns the number of domains the network was cut into
/// (1: the serial engine).
#[allow(clippy::too_many_arguments)]
pub fn run_text_threads(
    text: &str,
    source: &str,
    format: Format,
    seed: Option<u64>,
    metrics: bool,
    capture: Option<&str>,
    threads: usize,
    progress: Option<&mut dyn FnMut(f64)>,
) -> Result<(Scenario, RunOutput, usize), RunError> {
    let mut scenario = resolve(text, source, format).map_err(RunError::Scenario)?;
    if let Some(s) = seed {
        scenario.seed = s;
    }
    let resolved = scenario.clone();
    let (out, domains) =
        parallel::run_scenario(scenario, metrics, threads, capture, progress).map_err(|e| match e {
            RunError::Scenario(mut e) => {
                e.source = source.to_string();
                RunError::Scenario(e)
            }
            e => e,
        })?;
    Ok((resolved, out, domains))
}
