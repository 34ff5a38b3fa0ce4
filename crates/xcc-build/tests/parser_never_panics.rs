//! The scenario parser fed arbitrary values: it never panics, and every rejection names where
//! (a field path), so a user always learns which entry to fix. Bounded case counts keep this in
//! the normal `cargo test` run.

use proptest::prelude::*;
use serde_json::{json, Map, Value};
use xcc_build::{resolve, Format};

/// Strings a scenario field may hold: real quantities and names, edge cases, and noise.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "10Mbps",
            "1Gbps",
            "0bps",
            "1e300s",
            "1e30s",
            "-5ms",
            "10ms",
            "0s",
            "1e19ns",
            "NaNs",
            "infs",
            "100pkt",
            "1e300pkt",
            "0pkt",
            "1500B",
            "1e30GB",
            "70000B",
            "unlimited",
            "h{i}",
            "r{i}",
            "h1",
            "h2",
            "r1",
            "red",
            "droptail",
            "markmax",
            "maxnet",
            "xcp",
            "rcp",
            "piqi-rcp",
            "jetmax",
            "newreno",
            "reno",
            "bulk",
            "cbr",
            "fixed",
            "exponential",
            "pareto",
            "b",
            "t",
            "gentle",
            "mark",
            "bytes",
            "last",
            "ns2",
            "auto",
            "",
            " ",
            "h1->h2",
        ])
        .prop_map(str::to_string),
        "\\PC{0,12}",
    ]
}

fn number() -> impl Strategy<Value = Value> {
    prop_oneof![
        (0u64..2000).prop_map(Value::from),
        prop::sample::select(vec![u64::MAX, 1 << 62, 100_000_000_000, u32::MAX as u64 + 1]).prop_map(Value::from),
        (-1000i64..0).prop_map(Value::from),
        prop::sample::select(vec![0.5f64, 1e300, -1e300, 1e-300, 0.0, 1.5]).prop_map(Value::from),
    ]
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        3 => text().prop_map(Value::from),
        2 => number(),
        1 => any::<bool>().prop_map(Value::from),
        1 => Just(Value::Null),
    ]
}

const ENTRY_KEYS: &[&str] = &[
    "name",
    "count",
    "from",
    "to",
    "rate",
    "delay",
    "buffer",
    "queue",
    "src",
    "dst",
    "cc",
    "kind",
    "start",
    "stop",
    "size",
    "transport",
    "client",
    "server",
    "min_th",
    "max_th",
    "theta",
    "variant",
    "unit",
    "tail",
    "mss",
    "interval",
    "mean",
    "loss",
    "jitter",
    "route",
    "request",
    "response",
    "preset",
    "rtt_filter",
    "max_interval",
    "x_max",
    "ecn",
    "packet",
    "dist",
    "shape",
    "initial_window",
    "pace",
    "kappa",
    "bogus",
];

const TOP_KEYS: &[&str] = &[
    "name",
    "description",
    "duration",
    "seed",
    "host",
    "router",
    "link",
    "flow",
    "arrivals",
    "transactions",
    "metrics",
    "bogus",
];

/// A value shaped like a scenario entry (a table of known keys), nested a little.
fn entry() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::vec((prop::sample::select(ENTRY_KEYS), inner), 0..8)
                .prop_map(|kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect())),
        ]
    })
}

/// A document shaped like a scenario: known top-level keys, arrays of entries.
fn document() -> impl Strategy<Value = Value> {
    let field = prop_oneof![2 => prop::collection::vec(entry(), 0..4).prop_map(Value::from), 1 => entry()];
    prop::collection::vec((prop::sample::select(TOP_KEYS), field), 0..10).prop_map(|kv| {
        let mut m: Map<String, Value> = kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        // Mostly keep the required fields right, so the parser gets past them to the entries.
        m.entry("name").or_insert(json!("fuzz"));
        m.entry("duration").or_insert(json!("1s"));
        Value::Object(m)
    })
}

fn check(text: &str, format: Format) {
    if let Err(e) = resolve(text, "fuzz.json", format) {
        let parse_error = e.message.starts_with("not valid");
        assert!(parse_error || !e.path.is_empty(), "rejection without a field: {e}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn scenario_shaped_json_never_panics_and_names_the_field(doc in document()) {
        check(&doc.to_string(), Format::Json);
    }

    #[test]
    fn any_json_value_never_panics_and_names_the_field(v in entry()) {
        check(&v.to_string(), Format::Json);
    }

    #[test]
    fn scenario_shaped_toml_never_panics_and_names_the_field(doc in document()) {
        // TOML has no null: documents with one are not TOML, skip them.
        if let Ok(text) = toml::to_string(&doc) {
            check(&text, Format::Toml);
        }
    }

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,200}") {
        check(&text, Format::Toml);
        check(&text, Format::Json);
    }
}

/// The inputs of the issue that once ran, hung or wrote output: each an error naming its field.
#[test]
fn overflowing_quantities_and_huge_expansions_are_errors_naming_the_field() {
    let base = |extra: &str, duration: &str| {
        format!(
            "name = \"x\"\nduration = \"{duration}\"\n[[host]]\nname = \"a\"\n[[host]]\nname = \"b\"\n\
             [[link]]\nfrom = \"a\"\nto = \"b\"\nrate = \"10Mbps\"\ndelay = \"1ms\"\n{extra}"
        )
    };
    let cases = [
        (base("", "1e30s"), "duration"),
        (base("", "10s").replace("delay = \"1ms\"", "delay = \"1e300s\""), "link[0]"),
        (base("", "10s").replace("rate = \"10Mbps\"", "rate = \"1e300Gbps\""), "link[0]"),
        (base("[[router]]\nname = \"r{i}\"\ncount = 100000000000\n", "10s"), "router[0].count"),
        (base("[[router]]\nname = \"r{i}\"\ncount = 9223372036854775807\n", "10s"), "router[0].count"),
        (base("[[router]]\nname = \"r\"\ncount = 18446744073709551615\n", "10s"), "line 14 (count)"),
    ];
    for (text, field) in cases {
        let e = resolve(&text, "bad.toml", Format::Toml).expect_err(&text);
        assert!(e.path.starts_with(field), "{e} should name {field}");
    }
}
