//! The max-min fair oracle: exact water-filling over any topology.
//!
//! Flows cross sets of links; each link has a capacity (already scaled by its target
//! utilisation, e.g. MaxNet's mu or RCP's gamma, if the protocol aims below capacity); a flow
//! may have a demand cap. The max-min fair allocation raises every flow's rate together and
//! freezes a flow when one of its links fills up (that link is its bottleneck) or its demand is
//! met (Bertsekas and Gallager, *Data Networks*, section 6.5.2).
//!
//! Levels only rise: when flows are frozen at level `x` on the tightest link, every other link
//! they cross loses `x` of capacity and one flow, so its fair share `rem/n` can only grow (all
//! shares were at least `x`). So one pass in increasing level order suffices, with a heap of
//! link shares updated lazily: `O((F * P + L) log L)` for `F` flows of `P` hops on `L` links.
//! 200,000 flows on 11,000 links take well under a second.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// A max-min problem: link capacities and flow paths (link indices), with optional caps.
#[derive(Clone, Debug, Default)]
pub struct MaxMinProblem {
    /// Capacity of each link (any unit, e.g. bit/s), already scaled by its target utilisation.
    pub capacity: Vec<f64>,
    /// The links each flow crosses (indices into `capacity`); may be empty.
    pub paths: Vec<Vec<u32>>,
    /// Demand cap of each flow (`f64::INFINITY` for none); empty means no caps at all.
    pub demand: Vec<f64>,
}

/// What froze a flow.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Bottleneck {
    /// The link it shares with the other flows frozen at the same level.
    Link(u32),
    /// Its own demand cap.
    Demand,
    /// Neither: the flow crosses no link and has no cap (its rate is infinite).
    Unconstrained,
}

/// The max-min fair allocation.
#[derive(Clone, Debug, PartialEq)]
pub struct Allocation {
    /// Rate of each flow.
    pub rate: Vec<f64>,
    /// What limits each flow.
    pub bottleneck: Vec<Bottleneck>,
    /// Sum of the rates crossing each link.
    pub load: Vec<f64>,
}

/// A heap entry: a link's fair share or a flow's demand, smallest first, ties by kind and id
/// so the result does not depend on heap internals.
#[derive(Copy, Clone, Debug, PartialEq)]
struct Candidate {
    level: f64,
    /// 0: a demand cap (applied before a link at the same level), 1: a link.
    kind: u8,
    id: u32,
    /// The link's version when pushed; stale entries are skipped.
    version: u32,
}

impl Eq for Candidate {}
impl Ord for Candidate {
    fn cmp(&self, o: &Self) -> Ordering {
        // Reversed for a min-heap. Levels are finite or +inf, never NaN (checked on input).
        o.level
            .partial_cmp(&self.level)
            .unwrap_or(Ordering::Equal)
            .then(o.kind.cmp(&self.kind))
            .then(o.id.cmp(&self.id))
    }
}
impl PartialOrd for Candidate {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// Why a problem cannot be solved.
#[derive(Clone, Debug, PartialEq)]
pub enum MaxMinError {
    /// A capacity is negative or not a number.
    BadCapacity { link: usize, value: f64 },
    /// A demand is negative or not a number.
    BadDemand { flow: usize, value: f64 },
    /// A path names a link that does not exist.
    UnknownLink { flow: usize, link: u32 },
    /// `demand` is neither empty nor one per flow.
    DemandLength { flows: usize, demands: usize },
}

impl core::fmt::Display for MaxMinError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            MaxMinError::BadCapacity { link, value } => write!(f, "capacity of link {link} is {value}: expected >= 0"),
            MaxMinError::BadDemand { flow, value } => write!(f, "demand of flow {flow} is {value}: expected >= 0"),
            MaxMinError::UnknownLink { flow, link } => {
                write!(f, "flow {flow} crosses link {link}, which does not exist")
            }
            MaxMinError::DemandLength { flows, demands } => {
                write!(f, "{demands} demands for {flows} flows: give one per flow or none")
            }
        }
    }
}
impl std::error::Error for MaxMinError {}

/// Water-filling state.
struct Filling {
    /// Capacity not yet given to frozen flows, per link.
    rem: Vec<f64>,
    /// Flows not yet frozen, per link.
    unfrozen: Vec<u32>,
    /// Bumped whenever a link's share changes, to skip stale heap entries.
    version: Vec<u32>,
    rate: Vec<f64>,
    bottleneck: Vec<Bottleneck>,
    frozen: Vec<bool>,
    heap: BinaryHeap<Candidate>,
}

impl Filling {
    /// Freezes flow `f` at `level`; the links it crosses lose `level` and one flow.
    fn freeze(&mut self, p: &MaxMinProblem, f: usize, level: f64, why: Bottleneck) {
        self.frozen[f] = true;
        self.rate[f] = level;
        self.bottleneck[f] = why;
        for &l in &p.paths[f] {
            let l = l as usize;
            self.rem[l] = (self.rem[l] - level).max(0.0);
            self.unfrozen[l] -= 1;
            self.version[l] += 1;
            if self.unfrozen[l] > 0 {
                let level = self.rem[l] / self.unfrozen[l] as f64;
                self.heap.push(Candidate { level, kind: 1, id: l as u32, version: self.version[l] });
            }
        }
    }
}

/// Solves the max-min fair allocation of `p` exactly (up to floating-point rounding).
pub fn max_min_fair(p: &MaxMinProblem) -> Result<Allocation, MaxMinError> {
    let (nl, nf) = (p.capacity.len(), p.paths.len());
    if !p.demand.is_empty() && p.demand.len() != nf {
        return Err(MaxMinError::DemandLength { flows: nf, demands: p.demand.len() });
    }
    for (link, &value) in p.capacity.iter().enumerate() {
        if value.is_nan() || value < 0.0 {
            return Err(MaxMinError::BadCapacity { link, value });
        }
    }
    for (flow, &value) in p.demand.iter().enumerate() {
        if value.is_nan() || value < 0.0 {
            return Err(MaxMinError::BadDemand { flow, value });
        }
    }
    // Flows of each link, as a compressed adjacency.
    let mut start = vec![0u32; nl + 1];
    for (flow, path) in p.paths.iter().enumerate() {
        for &l in path {
            if l as usize >= nl {
                return Err(MaxMinError::UnknownLink { flow, link: l });
            }
            start[l as usize + 1] += 1;
        }
    }
    for l in 0..nl {
        start[l + 1] += start[l];
    }
    let mut fill = start.clone();
    let mut members = vec![0u32; start[nl] as usize];
    for (flow, path) in p.paths.iter().enumerate() {
        for &l in path {
            members[fill[l as usize] as usize] = flow as u32;
            fill[l as usize] += 1;
        }
    }

    let mut st = Filling {
        unfrozen: (0..nl).map(|l| start[l + 1] - start[l]).collect(),
        rem: p.capacity.clone(),
        version: vec![0u32; nl],
        rate: vec![f64::NAN; nf],
        bottleneck: vec![Bottleneck::Unconstrained; nf],
        frozen: vec![false; nf],
        heap: BinaryHeap::with_capacity(nl + nf),
    };
    for l in 0..nl {
        if st.unfrozen[l] > 0 {
            st.heap.push(Candidate { level: st.rem[l] / st.unfrozen[l] as f64, kind: 1, id: l as u32, version: 0 });
        }
    }
    for (f, &d) in p.demand.iter().enumerate() {
        if d.is_finite() {
            st.heap.push(Candidate { level: d, kind: 0, id: f as u32, version: 0 });
        }
    }
    let mut batch = Vec::new();
    while let Some(c) = st.heap.pop() {
        if c.kind == 0 {
            if !st.frozen[c.id as usize] {
                st.freeze(p, c.id as usize, c.level, Bottleneck::Demand);
            }
            continue;
        }
        let l = c.id as usize;
        if c.version != st.version[l] || st.unfrozen[l] == 0 {
            continue; // stale share
        }
        // Every flow still unfrozen on the tightest link gets its share.
        batch.clear();
        batch.extend(
            members[start[l] as usize..start[l + 1] as usize].iter().copied().filter(|&f| !st.frozen[f as usize]),
        );
        for &f in &batch {
            st.freeze(p, f as usize, c.level, Bottleneck::Link(l as u32));
        }
    }
    let Filling { mut rate, bottleneck, frozen, .. } = st;
    // Flows on no link with no cap are unconstrained.
    for f in 0..nf {
        if !frozen[f] {
            rate[f] = f64::INFINITY;
        }
    }
    let mut load = vec![0.0; nl];
    for (f, path) in p.paths.iter().enumerate() {
        for &l in path {
            load[l as usize] += rate[f];
        }
    }
    Ok(Allocation { rate, bottleneck, load })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn solve(capacity: &[f64], paths: &[&[u32]], demand: &[f64]) -> Allocation {
        let p = MaxMinProblem {
            capacity: capacity.to_vec(),
            paths: paths.iter().map(|p| p.to_vec()).collect(),
            demand: demand.to_vec(),
        };
        max_min_fair(&p).unwrap()
    }

    fn close(a: &[f64], b: &[f64]) {
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            assert!((x - y).abs() <= 1e-9 * y.abs().max(1.0), "{a:?} != {b:?}");
        }
    }

    #[test]
    fn one_link_is_shared_equally() {
        let a = solve(&[90.0], &[&[0], &[0], &[0]], &[]);
        close(&a.rate, &[30.0, 30.0, 30.0]);
        assert!(a.bottleneck.iter().all(|b| *b == Bottleneck::Link(0)));
    }

    /// Parking lot: flow 0 crosses both links, flows 1 and 2 one each.
    /// C = (10, 20): link 0 is the bottleneck of flows 0 and 1 at 5; flow 2 gets 20 - 5 = 15.
    #[test]
    fn parking_lot() {
        let a = solve(&[10.0, 20.0], &[&[0, 1], &[0], &[1]], &[]);
        close(&a.rate, &[5.0, 5.0, 15.0]);
        assert_eq!(a.bottleneck, vec![Bottleneck::Link(0), Bottleneck::Link(0), Bottleneck::Link(1)]);
        close(&a.load, &[10.0, 20.0]);
    }

    /// A demand cap frees capacity for the others: caps 2 on a 12 link with 3 flows -> 2, 5, 5.
    #[test]
    fn demand_caps_release_capacity() {
        let a = solve(&[12.0], &[&[0], &[0], &[0]], &[2.0, f64::INFINITY, 100.0]);
        close(&a.rate, &[2.0, 5.0, 5.0]);
        assert_eq!(a.bottleneck[0], Bottleneck::Demand);
    }

    /// Two levels: links A (C 4, flows 0 and 1) and B (C 10, flows 1, 2, 3): flow 1 is held to
    /// 2 by A, then B's remaining 8 is split by flows 2 and 3.
    #[test]
    fn two_level_bottlenecks() {
        let a = solve(&[4.0, 10.0], &[&[0], &[0, 1], &[1], &[1]], &[]);
        close(&a.rate, &[2.0, 2.0, 4.0, 4.0]);
        assert_eq!(a.bottleneck[2], Bottleneck::Link(1));
    }

    #[test]
    fn flows_on_no_link_are_unconstrained_or_capped() {
        let a = solve(&[1.0], &[&[], &[]], &[f64::INFINITY, 3.0]);
        assert!(a.rate[0].is_infinite());
        assert_eq!(a.bottleneck[0], Bottleneck::Unconstrained);
        close(&a.rate[1..], &[3.0]);
    }

    #[test]
    fn bad_input_is_refused() {
        let p = MaxMinProblem { capacity: vec![-1.0], paths: vec![vec![0]], demand: vec![] };
        assert!(matches!(max_min_fair(&p), Err(MaxMinError::BadCapacity { .. })));
        let p = MaxMinProblem { capacity: vec![1.0], paths: vec![vec![3]], demand: vec![] };
        assert!(matches!(max_min_fair(&p), Err(MaxMinError::UnknownLink { flow: 0, link: 3 })));
        let p = MaxMinProblem { capacity: vec![1.0], paths: vec![vec![0]], demand: vec![1.0, 2.0] };
        assert!(matches!(max_min_fair(&p), Err(MaxMinError::DemandLength { .. })));
    }

    /// The defining property on random instances: feasible (no link over capacity), and every
    /// flow not capped by its demand crosses a saturated link on which no flow gets more
    /// (Bertsekas and Gallager's bottleneck characterisation).
    #[test]
    fn random_instances_satisfy_the_bottleneck_characterisation() {
        use crate::rng::{component_rng, uniform01};
        let mut rng = component_rng(7, 0, 0);
        for _ in 0..200 {
            let nl = 1 + (uniform01(&mut rng) * 8.0) as usize;
            let nf = 1 + (uniform01(&mut rng) * 12.0) as usize;
            let capacity: Vec<f64> = (0..nl).map(|_| 1.0 + uniform01(&mut rng) * 99.0).collect();
            let paths: Vec<Vec<u32>> = (0..nf)
                .map(|_| {
                    let mut p: Vec<u32> = (0..nl as u32).filter(|_| uniform01(&mut rng) < 0.4).collect();
                    if p.is_empty() {
                        p.push((uniform01(&mut rng) * nl as f64) as u32 % nl as u32);
                    }
                    p
                })
                .collect();
            let demand: Vec<f64> = (0..nf)
                .map(|_| if uniform01(&mut rng) < 0.3 { uniform01(&mut rng) * 30.0 } else { f64::INFINITY })
                .collect();
            let p = MaxMinProblem { capacity: capacity.clone(), paths: paths.clone(), demand: demand.clone() };
            let a = max_min_fair(&p).unwrap();
            for (l, (load, cap)) in a.load.iter().zip(&capacity).enumerate() {
                assert!(*load <= cap * (1.0 + 1e-9), "link {l} over capacity");
            }
            for f in 0..nf {
                match a.bottleneck[f] {
                    Bottleneck::Demand => assert!((a.rate[f] - demand[f]).abs() < 1e-9),
                    Bottleneck::Link(l) => {
                        let l = l as usize;
                        assert!(paths[f].contains(&(l as u32)));
                        assert!((a.load[l] - capacity[l]).abs() <= 1e-9 * capacity[l], "bottleneck not saturated");
                        for (path, rate) in paths.iter().zip(&a.rate) {
                            if path.contains(&(l as u32)) {
                                assert!(*rate <= a.rate[f] * (1.0 + 1e-9), "a flow gets more on f's bottleneck");
                            }
                        }
                    }
                    Bottleneck::Unconstrained => panic!("every flow crosses a link"),
                }
            }
        }
    }
}
