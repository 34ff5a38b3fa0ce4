//! Datacenter topologies as a `[fabric]` table: a three-tier fat-tree (the k-ary one of Al-Fares
//! et al., or the shape the HPCC paper ran) and a two-tier leaf-spine with an oversubscription
//! ratio. The generator gives node names and duplex links by tier; the resolver
//! (`scenario/resolve.rs`) turns them into the scenario's nodes and links before any flow is
//! read, so `[[flow]]` entries may name the fabric's hosts (`h0`, `h1`, ...).
//!
//! Names: hosts `h{i}`, then `tor{i}`, `agg{i}`, `core{i}` (fat-tree) or `leaf{i}`, `spine{i}`
//! (leaf-spine), numbered from 0 in the order below. Links, in this order: every host to its
//! top-of-rack switch (host `i` under ToR `i / hosts_per_tor`), then ToR to aggregation (every
//! ToR of a pod to every aggregation switch of that pod), then aggregation to core (aggregation
//! switch `j` of every pod to cores `j·c .. (j+1)·c`, `c = cores / aggs_per_pod`); for a
//! leaf-spine, hosts to leaves, then every leaf to every spine.
//!
//! The HPCC paper's network (Li et al., SIGCOMM 2019, section 5.1) is the authors'
//! `simulation/mix/fat.txt` (github.com/alibaba-edu/High-Precision-Congestion-Control, commit
//! 9950bbbf): 376 nodes, 56 switches, 480 links; 320 hosts at 100 Gbit/s under 20 ToRs (16
//! each); 5 pods of 4 ToRs and 4 aggregation switches, every ToR joined to the 4 of its pod;
//! 16 cores, aggregation switch `j` of each pod joined to cores `4j..4j+3`; switch links at
//! 400 Gbit/s; every link 1 us. So a ToR has 16 x 100 = 1,600 Gbit/s down and 4 x 400 up,
//! an aggregation switch 4 x 400 each way: no oversubscription (1:1) at either tier. Here:
//! `fat_tree = { pods = 5, tors_per_pod = 4, aggs_per_pod = 4, hosts_per_tor = 16, cores = 16 }`
//! with `host_rate = "100Gbps"`, `fabric_rate = "400Gbps"`, `delay = "1us"`
//! (`benchmarks/fattree-websearch-50.scale.toml`). Not modelled: the paper's 32 MB switch buffer is
//! shared among a switch's ports; here each port has its own `buffer`.

use serde::{Deserialize, Serialize};

/// `[fabric] topology`: which datacenter network.
#[derive(Deserialize, Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum FabricTopology {
    /// A three-tier fat-tree: `k` alone (the k-ary fat-tree: k pods of k/2 ToRs and k/2
    /// aggregation switches, k/2 hosts per ToR, (k/2)^2 cores), or every other field.
    FatTree(FatTreeSpec),
    /// A two-tier leaf-spine: every leaf joined to every spine.
    LeafSpine(LeafSpineSpec),
}

/// `fat_tree = { ... }`.
#[derive(Deserialize, Serialize, Clone, Debug, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct FatTreeSpec {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub k: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pods: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tors_per_pod: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aggs_per_pod: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hosts_per_tor: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cores: Option<u32>,
}

/// `leaf_spine = { ... }`. The spine links' rate is the fabric's `fabric_rate`, or, with
/// `oversubscription` instead, `hosts_per_leaf · host_rate / (spines · oversubscription)`.
#[derive(Deserialize, Serialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LeafSpineSpec {
    pub leaves: u32,
    pub spines: u32,
    pub hosts_per_leaf: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oversubscription: Option<f64>,
}

/// The switch tiers a link joins (for tables and tests).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// Host to its ToR or leaf.
    Host,
    /// ToR to aggregation, or leaf to spine.
    Edge,
    /// Aggregation to core.
    Core,
}

/// A generated fabric: node names (hosts first, then switches by tier) and duplex links
/// `(a, b, tier)` by node index.
#[derive(Clone, Debug, PartialEq)]
pub struct FabricGraph {
    pub hosts: u32,
    /// Switch names, in order, after the hosts.
    pub switches: Vec<String>,
    pub links: Vec<(u32, u32, Tier)>,
}

/// The most hosts a fabric may have (a k = 64 fat-tree has 65,536).
pub const MAX_HOSTS: u64 = 1 << 20;

/// The fat-tree's shape with every field filled in: (pods, tors_per_pod, aggs_per_pod,
/// hosts_per_tor, cores). Errors name the field (relative to `fat_tree`).
pub fn fat_tree_shape(s: &FatTreeSpec) -> Result<[u32; 5], (String, String)> {
    let explicit = [
        ("pods", s.pods),
        ("tors_per_pod", s.tors_per_pod),
        ("aggs_per_pod", s.aggs_per_pod),
        ("hosts_per_tor", s.hosts_per_tor),
        ("cores", s.cores),
    ];
    let shape = match s.k {
        Some(k) => {
            if let Some((name, _)) = explicit.iter().find(|(_, v)| v.is_some()) {
                return Err((
                    name.to_string(),
                    "give either k (a k-ary fat-tree) or the shape's fields, not both".into(),
                ));
            }
            if k < 2 || k % 2 != 0 {
                return Err(("k".into(), format!("{k}: expected an even number >= 2")));
            }
            let h = k / 2;
            [k, h, h, h, h * h]
        }
        None => {
            let mut shape = [0; 5];
            for (i, (name, v)) in explicit.iter().enumerate() {
                match v {
                    Some(v) if *v >= 1 => shape[i] = *v,
                    Some(_) => return Err((name.to_string(), "expected a whole number >= 1".into())),
                    None => {
                        return Err((
                            name.to_string(),
                            "missing: give k (a k-ary fat-tree) or all of pods, tors_per_pod, aggs_per_pod, \
                             hosts_per_tor and cores"
                                .into(),
                        ))
                    }
                }
            }
            if shape[4] % shape[2] != 0 {
                return Err((
                    "cores".into(),
                    format!(
                        "{} cores cannot be split evenly among {} aggregation switches per pod",
                        shape[4], shape[2]
                    ),
                ));
            }
            shape
        }
    };
    let hosts = shape[0] as u64 * shape[1] as u64 * shape[3] as u64;
    if hosts > MAX_HOSTS {
        return Err(("".into(), format!("{hosts} hosts: at most {MAX_HOSTS}")));
    }
    Ok(shape)
}

impl FabricTopology {
    /// The nodes and links. Errors are `(field relative to the topology's table, message)`.
    pub fn graph(&self) -> Result<FabricGraph, (String, String)> {
        match self {
            FabricTopology::FatTree(s) => {
                let [pods, tors_pp, aggs_pp, hpt, cores] = fat_tree_shape(s)?;
                let tors = pods * tors_pp;
                let aggs = pods * aggs_pp;
                let hosts = tors * hpt;
                let tor = |t: u32| hosts + t;
                let agg = |a: u32| hosts + tors + a;
                let core = |c: u32| hosts + tors + aggs + c;
                let mut switches: Vec<String> = (0..tors).map(|t| format!("tor{t}")).collect();
                switches.extend((0..aggs).map(|a| format!("agg{a}")));
                switches.extend((0..cores).map(|c| format!("core{c}")));
                let mut links: Vec<(u32, u32, Tier)> = (0..hosts).map(|h| (h, tor(h / hpt), Tier::Host)).collect();
                for p in 0..pods {
                    for t in 0..tors_pp {
                        for a in 0..aggs_pp {
                            links.push((tor(p * tors_pp + t), agg(p * aggs_pp + a), Tier::Edge));
                        }
                    }
                }
                let per_agg = cores / aggs_pp;
                for p in 0..pods {
                    for a in 0..aggs_pp {
                        for c in 0..per_agg {
                            links.push((agg(p * aggs_pp + a), core(a * per_agg + c), Tier::Core));
                        }
                    }
                }
                Ok(FabricGraph { hosts, switches, links })
            }
            FabricTopology::LeafSpine(s) => {
                for (name, v) in [("leaves", s.leaves), ("spines", s.spines), ("hosts_per_leaf", s.hosts_per_leaf)] {
                    if v == 0 {
                        return Err((name.into(), "expected a whole number >= 1".into()));
                    }
                }
                let hosts = s.leaves as u64 * s.hosts_per_leaf as u64;
                if hosts > MAX_HOSTS {
                    return Err(("".into(), format!("{hosts} hosts: at most {MAX_HOSTS}")));
                }
                let hosts = hosts as u32;
                let leaf = |l: u32| hosts + l;
                let spine = |k: u32| hosts + s.leaves + k;
                let mut switches: Vec<String> = (0..s.leaves).map(|l| format!("leaf{l}")).collect();
                switches.extend((0..s.spines).map(|k| format!("spine{k}")));
                let mut links: Vec<(u32, u32, Tier)> =
                    (0..hosts).map(|h| (h, leaf(h / s.hosts_per_leaf), Tier::Host)).collect();
                for l in 0..s.leaves {
                    for k in 0..s.spines {
                        links.push((leaf(l), spine(k), Tier::Edge));
                    }
                }
                Ok(FabricGraph { hosts, switches, links })
            }
        }
    }

    /// The rate of the switch-to-switch links, bit/s: `fabric_rate` if given, else (leaf-spine
    /// with `oversubscription`) the rate that gives that ratio, else the host rate (1:1 for a
    /// k-ary fat-tree). Errors name the field relative to `fabric`.
    pub fn fabric_rate_bps(&self, host_rate_bps: u64, fabric_rate_bps: Option<u64>) -> Result<u64, (String, String)> {
        let over = match self {
            FabricTopology::LeafSpine(s) => s.oversubscription,
            FabricTopology::FatTree(_) => None,
        };
        match (over, fabric_rate_bps) {
            (Some(_), Some(_)) => Err((
                "topology.leaf_spine.oversubscription".into(),
                "give either oversubscription or fabric_rate: each sets the spine links' rate".into(),
            )),
            (Some(o), None) => {
                let FabricTopology::LeafSpine(s) = self else { unreachable!("only a leaf-spine has one") };
                if !(o.is_finite() && o > 0.0) {
                    return Err(("topology.leaf_spine.oversubscription".into(), format!("{o}: expected a ratio > 0")));
                }
                let bps = (s.hosts_per_leaf as f64 * host_rate_bps as f64 / (s.spines as f64 * o)).round();
                if bps < 1.0 || bps >= (1u64 << 62) as f64 {
                    return Err((
                        "topology.leaf_spine.oversubscription".into(),
                        format!("{o} gives spine links of {bps} bit/s: expected between 1 bit/s and 2^62"),
                    ));
                }
                Ok(bps as u64)
            }
            (None, Some(r)) => Ok(r),
            (None, None) => Ok(host_rate_bps),
        }
    }

    /// Downlink over uplink capacity at the first switch tier (ToR or leaf): 1 is no
    /// oversubscription.
    pub fn oversubscription(&self, host_rate_bps: u64, fabric_rate_bps: u64) -> f64 {
        let (down, up) = match self {
            FabricTopology::FatTree(s) => {
                let [_, _, aggs_pp, hpt, _] = fat_tree_shape(s).expect("checked when generated");
                (hpt, aggs_pp)
            }
            FabricTopology::LeafSpine(s) => (s.hosts_per_leaf, s.spines),
        };
        down as f64 * host_rate_bps as f64 / (up as f64 * fabric_rate_bps as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fat(s: FatTreeSpec) -> FabricGraph {
        FabricTopology::FatTree(s).graph().unwrap()
    }

    /// A k-ary fat-tree has k^3/4 hosts, 5k^2/4 switches and 3k^3/4 links (Al-Fares et al.,
    /// SIGCOMM 2008, section 3.3), every switch k ports.
    #[test]
    fn k_ary_fat_tree_counts() {
        for k in [2u32, 4, 8] {
            let g = fat(FatTreeSpec { k: Some(k), ..Default::default() });
            assert_eq!(g.hosts, k * k * k / 4);
            assert_eq!(g.switches.len() as u32, 5 * k * k / 4);
            assert_eq!(g.links.len() as u32, 3 * k * k * k / 4);
            let mut degree = vec![0u32; (g.hosts as usize) + g.switches.len()];
            for &(a, b, _) in &g.links {
                degree[a as usize] += 1;
                degree[b as usize] += 1;
            }
            assert!(degree[..g.hosts as usize].iter().all(|&d| d == 1));
            assert!(degree[g.hosts as usize..].iter().all(|&d| d == k), "k = {k}: {degree:?}");
        }
    }

    /// The HPCC paper's shape gives the authors' fat.txt: 320 hosts, 56 switches, 480 links,
    /// ToR 0 joined to aggregation switches 0-3, aggregation switch 1 to cores 4-7.
    #[test]
    fn hpcc_shape_matches_the_authors_topology_file() {
        let g = fat(FatTreeSpec {
            pods: Some(5),
            tors_per_pod: Some(4),
            aggs_per_pod: Some(4),
            hosts_per_tor: Some(16),
            cores: Some(16),
            k: None,
        });
        assert_eq!((g.hosts, g.switches.len(), g.links.len()), (320, 56, 480));
        let name = |n: u32| if n < 320 { format!("h{n}") } else { g.switches[(n - 320) as usize].clone() };
        let pairs: Vec<(String, String)> = g.links.iter().map(|&(a, b, _)| (name(a), name(b))).collect();
        assert_eq!(pairs[0], ("h0".into(), "tor0".into()));
        assert_eq!(pairs[319], ("h319".into(), "tor19".into()));
        assert_eq!(&pairs[320..324], &[0, 1, 2, 3].map(|a| ("tor0".to_string(), format!("agg{a}"))));
        assert_eq!(&pairs[404..408], &[4, 5, 6, 7].map(|c| ("agg1".to_string(), format!("core{c}"))));
        let t = FabricTopology::FatTree(FatTreeSpec {
            pods: Some(5),
            tors_per_pod: Some(4),
            aggs_per_pod: Some(4),
            hosts_per_tor: Some(16),
            cores: Some(16),
            k: None,
        });
        assert_eq!(t.oversubscription(100_000_000_000, 400_000_000_000), 1.0);
    }

    #[test]
    fn leaf_spine_rate_from_oversubscription() {
        let t = FabricTopology::LeafSpine(LeafSpineSpec {
            leaves: 4,
            spines: 2,
            hosts_per_leaf: 16,
            oversubscription: Some(2.0),
        });
        let g = t.graph().unwrap();
        assert_eq!((g.hosts, g.switches.len(), g.links.len()), (64, 6, 64 + 8));
        // 16 x 25 Gbit/s down, 2 spine links: 2:1 needs 100 Gbit/s each.
        let r = t.fabric_rate_bps(25_000_000_000, None).unwrap();
        assert_eq!(r, 100_000_000_000);
        assert_eq!(t.oversubscription(25_000_000_000, r), 2.0);
        assert!(t.fabric_rate_bps(25_000_000_000, Some(1)).is_err());
    }

    #[test]
    fn bad_shapes_name_their_field() {
        let e = FabricTopology::FatTree(FatTreeSpec { k: Some(3), ..Default::default() }).graph().unwrap_err();
        assert_eq!(e.0, "k");
        let e = FabricTopology::FatTree(FatTreeSpec { k: Some(4), cores: Some(2), ..Default::default() })
            .graph()
            .unwrap_err();
        assert_eq!(e.0, "cores");
        let e = FabricTopology::FatTree(FatTreeSpec { pods: Some(2), ..Default::default() }).graph().unwrap_err();
        assert_eq!(e.0, "tors_per_pod");
        let e = FabricTopology::FatTree(FatTreeSpec {
            pods: Some(2),
            tors_per_pod: Some(2),
            aggs_per_pod: Some(3),
            hosts_per_tor: Some(2),
            cores: Some(4),
            k: None,
        })
        .graph()
        .unwrap_err();
        assert_eq!(e.0, "cores");
    }
}
