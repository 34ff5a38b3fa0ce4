//! The propagation delays a run's hosts need from its plan: one way between every pair of
//! hosts, and each flow's ends and round trip (the fabric moves into the router thread after).

use xcc_build::scenario::model::Scenario;

use crate::run::plan::Plan;

/// Delays between the hosts of a run, in nanoseconds.
pub struct Paths {
    n_hosts: usize,
    /// One-way delay from host `a` to host `b` at `a * n_hosts + b`.
    one_way: Vec<u64>,
    /// Each flow's (source port, destination port).
    pub flow_ports: Vec<(usize, usize)>,
    /// Each flow's round-trip propagation delay.
    pub two_way: Vec<u64>,
}

impl Paths {
    /// Read from the plan's routes (before its fabric is given to the router).
    pub fn of(s: &Scenario, plan: &Plan) -> Paths {
        let delay_of = |r: &[u32]| -> u64 { r.iter().map(|&l| s.links[l as usize].delay_ns).sum() };
        let n_hosts = plan.hosts.len();
        let one_way: Vec<u64> =
            (0..n_hosts * n_hosts).map(|k| plan.fabric.route(k / n_hosts, k % n_hosts).map_or(0, &delay_of)).collect();
        let flow_ports: Vec<(usize, usize)> =
            s.flows.iter().map(|f| (plan.port_of(f.src).unwrap(), plan.port_of(f.dst).unwrap())).collect();
        let mut paths = Paths { n_hosts, one_way, flow_ports, two_way: Vec::new() };
        paths.two_way =
            paths.flow_ports.iter().map(|&(a, b)| paths.route_delay(a, b) + paths.route_delay(b, a)).collect();
        paths
    }

    /// One-way propagation delay from host port `a` to host port `b`.
    pub fn route_delay(&self, a: usize, b: usize) -> u64 {
        self.one_way[a * self.n_hosts + b]
    }
}
