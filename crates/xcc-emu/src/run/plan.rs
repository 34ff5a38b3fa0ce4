//! From a built network ([`xcc_build::Network`], the value the simulator takes too) to what the
//! emulator builds: one namespace and router port per host, the links with the network's
//! algorithms, and a route for every ordered pair of hosts. The router routes by host pair, so
//! a pair takes the route of the first flow between them (its forward route, or the reverse of
//! a flow the other way, as the simulator's acknowledgements and feedback go), and the other
//! pairs the shortest path, as the simulator routes a flow without an explicit `route`.

use xcc_build::capture::node_address;
use xcc_build::network::{Network, SessionGroups};
use xcc_build::scenario::model::{Cc, FlowKind, NodeKind, Scenario};
use xcc_build::topology::Topology;

use crate::os::netns::{netns_path, HostNs, TUN_DEV};
use crate::router::carrier::Carriers;
use crate::router::event_loop::Attachment;
use crate::router::fabric::{Fabric, Port};
use crate::router::link::EmuLink;
use crate::router::sessions::{link_tasks, SessionRouter};

/// Everything needed to bring a scenario up.
pub struct Plan {
    /// The network's scenario: the resolved one with a `[sessions]` table expanded into its
    /// routers, hosts, links and session flows.
    pub scenario: Scenario,
    /// The session flows' protocols and numbering (the simulator's).
    pub sessions: SessionGroups,
    /// Scenario node id of each host, in port order.
    pub host_nodes: Vec<u32>,
    pub hosts: Vec<HostNs>,
    pub fabric: Fabric,
}

impl Plan {
    /// `prefix`: namespace name prefix of this run; host `i` lives in `<prefix><i>`.
    pub fn new(network: Network, prefix: &str, tcp_cc: &str) -> Plan {
        let s = &network.scenario;
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
        let mut port = vec![usize::MAX; s.nodes.len()];
        for (i, &n) in host_nodes.iter().enumerate() {
            port[n as usize] = i;
        }
        let n = host_nodes.len();
        let mut pair_route: Vec<Option<Vec<u32>>> = vec![None; n * n];
        let mut take = |a: u32, b: u32, path: &[u32]| {
            let slot = &mut pair_route[port[a as usize] * n + port[b as usize]];
            if slot.is_none() {
                *slot = Some(path.to_vec());
            }
        };
        for (f, &(fwd, rev)) in s.flows.iter().zip(&network.flow_routes) {
            take(f.src, f.dst, network.path(fwd));
            take(f.dst, f.src, network.path(rev));
        }
        for (t, [req, resp]) in s.transactions.iter().zip(&network.transaction_routes) {
            take(t.client, t.server, network.path(req.0));
            take(t.server, t.client, network.path(resp.0));
        }
        let mut topo = Topology::new(s);
        let link_from: Vec<u32> = s.links.iter().map(|l| l.from).collect();
        let mut routes = Vec::new();
        for (a, &na) in host_nodes.iter().enumerate() {
            for (b, &nb) in host_nodes.iter().enumerate() {
                if a == b {
                    continue;
                }
                let r = pair_route[a * n + b].take().or_else(|| topo.shortest(na, nb, |l| link_from[l as usize]));
                if let Some(r) = r {
                    routes.push((a, b, r));
                }
            }
        }
        let ports = host_nodes
            .iter()
            .zip(&hosts)
            .map(|(&n, h)| Port { name: s.nodes[n as usize].name.clone(), addr: h.addr })
            .collect();
        let Network { scenario, links: built, sessions, .. } = network;
        // No random loss or jitter on real packets (the real network adds its own): the links'
        // loss streams stay unused.
        let links = scenario
            .links
            .iter()
            .zip(built)
            .map(|(l, b)| {
                EmuLink::new(
                    l.name.clone(),
                    l.rate_bps,
                    l.delay_ns,
                    l.buffer.packets.unwrap_or(u64::MAX),
                    l.buffer.bytes.unwrap_or(u64::MAX),
                    b.algorithm,
                )
            })
            .collect();
        let mut fabric = Fabric::new(ports, links, routes, Carriers::standard());
        if !sessions.protocols.is_empty() {
            let groups = sessions.protocols.iter().map(|p| link_tasks(p, scenario.links.len())).collect();
            fabric.enable_sessions(SessionRouter::new(groups, scenario.links.len()));
        }
        Plan { scenario, sessions, host_nodes, hosts, fabric }
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
