//! The kernel's limit on real-time threads, lifted for the length of a run.
//!
//! Linux stops the real-time threads of a CPU that ran them for `sched_rt_runtime_us` (950 ms
//! by default) of a `sched_rt_period_us` (1 s) for the rest of the period. At 1 Gbit/s the
//! router uses 0.9-0.94 of its CPU and xcclab's transport most of the other one, so over a
//! 40 s run they met the limit: pauses of 20-50 ms in which nothing is forwarded or sent, then
//! a burst (measured: a 40 s RCP run of seed 002's RTT-fairness scenario, 1 Gbit/s, delay
//! error p99 10 ms and rates 9.4 % under the simulator's with the limit; p99 148 µs and -1.1 %
//! without; docs/emu.md). Neither thread can take a whole CPU: the router sleeps at least
//! 10 µs per wake-up when busy, the transport sleeps in `ppoll`, and the router keeps to the
//! last CPU.
//!
//! The limit is set back when the run ends. A run killed before that left its original value
//! in [`SAVED`], which the next run restores from. `XCC_EMU_RT_THROTTLE=keep` leaves the
//! limit alone.

use std::fs;

const KNOB: &str = "/proc/sys/kernel/sched_rt_runtime_us";
/// The value before the lift, for a run that could not put it back.
const SAVED: &str = "/run/xcclab-sched-rt-runtime-us";

/// While alive, real-time threads are not throttled (if this process may say so).
pub struct RtBudget {
    restore: Option<String>,
}

impl RtBudget {
    /// Lifts the limit (`-1`); a guard that restores it when dropped.
    pub fn lift() -> RtBudget {
        let none = RtBudget { restore: None };
        if std::env::var("XCC_EMU_RT_THROTTLE").is_ok_and(|v| v == "keep") {
            return none;
        }
        let Ok(now) = fs::read_to_string(KNOB) else { return none };
        let now = now.trim().to_string();
        let original = if now == "-1" {
            // Lifted already: by a run that did not restore it (its value is saved), or by the
            // machine's owner (nothing saved: leave it as it is).
            match fs::read_to_string(SAVED) {
                Ok(v) if v.trim().parse::<i64>().is_ok() => v.trim().to_string(),
                _ => return none,
            }
        } else {
            now
        };
        if fs::write(SAVED, &original).is_err() || fs::write(KNOB, "-1").is_err() {
            let _ = fs::remove_file(SAVED);
            return none;
        }
        RtBudget { restore: Some(original) }
    }

    /// Whether this guard lifted the limit.
    pub fn lifted(&self) -> bool {
        self.restore.is_some()
    }
}

impl Drop for RtBudget {
    fn drop(&mut self) {
        if let Some(v) = self.restore.take() {
            if fs::write(KNOB, &v).is_ok() {
                let _ = fs::remove_file(SAVED);
            }
        }
    }
}
