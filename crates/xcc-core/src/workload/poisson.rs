//! Poisson flow arrivals at a target load of the hosts' links, as the HPCC artifact's
//! `traffic_gen.py` generates them: every host starts flows as a Poisson process of rate
//! `λ = load·C / (8·mean size)` (so its link carries `load` of its capacity C on average), each
//! to a destination drawn uniformly among the other hosts, with a size drawn from the CDF.
//!
//! Deterministic: host h draws from its own stream (`component_rng(seed, GENERATOR, h)`), in
//! the order inter-arrival time, destination, size; flows come out in time order, ties by
//! source host.

use super::FlowSizeCdf;
use crate::rng::{component_rng, kind, uniform01, Pcg64Mcg};
use crate::time::{Dur, Time};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// One flow to start.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Flow {
    pub start: Time,
    pub src: u32,
    pub dst: u32,
    pub size_bytes: u64,
}

/// Why a workload cannot be generated.
#[derive(Clone, Debug, PartialEq)]
pub enum WorkloadError {
    /// The load must be in (0, 1]: a host cannot offer more than its link carries.
    LoadOutOfRange { load: f64 },
    /// Flows need a source and another host to go to.
    TooFewHosts { hosts: u32 },
    /// The host link rate must be positive and finite.
    BadLinkRate { bps: f64 },
}

impl core::fmt::Display for WorkloadError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            WorkloadError::LoadOutOfRange { load } => {
                write!(f, "load {load} must be in (0, 1]: a fraction of the hosts' link capacity")
            }
            WorkloadError::TooFewHosts { hosts } => write!(f, "a workload needs at least 2 hosts, got {hosts}"),
            WorkloadError::BadLinkRate { bps } => write!(f, "host link rate {bps} bit/s must be positive"),
        }
    }
}
impl std::error::Error for WorkloadError {}

/// The flow generator: an iterator of [`Flow`]s starting before `until`.
pub struct PoissonFlows {
    cdf: FlowSizeCdf,
    hosts: u32,
    mean_gap_s: f64,
    until: Time,
    rngs: Vec<Pcg64Mcg>,
    /// Each host's next arrival.
    next: BinaryHeap<Reverse<(Time, u32)>>,
}

impl PoissonFlows {
    /// Flows among `hosts` hosts with links of `host_link_bps`, at `load` of those links, sizes
    /// from `cdf`, for arrivals in `[0, until)`, from `seed`. Checks every input first.
    pub fn new(
        cdf: FlowSizeCdf,
        hosts: u32,
        host_link_bps: f64,
        load: f64,
        until: Time,
        seed: u64,
    ) -> Result<PoissonFlows, WorkloadError> {
        if !(load > 0.0 && load <= 1.0) {
            return Err(WorkloadError::LoadOutOfRange { load });
        }
        if hosts < 2 {
            return Err(WorkloadError::TooFewHosts { hosts });
        }
        if !(host_link_bps > 0.0 && host_link_bps.is_finite()) {
            return Err(WorkloadError::BadLinkRate { bps: host_link_bps });
        }
        let per_host_flows_per_s = load * host_link_bps / 8.0 / cdf.mean_bytes();
        let mut g = PoissonFlows {
            cdf,
            hosts,
            mean_gap_s: 1.0 / per_host_flows_per_s,
            until,
            rngs: (0..hosts).map(|h| component_rng(seed, kind::GENERATOR, h as u64)).collect(),
            next: BinaryHeap::with_capacity(hosts as usize),
        };
        for h in 0..hosts {
            let first = Time::ZERO + g.gap(h);
            g.next.push(Reverse((first, h)));
        }
        Ok(g)
    }

    /// Mean time between two flows of one host.
    pub fn mean_interarrival(&self) -> Dur {
        Dur::from_secs_f64(self.mean_gap_s)
    }

    /// An exponential inter-arrival time for host `h`.
    fn gap(&mut self, h: u32) -> Dur {
        let u = uniform01(&mut self.rngs[h as usize]);
        Dur::from_secs_f64(-(1.0 - u).ln() * self.mean_gap_s)
    }
}

impl Iterator for PoissonFlows {
    type Item = Flow;

    fn next(&mut self) -> Option<Flow> {
        let Reverse((start, src)) = self.next.pop()?;
        if start >= self.until {
            // The earliest pending arrival is past the end: so are all others.
            self.next.clear();
            return None;
        }
        let following = start + self.gap(src);
        self.next.push(Reverse((following, src)));
        let rng = &mut self.rngs[src as usize];
        // Uniform among the other hosts: draw from hosts − 1 and skip the source.
        let pick = ((uniform01(rng) * (self.hosts - 1) as f64) as u32).min(self.hosts - 2);
        let dst = if pick >= src { pick + 1 } else { pick };
        let size_bytes = self.cdf.sample(rng);
        Some(Flow { start, src, dst, size_bytes })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uniform_1k_3k() -> FlowSizeCdf {
        FlowSizeCdf::from_points(&[(1000.0, 0.0), (3000.0, 100.0)]).unwrap()
    }

    #[test]
    fn bad_inputs_are_refused_before_any_flow() {
        let g = |hosts, bps, load| PoissonFlows::new(uniform_1k_3k(), hosts, bps, load, Time::from_ns(1), 1).err();
        assert_eq!(g(4, 1e9, 1.01), Some(WorkloadError::LoadOutOfRange { load: 1.01 }));
        assert_eq!(g(4, 1e9, 0.0), Some(WorkloadError::LoadOutOfRange { load: 0.0 }));
        assert!(matches!(g(4, 1e9, f64::NAN), Some(WorkloadError::LoadOutOfRange { .. })));
        assert_eq!(g(1, 1e9, 0.5), Some(WorkloadError::TooFewHosts { hosts: 1 }));
        assert_eq!(g(4, 0.0, 0.5), Some(WorkloadError::BadLinkRate { bps: 0.0 }));
        assert_eq!(g(4, 1e9, 1.0), None, "load 1 is allowed");
        assert!(WorkloadError::LoadOutOfRange { load: 1.5 }.to_string().contains("(0, 1]"));
    }

    // 10 hosts, 1 Gbit/s, load 0.5, sizes uniform in [1, 3] KB (mean 2,000 B):
    // λ = 0.5·1e9/8/2000 = 31,250 flows/s per host, mean gap 32 us; over 1 s about 312,500
    // flows. The offered bytes must come to 0.5 of 10 links for 1 s within 1 %, and the flow
    // count within 1 % (its relative standard deviation is 0.18 %).
    #[test]
    fn offers_the_target_load() {
        let g = PoissonFlows::new(uniform_1k_3k(), 10, 1e9, 0.5, Time::from_ns(1_000_000_000), 42).unwrap();
        assert_eq!(g.mean_interarrival(), Dur::from_us(32));
        let mut n = 0u64;
        let mut bytes = 0u64;
        let mut last = Time::ZERO;
        let mut per_src = [0u64; 10];
        for f in g {
            assert!(f.start >= last, "flows come in time order");
            assert_ne!(f.src, f.dst);
            assert!(f.dst < 10 && (1000..=3000).contains(&f.size_bytes));
            last = f.start;
            n += 1;
            bytes += f.size_bytes;
            per_src[f.src as usize] += 1;
        }
        let load = bytes as f64 * 8.0 / (10.0 * 1e9 * 1.0);
        assert!((load - 0.5).abs() < 0.005, "offered load {load}");
        assert!((n as f64 / 312_500.0 - 1.0).abs() < 0.01, "{n} flows");
        for c in per_src {
            assert!((c as f64 / 31_250.0 - 1.0).abs() < 0.03, "a host started {c} flows");
        }
    }

    #[test]
    fn same_seed_same_flows_other_seed_other_flows() {
        let run = |seed| -> Vec<Flow> {
            PoissonFlows::new(FlowSizeCdf::websearch(), 16, 100e9, 0.3, Time::from_ns(1_000_000), seed)
                .unwrap()
                .collect()
        };
        let a = run(1);
        assert!(a.len() > 10);
        assert_eq!(a, run(1));
        assert_ne!(a, run(2));
    }

    // Destinations are uniform over the other hosts: with 4 hosts, host 0 sends a third of
    // its flows to each of 1, 2, 3 (within 2 percentage points over 30,000 flows).
    #[test]
    fn destinations_are_uniform_over_the_others() {
        let g = PoissonFlows::new(uniform_1k_3k(), 4, 1e9, 1.0, Time::from_ns(500_000_000), 3).unwrap();
        let mut to = [0u64; 4];
        for f in g.filter(|f| f.src == 0) {
            to[f.dst as usize] += 1;
        }
        let total: u64 = to.iter().sum();
        assert_eq!(to[0], 0);
        assert!(total > 30_000);
        for &c in &to[1..] {
            assert!((c as f64 / total as f64 - 1.0 / 3.0).abs() < 0.02);
        }
    }
}
