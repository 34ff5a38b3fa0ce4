//! A stop (SIGINT, SIGTERM, SIGHUP) at any moment while the traffic runs: every Linux TCP
//! socket is reset and its thread woken, the CBR sinks told, so every join that follows returns
//! at once and no connection outlives the run (the signal handler itself may only set STOP).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::Duration;

use crate::hosts::apps;
use crate::os::signals::STOP;

/// The watching thread, and the flag it raises for the CBR sinks.
pub struct StopWatch {
    /// Raised on a stop, or by the run when its CBR sinks are to finish.
    pub cbr_stop: Arc<AtomicBool>,
    run_over: Arc<AtomicBool>,
    watcher: JoinHandle<()>,
}

impl StopWatch {
    /// Watches STOP every 5 ms until [`StopWatch::end`].
    pub fn start() -> StopWatch {
        let cbr_stop = Arc::new(AtomicBool::new(false));
        let run_over = Arc::new(AtomicBool::new(false));
        let watcher = {
            let (over, cbr_stop) = (run_over.clone(), cbr_stop.clone());
            thread::spawn(move || {
                while !over.load(Ordering::Relaxed) {
                    if STOP.load(Ordering::Relaxed) {
                        apps::abort_all();
                        cbr_stop.store(true, Ordering::Relaxed);
                        return;
                    }
                    thread::sleep(Duration::from_millis(5));
                }
            })
        };
        StopWatch { cbr_stop, run_over, watcher }
    }

    /// The run is over: the watcher ends (within its 5 ms turn).
    pub fn end(self) {
        self.run_over.store(true, Ordering::Relaxed);
        let _ = self.watcher.join();
    }
}
