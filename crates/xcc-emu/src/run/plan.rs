//! From a resolved scenario to what the emulator builds: one namespace and router port per
//! host, the links with their algorithms (the simulator's own registry), and a route for every
//! ordered pair of hosts (shortest path, as the simulator routes flows without an explicit
//! `route`).

use xcc_build::capture::node_address;
use xcc_build::construct::link_algorithm;
use xcc_build::scenario::model::{Cc, FlowKind, NodeKind, Scenario};
use xcc_build::session::Protocol;
use xcc_build::topology::Topology;
use xcc_core::rng::{component_rng, kind};

use crate::os::netns::{netns_path, HostNs, TUN_DEV};
use crate::router::carrier::Carriers;
use crate::router::event_loop::Attachment;
use crate::router::fabric::{Fabric, Port};
use crate::router::link::EmuLink;
use crate::router::sessions::{link_tasks, SessionRouter};

/// Everything needed to bring a scenario up.
pub struct Plan {
    /// Scenario node id of each host, in port order.
    pub host_nodes: Vec<u32>,
    pub hosts: Vec<HostNs>,
    pub fabric: Fabric,
}

impl Plan {
    /// `prefix`: namespace name prefix of this run; host `i` lives in `<prefix><i>`.
    pub fn new(s: &Scenario, prefix: &str, tcp_cc: &str) -> Plan {
        let host_nodes: Vec<u32> =
            s.nodes.iter().enumerate().filter(|(_, n)| n.kind == NodeKind::Host).map(|(i, _)| i as u32).collect();
        let hosts: Vec<HostNs> = host_nodes
            .iter()
            .enumerate()
            .map(|(i, &n)| HostNs {
                name: format!("{prefix}{i}"),
                addr: node_address(n),
                tcp_cc: tcp_cc.to_string(),
                tcp_ecn: 1,
                tcp_sack: true,
                initcwnd: None,
                quickack: false,
            })
            .collect();
        let links = s
            .links
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let algo = link_algorithm(&l.queue, component_rng(s.seed, kind::LINK, i as u64), l.rate_bps);
                EmuLink::new(
                    l.name.clone(),
                    l.rate_bps,
                    l.delay_ns,
                    l.buffer.packets.unwrap_or(u64::MAX),
                    l.buffer.bytes.unwrap_or(u64::MAX),
                    algo,
                )
            })
            .collect();
        let mut topo = Topology::new(s);
        let link_from: Vec<u32> = s.links.iter().map(|l| l.from).collect();
        let mut routes = Vec::new();
        for (a, &na) in host_nodes.iter().enumerate() {
            for (b, &nb) in host_nodes.iter().enumerate() {
                if a != b {
                    if let Some(r) = topo.shortest(na, nb, |l| link_from[l as usize]) {
                        routes.push((a, b, r));
                    }
                }
            }
        }
        let ports = host_nodes
            .iter()
            .zip(&hosts)
            .map(|(&n, h)| Port { name: s.nodes[n as usize].name.clone(), addr: h.addr })
            .collect();
        let mut fabric = Fabric::new(ports, links, routes, Carriers::standard());
        let ids = SessionIds::of(s);
        if !ids.protocols.is_empty() {
            let groups = ids.protocols.iter().map(|p| link_tasks(p, s.links.len())).collect();
            fabric.enable_sessions(SessionRouter::new(groups, s.links.len()));
        }
        Plan { host_nodes, hosts, fabric }
    }

    pub fn attachments(&self) -> Vec<Attachment> {
        self.hosts.iter().map(|h| Attachment { netns: netns_path(&h.name), dev: TUN_DEV.to_string() }).collect()
    }

    /// Port index of scenario node `node`, if it is a host.
    pub fn port_of(&self, node: u32) -> Option<usize> {
        self.host_nodes.iter().position(|&n| n == node)
    }
}

/// The congestion control of a flow, if it is a transport flow.
pub fn flow_cc(kind: &FlowKind) -> Option<&Cc> {
    match kind {
        FlowKind::Bulk { cc, .. } => Some(cc),
        FlowKind::Cbr { .. } | FlowKind::Session { .. } => None,
    }
}

/// The session flows' protocols and numbering, the simulator's (`xcc-sim/src/sim.rs`): one
/// group per protocol name in order of first use, with that first flow's parameters; sessions
/// numbered densely within their group in flow order (the id the link tasks key on).
pub struct SessionIds {
    pub protocols: Vec<Protocol>,
    /// Per flow: its group and number, `None` for flows that are not sessions.
    pub of_flow: Vec<Option<(usize, u32)>>,
    /// Sessions per group.
    pub counts: Vec<u32>,
}

impl SessionIds {
    pub fn of(s: &Scenario) -> SessionIds {
        let mut ids = SessionIds { protocols: Vec::new(), of_flow: Vec::new(), counts: Vec::new() };
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
            ids.of_flow.push(Some((g, ids.counts[g])));
            ids.counts[g] += 1;
        }
        ids
    }
}
