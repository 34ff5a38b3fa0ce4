//! Seed 004's session protocols on real packets: two sessions on a parking lot through the TUN
//! router (its link tasks on their control datagrams, the hosts' sources and destinations on
//! UDP sockets) reach their max-min rates: SLBN, BFYZ, and ERICA and COBB with their link
//! timers. Needs root and namespaces (skipped otherwise, saying so).

use xcc_core::analysis::{max_min_fair, MaxMinProblem};
use xcc_emu::{netns, runner};

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

/// Median delivered rate of each session per 250 ms interval after 1 s (SLBN, BFYZ and COBB
/// converge within a few hundred milliseconds here, in the simulator as in the emulator; the
/// median, because on a loaded 2-core machine one interval may lose the CPU), within 3 % of
/// 99 % of its max-min rate. ERICA (link timers with the measured load) within 6 %: in the
/// simulator too its sessions sit 2.9 % below and 1.9 % above their rates over this run
/// (measured 2026-11-26; the emulator 4.1 % below and 2.1 % above).
#[test]
fn session_protocols_reach_their_max_min_rates_through_the_router() {
    if let Err(e) = netns::check_environment() {
        eprintln!("SKIPPED session_protocols_reach_their_max_min_rates_through_the_router: {e}");
        return;
    }
    let oracle =
        max_min_fair(&MaxMinProblem { capacity: vec![40e6, 12e6], paths: vec![vec![0, 1], vec![0]], demand: vec![] })
            .unwrap();
    for (protocol, tolerance) in [("slbn", 0.03), ("bfyz", 0.03), ("cobb", 0.03), ("erica", 0.06)] {
        let text = scenario(protocol);
        let s = xcc_build::resolve(&text, "emu-sessions.toml", xcc_build::Format::Toml).unwrap();
        let out = runner::emulate(&s).expect("emulated run");
        let series = &out.json["tables"]["flow_series"];
        let times = series["time_s"].as_array().unwrap();
        let ids = series["flow_id"].as_array().unwrap();
        let rates = series["rate_bps"].as_array().unwrap();
        for flow in 0..2u64 {
            let want = oracle.rate[flow as usize] * 0.99;
            let mut window: Vec<f64> = (0..times.len())
                .filter(|&k| ids[k].as_u64() == Some(flow) && times[k].as_f64().unwrap() > 1.0)
                .map(|k| rates[k].as_f64().unwrap())
                .collect();
            window.sort_by(f64::total_cmp);
            let median = window[window.len() / 2];
            eprintln!(
                "{protocol} session {flow}: rates {window:?}; median {median:.0} vs oracle {want:.0} ({:+.2} %)",
                100.0 * (median / want - 1.0)
            );
            assert!(
                (median / want - 1.0).abs() < tolerance,
                "{protocol} session {flow}: median {median} vs {want} ({tolerance})"
            );
        }
        let st = &out.json["stats"];
        eprintln!("{protocol} router {st:?}");
        assert_eq!(out.json["tables"]["flows"]["kind"][0], "session");
        assert!(st["session_control_read"].as_u64().unwrap() > 10, "control packets crossed the router");
        assert!(st["session_control_back"].as_u64().unwrap() > 5, "and came back to their sources");
        assert_eq!(st["session_malformed"], 0);
        assert_eq!(st["session_unreadable"], 0);
        assert!(out.kernel.iter().all(|k| k.drops() == 0), "{:?}", out.kernel);
    }
    assert_eq!(netns::list_with_prefix(&netns::run_prefix()).unwrap(), Vec::<String>::new());
}
