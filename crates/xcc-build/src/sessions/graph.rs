//! The graph of a generated session workload: routers joined by duplex links, and hosts hanging off
//! access routers by dedicated links. Hosts are only numbers until a session uses one: their
//! links are created on first use, so 2 million idle hosts cost nothing.

use std::collections::HashMap;
use xcc_core::Dur;

/// A duplex router-to-router link.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Edge {
    pub a: u32,
    pub b: u32,
    /// Capacity of each direction, bit/s.
    pub capacity: f64,
    pub delay: Dur,
}

/// Routers, edges and the host attachment rule (a transit-stub graph, [`mod@super::transit_stub`]).
#[derive(Clone, Debug, Default)]
pub struct Graph {
    pub routers: u32,
    /// Router links; directed link `2i` is `a -> b` of edge `i`, `2i + 1` is `b -> a`.
    pub edges: Vec<Edge>,
    /// Routers that have hosts (access / stub routers), in host-numbering order.
    pub access_routers: Vec<u32>,
    pub hosts_per_access_router: u32,
    /// Host links (both directions), bit/s and delay.
    pub host_capacity: f64,
    pub host_delay: Dur,
}

impl Graph {
    pub fn hosts(&self) -> u64 {
        self.access_routers.len() as u64 * self.hosts_per_access_router as u64
    }

    /// The router host `h` hangs off.
    pub fn router_of_host(&self, h: u32) -> u32 {
        self.access_routers[(h / self.hosts_per_access_router) as usize]
    }

    /// Adjacency: per router, (neighbour, directed link id), in edge order.
    pub fn adjacency(&self) -> Vec<Vec<(u32, u32)>> {
        let mut adj = vec![Vec::new(); self.routers as usize];
        for (i, e) in self.edges.iter().enumerate() {
            adj[e.a as usize].push((e.b, 2 * i as u32));
            adj[e.b as usize].push((e.a, 2 * i as u32 + 1));
        }
        adj
    }
}

/// Directed links of a run: the router links, then host links in order of first use.
#[derive(Clone, Debug)]
pub struct LinkTable {
    pub capacity: Vec<f64>,
    pub delay: Vec<Dur>,
    /// Host -> its uplink id (host -> router); the downlink is `uplink + 1`.
    host_links: HashMap<u32, u32>,
    /// Reverse of each directed link.
    pub reverse: Vec<u32>,
}

impl LinkTable {
    pub fn new(net: &Graph) -> LinkTable {
        let mut t =
            LinkTable { capacity: Vec::new(), delay: Vec::new(), host_links: HashMap::new(), reverse: Vec::new() };
        for e in &net.edges {
            let id = t.capacity.len() as u32;
            t.capacity.extend([e.capacity, e.capacity]);
            t.delay.extend([e.delay, e.delay]);
            t.reverse.extend([id + 1, id]);
        }
        t
    }

    pub fn len(&self) -> usize {
        self.capacity.len()
    }

    pub fn is_empty(&self) -> bool {
        self.capacity.is_empty()
    }

    /// Uplink (host -> router) and downlink (router -> host) of host `h`, created on first use.
    pub fn host_links(&mut self, net: &Graph, h: u32) -> (u32, u32) {
        let next = self.capacity.len() as u32;
        let up = *self.host_links.entry(h).or_insert(next);
        if up == next {
            self.capacity.extend([net.host_capacity, net.host_capacity]);
            self.delay.extend([net.host_delay, net.host_delay]);
            self.reverse.extend([up + 1, up]);
        }
        (up, up + 1)
    }

    /// Hosts whose links exist.
    pub fn hosts_in_use(&self) -> usize {
        self.host_links.len()
    }
}
