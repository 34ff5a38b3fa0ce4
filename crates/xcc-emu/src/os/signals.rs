//! A stop asked by a signal (SIGINT, SIGTERM, SIGHUP): one flag every thread of a run polls, so
//! the router, the hosts' traffic and the orchestration all finish and clean up at once.

use std::sync::atomic::{AtomicBool, Ordering};

/// Set by SIGINT, SIGTERM or SIGHUP: the loop finishes and everything is cleaned up.
pub static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

/// Routes SIGINT, SIGTERM and SIGHUP to [`STOP`] (SIGTERM is also the parent-death signal).
pub fn install_stop_handlers() {
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGHUP, on_signal as *const () as libc::sighandler_t);
    }
}
