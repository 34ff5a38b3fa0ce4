//! MaxNet scenario tests: the properties seed 000 claims, with tolerances stated per test.

use xcc_core::analysis::{max_min_fair, MaxMinProblem};
use xcc_sim::output::Column;
use xcc_sim::{run_text, Format, RunOutput};

/// Routers count wire bytes (1500 per data packet) while flows' `rate_bps` and windows count
/// payload (1460): at equilibrium the payload rate is mu C times this.
const PAYLOAD: f64 = 1460.0 / 1500.0;

fn run(text: &str) -> RunOutput {
    run_text(text, "maxnet.toml", Format::Toml, None, true, None).unwrap_or_else(|e| panic!("{e}")).1
}

fn link_id(out: &RunOutput, name: &str) -> i64 {
    match out.links.column("name") {
        Some(Column::Str(v)) => v.iter().position(|n| n == name).expect("link") as i64,
        _ => unreachable!(),
    }
}

/// Mean of a series column for one entity over [from, to].
fn mean(t: &xcc_sim::Table, id_col: &str, id: i64, col: &str, from: f64, to: f64) -> f64 {
    let time = t.f64("time_s");
    let ids = t.i64(id_col);
    let xs: Vec<f64> = (0..time.len())
        .filter(|&k| ids[k] == id && time[k] > from && time[k] <= to)
        .map(|k| match t.column(col) {
            Some(Column::F64(v)) => v[k],
            Some(Column::I64(v)) => v[k] as f64,
            _ => unreachable!(),
        })
        .collect();
    xs.iter().sum::<f64>() / xs.len() as f64
}

const HOSTS: &str = r#"
[[host]]
name = "s{i}"
count = 3
[[host]]
name = "d{i}"
count = 3
[[router]]
name = "r{i}"
count = 3
"#;

/// One flow alone: MaxNet settles at mu C (seed 000 Fig. 9: 94 %) with no standing queue, and
/// the price at T ln(x_max / (mu C)) (protocols.md 1.7 P2), the window's payload rate being
/// mu C times the payload share. Tolerances: 1 % of C, 3 packets, 1 ms of price.
#[test]
fn one_flow_fills_mu_of_the_link_with_no_standing_queue() {
    let text = format!(
        r#"name = "one"
duration = "10s"
{HOSTS}
[[link]]
between = ["s1", "r1"]
rate = "1Gbps"
buffer = "unlimited"
[[link]]
between = ["r1", "r2"]
rate = "100Mbps"
delay = "10ms"
buffer = "unlimited"
queue = {{ kind = "maxnet", mu = 0.94 }}
[[link]]
between = ["r2", "d1"]
rate = "1Gbps"
buffer = "unlimited"
[[flow]]
name = "f"
src = "s1"
dst = "d1"
cc = "maxnet"
"#
    );
    let out = run(&text);
    let b = link_id(&out, "r1->r2");
    let util = mean(&out.link_series, "link_id", b, "utilisation", 5.0, 10.0);
    assert!((util - 0.94).abs() < 0.01, "utilisation {util}");
    let queue = mean(&out.link_series, "link_id", b, "queue_packets", 5.0, 10.0);
    assert!(queue < 3.0, "standing queue {queue} packets");
    let price = mean(&out.link_series, "link_id", b, "gauge", 5.0, 10.0);
    let want = 0.4 * (1e15f64 / (0.94 * 1e8 * PAYLOAD)).ln();
    assert!((price - want).abs() < 0.001, "price {price} vs {want}");
    assert_eq!(out.flows.i64("retransmits")[0], 0);
}

/// Seed 000's headline: flows with 6x different RTTs through the same bottleneck get the same
/// rate (within 5 % after 20 s).
#[test]
fn rates_do_not_depend_on_rtt() {
    let text = format!(
        r#"name = "rtt"
duration = "30s"
{HOSTS}
[[link]]
between = ["s1", "r1"]
rate = "1Gbps"
delay = "2ms"
buffer = "unlimited"
[[link]]
between = ["s2", "r1"]
rate = "1Gbps"
delay = "27ms"
buffer = "unlimited"
[[link]]
between = ["r1", "r2"]
rate = "100Mbps"
delay = "3ms"
buffer = "unlimited"
queue = {{ kind = "maxnet", mu = 0.9 }}
[[link]]
between = ["r2", "d{{i}}"]
count = 2
rate = "1Gbps"
buffer = "unlimited"
[[flow]]
name = "f{{i}}"
count = 2
src = "s{{i}}"
dst = "d{{i}}"
cc = "maxnet"
[metrics]
interval = "500ms"
"#
    );
    let out = run(&text);
    let r0 = mean(&out.flow_series, "flow_id", 0, "rate_bps", 20.0, 30.0);
    let r1 = mean(&out.flow_series, "flow_id", 1, "rate_bps", 20.0, 30.0);
    assert!((r0 / r1 - 1.0).abs() < 0.05, "RTT 10 ms: {r0:.0}, RTT 60 ms: {r1:.0}");
    assert!(((r0 + r1) / (90e6 * PAYLOAD) - 1.0).abs() < 0.02, "sum {} vs mu C", r0 + r1);
}

/// Parking lot (flow 0 over both links, flows 1 and 2 over one each): the rates MaxNet reaches
/// are the max-min fair rates of the mu-scaled capacities, from the oracle (within 3 %).
#[test]
fn parking_lot_reaches_the_max_min_rates() {
    let text = format!(
        r#"name = "parking-lot"
duration = "30s"
{HOSTS}
[[link]]
between = ["s{{i}}", "r1"]
count = 2
rate = "1Gbps"
buffer = "unlimited"
[[link]]
between = ["s3", "r2"]
rate = "1Gbps"
buffer = "unlimited"
[[link]]
between = ["r1", "r2"]
rate = "100Mbps"
delay = "5ms"
buffer = "unlimited"
queue = {{ kind = "maxnet", mu = 0.9 }}
[[link]]
between = ["r2", "r3"]
rate = "60Mbps"
delay = "5ms"
buffer = "unlimited"
queue = {{ kind = "maxnet", mu = 0.9 }}
[[link]]
between = ["r3", "d1"]
rate = "1Gbps"
buffer = "unlimited"
[[link]]
between = ["r2", "d2"]
rate = "1Gbps"
buffer = "unlimited"
[[link]]
between = ["r3", "d3"]
rate = "1Gbps"
buffer = "unlimited"
[[flow]]
name = "f{{i}}"
count = 3
src = "s{{i}}"
dst = "d{{i}}"
cc = "maxnet"
[metrics]
interval = "500ms"
"#
    );
    let out = run(&text);
    // Links: 0 = r1->r2 (100 Mb/s), 1 = r2->r3 (60 Mb/s); flow 0 crosses both.
    let oracle = max_min_fair(&MaxMinProblem {
        capacity: vec![0.9 * 100e6, 0.9 * 60e6],
        paths: vec![vec![0, 1], vec![0], vec![1]],
        demand: vec![],
    })
    .unwrap();
    for f in 0..3 {
        let got = mean(&out.flow_series, "flow_id", f as i64, "rate_bps", 20.0, 30.0);
        let want = oracle.rate[f] * PAYLOAD;
        assert!((got / want - 1.0).abs() < 0.03, "flow {f}: {got:.0} vs max-min {want:.0}");
    }
}
