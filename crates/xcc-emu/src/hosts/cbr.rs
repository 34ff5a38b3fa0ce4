//! Constant-bit-rate UDP cross traffic on real sockets (a scenario's `kind = "cbr"` flows): a
//! sender that paces datagrams of the flow's packet size (IP and UDP headers included) from a
//! real clock, and a sink that counts what arrives. No congestion header: routers see plain IP.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::os::sys;

/// IPv4 and UDP headers: the scenario's packet size counts them.
const HEADERS: usize = 28;

/// Sends from `start` to `stop` (offsets from `t0`) at `rate_bps`, `packet_bytes` per packet on
/// the wire; returns the bytes sent. Late wake-ups are caught up at once (the rate holds on
/// average, as a CBR source's should).
pub fn send(
    sock: UdpSocket,
    to: SocketAddr,
    rate_bps: u64,
    packet_bytes: u32,
    t0: Instant,
    start: Duration,
    stop: Duration,
) -> io::Result<u64> {
    sys::minimal_timer_slack();
    // At normal priority, beside the real-time router and transport, the sender was descheduled
    // for milliseconds and caught up in bursts of hundreds of datagrams (a standing queue of
    // 250 packets behind a 400 Mbit/s CBR on an idle 1 Gbit/s link).
    sys::realtime_priority(35);
    let payload = vec![0xCBu8; (packet_bytes as usize).saturating_sub(HEADERS).max(1)];
    let gap = Duration::from_secs_f64(packet_bytes as f64 * 8.0 / rate_bps.max(1) as f64);
    let mut next = t0 + start;
    let end = t0 + stop;
    let mut sent = 0u64;
    while next < end {
        if !crate::hosts::apps::sleep_until(next) {
            break; // the run is stopping
        }
        match sock.send_to(&payload, to) {
            Ok(_) => sent += (payload.len() + HEADERS) as u64,
            // A full socket buffer drops the datagram, as a real CBR source would lose it.
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => {}
            Err(e) => return Err(e),
        }
        next += gap;
    }
    Ok(sent)
}

/// Counts datagrams (wire bytes) until `stop` is set; samples are (seconds since `t0`,
/// cumulative bytes), one per read.
///
/// At the seeds' 400 Mbit/s (33,000 datagrams a second) a sink that read one datagram at a
/// time with the default socket buffer, at normal priority beside the real-time router and
/// transport, lost datagrams at its socket (a failed run). So: an 8 MiB buffer, `UDP_GRO` (the
/// router's coalesced writes are read whole), and real-time priority below the transport's.
pub fn sink(sock: UdpSocket, t0: Instant, stop: Arc<AtomicBool>) -> io::Result<(u64, Vec<(f64, u64)>)> {
    use std::os::fd::AsRawFd;

    use crate::hosts::udp_transport::{enable_gro, recv_with_tos, set_buffers, SOCKET_BUFFER};

    sock.set_nonblocking(true)?;
    set_buffers(&sock, SOCKET_BUFFER)?;
    enable_gro(&sock);
    sys::realtime_priority(30);
    let mut buf = vec![0u8; 65536];
    let mut bytes = 0u64;
    let mut samples = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        let mut pfd = libc::pollfd { fd: sock.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd; a 20 ms timeout so that `stop` is seen.
        if unsafe { libc::poll(&mut pfd, 1, 20) } <= 0 {
            continue;
        }
        while let Some(r) = recv_with_tos(&sock, &mut buf)? {
            let datagrams = r.len.div_ceil(r.datagram.max(1)).max(1);
            bytes += (r.len + HEADERS * datagrams) as u64;
            samples.push((t0.elapsed().as_secs_f64(), bytes));
        }
    }
    Ok((bytes, samples))
}
