//! Datagrams a host's transport sends at one moment, given to the kernel with one system call
//! (`UDP_SEGMENT`, Linux 4.18) instead of one each: the paced data datagrams due at one
//! wake-up, and the ACKs a receiver owes for the datagrams it read at once.
//!
//! Why: at 1 Gbit/s xcclab's transport sends a datagram every 12 µs and an ACK for each, and
//! the router reads every datagram from the hosts' TUN devices with a system call of its own;
//! at two senders' worth of traffic (a flow joining at the link's rate) it could not keep up
//! and the kernel dropped datagrams at the TUN devices (docs/emu.md). A `UDP_SEGMENT` send
//! reaches the router as one super-packet, one read, which it cuts apart again
//! ([`crate::router::gso`]) before any link sees them. The datagrams on the wire are the same:
//! consecutive datagrams of one socket to one destination with the same size (the last may be
//! shorter) and the same TOS byte (the caller flushes before changing it).

use std::io;
use std::net::{SocketAddrV4, UdpSocket};
use std::os::fd::AsRawFd;

/// Most datagrams per send (the kernel's `UDP_MAX_SEGMENTS` is 128 since 5.x, 64 before).
const MAX_SEGS: usize = 64;
/// Largest send (a UDP length).
const MAX_BYTES: usize = 65_507;

/// Datagrams waiting to be sent together on one socket, to one destination.
pub struct SendBatch {
    buf: Vec<u8>,
    /// Where they go (`None`: the socket's connected peer).
    dest: Option<SocketAddrV4>,
    /// Size of the first datagram (`UDP_SEGMENT`'s segment size).
    seg: usize,
    n: usize,
    /// Whether another datagram may join (every one so far was `seg` bytes).
    open: bool,
    /// Sends with `UDP_SEGMENT`; when false every datagram goes out at once on its own.
    pub enabled: bool,
    /// Sends of several datagrams, and the datagrams in them.
    pub batched_sends: u64,
    pub batched_datagrams: u64,
}

impl SendBatch {
    pub fn new(enabled: bool) -> SendBatch {
        SendBatch {
            buf: Vec::with_capacity(MAX_BYTES),
            dest: None,
            seg: 0,
            n: 0,
            open: false,
            enabled,
            batched_sends: 0,
            batched_datagrams: 0,
        }
    }

    /// Adds datagram `d` for `sock`'s connected peer (the caller flushes before switching
    /// sockets); sends what was waiting first if `d` cannot join it. Returns the datagrams the
    /// kernel refused.
    pub fn push(&mut self, sock: &UdpSocket, d: &[u8]) -> u64 {
        self.push_to(sock, None, d)
    }

    /// [`push`](Self::push) to `dest` (`None`: the connected peer); a datagram to another
    /// destination than those waiting sends them first.
    pub fn push_to(&mut self, sock: &UdpSocket, dest: Option<SocketAddrV4>, d: &[u8]) -> u64 {
        if !self.enabled {
            let sent = match dest {
                Some(a) => sock.send_to(d, a),
                None => sock.send(d),
            };
            return sent.is_err() as u64;
        }
        let mut refused = 0;
        let joins = self.n > 0
            && self.dest == dest
            && self.open
            && d.len() <= self.seg
            && self.n < MAX_SEGS
            && self.buf.len() + d.len() <= MAX_BYTES;
        if !joins {
            refused += self.flush(sock);
            self.seg = d.len();
            self.dest = dest;
        }
        self.buf.extend_from_slice(d);
        self.n += 1;
        self.open = d.len() == self.seg;
        refused
    }

    /// Sends whatever is waiting; returns the datagrams the kernel refused.
    pub fn flush(&mut self, sock: &UdpSocket) -> u64 {
        let n = std::mem::take(&mut self.n);
        if n == 0 {
            return 0;
        }
        let ok = if n == 1 {
            match self.dest {
                Some(a) => sock.send_to(&self.buf, a).is_ok(),
                None => sock.send(&self.buf).is_ok(),
            }
        } else {
            let ok = send_segmented(sock, self.dest, &self.buf, self.seg as u16).is_ok();
            if ok {
                self.batched_sends += 1;
                self.batched_datagrams += n as u64;
            }
            ok
        };
        self.buf.clear();
        if ok {
            0
        } else {
            n as u64
        }
    }
}

/// One `sendmsg` to `dest` (`None`: the connected peer), cut by the kernel into datagrams of
/// `seg` bytes.
fn send_segmented(sock: &UdpSocket, dest: Option<SocketAddrV4>, bytes: &[u8], seg: u16) -> io::Result<()> {
    // SAFETY: CMSG_SPACE of a constant size.
    let space = unsafe { libc::CMSG_SPACE(std::mem::size_of::<u16>() as u32) } as usize;
    let mut control = vec![0u8; space];
    let mut iov = libc::iovec { iov_base: bytes.as_ptr() as *mut _, iov_len: bytes.len() };
    // SAFETY: a zeroed msghdr is valid; the pointers set below outlive the call.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    // SAFETY: a zeroed sockaddr_in is valid.
    let mut name: libc::sockaddr_in = unsafe { std::mem::zeroed() };
    if let Some(a) = dest {
        name.sin_family = libc::AF_INET as libc::sa_family_t;
        name.sin_port = a.port().to_be();
        name.sin_addr.s_addr = u32::from(*a.ip()).to_be();
        msg.msg_name = (&mut name as *mut libc::sockaddr_in).cast();
        msg.msg_namelen = std::mem::size_of::<libc::sockaddr_in>() as u32;
    }
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = space as _;
    // SAFETY: `msg` has a control buffer of CMSG_SPACE(2) bytes, room for one cmsghdr and a u16.
    unsafe {
        let c = libc::CMSG_FIRSTHDR(&msg);
        (*c).cmsg_level = libc::SOL_UDP;
        (*c).cmsg_type = libc::UDP_SEGMENT;
        (*c).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<u16>() as u32) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(c).cast::<u16>(), seg);
    }
    // SAFETY: valid fd and msghdr.
    let n = unsafe { libc::sendmsg(sock.as_raw_fd(), &msg, 0) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three equal datagrams and a shorter one go out as one send and arrive as four
    /// datagrams, byte for byte; a longer one after a short one starts a new send.
    #[test]
    fn datagrams_arrive_as_they_were_pushed() {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        tx.connect(rx.local_addr().unwrap()).unwrap();
        rx.set_read_timeout(Some(std::time::Duration::from_secs(2))).unwrap();
        let sent: Vec<Vec<u8>> =
            [1200usize, 1200, 1200, 700, 1200].iter().enumerate().map(|(i, &n)| vec![i as u8 + 1; n]).collect();
        let mut b = SendBatch::new(true);
        for d in &sent {
            assert_eq!(b.push(&tx, d), 0);
        }
        assert_eq!(b.flush(&tx), 0);
        let mut buf = [0u8; 2048];
        for d in &sent {
            let n = rx.recv(&mut buf).unwrap();
            assert_eq!(&buf[..n], &d[..]);
        }
        assert_eq!((b.batched_sends, b.batched_datagrams), (1, 4));
    }

    /// From an unconnected socket: datagrams to one destination go out together, a datagram to
    /// another destination sends them first; each receiver gets exactly its own.
    #[test]
    fn datagrams_to_two_destinations_arrive_at_each() {
        let rx = [UdpSocket::bind("127.0.0.1:0").unwrap(), UdpSocket::bind("127.0.0.1:0").unwrap()];
        let to = rx.each_ref().map(|s| match s.local_addr().unwrap() {
            std::net::SocketAddr::V4(a) => a,
            _ => unreachable!(),
        });
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        for s in &rx {
            s.set_read_timeout(Some(std::time::Duration::from_secs(2))).unwrap();
        }
        let plan = [(0usize, 100usize, 1u8), (0, 100, 2), (0, 60, 3), (1, 100, 4), (1, 100, 5), (0, 100, 6)];
        let mut b = SendBatch::new(true);
        for &(k, n, v) in &plan {
            assert_eq!(b.push_to(&tx, Some(to[k]), &vec![v; n]), 0);
        }
        assert_eq!(b.flush(&tx), 0);
        let mut buf = [0u8; 256];
        for (k, s) in rx.iter().enumerate() {
            for &(_, n, v) in plan.iter().filter(|p| p.0 == k) {
                let got = s.recv(&mut buf).unwrap();
                assert_eq!(&buf[..got], &vec![v; n][..]);
            }
        }
        assert_eq!((b.batched_sends, b.batched_datagrams), (2, 5));
    }
}
