//! Times the max-min oracle on an SLBN-sized instance: 200,000 flows of 8-14 hops over 11,000
//! links (random paths, 1-10 Gbit/s capacities). `cargo run --release -p xcc-core --example maxmin_scale`

use xcc_core::analysis::{max_min_fair, MaxMinProblem};
use xcc_core::rng::{component_rng, uniform01};

fn main() {
    let (links, flows) = (11_000usize, 200_000usize);
    let mut rng = component_rng(1, 0, 0);
    let capacity = (0..links).map(|_| 1e9 * (1.0 + 9.0 * uniform01(&mut rng)).floor()).collect();
    let paths = (0..flows)
        .map(|_| {
            let hops = 8 + (uniform01(&mut rng) * 7.0) as usize;
            (0..hops).map(|_| (uniform01(&mut rng) * links as f64) as u32).collect()
        })
        .collect();
    let p = MaxMinProblem { capacity, paths, demand: Vec::new() };
    let t = std::time::Instant::now();
    let a = max_min_fair(&p).expect("valid instance");
    let secs = t.elapsed().as_secs_f64();
    let saturated = a.load.iter().zip(&p.capacity).filter(|(l, c)| (*l - *c).abs() < 1e-6 * *c).count();
    println!("{flows} flows on {links} links: {secs:.3} s, {saturated} saturated links");
}
