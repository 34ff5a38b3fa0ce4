//! One [`Network`]: what both packet drivers build from. From a resolved scenario it makes the
//! nodes, links and flows a run has (a `[sessions]` table expanded by [`crate::sessions`]), the
//! links' algorithms with their seeded random streams, every flow's routes with the checks a
//! route must pass, and the session protocols' groups. The simulator (`xcc_sim::Simulation`)
//! and the emulator's plan (`xcc_emu::run::plan::Plan`) take this value, so a scenario is the
//! same network, with the same algorithms, streams and routes, in both.

use xcc_core::algorithms::slbn::HopSet;
use xcc_core::link::AnyLinkAlgorithm;
use xcc_core::rng::{component_rng, kind, Pcg64Mcg};

use crate::construct::link_algorithm;
use crate::scenario::model::{Cc, FlowKind, Protocol, Queue, Scenario};
use crate::scenario::ScenarioError;
use crate::sessions;
use crate::topology::{Route, Routes, Topology};
use crate::window_cap;
use crate::workload::{self, GeneratedWorkload};

/// A scenario built: nodes, links, flows, algorithms, random streams, routes.
pub struct Network {
    /// The resolved scenario with its `[sessions]` table expanded into routers, hosts, links
    /// and session flows (its `sessions` field is kept, for the error metrics' sampling).
    pub scenario: Scenario,
    /// Per link, in the scenario's order: its algorithm and random streams.
    pub links: Vec<NetworkLink>,
    /// Every route's link ids, in one arena.
    pub routes: Routes,
    /// Per flow: its route and the reverse one (over the links' duplex partners).
    pub flow_routes: Vec<(Route, Route)>,
    /// Per `[[arrivals]]` group: the route of its flows and the reverse one.
    pub arrival_routes: Vec<(Route, Route)>,
    /// Per `[[transactions]]` group: the request's route and its reverse, then the response's.
    pub transaction_routes: Vec<[(Route, Route); 2]>,
    /// The session flows' protocols and numbering.
    pub sessions: SessionGroups,
    /// Where a `[workload]`'s flows are among the flows, if the scenario has one.
    pub workload: Option<GeneratedWorkload>,
}

/// A link's state machines, built once for every driver.
pub struct NetworkLink {
    /// The queue's algorithm, seeded by its own stream (`kind::LINK`, the link's index).
    pub algorithm: AnyLinkAlgorithm,
    /// The stream of the link's random loss and jitter (`kind::LINK_LOSS`, the link's index);
    /// drawn from only when the scenario asks for loss or jitter.
    pub loss_rng: Pcg64Mcg,
}

/// The session flows by protocol: one group per protocol name in order of first use (with that
/// first flow's parameters: the sessions of one protocol share its link tasks), and sessions
/// numbered densely within their group in flow order (the id a group's link tasks key on).
#[derive(Clone, Debug, Default)]
pub struct SessionGroups {
    pub protocols: Vec<Protocol>,
    /// Per flow: its group and its number there, `None` for flows that are not sessions.
    pub of_flow: Vec<Option<(u32, u32)>>,
    /// Sessions per group.
    pub counts: Vec<u32>,
}

impl SessionGroups {
    /// The groups of `s`'s session flows.
    pub fn of(s: &Scenario) -> SessionGroups {
        let mut ids = SessionGroups::default();
        ids.of_flow.reserve(s.flows.len());
        for f in &s.flows {
            let FlowKind::Session { protocol, .. } = f.kind else {
                ids.of_flow.push(None);
                continue;
            };
            let g = match ids.protocols.iter().position(|p| p.name() == protocol.name()) {
                Some(g) => g,
                None => {
                    ids.protocols.push(protocol);
                    ids.counts.push(0);
                    ids.protocols.len() - 1
                }
            };
            ids.of_flow.push(Some((g as u32, ids.counts[g])));
            ids.counts[g] += 1;
        }
        ids
    }
}

fn err(path: &str, message: String) -> ScenarioError {
    ScenarioError { source: String::new(), path: path.to_string(), message }
}

impl Network {
    /// Builds `scenario`'s network; fails, naming the field, if a flow has no route, an explicit
    /// route is not contiguous, an explicit protocol's flow crosses no router of its kind, a
    /// window-based flow's path needs more than the transport's window cap, a session's route is longer than session protocols handle, or the `[sessions]` table
    /// cannot be generated.
    pub fn build(mut scenario: Scenario) -> Result<Network, ScenarioError> {
        let generated = sessions::expand(&mut scenario)?;
        let generated_workload = workload::expand(&mut scenario)?;
        // A fabric's flows hash onto its equal-cost paths; other networks take the one shortest.
        let ecmp = scenario.fabric.as_ref().is_some_and(|f| f.ecmp);
        let seed = scenario.seed;
        let mut topo = Topology::new(&scenario);
        let mut routes = Routes::default();
        let link_from: Vec<u32> = scenario.links.iter().map(|l| l.from).collect();
        let node_name = |n: u32| scenario.nodes[n as usize].name.clone();
        let route_for = |topo: &mut Topology,
                         routes: &mut Routes,
                         origin: &str,
                         src: u32,
                         dst: u32,
                         explicit: Option<&Vec<u32>>,
                         cc: Option<&Cc>,
                         flow_key: u64|
         -> Result<(Route, Route), ScenarioError> {
            let path = match explicit {
                Some(nodes) => topo.explicit(nodes).map_err(|k| {
                    err(
                        &format!("{origin}.route[{}]", k + 1),
                        format!("no link joins '{}' to '{}'", node_name(nodes[k]), node_name(nodes[k + 1])),
                    )
                })?,
                None => if ecmp {
                    topo.ecmp(src, dst, seed, flow_key)
                } else {
                    topo.shortest(src, dst, |l| link_from[l as usize])
                }
                .ok_or_else(|| {
                    err(
                        origin,
                        format!(
                            "no route from '{}' to '{}': the topology is disconnected between them",
                            node_name(src),
                            node_name(dst)
                        ),
                    )
                })?,
            };
            // An explicit protocol's source hears its rate or price only from routers of its
            // own kind; with none on its path it would grow without bound (e.g. MaxNet at
            // x_max), so the scenario is refused here rather than left to exhaust memory.
            if let Some(kind) = cc.map(Cc::name).filter(|k| Queue::NAMES.contains(k)) {
                if !path.iter().any(|&l| scenario.links[l as usize].queue.name() == kind) {
                    return Err(err(
                        origin,
                        format!(
                            "cc = \"{kind}\" needs a link with queue = \"{kind}\" on its route from '{}' to '{}', \
                             and no link on it has one (its sources would get no feedback)",
                            node_name(src),
                            node_name(dst)
                        ),
                    ));
                }
            }
            let fwd = routes.add(&path);
            let rev = routes.add_reverse(fwd);
            Ok((fwd, rev))
        };

        let mut flow_routes = Vec::with_capacity(scenario.flows.len());
        for (i, f) in scenario.flows.iter().enumerate() {
            let (fwd, rev) = match generated.as_ref().filter(|g| i >= g.first_flow) {
                // A generated session: its path from its source router's tree.
                Some(g) => {
                    let fwd = routes.add(g.paths.path(i - g.first_flow));
                    (fwd, routes.add_reverse(fwd))
                }
                None => {
                    let cc = match &f.kind {
                        FlowKind::Bulk { cc, .. } => Some(cc),
                        FlowKind::Cbr { .. } | FlowKind::Session { .. } => None,
                    };
                    route_for(&mut topo, &mut routes, &f.origin, f.src, f.dst, f.route.as_ref(), cc, i as u64)?
                }
            };
            // A window-based flow whose path needs more than the transport's window cap.
            if let FlowKind::Bulk { transport, .. } = &f.kind {
                window_cap::check(transport, fwd, rev, &routes, &scenario.links)
                    .map_err(|m| err(&f.origin, format!("flow '{}': {m}", f.name)))?;
            }
            // SLBN names the links of a path by position in a 128-bit set.
            if matches!(f.kind, FlowKind::Session { .. }) && fwd.len as usize > HopSet::MAX_HOPS {
                return Err(err(
                    &f.origin,
                    format!("the route has {} links; session protocols handle at most {}", fwd.len, HopSet::MAX_HOPS),
                ));
            }
            flow_routes.push((fwd, rev));
        }
        let mut arrival_routes = Vec::with_capacity(scenario.arrivals.len());
        // ECMP keys: flows by index, then each arrival group and transaction direction after them.
        const GROUP_KEYS: u64 = 1 << 40;
        for (g, a) in scenario.arrivals.iter().enumerate() {
            let key = GROUP_KEYS + g as u64;
            arrival_routes.push(route_for(&mut topo, &mut routes, &a.origin, a.src, a.dst, None, Some(&a.cc), key)?);
        }
        let mut transaction_routes = Vec::with_capacity(scenario.transactions.len());
        for (k, t) in scenario.transactions.iter().enumerate() {
            let key = 2 * GROUP_KEYS + 2 * k as u64;
            let req = route_for(&mut topo, &mut routes, &t.origin, t.client, t.server, None, Some(&t.cc), key)?;
            let resp = route_for(&mut topo, &mut routes, &t.origin, t.server, t.client, None, Some(&t.cc), key + 1)?;
            transaction_routes.push([req, resp]);
        }
        drop(topo);

        let links = scenario
            .links
            .iter()
            .enumerate()
            .map(|(i, l)| NetworkLink {
                algorithm: link_algorithm(&l.queue, component_rng(seed, kind::LINK, i as u64), l.rate_bps),
                loss_rng: component_rng(seed, kind::LINK_LOSS, i as u64),
            })
            .collect();
        let sessions = SessionGroups::of(&scenario);
        Ok(Network {
            scenario,
            links,
            routes,
            flow_routes,
            arrival_routes,
            transaction_routes,
            sessions,
            workload: generated_workload,
        })
    }

    /// The link ids of a route.
    pub fn path(&self, r: Route) -> &[u32] {
        &self.routes.links[r.start as usize..(r.start + r.len) as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{resolve, Format};

    const DUMBBELL: &str = r#"
name = "t"
duration = "1s"
[[host]]
name = "a"
[[router]]
name = "r"
[[host]]
name = "b"
[[link]]
between = ["a", "r"]
rate = "10Mbps"
delay = "1ms"
buffer = "100pkt"
[[link]]
between = ["r", "b"]
rate = "10Mbps"
delay = "1ms"
buffer = "100pkt"
"#;

    fn build(extra: &str) -> Result<Network, ScenarioError> {
        Network::build(resolve(&format!("{DUMBBELL}{extra}"), "t.toml", Format::Toml).unwrap())
    }

    /// A flow's route and its reverse over the duplex partners, in one arena.
    #[test]
    fn flows_get_a_route_and_its_reverse() {
        let n = build("[[flow]]\nname = \"f\"\nsrc = \"a\"\ndst = \"b\"\n").unwrap();
        let (fwd, rev) = n.flow_routes[0];
        assert_eq!(n.path(fwd), &[0, 2]);
        assert_eq!(n.path(rev), &[3, 1]);
        assert_eq!(n.links.len(), 4);
        assert!(n.sessions.protocols.is_empty() && n.sessions.of_flow == [None]);
    }

    /// The checks that used to sit in the simulator refuse a scenario here, naming the flow.
    #[test]
    fn an_explicit_protocol_with_no_router_of_its_kind_is_refused() {
        let e = build("[[flow]]\nname = \"f\"\nsrc = \"a\"\ndst = \"b\"\ncc = \"xcp\"\n").err().expect("refused");
        assert!(e.path.starts_with("flow") && e.message.contains("queue = \"xcp\""), "{e}");
    }

    /// Sessions of two protocols: groups in order of first use, numbers dense within each.
    #[test]
    fn session_groups_number_sessions_within_their_protocol() {
        let flows = ["slbn", "rcp", "slbn"]
            .iter()
            .enumerate()
            .map(|(i, p)| {
                format!("[[flow]]\nname = \"s{i}\"\nsrc = \"a\"\ndst = \"b\"\nkind = \"session\"\nprotocol = \"{p}\"\n")
            })
            .collect::<String>();
        let n = build(&flows).unwrap();
        let names: Vec<_> = n.sessions.protocols.iter().map(|p| p.name()).collect();
        assert_eq!(names, ["slbn", "rcp"]);
        assert_eq!(n.sessions.of_flow, [Some((0, 0)), Some((1, 0)), Some((0, 1))]);
        assert_eq!(n.sessions.counts, [2, 1]);
    }
}
