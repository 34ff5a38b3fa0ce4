//! `xcc-emu`: a scenario on real packets (hosts in network namespaces behind the TUN router).
//!
//! ```text
//! xcc-emu run SCENARIO [--seed N] [--json OUT] [--stack udp|kernel]
//!                                                emulate; results as JSON (stdout or OUT);
//!                                                kernel: MaxNet flows on Linux TCP (docs/kernel.md)
//! xcc-emu bench [--seconds S] [--rates 100,500] [--repeat N]   router speed and accuracy (JSON)
//! xcc-emu cleanup                                delete every leftover xccemu* namespace
//! xcc-emu check                                  say whether this machine can run the emulator
//! ```
//! `xcc emu` (Python) calls `run` and stores the results as the simulator's Parquet tables.

use std::process::ExitCode;

use xcc_emu::{bench, netns, router, runner};

fn run(args: &[String]) -> Result<(), String> {
    let mut path = None;
    let mut seed = None;
    let mut out = None;
    let mut stack = runner::Stack::Udp;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--seed" => seed = Some(it.next().and_then(|s| s.parse::<u64>().ok()).ok_or("--seed needs an integer")?),
            "--json" => out = Some(it.next().ok_or("--json needs a path")?.clone()),
            "--stack" => {
                stack = match it.next().map(String::as_str) {
                    Some("udp") => runner::Stack::Udp,
                    Some("kernel") => runner::Stack::Kernel,
                    _ => return Err("--stack needs udp or kernel".into()),
                }
            }
            p if path.is_none() && !p.starts_with("--") => path = Some(p.to_string()),
            other => return Err(format!("unexpected argument {other}")),
        }
    }
    let path = path.ok_or("run needs a scenario file")?;
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
    let format = if path.ends_with(".json") { xcc_build::Format::Json } else { xcc_build::Format::Toml };
    let mut scenario = xcc_build::resolve(&text, &path, format).map_err(|e| e.to_string())?;
    if let Some(s) = seed {
        scenario.seed = s;
    }
    router::install_stop_handlers();
    let result = runner::emulate_on(&scenario, stack);
    // Whatever happened, nothing of this run may stay behind.
    let _ = netns::cleanup(&netns::run_prefix());
    let r = result.map_err(|e| e.to_string())?;
    let mut doc = r.json;
    doc["seed"] = serde_json::json!(scenario.seed);
    doc["resolved"] = serde_json::json!(serde_json::to_string(&scenario).map_err(|e| e.to_string())?);
    let text = serde_json::to_string(&doc).map_err(|e| e.to_string())?;
    match out {
        Some(o) => std::fs::write(&o, text).map_err(|e| format!("{o}: {e}")),
        None => {
            println!("{text}");
            Ok(())
        }
    }
}

fn bench_cmd(args: &[String]) -> Result<(), String> {
    let mut seconds = 3.0;
    let mut rates = vec![100u64, 500];
    let mut repeat = 3;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let v = it.next().ok_or(format!("{a} needs a value"))?;
        match a.as_str() {
            "--seconds" => seconds = v.parse().map_err(|_| "--seconds needs a number")?,
            "--repeat" => repeat = v.parse().map_err(|_| "--repeat needs an integer")?,
            "--rates" => {
                rates = v
                    .split(',')
                    .map(|x| x.parse().map_err(|_| "--rates: Mbit/s, comma-separated"))
                    .collect::<Result<_, _>>()?
            }
            other => return Err(format!("unexpected argument {other}")),
        }
    }
    router::install_stop_handlers();
    let mut runs = Vec::new();
    for &r in &rates {
        for _ in 0..repeat {
            let m = bench::measure(r, seconds);
            let _ = netns::cleanup(&netns::run_prefix());
            let m = m.map_err(|e| e.to_string())?;
            eprintln!("{m}");
            runs.push(m);
        }
    }
    println!("{}", serde_json::to_string_pretty(&runs).map_err(|e| e.to_string())?);
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let r = match args.first().map(String::as_str) {
        Some("run") => run(&args[1..]),
        Some("bench") => bench_cmd(&args[1..]),
        Some("cleanup") => netns::check_environment()
            .and_then(|_| netns::cleanup(netns::PREFIX))
            .map(|names| {
                for n in &names {
                    println!("deleted namespace {n}");
                }
                println!("{} leftover namespace(s) removed", names.len());
            })
            .map_err(|e| e.to_string()),
        Some("check") => netns::check_environment()
            .map(|_| println!("ok: root and /dev/net/tun available"))
            .map_err(|e| e.to_string()),
        _ => {
            eprintln!(
                "usage: xcc-emu run SCENARIO [--seed N] [--json OUT] [--stack udp|kernel] | bench [--seconds S] [--rates 100,500] [--repeat N] | cleanup | check"
            );
            return ExitCode::from(2);
        }
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xcc-emu: {e}");
            ExitCode::FAILURE
        }
    }
}
