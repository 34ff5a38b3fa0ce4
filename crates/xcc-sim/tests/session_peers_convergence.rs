//! ERICA, BFYZ and COBB (seed 004's comparison algorithms) in the session simulator, on the
//! small hand-solved networks of protocols.md 6.8-5 (single link, parking lot, two-level
//! bottleneck, demand-limited session), with departures, and BFYZ on a random transit-stub
//! network. Tolerances, and why:
//!
//! - BFYZ (reconstructed consistent marking): the max-min rates up to float rounding (1e-9), as
//!   the paper claims convergence to the max-min fair state.
//! - COBB (reconstructed): the same 1e-9 here, where the period T = 70 ms exceeds every
//!   round-trip time (the condition the protocol needs, seed 004 Section I-A).
//! - ERICA: approximately max-min by design: a link whose load factor z is in [1, 1 + delta]
//!   counts as underloaded and hands out `max(MaxAllocPrevious, CCR / z)`, so allocations with
//!   up to `1 + delta` times the target load are fixed points. Data is 99 % of the assigned rate
//!   (the rest is control budget), which ERICA's measured load sees: the band is
//!   `[x*, (1 + delta) x* / 0.99]`, with 1 % slack for the discrete averaging intervals.

use serde_json::{json, Value};
use xcc_build::sessions::{generate, transit_stub, Edge, Graph, Sessions, TransitStubParams, Window, WorkloadSpec};
use xcc_core::algorithms::bfyz::Bfyz;
use xcc_core::algorithms::cobb::Cobb;
use xcc_core::algorithms::erica::Erica;
use xcc_core::session::SessionProtocol;
use xcc_core::{Dur, Time};
use xcc_sim::fluid::protocols::run;
use xcc_sim::fluid::RunSettings;

const HOSTS: u32 = 16;
const INF: f64 = f64::INFINITY;
const DATA_SHARE: f64 = 0.99;

/// A chain of routers with the given capacities (bit/s) and 2 ms links; hosts on links that
/// never bottleneck.
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

/// Session from router `a` to router `b` starting at `start_ms`.
fn add(s: &mut Sessions, a: u32, b: u32, start_ms: u64, demand: f64) {
    let k = s.len() as u32;
    s.push(a * HOSTS + k, b * HOSTS + k + 1, Time::ZERO + Dur::from_ms(start_ms), None, None, demand);
}

/// (rate, max-min rate) of every session present after `secs`.
fn final_rates<P: SessionProtocol>(params: &Value, net: &Graph, sessions: Sessions, secs: f64) -> Vec<(f64, f64)> {
    let settings = RunSettings {
        duration: Time::ZERO + Dur::from_secs_f64(secs),
        sample_interval: Dur::from_secs_f64(secs / 4.0),
        data_share: DATA_SHARE,
        record_final: true,
    };
    let out = run::<P>(params, net, sessions, settings, None).unwrap();
    out.finals.rate_bps.iter().copied().zip(out.finals.maxmin_bps.iter().copied()).collect()
}

/// The four networks, each with its hand-solved rates.
fn cases() -> Vec<(&'static str, Graph, Sessions, Vec<f64>)> {
    let mut v = Vec::new();
    let mut s = Sessions::default();
    for i in 0..3 {
        add(&mut s, 0, 1, i * 7, INF);
    }
    v.push(("single link", chain(&[90e6]), s, vec![30e6; 3]));
    // Long session over three links, one short per link; middle link (40) tightest.
    let mut s = Sessions::default();
    add(&mut s, 0, 3, 0, INF);
    add(&mut s, 0, 1, 3, INF);
    add(&mut s, 1, 2, 5, INF);
    add(&mut s, 2, 3, 9, INF);
    v.push(("parking lot", chain(&[100e6, 40e6, 60e6]), s, vec![20e6, 80e6, 20e6, 40e6]));
    // s0, s1 cross L0 (20) and L1 (100); s2, s3 only L1: 10, 10, 40, 40.
    let mut s = Sessions::default();
    add(&mut s, 0, 2, 0, INF);
    add(&mut s, 0, 2, 1, INF);
    add(&mut s, 1, 2, 2, INF);
    add(&mut s, 1, 2, 3, INF);
    v.push(("two-level bottleneck", chain(&[20e6, 100e6]), s, vec![10e6, 10e6, 40e6, 40e6]));
    let mut s = Sessions::default();
    add(&mut s, 0, 1, 0, 10e6);
    add(&mut s, 0, 1, 1, INF);
    add(&mut s, 0, 1, 2, INF);
    v.push(("demand-limited session", chain(&[100e6]), s, vec![10e6, 45e6, 45e6]));
    v
}

/// Every case ends within `[lo, hi]` times the hand-solved rate, and the oracle agrees with the
/// hand solution.
fn within<P: SessionProtocol>(params: Value, secs: f64, lo: f64, hi: f64) {
    for (name, net, sessions, expect) in cases() {
        let r = final_rates::<P>(&params, &net, sessions, secs);
        assert_eq!(r.len(), expect.len(), "{name}");
        for (i, (&(got, oracle), want)) in r.iter().zip(&expect).enumerate() {
            assert!((oracle - want).abs() <= 1e-9 * want, "{name}: oracle {oracle} vs hand {want}");
            assert!(
                got >= lo * want && got <= hi * want,
                "{} {name}: session {i} at {got} ({:+.3} % of max-min {want}); band [{lo}, {hi}]",
                P::NAME,
                100.0 * (got / want - 1.0)
            );
        }
    }
}

#[test]
fn bfyz_small_networks_exact() {
    within::<Bfyz>(Value::Null, 2.0, 1.0 - 1e-9, 1.0 + 1e-9);
    // The earlier return passes converge here too (they differ under mass arrival).
    within::<Bfyz>(json!({ "link": { "return_pass": "mark" } }), 2.0, 1.0 - 1e-9, 1.0 + 1e-9);
    within::<Bfyz>(json!({ "link": { "return_pass": "ignore" } }), 2.0, 1.0 - 1e-9, 1.0 + 1e-9);
    within::<Bfyz>(json!({ "closed_loop": true }), 3.0, 1.0 - 1e-9, 1.0 + 1e-9);
    within::<Bfyz>(json!({ "link": { "floor_c_over_n": false } }), 2.0, 1.0 - 1e-9, 1.0 + 1e-9);
}

#[test]
fn cobb_small_networks_exact_when_t_exceeds_the_rtt() {
    within::<Cobb>(Value::Null, 3.0, 1.0 - 1e-9, 1.0 + 1e-9);
}

#[test]
fn erica_small_networks_within_the_delta_band() {
    let delta = 0.1;
    within::<Erica>(Value::Null, 3.0, 0.99, (1.0 + delta) / DATA_SHARE * 1.01);
    within::<Erica>(json!({ "closed_loop": true }), 3.0, 0.99, (1.0 + delta) / DATA_SHARE * 1.01);
    // With U = 0.9 ERICA aims at 90 % of each capacity.
    let u = 0.9;
    within::<Erica>(
        json!({ "link": { "target_utilisation": u } }),
        3.0,
        0.99 * u,
        u * (1.0 + delta) / DATA_SHARE * 1.01,
    );
}

/// Departures: Close cells remove the per-session state (ERICA, BFYZ); COBB forgets a flow
/// one period after its last packet. Left: s1, s5 on L1 only; s2, s4 over L0 + L1:
/// L0 gives 10 each, L1 (100 - 20) / 2 = 40.
#[test]
fn departures_free_bandwidth_for_the_rest() {
    fn sessions() -> Sessions {
        let mut s = Sessions::default();
        for i in 0..6 {
            add(&mut s, i % 2, 2, i as u64, INF);
        }
        s.stop[0] = Some(Time::ZERO + Dur::from_ms(300));
        s.stop[3] = Some(Time::ZERO + Dur::from_ms(400));
        s
    }
    let net = chain(&[20e6, 100e6]);
    let want = [40e6, 10e6, 10e6, 40e6];
    let check = |name: &str, r: Vec<(f64, f64)>, lo: f64, hi: f64| {
        assert_eq!(r.len(), 4, "{name}");
        for ((got, oracle), w) in r.iter().zip(want) {
            assert!((oracle - w).abs() <= 1e-9 * w);
            assert!(*got >= lo * w && *got <= hi * w, "{name}: {r:?}");
        }
    };
    check("bfyz", final_rates::<Bfyz>(&Value::Null, &net, sessions(), 2.0), 1.0 - 1e-9, 1.0 + 1e-9);
    check("cobb", final_rates::<Cobb>(&Value::Null, &net, sessions(), 3.0), 1.0 - 1e-9, 1.0 + 1e-9);
    check("erica", final_rates::<Erica>(&Value::Null, &net, sessions(), 3.0), 0.99, 1.1 / DATA_SHARE * 1.01);
}

/// A random transit-stub network with 1,000 sessions arriving within 0.3 s and no churn, RM
/// cells closed loop (one in flight: the open-loop default costs ~40 times the events): after
/// 8 s every BFYZ rate is the oracle's max-min rate up to float rounding. (Measured: 96 % within
/// 0.1 % at 1 s, 99 % at 4 s, all exact at 8 s. Before the return pass stamped ER, 92 % were
/// within 0.1 % at 8 s and one session was 38 % off at 16 s; with open-loop cells 94-99.8 % are
/// within 0.1 % from 4 s to 12 s but single sessions keep moving by up to 10-18 %:
/// docs/algorithms/bfyz.md.)
#[test]
fn bfyz_transit_stub_network() {
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
        arrivals: vec![Window { count: 1000, from_s: 0.0, to_s: 0.3 }],
        departures: vec![],
        size: None,
        demand_bps: None,
    };
    let sessions = generate(&spec, &net, 11).unwrap();
    let r = final_rates::<Bfyz>(&json!({ "closed_loop": true }), &net, sessions, 8.0);
    assert_eq!(r.len(), 1000);
    let worst = r.iter().map(|(got, want)| ((got - want) / want).abs()).fold(0.0, f64::max);
    assert!(worst <= 1e-9, "worst session off by {:.3e}", worst);
}

/// RCP (seed 004's alpha 0.1, beta 1) through feedback packets. Its fixed point is "every
/// bottleneck's input equals its capacity, no queue": data is 99 % of the rate and the feedback
/// packets add a little, so rates sit up to 1/0.99 times max-min (+1 %), less the feedback's
/// share; 1 % of slack each way for the per-interval measurement (measured after 20 s:
/// +0.2 % to +0.9 %). Slow to get there: alpha 0.1 and ns-2's average RTT, which starts at
/// 200 ms and falls only slowly towards these networks' few-millisecond RTTs, give T/d = 0.05
/// and a rate step of at most 0.5 % per 10 ms (8 s: still 6-14 % below, 12 s: within 1 %).
#[test]
fn rcp_small_networks_at_its_fixed_point() {
    use xcc_core::algorithms::rcp::session::Rcp;
    within::<Rcp>(Value::Null, 20.0, 0.99, 1.0 / DATA_SHARE + 0.01);
}

/// RCP: departures free bandwidth without any signalling (the links measure their input).
#[test]
fn rcp_departures() {
    use xcc_core::algorithms::rcp::session::Rcp;
    let mut s = Sessions::default();
    for i in 0..6 {
        add(&mut s, i % 2, 2, i as u64, INF);
    }
    s.stop[0] = Some(Time::ZERO + Dur::from_ms(300));
    s.stop[3] = Some(Time::ZERO + Dur::from_ms(400));
    let r = final_rates::<Rcp>(&Value::Null, &chain(&[20e6, 100e6]), s, 20.0);
    let want = [40e6, 10e6, 10e6, 40e6];
    assert_eq!(r.len(), 4);
    for ((got, oracle), w) in r.iter().zip(want) {
        assert!((oracle - w).abs() <= 1e-9 * w);
        assert!(*got >= 0.99 * w && *got <= (1.0 / DATA_SHARE + 0.01) * w, "{r:?}");
    }
}

/// Same seed, same run: every sample and every final rate identical (RCP and the fixed BFYZ
/// on a transit-stub network with arrivals and departures).
#[test]
fn rcp_and_bfyz_runs_are_deterministic() {
    use xcc_core::algorithms::rcp::session::Rcp;
    let p = TransitStubParams {
        transit_domains: 1,
        transit_routers_per_domain: 3,
        stubs_per_transit_router: 2,
        routers_per_stub: 3,
        hosts_per_stub_router: 50,
        ..TransitStubParams::medium()
    };
    let net = transit_stub(&p, 5).unwrap();
    let spec = WorkloadSpec {
        arrivals: vec![Window { count: 150, from_s: 0.0, to_s: 0.2 }],
        departures: vec![Window { count: 30, from_s: 0.3, to_s: 0.5 }],
        size: None,
        demand_bps: None,
    };
    let settings = RunSettings {
        duration: Time::ZERO + Dur::from_secs(1),
        sample_interval: Dur::from_ms(100),
        data_share: DATA_SHARE,
        record_final: true,
    };
    fn key(o: &xcc_sim::fluid::SessionOutput) -> Vec<u64> {
        let s = &o.samples;
        [&s.es_mean, &s.es_p10, &s.es_p90, &s.ee_mean, &s.ee_max, &s.max_queue_bits, &o.finals.rate_bps]
            .iter()
            .flat_map(|v| v.iter().map(|x| x.to_bits()))
            .chain([o.stats.events, o.stats.control_packets])
            .collect()
    }
    let go = |name: &str| {
        let sessions = generate(&spec, &net, 5).unwrap();
        let o = match name {
            "rcp" => run::<Rcp>(&Value::Null, &net, sessions, settings.clone(), None),
            _ => run::<Bfyz>(&Value::Null, &net, sessions, settings.clone(), None),
        };
        key(&o.unwrap())
    };
    for name in ["rcp", "bfyz"] {
        let a = go(name);
        assert!(a.len() > 10);
        assert_eq!(a, go(name), "{name}");
    }
}

/// RCP's parameters are strict: a preset by name, nothing else unknown.
#[test]
fn rcp_parameters_are_checked() {
    use xcc_core::algorithms::rcp::session::Rcp;
    let (net, sessions) = {
        let mut s = Sessions::default();
        add(&mut s, 0, 1, 0, INF);
        (chain(&[10e6]), s)
    };
    let settings = RunSettings {
        duration: Time::ZERO + Dur::from_ms(100),
        sample_interval: Dur::from_ms(50),
        data_share: DATA_SHARE,
        record_final: false,
    };
    for (params, field) in [(json!({ "preset": "xcp" }), "preset"), (json!({ "alpha": 0.2 }), "alpha")] {
        let e = run::<Rcp>(&params, &net, sessions.clone(), settings.clone(), None).err().unwrap();
        assert!(e.contains("protocol_params") && e.contains(field), "{e}");
    }
    assert!(run::<Rcp>(&json!({ "preset": "stanford" }), &net, sessions, settings, None).is_ok());
}
