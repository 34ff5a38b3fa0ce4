//! Runs a scenario file and prints the run statistics (for profiling the engine without Python).
//! `cargo run --release -p xcc-sim --example run -- FILE [--no-metrics] [--progress]`
//! (`--progress`: the simulated fraction and the wall time on stderr, for long runs).

/// The allocator of the Python extension, so that timings here match `xcc run`'s.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: run FILE [--no-metrics]");
        std::process::exit(2);
    };
    let metrics = !args.iter().any(|a| a == "--no-metrics");
    let wall = std::time::Instant::now();
    let mut last = -1.0;
    let mut report = |f: f64| {
        if f - last >= 0.01 {
            last = f;
            eprintln!("progress {:.1} % at {:.1} s wall", f * 100.0, wall.elapsed().as_secs_f64());
        }
    };
    let progress: Option<&mut dyn FnMut(f64)> =
        if args.iter().any(|a| a == "--progress") { Some(&mut report) } else { None };
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2);
    });
    match xcc_sim::run_text(&text, path, xcc_sim::Format::Toml, None, metrics, progress) {
        Ok((_, out)) => {
            let s = out.stats;
            println!(
                "{{\"events\": {}, \"packet_hops\": {}, \"sim_seconds\": {}, \"wall_seconds\": {:.3}, \"process_seconds\": {:.3}}}",
                s.events,
                s.packet_hops,
                s.sim_seconds,
                s.wall_seconds,
                wall.elapsed().as_secs_f64()
            );
            let links = &out.links;
            let names = match links.column("name") {
                Some(xcc_sim::output::Column::Str(v)) => v.clone(),
                _ => vec![],
            };
            for (i, n) in names.iter().enumerate() {
                let u = links.f64("utilisation")[i];
                if u > 0.05 {
                    eprintln!(
                        "{n}: utilisation {:.4} drops {} mean queue {:.0} B",
                        u,
                        links.i64("drops")[i],
                        links.f64("mean_queue_bytes")[i]
                    );
                }
            }
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
