//! Session protocols converge to the exact max-min rates on small hand-solved networks
//! (seed 004, Section III: "every session ends at the exact max-min rate"), and SLBN does on a
//! random transit-stub network with thousands of sessions.
//!
//! `converges::<P>` is generic so each session protocol can add its own cases.

use serde_json::{json, Value};
use xcc_build::sessions::{generate, transit_stub, Edge, Graph, Sessions, TransitStubParams, Window, WorkloadSpec};
use xcc_core::algorithms::slbn::Slbn;
use xcc_core::session::SessionProtocol;
use xcc_core::{Dur, Time};
use xcc_sim::fluid::protocols::run;
use xcc_sim::fluid::RunSettings;

const HOSTS: u32 = 16;

/// A chain of routers 0 - 1 - ... with the given capacities (bit/s) and 2 ms links; every
/// router has `HOSTS` hosts on links fast enough never to bottleneck (the paper's "virtual
/// link of infinite capacity").
fn chain(capacities: &[f64]) -> Graph {
    let edges = capacities
        .iter()
        .enumerate()
        .map(|(i, &c)| Edge { a: i as u32, b: i as u32 + 1, capacity: c, delay: Dur::from_ms(2) })
        .collect();
    let routers = capacities.len() as u32 + 1;
    Graph {
        routers,
        edges,
        access_routers: (0..routers).collect(),
        hosts_per_access_router: HOSTS,
        host_capacity: 1e15,
        host_delay: Dur::from_us(1),
    }
}

/// Session from router `a` to router `b` (distinct hosts per session), starting at `start_ms`.
fn add(s: &mut Sessions, a: u32, b: u32, start_ms: u64, demand: f64) {
    let k = s.len() as u32;
    s.push(a * HOSTS + k, b * HOSTS + k + 1, Time::ZERO + Dur::from_ms(start_ms), None, None, demand);
}

/// Runs `P` for `secs` and returns (rate, max-min rate) per session present at the end.
fn final_rates<P: SessionProtocol>(params: Value, net: &Graph, sessions: Sessions, secs: f64) -> Vec<(f64, f64)> {
    let settings = RunSettings {
        duration: Time::ZERO + Dur::from_secs_f64(secs),
        sample_interval: Dur::from_secs_f64(secs / 4.0),
        data_share: 0.99,
        record_final: true,
    };
    let out = run::<P>(&params, net, sessions, settings, None).unwrap();
    out.finals.rate_bps.iter().copied().zip(out.finals.maxmin_bps.iter().copied()).collect()
}

/// Every session's final rate equals the max-min rate up to `rel` (relative).
fn converges<P: SessionProtocol>(params: Value, net: &Graph, sessions: Sessions, secs: f64, rel: f64) {
    let n = sessions.len();
    let r = final_rates::<P>(params, net, sessions, secs);
    assert_eq!(r.len(), n);
    for (i, (got, want)) in r.iter().enumerate() {
        assert!((got - want).abs() <= rel * want, "{}: session {i}: rate {got}, max-min {want}", P::NAME);
    }
}

fn slbn_both_join_variants(net: &Graph, sessions: Sessions, expect: &[f64]) {
    for variant in [false, true] {
        let params = json!({ "join_lowers_bw": variant });
        let r = final_rates::<Slbn>(params, net, sessions.clone(), 2.0);
        let got: Vec<f64> = r.iter().map(|x| x.0).collect();
        let oracle: Vec<f64> = r.iter().map(|x| x.1).collect();
        for i in 0..expect.len() {
            // Hand-solved rates, and the oracle agrees; "exactly" up to float rounding.
            assert!((oracle[i] - expect[i]).abs() <= 1e-9 * expect[i], "oracle {oracle:?} vs hand {expect:?}");
            assert!((got[i] - expect[i]).abs() <= 1e-9 * expect[i], "join variant {variant}: {got:?} vs {expect:?}");
        }
    }
}

#[test]
fn slbn_single_link() {
    let net = chain(&[90e6]);
    let mut s = Sessions::default();
    for i in 0..3 {
        add(&mut s, 0, 1, i * 7, f64::INFINITY);
    }
    slbn_both_join_variants(&net, s, &[30e6; 3]);
}

/// Parking lot: a long session over three links, one short session per link; the middle link
/// is the tightest (40): long = short2 = 20, then short1 = 100 - 20 = 80, short3 = 60 - 20 = 40.
#[test]
fn slbn_parking_lot() {
    let net = chain(&[100e6, 40e6, 60e6]);
    let mut s = Sessions::default();
    add(&mut s, 0, 3, 0, f64::INFINITY);
    add(&mut s, 0, 1, 3, f64::INFINITY);
    add(&mut s, 1, 2, 5, f64::INFINITY);
    add(&mut s, 2, 3, 9, f64::INFINITY);
    slbn_both_join_variants(&net, s, &[20e6, 80e6, 20e6, 40e6]);
}

/// Two bottleneck levels: s0, s1 cross L0 (20) and L1 (100); s2, s3 only L1.
/// L0: 10 each; L1: (100 - 20) / 2 = 40 each.
#[test]
fn slbn_two_level_bottleneck() {
    let net = chain(&[20e6, 100e6]);
    let mut s = Sessions::default();
    add(&mut s, 0, 2, 0, f64::INFINITY);
    add(&mut s, 0, 2, 1, f64::INFINITY);
    add(&mut s, 1, 2, 2, f64::INFINITY);
    add(&mut s, 1, 2, 3, f64::INFINITY);
    slbn_both_join_variants(&net, s, &[10e6, 10e6, 40e6, 40e6]);
}

/// A session asking for less than its fair share gets its demand; the others share the rest.
#[test]
fn slbn_demand_limited_session() {
    let net = chain(&[100e6]);
    let mut s = Sessions::default();
    add(&mut s, 0, 1, 0, 10e6);
    add(&mut s, 0, 1, 1, f64::INFINITY);
    add(&mut s, 0, 1, 2, f64::INFINITY);
    slbn_both_join_variants(&net, s, &[10e6, 45e6, 45e6]);
}

/// Sessions leave: the others take the freed bandwidth (exact again after the churn).
#[test]
fn slbn_after_departures() {
    let net = chain(&[20e6, 100e6]);
    let mut s = Sessions::default();
    for i in 0..6 {
        add(&mut s, i % 2, 2, i as u64, f64::INFINITY);
    }
    s.stop[0] = Some(Time::ZERO + Dur::from_ms(300));
    s.stop[3] = Some(Time::ZERO + Dur::from_ms(400));
    // Left: s2, s4 over L0+L1; s1, s5 on L1. L0: 10 each; L1: (100 - 20) / 2 = 40.
    let r = final_rates::<Slbn>(Value::Null, &net, s, 2.0);
    let got: Vec<f64> = r.iter().map(|x| x.0).collect();
    assert_eq!(got.len(), 4);
    let want = [40e6, 10e6, 10e6, 40e6]; // sessions 1, 2, 4, 5
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() <= 1e-9 * w, "{got:?}");
    }
}

/// A random transit-stub network (a small instance of the generator) with 3,000 sessions and
/// no churn: every final rate within 0.1 % of the oracle.
#[test]
fn slbn_transit_stub_thousands_of_sessions() {
    let p = TransitStubParams {
        transit_domains: 2,
        transit_routers_per_domain: 4,
        stubs_per_transit_router: 3,
        routers_per_stub: 4,
        hosts_per_stub_router: 200,
        ..TransitStubParams::medium()
    };
    let net = transit_stub(&p, 11).unwrap();
    let spec = WorkloadSpec {
        arrivals: vec![Window { count: 3000, from_s: 0.0, to_s: 0.3 }],
        departures: vec![],
        size: None,
        demand_bps: None,
    };
    let sessions = generate(&spec, &net, 11).unwrap();
    converges::<Slbn>(Value::Null, &net, sessions, 4.0, 1e-3);
}

/// PIQI-RCP (reconstructed) through feedback packets: on one link its rates settle near
/// gamma C / N (gamma = 0.98, its target utilisation), within 3 %.
#[test]
fn piqi_rcp_single_link_settles_near_gamma_fair_share() {
    use xcc_core::algorithms::piqi_rcp::session::PiqiRcp;
    let net = chain(&[90e6]);
    let mut s = Sessions::default();
    for i in 0..3 {
        add(&mut s, 0, 1, i * 7, f64::INFINITY);
    }
    let r = final_rates::<PiqiRcp>(Value::Null, &net, s, 6.0);
    for (got, maxmin) in r {
        let target = 0.98 * maxmin;
        assert!((got - target).abs() <= 0.03 * target, "rate {got}, target {target}");
    }
}
