//! The few Linux system calls the emulator needs, wrapped with `std::io::Error`s: the monotonic
//! clock, epoll, timerfd, entering a network namespace, TUN devices and `TCP_INFO`.

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::Path;

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// `CLOCK_MONOTONIC` in nanoseconds.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid timespec to write into.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CPU time the calling thread has used, in nanoseconds (`CLOCK_THREAD_CPUTIME_ID`).
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid timespec to write into.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Timer slack of this thread: 1 ns, so that epoll wake-ups are not rounded up by 50 µs.
pub fn minimal_timer_slack() {
    // SAFETY: plain prctl with integer arguments.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
}

/// An epoll instance.
pub struct Epoll(OwnedFd);

impl Epoll {
    pub fn new() -> io::Result<Epoll> {
        // SAFETY: returns a new fd or -1.
        let fd = cvt(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?;
        // SAFETY: `fd` is a fresh descriptor we own.
        Ok(Epoll(unsafe { OwnedFd::from_raw_fd(fd) }))
    }
    /// Watches `fd` for input (level-triggered); events carry `token`.
    pub fn add(&self, fd: RawFd, token: u64) -> io::Result<()> {
        let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: token };
        // SAFETY: valid epoll fd and event struct.
        cvt(unsafe { libc::epoll_ctl(self.0.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) })?;
        Ok(())
    }
    /// Waits up to `timeout_ns` nanoseconds (0: poll) with `epoll_pwait2` (Linux 5.11); `None`
    /// where the kernel does not have it. Why not a timerfd: the kernel arms the timeout only
    /// when the call actually sleeps, where a timerfd is re-armed (a timer reprogramming, a
    /// VM exit on a virtual machine) for every change of the next deadline, ready packets or
    /// not.
    pub fn wait_ns(&self, events: &mut [libc::epoll_event], timeout_ns: u64) -> Option<io::Result<usize>> {
        let ts =
            libc::timespec { tv_sec: (timeout_ns / 1_000_000_000) as _, tv_nsec: (timeout_ns % 1_000_000_000) as _ };
        // SAFETY: valid epoll fd, event buffer of that length, timespec; no signal mask.
        let n = unsafe {
            libc::syscall(
                libc::SYS_epoll_pwait2,
                self.0.as_raw_fd(),
                events.as_mut_ptr(),
                events.len() as libc::c_int,
                &ts as *const libc::timespec,
                std::ptr::null::<libc::sigset_t>(),
                0usize,
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            return match e.raw_os_error() {
                Some(libc::ENOSYS) => None,
                Some(libc::EINTR) => Some(Ok(0)),
                _ => Some(Err(e)),
            };
        }
        Some(Ok(n as usize))
    }

    /// Waits up to `timeout_ms` (-1: forever, 0: poll); returns the tokens ready.
    pub fn wait(&self, events: &mut [libc::epoll_event], timeout_ms: i32) -> io::Result<usize> {
        // SAFETY: `events` is a valid buffer of that length.
        let n = unsafe { libc::epoll_wait(self.0.as_raw_fd(), events.as_mut_ptr(), events.len() as i32, timeout_ms) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                return Ok(0);
            }
            return Err(e);
        }
        Ok(n as usize)
    }
}

/// A `CLOCK_MONOTONIC` timerfd armed at absolute instants.
pub struct TimerFd(pub OwnedFd);

impl TimerFd {
    pub fn new() -> io::Result<TimerFd> {
        // SAFETY: returns a new fd or -1.
        let fd = cvt(unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC) })?;
        // SAFETY: fresh descriptor we own.
        Ok(TimerFd(unsafe { OwnedFd::from_raw_fd(fd) }))
    }
    /// Fires at monotonic instant `at_ns` (0 disarms).
    pub fn set_abs(&self, at_ns: u64) -> io::Result<()> {
        let spec = libc::itimerspec {
            it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
            it_value: libc::timespec { tv_sec: (at_ns / 1_000_000_000) as _, tv_nsec: (at_ns % 1_000_000_000) as _ },
        };
        // SAFETY: valid fd and itimerspec.
        cvt(unsafe {
            libc::timerfd_settime(self.0.as_raw_fd(), libc::TFD_TIMER_ABSTIME, &spec, std::ptr::null_mut())
        })?;
        Ok(())
    }
    /// Clears the expiry count so level-triggered epoll stops reporting it.
    pub fn drain(&self) {
        let mut buf = [0u8; 8];
        // SAFETY: reading 8 bytes into a valid buffer; EAGAIN is fine.
        unsafe { libc::read(self.0.as_raw_fd(), buf.as_mut_ptr().cast(), 8) };
    }
}

/// Moves the calling thread into the network namespace at `path`, runs `f`, and moves it back,
/// whatever `f` returns (sockets and devices opened inside stay in that namespace).
pub fn in_netns<T>(path: &Path, f: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
    let home = File::open("/proc/thread-self/ns/net")?;
    let target = File::open(path).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    // SAFETY: setns with valid fds; affects only this thread.
    cvt(unsafe { libc::setns(target.as_raw_fd(), libc::CLONE_NEWNET) })?;
    let r = f();
    // SAFETY: as above; going back must not fail, or the thread is stranded.
    let back = cvt(unsafe { libc::setns(home.as_raw_fd(), libc::CLONE_NEWNET) });
    back.expect("return to the original network namespace");
    r
}

/// Moves the calling thread into the network namespace at `path` for good.
pub fn enter_netns(path: &Path) -> io::Result<()> {
    let target = File::open(path).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    // SAFETY: setns with a valid fd.
    cvt(unsafe { libc::setns(target.as_raw_fd(), libc::CLONE_NEWNET) })?;
    Ok(())
}

const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
const TUNSETOFFLOAD: libc::c_ulong = 0x4004_54d0;
const IFF_TUN: libc::c_short = 0x0001;
const IFF_NO_PI: libc::c_short = 0x1000;
const IFF_VNET_HDR: libc::c_short = 0x4000;
const TUN_F_CSUM: libc::c_uint = 0x01;
const TUN_F_TSO4: libc::c_uint = 0x02;
const TUN_F_USO4: libc::c_uint = 0x20;
const TUN_F_USO6: libc::c_uint = 0x40;

/// Opens (or attaches to) TUN device `name` in the current namespace: `IFF_TUN | IFF_NO_PI`,
/// non-blocking.
pub fn open_tun(name: &str) -> io::Result<OwnedFd> {
    open_tun_with(name, false)
}

/// [`open_tun`], and with `offload` every packet carries a `virtio_net_hdr` (`IFF_VNET_HDR`,
/// see [`crate::router::vnet`]) and the device takes checksum and segmentation offloads
/// (`TUNSETOFFLOAD`): the hosts' kernels hand over TCP super-packets (`TUN_F_TSO4`) and, where
/// the kernel knows it (Linux 6.2), `UDP_SEGMENT` ones (`TUN_F_USO4`), with transport
/// checksums left partial (`TUN_F_CSUM`). IPv6 is off in the namespaces, so no TSO6 (USO6
/// only because the kernel takes USO4 with it alone).
pub fn open_tun_with(name: &str, offload: bool) -> io::Result<OwnedFd> {
    if name.is_empty() || name.len() >= libc::IFNAMSIZ {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("bad interface name {name:?}")));
    }
    // SAFETY: open with a constant C path.
    let fd = cvt(unsafe { libc::open(c"/dev/net/tun".as_ptr(), libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC) })
        .map_err(|e| io::Error::new(e.kind(), format!("/dev/net/tun: {e}")))?;
    // SAFETY: fresh descriptor we own.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // struct ifreq: 16 bytes of name, then the flags (a short) in the union.
    let mut ifr = [0u8; 40];
    ifr[..name.len()].copy_from_slice(name.as_bytes());
    let flags = IFF_TUN | IFF_NO_PI | if offload { IFF_VNET_HDR } else { 0 };
    ifr[16..18].copy_from_slice(&flags.to_ne_bytes());
    // SAFETY: TUNSETIFF reads and writes a struct ifreq, which `ifr` is large enough to hold.
    cvt(unsafe { libc::ioctl(fd.as_raw_fd(), TUNSETIFF as _, ifr.as_mut_ptr()) })
        .map_err(|e| io::Error::new(e.kind(), format!("TUNSETIFF {name}: {e}")))?;
    if offload {
        let set = |f: libc::c_uint| {
            // SAFETY: TUNSETOFFLOAD takes the flags as its integer argument.
            cvt(unsafe { libc::ioctl(fd.as_raw_fd(), TUNSETOFFLOAD as _, f as libc::c_ulong) })
        };
        // The kernel turns UDP segmentation on only with both USO flags (`tun_set_offload`).
        set(TUN_F_CSUM | TUN_F_TSO4 | TUN_F_USO4 | TUN_F_USO6)
            .or_else(|_| set(TUN_F_CSUM | TUN_F_TSO4))
            .map_err(|e| io::Error::new(e.kind(), format!("TUNSETOFFLOAD {name}: {e}")))?;
    }
    Ok(fd)
}

/// Whether interface `name` of the calling thread's namespace is running (`IFF_RUNNING`: its
/// carrier is on and the kernel has activated its transmit queue).
pub fn if_running(name: &str) -> io::Result<bool> {
    if name.is_empty() || name.len() >= libc::IFNAMSIZ {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("bad interface name {name:?}")));
    }
    // SAFETY: returns a new fd or -1.
    let fd = cvt(unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) })?;
    // SAFETY: fresh descriptor we own.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut ifr = [0u8; 40];
    ifr[..name.len()].copy_from_slice(name.as_bytes());
    // SAFETY: SIOCGIFFLAGS reads and writes a struct ifreq, which `ifr` is large enough to hold.
    cvt(unsafe { libc::ioctl(fd.as_raw_fd(), libc::SIOCGIFFLAGS as _, ifr.as_mut_ptr()) })?;
    let flags = i16::from_ne_bytes([ifr[16], ifr[17]]);
    Ok(flags as i32 & libc::IFF_RUNNING != 0)
}

/// Reads one packet; `Ok(None)` when nothing is waiting.
pub fn read_packet(fd: RawFd, buf: &mut [u8]) -> io::Result<Option<usize>> {
    // SAFETY: reading into a valid buffer of its length.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        let e = io::Error::last_os_error();
        return match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(None),
            _ => Err(e),
        };
    }
    Ok(Some(n as usize))
}

/// Writes one packet; false if the kernel refused it (counted by the caller).
pub fn write_packet(fd: RawFd, buf: &[u8]) -> bool {
    // SAFETY: writing from a valid buffer of its length.
    let n = unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) };
    n == buf.len() as isize
}

/// Writes one packet behind a `virtio_net_hdr` (`hdr`), without copying either; false if the
/// kernel refused it.
pub fn write_packet_vnet(fd: RawFd, hdr: &[u8], buf: &[u8]) -> bool {
    let iov = [
        libc::iovec { iov_base: hdr.as_ptr() as *mut _, iov_len: hdr.len() },
        libc::iovec { iov_base: buf.as_ptr() as *mut _, iov_len: buf.len() },
    ];
    // SAFETY: two valid buffers the kernel only reads.
    let n = unsafe { libc::writev(fd, iov.as_ptr(), 2) };
    n == (hdr.len() + buf.len()) as isize
}

/// The fields of Linux's `struct tcp_info` the tests and apps read.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct TcpInfo {
    pub rtt_us: u32,
    pub snd_cwnd: u32,
    pub total_retrans: u32,
    pub bytes_acked: u64,
    pub delivered: u32,
    pub delivered_ce: u32,
    pub bytes_retrans: u64,
    pub bytes_sent: u64,
    pub min_rtt_us: u32,
    /// `tcpi_total_rto`: retransmission timeouts so far (Linux 6.7 and later; None before).
    pub total_rto: Option<u16>,
}

/// `getsockopt(TCP_INFO)`, read at the offsets of `include/uapi/linux/tcp.h`.
pub fn tcp_info(fd: RawFd) -> io::Result<TcpInfo> {
    let mut b = [0u8; 256];
    let mut len = b.len() as libc::socklen_t;
    // SAFETY: valid buffer and length pointer.
    cvt(unsafe { libc::getsockopt(fd, libc::IPPROTO_TCP, libc::TCP_INFO, b.as_mut_ptr().cast(), &mut len) })?;
    if (len as usize) < 216 {
        return Err(io::Error::new(io::ErrorKind::Unsupported, "kernel tcp_info too short for delivered_ce"));
    }
    let u32_at = |o: usize| u32::from_ne_bytes(b[o..o + 4].try_into().unwrap());
    let u64_at = |o: usize| u64::from_ne_bytes(b[o..o + 8].try_into().unwrap());
    Ok(TcpInfo {
        rtt_us: u32_at(68),
        snd_cwnd: u32_at(80),
        total_retrans: u32_at(100),
        bytes_acked: u64_at(120),
        delivered: u32_at(192),
        delivered_ce: u32_at(196),
        bytes_retrans: u64_at(208),
        bytes_sent: u64_at(200),
        min_rtt_us: u32_at(148),
        total_rto: (len as usize >= 242).then(|| u16::from_ne_bytes(b[240..242].try_into().unwrap())),
    })
}

/// Asks the kernel to send this process SIGTERM when its parent dies (`PR_SET_PDEATHSIG`), so
/// a router whose wrapper was killed (even by SIGKILL) stops and deletes its namespaces. Returns
/// false when the parent is already gone (`expected_parent` is no longer our parent: it died
/// before the request was in place).
pub fn die_with_parent(expected_parent: Option<i32>) -> bool {
    // SAFETY: plain prctl with integer arguments.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM as libc::c_ulong, 0, 0, 0) };
    // SAFETY: no arguments.
    let parent = unsafe { libc::getppid() };
    expected_parent.is_none_or(|p| p == parent)
}

/// Whether process `pid` exists (signal 0: EPERM still means it exists).
pub fn process_alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    pid > 0 && (unsafe { libc::kill(pid, 0) } == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM))
}

/// True when this process runs as root (namespaces and TUN devices need it).
pub fn is_root() -> bool {
    // SAFETY: no arguments.
    unsafe { libc::geteuid() == 0 }
}

/// Asks for `SCHED_FIFO` at `priority` for the calling thread (best effort; false if refused).
/// The router and the transport driver keep virtual time against the wall clock: on a machine
/// busy with other work a normal thread wakes milliseconds late, a real-time one does not. The
/// kernel's real-time throttling (`sched_rt_runtime_us`) still leaves other threads 5 % of a CPU.
pub fn realtime_priority(priority: i32) -> bool {
    let p = libc::sched_param { sched_priority: priority };
    // SAFETY: pid 0 is the calling thread; valid sched_param.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) == 0 }
}

/// Pins the calling thread to CPU `cpu` (best effort; false if refused).
pub fn pin_to_cpu(cpu: usize) -> bool {
    pin_to_cpus([cpu])
}

/// Lets the calling thread run on the CPUs of `cpus` only (best effort; false if refused).
pub fn pin_to_cpus(cpus: impl IntoIterator<Item = usize>) -> bool {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; CPU_SET stays within it (checked).
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for cpu in cpus {
            if cpu >= 8 * std::mem::size_of::<libc::cpu_set_t>() {
                return false;
            }
            libc::CPU_SET(cpu, &mut set);
        }
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
    }
}

/// Sleeps until `CLOCK_MONOTONIC` reaches `at_ns` (returns at once if it has).
pub fn sleep_until(at_ns: u64) {
    let ts = libc::timespec { tv_sec: (at_ns / 1_000_000_000) as _, tv_nsec: (at_ns % 1_000_000_000) as _ };
    // SAFETY: valid timespec; an interrupted sleep just returns early.
    unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, libc::TIMER_ABSTIME, &ts, std::ptr::null_mut()) };
}

/// Keeps every CPU out of its deep idle state while alive. Why: on a virtual machine a halted
/// vCPU can take a few hundred microseconds to wake (measured here: sparse UDP pings through
/// the router came back 0.5-0.7 ms late on an idle machine, on time with both vCPUs busy),
/// which is the hypervisor's latency, not the emulated link's.
///
/// The kernel's own interface comes first: a PM QoS request of zero latency on
/// `/dev/cpu_dma_latency` (held while the file is open) makes idle CPUs poll instead of
/// halting, costs no thread and counts against no cgroup's CPU time. Where that file cannot be
/// opened, one `SCHED_IDLE` thread per online CPU spins instead: it runs only when nothing
/// else wants that CPU and yields it at once.
pub enum KeepAwake {
    /// The open `/dev/cpu_dma_latency` holding the request (closing it withdraws it).
    PmQos(std::fs::File),
    Spinners {
        stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
        threads: Vec<std::thread::JoinHandle<()>>,
    },
}

impl KeepAwake {
    pub fn start() -> KeepAwake {
        use std::io::Write;
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/cpu_dma_latency")
            .and_then(|mut f| f.write_all(&0i32.to_ne_bytes()).map(|_| f))
            .map_or_else(|_| KeepAwake::spinners(), KeepAwake::PmQos)
    }

    /// The spinners alone (what `start` falls back to).
    pub fn spinners() -> KeepAwake {
        use std::sync::atomic::{AtomicBool, Ordering};
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let threads = (0..cpus)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    let p = libc::sched_param { sched_priority: 0 };
                    // SAFETY: pid 0 is the calling thread; valid sched_param.
                    unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &p) };
                    while !stop.load(Ordering::Relaxed) {
                        std::hint::spin_loop();
                    }
                })
            })
            .collect();
        KeepAwake::Spinners { stop, threads }
    }

    /// How the CPUs are kept awake: `"cpu_dma_latency"` (PM QoS) or `"spinners"`.
    pub fn method(&self) -> &'static str {
        match self {
            KeepAwake::PmQos(_) => "cpu_dma_latency",
            KeepAwake::Spinners { .. } => "spinners",
        }
    }
}

impl Drop for KeepAwake {
    fn drop(&mut self) {
        if let KeepAwake::Spinners { stop, threads } = self {
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            for t in threads.drain(..) {
                let _ = t.join();
            }
        }
    }
}
