//! xcclab's own transport over real UDP sockets: the very same `Sender`/`Receiver` state
//! machines, controllers and echoers as the simulator (built by the simulator's registry
//! functions, so a new protocol needs nothing here), driven by the monotonic clock.
//!
//! Wire layout (`xcc_core::wire::datagram`, also the simulator's capture encoding,
//! `xcc_build::capture`): `IPv4 | UDP | shim proto len body | segment | payload`, the congestion
//! shim right after the UDP header. The receiving side of every flow
//! listens on [`XCC_UDP_PORT`]; the sender uses `sender_port(flow)`. The packet's ECN bits travel
//! in the IP TOS byte (set with `IP_TOS`, read back with `IP_RECVTOS`), which is what the
//! router's AQMs mark.
//!
//! One thread drives every flow: sockets are created inside the hosts' namespaces and stay
//! there, so a single `ppoll` loop serves them all.

use std::collections::HashMap;
use std::io;
use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};
use std::os::fd::AsRawFd;
use std::path::PathBuf;

use xcc_build::capture::{sender_port, XCC_UDP_PORT};
use xcc_build::construct::{controller, echoer, transport_config};
use xcc_build::scenario::model::{Cc, Transport};
use xcc_core::host::AnyController;
use xcc_core::transport::{Receiver, Sender, TransportConfig};
use xcc_core::wire::{datagram, Ecn};
use xcc_core::{Dur, FlowId, Packet, Time};

use crate::hosts::send_batch::SendBatch;
use crate::os::sys;

/// IPv4 + UDP header bytes in front of the shim.
pub const IP_UDP_LEN: u32 = 28;
/// Largest IP packet the hosts send on xcclab's transport (the TUN MTU, not the route's).
pub const MTU: u32 = crate::os::netns::TUN_MTU;
/// How late this driver may be behind a paced departure and still make it up
/// (`TransportConfig::pacing_catch_up`): the loop sleeps in `ppoll`, which wakes some tens of
/// microseconds after the deadline (milliseconds when the CPU is taken); at 100 Mbit/s a
/// 1500-byte gap is 120 µs, so without catch-up the lateness would be lost rate. 1 ms bounds the
/// burst that makes up a stall to 1 ms of the flow's rate.
pub const PACING_CATCH_UP: Dur = Dur(1_000_000);

/// [`PACING_CATCH_UP`], or `XCC_EMU_PACING_CATCH_UP_US` microseconds (for measurements).
pub fn pacing_catch_up() -> Dur {
    std::env::var("XCC_EMU_PACING_CATCH_UP_US")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .map_or(PACING_CATCH_UP, |us| Dur(us * 1000))
}

/// How long the transport's loop sleeps in every millisecond: 150 µs. Since Linux 6.12 a
/// per-CPU deadline server runs starved normal threads for 50 ms of each second ahead of every
/// real-time thread, whatever `sched_rt_runtime_us` says. On a busy machine the loop's CPU (the
/// hosts' receive processing is steered there too) starves them, and the loop stopped for those
/// 50 ms at once, which the 1 ms catch-up cannot make up (a 1 Gbit/s flow 1.7 % short over 3 s
/// per stall). Sleeping 150 µs of each millisecond gives them their share in pieces the
/// catch-up covers: in 15 runs at a load average of 21-23 no such stall, against 6 in 10 runs
/// without (docs/emu.md, "Under a shared machine's load").
pub const TRANSPORT_YIELD: Dur = Dur(150_000);

/// [`TRANSPORT_YIELD`], or `XCC_EMU_TRANSPORT_YIELD_US` microseconds (0: never sleeps but to
/// wait; for measurements).
pub fn transport_yield() -> Dur {
    std::env::var("XCC_EMU_TRANSPORT_YIELD_US")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .map_or(TRANSPORT_YIELD, |us| Dur(us * 1000))
}

/// Socket buffer size (bytes) of every UDP socket: a window of datagrams that arrive while the
/// driver is descheduled must wait in the socket, not be dropped (the run would fail: such
/// drops are outside the modelled network). 8 MiB holds a 200 ms RTT at 100 Mbit/s and more.
pub const SOCKET_BUFFER: usize = 8 << 20;

/// One flow to run.
#[derive(Clone, Debug)]
pub struct FlowSetup {
    pub id: u32,
    pub src_netns: PathBuf,
    pub dst_netns: PathBuf,
    pub src_addr: [u8; 4],
    pub dst_addr: [u8; 4],
    pub cc: Cc,
    pub transport: Transport,
    pub size_bytes: Option<u64>,
    pub start: Time,
    pub stop: Option<Time>,
    /// Round-trip propagation delay of the path (MaxNet's echoer averages over it).
    pub two_way_delay: Dur,
    /// Index (in the setups given to [`run`]) of a flow that starts when this flow's receiver
    /// has all `size_bytes` (a transaction's response after its request); that flow's own
    /// `start` should be `Time::NEVER`.
    pub then: Option<usize>,
}

/// Per-flow results, with a goodput sample per `sample_every`.
#[derive(Clone, Debug, Default)]
pub struct FlowResult {
    pub id: u32,
    pub bytes_delivered: u64,
    pub first_byte_at: Option<Time>,
    /// When the receiver had every byte of a sized flow.
    pub received_all_at: Option<Time>,
    pub completed_at: Option<Time>,
    /// When the flow started (its `start`, or when the flow before it completed).
    pub started_at: Option<Time>,
    pub retransmits: u64,
    pub timeouts: u64,
    pub fast_recoveries: u64,
    /// Datagrams the local socket refused (full buffer): lost before reaching the router.
    pub send_failures: u64,
    /// (time, cumulative bytes delivered in order, sender's pacing rate or 0, smoothed RTT ns).
    pub samples: Vec<(Time, u64, f64, u64)>,
}

/// What [`run`] returns: each flow's result, and how late the hosts' loop woke at worst.
#[derive(Clone, Debug, Default)]
pub struct TransportRun {
    pub flows: Vec<FlowResult>,
    /// The largest delay between a timer the loop slept for and its waking, in nanoseconds: a
    /// host that did not get a CPU (a stall) shows here, where the router sees only silence.
    pub wake_late_max_ns: u64,
    /// Whether the loop got its real-time priority (`SCHED_FIFO`), which keeps other work on
    /// the machine from delaying it.
    pub realtime: bool,
    /// ACKs the receiving sockets refused (counted against no flow).
    pub ack_send_failures: u64,
    /// Sends of several data datagrams, and the datagrams in them ([`SendBatch`]).
    pub data_batches: (u64, u64),
    /// Sends of several ACKs, and the ACKs in them.
    pub ack_batches: (u64, u64),
    /// Reads of the hosts' sockets, and the datagrams in them (more with `UDP_GRO`).
    pub reads: (u64, u64),
    /// The loop thread's CPU time and wall time (ns): near 1 it had no time to spare.
    pub cpu_ns: u64,
    pub wall_ns: u64,
    /// Times the loop thread was preempted (involuntary context switches).
    pub preempted: u64,
    /// Sending time the flows' pacers lost: how much later than the catch-up allows the loop
    /// came to a paced departure, summed over the flows' departures (ns), and at worst.
    pub pacing_lost_ns: u64,
    pub pacing_late_max_ns: u64,
}

/// Involuntary context switches of the calling thread so far.
fn preemptions() -> u64 {
    // SAFETY: a zeroed rusage is valid; getrusage writes into it.
    unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_THREAD, &mut ru);
        ru.ru_nivcsw as u64
    }
}

struct Flow {
    setup: FlowSetup,
    tx: UdpSocket,
    sender: Option<Sender<AnyController>>,
    receiver: Option<Receiver>,
    result: FlowResult,
    tos: Option<u8>,
}

fn set_tos(s: &UdpSocket, tos: u8) -> io::Result<()> {
    let v = tos as libc::c_int;
    // SAFETY: valid fd, pointer to an int and its size.
    let r = unsafe {
        libc::setsockopt(s.as_raw_fd(), libc::IPPROTO_IP, libc::IP_TOS, (&v as *const libc::c_int).cast(), 4)
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Lets a UDP socket send datagrams up to the TUN device's MTU rather than the route's
/// (`IP_PMTUDISC_PROBE`: DF set, the route's path MTU ignored). The route says 1500 for Linux
/// TCP's sake (`netns::ROUTE_MTU`); xcclab's transport and the sessions need the device's.
pub(crate) fn use_device_mtu(s: &UdpSocket) -> io::Result<()> {
    let v: libc::c_int = libc::IP_PMTUDISC_PROBE;
    // SAFETY: valid fd, pointer to an int and its size.
    let r = unsafe {
        libc::setsockopt(s.as_raw_fd(), libc::IPPROTO_IP, libc::IP_MTU_DISCOVER, (&v as *const libc::c_int).cast(), 4)
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Sets both socket buffers to `bytes` (`SO_*BUFFORCE`: as root, beyond `net.core.*mem_max`).
pub(crate) fn set_buffers(s: &UdpSocket, bytes: usize) -> io::Result<()> {
    let v = (bytes / 2) as libc::c_int; // the kernel doubles the value (bookkeeping overhead)
    for (force, plain) in [(libc::SO_RCVBUFFORCE, libc::SO_RCVBUF), (libc::SO_SNDBUFFORCE, libc::SO_SNDBUF)] {
        // SAFETY: valid fd, pointer to an int and its size.
        let set = |opt| unsafe {
            libc::setsockopt(s.as_raw_fd(), libc::SOL_SOCKET, opt, (&v as *const libc::c_int).cast(), 4)
        };
        if set(force) < 0 && set(plain) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

fn enable_recv_tos(s: &UdpSocket) -> io::Result<()> {
    let v: libc::c_int = 1;
    // SAFETY: as above.
    let r = unsafe {
        libc::setsockopt(s.as_raw_fd(), libc::IPPROTO_IP, libc::IP_RECVTOS, (&v as *const libc::c_int).cast(), 4)
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `UDP_GRO` (Linux 5.0; not in every libc build): datagrams of one flow that arrive together
/// are read as one buffer with their size in a control message.
const UDP_GRO: libc::c_int = 104;

/// Turns on `UDP_GRO`: fewer reads on the hosts' side (the router's coalesced writes reach the
/// socket whole). Errors are ignored: without it every datagram is read on its own. Used by
/// the CBR sink ([`crate::hosts::cbr`]); the transport only with `XCC_EMU_TRANSPORT_GRO=1`.
pub(crate) fn enable_gro(s: &UdpSocket) {
    let v: libc::c_int = 1;
    // SAFETY: valid fd, pointer to an int and its size.
    unsafe { libc::setsockopt(s.as_raw_fd(), libc::SOL_UDP, UDP_GRO, (&v as *const libc::c_int).cast(), 4) };
}

/// One read: its bytes, source, TOS byte and the size of the datagrams in it (the whole read
/// when the kernel merged none).
pub(crate) struct Read {
    pub len: usize,
    pub from: SocketAddrV4,
    pub tos: u8,
    pub datagram: usize,
}

/// `recvmsg` with the TOS byte and `UDP_GRO`'s datagram size; `None` when nothing is waiting.
pub(crate) fn recv_with_tos(s: &UdpSocket, buf: &mut [u8]) -> io::Result<Option<Read>> {
    let mut addr: libc::sockaddr_in = unsafe { std::mem::zeroed() };
    let mut iov = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: buf.len() };
    let mut control = [0u64; 8];
    // SAFETY: msghdr points at live buffers of the given sizes.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_name = (&mut addr as *mut libc::sockaddr_in).cast();
    msg.msg_namelen = std::mem::size_of::<libc::sockaddr_in>() as u32;
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control) as _;
    // SAFETY: valid fd and msghdr.
    let n = unsafe { libc::recvmsg(s.as_raw_fd(), &mut msg, libc::MSG_DONTWAIT) };
    if n < 0 {
        let e = io::Error::last_os_error();
        return match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(None),
            _ => Err(e),
        };
    }
    let (mut tos, mut datagram) = (0u8, n as usize);
    // SAFETY: walking the control messages the kernel wrote into `control`.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::IPPROTO_IP && (*c).cmsg_type == libc::IP_TOS {
                tos = *libc::CMSG_DATA(c);
            } else if (*c).cmsg_level == libc::SOL_UDP && (*c).cmsg_type == UDP_GRO {
                let size = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast::<libc::c_int>());
                datagram = (size as usize).clamp(1, n as usize);
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
    }
    let ip = Ipv4Addr::from(u32::from_be(addr.sin_addr.s_addr));
    let from = SocketAddrV4::new(ip, u16::from_be(addr.sin_port));
    Ok(Some(Read { len: n as usize, from, tos, datagram }))
}

/// Encodes a packet's UDP payload: shim, segment, then `payload_bytes` of filler.
pub fn encode_payload(pkt: &Packet, buf: &mut Vec<u8>) -> io::Result<()> {
    buf.clear();
    buf.resize(datagram::header_len(&pkt.cc, &pkt.seg) + pkt.seg.payload_bytes as usize, 0);
    datagram::emit(&pkt.cc, &pkt.seg, pkt.ecn, buf).map_err(|e| io::Error::other(format!("xcclab header: {e}")))?;
    Ok(())
}

/// Decodes a UDP payload of flow `flow` that arrived with IP TOS `tos` (`None`: not a whole
/// xcclab datagram).
pub fn decode_payload(flow: u32, bytes: &[u8], tos: u8) -> Option<Packet> {
    let h = datagram::parse(bytes).ok()?;
    if bytes.len() < h.len + h.seg.payload_bytes as usize {
        return None;
    }
    Some(Packet {
        flow: FlowId(flow),
        wire_bytes: IP_UDP_LEN + bytes.len() as u32,
        ecn: Ecn::from_bits(tos),
        seg: h.seg,
        cc: h.cc,
    })
}

/// Runs the flows until every one finished or `until` passed; samples every `sample_every`.
/// Times (`start`, `stop`, `until`, the results) count from `zero_ns` on `CLOCK_MONOTONIC`, the
/// run's time zero shared with the router.
pub fn run(setups: Vec<FlowSetup>, zero_ns: u64, until: Time, sample_every: Dur) -> io::Result<TransportRun> {
    // One receiving socket per destination address, shared by the flows to it.
    let mut rx_socks: Vec<UdpSocket> = Vec::new();
    let mut rx_of: HashMap<[u8; 4], usize> = HashMap::new();
    // Datagrams that arrive together read at once (UDP_GRO): off unless XCC_EMU_TRANSPORT_GRO=1,
    // since with it the flows fell further behind their rate (docs/emu.md, measured).
    let gro = std::env::var("XCC_EMU_TRANSPORT_GRO").is_ok_and(|v| v == "1");
    let mut flows = Vec::new();
    for s in setups {
        if let std::collections::hash_map::Entry::Vacant(e) = rx_of.entry(s.dst_addr) {
            let a = SocketAddrV4::new(Ipv4Addr::from(s.dst_addr), XCC_UDP_PORT);
            let sock = sys::in_netns(&s.dst_netns, || UdpSocket::bind(a))?;
            sock.set_nonblocking(true)?;
            set_buffers(&sock, SOCKET_BUFFER)?;
            use_device_mtu(&sock)?;
            enable_recv_tos(&sock)?;
            if gro {
                enable_gro(&sock);
            }
            e.insert(rx_socks.len());
            rx_socks.push(sock);
        }
        let a = SocketAddrV4::new(Ipv4Addr::from(s.src_addr), sender_port(s.id));
        let tx = sys::in_netns(&s.src_netns, || UdpSocket::bind(a))?;
        tx.connect(SocketAddrV4::new(Ipv4Addr::from(s.dst_addr), XCC_UDP_PORT))?;
        tx.set_nonblocking(true)?;
        set_buffers(&tx, SOCKET_BUFFER)?;
        use_device_mtu(&tx)?;
        enable_recv_tos(&tx)?;
        if gro {
            enable_gro(&tx);
        }
        flows.push(Flow {
            result: FlowResult { id: s.id, ..FlowResult::default() },
            setup: s,
            tx,
            sender: None,
            receiver: None,
            tos: None,
        });
    }
    let by_port: HashMap<u16, usize> = flows.iter().enumerate().map(|(i, f)| (sender_port(f.setup.id), i)).collect();
    sys::minimal_timer_slack();
    let realtime = sys::realtime_priority(40);
    // XCC_EMU_TRANSPORT_OFF_ROUTER=1: keep this thread off the router's CPU (for measurements,
    // docs/emu.md "Under a shared machine's load").
    if std::env::var("XCC_EMU_TRANSPORT_OFF_ROUTER").is_ok_and(|v| v == "1") {
        crate::os::cpu::keep_off_router_cpu();
    }
    let now = || Time(sys::monotonic_ns().saturating_sub(zero_ns));
    let (cpu0, wall0, preempted0) = (sys::thread_cpu_ns(), sys::monotonic_ns(), preemptions());
    let (mut pacing_lost_ns, mut pacing_late_max_ns) = (0u64, 0u64);
    let mut buf = Vec::with_capacity(2048);
    // A read can hold a 64 KiB run of datagrams (UDP_GRO).
    let mut rbuf = vec![0u8; 65_536];
    // The paced datagrams due at one wake-up in one send, and the ACKs for the datagrams read
    // at once in another (send_batch.rs: without them the router could not read two flows'
    // datagrams at 1 Gbit/s one by one). XCC_EMU_TRANSPORT_GSO=0 sends every datagram alone.
    let gso = std::env::var("XCC_EMU_TRANSPORT_GSO").map_or(true, |v| v != "0");
    let mut batch = SendBatch::new(gso);
    let mut acks = SendBatch::new(gso);
    let mut next_sample = Time::ZERO;
    let catch_up = pacing_catch_up();
    let yield_ns = transport_yield().as_ns();
    let mut last_yield = sys::monotonic_ns();
    let mut triggered: Vec<(usize, Time)> = Vec::new();
    let mut wake_late_max_ns = 0;
    let mut ack_failures = 0;
    let (mut reads, mut datagrams) = (0u64, 0u64);
    let mut pfds: Vec<libc::pollfd> = rx_socks
        .iter()
        .map(|s| s.as_raw_fd())
        .chain(flows.iter().map(|f| f.tx.as_raw_fd()))
        .map(|fd| libc::pollfd { fd, events: libc::POLLIN, revents: 0 })
        .collect();
    loop {
        for (j, at) in triggered.drain(..) {
            if let Some(f) = flows.get_mut(j) {
                f.setup.start = f.setup.start.min(at);
            }
        }
        let t = now();
        if t >= until
            || flows.iter().all(|f| f.result.completed_at.is_some())
            || crate::os::signals::STOP.load(std::sync::atomic::Ordering::Relaxed)
        {
            break;
        }
        let mut wake = until;
        for f in flows.iter_mut() {
            // Start, stop, timers, and everything each end wants to send now.
            if f.sender.is_none() && t >= f.setup.start {
                let cfg = TransportConfig { pacing_catch_up: catch_up, ..transport_config(&f.setup.transport) };
                let ctl = controller(&f.setup.cc, &f.setup.transport);
                f.sender = Some(Sender::new(FlowId(f.setup.id), cfg, ctl, f.setup.size_bytes, t));
                f.result.started_at = Some(t);
                f.receiver = Some(Receiver::new(FlowId(f.setup.id), cfg, echoer(&f.setup.cc, f.setup.two_way_delay)));
            }
            let (Some(snd), Some(rcv)) = (f.sender.as_mut(), f.receiver.as_mut()) else {
                wake = wake.min(f.setup.start);
                continue;
            };
            if f.setup.stop.is_some_and(|s| t >= s) && f.result.completed_at.is_none() {
                snd.stop();
                f.result.completed_at = Some(t);
            }
            if snd.poll_timeout().is_some_and(|d| d <= t) {
                snd.on_timeout(t);
            }
            if rcv.poll_timeout().is_some_and(|d| d <= t) {
                rcv.on_timeout(t);
            }
            // A departure due at `d` and made now: lateness beyond the catch-up is lost time.
            let due = snd.poll_timeout().filter(|&d| d <= t);
            let mut sent_any = false;
            while let Some(p) = snd.poll_transmit(t) {
                sent_any = true;
                encode_payload(&p, &mut buf)?;
                if buf.len() as u32 + IP_UDP_LEN > MTU {
                    return Err(io::Error::other(format!(
                        "flow {}: transport.mss {} B makes {}-byte packets, more than the {MTU}-byte MTU of the namespaces",
                        f.setup.id,
                        f.setup.transport.mss_bytes,
                        buf.len() as u32 + IP_UDP_LEN
                    )));
                }
                if f.tos != Some(p.ecn.bits()) {
                    // The TOS byte is the socket's: what waits goes out with the old one.
                    f.result.send_failures += batch.flush(&f.tx);
                    set_tos(&f.tx, p.ecn.bits())?;
                    f.tos = Some(p.ecn.bits());
                }
                // A full socket buffer is a loss the transport recovers from.
                f.result.send_failures += batch.push(&f.tx, &buf);
            }
            f.result.send_failures += batch.flush(&f.tx);
            if let (Some(d), true) = (due, sent_any) {
                let late = t.as_ns() - d.as_ns();
                pacing_late_max_ns = pacing_late_max_ns.max(late);
                pacing_lost_ns += late.saturating_sub(catch_up.as_ns());
            }
            let rx = &rx_socks[rx_of[&f.setup.dst_addr]];
            let back = SocketAddrV4::new(Ipv4Addr::from(f.setup.src_addr), sender_port(f.setup.id));
            while let Some(p) = rcv.poll_transmit(t) {
                encode_payload(&p, &mut buf)?;
                if rx.send_to(&buf, back).is_err() {
                    f.result.send_failures += 1;
                }
            }
            if snd.is_complete() && f.result.completed_at.is_none() {
                f.result.completed_at = Some(t);
            }
            for d in [snd.poll_timeout(), rcv.poll_timeout()].into_iter().flatten() {
                wake = wake.min(d);
            }
        }
        if t >= next_sample {
            for f in flows.iter_mut() {
                let (rate, srtt) = match f.sender.as_ref() {
                    Some(s) => {
                        use xcc_core::host::Controller;
                        (s.controller().pacing_rate_bps().unwrap_or(0.0), s.rtt().srtt().as_ns())
                    }
                    None => (0.0, 0),
                };
                f.result.samples.push((t, f.result.bytes_delivered, rate, srtt));
            }
            next_sample = Time(t.as_ns() + sample_every.as_ns());
        }
        wake = wake.min(next_sample);
        if yield_ns > 0 && sys::monotonic_ns() - last_yield > 1_000_000 {
            // Leave the CPU to normal threads for a moment each millisecond, so that the
            // kernel's fair server need not take it for 50 ms at once ([`TRANSPORT_YIELD`]).
            let ts = libc::timespec { tv_sec: 0, tv_nsec: yield_ns as _ };
            // SAFETY: valid timespec; no remainder wanted.
            unsafe { libc::nanosleep(&ts, std::ptr::null_mut()) };
            last_yield = sys::monotonic_ns();
        }
        let t = now();
        let timeout_ns = wake.as_ns().saturating_sub(t.as_ns());
        let ts =
            libc::timespec { tv_sec: (timeout_ns / 1_000_000_000) as _, tv_nsec: (timeout_ns % 1_000_000_000) as _ };
        // SAFETY: valid pollfd array and timespec.
        let n = unsafe { libc::ppoll(pfds.as_mut_ptr(), pfds.len() as _, &ts, std::ptr::null()) };
        if n <= 0 {
            wake_late_max_ns = wake_late_max_ns.max(now().as_ns().saturating_sub(wake.as_ns()));
            continue;
        }
        // Data arrives at the receiving sockets, ACKs at the senders' sockets.
        for (k, pfd) in pfds.iter().enumerate() {
            if pfd.revents & libc::POLLIN == 0 {
                continue;
            }
            loop {
                let sock = if k < rx_socks.len() { &rx_socks[k] } else { &flows[k - rx_socks.len()].tx };
                let Some(read) = recv_with_tos(sock, &mut rbuf)? else { break };
                let t = now();
                let i =
                    if k < rx_socks.len() { by_port.get(&read.from.port()).copied() } else { Some(k - rx_socks.len()) };
                let Some(i) = i else { continue };
                reads += 1;
                // The datagrams of one read (several with UDP_GRO), one by one.
                for d in rbuf[..read.len].chunks(read.datagram) {
                    let f = &mut flows[i];
                    datagrams += 1;
                    let Some(p) = decode_payload(f.setup.id, d, read.tos) else { continue };
                    // Each arrival is answered at once, as in the simulator: the receiver's ACKs
                    // for one packet must leave before the next packet is read, or several ACKs owed
                    // would go out with the same cumulative number and look like duplicates.
                    if k < rx_socks.len() {
                        if let Some(r) = f.receiver.as_mut() {
                            let fresh = r.on_packet(t, &p);
                            if fresh > 0 && f.result.first_byte_at.is_none() {
                                f.result.first_byte_at = Some(t);
                            }
                            f.result.bytes_delivered += fresh;
                            if f.result.received_all_at.is_none()
                                && f.setup.size_bytes.is_some_and(|n| f.result.bytes_delivered >= n)
                            {
                                f.result.received_all_at = Some(t);
                                if let Some(j) = f.setup.then {
                                    triggered.push((j, t));
                                }
                            }
                            // Encoded now, sent with the other ACKs owed when the socket is empty.
                            let back = SocketAddrV4::new(Ipv4Addr::from(f.setup.src_addr), sender_port(f.setup.id));
                            while let Some(a) = r.poll_transmit(t) {
                                encode_payload(&a, &mut buf)?;
                                f.result.send_failures += acks.push_to(&rx_socks[k], Some(back), &buf);
                            }
                        }
                    } else if let Some(s) = f.sender.as_mut() {
                        s.on_packet(t, &p);
                    }
                }
            }
            if k < rx_socks.len() {
                // Refusals are rare (8 MiB buffers) and counted against no flow in particular.
                ack_failures += acks.flush(&rx_socks[k]);
            }
        }
    }
    let flows = flows
        .into_iter()
        .map(|mut f| {
            if let Some(s) = &f.sender {
                let st = s.stats();
                f.result.retransmits = st.retransmits;
                f.result.timeouts = st.timeouts;
                f.result.fast_recoveries = st.fast_recoveries;
            }
            f.result
        })
        .collect();
    Ok(TransportRun {
        flows,
        wake_late_max_ns,
        realtime,
        ack_send_failures: ack_failures,
        data_batches: (batch.batched_sends, batch.batched_datagrams),
        ack_batches: (acks.batched_sends, acks.batched_datagrams),
        reads: (reads, datagrams),
        cpu_ns: sys::thread_cpu_ns() - cpu0,
        wall_ns: sys::monotonic_ns() - wall0,
        preempted: preemptions() - preempted0,
        pacing_lost_ns,
        pacing_late_max_ns,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Four datagrams sent as one `UDP_SEGMENT` send to a socket with `UDP_GRO` arrive as the
    /// same four datagrams, byte for byte, with their TOS byte, however the kernel groups them
    /// into reads (over loopback: one read of four).
    #[test]
    fn datagrams_read_together_are_the_datagrams_sent() {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        tx.connect(rx.local_addr().unwrap()).unwrap();
        enable_recv_tos(&rx).unwrap();
        enable_gro(&rx);
        set_tos(&tx, 0x02).unwrap();
        let sent: Vec<Vec<u8>> = (1..=4u8).map(|i| vec![i; if i == 4 { 500 } else { 1200 }]).collect();
        let mut b = SendBatch::new(true);
        for d in &sent {
            assert_eq!(b.push(&tx, d), 0);
        }
        assert_eq!(b.flush(&tx), 0);
        let mut buf = vec![0u8; 65_536];
        let (mut got, mut reads) = (Vec::new(), 0);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while got.len() < sent.len() && std::time::Instant::now() < deadline {
            let Some(r) = recv_with_tos(&rx, &mut buf).unwrap() else { continue };
            reads += 1;
            assert_eq!(r.tos, 0x02);
            got.extend(buf[..r.len].chunks(r.datagram).map(<[u8]>::to_vec));
        }
        assert_eq!(got, sent);
        assert!(reads <= sent.len(), "{reads} reads");
    }
}
