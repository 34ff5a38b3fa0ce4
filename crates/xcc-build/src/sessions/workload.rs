//! Session workloads of seed 004: arrivals and departures spread uniformly over time windows,
//! random source and destination hosts (a host is the source of at most one session, Section
//! II), greedy sessions, and optionally finite sizes drawn from a Pareto distribution.

use super::graph::Graph;
use rand_core::RngCore;
use serde::Deserialize;
use std::collections::HashSet;
use xcc_core::rng::{component_rng, kind, uniform01, Pcg64Mcg};
use xcc_core::{Dur, Time};

/// `count` events at times uniform in `[from_s, to_s)`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Window {
    pub count: u32,
    pub from_s: f64,
    pub to_s: f64,
}

/// Pareto session sizes with the given mean and shape, in whole packets.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParetoSize {
    pub mean_packets: f64,
    pub shape: f64,
    pub packet_bytes: u32,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    pub arrivals: Vec<Window>,
    /// Each departure picks a session, uniformly, among those that arrived before the window
    /// opened and have no departure yet.
    #[serde(default)]
    pub departures: Vec<Window>,
    /// Finite sessions (they leave when their data is sent); `None`: sessions are unlimited.
    #[serde(default)]
    pub size: Option<ParetoSize>,
    /// Requested maximum rate `D` of every session, bit/s; absent: greedy (infinite).
    #[serde(default)]
    pub demand_bps: Option<f64>,
}

/// The sessions of a run, sorted by start time.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sessions {
    pub src: Vec<u32>,
    pub dst: Vec<u32>,
    pub start: Vec<Time>,
    pub stop: Vec<Option<Time>>,
    /// Bits to send (`None`: unlimited).
    pub size_bits: Vec<Option<f64>>,
    pub demand: Vec<f64>,
}

impl Sessions {
    pub fn len(&self) -> usize {
        self.src.len()
    }
    pub fn is_empty(&self) -> bool {
        self.src.is_empty()
    }
    /// One session; for hand-built tests.
    pub fn push(&mut self, src: u32, dst: u32, start: Time, stop: Option<Time>, size_bits: Option<f64>, demand: f64) {
        self.src.push(src);
        self.dst.push(dst);
        self.start.push(start);
        self.stop.push(stop);
        self.size_bits.push(size_bits);
        self.demand.push(demand);
    }
}

fn check_window(what: &str, i: usize, w: &Window) -> Result<(), String> {
    if !(w.from_s >= 0.0 && w.to_s >= w.from_s && w.to_s.is_finite()) {
        return Err(format!("workload.{what}[{i}]: expected 0 <= from_s <= to_s, got {} .. {}", w.from_s, w.to_s));
    }
    Ok(())
}

fn below(rng: &mut Pcg64Mcg, n: u64) -> u64 {
    (uniform01(rng) * n as f64) as u64
}

fn time_in(rng: &mut Pcg64Mcg, w: &Window) -> Time {
    Time::ZERO + Dur::from_secs_f64(w.from_s + (w.to_s - w.from_s) * uniform01(rng))
}

/// Draws the sessions of `spec` on `net` (deterministic in `seed`).
pub fn generate(spec: &WorkloadSpec, net: &Graph, seed: u64) -> Result<Sessions, String> {
    for (i, w) in spec.arrivals.iter().enumerate() {
        check_window("arrivals", i, w)?;
    }
    for (i, w) in spec.departures.iter().enumerate() {
        check_window("departures", i, w)?;
    }
    if let Some(s) = &spec.size {
        if !(s.shape > 1.0 && s.mean_packets >= 1.0 && s.packet_bytes > 0) {
            return Err("workload.size: expected shape > 1, mean_packets >= 1, packet_bytes > 0".into());
        }
    }
    let total: u64 = spec.arrivals.iter().map(|w| w.count as u64).sum();
    let hosts = net.hosts();
    if hosts < 2 || total > hosts {
        return Err(format!("workload.arrivals: {total} sessions need as many source hosts; the network has {hosts}"));
    }
    let mut rng = component_rng(seed, kind::GENERATOR, 0x5E55);
    let mut starts: Vec<Time> = Vec::with_capacity(total as usize);
    for w in &spec.arrivals {
        for _ in 0..w.count {
            starts.push(time_in(&mut rng, w));
        }
    }
    starts.sort();
    let mut used = HashSet::with_capacity(total as usize);
    let mut out = Sessions::default();
    for &start in &starts {
        let src = loop {
            let h = below(&mut rng, hosts) as u32;
            if used.insert(h) {
                break h;
            }
        };
        let dst = loop {
            let h = below(&mut rng, hosts) as u32;
            if h != src {
                break h;
            }
        };
        let size_bits = spec.size.as_ref().map(|s| {
            let xm = s.mean_packets * (s.shape - 1.0) / s.shape;
            let u = 1.0 - uniform01(&mut rng); // (0, 1]
            let packets = (xm / u.powf(1.0 / s.shape)).ceil().max(1.0);
            packets * s.packet_bytes as f64 * 8.0
        });
        out.push(src, dst, start, None, size_bits, spec.demand_bps.unwrap_or(f64::INFINITY));
    }
    for (i, w) in spec.departures.iter().enumerate() {
        let open = Time::ZERO + Dur::from_secs_f64(w.from_s);
        let mut candidates: Vec<usize> =
            (0..out.len()).filter(|&s| out.start[s] < open && out.stop[s].is_none()).collect();
        if (candidates.len() as u64) < w.count as u64 {
            return Err(format!(
                "workload.departures[{i}]: {} departures but only {} sessions have arrived by {} s",
                w.count,
                candidates.len(),
                w.from_s
            ));
        }
        for _ in 0..w.count {
            let k = below(&mut rng, candidates.len() as u64) as usize;
            let s = candidates.swap_remove(k);
            out.stop[s] = Some(time_in(&mut rng, w));
        }
    }
    let _ = rng.next_u32();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sessions::transit_stub::{transit_stub, TransitStubParams};

    #[test]
    fn churn_windows_and_pareto_sizes() {
        let net = transit_stub(&TransitStubParams::medium(), 3).unwrap();
        let spec = WorkloadSpec {
            arrivals: vec![
                Window { count: 2000, from_s: 0.0, to_s: 0.5 },
                Window { count: 500, from_s: 0.5, to_s: 0.7 },
            ],
            departures: vec![Window { count: 500, from_s: 0.5, to_s: 0.7 }],
            size: Some(ParetoSize { mean_packets: 300.0, shape: 4.0, packet_bytes: 2000 }),
            demand_bps: None,
        };
        let s = generate(&spec, &net, 9).unwrap();
        assert_eq!(s.len(), 2500);
        assert!(s.start.windows(2).all(|w| w[0] <= w[1]));
        let early = s.start.iter().filter(|t| t.as_secs_f64() < 0.5).count();
        assert_eq!(early, 2000);
        let stops: Vec<_> = s.stop.iter().flatten().collect();
        assert_eq!(stops.len(), 500);
        assert!(stops.iter().all(|t| (0.5..0.7).contains(&t.as_secs_f64())));
        let srcs: HashSet<_> = s.src.iter().collect();
        assert_eq!(srcs.len(), 2500, "one session per source host");
        assert!(s.src.iter().zip(&s.dst).all(|(a, b)| a != b));
        // Pareto(mean 300, shape 4): minimum 225 packets, sample mean near 300 (+1 from ceil).
        let pk: Vec<f64> = s.size_bits.iter().map(|b| b.unwrap() / 16000.0).collect();
        assert!(pk.iter().all(|&p| p >= 225.0));
        let mean = pk.iter().sum::<f64>() / pk.len() as f64;
        assert!((mean - 300.5).abs() < 10.0, "mean {mean}");
        assert_eq!(generate(&spec, &net, 9).unwrap(), s);
    }
}
