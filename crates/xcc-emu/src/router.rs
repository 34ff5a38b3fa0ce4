//! The router process: one TUN device in each host's namespace, one thread, one epoll loop.
//! A timerfd armed at the next virtual-time event wakes it for deliveries and control
//! intervals; when the next event is closer than the spin threshold the loop polls instead of
//! sleeping, because a wake-up from sleep is late by tens of microseconds.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use xcc_core::Time;

use crate::fabric::{Fabric, BUF_LEN};
use crate::sys::{self, Epoll, TimerFd};

/// Where each port's TUN lives.
#[derive(Clone, Debug)]
pub struct Attachment {
    pub netns: PathBuf,
    pub dev: String,
}

pub struct Router {
    pub fabric: Fabric,
    tuns: Vec<OwnedFd>,
    epoll: Epoll,
    timer: TimerFd,
    /// `CLOCK_MONOTONIC` at time zero of the run.
    pub t0_ns: u64,
    /// Poll instead of sleeping when the next event is at most this far away.
    pub spin_ns: u64,
    /// Read at most this many packets from one device before looking at the timers again.
    pub read_batch: usize,
    /// Link time-series interval (`None`: no series).
    pub sample_every: Option<u64>,
    /// Whether the loop got real-time scheduling (`SCHED_FIFO`).
    pub realtime: bool,
}

const TIMER_TOKEN: u64 = u64::MAX;
/// Default spin threshold: short enough that a saturated link does not keep the (real-time)
/// router spinning all the time, which the kernel's real-time throttling punishes with a
/// 50 ms stall every second.
const SPIN_NS: u64 = 10_000;

impl Router {
    /// Opens a TUN in every port's namespace (enter, open, return) and sets up the loop.
    pub fn open(fabric: Fabric, attach: &[Attachment]) -> io::Result<Router> {
        assert_eq!(fabric.ports.len(), attach.len(), "one attachment per port");
        let epoll = Epoll::new()?;
        let timer = TimerFd::new()?;
        epoll.add(timer.0.as_raw_fd(), TIMER_TOKEN)?;
        let mut tuns = Vec::new();
        for (i, a) in attach.iter().enumerate() {
            let fd = sys::in_netns(&a.netns, || sys::open_tun(&a.dev))?;
            epoll.add(fd.as_raw_fd(), i as u64)?;
            tuns.push(fd);
        }
        sys::minimal_timer_slack();
        // XCC_EMU_SPIN_NS overrides the spin threshold (for measurements, see docs/emu.md).
        let spin_ns = std::env::var("XCC_EMU_SPIN_NS").ok().and_then(|v| v.parse().ok()).unwrap_or(SPIN_NS);
        Ok(Router {
            fabric,
            tuns,
            epoll,
            timer,
            t0_ns: sys::monotonic_ns(),
            spin_ns,
            read_batch: 32,
            sample_every: None,
            realtime: false,
        })
    }

    /// Time since the start of the run.
    pub fn now(&self) -> Time {
        Time(sys::monotonic_ns().saturating_sub(self.t0_ns))
    }

    /// Runs until `stop` is set or `until` (run time) passes, then lets nothing more in but
    /// keeps delivering what is in flight for `drain` more.
    pub fn run(&mut self, stop: &AtomicBool, until: Option<Time>) -> io::Result<()> {
        let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 64];
        let tuns: Vec<i32> = self.tuns.iter().map(|f| f.as_raw_fd()).collect();
        self.realtime = sys::realtime_priority(50);
        sys::minimal_timer_slack();
        let mut armed = Time::NEVER;
        let mut next_sample = Time::ZERO;
        loop {
            let now = self.now();
            if stop.load(Ordering::Relaxed) || STOP.load(Ordering::Relaxed) || until.is_some_and(|u| now >= u) {
                return Ok(());
            }
            self.fabric.run_due(now, &mut |h, b| sys::write_packet(tuns[h], b));
            if let Some(every) = self.sample_every {
                if now >= next_sample {
                    self.fabric.sample(now);
                    next_sample = Time(now.as_ns() - now.as_ns() % every + every);
                }
            }
            let mut next = self.fabric.next_event();
            if self.sample_every.is_some() {
                next = next.min(next_sample);
            }
            let now = self.now();
            let timeout = if next == Time::NEVER {
                100
            } else if next.as_ns() <= now.as_ns() + self.spin_ns {
                0
            } else {
                if next != armed {
                    self.timer.set_abs(self.t0_ns + next.as_ns() - self.spin_ns / 2)?;
                    armed = next;
                }
                100
            };
            let n = self.epoll.wait(&mut events, timeout)?;
            for ev in &events[..n] {
                let token = ev.u64;
                if token == TIMER_TOKEN {
                    self.timer.drain();
                    armed = Time::NEVER;
                    continue;
                }
                let host = token as usize;
                for _ in 0..self.read_batch {
                    let slot = self.fabric.alloc();
                    let buf = &mut self.fabric.buf_mut(slot)[..BUF_LEN];
                    match sys::read_packet(tuns[host], buf)? {
                        Some(len) => {
                            let now = self.now();
                            self.fabric.ingress(now, host, slot, len);
                        }
                        None => {
                            self.fabric.release(slot);
                            break;
                        }
                    }
                }
            }
        }
    }
}

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
