//! The network cut into domains for the parallel engine (`parallel.rs`): a function of the
//! scenario only, never of the thread count, so that every `--threads N` runs the same domains
//! in the same windows and gives the same bytes.
//!
//! Rules (ns-3's MPI mode cuts at point-to-point links the same way; Unison, EuroSys 2024, cuts
//! finer and balances by load):
//! - a link is cut only between two routers and only if its propagation delay is at least
//!   [`CUT_MIN_DELAY_NS`]: a host stays with its access router, and a short link would give a
//!   lookahead too small to amortise a window's synchronisation;
//! - the pieces left when every cuttable link is removed are taken in order of their first
//!   node and dealt into at most [`MAX_DOMAINS`] contiguous runs of about equal weight: a
//!   piece weighs its nodes plus, per link leaving it, one plus the number of flow routes
//!   over the link (a proxy for its events: a transit router carries many routes, a stub
//!   router few). Generated topologies number a stub domain's routers together, so contiguous
//!   runs keep stubs whole and cut few links;
//! - networks of fewer than [`MIN_ROUTERS`] routers, and scenarios whose state does not split
//!   by node yet (open-loop `[[arrivals]]`, `[[transactions]]`, `[sessions]` error sampling)
//!   or that couple a link to its far end without delay (`[pfc]`'s pause frames), are one
//!   domain: the serial engine, unchanged.
//!
//! The lookahead is the smallest delay of a link joining two domains: a packet that starts its
//! transmission on such a link before a window's end cannot reach the far end before the next
//! window's end, so domains exchange packets only at window boundaries.

use crate::network::Network;
use crate::scenario::model::{NodeKind, Scenario};
use xcc_core::Dur;

/// Shortest link the partition cuts (1 ms is the transit-stub generator's smallest router
/// link; 100 us leaves room for datacenter-like fabrics of slower links).
pub const CUT_MIN_DELAY_NS: u64 = 100_000;
/// Networks smaller than this are not worth cutting (a dumbbell, a parking lot).
pub const MIN_ROUTERS: usize = 64;
/// At most this many domains. Each domain holds a full-size copy of the simulation's tables
/// (links, flows; see docs/architecture.md, "The parallel engine"), so the count stays small
/// until that state is split by domain.
pub const MAX_DOMAINS: usize = 4;

/// Which domain owns each node and link, and the window length.
#[derive(Clone, Debug)]
pub struct Partition {
    pub domains: usize,
    /// Per node: its domain.
    pub node_domain: Vec<u32>,
    /// Per link: the domain of the node it leaves (its queue is there).
    pub link_owner: Vec<u32>,
    /// Per link: whether it joins two domains.
    pub cut: Vec<bool>,
    /// The smallest delay of a cut link (zero with one domain).
    pub lookahead: Dur,
    /// Links joining two domains.
    pub cut_links: usize,
}

fn find(parent: &mut [u32], mut x: u32) -> u32 {
    while parent[x as usize] != x {
        let p = parent[x as usize];
        parent[x as usize] = parent[p as usize];
        x = p;
    }
    x
}

impl Partition {
    /// Everything in one domain.
    pub fn single(s: &Scenario) -> Partition {
        Partition {
            domains: 1,
            node_domain: vec![0; s.nodes.len()],
            link_owner: vec![0; s.links.len()],
            cut: vec![false; s.links.len()],
            lookahead: Dur::ZERO,
            cut_links: 0,
        }
    }

    /// The partition of a built network (its `[sessions]` expanded, its routes made).
    pub fn of(network: &Network) -> Partition {
        let s = &network.scenario;
        let routers = s.nodes.iter().filter(|n| n.kind == NodeKind::Router).count();
        let sampled = s.sessions.as_ref().is_some_and(|w| w.sample_interval_ns > 0);
        // PFC pauses a link from its far end at once: no lookahead across a cut.
        let single = !s.arrivals.is_empty() || !s.transactions.is_empty() || sampled || s.pfc.is_some();
        if routers < MIN_ROUTERS || single {
            return Partition::single(s);
        }
        let n = s.nodes.len();
        let mut parent: Vec<u32> = (0..n as u32).collect();
        let is_router = |x: u32| s.nodes[x as usize].kind == NodeKind::Router;
        for l in &s.links {
            let cuttable = l.delay_ns >= CUT_MIN_DELAY_NS && is_router(l.from) && is_router(l.to);
            if !cuttable {
                let (a, b) = (find(&mut parent, l.from), find(&mut parent, l.to));
                // The smaller root wins: a piece is named by its first node.
                let (lo, hi) = (a.min(b), a.max(b));
                parent[hi as usize] = lo;
            }
        }
        // Pieces in order of their first node, with their weight (nodes plus links leaving them).
        let mut weight = vec![0u64; n];
        let roots: Vec<u32> = (0..n as u32).map(|x| find(&mut parent, x)).collect();
        for &r in &roots {
            weight[r as usize] += 1;
        }
        let mut routes_over = vec![0u64; s.links.len()];
        for &(fwd, rev) in &network.flow_routes {
            for r in [fwd, rev] {
                for &l in network.path(r) {
                    routes_over[l as usize] += 1;
                }
            }
        }
        for (l, link) in s.links.iter().enumerate() {
            weight[roots[link.from as usize] as usize] += 1 + routes_over[l];
        }
        let pieces = (0..n).filter(|&x| roots[x] == x as u32).count();
        if pieces < 2 {
            return Partition::single(s);
        }
        let domains = MAX_DOMAINS.min(pieces);
        let total: u64 = weight.iter().sum();
        // Each piece goes to the run its midpoint falls in: contiguous, about equal runs.
        let mut piece_domain = vec![0u32; n];
        let mut before = 0u64;
        for x in 0..n {
            if roots[x] == x as u32 {
                let mid = before + weight[x] / 2;
                piece_domain[x] = ((mid as u128 * domains as u128 / total as u128) as usize).min(domains - 1) as u32;
                before += weight[x];
            }
        }
        let node_domain: Vec<u32> = roots.iter().map(|&r| piece_domain[r as usize]).collect();
        let link_owner: Vec<u32> = s.links.iter().map(|l| node_domain[l.from as usize]).collect();
        let cut: Vec<bool> =
            s.links.iter().map(|l| node_domain[l.from as usize] != node_domain[l.to as usize]).collect();
        let used = {
            let mut seen = vec![false; domains];
            node_domain.iter().for_each(|&d| seen[d as usize] = true);
            seen.iter().filter(|&&b| b).count()
        };
        let cut_links = cut.iter().filter(|&&c| c).count();
        if used < 2 || cut_links == 0 {
            return Partition::single(s);
        }
        let lookahead =
            s.links.iter().zip(&cut).filter(|(_, &c)| c).map(|(l, _)| l.delay_ns).min().expect("a cut link");
        Partition { domains, node_domain, link_owner, cut, lookahead: Dur(lookahead), cut_links }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{resolve, Format};

    /// A chain of `routers` routers (links of `delay`), each with one host on a 1 us link.
    fn chain(routers: usize, delay: &str) -> Network {
        let mut t = String::from("name = \"c\"\nduration = \"1s\"\n");
        for i in 0..routers {
            t += &format!("[[router]]\nname = \"r{i}\"\n[[host]]\nname = \"h{i}\"\n");
            t += &format!(
                "[[link]]\nbetween = [\"h{i}\", \"r{i}\"]\nrate = \"1Gbps\"\ndelay = \"1us\"\nbuffer = \"100pkt\"\n"
            );
            if i > 0 {
                t += &format!("[[link]]\nbetween = [\"r{}\", \"r{i}\"]\nrate = \"1Gbps\"\ndelay = \"{delay}\"\nbuffer = \"100pkt\"\n", i - 1);
            }
        }
        Network::build(resolve(&t, "c.toml", Format::Toml).unwrap()).unwrap()
    }

    /// A chain of 64 routers (no flows) cuts into four runs of 16 routers with their hosts;
    /// the cut links are the three router links between runs, the lookahead their delay.
    #[test]
    fn a_long_chain_cuts_into_contiguous_runs() {
        let n = chain(64, "2ms");
        let (p, s) = (Partition::of(&n), &n.scenario);
        assert_eq!(p.domains, 4);
        assert_eq!(p.cut_links, 6, "three duplex links");
        assert_eq!(p.lookahead, Dur::from_ms(2));
        let d = |name: &str| p.node_domain[s.nodes.iter().position(|n| n.name == name).unwrap()];
        assert_eq!((d("r0"), d("r15"), d("r16"), d("r63")), (0, 0, 1, 3));
        assert_eq!(d("h17"), d("r17"), "a host stays with its router");
        for (l, link) in s.links.iter().enumerate() {
            assert_eq!(p.link_owner[l], p.node_domain[link.from as usize]);
        }
    }

    /// Short router links are never cut; small networks are one domain.
    #[test]
    fn short_links_and_small_networks_stay_whole() {
        assert_eq!(Partition::of(&chain(64, "50us")).domains, 1);
        assert_eq!(Partition::of(&chain(20, "2ms")).domains, 1);
    }
}

#[cfg(test)]
mod weight_tests {
    use super::*;
    use crate::scenario::{resolve, Format};

    /// Routes weigh: with every flow between the first eight routers' hosts, three domains
    /// share those eight routers and the fourth holds the idle rest.
    #[test]
    fn busy_pieces_get_smaller_domains() {
        let mut t = String::from("name = \"c\"\nduration = \"1s\"\n");
        for i in 0..64 {
            t += &format!("[[router]]\nname = \"r{i}\"\n[[host]]\nname = \"h{i}\"\n");
            t += &format!(
                "[[link]]\nbetween = [\"h{i}\", \"r{i}\"]\nrate = \"1Gbps\"\ndelay = \"1us\"\nbuffer = \"100pkt\"\n"
            );
            if i > 0 {
                t += &format!(
                    "[[link]]\nbetween = [\"r{}\", \"r{i}\"]\nrate = \"1Gbps\"\ndelay = \"1ms\"\nbuffer = \"100pkt\"\n",
                    i - 1
                );
            }
        }
        for k in 0..200 {
            t += &format!("[[flow]]\nname = \"f{k}\"\nsrc = \"h{}\"\ndst = \"h{}\"\n", k % 4, 4 + k % 4);
        }
        let n = Network::build(resolve(&t, "c.toml", Format::Toml).unwrap()).unwrap();
        let p = Partition::of(&n);
        let d = |name: &str| p.node_domain[n.scenario.nodes.iter().position(|x| x.name == name).unwrap()];
        assert_eq!(p.domains, 4);
        assert_eq!(d("r9"), 3, "the busy first routers hold most of the weight");
        assert_eq!(d("r63"), 3);
    }
}
