//! Constant-bit-rate UDP cross traffic on real sockets (a scenario's `kind = "cbr"` flows): a
//! sender that paces datagrams of the flow's packet size (IP and UDP headers included) from a
//! real clock, and a sink that counts what arrives. No congestion header: routers see plain IP.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::sys;

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
    let payload = vec![0xCBu8; (packet_bytes as usize).saturating_sub(HEADERS).max(1)];
    let gap = Duration::from_secs_f64(packet_bytes as f64 * 8.0 / rate_bps.max(1) as f64);
    let mut next = t0 + start;
    let end = t0 + stop;
    let mut sent = 0u64;
    while next < end {
        let now = Instant::now();
        if next > now {
            std::thread::sleep(next - now);
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
/// cumulative bytes).
pub fn sink(sock: UdpSocket, t0: Instant, stop: Arc<AtomicBool>) -> io::Result<(u64, Vec<(f64, u64)>)> {
    sock.set_read_timeout(Some(Duration::from_millis(20)))?;
    let mut buf = vec![0u8; 65536];
    let mut bytes = 0u64;
    let mut samples = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        match sock.recv_from(&mut buf) {
            Ok((n, _)) => {
                bytes += (n + HEADERS) as u64;
                samples.push((t0.elapsed().as_secs_f64(), bytes));
            }
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {}
            Err(e) => return Err(e),
        }
    }
    Ok((bytes, samples))
}
