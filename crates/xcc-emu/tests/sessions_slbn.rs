//! Seed 004's session protocols on real packets: two sessions on a parking lot through the TUN
//! router (its link tasks on their control datagrams, the hosts' sources and destinations on
//! UDP sockets) deliver what the simulator delivers on the same scenario, and the max-min rates
//! where the protocol reaches them: SLBN, BFYZ, and ERICA, COBB, RCP and PIQI-RCP with their
//! link timers. Needs root and namespaces (skipped otherwise, saying so).

use xcc_core::analysis::{max_min_fair, MaxMinProblem};
use xcc_emu::os::netns;
use xcc_emu::run::runner;

/// s1 -> d1 crosses r1-r2 (40 Mbit/s) and r2-r3 (12 Mbit/s); s2 -> d2 only r1-r2. Max-min:
/// 12 and 28 Mbit/s; each session sends 99 % of its rate as data (1 % is the control budget).
fn scenario(protocol: &str) -> String {
    format!(
        r#"
name = "emu-{protocol}-parking-lot"
duration = "4s"
[[host]]
name = "s{{i}}"
count = 2
[[host]]
name = "d{{i}}"
count = 2
[[router]]
name = "r{{i}}"
count = 3
[[link]]
between = ["s{{i}}", "r1"]
count = 2
rate = "1Gbps"
delay = "100us"
buffer = "unlimited"
[[link]]
between = ["r1", "r2"]
rate = "40Mbps"
delay = "5ms"
buffer = "unlimited"
[[link]]
between = ["r2", "r3"]
rate = "12Mbps"
delay = "5ms"
buffer = "unlimited"
[[link]]
between = ["r3", "d1"]
rate = "1Gbps"
delay = "100us"
buffer = "unlimited"
[[link]]
between = ["r2", "d2"]
rate = "1Gbps"
delay = "100us"
buffer = "unlimited"
[[flow]]
name = "f{{i}}"
count = 2
kind = "session"
src = "s{{i}}"
dst = "d{{i}}"
protocol = "{protocol}"
packet_size = "1000B"
[metrics]
interval = "250ms"
"#
    )
}

/// A session's delivered rate over (from, to] seconds from `(time, delivered bytes)` samples.
fn window_rate(samples: &[(f64, f64)], from: f64, to: f64) -> f64 {
    let at = |t: f64| samples.iter().find(|(x, _)| (x - t).abs() < 1e-6).expect("a sample at the window's ends").1;
    (at(to) - at(from)) * 8.0 / (to - from)
}

/// The simulator's `(time, delivered bytes)` samples of flow `k`.
fn sim_samples(out: &xcc_sim::RunOutput, k: i64) -> Vec<(f64, f64)> {
    let t = &out.flow_series;
    let (time, ids, bytes) = (t.f64("time_s"), t.i64("flow_id"), t.i64("delivered_bytes"));
    (0..time.len()).filter(|&i| ids[i] == k).map(|i| (time[i], bytes[i] as f64)).collect()
}

/// Each protocol on the parking lot, emulated and simulated:
///
/// - against the simulator: each session's delivered rate over 1-4 s within 1 % of the
///   simulated one (measured 2026-11-26: SLBN, BFYZ, COBB, PIQI-RCP, RCP within 0.3 %);
///   RCP, still moving in this window, within 2 %; ERICA within 3.5 %: its load factor is
///   measured over 5 ms of real time, so it follows the machine's timing (measured -1.28 % on
///   a quiet machine, -2.6 % while another simulation and a build ran on the two cores);
/// - against the oracle: the median of its 250 ms rates after 1 s (the median, because on a
///   loaded 2-core machine one interval may lose the CPU) within 3 % of 99 % of its max-min
///   rate (PIQI-RCP 98 %, its gamma, as in the simulator), for SLBN, BFYZ, COBB and PIQI-RCP,
///   which converge within a few hundred milliseconds here in the simulator too (measured
///   within 0.1 %). ERICA and RCP are held to the simulator only: ERICA settles 2.9 % below
///   and 1.9 % above the oracle in the simulator over this window (its fixed points,
///   docs/algorithms/erica.md), RCP takes tens of seconds (docs/algorithms/rcp.md; 1.97 of
///   11.9 Mbit/s at 1-4 s, simulated and emulated alike).
#[test]
fn session_protocols_through_the_router_match_the_simulator() {
    if let Err(e) = netns::check_environment() {
        eprintln!("SKIPPED session_protocols_through_the_router_match_the_simulator: {e}");
        return;
    }
    let oracle =
        max_min_fair(&MaxMinProblem { capacity: vec![40e6, 12e6], paths: vec![vec![0, 1], vec![0]], demand: vec![] })
            .unwrap();
    // (protocol, share of the max-min rate delivered, bound against the simulator)
    let cases = [
        ("slbn", Some(0.99), 0.01),
        ("bfyz", Some(0.99), 0.01),
        ("cobb", Some(0.99), 0.01),
        ("piqi-rcp", Some(0.98), 0.01),
        ("erica", None, 0.035),
        ("rcp", None, 0.02),
    ];
    for (protocol, share, vs_sim) in cases {
        let text = scenario(protocol);
        let s = xcc_build::resolve(&text, "emu-sessions.toml", xcc_build::Format::Toml).unwrap();
        let (_, sim) = xcc_sim::run_text(&text, "emu-sessions.toml", xcc_build::Format::Toml, None, true, None)
            .expect("simulated run");
        let out = runner::emulate(&s).expect("emulated run");
        let series = &out.json["tables"]["flow_series"];
        let times = series["time_s"].as_array().unwrap();
        let ids = series["flow_id"].as_array().unwrap();
        let rates = series["rate_bps"].as_array().unwrap();
        let bytes = series["delivered_bytes"].as_array().unwrap();
        for flow in 0..2u64 {
            let rows: Vec<usize> = (0..times.len()).filter(|&k| ids[k].as_u64() == Some(flow)).collect();
            let emu: Vec<(f64, f64)> =
                rows.iter().map(|&k| (times[k].as_f64().unwrap(), bytes[k].as_f64().unwrap())).collect();
            let (e, m) = (window_rate(&emu, 1.0, 4.0), window_rate(&sim_samples(&sim, flow as i64), 1.0, 4.0));
            eprintln!("{protocol} session {flow}: 1-4 s emu {e:.0} sim {m:.0} ({:+.2} %)", 100.0 * (e / m - 1.0));
            assert!((e / m - 1.0).abs() < vs_sim, "{protocol} session {flow}: emu {e} vs sim {m} ({vs_sim})");
            if let Some(share) = share {
                let want = oracle.rate[flow as usize] * share;
                let mut window: Vec<f64> = rows
                    .iter()
                    .filter(|&&k| times[k].as_f64().unwrap() > 1.0)
                    .map(|&k| rates[k].as_f64().unwrap())
                    .collect();
                window.sort_by(f64::total_cmp);
                let median = window[window.len() / 2];
                eprintln!("  median {median:.0} vs oracle {want:.0} ({:+.2} %)", 100.0 * (median / want - 1.0));
                assert!(
                    (median / want - 1.0).abs() < 0.03,
                    "{protocol} session {flow}: median {median} vs {want} (3 %)"
                );
            }
        }
        let st = &out.json["stats"];
        assert_eq!(out.json["tables"]["flows"]["kind"][0], "session");
        assert!(st["session_control_read"].as_u64().unwrap() > 10, "control packets crossed the router");
        assert!(st["session_control_back"].as_u64().unwrap() > 5, "and came back to their sources");
        assert_eq!(st["session_malformed"], 0);
        assert_eq!(st["session_unreadable"], 0);
        assert!(out.kernel.iter().all(|k| k.drops() == 0), "{:?}", out.kernel);
    }
    assert_eq!(netns::list_with_prefix(&netns::run_prefix()).unwrap(), Vec::<String>::new());
}
