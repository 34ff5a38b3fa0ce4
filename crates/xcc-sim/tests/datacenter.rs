//! Datacenter fabrics, ECMP and the papers' workload metrics, end to end: a `[fabric]` and a
//! `[workload]` through the packet simulator to the `fct`, `slowdown` and `queue_cdf` tables.

use xcc_build::Network;
use xcc_sim::output::Column;
use xcc_sim::{resolve, run_text, Format};

/// A k = 4 fat-tree (16 hosts at 10 Gbit/s, 1 us links), DCTCP, WebSearch at `load`.
fn fat_tree(load: f64, extra: &str) -> String {
    format!(
        r#"
name = "fat-tree k=4"
duration = "20ms"
seed = 3
[metrics]
interval = "0s"
[fabric]
topology = {{ fat_tree = {{ k = 4 }} }}
host_rate = "10Gbps"
delay = "1us"
buffer = "500KB"
queue = {{ kind = "dctcp", k = "30pkt" }}
[workload]
cdf = "websearch"
load = {load}
stop = "10ms"
cc = "dctcp"
transport = {{ min_rto = "1ms" }}
{extra}
"#
    )
}

fn strs(c: Option<&Column>) -> &[String] {
    match c {
        Some(Column::Str(v)) => v,
        _ => panic!("not a str column"),
    }
}

#[test]
fn websearch_on_a_fat_tree_gives_slowdowns_by_size() {
    let (_, out) = run_text(&fat_tree(0.3, ""), "ft.toml", Format::Toml, None, false, None).unwrap();
    let dc = out.datacenter.expect("a workload run has the datacenter tables");
    let n = dc.fct.rows();
    // 16 hosts x 0.3 x 10 Gbit/s / 8 / 1,711,250 B x 10 ms: about 35 flows.
    assert!((15..70).contains(&n), "{n} flows");
    let slow: Vec<f64> = dc.fct.f64("slowdown").iter().copied().filter(|s| !s.is_nan()).collect();
    assert!(slow.len() >= n / 2, "{} of {n} flows finished", slow.len());
    assert!(slow.iter().all(|&s| s >= 1.0));
    let (p50, p99) = (dc.slowdown.f64("p50"), dc.slowdown.f64("p99"));
    assert!(!p50.is_empty());
    assert!(p50.iter().zip(p99).all(|(a, b)| a <= b));
    // Every switch port's CDF ends at 1.
    let (ids, frac) = (dc.queue_cdf.i64("link_id"), dc.queue_cdf.f64("fraction"));
    for k in 0..ids.len() {
        if k + 1 == ids.len() || ids[k + 1] != ids[k] {
            assert!((frac[k] - 1.0).abs() < 1e-12, "link {}: {}", ids[k], frac[k]);
        }
    }
    assert!(strs(dc.queue_cdf.column("link")).iter().all(|l| !l.starts_with('h')), "switch ports only");
}

/// Same seed, same everything; the tables are deterministic.
#[test]
fn workload_runs_are_deterministic() {
    let run = || run_text(&fat_tree(0.3, ""), "ft.toml", Format::Toml, None, false, None).unwrap().1;
    let (a, b) = (run(), run());
    let (a, b) = (a.datacenter.unwrap(), b.datacenter.unwrap());
    // Debug text, since a flow that did not finish has NaN (never equal to itself).
    assert_eq!(format!("{:?}", a.fct), format!("{:?}", b.fct));
    assert_eq!(format!("{:?}", a.slowdown), format!("{:?}", b.slowdown));
    assert_eq!(a.queue_cdf, b.queue_cdf);
}

/// ECMP spreads flows between two leaves over all four spines; `routing = "single"` puts
/// them all on one.
#[test]
fn ecmp_spreads_flows_across_the_spines() {
    let scenario = |routing: &str| {
        let flows: String = (0..64)
            .map(|i| {
                format!("[[flow]]\nname = \"f{i}\"\nsrc = \"h{}\"\ndst = \"h{}\"\nsize = \"10KB\"\n", i % 8, 8 + i % 8)
            })
            .collect();
        format!(
            r#"
name = "leaf-spine"
duration = "1ms"
[fabric]
topology = {{ leaf_spine = {{ leaves = 2, spines = 4, hosts_per_leaf = 8, oversubscription = 2 }} }}
host_rate = "10Gbps"
buffer = "100pkt"
routing = "{routing}"
{flows}"#
        )
    };
    let spines_used = |routing: &str| -> Vec<usize> {
        let n = Network::build(resolve(&scenario(routing), "ls.toml", Format::Toml).unwrap()).unwrap();
        let mut per_spine = vec![0; 4];
        for &(fwd, _) in &n.flow_routes {
            let path = n.path(fwd);
            assert_eq!(path.len(), 4, "host, leaf, spine, leaf, host");
            let spine = &n.scenario.links[path[1] as usize].name;
            per_spine[spine.trim_start_matches("leaf0->spine").parse::<usize>().unwrap()] += 1;
        }
        per_spine
    };
    let ecmp = spines_used("ecmp");
    // 64 flows, 4 spines: 16 each on average; a uniform hash keeps each within 16 +- 10.
    assert!(ecmp.iter().all(|&c| (6..=26).contains(&c)), "{ecmp:?}");
    let single = spines_used("single");
    assert_eq!(single.iter().filter(|&&c| c > 0).count(), 1, "{single:?}");
    // 2:1 oversubscription: 8 x 10 Gbit/s down over 4 spine links takes 10 Gbit/s each.
    let s = resolve(&scenario("ecmp"), "ls.toml", Format::Toml).unwrap();
    let f = s.fabric.unwrap();
    assert_eq!((f.fabric_rate_bps, f.oversubscription), (10_000_000_000, 2.0));
}

/// A CDF that is not a CDF and a load above 1 are refused before the run, naming the field.
#[test]
fn bad_workloads_are_refused_naming_the_field() {
    let e = resolve(&fat_tree(1.5, ""), "ft.toml", Format::Toml).unwrap_err();
    assert_eq!(e.path, "workload.load");
    let e = resolve(&fat_tree(0.0, ""), "ft.toml", Format::Toml).unwrap_err();
    assert_eq!(e.path, "workload.load");
    let dir = std::env::temp_dir().join(format!("xcc-cdf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.cdf");
    std::fs::write(&bad, "0 0\n100 50\n50 60\n200 100\n").unwrap();
    let text = fat_tree(0.3, "").replace("cdf = \"websearch\"", &format!("cdf = \"{}\"", bad.display()));
    let e = resolve(&text, "ft.toml", Format::Toml).unwrap_err();
    assert_eq!(e.path, "workload.cdf");
    assert!(e.message.contains("bad.cdf") && e.message.contains("line 3"), "{e}");
    std::fs::write(&bad, "0 0\n100 50\n200 90\n").unwrap();
    let e = resolve(&text, "ft.toml", Format::Toml).unwrap_err();
    assert!(e.message.contains("100 percent"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Incasts: fan-in senders to one receiver, each request's size split among them.
#[test]
fn incasts_are_mixed_in() {
    let text = fat_tree(0.1, "incast = { fan_in = 8, size = \"400KB\", requests_per_sec = 200.0 }");
    let (_, out) = run_text(&text, "ft.toml", Format::Toml, None, false, None).unwrap();
    let dc = out.datacenter.unwrap();
    let kinds = strs(dc.fct.column("kind"));
    let sizes = dc.fct.i64("size_bytes");
    let incast: Vec<usize> = (0..kinds.len()).filter(|&k| kinds[k] == "incast").collect();
    // 16 hosts x 200 /s x 10 ms = 32 requests expected, 8 flows each.
    assert!(incast.len() >= 8 * 10 && incast.len().is_multiple_of(8), "{} incast flows", incast.len());
    assert!(incast.iter().all(|&k| sizes[k] == 50_000));
}
