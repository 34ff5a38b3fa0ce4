//! `[sessions]`: seed 004's generated workloads as scenario nodes, links and flows, for both
//! packet drivers (the simulator and the emulator).
//!
//! The network and the sessions come from this folder's generators, which the fluid session
//! driver uses too: the transit-stub graph ([`mod@super::transit_stub`]), the workload with its
//! arrival and departure windows and Pareto sizes ([`super::workload::generate`]), and the
//! routes, one shortest-path tree per *source router*, each dropped once its sessions' paths are
//! written ([`super::routes::session_paths`]). Hosts are numbers until a session uses one: only the
//! hosts some session starts or ends at become nodes, with their two links, so the Large
//! network's 2.16 million hosts cost only the few hundred thousand in use.
//!
//! The routers, hosts, links and session flows are appended to the scenario the simulation
//! owns (the resolved scenario a run records keeps the short `[sessions]` table instead), with
//! link ids in the session driver's numbering (router links `2i`/`2i+1` of edge `i`, then each
//! host's uplink and downlink in order of first use), so a session's path is its route here.

use super::graph::LinkTable;
use super::routes::{session_paths, Paths};
use super::transit_stub::TopologySpec;
use super::workload::{generate, WorkloadSpec};
use crate::scenario::error::typed;
use crate::scenario::model::{Buffer, DropTailParams, Flow, FlowKind, Link, Node, NodeKind, Queue, Scenario};
use crate::scenario::ScenarioError;

/// The sessions a `[sessions]` table generated: flows `first_flow..` take `paths` in order.
pub struct Generated {
    pub first_flow: usize,
    pub paths: Paths,
}

fn err(path: &str, message: impl Into<String>) -> ScenarioError {
    ScenarioError { source: String::new(), path: path.to_string(), message: message.into() }
}

/// A generator's message `"workload.arrivals[0]: ..."` as an error at `sessions.workload.arrivals[0]`.
fn workload_err(m: String) -> ScenarioError {
    match m.split_once(": ") {
        Some((field, rest)) if field.starts_with("workload") => err(&format!("sessions.{field}"), rest),
        _ => err("sessions.workload", m),
    }
}

/// Generates the network and sessions of `scenario.sessions` into `scenario`; `None` without one.
pub fn expand(scenario: &mut Scenario) -> Result<Option<Generated>, ScenarioError> {
    let Some(w) = scenario.sessions.clone() else { return Ok(None) };
    let topo: TopologySpec = typed(w.topology, "sessions.topology", "").map_err(|e| err(&e.path, e.message))?;
    let net = topo.graph(w.topology_seed.unwrap_or(scenario.seed)).map_err(|m| err("sessions.topology", m))?;
    let spec: WorkloadSpec = typed(w.workload, "sessions.workload", "").map_err(|e| err(&e.path, e.message))?;
    let sessions = generate(&spec, &net, scenario.seed).map_err(workload_err)?;

    // Hosts become nodes in order of first use (a session's source, then its destination), the
    // order in which the link table gives them their links.
    let mut links = LinkTable::new(&net);
    let router_links = links.len();
    let base_node = scenario.nodes.len() as u32;
    scenario.nodes.reserve(net.routers as usize);
    for r in 0..net.routers {
        scenario.nodes.push(Node { name: format!("r{r}"), kind: NodeKind::Router });
    }
    let mut host_node = std::collections::HashMap::with_capacity(2 * sessions.len());
    let mut hosts = Vec::new();
    for s in 0..sessions.len() {
        for h in [sessions.src[s], sessions.dst[s]] {
            let before = links.len();
            let (up, _) = links.host_links(&net, h);
            if links.len() > before {
                debug_assert_eq!(up as usize, router_links + 2 * hosts.len());
                host_node.insert(h, base_node + net.routers + hosts.len() as u32);
                hosts.push(h);
            }
        }
    }
    for &h in &hosts {
        scenario.nodes.push(Node { name: format!("h{h}"), kind: NodeKind::Host });
    }
    let paths =
        session_paths(&net, &mut links, &sessions.src, &sessions.dst, xcc_core::algorithms::slbn::HopSet::MAX_HOPS)
            .map_err(|e| err("sessions.topology", e.to_string()))?;

    // Links: each directed link of the table, unlimited DropTail as in seed 004.
    let node_name = |n: u32| &scenario.nodes[n as usize].name;
    let mut new_links = Vec::with_capacity(links.len());
    for l in 0..links.len() {
        let (from, to) = if l < router_links {
            let e = &net.edges[l / 2];
            let (a, b) = (base_node + e.a, base_node + e.b);
            if l % 2 == 0 {
                (a, b)
            } else {
                (b, a)
            }
        } else {
            let h = hosts[(l - router_links) / 2];
            let (host, router) = (host_node[&h], base_node + net.router_of_host(h));
            if l % 2 == 0 {
                (host, router)
            } else {
                (router, host)
            }
        };
        new_links.push(Link {
            name: format!("{}->{}", node_name(from), node_name(to)),
            from,
            to,
            rate_bps: links.capacity[l].round() as u64,
            delay_ns: links.delay[l].as_ns(),
            buffer: Buffer { packets: None, bytes: None },
            queue: Queue::DropTail(DropTailParams {}),
            loss: 0.0,
            jitter_ns: 0,
            int: false,
        });
    }
    scenario.links.extend(new_links);

    let first_flow = scenario.flows.len();
    scenario.flows.reserve(sessions.len());
    for s in 0..sessions.len() {
        let demand = sessions.demand[s];
        scenario.flows.push(Flow {
            origin: format!("sessions (session {s})"),
            name: format!("s{s}"),
            src: host_node[&sessions.src[s]],
            dst: host_node[&sessions.dst[s]],
            start_ns: sessions.start[s].as_ns(),
            stop_ns: sessions.stop[s].map(|t| t.as_ns()),
            route: None,
            kind: FlowKind::Session {
                protocol: w.protocol,
                size_bytes: sessions.size_bits[s].map(|b| (b / 8.0).ceil() as u64),
                demand_bps: demand.is_finite().then(|| demand.round() as u64),
                packet_bytes: w.packet_bytes,
            },
        });
    }
    Ok(Some(Generated { first_flow, paths }))
}
