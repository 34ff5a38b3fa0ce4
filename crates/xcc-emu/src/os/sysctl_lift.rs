//! Two of the kernel's machine-wide limits, lifted for the length of a run and set back after.
//!
//! - **Real-time throttling** (`kernel.sched_rt_runtime_us`, lifted to -1): Linux stops the
//!   real-time threads of a CPU that ran them for 950 ms of a second for the rest of it. At
//!   1 Gbit/s the router uses 0.9-0.95 of its CPU and xcclab's transport most of the other
//!   one, so over a 40 s run they met the limit: pauses of 20-50 ms in which nothing is
//!   forwarded or sent, then a burst (a 40 s RCP run of seed 002's RTT-fairness scenario at
//!   1 Gbit/s: delay error p99 10 ms and rates 9.4 % under the simulator's with the limit,
//!   p99 148 µs and -1.1 % without; docs/emu.md). Neither thread can take a whole CPU: the
//!   busy router sleeps at least 10 µs per wake-up, the transport sleeps in `ppoll`, and the
//!   router keeps to the last CPU.
//! - **The receive backlog** (`net.core.netdev_max_backlog`, raised to 100,000): packets the
//!   router writes to a host's TUN device wait in the backlog of the CPU their processing is
//!   steered to; at 1 Gbit/s a moment without that CPU overflowed the default 1,000 (a run of
//!   seed 002's scenario failed with 619 `rx_dropped`), a loss outside the modelled network.
//!
//! A run killed before it could set a limit back left the original value in a file under
//! `/run`, from which the next run restores it. `XCC_EMU_RT_THROTTLE=keep` and
//! `XCC_EMU_BACKLOG=keep` leave a limit alone.

use std::fs;

/// One kernel setting changed while alive (if this process may change it).
pub struct Lift {
    knob: &'static str,
    saved: &'static str,
    restore: Option<String>,
}

impl Lift {
    /// `knob` set to `value` unless `env` is `keep` or it already is at least as lifted
    /// (`lifted(current)`); the original saved in `saved` meanwhile.
    fn set(knob: &'static str, saved: &'static str, env: &str, value: &str, lifted: impl Fn(&str) -> bool) -> Lift {
        let none = Lift { knob, saved, restore: None };
        if std::env::var(env).is_ok_and(|v| v == "keep") {
            return none;
        }
        let Ok(now) = fs::read_to_string(knob) else { return none };
        let now = now.trim().to_string();
        let original = if lifted(&now) {
            // Lifted already: by a run that did not set it back (its value is saved), or by
            // the machine's owner (nothing saved: leave it as it is).
            match fs::read_to_string(saved) {
                Ok(v) if v.trim().parse::<i64>().is_ok() => v.trim().to_string(),
                _ => return none,
            }
        } else {
            now
        };
        if fs::write(saved, &original).is_err() || fs::write(knob, value).is_err() {
            let _ = fs::remove_file(saved);
            return none;
        }
        Lift { knob, saved, restore: Some(original) }
    }

    /// Real-time threads not throttled.
    pub fn rt_throttling() -> Lift {
        Lift::set(
            "/proc/sys/kernel/sched_rt_runtime_us",
            "/run/xcclab-sched-rt-runtime-us",
            "XCC_EMU_RT_THROTTLE",
            "-1",
            |v| v == "-1",
        )
    }

    /// A receive backlog of 100,000 packets per CPU.
    pub fn receive_backlog() -> Lift {
        const BACKLOG: i64 = 100_000;
        Lift::set(
            "/proc/sys/net/core/netdev_max_backlog",
            "/run/xcclab-netdev-max-backlog",
            "XCC_EMU_BACKLOG",
            "100000",
            |v| v.parse::<i64>().is_ok_and(|n| n >= BACKLOG),
        )
    }

    /// Whether this guard changed the setting.
    pub fn lifted(&self) -> bool {
        self.restore.is_some()
    }
}

impl Drop for Lift {
    fn drop(&mut self) {
        if let Some(v) = self.restore.take() {
            if fs::write(self.knob, &v).is_ok() {
                let _ = fs::remove_file(self.saved);
            }
        }
    }
}
