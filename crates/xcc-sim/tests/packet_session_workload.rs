//! `[sessions]` on the packet engine: seed 004's generated workloads (a transit-stub network,
//! hosts that exist only once used, arrivals over a window) with every data packet simulated.
//!
//! On a random transit-stub network with 2,000 greedy SLBN sessions and no churn, every
//! session's rate, measured from the data delivered over the last second, is the max-min
//! oracle's within 1 % (the sampler's `session_rates`, `crates/xcc-sim/src/sim/session_metrics.rs`).
//! Packets are 250 B so that the slowest session still delivers some 200 packets in the window
//! (pacing is exact, so one packet is the measurement's resolution).

use xcc_sim::output::Column;
use xcc_sim::{run_text, Format, RunOutput, Table};

/// Transit-stub parameters with seed 004's link speeds divided by 5 (1 Gb/s transit, 200 Mb/s
/// stub and transit-stub links, 100 Mb/s host links as in the paper).
fn topology(transit_domains: u32, transit_routers: u32, stubs: u32, stub_routers: u32, hosts: u32) -> String {
    format!(
        "{{ transit_stub = {{ transit_domains = {transit_domains}, transit_routers_per_domain = {transit_routers}, \
         stubs_per_transit_router = {stubs}, routers_per_stub = {stub_routers}, hosts_per_stub_router = {hosts}, \
         transit_capacity_bps = 1e9, transit_stub_capacity_bps = 200e6, stub_capacity_bps = 200e6, \
         host_capacity_bps = 100e6 }} }}"
    )
}

/// `sessions` greedy SLBN sessions arriving over the first 200 ms, packets of 1000 B; rates
/// sampled every `sample_s` over the whole interval before.
fn scenario(topology: &str, sessions: u32, duration_s: f64, sample_s: f64, seed: u64) -> String {
    format!(
        r#"name = "sessions-ts"
duration = "{duration_s}s"
seed = {seed}

[sessions]
protocol = "slbn"
packet_size = "1000B"
sample_interval = "{sample_s}s"
topology = {topology}
workload = {{ arrivals = [{{ count = {sessions}, from_s = 0.0, to_s = 0.2 }}] }}
"#
    )
}

fn run(text: &str) -> RunOutput {
    run_text(text, "sessions.toml", Format::Toml, None, false, None).unwrap_or_else(|e| panic!("{e}")).1
}

/// Every session is rated at the last sample and within `tolerance_pct` of the oracle.
fn check_rates(out: &RunOutput, sessions: usize, tolerance_pct: f64) {
    let r = &out.session_rates;
    let (rate, exact, err) = (r.f64("rate_bps"), r.f64("maxmin_bps"), r.f64("error_pct"));
    assert_eq!(r.rows(), sessions, "every session is rated at the last sample");
    let worst = (0..r.rows()).max_by(|&a, &b| err[a].abs().total_cmp(&err[b].abs())).unwrap();
    eprintln!(
        "worst session: {:.0} bit/s measured against {:.0} ({:+.3} %); slowest {:.0} bit/s",
        rate[worst],
        exact[worst],
        err[worst],
        exact.iter().cloned().fold(f64::INFINITY, f64::min)
    );
    assert!(err.iter().all(|e| e.abs() < tolerance_pct), "worst {:+.3} %", err[worst]);
}

/// 2,000 sessions on 2 transit domains of 3 routers with 3 stubs of 4 routers each (78
/// routers, 4,320 hosts): converged by 2.5 s, so the last sample measures 2.5-3.75 s. Every
/// session within 1 % (largest error 0.39 %, 2026-11-26). About 10 s: the simulator's crates
/// are optimised in test builds too (Cargo.toml).
#[test]
fn slbn_two_thousand_sessions_match_the_oracle() {
    let out = run(&scenario(&topology(2, 3, 3, 4, 60), 2000, 3.75, 1.25, 3));
    check_rates(&out, 2000, 1.0);
}

/// The same check on 300 sessions over 21 routers (one transit domain of 3, 2 stubs of 3).
#[test]
fn slbn_sessions_match_the_oracle_on_a_small_transit_stub_network() {
    let out = run(&scenario(&topology(1, 3, 2, 3, 60), 300, 2.0, 1.0, 5));
    check_rates(&out, 300, 1.0);
    // Converged, nothing overshoots: what arrives at the bottlenecks over the last second is
    // their capacity (less the unused control budget), not more.
    let offered = out.session_samples.f64("ee_in_max");
    let last = offered[offered.len() - 1];
    assert!((-2.0..0.5).contains(&last), "offered E_e at 2 s: {offered:?}");
    // Seed 004's own E_s and E_e, on the assigned rates: converged SLBN assigns the oracle's
    // rates (the session driver's are exact), and the assigned load of a bottleneck is its
    // capacity.
    let s = &out.session_samples;
    let (p10, p90) = (s.f64("es_asg_p10"), s.f64("es_asg_p90"));
    let n = p10.len() - 1;
    assert!(p10[n].abs() < 0.1 && p90[n].abs() < 0.1, "assigned E_s at 2 s: p10 {} p90 {}", p10[n], p90[n]);
    let ee = s.f64("ee_asg_max");
    assert!(ee[n].abs() < 0.1, "assigned E_e at 2 s: {ee:?}");
}

/// The same network sampled every 50 ms (the reproductions' interval): the slowest sessions
/// deliver some 25 packets of 1000 B per window, so counting bytes over the window's length
/// would be off by up to one packet (4 %); timed from the last delivery before the window to
/// the last in it, what is left is the delivery times' jitter, and every session is again
/// within 1 % at 2 s (measured -0.68 to +0.56 %; with 10 ms windows -3.8 to +4.3 %, with 1 s
/// windows -0.03 to +0.37 %).
#[test]
fn short_windows_measure_paced_rates_within_the_jitter() {
    let out = run(&scenario(&topology(1, 3, 2, 3, 60), 300, 2.0, 0.05, 5));
    let slowest = out.session_rates.f64("maxmin_bps").iter().cloned().fold(f64::INFINITY, f64::min);
    assert!(slowest * 0.05 / 8000.0 < 30.0, "a session sends under 30 packets per window ({slowest} bit/s)");
    check_rates(&out, 300, 1.0);
}

/// BFYZ on the same 300-session network, at packet level: the bulk of the sessions is at the
/// oracle's rate (10th to 90th percentile of the error within 0.5 %, 95 % of the sessions
/// within 1 %), but not every one: measured 2026-11-26, two late sessions with high max-min
/// rates (74 and 93 Mb/s) were 8-12 % low at 2 s and one still 7.7 % at 5 s, where SLBN has
/// every session within 0.44 %. The session driver (fluid data, same laws, same network and
/// workload) has the same two sessions further off (261 at -41 % at 2 s, 257 at -57 % at 5 s),
/// so the tail comes from the BFYZ law as implemented, not from the packet engine. That law is
/// a reconstruction from the paper's abstract (`xcc-core/src/session/bfyz/link.rs`); a
/// candidate, not established, is its frugal rule, which re-marks only the session whose cell
/// passes, so other sessions' stale marks can hold a link's share down (issue 15). The tail is asserted as it is (below 20 %) so that a change
/// to it shows.
#[test]
fn bfyz_sessions_mostly_match_the_oracle_on_a_small_transit_stub_network() {
    let text = scenario(&topology(1, 3, 2, 3, 60), 300, 2.0, 1.0, 5).replace("\"slbn\"", "\"bfyz\"");
    let out = run(&text);
    let r = &out.session_rates;
    assert_eq!(r.rows(), 300, "every session is rated at the last sample");
    let mut err: Vec<f64> = r.f64("error_pct").to_vec();
    err.sort_by(f64::total_cmp);
    let q = |p: f64| err[((err.len() - 1) as f64 * p).round() as usize];
    eprintln!("BFYZ error: p10 {:+.3} %, p90 {:+.3} %, min {:+.3} %, max {:+.3} %", q(0.1), q(0.9), err[0], err[299]);
    assert!(q(0.1).abs() < 0.5 && q(0.9).abs() < 0.5, "p10 {:+.3} %, p90 {:+.3} %", q(0.1), q(0.9));
    let within = err.iter().filter(|e| e.abs() < 1.0).count();
    assert!(within >= 285, "{within} of 300 sessions within 1 %");
    assert!(err.iter().all(|e| e.abs() < 20.0), "worst {:+.3} % / {:+.3} %", err[0], err[299]);
}

/// Only hosts a session uses exist: 40 sessions on a network of 1,260 hosts create at most 80
/// of them, each with its two links, named after its number in the network.
#[test]
fn hosts_and_their_links_exist_only_once_used() {
    let out = run(&scenario(&topology(1, 3, 2, 3, 60), 40, 0.2, 0.1, 5));
    let Some(Column::Str(names)) = out.links.column("name") else { unreachable!() };
    let host_links = names.iter().filter(|n| n.starts_with('h') || n.contains("->h")).count();
    let router_links = names.len() - host_links;
    assert!((2 * 40..=2 * 80).contains(&host_links), "{host_links} host links");
    assert!(router_links > 0 && router_links % 2 == 0);
    assert_eq!(out.flows.rows(), 40);
    let Some(Column::Str(kind)) = out.flows.column("kind") else { unreachable!() };
    assert!(kind.iter().all(|k| k == "session"));
}

/// The tables as text (NaN compares equal to itself here, unlike in `Table`'s `PartialEq`).
fn text(t: &Table) -> String {
    format!("{:?}", t.columns)
}

/// Same scenario and seed: the same network, sessions, routes and results.
#[test]
fn generated_runs_are_deterministic() {
    let sc = scenario(&topology(1, 3, 2, 3, 60), 100, 0.5, 0.25, 9);
    let (a, b) = (run(&sc), run(&sc));
    for (x, y) in [(&a.flows, &b.flows), (&a.links, &b.links), (&a.session_samples, &b.session_samples)] {
        assert_eq!(text(x), text(y));
    }
    assert_eq!(text(&a.session_rates), text(&b.session_rates));
    assert_eq!(a.stats.packet_hops, b.stats.packet_hops);
    let c = run(&scenario(&topology(1, 3, 2, 3, 60), 100, 0.5, 0.25, 10));
    assert_ne!(text(&a.flows), text(&c.flows), "another seed, other sessions");
}

fn error(text: &str) -> String {
    match run_text(text, "bad.toml", Format::Toml, None, false, None) {
        Ok(_) => panic!("accepted: {text}"),
        Err(e) => e.to_string(),
    }
}

/// Bad `[sessions]` input is refused with the file and the field.
#[test]
fn bad_sessions_tables_name_the_field() {
    let good = scenario(&topology(1, 3, 2, 3, 60), 10, 0.5, 0.25, 1);
    let e = error(&good.replace("routers_per_stub = 3", "routers_per_stub = 3, colour = 1"));
    assert!(e.contains("bad.toml") && e.contains("sessions.topology") && e.contains("colour"), "{e}");
    let e = error(&good.replace("from_s = 0.0, to_s = 0.2", "from_s = 0.5, to_s = 0.2"));
    assert!(e.contains("bad.toml") && e.contains("sessions.workload.arrivals[0]"), "{e}");
    let e = error(&good.replace("count = 10,", "count = 100000,"));
    assert!(e.contains("sessions.workload.arrivals") && e.contains("source hosts"), "{e}");
    let e = error(&good.replace("protocol = \"slbn\"", "protocol = \"slbnn\""));
    assert!(e.contains("sessions.protocol") && e.contains("slbnn"), "{e}");
    let e = error(&good.replace("sample_interval = \"0.25s\"", "sample_interval = \"0.25s\"\nrate_window = \"1s\""));
    assert!(e.contains("sessions.rate_window"), "{e}");
    let e = error(&format!("{good}\n[[host]]\nname = \"a\"\n"));
    assert!(e.contains("bad.toml") && e.contains("host") && e.contains("[sessions]"), "{e}");
}

/// Churn and finite sessions: 150 arrivals in 0.2 s, 30 of them leaving in 0.3-0.4 s, the rest
/// with Pareto sizes (mean 50 packets of 1000 B). A finite session completes (`fct_s`) when its
/// last byte is delivered, exactly its size; a departing one stops at its drawn time.
#[test]
fn departures_and_finite_sessions() {
    let sc = scenario(&topology(1, 3, 2, 3, 60), 150, 1.5, 0.5, 2).replace(
        "{ count = 150, from_s = 0.0, to_s = 0.2 }] }",
        "{ count = 150, from_s = 0.0, to_s = 0.2 }], departures = [{ count = 30, from_s = 0.3, to_s = 0.4 }], \
         size = { mean_packets = 50.0, shape = 1.5, packet_bytes = 1000 } }",
    );
    let out = run(&sc);
    let f = &out.flows;
    let (size, delivered, sent) = (f.i64("size_bytes"), f.i64("bytes_delivered"), f.i64("bytes_sent"));
    let (fct, stop) = (f.f64("fct_s"), f.f64("stop_s"));
    assert_eq!(f.rows(), 150);
    assert_eq!(stop.iter().filter(|s| s.is_finite()).count(), 30, "30 departures");
    assert!(stop.iter().filter(|s| s.is_finite()).all(|s| (0.3..0.4).contains(s)));
    let mut completed = 0;
    for i in 0..f.rows() {
        assert!(size[i] > 0 && size[i] % 1000 == 0, "whole packets");
        assert!(sent[i] <= size[i] && delivered[i] <= sent[i]);
        if fct[i].is_finite() {
            completed += 1;
            assert_eq!(delivered[i], size[i], "complete means every byte delivered");
        } else {
            assert!(delivered[i] < size[i] || stop[i].is_finite());
        }
    }
    assert!(completed > 60, "{completed} of 150 completed");
    // The samples count only sessions still present.
    let present = out.session_samples.i64("present");
    assert!(present.windows(2).all(|w| w[1] <= w[0]), "no arrivals after 0.2 s: {present:?}");
}
/// Percentiles of the last sample's E_s, and the per-sample E_e maxima, largest queues and
/// offered E_e maxima, of `protocol` on the 300-session network over 3 s (samples every 0.5 s).
fn peer_run(protocol: &str) -> (Vec<f64>, Vec<f64>, Vec<i64>, Vec<f64>) {
    let text = scenario(&topology(1, 3, 2, 3, 60), 300, 3.0, 0.5, 5).replace("\"slbn\"", &format!("\"{protocol}\""));
    let out = run(&text);
    let mut err: Vec<f64> = out.session_rates.f64("error_pct").to_vec();
    assert_eq!(err.len(), 300, "{protocol}: every session is rated at the last sample");
    err.sort_by(f64::total_cmp);
    let q: Vec<f64> = [0.1f64, 0.5, 0.9].iter().map(|p| err[(299.0 * p).round() as usize]).collect();
    let s = &out.session_samples;
    (q, s.f64("ee_max").to_vec(), s.i64("max_queue_bytes").to_vec(), s.f64("ee_in_max").to_vec())
}

/// Seed 004's other protocols on the same 300-session network at packet level, asserted as
/// measured (2026-11-26) so that a change to them shows. None of them settles as SLBN does;
/// what each does is its law on packets with unlimited queues (docs/architecture.md, "Seed-004
/// sessions on the packet engine"):
/// - ERICA: E_s p10/p50/p90 -8.8 / -2.3 / +5.7 % at 3 s, bottlenecks sending at capacity, and
///   the largest queue growing every sample (1.4 to 6.8 MB): with U = 1 any load in
///   [1, 1 + delta] is its fixed point, so its sources hold a little above capacity;
/// - COBB: -40.7 / -7.4 / +20.4 %, queues to 23 MB: one packet per 70 ms period is slow to
///   correct 300 sessions' shares;
/// - PIQI-RCP: -83.8 / -16.7 / +83.7 %, queues growing to 196 MB: the links' rates are set on
///   their input, and a session bottlenecked elsewhere leaves a link's rate too high for the
///   ones it bottlenecks;
/// - RCP: -97.6 / -90.9 / -33.2 %: the arrivals' surge builds queues (8 MB) that RCP's queue
///   term answers by holding rates near its floor for seconds (seed 002's collapse after a
///   surge, docs/algorithms/piqi-rcp.md).
#[test]
fn the_other_protocols_on_a_small_transit_stub_network_as_measured() {
    let full = |ee: &[f64]| ee[1..].iter().all(|e| e.abs() < 0.1);
    let growing = |q: &[i64]| q.windows(2).all(|w| w[1] > w[0]);
    // Where queues grow, more arrives at a bottleneck than it sends: the offered E_e shows the
    // overshoot that the sent E_e (at most a packet above 0) cannot.
    let overshoots = |offered: &[f64]| offered[1..].iter().all(|&e| e > 0.1);
    let (q, ee, queue, offered) = peer_run("erica");
    assert!(q[0] > -15.0 && q[1].abs() < 5.0 && q[2] < 10.0, "ERICA {q:?}");
    assert!(full(&ee) && growing(&queue), "ERICA {ee:?} {queue:?}");
    assert!(overshoots(&offered), "ERICA offered {offered:?}");
    let (q, ee, _, _) = peer_run("cobb");
    assert!(q[0] > -60.0 && q[1].abs() < 15.0 && q[2] < 40.0, "COBB {q:?}");
    assert!(full(&ee), "COBB {ee:?}");
    let (q, ee, queue, offered) = peer_run("piqi-rcp");
    assert!(q[0] < -50.0 && q[2] > 50.0, "PIQI-RCP {q:?}");
    assert!(full(&ee) && growing(&queue), "PIQI-RCP {ee:?} {queue:?}");
    assert!(overshoots(&offered), "PIQI-RCP offered {offered:?}");
    let (q, _, _, _) = peer_run("rcp");
    assert!(q[1] < -50.0, "RCP {q:?}");
}
