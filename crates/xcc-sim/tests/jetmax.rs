//! JetMax scenario tests (reconstructed law, docs/algorithms/jetmax.md): the papers' claims —
//! convergence within 1 % of the stationary point in about six control intervals on any
//! capacity, no overshoot, tunable utilisation, max-min fairness with bottleneck ids in packets
//! — with tolerances stated per test.

mod support;

use support::*;
use xcc_core::analysis::{max_min_fair, MaxMinProblem};

/// Routers count wire bytes (1460 + 40 + 13 of shim per data packet), flows' `rate_bps` counts
/// payload.
const PAYLOAD: f64 = 1460.0 / 1513.0;

/// One flow on an idle link of 50 Mb/s, 500 Mb/s and 5 Gb/s, RTT 100 ms (one source step per
/// RTT), goodput sampled every 100 ms. Counting from the first sample with traffic (the first
/// step, after the two probe RTTs), the goodput is within 1 % of the stationary gamma C (payload
/// share applied) from the 7th sample on (6 steps + one sample of delay) and stays there, and it
/// never exceeds it by more than 1 % (no overshoot): the same number of steps for a capacity
/// 100 times larger.
#[test]
fn within_one_percent_in_six_steps_on_any_capacity_without_overshoot() {
    for (c, rate) in [("50Mbps", 50e6), ("500Mbps", 500e6), ("5Gbps", 5e9)] {
        let out = run(&dumbbell("\"jetmax\"", "\"jetmax\"", c, "50ms", &[0.0], "1.6s"));
        let want = 0.95 * rate * PAYLOAD;
        let s = series(&out.flow_series, "flow_id", 0, "rate_bps");
        let first = s.iter().position(|&(_, r)| r > 0.01 * want).expect("no traffic");
        for (k, &(t, r)) in s.iter().enumerate().skip(first) {
            assert!(r <= want * 1.01, "{c}: overshoot at {t} s: {r:.0} vs {want:.0}");
            if k >= first + 6 {
                assert!(
                    (r / want - 1.0).abs() < 0.01,
                    "{c}: not within 1 % at {t} s ({} samples in): {s:?}",
                    k - first
                );
            }
        }
        assert!(s.len() >= first + 9, "{c}: too short a run");
    }
}

/// Tunable utilisation: three flows on one 100 Mb/s link settle at gamma C in total, equal
/// shares, for gamma = 0.8 and 0.95 (within 1 % of gamma C, each flow within 2 % of a third);
/// no standing queue (under 10 packets on average over the last 2 s).
#[test]
fn utilisation_follows_gamma_with_equal_rates() {
    for gamma in [0.8, 0.95] {
        let q = format!("{{ kind = \"jetmax\", gamma = {gamma} }}");
        let out = run(&dumbbell(&q, "\"jetmax\"", "100Mbps", "20ms", &[0.0, 0.5, 1.0], "6s"));
        let l = link_id(&out, "r1->r2");
        let util = mean(&out.link_series, "link_id", l, "rate_bps", 4.0, 6.0) / 100e6;
        assert!((util / gamma - 1.0).abs() < 0.01, "gamma {gamma}: utilisation {util}");
        for f in 0..3 {
            let got = mean(&out.flow_series, "flow_id", f, "rate_bps", 4.0, 6.0);
            let want = gamma * 100e6 / 3.0 * PAYLOAD;
            assert!((got / want - 1.0).abs() < 0.02, "gamma {gamma} flow {f}: {got:.0} vs {want:.0}");
        }
        let queue = mean(&out.link_series, "link_id", l, "queue_bytes", 4.0, 6.0);
        assert!(queue < 10.0 * 1513.0, "gamma {gamma}: standing queue {queue} B");
    }
}

/// Parking lot (100 and 60 Mb/s): with bottleneck hop ids in packets every flow gets its
/// max-min rate of gamma C within 5 % (the criterion; the measured error is below 1 %):
/// flow 0 is counted at the 60 Mb/s link, flow 1 alone at the 100 Mb/s link gets the rest.
#[test]
fn parking_lot_reaches_the_max_min_rates() {
    let out = run(&parking_lot("\"jetmax\"", "\"jetmax\"", "100Mbps", "60Mbps", "8s"));
    let oracle = max_min_fair(&MaxMinProblem {
        capacity: vec![0.95 * 100e6, 0.95 * 60e6],
        paths: vec![vec![0, 1], vec![0], vec![1]],
        demand: vec![],
    })
    .unwrap();
    for f in 0..3 {
        let got = mean(&out.flow_series, "flow_id", f as i64, "rate_bps", 5.0, 8.0);
        let want = oracle.rate[f] * PAYLOAD;
        assert!((got / want - 1.0).abs() < 0.05, "flow {f}: {got:.0} vs max-min {want:.0}");
    }
}

/// Seed 000 Section IX's network (N = 9; flow RTTs 204 ms and 6 ms): JetMax is delay-
/// insensitive, so the long flow settles at its max-min rate gamma (155 - 100) Mb/s: every
/// 100 ms sample of the last 10 s within 5 %, the short flows within 5 % of a ninth of
/// gamma 100 Mb/s.
#[test]
fn max_min_under_heterogeneous_delay() {
    let n = 9;
    let out = run(&seed000_network("\"jetmax\"", "\"jetmax\"", n, "20s"));
    let want_long = 0.95 * 55e6 * PAYLOAD;
    for (t, r) in series(&out.flow_series, "flow_id", 0, "rate_bps").into_iter().filter(|&(t, _)| t > 10.0) {
        assert!((r / want_long - 1.0).abs() < 0.05, "long flow at {t:.1} s: {r:.0} vs {want_long:.0}");
    }
    for f in 1..=n as i64 {
        let got = mean(&out.flow_series, "flow_id", f, "rate_bps", 10.0, 20.0);
        let want = 0.95 * 100e6 / n as f64 * PAYLOAD;
        assert!((got / want - 1.0).abs() < 0.05, "short flow {f}: {got:.0} vs {want:.0}");
    }
}

/// Parameters are optional and checked: a bad target, interval or gain is refused with the
/// field named.
#[test]
fn parameters_resolve_or_are_refused_by_name() {
    let ok = dumbbell(
        "{ kind = \"jetmax\", gamma = 0.9, interval = \"20ms\" }",
        "{ kind = \"jetmax\", tau = 0.5, probe_wait = \"40ms\" }",
        "10Mbps",
        "5ms",
        &[0.0],
        "1s",
    );
    xcc_sim::resolve(&ok, "ok.toml", xcc_sim::Format::Toml).unwrap();
    for (queue, cc, field) in [
        ("{ kind = \"jetmax\", gamma = 0 }", "\"jetmax\"", "gamma"),
        ("{ kind = \"jetmax\", interval = \"0s\" }", "\"jetmax\"", "interval"),
        ("\"jetmax\"", "{ kind = \"jetmax\", tau = 1.5 }", "tau"),
        ("\"jetmax\"", "{ kind = \"jetmax\", beta = 1 }", "beta"),
    ] {
        let e = resolve_error(&dumbbell(queue, cc, "10Mbps", "5ms", &[0.0], "1s"));
        assert!(e.contains("bad.toml") && e.contains(field), "{queue} {cc}: {e}");
    }
}

/// Bottleneck switching with hop ids: in the parking lot (100 and 60 Mb/s) flow 2, alone with
/// flow 0 on the 60 Mb/s link, stops at 4 s. Flow 0's bottleneck moves from L2 to L1, which it
/// now shares equally with flow 1: both within 5 % of gamma 100 / 2 over the last 3 s of 10.
#[test]
fn bottleneck_moves_when_a_flow_leaves() {
    let out = run(&parking_lot_with_departure("\"jetmax\"", "\"jetmax\"", 4.0, "10s"));
    let before = mean(&out.flow_series, "flow_id", 0, "rate_bps", 2.5, 4.0);
    assert!((before / (0.95 * 30e6 * PAYLOAD) - 1.0).abs() < 0.05, "before: {before}");
    for f in 0..2 {
        let got = mean(&out.flow_series, "flow_id", f, "rate_bps", 7.0, 10.0);
        let want = 0.95 * 50e6 * PAYLOAD;
        assert!((got / want - 1.0).abs() < 0.05, "flow {f} after the departure: {got:.0} vs {want:.0}");
    }
}
