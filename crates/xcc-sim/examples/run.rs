//! Runs a scenario file and prints the run statistics (for profiling the engine without Python).
//! `cargo run --release -p xcc-sim --example run -- FILE [--no-metrics]`

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: run FILE [--no-metrics]");
        std::process::exit(2);
    };
    let metrics = !args.iter().any(|a| a == "--no-metrics");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2);
    });
    match xcc_sim::run_text(&text, path, xcc_sim::Format::Toml, None, metrics, None) {
        Ok((_, out)) => {
            let s = out.stats;
            println!(
                "{{\"events\": {}, \"packet_hops\": {}, \"sim_seconds\": {}, \"wall_seconds\": {:.3}}}",
                s.events, s.packet_hops, s.sim_seconds, s.wall_seconds
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
