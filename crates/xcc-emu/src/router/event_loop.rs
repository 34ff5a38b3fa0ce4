//! The router process: one TUN device in each host's namespace, one thread, one epoll loop.
//! A timerfd armed at the next virtual-time event wakes it for deliveries and control
//! intervals; when the next event is closer than the spin threshold the loop polls instead of
//! sleeping, because a wake-up from sleep is late by tens of microseconds.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use xcc_core::Time;

use crate::os::cpu::router_cpu;
use crate::os::signals::STOP;
use crate::os::sys::{self, Epoll, TimerFd};
use crate::router::fabric::{Fabric, BUF_LEN};
use crate::router::gro::Coalescer;
use crate::router::gso::Split;
use crate::router::vnet::{self, VnetHdr};

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
    /// When busy (`Busy`): no polling, and never a sleep shorter than this; deliveries due
    /// meanwhile go out together, up to this late, instead of one wake-up each.
    pub min_sleep_ns: u64,
    /// Read at most this many packets from one device before looking at the timers again.
    pub read_batch: usize,
    /// Link time-series interval (`None`: no series).
    pub sample_every: Option<u64>,
    /// Whether the loop got real-time scheduling (`SCHED_FIFO`).
    pub realtime: bool,
    /// Whether the TUN devices carry `virtio_net_hdr`s and take offloads ([`offload_default`]).
    pub offload: bool,
    /// The CPU the loop is pinned to, the hosts' receive processing steered to the others
    /// (`None`: neither, one CPU or `XCC_EMU_RPS=0`).
    pub cpu: Option<usize>,
    /// CPU time the loop used and the wall time it ran (nanoseconds), for its CPU share.
    pub cpu_ns: u64,
    pub wall_ns: u64,
    /// Segments due together merged into super-packets on the way out ([`crate::router::gro`]; with
    /// offloads, unless `XCC_EMU_GRO=0`).
    pub coalesce: Option<Coalescer>,
    /// Loop iterations, and those in busy mode (`Busy`).
    pub iterations: u64,
    pub busy_iterations: u64,
}

/// Whether routers open their TUN devices with offloads (`IFF_VNET_HDR`, TSO, checksum): yes
/// unless `XCC_EMU_OFFLOAD=0` (docs/emu.md has the measurements of both).
pub fn offload_default() -> bool {
    std::env::var("XCC_EMU_OFFLOAD").map_or(true, |v| v != "0")
}

const TIMER_TOKEN: u64 = u64::MAX;
/// Default spin threshold: short enough that a saturated link does not keep the (real-time)
/// router spinning all the time, which the kernel's real-time throttling punishes with a
/// 50 ms stall every second.
const SPIN_NS: u64 = 10_000;
/// Default shortest sleep of a busy loop: at 1 Gbit/s of TCP (a delivery or an ACK every
/// 8 µs) one wake-up per event kept the loop running 92 % of the time, and a real-time thread
/// that runs more than 95 % of a second is stopped for the rest of it (`sched_rt_runtime_us`):
/// 50 ms without forwarding, -4 % of rate. Measured at 10, 20 and 40 µs (docs/emu.md): 10 µs
/// gave the shortest tail (p99 delay error 64-68 µs at 1 Gbit/s against 100-160) and no more
/// stalls than 20 µs.
const MIN_SLEEP_NS: u64 = 10_000;

/// Whether the loop is busy: the share of a CPU it used over the last few milliseconds, with
/// some hysteresis. A quiet loop polls near its deadlines (exact to a microsecond or two); a
/// busy one must leave the CPU now and then or the kernel's real-time throttling stalls it.
struct Busy {
    busy: bool,
    since_cpu_ns: u64,
    since_wall_ns: u64,
}

impl Busy {
    const WINDOW_NS: u64 = 5_000_000;
    const ON: f64 = 0.6;
    const OFF: f64 = 0.4;

    fn new() -> Busy {
        Busy { busy: false, since_cpu_ns: sys::thread_cpu_ns(), since_wall_ns: sys::monotonic_ns() }
    }

    /// Re-evaluates at most once per window; `wall_ns` is the monotonic clock now.
    fn update(&mut self, wall_ns: u64) -> bool {
        if wall_ns >= self.since_wall_ns + Self::WINDOW_NS {
            let cpu = sys::thread_cpu_ns();
            let share = (cpu - self.since_cpu_ns) as f64 / (wall_ns - self.since_wall_ns) as f64;
            self.busy = if self.busy { share > Self::OFF } else { share > Self::ON };
            (self.since_cpu_ns, self.since_wall_ns) = (cpu, wall_ns);
        }
        self.busy
    }
}

impl Router {
    /// Opens a TUN in every port's namespace (enter, open, return) and sets up the loop.
    pub fn open(fabric: Fabric, attach: &[Attachment]) -> io::Result<Router> {
        assert_eq!(fabric.ports.len(), attach.len(), "one attachment per port");
        let epoll = Epoll::new()?;
        let timer = TimerFd::new()?;
        epoll.add(timer.0.as_raw_fd(), TIMER_TOKEN)?;
        let mut tuns = Vec::new();
        let offload = offload_default();
        for (i, a) in attach.iter().enumerate() {
            let fd = sys::in_netns(&a.netns, || sys::open_tun_with(&a.dev, offload))?;
            epoll.add(fd.as_raw_fd(), i as u64)?;
            tuns.push(fd);
        }
        // The router keeps the last CPU; the hosts' receive processing goes to the others.
        let cpu = router_cpu();
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        if let Some(c) = cpu {
            let others = ((1u128 << cpus) - 1) as u64 & !(1u64 << c);
            for a in attach {
                let name = a.netns.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                crate::os::netns::steer_receive(&name, &a.dev, others)?;
            }
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
            min_sleep_ns: std::env::var("XCC_EMU_MIN_SLEEP_NS")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(MIN_SLEEP_NS),
            read_batch: 32,
            sample_every: None,
            realtime: false,
            offload,
            cpu,
            cpu_ns: 0,
            wall_ns: 0,
            iterations: 0,
            busy_iterations: 0,
            coalesce: (offload && std::env::var("XCC_EMU_GRO").map_or(true, |v| v != "0")).then(Coalescer::new),
        })
    }

    /// Time since the start of the run.
    pub fn now(&self) -> Time {
        Time(sys::monotonic_ns().saturating_sub(self.t0_ns))
    }

    /// Runs until `stop` is set or `until` (run time) passes, then lets nothing more in but
    /// keeps delivering what is in flight for `drain` more.
    pub fn run(&mut self, stop: &AtomicBool, until: Option<Time>) -> io::Result<()> {
        let (cpu0, wall0) = (sys::thread_cpu_ns(), sys::monotonic_ns());
        let r = self.run_loop(stop, until);
        self.cpu_ns += sys::thread_cpu_ns() - cpu0;
        self.wall_ns += sys::monotonic_ns() - wall0;
        r
    }

    fn run_loop(&mut self, stop: &AtomicBool, until: Option<Time>) -> io::Result<()> {
        let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 64];
        let tuns: Vec<i32> = self.tuns.iter().map(|f| f.as_raw_fd()).collect();
        self.realtime = sys::realtime_priority(50);
        if let Some(c) = self.cpu {
            sys::pin_to_cpu(c);
        }
        sys::minimal_timer_slack();
        let mut armed = Time::NEVER;
        let mut next_sample = Time::ZERO;
        // With offloads a read can be a 64 KiB super-packet behind its virtio_net_hdr.
        let mut big = vec![0u8; if self.offload { vnet::LEN + 65_536 } else { 0 }];
        let mut pwait2 = true;
        let mut busy = Busy::new();
        loop {
            let now = self.now();
            if stop.load(Ordering::Relaxed) || STOP.load(Ordering::Relaxed) || until.is_some_and(|u| now >= u) {
                return Ok(());
            }
            self.deliver_due(now);
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
            // Sleep until half the spin threshold before the next event, poll if it is closer.
            let busy = busy.update(self.t0_ns + now.as_ns());
            let (spin, min_sleep) = if busy { (0, self.min_sleep_ns) } else { (self.spin_ns, 0) };
            let wait_ns = if next == Time::NEVER {
                100_000_000
            } else if next <= now || next.as_ns() <= now.as_ns() + spin {
                0
            } else {
                (next.as_ns() - spin / 2 - now.as_ns()).clamp(min_sleep, 100_000_000)
            };
            self.busy_iterations += busy as u64;
            self.iterations += 1;
            let waited = if pwait2 { self.epoll.wait_ns(&mut events, wait_ns) } else { None };
            let n = match waited {
                Some(n) => n?,
                None => {
                    // Kernels before 5.11: a timerfd armed at the next event wakes the loop.
                    pwait2 = false;
                    let timeout = if wait_ns == 0 {
                        0
                    } else {
                        if next != armed && next != Time::NEVER {
                            self.timer.set_abs(self.t0_ns + next.as_ns() - self.spin_ns / 2)?;
                            armed = next;
                        }
                        100
                    };
                    self.epoll.wait(&mut events, timeout)?
                }
            };
            for ev in &events[..n] {
                let token = ev.u64;
                if token == TIMER_TOKEN {
                    self.timer.drain();
                    armed = Time::NEVER;
                    continue;
                }
                let host = token as usize;
                if self.offload {
                    for _ in 0..self.read_batch {
                        let Some(len) = sys::read_packet(tuns[host], &mut big)? else { break };
                        self.ingress_vnet(host, &big[..len]);
                        // A super-packet is up to 45 segments to cut: what fell due meanwhile
                        // goes out now, not after the whole batch.
                        self.deliver_due(self.now());
                    }
                    continue;
                }
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

impl Router {
    /// Writes every packet due at `now` to its host's TUN device. With offloads, packets leave
    /// one by one (each segment at its own instant) as plain packets: a `virtio_net_hdr` that
    /// asks nothing of the receiving kernel.
    fn deliver_due(&mut self, now: Time) {
        let tuns = &self.tuns;
        let plain = VnetHdr::default().to_bytes();
        if let Some(co) = self.coalesce.as_mut() {
            let mut write =
                |h: usize, v: &VnetHdr, b: &[u8]| sys::write_packet_vnet(tuns[h].as_raw_fd(), &v.to_bytes(), b);
            let failed = co.failed;
            self.fabric.run_due(now, &mut |h, b| {
                co.push(h, b, &mut write);
                true
            });
            co.flush(&mut write);
            // Refused writes are only known once written: moved from forwarded to failures.
            let refused = co.failed - failed;
            self.fabric.stats.forwarded -= refused;
            self.fabric.stats.write_failures += refused;
        } else if self.offload {
            self.fabric.run_due(now, &mut |h, b| sys::write_packet_vnet(tuns[h].as_raw_fd(), &plain, b));
        } else {
            self.fabric.run_due(now, &mut |h, b| sys::write_packet(tuns[h].as_raw_fd(), b));
        }
    }

    /// Takes a read from host `host`'s TUN with its `virtio_net_hdr`: a single packet (its
    /// checksum finished if the kernel left it partial) or a super-packet cut into the segments
    /// the links see one by one ([`crate::router::gso`]), all read at the same instant.
    fn ingress_vnet(&mut self, host: usize, read: &[u8]) {
        let now = self.now();
        let split =
            VnetHdr::parse(read).ok_or(()).and_then(|h| Split::new(&h, &read[vnet::LEN..], BUF_LEN).map_err(|_| ()));
        let Ok(split) = split else {
            self.fabric.stats.bad_offload += 1;
            return;
        };
        let pkt = &read[vnet::LEN..];
        if split.count() > 1 {
            self.fabric.stats.super_packets += 1;
        }
        for i in 0..split.count() {
            let slot = self.fabric.alloc();
            let len = split.write(pkt, i, self.fabric.buf_mut(slot));
            self.fabric.ingress(now, host, slot, len);
        }
    }
}
