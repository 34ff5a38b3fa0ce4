//! The `xcc-emu` command line: a scenario on real packets (hosts in network namespaces behind
//! the TUN router). The same entry point serves the `xcc-emu` binary and the Python package's
//! `python -m xcclab._router`, which runs it from the `_native` extension (one artefact in the
//! wheel, docs/emu.md).
//!
//! ```text
//! xcc-emu run SCENARIO [--seed N] [--json OUT] [--stack udp|kernel]
//!                                                emulate; results as JSON (stdout or OUT);
//!                                                kernel: MaxNet flows on Linux TCP (docs/kernel.md)
//! xcc-emu bench [--seconds S] [--rates 100,500] [--repeat N] [--modes tcp,udp]   router speed and accuracy (JSON)
//! xcc-emu cleanup [--run PID]                    delete the namespaces of dead runs (or of run PID)
//! xcc-emu stale                                  list the namespaces of dead runs
//! xcc-emu check [SCENARIO [--stack udp|kernel]]  say whether this machine can run (the scenario)
//! ```
//! `run` stops on SIGINT, SIGTERM and SIGHUP, and when its parent dies (`PR_SET_PDEATHSIG`;
//! `XCC_EMU_PARENT_PID` names the parent it expects, closing the race with a parent that died
//! before the request), deleting its namespaces and writing nothing.

use crate::os::netns;
use crate::os::signals;
use crate::run::{bench, preflight, runner};

/// Exit status of a run stopped by a signal (the wrapper re-raises its own).
pub const EXIT_INTERRUPTED: i32 = 130;
/// Exit status for bad arguments or a scenario the emulator refuses.
pub const EXIT_BAD_INPUT: i32 = 2;

enum Failure {
    BadInput(String),
    Interrupted,
    Failed(String),
}

impl From<String> for Failure {
    fn from(e: String) -> Self {
        Failure::Failed(e)
    }
}

impl From<&str> for Failure {
    fn from(e: &str) -> Self {
        Failure::BadInput(e.to_string())
    }
}

fn io_failure(e: std::io::Error) -> Failure {
    match e.kind() {
        std::io::ErrorKind::Interrupted => Failure::Interrupted,
        std::io::ErrorKind::InvalidInput => Failure::BadInput(e.to_string()),
        _ => Failure::Failed(e.to_string()),
    }
}

struct RunArgs {
    path: Option<String>,
    seed: Option<u64>,
    out: Option<String>,
    stack: runner::Stack,
}

fn parse_run_args(args: &[String]) -> Result<RunArgs, Failure> {
    let mut r = RunArgs { path: None, seed: None, out: None, stack: runner::Stack::Udp };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--seed" => r.seed = Some(it.next().and_then(|s| s.parse::<u64>().ok()).ok_or("--seed needs an integer")?),
            "--json" => r.out = Some(it.next().ok_or("--json needs a path")?.clone()),
            "--stack" => {
                r.stack = match it.next().map(String::as_str) {
                    Some("udp") => runner::Stack::Udp,
                    Some("kernel") => runner::Stack::Kernel,
                    _ => return Err("--stack needs udp or kernel".into()),
                }
            }
            p if r.path.is_none() && !p.starts_with("--") => r.path = Some(p.to_string()),
            other => return Err(Failure::BadInput(format!("unexpected argument {other}"))),
        }
    }
    Ok(r)
}

fn load(path: &str, seed: Option<u64>) -> Result<xcc_build::scenario::model::Scenario, Failure> {
    let text = std::fs::read_to_string(path).map_err(|e| Failure::BadInput(format!("{path}: {e}")))?;
    let format = if path.ends_with(".json") { xcc_build::Format::Json } else { xcc_build::Format::Toml };
    let mut scenario = xcc_build::resolve(&text, path, format).map_err(|e| Failure::BadInput(e.to_string()))?;
    if let Some(s) = seed {
        scenario.seed = s;
    }
    Ok(scenario)
}

/// Stops this process when its parent dies, and says so if it already has.
fn follow_parent() -> Result<(), Failure> {
    let expected = std::env::var("XCC_EMU_PARENT_PID").ok().and_then(|p| p.parse().ok());
    if !crate::os::sys::die_with_parent(expected) {
        return Err(Failure::Interrupted);
    }
    Ok(())
}

/// Namespaces of dead runs, as a warning on stderr (they cost nothing but clutter; the user
/// decides when to remove them).
fn warn_stale() {
    if let Ok(names) = netns::stale() {
        if !names.is_empty() {
            eprintln!(
                "xcc-emu: warning: {} namespace(s) of dead runs left behind ({}): `xcc emu --cleanup` removes them",
                names.len(),
                names.join(", ")
            );
        }
    }
}

fn run(args: &[String]) -> Result<(), Failure> {
    signals::install_stop_handlers();
    follow_parent()?;
    let a = parse_run_args(args)?;
    let path = a.path.ok_or("run needs a scenario file")?;
    let scenario = load(&path, a.seed)?;
    warn_stale();
    let result = runner::emulate_on(&scenario, a.stack);
    // Whatever happened, nothing of this run may stay behind.
    let _ = netns::cleanup(&netns::run_prefix());
    if signals::STOP.load(std::sync::atomic::Ordering::Relaxed) {
        return Err(Failure::Interrupted);
    }
    let r = result.map_err(io_failure)?;
    let mut doc = r.json;
    doc["seed"] = serde_json::json!(scenario.seed);
    doc["resolved"] = serde_json::json!(serde_json::to_string(&scenario).map_err(|e| e.to_string())?);
    let text = serde_json::to_string(&doc).map_err(|e| e.to_string())?;
    match a.out {
        Some(o) => std::fs::write(&o, text).map_err(|e| Failure::Failed(format!("{o}: {e}"))),
        None => {
            println!("{text}");
            Ok(())
        }
    }
}

fn check(args: &[String]) -> Result<(), Failure> {
    let a = parse_run_args(args)?;
    match a.path {
        None => netns::check_environment().map_err(io_failure)?,
        Some(path) => {
            let scenario = load(&path, a.seed)?;
            preflight::check(&scenario, a.stack).map_err(io_failure)?;
        }
    }
    println!("ok: root and /dev/net/tun available");
    Ok(())
}

fn cleanup(args: &[String]) -> Result<(), Failure> {
    netns::check_environment().map_err(io_failure)?;
    let names = match args {
        [] => netns::cleanup_stale(),
        [flag, pid] if flag == "--run" => {
            let pid: u32 = pid.parse().map_err(|_| "--run needs a process id")?;
            netns::cleanup(&format!("{}{pid}x", netns::PREFIX))
        }
        _ => return Err("usage: cleanup [--run PID]".into()),
    }
    .map_err(io_failure)?;
    for n in &names {
        println!("deleted namespace {n}");
    }
    println!("{} leftover namespace(s) removed", names.len());
    Ok(())
}

fn bench_cmd(args: &[String]) -> Result<(), Failure> {
    let mut seconds = 3.0;
    let mut rates = vec![100u64, 500];
    let mut repeat = 3;
    let mut modes = vec![bench::Mode::Tcp, bench::Mode::Udp];
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let v = it.next().ok_or(Failure::BadInput(format!("{a} needs a value")))?;
        match a.as_str() {
            "--seconds" => seconds = v.parse().map_err(|_| "--seconds needs a number")?,
            "--repeat" => repeat = v.parse().map_err(|_| "--repeat needs an integer")?,
            "--modes" => {
                modes = v
                    .split(',')
                    .map(|x| bench::Mode::parse(x).ok_or("--modes: tcp and/or udp, comma-separated"))
                    .collect::<Result<_, _>>()?
            }
            "--rates" => {
                rates = v
                    .split(',')
                    .map(|x| x.parse().map_err(|_| "--rates: Mbit/s, comma-separated"))
                    .collect::<Result<_, _>>()?
            }
            other => return Err(Failure::BadInput(format!("unexpected argument {other}"))),
        }
    }
    signals::install_stop_handlers();
    follow_parent()?;
    let mut runs = Vec::new();
    for &mode in &modes {
        for &r in &rates {
            for _ in 0..repeat {
                let m = bench::measure(mode, r, seconds);
                let _ = netns::cleanup(&netns::run_prefix());
                let m = m.map_err(io_failure)?;
                eprintln!("{m}");
                runs.push(m);
            }
        }
    }
    println!("{}", serde_json::to_string_pretty(&runs).map_err(|e| e.to_string())?);
    Ok(())
}

/// Runs the command line `args` (without the program name); returns the exit status.
pub fn main(args: &[String]) -> i32 {
    let r = match args.first().map(String::as_str) {
        Some("run") => run(&args[1..]),
        Some("bench") => bench_cmd(&args[1..]),
        Some("cleanup") => cleanup(&args[1..]),
        Some("stale") => netns::stale().map_err(io_failure).map(|names| {
            for n in names {
                println!("{n}");
            }
        }),
        Some("check") => check(&args[1..]),
        _ => Err(Failure::BadInput(
            "usage: xcc-emu run SCENARIO [--seed N] [--json OUT] [--stack udp|kernel] | bench [--seconds S] \
             [--rates 100,500] [--repeat N] [--modes tcp,udp] | cleanup [--run PID] | stale | check [SCENARIO [--stack S]]"
                .into(),
        )),
    };
    match r {
        Ok(()) => 0,
        Err(Failure::BadInput(e)) => {
            eprintln!("xcc-emu: {e}");
            EXIT_BAD_INPUT
        }
        Err(Failure::Interrupted) => {
            eprintln!("xcc-emu: interrupted: stopped, namespaces deleted, nothing written");
            EXIT_INTERRUPTED
        }
        Err(Failure::Failed(e)) => {
            eprintln!("xcc-emu: {e}");
            1
        }
    }
}
