//! `xcc-emu`: a scenario on real packets; the command line is [`xcc_emu::run::cli`].

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    std::process::exit(xcc_emu::run::cli::main(&args));
}
