//! Nodes, directed links and routes. Routing is per flow: a route is a slice of link ids kept in
//! one arena, computed once when the flow is created, so there are no per-node routing tables
//! (an 11,000-router topology needs no all-pairs state).

use std::collections::{BinaryHeap, HashMap};

use crate::scenario::model::{NodeKind, Scenario};

/// A route: `len` link ids starting at `start` in [`Routes::links`].
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Route {
    pub start: u32,
    pub len: u32,
}

/// Adjacency in compressed form (CSR) plus what routing needs of each link.
pub struct Topology {
    out_start: Vec<u32>,
    out_links: Vec<u32>,
    link_to: Vec<u32>,
    link_delay_ns: Vec<u64>,
    is_host: Vec<bool>,
    /// Shortest-path trees by source node (parent link of each node), reused across flows.
    trees: HashMap<u32, Vec<u32>>,
    /// ECMP: each node's (hops, delay) to a destination, by destination, reused across flows.
    to_dst: HashMap<u32, Vec<(u64, u64)>>,
}

const NONE: u32 = u32::MAX;
/// Node entries the cached trees may hold in all (32 Mi entries = 128 MiB): many trees for a
/// small topology, a few for a transit-stub one with millions of hosts.
const TREE_CACHE_ENTRIES: usize = 32 << 20;

impl Topology {
    pub fn new(s: &Scenario) -> Topology {
        let n = s.nodes.len();
        let mut degree = vec![0u32; n + 1];
        for l in &s.links {
            degree[l.from as usize + 1] += 1;
        }
        for i in 0..n {
            degree[i + 1] += degree[i];
        }
        let mut fill = degree.clone();
        let mut out_links = vec![0u32; s.links.len()];
        for (id, l) in s.links.iter().enumerate() {
            out_links[fill[l.from as usize] as usize] = id as u32;
            fill[l.from as usize] += 1;
        }
        Topology {
            out_start: degree,
            out_links,
            link_to: s.links.iter().map(|l| l.to).collect(),
            link_delay_ns: s.links.iter().map(|l| l.delay_ns).collect(),
            is_host: s.nodes.iter().map(|n| n.kind == NodeKind::Host).collect(),
            trees: HashMap::new(),
            to_dst: HashMap::new(),
        }
    }

    fn out(&self, node: u32) -> &[u32] {
        &self.out_links[self.out_start[node as usize] as usize..self.out_start[node as usize + 1] as usize]
    }

    /// Dijkstra from `src` ordered by (hops, propagation delay, link id): fewest hops first,
    /// ties broken by lower delay, then deterministically. Hosts other than `src` are leaves:
    /// traffic is never routed through a host.
    fn tree(&self, src: u32) -> Vec<u32> {
        let n = self.is_host.len();
        let mut best = vec![(u64::MAX, u64::MAX); n];
        let mut parent = vec![NONE; n];
        let mut heap = BinaryHeap::new();
        best[src as usize] = (0, 0);
        heap.push(std::cmp::Reverse((0u64, 0u64, src)));
        while let Some(std::cmp::Reverse((h, d, u))) = heap.pop() {
            if (h, d) > best[u as usize] {
                continue;
            }
            for &l in self.out(u) {
                let v = self.link_to[l as usize];
                let cand = (h + 1, d + self.link_delay_ns[l as usize]);
                if cand < best[v as usize] {
                    best[v as usize] = cand;
                    parent[v as usize] = l;
                    // A host is a leaf: record how to reach it, never expand it.
                    if !self.is_host[v as usize] {
                        heap.push(std::cmp::Reverse((cand.0, cand.1, v)));
                    }
                }
            }
        }
        parent
    }

    /// Shortest route from `src` to `dst` as link ids, or `None` if they are not connected.
    ///
    /// A host with a single link to a router routes through that router's tree: hosts are never
    /// crossed, so its tree is that link followed by the router's, with the same tie-breaks
    /// (every key shifted by the same hop and delay). The hosts of a dumbbell share one tree
    /// instead of building one each (100,000 flows: 120 s of Dijkstra otherwise).
    pub fn shortest(&mut self, src: u32, dst: u32, link_from: impl Fn(u32) -> u32) -> Option<Vec<u32>> {
        if src == dst {
            return Some(Vec::new());
        }
        let (root, first) = match *self.out(src) {
            [l] if self.is_host[src as usize] && !self.is_host[self.link_to[l as usize] as usize] => {
                (self.link_to[l as usize], Some(l))
            }
            _ => (src, None),
        };
        if !self.trees.contains_key(&root) {
            if (self.trees.len() + 1) * self.is_host.len() > TREE_CACHE_ENTRIES {
                self.trees.clear();
            }
            let t = self.tree(root);
            self.trees.insert(root, t);
        }
        let parent = &self.trees[&root];
        let mut path = Vec::new();
        let mut v = dst;
        while v != root {
            let l = parent[v as usize];
            if l == NONE {
                return None;
            }
            path.push(l);
            v = link_from(l);
        }
        path.extend(first);
        path.reverse();
        Some(path)
    }

    /// Each node's distance to `dst`, ordered as [`Topology::tree`] orders paths (hops, then
    /// propagation delay), over the duplex partners of the links (link `l ^ 1` runs against
    /// `l`); `u64::MAX` where `dst` cannot be reached. Hosts other than `dst` are leaves.
    fn distances_to(&self, dst: u32) -> Vec<(u64, u64)> {
        let n = self.is_host.len();
        let mut best = vec![(u64::MAX, u64::MAX); n];
        let mut heap = BinaryHeap::new();
        best[dst as usize] = (0, 0);
        heap.push(std::cmp::Reverse((0u64, 0u64, dst)));
        while let Some(std::cmp::Reverse((h, d, v))) = heap.pop() {
            if (h, d) > best[v as usize] {
                continue;
            }
            // Every link into v is the partner of a link out of v.
            for &back in self.out(v) {
                let u = self.link_to[back as usize];
                let into = back ^ 1;
                let cand = (h + 1, d + self.link_delay_ns[into as usize]);
                if cand < best[u as usize] {
                    best[u as usize] = cand;
                    if !self.is_host[u as usize] {
                        heap.push(std::cmp::Reverse((cand.0, cand.1, u)));
                    }
                }
            }
        }
        best
    }

    /// An equal-cost multi-path route from `src` to `dst`, or `None` if they are not connected.
    ///
    /// At every node the packet may take any link that starts a shortest path (fewest hops,
    /// then least propagation delay, as [`Topology::shortest`]); the flow takes the one that
    /// the hash of (`seed`, `flow_key`, node) picks, as a switch hashes a flow's 5-tuple with
    /// its own seed (the HPCC artifact's switches hash the 5-tuple with their node id). A
    /// flow's key stands in for its 5-tuple: every flow has its own ports, so hashing its id
    /// is hashing its 5-tuple. Deterministic: the same seed and key give the same route; the
    /// ACKs take the reverse of it. Needs duplex links (`2k`, `2k+1`), which every scenario has.
    pub fn ecmp(&mut self, src: u32, dst: u32, seed: u64, flow_key: u64) -> Option<Vec<u32>> {
        if src == dst {
            return Some(Vec::new());
        }
        if !self.to_dst.contains_key(&dst) {
            if (self.to_dst.len() + 1) * self.is_host.len() > TREE_CACHE_ENTRIES / 2 {
                self.to_dst.clear();
            }
            let d = self.distances_to(dst);
            self.to_dst.insert(dst, d);
        }
        let dist = &self.to_dst[&dst];
        if dist[src as usize].0 == u64::MAX {
            return None;
        }
        let mut path = Vec::with_capacity(dist[src as usize].0 as usize);
        let mut u = src;
        let mut next: Vec<u32> = Vec::new();
        while u != dst {
            next.clear();
            let (h, d) = dist[u as usize];
            for &l in self.out(u) {
                let v = self.link_to[l as usize];
                let (hv, dv) = dist[v as usize];
                if hv != u64::MAX && (hv + 1, dv + self.link_delay_ns[l as usize]) == (h, d) {
                    // Only dst may be a host on the way: hosts are leaves.
                    if v == dst || !self.is_host[v as usize] {
                        next.push(l);
                    }
                }
            }
            let l = match next.len() {
                0 => return None,
                1 => next[0],
                k => next[(ecmp_hash(seed, flow_key, u) % k as u64) as usize],
            };
            path.push(l);
            u = self.link_to[l as usize];
        }
        Some(path)
    }

    /// The links along an explicit node sequence; `Err(k)` if nodes `k` and `k+1` are not joined.
    pub fn explicit(&self, nodes: &[u32]) -> Result<Vec<u32>, usize> {
        nodes
            .windows(2)
            .enumerate()
            .map(|(k, w)| self.out(w[0]).iter().copied().find(|&l| self.link_to[l as usize] == w[1]).ok_or(k))
            .collect()
    }
}

/// The ECMP hash of a flow at a node: SplitMix64's finaliser over the three, so neighbouring
/// keys and nodes give unrelated choices.
fn ecmp_hash(seed: u64, flow_key: u64, node: u32) -> u64 {
    let mut z = seed ^ flow_key.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (node as u64).wrapping_mul(0xD1B5_4A32_D192_ED03);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Arena of all routes' link ids. Each route is followed by [`Routes::END`], so that a packet
/// can find the link after its current one from its position in the arena alone.
#[derive(Default)]
pub struct Routes {
    pub links: Vec<u32>,
}

impl Routes {
    /// What follows a route's last link in [`Routes::links`].
    pub const END: u32 = u32::MAX;

    pub fn add(&mut self, links: &[u32]) -> Route {
        let r = Route { start: self.links.len() as u32, len: links.len() as u32 };
        self.links.extend_from_slice(links);
        self.links.push(Self::END);
        r
    }

    /// The reverse of a route over duplex links (`a->b` is link `2k`, `b->a` is `2k+1`).
    pub fn add_reverse(&mut self, r: Route) -> Route {
        let start = self.links.len() as u32;
        for k in (r.start..r.start + r.len).rev() {
            let l = self.links[k as usize];
            self.links.push(l ^ 1);
        }
        self.links.push(Self::END);
        Route { start, len: r.len }
    }

    #[inline]
    pub fn hop(&self, r: Route, k: u32) -> u32 {
        self.links[(r.start + k) as usize]
    }

    /// The link id at arena position `pos`, or [`Routes::END`] past a route's last link.
    #[inline(always)]
    pub fn at(&self, pos: u32) -> u32 {
        self.links[pos as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A topology from directed links `(from, to, delay)`.
    fn topology(is_host: Vec<bool>, links: &[(u32, u32, u64)]) -> Topology {
        let n = is_host.len();
        let mut out_start = vec![0u32; n + 1];
        for &(a, _, _) in links {
            out_start[a as usize + 1] += 1;
        }
        for i in 0..n {
            out_start[i + 1] += out_start[i];
        }
        let mut fill = out_start.clone();
        let mut out_links = vec![0u32; links.len()];
        for (id, &(a, _, _)) in links.iter().enumerate() {
            out_links[fill[a as usize] as usize] = id as u32;
            fill[a as usize] += 1;
        }
        Topology {
            out_start,
            out_links,
            link_to: links.iter().map(|l| l.1).collect(),
            link_delay_ns: links.iter().map(|l| l.2).collect(),
            is_host,
            trees: HashMap::new(),
            to_dst: HashMap::new(),
        }
    }

    /// Sharing a router's tree among its single-homed hosts gives every route a tree from the
    /// flow's own source gives, ties included (random graphs, equal delays on purpose).
    #[test]
    fn shared_router_trees_give_the_routes_of_per_source_trees() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |m: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % m
        };
        for _ in 0..200 {
            let routers = 2 + next(6) as u32;
            let hosts = 2 + next(7) as u32;
            let mut links = Vec::new();
            let duplex = |a: u32, b: u32, d: u64, links: &mut Vec<(u32, u32, u64)>| {
                links.push((a, b, d));
                links.push((b, a, d));
            };
            for r in 1..routers {
                let d = [1, 1, 2, 5][next(4) as usize];
                duplex(next(r as u64) as u32, r, d, &mut links);
            }
            for _ in 0..next(routers as u64 + 1) {
                let (a, b) = (next(routers as u64) as u32, next(routers as u64) as u32);
                if a != b {
                    duplex(a, b, [1, 1, 2, 5][next(4) as usize], &mut links);
                }
            }
            for h in routers..routers + hosts {
                for k in 0..1 + (next(4) == 0) as u32 {
                    let r = (next(routers as u64) as u32 + k) % routers;
                    duplex(h, r, next(2), &mut links);
                }
            }
            let is_host: Vec<bool> = (0..routers + hosts).map(|i| i >= routers).collect();
            let from: Vec<u32> = links.iter().map(|l| l.0).collect();
            let mut shared = topology(is_host.clone(), &links);
            let full = topology(is_host, &links);
            for src in routers..routers + hosts {
                let parent = full.tree(src);
                for dst in routers..routers + hosts {
                    let want = (src != dst).then(|| {
                        let mut path = Vec::new();
                        let mut v = dst;
                        while v != src {
                            path.push(parent[v as usize]);
                            v = from[parent[v as usize] as usize];
                        }
                        path.reverse();
                        path
                    });
                    let got = shared.shortest(src, dst, |l| from[l as usize]);
                    assert_eq!(got, Some(want.unwrap_or_default()), "{src} -> {dst} in {links:?}");
                }
            }
        }
    }
}
