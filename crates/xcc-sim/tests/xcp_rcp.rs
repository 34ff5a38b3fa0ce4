//! XCP and RCP scenario tests: each protocol's single-link fixed point (equal rates, utilisation
//! at its target) and RCP's max-min rates on two bottlenecks, with tolerances stated per test.

use xcc_core::analysis::{max_min_fair, MaxMinProblem};

mod support;
use support::{link_id, mean, run};

/// Payload share of a data packet on the wire: 1460 B of payload in 40 B of headers plus the
/// shim (XCP 18 B, RCP 10 B). Routers count wire bytes, flows' `rate_bps` counts payload.
const XCP_PAYLOAD: f64 = 1460.0 / 1518.0;
const RCP_PAYLOAD: f64 = 1460.0 / 1510.0;

/// Three flows with RTTs 12, 32 and 72 ms on a 100 Mb/s link (1 BDP-ish buffer of 1000
/// packets), started 0, 1 and 2 s.
fn dumbbell(queue: &str, cc: &str) -> String {
    format!(
        r#"name = "dumbbell"
duration = "20s"
[[host]]
name = "s{{i}}"
count = 3
[[host]]
name = "d{{i}}"
count = 3
[[router]]
name = "r{{i}}"
count = 2
[[link]]
between = ["s1", "r1"]
rate = "1Gbps"
buffer = "unlimited"
delay = "1ms"
[[link]]
between = ["s2", "r1"]
rate = "1Gbps"
buffer = "unlimited"
delay = "11ms"
[[link]]
between = ["s3", "r1"]
rate = "1Gbps"
buffer = "unlimited"
delay = "31ms"
[[link]]
between = ["r1", "r2"]
rate = "100Mbps"
delay = "5ms"
buffer = "1000pkt"
queue = "{queue}"
[[link]]
between = ["r2", "d{{i}}"]
count = 3
rate = "1Gbps"
buffer = "unlimited"
[[flow]]
name = "f1"
src = "s1"
dst = "d1"
cc = "{cc}"
start = "0s"
[[flow]]
name = "f2"
src = "s2"
dst = "d2"
cc = "{cc}"
start = "1s"
[[flow]]
name = "f3"
src = "s3"
dst = "d3"
cc = "{cc}"
start = "2s"
[metrics]
interval = "500ms"
"#
    )
}

/// XCP's fixed point on one link: equal rates whatever the RTT (within 5 %, from 10 s),
/// utilisation above 95 %, a persistent queue below 20 packets, no loss.
#[test]
fn xcp_single_link_fixed_point() {
    let out = run(&dumbbell("xcp", "xcp"));
    let b = link_id(&out, "r1->r2");
    let util = mean(&out.link_series, "link_id", b, "utilisation", 10.0, 20.0);
    let queue = mean(&out.link_series, "link_id", b, "queue_packets", 10.0, 20.0);
    let rates: Vec<f64> = (0..3).map(|f| mean(&out.flow_series, "flow_id", f, "rate_bps", 10.0, 20.0)).collect();
    eprintln!("xcp util {util} queue {queue} rates {rates:?}");
    assert!(util > 0.95, "utilisation {util}");
    assert!(queue < 20.0, "queue {queue}");
    let avg = rates.iter().sum::<f64>() / 3.0;
    for (f, r) in rates.iter().enumerate() {
        assert!((r / avg - 1.0).abs() < 0.05, "flow {f}: {r:.0} vs mean {avg:.0}");
    }
    assert!((3.0 * avg / (100e6 * XCP_PAYLOAD)) > 0.95);
    assert_eq!(out.links.i64("drops").iter().sum::<i64>(), 0);
}

/// RCP's fixed point on one link: R = C / 3 for every flow (within 5 %, from 10 s), utilisation
/// above 95 %, no loss.
#[test]
fn rcp_single_link_fixed_point() {
    let out = run(&dumbbell("rcp", "rcp"));
    let b = link_id(&out, "r1->r2");
    let util = mean(&out.link_series, "link_id", b, "utilisation", 10.0, 20.0);
    let gauge = mean(&out.link_series, "link_id", b, "gauge", 10.0, 20.0);
    let rates: Vec<f64> = (0..3).map(|f| mean(&out.flow_series, "flow_id", f, "rate_bps", 10.0, 20.0)).collect();
    eprintln!("rcp util {util} R {gauge} rates {rates:?}");
    assert!(util > 0.95, "utilisation {util}");
    assert!((gauge / (100e6 / 3.0) - 1.0).abs() < 0.05, "offered rate {gauge}");
    for (f, r) in rates.iter().enumerate() {
        let want = 100e6 / 3.0 * RCP_PAYLOAD;
        assert!((r / want - 1.0).abs() < 0.05, "flow {f}: {r:.0} vs {want:.0}");
    }
    assert_eq!(out.links.i64("drops").iter().sum::<i64>(), 0);
}

/// Parking lot (flow 0 over both links, flows 1 and 2 over one each): RCP reaches the oracle's
/// max-min rates of the full capacities (RCP's target utilisation is 1) within 5 %.
#[test]
fn rcp_parking_lot_reaches_the_max_min_rates() {
    let text = r#"name = "parking-lot"
duration = "20s"
[[host]]
name = "s{i}"
count = 3
[[host]]
name = "d{i}"
count = 3
[[router]]
name = "r{i}"
count = 3
[[link]]
between = ["s{i}", "r1"]
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
queue = "rcp"
[[link]]
between = ["r2", "r3"]
rate = "60Mbps"
delay = "5ms"
buffer = "unlimited"
queue = "rcp"
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
name = "f{i}"
count = 3
src = "s{i}"
dst = "d{i}"
cc = "rcp"
[metrics]
interval = "500ms"
"#;
    let out = run(text);
    let oracle = max_min_fair(&MaxMinProblem {
        capacity: vec![100e6, 60e6],
        paths: vec![vec![0, 1], vec![0], vec![1]],
        demand: vec![],
    })
    .unwrap();
    for f in 0..3 {
        let got = mean(&out.flow_series, "flow_id", f as i64, "rate_bps", 10.0, 20.0);
        let want = oracle.rate[f] * RCP_PAYLOAD;
        eprintln!("flow {f}: {got:.0} vs {want:.0}");
        assert!((got / want - 1.0).abs() < 0.05, "flow {f}: {got:.0} vs max-min {want:.0}");
    }
}
