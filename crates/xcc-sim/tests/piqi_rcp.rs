//! PIQI-RCP scenario tests (reconstructed law, docs/algorithms/piqi-rcp.md): the single-link
//! fixed point, max-min rates on two bottlenecks, and stability on seed 000's heterogeneous-delay
//! network, with tolerances stated per test.

mod support;

use support::*;
use xcc_core::analysis::{max_min_fair, MaxMinProblem};

/// Routers count wire bytes (1460 + 40 + 10 of shim per data packet), flows' `rate_bps` counts
/// payload.
const PAYLOAD: f64 = 1460.0 / 1510.0;
const GAMMA: f64 = 0.98;

/// Three flows starting together on one 100 Mb/s link (RTT 40 ms): every flow settles at
/// gamma C / 3 (payload share applied) within 2 %, the link carries gamma C within 1 %, and no
/// standing queue is left (at most 10 packets on average over the last 2 s). (Flows joining a
/// busy link make a queue that drains only at (1 - gamma) C: see docs/algorithms/piqi-rcp.md.)
#[test]
fn one_link_fixed_point_equal_rates_at_target_utilisation() {
    let out = run(&dumbbell("\"piqi-rcp\"", "\"piqi-rcp\"", "100Mbps", "20ms", &[0.0, 0.0, 0.0], "8s"));
    let want = GAMMA * 100e6 / 3.0 * PAYLOAD;
    for f in 0..3 {
        let got = mean(&out.flow_series, "flow_id", f, "rate_bps", 5.0, 8.0);
        assert!((got / want - 1.0).abs() < 0.02, "flow {f}: {got:.0} vs {want:.0}");
    }
    let l = link_id(&out, "r1->r2");
    let util = mean(&out.link_series, "link_id", l, "rate_bps", 5.0, 8.0) / 100e6;
    assert!((util / GAMMA - 1.0).abs() < 0.01, "utilisation {util}");
    let q = mean(&out.link_series, "link_id", l, "queue_bytes", 6.0, 8.0);
    assert!(q < 10.0 * 1510.0, "standing queue {q} B");
}

/// Parking lot (100 and 60 Mb/s): every flow within 5 % of the oracle's max-min rates of
/// gamma C (the criterion; measured error is well below 1 %).
#[test]
fn parking_lot_reaches_the_max_min_rates() {
    let out = run(&parking_lot("\"piqi-rcp\"", "\"piqi-rcp\"", "100Mbps", "60Mbps", "10s"));
    let oracle = max_min_fair(&MaxMinProblem {
        capacity: vec![GAMMA * 100e6, GAMMA * 60e6],
        paths: vec![vec![0, 1], vec![0], vec![1]],
        demand: vec![],
    })
    .unwrap();
    for f in 0..3 {
        let got = mean(&out.flow_series, "flow_id", f as i64, "rate_bps", 6.0, 10.0);
        let want = oracle.rate[f] * PAYLOAD;
        assert!((got / want - 1.0).abs() < 0.05, "flow {f}: {got:.0} vs max-min {want:.0}");
    }
}

/// Seed 000 Section IX's network with N = 9 short flows (RTT 6 ms) and one long flow (RTT
/// 204 ms) sharing L1: RCP oscillates here (seed 000 Figs. 13-14). PIQI-RCP with kappa = kappa*
/// of the largest RTT converges: the long flow's rate, in 100 ms samples over the last 10 s,
/// stays within 5 % of its max-min rate gamma (155 - 100) Mb/s, and so does its mean; the short
/// flows share L3 equally within 5 %; L1's queue stays under 1 % of its bandwidth-delay product
/// (155 Mb/s x 204 ms = 2600 packets) after the start.
#[test]
fn stable_and_max_min_under_heterogeneous_delay() {
    let n = 9;
    let out = run(&seed000_network("\"piqi-rcp\"", "\"piqi-rcp\"", n, "30s"));
    let want_long = GAMMA * (155e6 - 100e6) * PAYLOAD;
    let long = series(&out.flow_series, "flow_id", 0, "rate_bps");
    for &(t, r) in long.iter().filter(|&&(t, _)| t > 20.0) {
        assert!((r / want_long - 1.0).abs() < 0.05, "long flow at {t:.1} s: {r:.0} vs {want_long:.0}");
    }
    let want_short = GAMMA * 100e6 / n as f64 * PAYLOAD;
    for f in 1..=n as i64 {
        let got = mean(&out.flow_series, "flow_id", f, "rate_bps", 20.0, 30.0);
        assert!((got / want_short - 1.0).abs() < 0.05, "short flow {f}: {got:.0} vs {want_short:.0}");
    }
    let l1 = link_id(&out, "r1->r2");
    let peak = max(&out.link_series, "link_id", l1, "queue_bytes", 10.0, 30.0);
    assert!(peak < 26.0 * 1510.0, "L1 queue peaked at {peak} B");
}

/// Parameters are optional and checked: defaults resolve; a bad gain, target or interval is
/// refused with the field named.
#[test]
fn parameters_resolve_or_are_refused_by_name() {
    let ok = dumbbell(
        "{ kind = \"piqi-rcp\", interval = \"10ms\", kappa = 0.05, gamma = 0.95, initial = 0.1, rtt0 = \"100ms\" }",
        "\"piqi-rcp\"",
        "10Mbps",
        "5ms",
        &[0.0],
        "1s",
    );
    xcc_sim::resolve(&ok, "ok.toml", xcc_sim::Format::Toml).unwrap();
    let auto =
        dumbbell("{ kind = \"piqi-rcp\", kappa = \"auto\" }", "{ kind = \"piqi-rcp\" }", "10Mbps", "5ms", &[0.0], "1s");
    xcc_sim::resolve(&auto, "ok.toml", xcc_sim::Format::Toml).unwrap();
    for law in ["normalised", "multiplicative"] {
        let q = format!("{{ kind = \"piqi-rcp\", law = \"{law}\" }}");
        let s = dumbbell(&q, "\"piqi-rcp\"", "10Mbps", "5ms", &[0.0], "1s");
        xcc_sim::resolve(&s, "ok.toml", xcc_sim::Format::Toml).unwrap();
    }
    for (queue, field) in [
        ("{ kind = \"piqi-rcp\", kappa = 2.0 }", "kappa"),
        ("{ kind = \"piqi-rcp\", kappa = \"fast\" }", "kappa"),
        ("{ kind = \"piqi-rcp\", gamma = 1.2 }", "gamma"),
        ("{ kind = \"piqi-rcp\", interval = \"0ms\" }", "interval"),
        ("{ kind = \"piqi-rcp\", alpha = 0.4 }", "alpha"),
        ("{ kind = \"piqi-rcp\", law = \"quadratic\" }", "law"),
    ] {
        let e = resolve_error(&dumbbell(queue, "\"piqi-rcp\"", "10Mbps", "5ms", &[0.0], "1s"));
        assert!(e.contains("bad.toml") && e.contains(field), "{queue}: {e}");
    }
    let e = resolve_error(&dumbbell("\"piqi-rcp\"", "{ kind = \"piqi-rcp\", tau = 1 }", "10Mbps", "5ms", &[0.0], "1s"));
    assert!(e.contains("no parameters"), "{e}");
}

/// The alternative (multiplicative) law on the one-link case: three flows starting together on
/// 100 Mb/s still settle at gamma C / 3 each within 2 % (its fixed point is the same: y =
/// gamma C).
#[test]
fn multiplicative_law_has_the_same_fixed_point() {
    let q = "{ kind = \"piqi-rcp\", law = \"multiplicative\" }";
    let out = run(&dumbbell(q, "\"piqi-rcp\"", "100Mbps", "20ms", &[0.0, 0.0, 0.0], "8s"));
    let want = GAMMA * 100e6 / 3.0 * PAYLOAD;
    for f in 0..3 {
        let got = mean(&out.flow_series, "flow_id", f, "rate_bps", 5.0, 8.0);
        assert!((got / want - 1.0).abs() < 0.02, "flow {f}: {got:.0} vs {want:.0}");
    }
}

/// The parking lot again, flow 2 (on L2 only) stopping at 4 s: flow 0, limited by L2 before,
/// is then limited by L1, shared equally with flow 1: both within 5 % of gamma 100 / 2 over
/// the last 4 s of 14.
#[test]
fn follows_the_max_min_rates_when_a_flow_leaves() {
    let out = run(&parking_lot_with_departure("\"piqi-rcp\"", "\"piqi-rcp\"", 4.0, "14s"));
    let before = mean(&out.flow_series, "flow_id", 0, "rate_bps", 2.5, 4.0);
    assert!((before / (GAMMA * 30e6 * PAYLOAD) - 1.0).abs() < 0.05, "before: {before}");
    for f in 0..2 {
        let got = mean(&out.flow_series, "flow_id", f, "rate_bps", 10.0, 14.0);
        let want = GAMMA * 50e6 * PAYLOAD;
        assert!((got / want - 1.0).abs() < 0.05, "flow {f} after the departure: {got:.0} vs {want:.0}");
    }
}
