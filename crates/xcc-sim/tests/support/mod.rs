//! Helpers shared by the rate-based explicit protocols' scenario tests.
#![allow(dead_code)]

use xcc_sim::output::Column;
use xcc_sim::{run_text, Format, RunOutput, Table};

pub fn run(text: &str) -> RunOutput {
    run_text(text, "scenario.toml", Format::Toml, None, true, None).unwrap_or_else(|e| panic!("{e}")).1
}

pub fn link_id(out: &RunOutput, name: &str) -> i64 {
    match out.links.column("name") {
        Some(Column::Str(v)) => v.iter().position(|n| n == name).expect("link") as i64,
        _ => unreachable!(),
    }
}

/// (time, value) of a series column for one entity.
pub fn series(t: &Table, id_col: &str, id: i64, col: &str) -> Vec<(f64, f64)> {
    let time = t.f64("time_s");
    let ids = t.i64(id_col);
    (0..time.len())
        .filter(|&k| ids[k] == id)
        .map(|k| {
            let v = match t.column(col) {
                Some(Column::F64(v)) => v[k],
                Some(Column::I64(v)) => v[k] as f64,
                _ => unreachable!("column {col}"),
            };
            (time[k], v)
        })
        .collect()
}

/// Mean of a series column for one entity over (from, to].
pub fn mean(t: &Table, id_col: &str, id: i64, col: &str, from: f64, to: f64) -> f64 {
    let xs: Vec<f64> =
        series(t, id_col, id, col).into_iter().filter(|&(tt, _)| tt > from && tt <= to).map(|(_, v)| v).collect();
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// Largest value of a series column for one entity over (from, to].
pub fn max(t: &Table, id_col: &str, id: i64, col: &str, from: f64, to: f64) -> f64 {
    series(t, id_col, id, col).into_iter().filter(|&(tt, _)| tt > from && tt <= to).map(|(_, v)| v).fold(0.0, f64::max)
}

/// Three senders, three receivers, three routers; links r1->r2 (L1) and r2->r3 (L2) with the
/// given queue, access links at 1 Gb/s. Flow 0 crosses L1 and L2, flow 1 only L1, flow 2 only L2.
pub fn parking_lot(queue: &str, cc: &str, c1: &str, c2: &str, duration: &str) -> String {
    format!(
        r#"name = "parking-lot"
duration = "{duration}"
[[host]]
name = "s{{i}}"
count = 3
[[host]]
name = "d{{i}}"
count = 3
[[router]]
name = "r{{i}}"
count = 3
[[link]]
between = ["s{{i}}", "r1"]
count = 2
rate = "1Gbps"
buffer = "unlimited"
[[link]]
between = ["s3", "r2"]
rate = "1Gbps"
buffer = "unlimited"
[[link]]
between = ["r1", "r2"]
rate = "{c1}"
delay = "5ms"
buffer = "unlimited"
queue = {queue}
[[link]]
between = ["r2", "r3"]
rate = "{c2}"
delay = "5ms"
buffer = "unlimited"
queue = {queue}
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
name = "f{{i}}"
count = 3
src = "s{{i}}"
dst = "d{{i}}"
cc = {cc}
[metrics]
interval = "100ms"
"#
    )
}

/// `n` flows over one bottleneck `s{i} -> r1 -> r2 -> d`, bottleneck `c` with one-way delay
/// `delay`, flow `i` starting at `starts[i]` (seconds).
pub fn dumbbell(queue: &str, cc: &str, c: &str, delay: &str, starts: &[f64], duration: &str) -> String {
    let n = starts.len();
    // Goodput samples of 100 ms, or 50 ms for short RTTs.
    let sample = if delay == "50ms" { "100ms" } else { "50ms" };
    let mut s = format!(
        r#"name = "dumbbell"
duration = "{duration}"
[[host]]
name = "s{{i}}"
count = {n}
[[host]]
name = "d"
[[router]]
name = "r{{i}}"
count = 2
[[link]]
between = ["s{{i}}", "r1"]
count = {n}
rate = "10Gbps"
buffer = "unlimited"
[[link]]
between = ["r1", "r2"]
rate = "{c}"
delay = "{delay}"
buffer = "unlimited"
queue = {queue}
[[link]]
between = ["r2", "d"]
rate = "10Gbps"
buffer = "unlimited"
[metrics]
interval = "{sample}"
"#
    );
    for (i, t) in starts.iter().enumerate() {
        s += &format!(
            "[[flow]]\nname = \"f{}\"\nsrc = \"s{}\"\ndst = \"d\"\ncc = {cc}\nstart = \"{}ms\"\n",
            i + 1,
            i + 1,
            (t * 1000.0).round()
        );
    }
    s
}

/// Seed 000 Section IX's network (Fig. 12): L1 = 155 Mb/s, 1 ms shared by flow 0 and `n`
/// others; flow 0 continues over L2 = 622 Mb/s, 100 ms; the others over L3 = 100 Mb/s, 1 ms.
/// Flow 0's RTT is about 204 ms, the others' 6 ms: the heterogeneous-delay case where RCP fails.
pub fn seed000_network(queue: &str, cc: &str, n: u32, duration: &str) -> String {
    format!(
        r#"name = "seed000-ix"
duration = "{duration}"
[[host]]
name = "a"
[[host]]
name = "b"
[[host]]
name = "s{{i}}"
count = {n}
[[host]]
name = "d{{i}}"
count = {n}
[[router]]
name = "r{{i}}"
count = 4
[[link]]
between = ["a", "r1"]
rate = "10Gbps"
buffer = "unlimited"
[[link]]
between = ["s{{i}}", "r1"]
count = {n}
rate = "10Gbps"
buffer = "unlimited"
[[link]]
between = ["r1", "r2"]
rate = "155Mbps"
delay = "1ms"
buffer = "unlimited"
queue = {queue}
[[link]]
between = ["r2", "r3"]
rate = "622Mbps"
delay = "100ms"
buffer = "unlimited"
queue = {queue}
[[link]]
between = ["r2", "r4"]
rate = "100Mbps"
delay = "1ms"
buffer = "unlimited"
queue = {queue}
[[link]]
between = ["r3", "b"]
rate = "10Gbps"
buffer = "unlimited"
[[link]]
between = ["r4", "d{{i}}"]
count = {n}
rate = "10Gbps"
buffer = "unlimited"
[[flow]]
name = "long"
src = "a"
dst = "b"
cc = {cc}
[[flow]]
name = "short{{i}}"
count = {n}
src = "s{{i}}"
dst = "d{{i}}"
cc = {cc}
[metrics]
interval = "100ms"
"#
    )
}

/// The scenario error message for `text` (panics if it resolves).
pub fn resolve_error(text: &str) -> String {
    match xcc_sim::resolve(text, "bad.toml", Format::Toml) {
        Ok(_) => panic!("resolved: {text}"),
        Err(e) => e.to_string(),
    }
}

/// [`parking_lot`] where flow 2 (on L2 only) stops at `stop` seconds: flow 0's bottleneck moves
/// from L2 to L1.
pub fn parking_lot_with_departure(queue: &str, cc: &str, stop: f64, duration: &str) -> String {
    let text = parking_lot(queue, cc, "100Mbps", "60Mbps", duration);
    let template = format!("[[flow]]\nname = \"f{{i}}\"\ncount = 3\nsrc = \"s{{i}}\"\ndst = \"d{{i}}\"\ncc = {cc}\n");
    assert!(text.contains(&template));
    let mut flows = String::new();
    for i in 1..=3 {
        flows += &format!("[[flow]]\nname = \"f{i}\"\nsrc = \"s{i}\"\ndst = \"d{i}\"\ncc = {cc}\n");
        if i == 3 {
            flows += &format!("stop = \"{}ms\"\n", (stop * 1000.0).round());
        }
    }
    text.replace(&template, &flows)
}
