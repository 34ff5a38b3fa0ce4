//! GT-ITM-style transit-stub topologies (Calvert, Doar and Zegura 1997; Zegura's `ts` model):
//! `T` transit domains of `Nt` routers each; every transit router has `K` stub domains of `Ns`
//! routers each, attached by one edge from a random stub router. Inside a domain, and between
//! transit domains, edges are drawn with a given probability on top of a random spanning tree
//! (GT-ITM redraws until the graph is connected; the spanning tree gives a connected graph in
//! one draw with the same edge density up to `n - 1` edges). Seeded and deterministic.

use super::graph::{Edge, Graph};
use rand_core::RngCore;
use serde::Deserialize;
use xcc_core::rng::{component_rng, kind, uniform01, Pcg64Mcg};
use xcc_core::Dur;

/// A `[sessions]` table's (or a fluid experiment's) `topology`: one of seed 004's two networks
/// by name, or a transit-stub graph with its own parameters.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum TopologySpec {
    /// Seed 004's Medium network (1,100 routers).
    Medium,
    /// Seed 004's Large network (11,000 routers).
    Large,
    TransitStub(TransitStubParams),
}

impl TopologySpec {
    /// The transit-stub graph these parameters describe, drawn from `seed`.
    pub fn graph(&self, seed: u64) -> Result<Graph, String> {
        let params = match self {
            TopologySpec::Medium => TransitStubParams::medium(),
            TopologySpec::Large => TransitStubParams::large(),
            TopologySpec::TransitStub(p) => p.clone(),
        };
        transit_stub(&params, seed)
    }
}

/// Parameters of a transit-stub graph and its link speeds (defaults: seed 004's WAN settings).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TransitStubParams {
    pub transit_domains: u32,
    pub transit_routers_per_domain: u32,
    pub stubs_per_transit_router: u32,
    pub routers_per_stub: u32,
    /// Edge probability between two routers of one transit domain.
    pub p_transit: f64,
    /// Edge probability between two routers of one stub domain.
    pub p_stub: f64,
    /// Edge probability between two transit domains (each such edge joins random routers).
    pub p_interdomain: f64,
    pub transit_capacity_bps: f64,
    pub transit_stub_capacity_bps: f64,
    pub stub_capacity_bps: f64,
    /// Internal links' propagation delay, uniform in [min, max].
    pub delay_min_s: f64,
    pub delay_max_s: f64,
    pub hosts_per_stub_router: u32,
    pub host_capacity_bps: f64,
    pub host_delay_s: f64,
}

impl Default for TransitStubParams {
    fn default() -> Self {
        TransitStubParams::medium()
    }
}

impl TransitStubParams {
    /// Seed 004's Medium network: 1,100 routers (4 x 5 transit, 20 x 6 stub domains of 9).
    pub fn medium() -> TransitStubParams {
        TransitStubParams {
            transit_domains: 4,
            transit_routers_per_domain: 5,
            stubs_per_transit_router: 6,
            routers_per_stub: 9,
            p_transit: 0.6,
            p_stub: 0.3,
            p_interdomain: 0.5,
            transit_capacity_bps: 5e9,
            transit_stub_capacity_bps: 1e9,
            stub_capacity_bps: 1e9,
            delay_min_s: 0.001,
            delay_max_s: 0.010,
            hosts_per_stub_router: 200,
            host_capacity_bps: 1e8,
            host_delay_s: 1e-6,
        }
    }

    /// Seed 004's Large network: 11,000 routers (20 x 10 transit, 200 x 6 stub domains of 9).
    pub fn large() -> TransitStubParams {
        TransitStubParams { transit_domains: 20, transit_routers_per_domain: 10, p_interdomain: 0.2, ..Self::medium() }
    }

    pub fn routers(&self) -> u64 {
        let transit = self.transit_domains as u64 * self.transit_routers_per_domain as u64;
        transit * (1 + self.stubs_per_transit_router as u64 * self.routers_per_stub as u64)
    }

    /// Checks the numbers; the message names the field.
    pub fn validate(&self) -> Result<(), String> {
        let counts = [
            ("transit_domains", self.transit_domains),
            ("transit_routers_per_domain", self.transit_routers_per_domain),
            ("routers_per_stub", self.routers_per_stub),
            ("hosts_per_stub_router", self.hosts_per_stub_router),
        ];
        for (name, v) in counts {
            if v == 0 {
                return Err(format!("{name}: expected at least 1"));
            }
        }
        for (name, p) in [("p_transit", self.p_transit), ("p_stub", self.p_stub), ("p_interdomain", self.p_interdomain)]
        {
            if !(0.0..=1.0).contains(&p) {
                return Err(format!("{name}: expected a probability in [0, 1], got {p}"));
            }
        }
        if !(self.delay_min_s >= 0.0 && self.delay_max_s >= self.delay_min_s) {
            return Err("delay_min_s, delay_max_s: expected 0 <= min <= max".into());
        }
        if self.routers() > u32::MAX as u64 / 2 {
            return Err("too many routers".into());
        }
        Ok(())
    }
}

struct Builder {
    rng: Pcg64Mcg,
    edges: Vec<Edge>,
    delay: (f64, f64),
}

impl Builder {
    fn below(&mut self, n: u32) -> u32 {
        (uniform01(&mut self.rng) * n as f64) as u32
    }
    fn delay(&mut self) -> Dur {
        let (lo, hi) = self.delay;
        Dur::from_secs_f64(lo + (hi - lo) * uniform01(&mut self.rng))
    }
    fn edge(&mut self, a: u32, b: u32, capacity: f64) {
        let delay = self.delay();
        self.edges.push(Edge { a, b, capacity, delay });
    }
    /// Connected random graph on `nodes`: a random spanning tree (node i joins a random
    /// earlier node) plus every other pair with probability `p`.
    fn domain(&mut self, nodes: &[u32], p: f64, capacity: f64) {
        let n = nodes.len();
        let mut tree = vec![vec![false; n]; n];
        for i in 1..n {
            let j = self.below(i as u32) as usize;
            tree[i][j] = true;
            tree[j][i] = true;
            self.edge(nodes[j], nodes[i], capacity);
        }
        for i in 0..n {
            for j in i + 1..n {
                if !tree[i][j] && uniform01(&mut self.rng) < p {
                    self.edge(nodes[i], nodes[j], capacity);
                }
            }
        }
    }
}

/// Builds the graph. Router numbering: transit routers first (domain by domain), then stub
/// routers (stub domain by stub domain); hosts are numbered along the stub routers.
pub fn transit_stub(params: &TransitStubParams, seed: u64) -> Result<Graph, String> {
    params.validate()?;
    let p = params;
    let mut b = Builder {
        rng: component_rng(seed, kind::GENERATOR, 0x75),
        edges: Vec::new(),
        delay: (p.delay_min_s, p.delay_max_s),
    };
    let nt = p.transit_routers_per_domain;
    let transit = p.transit_domains * nt;
    for d in 0..p.transit_domains {
        let nodes: Vec<u32> = (d * nt..(d + 1) * nt).collect();
        b.domain(&nodes, p.p_transit, p.transit_capacity_bps);
    }
    // Inter-domain: a random graph over the domains, each edge between random routers.
    let doms = p.transit_domains;
    let mut joined = vec![vec![false; doms as usize]; doms as usize];
    for i in 1..doms {
        let j = b.below(i);
        joined[i as usize][j as usize] = true;
        joined[j as usize][i as usize] = true;
    }
    for i in 0..doms {
        for j in i + 1..doms {
            if !joined[i as usize][j as usize] && uniform01(&mut b.rng) < p.p_interdomain {
                joined[i as usize][j as usize] = true;
            }
        }
    }
    for i in 0..doms {
        for j in i + 1..doms {
            if joined[i as usize][j as usize] || joined[j as usize][i as usize] {
                let (ra, rb) = (i * nt + b.below(nt), j * nt + b.below(nt));
                b.edge(ra, rb, p.transit_capacity_bps);
            }
        }
    }
    let mut next = transit;
    let mut access = Vec::new();
    for t in 0..transit {
        for _ in 0..p.stubs_per_transit_router {
            let nodes: Vec<u32> = (next..next + p.routers_per_stub).collect();
            next += p.routers_per_stub;
            b.domain(&nodes, p.p_stub, p.stub_capacity_bps);
            let gateway = nodes[b.below(nodes.len() as u32) as usize];
            b.edge(t, gateway, p.transit_stub_capacity_bps);
            access.extend_from_slice(&nodes);
        }
    }
    // Keep the RNG stream independent of later additions (nothing else draws from it).
    let _ = b.rng.next_u32();
    Ok(Graph {
        routers: next,
        edges: b.edges,
        access_routers: access,
        hosts_per_access_router: p.hosts_per_stub_router,
        host_capacity: p.host_capacity_bps,
        host_delay: Dur::from_secs_f64(p.host_delay_s),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn connected(net: &Graph) -> bool {
        let adj = net.adjacency();
        let mut seen = vec![false; net.routers as usize];
        let mut stack = vec![0u32];
        seen[0] = true;
        while let Some(u) = stack.pop() {
            for &(v, _) in &adj[u as usize] {
                if !seen[v as usize] {
                    seen[v as usize] = true;
                    stack.push(v);
                }
            }
        }
        seen.iter().all(|&s| s)
    }

    #[test]
    fn medium_has_1100_routers_connected_and_is_deterministic() {
        let p = TransitStubParams::medium();
        assert_eq!(p.routers(), 1100);
        let a = transit_stub(&p, 7).unwrap();
        assert_eq!(a.routers, 1100);
        assert_eq!(a.access_routers.len(), 1080);
        assert_eq!(a.hosts(), 216_000);
        assert!(connected(&a));
        let b = transit_stub(&p, 7).unwrap();
        assert_eq!(a.edges, b.edges);
        let c = transit_stub(&p, 8).unwrap();
        assert_ne!(a.edges, c.edges);
        for e in &a.edges {
            assert!(e.delay >= Dur::from_ms(1) && e.delay <= Dur::from_ms(10));
            let transit = |r: u32| r < 20;
            let want = if transit(e.a) && transit(e.b) { 5e9 } else { 1e9 };
            assert_eq!(e.capacity, want);
        }
    }

    #[test]
    fn large_has_11000_routers() {
        let p = TransitStubParams::large();
        assert_eq!(p.routers(), 11_000);
        let n = transit_stub(&p, 1).unwrap();
        assert_eq!(n.routers, 11_000);
        assert!(connected(&n));
    }

    #[test]
    fn bad_probability_is_named() {
        let p = TransitStubParams { p_stub: 1.5, ..TransitStubParams::medium() };
        assert!(transit_stub(&p, 1).unwrap_err().contains("p_stub"));
    }
}
