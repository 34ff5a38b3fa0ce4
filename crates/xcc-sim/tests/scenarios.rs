//! Scenario tests: whole simulations checked against the properties the papers and the
//! textbooks claim, each with its tolerance stated. Kept short so they run in debug builds.

use xcc_sim::output::{Column, Table};
use xcc_sim::{run_text, Format, RunOutput};

fn run(text: &str) -> RunOutput {
    run_text(text, "test.toml", Format::Toml, None, true, None).unwrap_or_else(|e| panic!("{e}")).1
}

fn strs<'a>(t: &'a Table, name: &str) -> &'a [String] {
    match t.column(name) {
        Some(Column::Str(v)) => v,
        _ => panic!("no column {name}"),
    }
}

fn link_row(out: &RunOutput, name: &str) -> usize {
    strs(&out.links, "name").iter().position(|n| n == name).unwrap_or_else(|| panic!("no link {name}"))
}

fn jain(xs: &[f64]) -> f64 {
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    s * s / (xs.len() as f64 * s2)
}

/// N flows s{i} -> d{i} through r1 -> r2 with the given bottleneck queue and transport.
fn dumbbell(n: u32, rate: &str, delay: &str, buffer: &str, queue: &str, transport: &str, duration: &str) -> String {
    format!(
        r#"
name = "dumbbell"
duration = "{duration}"
[[host]]
name = "s{{i}}"
count = {n}
[[host]]
name = "d{{i}}"
count = {n}
[[router]]
name = "r1"
[[router]]
name = "r2"
[[link]]
between = ["s{{i}}", "r1"]
count = {n}
rate = "1Gbps"
buffer = "10000pkt"
[[link]]
between = ["r1", "r2"]
rate = "{rate}"
delay = "{delay}"
buffer = "{buffer}"
queue = {queue}
[[link]]
between = ["r2", "d{{i}}"]
count = {n}
rate = "1Gbps"
buffer = "10000pkt"
[[flow]]
name = "f{{i}}"
count = {n}
src = "s{{i}}"
dst = "d{{i}}"
[flow.transport]
{transport}
[metrics]
interval = "100ms"
"#
    )
}

/// Ten NewReno flows, equal RTTs, DropTail buffer of one bandwidth-delay product: TCP fills the
/// link (> 95 %) and shares it fairly (Jain > 0.95) once slow start is over.
#[test]
fn newreno_dumbbell_fills_a_bdp_buffer_fairly() {
    // 100 Mbps x 20 ms RTT = 250 kB = 167 packets of 1500 B.
    let out = run(&dumbbell(10, "100Mbps", "10ms", "167pkt", "\"droptail\"", "sack = false", "60s"));
    let b = link_row(&out, "r1->r2");
    let util = out.links.f64("utilisation")[b];
    assert!(util > 0.95, "utilisation {util}");
    let goodputs = out.flows.f64("goodput_bps");
    let j = jain(goodputs);
    assert!(j > 0.95, "Jain {j}: {goodputs:?}");
}

/// Same scenario and seed, byte-identical results; another seed changes nothing here either
/// (no randomness in DropTail) but a lossy link's draws depend on the seed.
#[test]
fn same_scenario_and_seed_give_identical_tables() {
    let text = dumbbell(
        3,
        "20Mbps",
        "5ms",
        "50pkt",
        "{ kind = \"red\", min_th = \"5pkt\", max_th = \"15pkt\" }",
        "ecn = false",
        "5s",
    );
    let a = run(&text);
    let b = run(&text);
    for (x, y) in
        [(&a.flows, &b.flows), (&a.links, &b.links), (&a.flow_series, &b.flow_series), (&a.link_series, &b.link_series)]
    {
        assert_eq!(format!("{x:?}"), format!("{y:?}"));
    }
    assert_eq!(a.stats.events, b.stats.events);
    let c = run_text(&text, "t", Format::Toml, Some(7), true, None).unwrap().1;
    assert_ne!(format!("{:?}", a.links), format!("{:?}", c.links), "RED's draws must depend on the seed");
}

/// Mathis et al. (1997): a NewReno flow with random loss p gets about MSS/RTT * sqrt(3/2)/sqrt(p).
/// Tolerance 20 % (the formula assumes periodic loss and ignores timeouts).
#[test]
fn random_loss_throughput_matches_mathis() {
    let text = r#"
name = "mathis"
duration = "200s"
[[host]]
name = "a"
[[host]]
name = "b"
[[link]]
between = ["a", "b"]
rate = "100Mbps"
delay = "20ms"
buffer = "unlimited"
loss = 0.01
[link.reverse]
loss = 0.0
[[flow]]
name = "f"
src = "a"
dst = "b"
[flow.transport]
sack = false
[metrics]
interval = "0s"
"#;
    let out = run(text);
    let got = out.flows.f64("goodput_bps")[0];
    let mss_bits = 1460.0 * 8.0;
    let expected = mss_bits / 0.040 * (1.5f64).sqrt() / 0.01f64.sqrt();
    let ratio = got / expected;
    assert!((0.8..1.2).contains(&ratio), "goodput {got:.0} bit/s vs Mathis {expected:.0} (ratio {ratio:.3})");
}

fn mean_gauge_second_half(out: &RunOutput, link: usize) -> f64 {
    let t = out.link_series.f64("time_s");
    let id = out.link_series.i64("link_id");
    let g = out.link_series.f64("gauge");
    let end = t.iter().cloned().fold(0.0, f64::max);
    let xs: Vec<f64> = (0..t.len()).filter(|&k| id[k] == link as i64 && t[k] > end / 2.0).map(|k| g[k]).collect();
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// RED holds its average queue between min_th and max_th under steady load (FJ93's purpose).
#[test]
fn red_keeps_the_average_between_its_thresholds() {
    let red = "{ kind = \"red\", w_q = 0.002, min_th = \"30pkt\", max_th = \"90pkt\", max_p = 0.1 }";
    let out = run(&dumbbell(10, "10Mbps", "10ms", "300pkt", red, "sack = false", "60s"));
    let b = link_row(&out, "r1->r2");
    let avg = mean_gauge_second_half(&out, b);
    assert!((30.0..90.0).contains(&avg), "RED average {avg} packets");
    assert!(out.links.i64("drops")[b] > 0);
}

/// RED in ECN mode marks instead of dropping; NewReno senders with ECN halve on the echo, so once
/// the start-up (ten slow starts overshooting at once, where gentle RED's average passes
/// 2 max_th and it drops) is over, the bottleneck sees marks and no drops.
#[test]
fn red_ecn_marks_and_senders_back_off_without_drops() {
    let red = "{ kind = \"red\", w_q = 0.002, min_th = \"30pkt\", max_th = \"90pkt\", max_p = 0.1, action = \"mark\", variant = \"gentle\" }";
    let out = run(&dumbbell(10, "10Mbps", "10ms", "1000pkt", red, "ecn = true\nsack = false", "60s"));
    let b = link_row(&out, "r1->r2");
    assert!(out.links.i64("marks")[b] > 100, "marks {}", out.links.i64("marks")[b]);
    let t = out.link_series.f64("time_s");
    let id = out.link_series.i64("link_id");
    let steady = |col: &str| -> i64 {
        let v = out.link_series.i64(col);
        (0..t.len()).filter(|&k| id[k] == b as i64 && t[k] > 10.0).map(|k| v[k]).sum()
    };
    assert_eq!(steady("drops"), 0, "drops after start-up");
    assert!(steady("marks") > 100, "marks after start-up {}", steady("marks"));
    let reductions: i64 = out.flows.i64("ecn_reductions").iter().sum();
    assert!(reductions > 50, "ECN reductions {reductions}");
    let util = out.links.f64("utilisation")[b];
    assert!(util > 0.9, "utilisation {util}");
}

/// MarkMax-B with ECN and an unlimited buffer (seed 003's set-up): once the slow starts are
/// over the queue is held around θ without a single drop, by marks alone; the link stays busy.
/// The short-RTT flow takes most of the cuts; with MarkMax-B two RTTs (12 ms and 84 ms) share
/// the link far more evenly than under DropTail (Jain > 0.9; the paper's Table II has 0.96 at
/// δ2/δ1 = 7). MarkMax-T's 40 s Jain depends on how the slow-start signals fell, so it is not
/// asserted here (see the markmax-s1 report).
#[test]
fn markmax_holds_queue_near_theta_by_marks_alone() {
    for variant in ["b", "t"] {
        let text = format!(
            r#"
name = "mm"
duration = "40s"
[[host]]
name = "s{{i}}"
count = 2
[[host]]
name = "d{{i}}"
count = 2
[[router]]
name = "S"
[[router]]
name = "D"
[[link]]
between = ["s1", "S"]
rate = "300Mbps"
delay = "2500us"
buffer = "unlimited"
[[link]]
between = ["s2", "S"]
rate = "300Mbps"
delay = "20500us"
buffer = "unlimited"
[[link]]
between = ["S", "D"]
rate = "70Mbps"
delay = "1ms"
buffer = "unlimited"
queue = {{ kind = "markmax", variant = "{variant}", theta = "240pkt", theta_l = "200pkt", theta_h = "280pkt" }}
[link.reverse]
queue = "droptail"
buffer = "240pkt"
[[link]]
between = ["D", "d1"]
rate = "300Mbps"
delay = "2500us"
buffer = "unlimited"
[[link]]
between = ["D", "d2"]
rate = "300Mbps"
delay = "20500us"
buffer = "unlimited"
[[flow]]
name = "f{{i}}"
count = 2
src = "s{{i}}"
dst = "d{{i}}"
[flow.transport]
mss = "500B"
header = "40B"
ecn = true
sack = false
[metrics]
interval = "100ms"
"#
        );
        let out = run(&text);
        let b = link_row(&out, "S->D");
        assert_eq!(out.links.i64("drops")[b], 0, "{variant}: MarkMax with ECN and no buffer limit drops nothing");
        assert!(out.links.i64("marks")[b] > 20, "{variant}: marks {}", out.links.i64("marks")[b]);
        let t = out.link_series.f64("time_s");
        let id = out.link_series.i64("link_id");
        let q = out.link_series.i64("queue_packets");
        let steady: Vec<i64> = (0..t.len()).filter(|&k| id[k] == b as i64 && t[k] > 10.0).map(|k| q[k]).collect();
        let max = *steady.iter().max().unwrap();
        assert!(max < 400, "{variant}: queue reached {max} packets after start-up");
        let util = out.links.f64("utilisation")[b];
        assert!(util > 0.95, "{variant}: utilisation {util}");
        // The short-RTT flow is the one MarkMax cuts most.
        let cuts = out.flows.i64("ecn_reductions");
        assert!(cuts[0] > cuts[1], "{variant}: ECN reductions {cuts:?}");
        if variant == "b" {
            let j = jain(out.flows.f64("goodput_bps"));
            assert!(j > 0.9, "{variant}: Jain {j}");
        }
    }
}

/// MarkMax with a finite buffer and senders without ECN: the signals fall back to drops and the
/// buffer overflows in slow start, which MarkMax is not told about; its per-connection counters
/// must stay exact (debug builds assert it on every departure) and TCP still fills the link.
#[test]
fn markmax_without_ecn_and_with_a_finite_buffer() {
    let q = "{ kind = \"markmax\", variant = \"b\", theta = \"60pkt\" }";
    let out = run(&dumbbell(4, "20Mbps", "10ms", "70pkt", q, "ecn = false\nsack = false", "20s"));
    let b = link_row(&out, "r1->r2");
    assert!(out.links.i64("drops")[b] > 0);
    assert_eq!(out.links.i64("marks")[b], 0, "no ECN, no marks");
    let util = out.links.f64("utilisation")[b];
    assert!(util > 0.9, "utilisation {util}");
    let t = out.link_series.f64("time_s");
    let id = out.link_series.i64("link_id");
    let ql = out.link_series.i64("queue_packets");
    let late: Vec<i64> = (0..t.len()).filter(|&k| id[k] == b as i64 && t[k] > 5.0).map(|k| ql[k]).collect();
    assert!(late.iter().all(|&x| x <= 70));
}

/// A client and a server behind one router: 100 Mb/s then 10 Mb/s, 5 ms each.
const CLIENT_ROUTER_SERVER: &str = r#"[[host]]
name = "c"
[[host]]
name = "s"
[[router]]
name = "r"
[[link]]
between = ["c", "r"]
rate = "100Mbps"
delay = "5ms"
buffer = "100pkt"
[[link]]
between = ["r", "s"]
rate = "10Mbps"
delay = "5ms"
buffer = "100pkt"
"#;

/// Sized flows, CBR, Poisson arrivals and request/response transactions all run, complete, and
/// report what the application saw.
#[test]
fn traffic_generators_complete_and_report() {
    let text = &format!(
        "name = \"mix\"\nduration = \"10s\"\n{CLIENT_ROUTER_SERVER}{}",
        r#"[[flow]]
name = "sized"
src = "c"
dst = "s"
size = "1MB"
[[flow]]
name = "cbr"
kind = "cbr"
src = "c"
dst = "s"
rate = "1Mbps"
packet_size = "1000B"
start = "1s"
stop = "3s"
[[arrivals]]
name = "mice"
src = "c"
dst = "s"
mean_interarrival = "500ms"
stop = "5s"
size = { dist = "pareto", mean = "20KB", shape = 1.4 }
[[transactions]]
name = "http"
client = "c"
server = "s"
count = 5
start = "2s"
stop = "4s"
request = "62B"
response = "4KB"
"#
    );
    let out = run(text);
    let names = strs(&out.flows, "name");
    let sized = names.iter().position(|n| n == "sized").unwrap();
    assert_eq!(out.flows.i64("bytes_delivered")[sized], 1_000_000);
    assert!(out.flows.f64("fct_s")[sized] > 0.8, "1 MB at 10 Mbps takes at least 0.8 s");
    let cbr = names.iter().position(|n| n == "cbr").unwrap();
    assert_eq!(out.flows.i64("bytes_sent")[cbr], 250_000, "1 Mbps for 2 s in 1000 B datagrams");
    let mice = strs(&out.flows, "kind").iter().filter(|k| *k == "arrival").count();
    assert!(mice >= 3, "{mice} Poisson arrivals in 5 s at one per 0.5 s");
    let rt = out.transactions.f64("response_time_s");
    assert_eq!(rt.len(), 5);
    // Request (1 packet) one way and the first response packet back: at least one RTT (20 ms).
    assert!(rt.iter().all(|&r| (0.02..0.5).contains(&r)), "{rt:?}");
    assert!(out.transactions.f64("completion_time_s").iter().all(|c| c.is_finite()));
}

/// The simulator writes every table with exactly the columns the one schema declares, in its
/// order and with its types (`xcc_build::schema`, which Python and the emulator use too).
#[test]
fn every_table_has_the_schema_columns_in_order() {
    use xcc_sim::output::Column;
    use xcc_sim::schema::{columns, Dtype};
    let out = run(&dumbbell(2, "10Mbps", "5ms", "50pkt", "\"droptail\"", "", "2s"));
    let tables = [
        ("flows", &out.flows),
        ("links", &out.links),
        ("flow_series", &out.flow_series),
        ("link_series", &out.link_series),
        ("transactions", &out.transactions),
    ];
    for (name, table) in tables {
        let want = columns(name).unwrap();
        if table.columns.is_empty() {
            continue;
        }
        let got: Vec<(&str, Dtype)> = table
            .columns
            .iter()
            .map(|(n, c)| {
                let d = match c {
                    Column::F64(_) => Dtype::F64,
                    Column::I64(_) => Dtype::I64,
                    Column::Str(_) => Dtype::Str,
                };
                (*n, d)
            })
            .collect();
        let want: Vec<(&str, Dtype)> = want.iter().map(|c| (c.name, c.dtype)).collect();
        assert_eq!(got, want, "table {name}");
    }
}

/// HTTP/1.0 over new connections: each transaction's request opens its connection with a SYN,
/// so on an idle path every response time is that of an already open connection plus exactly
/// one SYN / SYN-ACK round trip (with `persistent = true` only the first exchange's): 40-byte packets over 100 Mb/s and 10 Mb/s links, 5 ms each,
/// both ways: 2 x (3.2 µs + 32 µs + 10 ms) = 20.0704 ms.
#[test]
fn a_new_connection_adds_one_handshake_rtt_to_each_response() {
    let text = |connection: &str, persistent: bool| {
        format!(
            r#"
name = "http"
duration = "3s"
{CLIENT_ROUTER_SERVER}[[transactions]]
name = "http"
client = "c"
server = "s"
count = 4
start = "0s"
stop = "2s"
request = "62B"
response = "4KB"
persistent = {persistent}
transport = {{ connection = "{connection}" }}
"#
        )
    };
    let open = run(&text("open", false));
    let syn = run(&text("handshake", false));
    for col in ["response_time_s", "completion_time_s"] {
        for (a, b) in open.transactions.f64(col).iter().zip(syn.transactions.f64(col)) {
            assert!((b - a - 0.020_070_4).abs() < 1e-9, "{col}: {b} vs {a}");
        }
    }
    assert!(syn.flows.i64("timeouts").iter().all(|&t| t == 0));
    // A persistent connection: only the first exchange opens it.
    let kept = run(&text("handshake", true));
    let (o, k) = (open.transactions.f64("response_time_s"), kept.transactions.f64("response_time_s"));
    assert!((k[0] - o[0] - 0.020_070_4).abs() < 1e-9, "{} vs {}", k[0], o[0]);
    assert_eq!(k[1..], o[1..]);
}

#[test]
fn a_connection_other_than_handshake_or_open_is_refused_naming_the_field() {
    let text = r#"
name = "bad"
duration = "1s"
[[host]]
name = "a"
[[host]]
name = "b"
[[link]]
between = ["a", "b"]
rate = "10Mbps"
buffer = "100pkt"
[[flow]]
name = "f"
src = "a"
dst = "b"
transport = { connection = "persistent" }
"#;
    let e = match xcc_sim::resolve(text, "bad.toml", Format::Toml) {
        Ok(_) => panic!("resolved"),
        Err(e) => e.to_string(),
    };
    assert!(e.contains("flow[0].transport.connection") && e.contains("'persistent'"), "{e}");
}
