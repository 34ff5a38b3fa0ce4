//! Rust panics reach the user as one line, not a backtrace: the hook writes the panic's message,
//! location and a backtrace to a log file, and prints nothing; PyO3 turns the panic into
//! `PanicException`, which the CLI reports as `xcc: error: internal error ...` with the log's
//! path ([`panic_log_path`] tells Python where it is).

use std::io::Write;
use std::path::PathBuf;

/// Where this process's panics are logged: `$XCC_PANIC_LOG` if set, else
/// `<temp dir>/xcc-panic-<pid>.log`.
pub fn panic_log_path() -> PathBuf {
    match std::env::var_os("XCC_PANIC_LOG") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => std::env::temp_dir().join(format!("xcc-panic-{}.log", std::process::id())),
    }
}

/// Installs the hook (once per process; later calls do nothing).
pub fn install() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            let backtrace = std::backtrace::Backtrace::force_capture();
            let path = panic_log_path();
            let written = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .and_then(|mut f| writeln!(f, "{info}\n{backtrace}\n"));
            if written.is_err() {
                // No log to point at: say it here rather than lose it.
                eprintln!("{info}\n{backtrace}");
            }
        }));
    });
}
