//! Shortest paths for many sessions: one Dijkstra per *source router* (not per session), by hop
//! count then propagation delay then link order, so a session's route is the same whichever
//! sessions share its router. Trees are dropped as soon as their sessions' paths are written.

use super::graph::{Graph, LinkTable};

/// Paths of all sessions, in one arena.
#[derive(Clone, Debug, Default)]
pub struct Paths {
    pub links: Vec<u32>,
    /// Session `s`'s path is `links[start[s] .. start[s + 1]]`.
    pub start: Vec<u32>,
}

impl Paths {
    pub fn path(&self, s: usize) -> &[u32] {
        &self.links[self.start[s] as usize..self.start[s + 1] as usize]
    }
    pub fn len(&self) -> usize {
        self.start.len().saturating_sub(1)
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Why a route could not be found.
#[derive(Clone, Debug, PartialEq)]
pub enum RouteError {
    Unreachable { session: usize, from: u32, to: u32 },
    TooLong { session: usize, hops: usize, max: usize },
}

impl std::fmt::Display for RouteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RouteError::Unreachable { session, from, to } => {
                write!(f, "session {session}: router {to} is unreachable from router {from}")
            }
            RouteError::TooLong { session, hops, max } => {
                write!(f, "session {session}: path of {hops} links, at most {max} supported")
            }
        }
    }
}

/// Shortest-path tree from `root`: per router, the directed link it is reached by.
///
/// The order is (hops, delay, link id), so the tree is built level by level (a breadth-first
/// search) with no heap: every router at `h + 1` hops takes the best `(delay, link)` over its
/// neighbours at `h` hops, whose delays are final once level `h` is done. This is exactly the
/// minimum a Dijkstra over `(hops, delay, link)` finds (`tests::same_tree_as_dijkstra`), at a
/// fraction of the cost on the Large network (10,800 trees of 11,000 routers).
fn tree(adj: &[Vec<(u32, u32)>], delay_ns: &[u64], root: u32) -> Vec<u32> {
    let n = adj.len();
    let mut hops = vec![u32::MAX; n];
    let mut best = vec![(u64::MAX, u32::MAX); n]; // (delay, via link)
    hops[root as usize] = 0;
    best[root as usize] = (0, u32::MAX);
    let (mut level, mut next) = (vec![root], Vec::new());
    let mut h = 0;
    while !level.is_empty() {
        for &u in &level {
            let d = best[u as usize].0;
            for &(v, l) in &adj[u as usize] {
                let v = v as usize;
                if hops[v] == u32::MAX {
                    hops[v] = h + 1;
                    next.push(v as u32);
                }
                if hops[v] == h + 1 {
                    let cand = (d + delay_ns[l as usize], l);
                    if cand < best[v] {
                        best[v] = cand;
                    }
                }
            }
        }
        level.clear();
        std::mem::swap(&mut level, &mut next);
        h += 1;
    }
    best.into_iter().map(|(_, via)| via).collect()
}

/// Paths host `src[s]` -> host `dst[s]` for every session: uplink, routers' links, downlink.
pub fn session_paths(
    net: &Graph,
    links: &mut LinkTable,
    src: &[u32],
    dst: &[u32],
    max_hops: usize,
) -> Result<Paths, RouteError> {
    let adj = net.adjacency();
    let delay_ns: Vec<u64> = links.delay.iter().map(|d| d.as_ns()).collect();
    let edge_from: Vec<u32> = net.edges.iter().flat_map(|e| [e.a, e.b]).collect();
    // Sessions grouped by source router; host links created in session order (deterministic).
    let mut by_router: Vec<(u32, u32)> = Vec::with_capacity(src.len());
    let mut ends = Vec::with_capacity(src.len());
    for s in 0..src.len() {
        ends.push((links.host_links(net, src[s]).0, links.host_links(net, dst[s]).1));
        by_router.push((net.router_of_host(src[s]), s as u32));
    }
    by_router.sort_unstable();
    let mut per_session: Vec<Vec<u32>> = vec![Vec::new(); src.len()];
    let mut i = 0;
    while i < by_router.len() {
        let root = by_router[i].0;
        let t = tree(&adj, &delay_ns, root);
        while i < by_router.len() && by_router[i].0 == root {
            let s = by_router[i].1 as usize;
            let to = net.router_of_host(dst[s]);
            let mut rev = vec![ends[s].1];
            let mut at = to;
            while at != root {
                let l = t[at as usize];
                if l == u32::MAX {
                    return Err(RouteError::Unreachable { session: s, from: root, to });
                }
                rev.push(l);
                at = edge_from[l as usize];
            }
            rev.push(ends[s].0);
            rev.reverse();
            if rev.len() > max_hops {
                return Err(RouteError::TooLong { session: s, hops: rev.len(), max: max_hops });
            }
            per_session[s] = rev;
            i += 1;
        }
    }
    let mut paths = Paths { links: Vec::new(), start: vec![0] };
    for p in per_session {
        paths.links.extend_from_slice(&p);
        paths.start.push(paths.links.len() as u32);
    }
    Ok(paths)
}

#[cfg(test)]
mod tests {
    use super::super::graph::Edge;
    use super::*;
    use xcc_core::Dur;

    /// Dijkstra over (hops, delay, link id): the definition the level-by-level tree must meet.
    fn dijkstra(adj: &[Vec<(u32, u32)>], delay_ns: &[u64], root: u32) -> Vec<u32> {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        let mut best = vec![(u32::MAX, u64::MAX, u32::MAX); adj.len()];
        let mut heap = BinaryHeap::new();
        best[root as usize] = (0, 0, u32::MAX);
        heap.push(Reverse((0u32, 0u64, u32::MAX, root)));
        while let Some(Reverse((h, d, via, u))) = heap.pop() {
            if (h, d, via) != best[u as usize] {
                continue;
            }
            for &(v, l) in &adj[u as usize] {
                let cand = (h + 1, d + delay_ns[l as usize], l);
                if cand < best[v as usize] {
                    best[v as usize] = cand;
                    heap.push(Reverse((cand.0, cand.1, cand.2, v)));
                }
            }
        }
        best.into_iter().map(|(_, _, via)| via).collect()
    }

    /// On the Medium network (random delays, so ties in hops are broken by delay), every
    /// 10th router's tree is Dijkstra's.
    #[test]
    fn same_tree_as_dijkstra() {
        use crate::sessions::transit_stub::{transit_stub, TransitStubParams};
        let net = transit_stub(&TransitStubParams::medium(), 4).unwrap();
        let links = LinkTable::new(&net);
        let adj = net.adjacency();
        let delay_ns: Vec<u64> = links.delay.iter().map(|d| d.as_ns()).collect();
        for root in (0..net.routers).step_by(10) {
            assert_eq!(tree(&adj, &delay_ns, root), dijkstra(&adj, &delay_ns, root), "root {root}");
        }
    }

    /// A line 0-1-2 plus a slow shortcut 0-2: the shortcut has fewer hops and wins.
    #[test]
    fn fewest_hops_then_delay() {
        let e = |a, b, ms| Edge { a, b, capacity: 1e9, delay: Dur::from_ms(ms) };
        let net = Graph {
            routers: 3,
            edges: vec![e(0, 1, 1), e(1, 2, 1), e(0, 2, 50)],
            access_routers: vec![0, 2],
            hosts_per_access_router: 2,
            host_capacity: 1e8,
            host_delay: Dur::from_us(1),
        };
        let mut links = LinkTable::new(&net);
        let p = session_paths(&net, &mut links, &[0, 2, 1], &[3, 1, 0], 128).unwrap();
        // Host links: host 0 -> 6/7, host 3 -> 8/9, host 2 -> 10/11, host 1 -> 12/13.
        assert_eq!(p.path(0), &[6, 4, 9]); // 0 -> 2 over the shortcut (edge 2, id 4)
        assert_eq!(p.path(1), &[10, 5, 13]); // 2 -> 0 back over it (id 5)
        assert_eq!(p.path(2), &[12, 7]); // same router: uplink, downlink
        assert_eq!(links.hosts_in_use(), 4);
        assert_eq!(links.reverse[4], 5);
    }
}
