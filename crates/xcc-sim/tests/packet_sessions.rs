//! Seed 004's session protocols on the packet engine (`kind = "session"` flows): on small
//! hand-solvable networks (single link, parking lot, two-level bottleneck, demand-limited
//! session) every session's rate, measured from the data delivered to its destination over a
//! window after convergence, is the max-min oracle's rate within 0.5 %.
//!
//! Sources send `1 - budget` of their assigned rate as data (99 % by default; the rest is the
//! control budget), so a measured rate is the delivered data rate divided by that share.
//!
//! SLBN and BFYZ are measured over 1-3 s, COBB over 3-6 s. ERICA is not held to 0.5 %: with
//! U = 1 any load in `[1, 1 + delta]` is its fixed point, and on packets its sources settle
//! some 6 % above a single link's capacity, whose queue then grows without bound; over 3-6 s
//! its sessions are -5.6 % to +2.1 % off on the other networks (docs/architecture.md).

mod support;

use support::{link_id, series};
use xcc_core::analysis::maxmin::{max_min_fair, MaxMinProblem};
use xcc_sim::output::Column;
use xcc_sim::RunOutput;

/// A session from router `from` to router `to` of a chain, with its own hosts.
#[derive(Clone, Copy)]
struct Session {
    from: usize,
    to: usize,
    /// Requested maximum rate, Mb/s (`None`: greedy).
    demand_mbps: Option<f64>,
    start_ms: u64,
}

fn greedy(from: usize, to: usize, start_ms: u64) -> Session {
    Session { from, to, demand_mbps: None, start_ms }
}

/// Routers `r0 - r1 - ...` joined by links of the given capacities (Mb/s, 5 ms each way);
/// every session has a source host `s{k}` and a destination host `d{k}` on 10 Gb/s, 1 us
/// links (the paper's host links, made fast enough never to bottleneck). Unlimited queues.
fn chain_scenario(protocol: &str, capacities_mbps: &[f64], sessions: &[Session], duration_s: f64) -> String {
    let mut t = format!("name = \"sessions\"\nduration = \"{duration_s}s\"\n[metrics]\ninterval = \"100ms\"\n");
    for r in 0..=capacities_mbps.len() {
        t += &format!("[[router]]\nname = \"r{r}\"\n");
    }
    for k in 0..sessions.len() {
        t += &format!("[[host]]\nname = \"s{k}\"\n[[host]]\nname = \"d{k}\"\n");
    }
    for (i, c) in capacities_mbps.iter().enumerate() {
        t += &format!(
            "[[link]]\nbetween = [\"r{i}\", \"r{}\"]\nrate = \"{c}Mbps\"\ndelay = \"5ms\"\nbuffer = \"unlimited\"\n",
            i + 1
        );
    }
    for (k, s) in sessions.iter().enumerate() {
        for (h, r) in [(format!("s{k}"), s.from), (format!("d{k}"), s.to)] {
            t += &format!(
                "[[link]]\nbetween = [\"{h}\", \"r{r}\"]\nrate = \"10Gbps\"\ndelay = \"1us\"\nbuffer = \"unlimited\"\n"
            );
        }
        t += &format!(
            "[[flow]]\nname = \"x{k}\"\nkind = \"session\"\nsrc = \"s{k}\"\ndst = \"d{k}\"\nprotocol = \"{protocol}\"\nstart = \"{}ms\"\n",
            s.start_ms
        );
        if let Some(d) = s.demand_mbps {
            t += &format!("demand = \"{d}Mbps\"\n");
        }
    }
    t
}

/// Link names of session `k`'s path on the chain.
fn path(k: usize, s: &Session) -> Vec<String> {
    let mut p = vec![format!("s{k}->r{}", s.from)];
    p.extend((s.from..s.to).map(|i| format!("r{i}->r{}", i + 1)));
    p.push(format!("r{}->d{k}", s.to));
    p
}

/// The oracle's rates (bit/s) for the sessions on the run's links.
fn oracle(out: &RunOutput, sessions: &[Session]) -> Vec<f64> {
    let problem = MaxMinProblem {
        capacity: out.links.f64("rate_bps").to_vec(),
        paths: sessions
            .iter()
            .enumerate()
            .map(|(k, s)| path(k, s).iter().map(|n| link_id(out, n) as u32).collect())
            .collect(),
        demand: sessions.iter().map(|s| s.demand_mbps.map_or(f64::INFINITY, |d| d * 1e6)).collect(),
    };
    max_min_fair(&problem).expect("valid problem").rate
}

/// Delivered data rate of flow `k` over (from, to], seconds, from the time series.
fn delivered_rate(out: &RunOutput, k: usize, from: f64, to: f64) -> f64 {
    let s = series(&out.flow_series, "flow_id", k as i64, "delivered_bytes");
    let at = |t: f64| s.iter().find(|(x, _)| (x - t).abs() < 1e-9).expect("a sample at the window's end").1;
    (at(to) - at(from)) * 8.0 / (to - from)
}

/// Runs and checks every session within 0.5 % of the oracle over the window.
fn converges(protocol: &str, capacities_mbps: &[f64], sessions: &[Session], window: (f64, f64)) {
    let text = chain_scenario(protocol, capacities_mbps, sessions, window.1);
    let out = support::run(&text);
    let exact = oracle(&out, sessions);
    for (k, &x) in exact.iter().enumerate() {
        let measured = delivered_rate(&out, k, window.0, window.1) / DATA_SHARE;
        let err = (measured - x) / x;
        assert!(
            err.abs() < 0.005,
            "{protocol}: session {k}: {:.4} Mb/s delivered (/ {DATA_SHARE}) over {window:?} s against {:.4} Mb/s exact ({:+.3} %)",
            measured / 1e6,
            x / 1e6,
            err * 100.0
        );
    }
    // Unlimited queues: nothing is ever dropped.
    assert!(out.links.i64("drops").iter().all(|&d| d == 0));
    if let Some(Column::Str(cc)) = out.flows.column("cc") {
        assert!(cc.iter().all(|c| c == protocol));
    }
}

/// Default control budget of SLBN, ERICA and BFYZ (1 %).
const DATA_SHARE: f64 = 0.99;

/// The measurement window, seconds: COBB's periods of 70 ms take it longer to settle (over
/// 1-3 s its two-level case is still 0.85 % off; over 3-6 s all are within 0.04 %).
fn window(protocol: &str) -> (f64, f64) {
    if protocol == "cobb" {
        (3.0, 6.0)
    } else {
        (1.0, 3.0)
    }
}

/// One 100 Mb/s link, three greedy sessions (the third a little later): 33.3 Mb/s each.
fn single_link(protocol: &str) {
    let s = [greedy(0, 1, 0), greedy(0, 1, 0), greedy(0, 1, 200)];
    converges(protocol, &[100.0], &s, window(protocol));
}

/// Parking lot: links of 100, 50 and 80 Mb/s; a long session over all three, one more on
/// the first, two more on the second, one more on the third. The 50 Mb/s link holds three
/// sessions at 16.67; then 83.33 on the first link and 63.33 on the third.
fn parking_lot(protocol: &str) {
    let s = [greedy(0, 3, 0), greedy(0, 1, 0), greedy(1, 2, 0), greedy(1, 2, 100), greedy(2, 3, 0)];
    converges(protocol, &[100.0, 50.0, 80.0], &s, window(protocol));
}

/// Two levels: 30 Mb/s shared by three sessions (10 each) which go on over 100 Mb/s, where two
/// more sessions share what they leave: 35 each.
fn two_level(protocol: &str) {
    let s = [greedy(0, 2, 0), greedy(0, 2, 0), greedy(0, 2, 0), greedy(1, 2, 0), greedy(1, 2, 50)];
    converges(protocol, &[30.0, 100.0], &s, window(protocol));
}

/// A session asking for 20 Mb/s on a 100 Mb/s link with two greedy ones: 20, 40, 40.
fn demand_limited(protocol: &str) {
    let s = [Session { demand_mbps: Some(20.0), ..greedy(0, 1, 0) }, greedy(0, 1, 0), greedy(0, 1, 0)];
    converges(protocol, &[100.0], &s, window(protocol));
}

#[test]
fn slbn_single_link() {
    single_link("slbn");
}
#[test]
fn slbn_parking_lot() {
    parking_lot("slbn");
}
#[test]
fn slbn_two_level_bottleneck() {
    two_level("slbn");
}
#[test]
fn slbn_demand_limited() {
    demand_limited("slbn");
}

#[test]
fn cobb_single_link() {
    single_link("cobb");
}
#[test]
fn cobb_parking_lot() {
    parking_lot("cobb");
}
#[test]
fn cobb_two_level_bottleneck() {
    two_level("cobb");
}
#[test]
fn cobb_demand_limited() {
    demand_limited("cobb");
}

#[test]
fn bfyz_single_link() {
    single_link("bfyz");
}
#[test]
fn bfyz_parking_lot() {
    parking_lot("bfyz");
}
#[test]
fn bfyz_two_level_bottleneck() {
    two_level("bfyz");
}
#[test]
fn bfyz_demand_limited() {
    demand_limited("bfyz");
}

/// Delivered data rates of every session over the window, bit/s.
fn delivered_rates(
    protocol: &str,
    capacities_mbps: &[f64],
    sessions: &[Session],
    window: (f64, f64),
) -> Vec<(f64, f64)> {
    let out = support::run(&chain_scenario(protocol, capacities_mbps, sessions, window.1));
    assert!(out.links.i64("drops").iter().all(|&d| d == 0));
    let exact = oracle(&out, sessions);
    exact.iter().enumerate().map(|(k, &x)| (delivered_rate(&out, k, window.0, window.1), x)).collect()
}

/// PIQI-RCP in seed 004's session form (feedback packets stamped by the links' rate) aims each
/// link's input, data and control, at gamma C (our 0.98), so its delivered data, not data over
/// the share, is held to 0.98 times the oracle's rate: within 0.5 % over 2-4 s.
fn piqi_rcp_converges(capacities_mbps: &[f64], sessions: &[Session]) {
    for (k, (got, x)) in delivered_rates("piqi-rcp", capacities_mbps, sessions, (2.0, 4.0)).into_iter().enumerate() {
        let err = (got - 0.98 * x) / (0.98 * x);
        assert!(
            err.abs() < 0.005,
            "session {k}: {:.4} Mb/s against 0.98 x {:.4} ({:+.3} %)",
            got / 1e6,
            x / 1e6,
            err * 100.0
        );
    }
}

#[test]
fn piqi_rcp_single_link() {
    piqi_rcp_converges(&[100.0], &[greedy(0, 1, 0), greedy(0, 1, 0), greedy(0, 1, 200)]);
}
#[test]
fn piqi_rcp_parking_lot() {
    let s = [greedy(0, 3, 0), greedy(0, 1, 0), greedy(1, 2, 0), greedy(1, 2, 100), greedy(2, 3, 0)];
    piqi_rcp_converges(&[100.0, 50.0, 80.0], &s);
}

/// RCP (alpha 0.1, beta 1) on packets settles below capacity: its law's queue term weighs
/// the backlog at each update, and on packets a paced packet sometimes waits for another one's
/// transmission, 2000 B that at d = 10 ms ask for 1.6 % of C less per round trip; the fluid
/// session driver has no such queue. Its average RTT also starts at ns-2's 200 ms and falls
/// with a gain scaled by R / gamma C, so it takes some 8 s to first reach capacity on these
/// 10 ms paths (docs/algorithms/rcp.md, "Session experiments"). Measured over 10-40 s: three
/// sessions on one 100 Mb/s link get 31.42 Mb/s each (94.3 % of the link, equal to 0.01 %).
/// Held here: sessions of one bottleneck equal within 0.5 %, their sum within 90-100 % of C.
#[test]
fn rcp_single_link_is_fair_below_capacity() {
    let s = [greedy(0, 1, 0), greedy(0, 1, 0), greedy(0, 1, 200)];
    let rates = delivered_rates("rcp", &[100.0], &s, (10.0, 40.0));
    let sum: f64 = rates.iter().map(|r| r.0).sum();
    assert!((0.90e8..=1e8).contains(&sum), "{sum}");
    for (k, (got, _)) in rates.iter().enumerate() {
        assert!((got - sum / 3.0).abs() < 0.005 * sum / 3.0, "session {k}: {got} of {sum}");
    }
}

/// On the parking lot RCP gives every session its max-min rate within 10 % below and never
/// above it by more than 0.5 % (the settling below capacity, above). Measured over 10-40 s:
/// -7.2 % on the 50 Mb/s bottleneck's three sessions, -3.0 % and -3.6 % on the others.
#[test]
fn rcp_parking_lot_below_max_min() {
    let s = [greedy(0, 3, 0), greedy(0, 1, 0), greedy(1, 2, 0), greedy(1, 2, 100), greedy(2, 3, 0)];
    for (k, (got, x)) in delivered_rates("rcp", &[100.0, 50.0, 80.0], &s, (10.0, 40.0)).into_iter().enumerate() {
        assert!(got > 0.90 * x && got < 1.005 * x, "session {k}: {:.4} Mb/s against {:.4}", got / 1e6, x / 1e6);
    }
}

/// The first packets of one SLBN session on the 100 Mb/s link r0->r1, by hand (10 Gb/s, 1 us
/// host links; 5 ms router link; transmission starts on r0->r1 as the capture records them):
/// - Join (68 B) leaves s0 at 0: 54.4 ns on s0->r0 (54, remainder carried), 1 us: 1054 ns.
/// - It reaches d0 and comes back as ProbeAck: each way 54 + 1000 + 5440 + 5 000 000 + 54 +
///   1000 ns, a round trip of 10 015 096 ns. The rate is 100 Mb/s (r0->r1's share; the host
///   links' 10 Gb/s are higher), so data goes at 99 Mb/s.
/// - The Probe leaves at once (the budget since the Join, 2 x 544 bit at 1 Mb/s = 1.088 ms,
///   is paid): on r0->r1 at 10 015 096 + 54 + 1000 = 10 016 150.
/// - The first data packet (2000 B) follows the Probe on s0->r0 (from 10 015 150, 1600 ns),
///   reaches r0 at 10 017 750 and waits for the Probe's 5440 ns on r0->r1: 10 021 590.
/// - The second leaves s0 161 616 ns later (16 000 bit at 99 Mb/s), reaches r0 at 10 179 312
///   and waits for the first's 160 000 ns: 10 181 590.
#[test]
fn slbn_first_packets_by_hand() {
    let s = [greedy(0, 1, 0)];
    let text = chain_scenario("slbn", &[100.0], &s, 0.0115);
    let (_, out) =
        xcc_sim::run_text_capturing(&text, "t.toml", xcc_sim::Format::Toml, None, true, Some("r0->r1"), None)
            .unwrap_or_else(|e| panic!("{e}"));
    let cap = out.capture.expect("captured");
    let first: Vec<(u64, bool)> = cap.iter().take(4).map(|c| (c.time.as_ns(), c.orig_len > 2000)).collect();
    assert_eq!(first, vec![(1054, false), (10_016_150, false), (10_021_590, true), (10_181_590, true)]);
}

/// A finite session: 100 packets of 2000 B at 99 Mb/s; completion is the delivery of the last
/// byte. The last packet leaves s0 99 spacings (99 x 161 616.16 ns) after the first (at
/// 10 015 096 ns, above), then crosses the path (1600 + 1000 + 160 000 + 5 000 000 + 1600 +
/// 1000 ns) behind at most the few microseconds of queue the Probes add: about 31.18 ms.
#[test]
fn slbn_finite_session_completes_when_its_last_byte_is_delivered() {
    let s = [greedy(0, 1, 0)];
    let text = chain_scenario("slbn", &[100.0], &s, 0.1)
        .replace("protocol = \"slbn\"", "protocol = \"slbn\"\nsize = \"200000B\"");
    let out = support::run(&text);
    assert_eq!(out.flows.i64("bytes_delivered"), &[200_000]);
    assert_eq!(out.flows.i64("bytes_sent"), &[200_000]);
    let sent_last = 10_015_096.0 + 99.0 * 161_616.16;
    let crossing = 1600.0 + 1000.0 + 160_000.0 + 5_000_000.0 + 1600.0 + 1000.0;
    let fct_ns = out.flows.f64("fct_s")[0] * 1e9;
    assert!(fct_ns >= sent_last + crossing - 1.0 && fct_ns < sent_last + crossing + 20_000.0, "{fct_ns} ns");
}

/// Bad session entries are refused with the field named.
#[test]
fn bad_session_flows_name_the_field() {
    let base = chain_scenario("slbn", &[100.0], &[greedy(0, 1, 0), greedy(0, 1, 0)], 1.0);
    let err = |from: &str, to: &str| {
        assert!(base.contains(from), "{from}");
        let text = base.replacen(from, to, 1);
        let e = xcc_sim::resolve(&text, "t.toml", xcc_sim::Format::Toml).expect_err(to);
        (e.path, e.message)
    };
    let p = "protocol = \"slbn\"";
    let (path, m) = err(p, "");
    assert_eq!(path, "flow[0].protocol");
    assert!(m.contains("needs a protocol") && m.contains("bfyz"), "{m}");
    let (path, m) = err(p, "protocol = \"xcp\"");
    assert_eq!(path, "flow[0].protocol.kind");
    assert!(m.contains("known: rcp, piqi-rcp, slbn, erica, bfyz, cobb"), "{m}");
    let (path, m) = err(p, "protocol = { kind = \"slbn\", join_lowers = true }");
    assert!(path.starts_with("flow[0].protocol") && m.contains("join_lowers"), "{path}: {m}");
    let (path, _) = err(p, "protocol = { kind = \"bfyz\", closed_loop = 3 }");
    assert!(path.starts_with("flow[0].protocol"), "{path}");
    let (path, m) = err(p, "protocol = \"slbn\"\ncc = \"newreno\"");
    assert_eq!(path, "flow[0].cc");
    assert!(m.contains("session flows take"), "{m}");
    let (path, _) = err(p, "protocol = \"slbn\"\ndemand = \"0Mbps\"");
    assert_eq!(path, "flow[0].demand");
    let (path, _) = err(p, "protocol = \"slbn\"\nsize = \"0B\"");
    assert_eq!(path, "flow[0].size");
    let (path, _) = err(p, "protocol = \"slbn\"\npacket_size = \"70000B\"");
    assert_eq!(path, "flow[0].packet_size");
    // The second session asks for other SLBN parameters than the first.
    let text = base.replacen(p, "protocol = { kind = \"slbn\", join_lowers_bw = true }", 2).replacen(
        "protocol = { kind = \"slbn\", join_lowers_bw = true }",
        p,
        1,
    );
    let e = xcc_sim::resolve(&text, "t.toml", xcc_sim::Format::Toml).unwrap_err();
    assert_eq!(e.path, "flow[1].protocol");
    assert!(e.message.contains("same parameters") && e.message.contains("flow[0]"), "{}", e.message);
    // Session fields on other kinds of flows.
    let (path, m) = err("kind = \"session\"", "kind = \"bulk\"");
    assert_eq!(path, "flow[0].protocol");
    assert!(m.contains("only session flows"), "{m}");
    let (path, _) = err("kind = \"session\"", "kind = \"cbr\"\nrate = \"1Mbps\"");
    assert_eq!(path, "flow[0].protocol");
}

/// Sessions of different protocols share a scenario, each protocol with its own link state
/// (on links of their own here: two protocols on one link would each hand it all out).
#[test]
fn slbn_and_bfyz_side_by_side() {
    let s = [greedy(0, 1, 0), greedy(1, 2, 0)];
    let text =
        chain_scenario("slbn", &[100.0, 50.0], &s, 2.0).replacen("protocol = \"slbn\"", "protocol = \"bfyz\"", 1);
    let out = support::run(&text);
    match out.flows.column("cc") {
        Some(Column::Str(cc)) => assert_eq!(cc, &["bfyz", "slbn"]),
        _ => unreachable!(),
    }
    for (k, want) in [(0, 100e6), (1, 50e6)] {
        let got = delivered_rate(&out, k, 1.0, 2.0) / DATA_SHARE;
        assert!((got - want).abs() < 0.005 * want, "session {k}: {got}");
    }
}

/// A finite buffer overrun by a cbr flow drops session packets, control ones included: the
/// run ends with every invariant holding (each dropped control packet's body freed; seed 004
/// assumes reliable control, so a session whose cycle was lost stays silent).
#[test]
fn dropped_control_packets_are_accounted() {
    let s = [greedy(0, 1, 0), greedy(0, 1, 0)];
    let mut text = chain_scenario("slbn", &[10.0], &s, 1.0).replacen("buffer = \"unlimited\"", "buffer = \"3pkt\"", 1);
    text += "[[host]]\nname = \"c\"\n[[link]]\nbetween = [\"c\", \"r0\"]\nrate = \"10Gbps\"\nbuffer = \"unlimited\"\n";
    text += "[[flow]]\nname = \"cbr\"\nkind = \"cbr\"\nsrc = \"c\"\ndst = \"d0\"\nrate = \"12Mbps\"\npacket_size = \"100B\"\n";
    let out = support::run(&text);
    let l = link_id(&out, "r0->r1") as usize;
    assert!(out.links.i64("drops")[l] > 0);
    assert!(out.flows.i64("packets_dropped")[..2].iter().any(|&d| d > 0), "session packets were dropped");
}
