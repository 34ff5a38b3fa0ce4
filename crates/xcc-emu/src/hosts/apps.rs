//! Traffic written in the project, on real Linux sockets: a TCP bulk sender and sink, and a UDP
//! echo for round-trip times. Each runs in the calling thread; sockets are created by the
//! caller inside the right namespace (`sys::in_netns`), where they stay.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::Ordering;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::os::sys::{self, TcpInfo};

/// The Linux TCP sockets of this run that a thread may be blocked on (connecting, accepting,
/// reading, writing): a stop must wake them all at once, whatever their flow's phase.
static OPEN_SOCKETS: Mutex<Vec<RawFd>> = Mutex::new(Vec::new());

/// Keeps a socket in `OPEN_SOCKETS` while alive. Declared after the socket it guards, so it
/// is dropped (unregistered, under the lock) before the socket's descriptor is closed and its
/// number reused: [`abort_all`] never touches another file.
pub struct Abortable(RawFd);

impl Abortable {
    /// Registers `s`; if the run is already stopping, aborts it at once.
    pub fn track(s: &impl AsRawFd) -> Abortable {
        let fd = s.as_raw_fd();
        OPEN_SOCKETS.lock().unwrap_or_else(|e| e.into_inner()).push(fd);
        if crate::os::signals::STOP.load(Ordering::Relaxed) {
            abort_fd(fd);
        }
        Abortable(fd)
    }
}

impl Drop for Abortable {
    fn drop(&mut self) {
        let mut open = OPEN_SOCKETS.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(k) = open.iter().position(|&fd| fd == self.0) {
            open.swap_remove(k);
        }
    }
}

/// Resets every tracked socket (`SO_LINGER` 0, so its close sends a RST and frees it at once
/// instead of leaving it in `LAST_ACK` with its congestion control, kernel MaxNet's struct_ops
/// included, for minutes) and shuts it down, which wakes a thread blocked in `connect`,
/// `accept`, `read` or `write` on it. For a run that stops early.
pub fn abort_all() {
    let open = OPEN_SOCKETS.lock().unwrap_or_else(|e| e.into_inner());
    for &fd in open.iter() {
        abort_fd(fd);
    }
}

fn abort_fd(fd: RawFd) {
    let linger = libc::linger { l_onoff: 1, l_linger: 0 };
    // SAFETY: `fd` is registered, so still open (unregistering takes the same lock before the
    // owner closes it); setsockopt and shutdown take no pointers beyond the linger struct.
    unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&linger as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        );
        libc::shutdown(fd, libc::SHUT_RDWR);
    }
}

/// Sleeps until `at` unless the run is stopped first (checked every 10 ms); false if stopped.
pub fn sleep_until(at: Instant) -> bool {
    loop {
        if crate::os::signals::STOP.load(Ordering::Relaxed) {
            return false;
        }
        let left = at.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return true;
        }
        std::thread::sleep(left.min(Duration::from_millis(10)));
    }
}

fn stopped_error() -> io::Error {
    io::Error::new(io::ErrorKind::Interrupted, "stopped")
}

/// Sets a TCP socket's congestion control (`reno`, `cubic`, `maxnet`, ...); a listening
/// socket's connections inherit it.
pub fn set_tcp_congestion(s: &impl AsRawFd, name: &str) -> io::Result<()> {
    // SAFETY: valid fd, buffer and length.
    let r = unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            name.as_ptr().cast(),
            name.len() as libc::socklen_t,
        )
    };
    if r < 0 {
        return Err(io::Error::other(format!("TCP_CONGESTION {name}: {}", io::Error::last_os_error())));
    }
    Ok(())
}

/// Caps a TCP socket's MSS (`TCP_MAXSEG`, before `connect` or `listen`): a scenario's
/// `transport.mss` below the route's 1460 B. Linux counts TCP options inside it, so with
/// timestamps a 500-byte MSS carries 488 B of payload in 540-byte packets, the simulator's
/// packet size for `mss = 500B`, 40 B of header.
pub fn set_tcp_mss(s: &impl AsRawFd, mss: u32) -> io::Result<()> {
    let v = mss as libc::c_int;
    // SAFETY: valid fd, pointer to an int and its size.
    let r = unsafe {
        libc::setsockopt(s.as_raw_fd(), libc::IPPROTO_TCP, libc::TCP_MAXSEG, (&v as *const libc::c_int).cast(), 4)
    };
    if r < 0 {
        return Err(io::Error::other(format!("TCP_MAXSEG {mss}: {}", io::Error::last_os_error())));
    }
    Ok(())
}

/// A TCP connection to `dst` whose congestion control is `cc` from the SYN on (a socket
/// connected first would open with the namespace's default and switch afterwards).
pub fn tcp_connect_with(dst: std::net::SocketAddr, cc: &str) -> io::Result<TcpStream> {
    tcp_connect_opts(dst, cc, None)
}

/// [`tcp_connect_with`], with the MSS capped at `mss` ([`set_tcp_mss`]) when given.
pub fn tcp_connect_opts(dst: std::net::SocketAddr, cc: &str, mss: Option<u32>) -> io::Result<TcpStream> {
    use std::os::fd::FromRawFd;
    let std::net::SocketAddr::V4(v4) = dst else {
        return Err(io::Error::other("IPv4 only"));
    };
    // SAFETY: plain socket creation; the fd is owned by the TcpStream below (closed on error).
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a fresh socket nobody else owns.
    let stream = unsafe { TcpStream::from_raw_fd(fd) };
    let _abortable = Abortable::track(&stream);
    set_tcp_congestion(&stream, cc)?;
    if let Some(m) = mss {
        set_tcp_mss(&stream, m)?;
    }
    let sa = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: v4.port().to_be(),
        sin_addr: libc::in_addr { s_addr: u32::from(*v4.ip()).to_be() },
        sin_zero: [0; 8],
    };
    // SAFETY: valid fd, address and length.
    let r = unsafe {
        libc::connect(fd, (&sa as *const libc::sockaddr_in).cast(), std::mem::size_of::<libc::sockaddr_in>() as u32)
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(stream)
}

/// What a bulk sender saw: bytes written and the kernel's view at the end.
#[derive(Clone, Debug)]
pub struct BulkReport {
    pub bytes: u64,
    pub info: TcpInfo,
}

/// Writes as fast as the connection takes for `duration`, then reads `TCP_INFO` and closes.
pub fn tcp_bulk_send(s: TcpStream, duration: Duration) -> io::Result<BulkReport> {
    tcp_send(s, duration, None)
}

/// Writes `size` bytes (or without limit) until `duration` has passed, then reads `TCP_INFO`
/// (after the last byte was acknowledged, for a sized transfer) and closes.
pub fn tcp_send(mut s: TcpStream, duration: Duration, size: Option<u64>) -> io::Result<BulkReport> {
    let chunk = vec![0x5Au8; 64 * 1024];
    let end = Instant::now() + duration;
    let mut bytes = 0u64;
    let _abortable = Abortable::track(&s);
    s.set_write_timeout(Some(Duration::from_millis(50)))?;
    let stopped = || crate::os::signals::STOP.load(Ordering::Relaxed);
    while Instant::now() < end && size.is_none_or(|n| bytes < n) && !stopped() {
        let want = size.map_or(chunk.len(), |n| (n - bytes).min(chunk.len() as u64) as usize);
        match s.write(&chunk[..want]) {
            Ok(n) => bytes += n as u64,
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {}
            Err(e) => return Err(e),
        }
    }
    if size.is_some() {
        s.shutdown(std::net::Shutdown::Write)?;
        // Wait (bounded by the run) for the peer to read everything and close.
        let mut sink = [0u8; 64];
        s.set_read_timeout(Some(end.saturating_duration_since(Instant::now()).max(Duration::from_millis(1))))?;
        let _ = s.read(&mut sink);
    }
    let info = sys::tcp_info(s.as_raw_fd())?;
    if size.is_none() {
        // The flow stops here: reset the connection rather than let the kernel drain a send
        // buffer of megabytes after the end of the run.
        let linger = libc::linger { l_onoff: 1, l_linger: 0 };
        // SAFETY: valid fd and struct linger.
        unsafe {
            libc::setsockopt(
                s.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_LINGER,
                (&linger as *const libc::linger).cast(),
                std::mem::size_of::<libc::linger>() as libc::socklen_t,
            )
        };
    }
    Ok(BulkReport { bytes, info })
}

/// What a sink received: total bytes and (seconds since accept, cumulative bytes) samples.
#[derive(Clone, Debug, Default)]
pub struct SinkReport {
    pub bytes: u64,
    pub samples: Vec<(f64, u64)>,
}

impl SinkReport {
    /// Goodput in bit/s between `from` and `to` seconds (linear interpolation of the samples).
    pub fn goodput_bps(&self, from: f64, to: f64) -> Option<f64> {
        let at = |t: f64| -> Option<f64> {
            let i = self.samples.iter().position(|&(ts, _)| ts >= t)?;
            if i == 0 {
                return Some(self.samples[0].1 as f64);
            }
            let ((t0, b0), (t1, b1)) = (self.samples[i - 1], self.samples[i]);
            Some(b0 as f64 + (b1 - b0) as f64 * (t - t0) / (t1 - t0).max(1e-9))
        };
        Some((at(to)? - at(from)?) * 8.0 / (to - from))
    }
}

/// Accepts one connection and reads it to the end, sampling the byte count.
pub fn tcp_sink(listener: TcpListener) -> io::Result<SinkReport> {
    tcp_sink_until(listener, None)
}

/// [`tcp_sink`] that stops reading at `give_up_at` if the connection has not ended by then:
/// the reset that ends an unlimited flow is one packet, and a full buffer on the path can drop
/// it, which would leave the sink (and the run joining it) waiting for ever.
pub fn tcp_sink_until(listener: TcpListener, give_up_at: Option<Instant>) -> io::Result<SinkReport> {
    let waiting = Abortable::track(&listener);
    let (mut s, _) = listener.accept()?;
    drop(waiting);
    let _abortable = Abortable::track(&s);
    if give_up_at.is_some() {
        s.set_read_timeout(Some(Duration::from_millis(100)))?;
    }
    let start = Instant::now();
    let mut buf = vec![0u8; 256 * 1024];
    let mut r = SinkReport::default();
    loop {
        let n = match s.read(&mut buf) {
            Ok(n) => n,
            // An unlimited flow ends with a reset (see `tcp_send`).
            Err(e) if e.kind() == io::ErrorKind::ConnectionReset => 0,
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {
                if give_up_at.is_some_and(|at| Instant::now() >= at) {
                    return Ok(r);
                }
                continue;
            }
            Err(e) => return Err(e),
        };
        if n == 0 {
            return Ok(r);
        }
        r.bytes += n as u64;
        r.samples.push((start.elapsed().as_secs_f64(), r.bytes));
    }
}

/// Echoes every datagram back to its sender until one of zero length arrives.
pub fn udp_echo(sock: UdpSocket) -> io::Result<()> {
    let mut buf = [0u8; 2048];
    loop {
        let (n, from) = sock.recv_from(&mut buf)?;
        if n == 0 {
            return Ok(());
        }
        sock.send_to(&buf[..n], from)?;
    }
}

/// Sends `count` probes of `size` bytes to an echo, one every `gap`, and returns the RTTs
/// (seconds) of those that came back within a second.
pub fn udp_ping(sock: &UdpSocket, to: SocketAddr, count: usize, size: usize, gap: Duration) -> io::Result<Vec<f64>> {
    sock.set_read_timeout(Some(Duration::from_secs(1)))?;
    let mut rtts = Vec::new();
    let mut buf = vec![0u8; size.max(8)];
    let mut back = vec![0u8; 2048];
    for i in 0..count as u64 {
        buf[..8].copy_from_slice(&i.to_be_bytes());
        let t = Instant::now();
        sock.send_to(&buf, to)?;
        loop {
            match sock.recv_from(&mut back) {
                Ok((n, _)) if n >= 8 && back[..8] == i.to_be_bytes() => {
                    rtts.push(t.elapsed().as_secs_f64());
                    break;
                }
                Ok(_) => continue,
                Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => break,
                Err(e) => return Err(e),
            }
        }
        std::thread::sleep(gap);
    }
    Ok(rtts)
}

/// Serves `count` request/response exchanges: each accepted connection reads `request` bytes,
/// answers with `response` bytes and closes.
pub fn tcp_txn_server(listener: TcpListener, count: usize, request: u64, response: u64) -> io::Result<()> {
    let mut handlers = Vec::new();
    let _abortable = Abortable::track(&listener);
    for _ in 0..count {
        let (mut s, _) = listener.accept()?;
        handlers.push(std::thread::spawn(move || -> io::Result<()> {
            let _abortable = Abortable::track(&s);
            let mut buf = vec![0u8; 64 * 1024];
            let mut got = 0u64;
            while got < request {
                let n = s.read(&mut buf)?;
                if n == 0 {
                    return Ok(());
                }
                got += n as u64;
            }
            let body = vec![0x42u8; response as usize];
            s.write_all(&body)?;
            Ok(())
        }));
    }
    for h in handlers {
        let _ = h.join();
    }
    Ok(())
}

/// One transaction: at `at`, send `request` bytes, then read the `response`. Returns (response
/// time, completion time) in seconds from `at`, `None` where it did not happen before
/// `deadline`. With `handshake` the connection is opened (`connect`) at `at`, so the times
/// include its SYN / SYN-ACK exchange, as the simulator's do with `connection = "handshake"`;
/// without, it is opened ahead and the times start with the request's first byte.
pub fn tcp_txn_client(
    connect: impl FnOnce() -> io::Result<TcpStream>,
    handshake: bool,
    at: Instant,
    deadline: Instant,
    request: u64,
    response: u64,
) -> io::Result<(Option<f64>, Option<f64>)> {
    let (mut s, t0) = if handshake {
        if !sleep_until(at) {
            return Err(stopped_error());
        }
        let t0 = Instant::now();
        (connect()?, t0)
    } else {
        let s = connect()?;
        if !sleep_until(at) {
            return Err(stopped_error());
        }
        (s, Instant::now())
    };
    let _abortable = Abortable::track(&s);
    s.write_all(&vec![0x21u8; request as usize])?;
    let mut first = None;
    let mut got = 0u64;
    let mut buf = vec![0u8; 64 * 1024];
    while got < response {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        s.set_read_timeout(Some(left))?;
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                first.get_or_insert(t0.elapsed().as_secs_f64());
                got += n as u64;
            }
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => break,
            Err(e) => return Err(e),
        }
    }
    let done = (got >= response).then(|| t0.elapsed().as_secs_f64());
    Ok((first, done))
}
