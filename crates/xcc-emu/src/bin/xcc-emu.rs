//! `xcc-emu`: brings a scenario's hosts up in network namespaces behind the TUN router.
//!
//! ```text
//! xcc-emu cleanup                       delete every leftover xccemu* namespace
//! xcc-emu check                         say whether this machine can run the emulator
//! ```

use std::process::ExitCode;

use xcc_emu::netns;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let r = match args.first().map(String::as_str) {
        Some("cleanup") => netns::check_environment().and_then(|_| netns::cleanup(netns::PREFIX)).map(|names| {
            for n in &names {
                println!("deleted namespace {n}");
            }
            println!("{} leftover namespace(s) removed", names.len());
        }),
        Some("check") => netns::check_environment().map(|_| println!("ok: root and /dev/net/tun available")),
        _ => {
            eprintln!("usage: xcc-emu cleanup | check");
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
