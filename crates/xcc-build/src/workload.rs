//! `[workload]`: the flows of a datacenter workload, drawn when the network is built (so a
//! run's `run.json` keeps the short table, not 100,000 flows): Poisson flows among every host
//! at the target load with sizes from the CDF ([`xcc_core::workload::PoissonFlows`]), then the
//! incast requests' flows ([`xcc_core::workload::IncastRequests`]), appended to the scenario's
//! flows as sized bulk flows with the workload's `cc` and transport. Hosts are the scenario's
//! hosts in node order (the fabric's `h0`, `h1`, ...).

use std::ops::Range;

use xcc_core::workload::{FlowSizeCdf, IncastRequests, PoissonFlows};
use xcc_core::Time;

use crate::scenario::memory;
use crate::scenario::model::{Flow, FlowKind, NodeKind, Scenario};
use crate::scenario::ScenarioError;

/// Mixed into the scenario seed, so the workload's streams differ from `[[arrivals]]` groups'
/// (both are of the generator kind, numbered from 0).
const WORKLOAD_SEED_SALT: u64 = 0x776f_726b_6c6f_6164; // "workload"

/// Where a workload's flows are among the scenario's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GeneratedWorkload {
    /// The Poisson background's flows.
    pub background: Range<usize>,
    /// The incast requests' flows.
    pub incast: Range<usize>,
    /// Slowdown bin width, percent of the flows.
    pub bin_percent: u32,
}

impl GeneratedWorkload {
    /// Every flow of the workload.
    pub fn flows(&self) -> Range<usize> {
        self.background.start..self.incast.end
    }
}

fn err(path: &str, message: impl Into<String>) -> ScenarioError {
    ScenarioError { source: String::new(), path: path.to_string(), message: message.into() }
}

/// Appends `scenario.workload`'s flows to `scenario.flows`; `None` without a workload.
pub fn expand(scenario: &mut Scenario) -> Result<Option<GeneratedWorkload>, ScenarioError> {
    let Some(w) = scenario.workload.clone() else { return Ok(None) };
    let hosts: Vec<u32> =
        scenario.nodes.iter().enumerate().filter(|(_, n)| n.kind == NodeKind::Host).map(|(i, _)| i as u32).collect();
    let cdf = FlowSizeCdf::from_points(&w.cdf_points).map_err(|e| err("workload.cdf", e.to_string()))?;
    let window = Time(w.stop_ns - w.start_ns);
    // Refuse a workload that would not fit in memory before drawing it: flows expected.
    let secs = window.as_secs_f64();
    let background = hosts.len() as f64 * w.load * w.host_rate_bps as f64 / 8.0 / cdf.mean_bytes() * secs;
    let incast = w.incast.map_or(0.0, |i| hosts.len() as f64 * i.requests_per_sec * secs * i.fan_in as f64);
    let expected = (background + incast).ceil() as u64;
    let per_flow = memory::per_entry_bytes::<Flow>(&serde_json::Value::Null);
    memory::check(expected.saturating_mul(per_flow), per_flow, expected)
        .map_err(|m| err("workload", format!("about {expected} flows: {m}")))?;

    let seed = scenario.seed ^ WORKLOAD_SEED_SALT;
    let flow = |origin: String, name: String, src: u32, dst: u32, start: Time, size: u64| Flow {
        origin,
        name,
        src: hosts[src as usize],
        dst: hosts[dst as usize],
        start_ns: w.start_ns + start.as_ns(),
        stop_ns: None,
        route: None,
        kind: FlowKind::Bulk { size_bytes: Some(size), cc: w.cc, transport: w.transport },
    };
    let first = scenario.flows.len();
    let poisson = PoissonFlows::new(cdf, hosts.len() as u32, w.host_rate_bps as f64, w.load, window, seed)
        .map_err(|e| err("workload", e.to_string()))?;
    for (k, f) in poisson.enumerate() {
        scenario.flows.push(flow(format!("workload (flow {k})"), format!("w{k}"), f.src, f.dst, f.start, f.size_bytes));
    }
    let first_incast = scenario.flows.len();
    if let Some(i) = w.incast {
        let requests =
            IncastRequests::new(hosts.len() as u32, i.fan_in, i.request_bytes, i.requests_per_sec, window, seed)
                .map_err(|e| err("workload.incast", e.to_string()))?;
        for (r, req) in requests.enumerate() {
            for (j, f) in req.flows().enumerate() {
                scenario.flows.push(flow(
                    format!("workload.incast (request {r}, sender {j})"),
                    format!("incast{r}.{j}"),
                    f.src,
                    f.dst,
                    f.start,
                    f.size_bytes,
                ));
            }
        }
    }
    Ok(Some(GeneratedWorkload {
        background: first..first_incast,
        incast: first_incast..scenario.flows.len(),
        bin_percent: w.bin_percent,
    }))
}
