//! The hosts' side of seed 004's session protocols on real UDP sockets: each session's source
//! (xcc-core's `SourceTask`, the simulator's own) and its destination, driven by the monotonic
//! clock in one thread, as `xcc-sim/src/sim/sessions.rs` drives them in virtual time:
//!
//! - the source joins at the flow's start, sends the control datagrams its task asks for
//!   (`poll_transmit`, again at `next_wakeup` and after every control packet that comes back),
//!   and paces data datagrams of the session's packet size at its assigned rate (capped by its
//!   demand) times the protocol's data share; it leaves when its size is sent or at its stop;
//! - the destination bounces control datagrams upstream (`ControlPacket::at_destination`) from
//!   the session port and counts the data delivered.
//!
//! Datagrams are `xcc_core::wire::session`'s; the router runs the link tasks on the control
//! packets ([`crate::router::sessions`]).

use std::collections::HashMap;
use std::io;
use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};
use std::os::fd::AsRawFd;
use std::path::PathBuf;

use xcc_build::session::{Protocol, ProtocolVisitor};
use xcc_core::session::data_share::DataShare;
use xcc_core::session::{ControlPacket, Direction, SessionProtocol, SourceTask};
use xcc_core::wire::session::{self as wire, SessionHeader, SessionKind, SessionWire, SESSION_UDP_PORT};
use xcc_core::wire::WireError;
use xcc_core::{Dur, Time};

use crate::hosts::udp_transport::{set_buffers, use_device_mtu, IP_UDP_LEN, PACING_CATCH_UP, SOCKET_BUFFER};
use crate::os::sys;

/// Smallest session packet on the wire: IPv4 and UDP headers and the session framing.
pub const MIN_PACKET_BYTES: u32 = IP_UDP_LEN + wire::HEADER_LEN as u32;

/// One protocol's sources (by the session's number within the protocol) and what its
/// destinations do, on bytes.
pub trait SourceGroup: Send {
    fn proto(&self) -> u8;
    /// API.Join of session `s` (at most `demand` bit/s, `INFINITY` for greedy).
    fn join(&mut self, s: u32, now: Time, demand: f64);
    /// API.Leave of session `s`.
    fn leave(&mut self, s: u32, now: Time);
    /// The next control packet session `s` sends now, encoded into `buf` (a UDP payload).
    fn poll_transmit(&mut self, s: u32, now: Time, buf: &mut [u8]) -> Option<usize>;
    fn next_wakeup(&self, s: u32) -> Option<Time>;
    /// API.Rate of session `s`, bit/s.
    fn rate(&self, s: u32) -> Option<f64>;
    /// A control datagram came back to session `s`'s source.
    fn on_packet(&mut self, s: u32, now: Time, h: &SessionHeader, udp: &[u8]) -> Result<(), WireError>;
    /// At the destination: the bounced datagram written into `out` (`None`: the packet ends here).
    fn bounce(&self, h: &SessionHeader, udp: &[u8], out: &mut [u8]) -> Result<Option<usize>, WireError>;
    /// Share of the assigned rate a source sends as data.
    fn data_share(&self) -> f64;
}

/// The sources of `protocol`'s `sessions` sessions.
pub fn source_group(protocol: &Protocol, sessions: usize) -> Box<dyn SourceGroup> {
    struct NewSources(usize);
    impl ProtocolVisitor for NewSources {
        type Output = Box<dyn SourceGroup>;
        fn visit<P: SessionProtocol + DataShare + SessionWire + 'static>(self, params: P::Params) -> Self::Output {
            Box::new(Sources::<P>::new(params, self.0))
        }
    }
    protocol.visit(NewSources(sessions))
}

/// One protocol's sources; `None` before a session joins and once its last control packet is
/// out (as the simulator's group forgets them).
pub struct Sources<P: SessionProtocol> {
    params: P::Params,
    sources: Vec<Option<P::Source>>,
}

impl<P: SessionProtocol> Sources<P> {
    pub fn new(params: P::Params, sessions: usize) -> Sources<P> {
        Sources { params, sources: (0..sessions).map(|_| None).collect() }
    }
}

impl<P> SourceGroup for Sources<P>
where
    P: SessionWire + DataShare,
    P::Params: Send,
    P::Source: Send,
{
    fn proto(&self) -> u8 {
        P::PROTO
    }

    fn join(&mut self, s: u32, now: Time, demand: f64) {
        let mut src = P::new_source(&self.params, s);
        src.join(now, demand);
        self.sources[s as usize] = Some(src);
    }

    fn leave(&mut self, s: u32, now: Time) {
        if let Some(src) = self.sources[s as usize].as_mut() {
            src.leave(now);
        }
    }

    fn poll_transmit(&mut self, s: u32, now: Time, buf: &mut [u8]) -> Option<usize> {
        let src = self.sources[s as usize].as_mut()?;
        let p = src.poll_transmit(now)?;
        if src.is_finished() {
            self.sources[s as usize] = None;
        }
        wire::emit_control::<P>(s, Direction::Downstream, &p, buf).ok()
    }

    fn next_wakeup(&self, s: u32) -> Option<Time> {
        self.sources[s as usize].as_ref().and_then(|src| src.next_wakeup())
    }

    fn rate(&self, s: u32) -> Option<f64> {
        self.sources[s as usize].as_ref().and_then(|src| src.rate())
    }

    fn on_packet(&mut self, s: u32, now: Time, h: &SessionHeader, udp: &[u8]) -> Result<(), WireError> {
        let p = wire::parse_control::<P>(h, udp)?;
        if let Some(src) = self.sources[s as usize].as_mut() {
            src.on_packet(now, p);
        }
        Ok(())
    }

    fn bounce(&self, h: &SessionHeader, udp: &[u8], out: &mut [u8]) -> Result<Option<usize>, WireError> {
        let p = wire::parse_control::<P>(h, udp)?;
        match p.at_destination() {
            Some(back) => wire::emit_control::<P>(h.session, Direction::Upstream, &back, out).map(Some),
            None => Ok(None),
        }
    }

    fn data_share(&self) -> f64 {
        P::data_share(&self.params)
    }
}

/// One session to run.
#[derive(Clone, Debug)]
pub struct SessionSetup {
    /// Index of the flow in the scenario.
    pub flow: usize,
    /// Its protocol's group (index into the groups given to [`run`]) and number within it.
    pub group: usize,
    pub local: u32,
    pub src_netns: PathBuf,
    pub dst_netns: PathBuf,
    pub src_addr: [u8; 4],
    pub dst_addr: [u8; 4],
    /// bit/s; `INFINITY` for greedy.
    pub demand: f64,
    /// Data packets' size on the wire (IPv4 and UDP headers included).
    pub packet_bytes: u32,
    pub size_bytes: Option<u64>,
    pub start: Time,
    pub stop: Option<Time>,
}

/// What one session did.
#[derive(Clone, Debug, Default)]
pub struct SessionResult {
    pub flow: usize,
    /// Data bytes sent and delivered (packets' sizes on the wire, as the simulator counts).
    pub bytes_sent: u64,
    pub bytes_delivered: u64,
    /// When the last byte of a sized session was delivered.
    pub completed_at: Option<Time>,
    pub control_sent: u64,
    pub control_back: u64,
    /// Sending time lost when the driver woke more than the catch-up bound late (its data
    /// went unsent: `rate x lost` bytes), nanoseconds.
    pub pacing_lost_ns: u64,
    /// (time, cumulative delivered bytes), one per sampling interval.
    pub samples: Vec<(Time, u64)>,
}

/// What the hosts' session driver did.
#[derive(Clone, Debug, Default)]
pub struct SessionRun {
    pub sessions: Vec<SessionResult>,
    /// Datagrams the hosts' sockets refused to send (the run is failed on any).
    pub send_failures: u64,
    /// Datagrams received that did not parse or named no session.
    pub unreadable: u64,
    /// How late the loop woke at worst after a deadline.
    pub wake_late_max_ns: u64,
    pub realtime: bool,
}

struct Session {
    setup: SessionSetup,
    tx: UdpSocket,
    joined: bool,
    /// Data still to send (false once it left).
    sending: bool,
    data_bps: u64,
    next_send: Time,
    last_send: Option<Time>,
    /// Sub-nanosecond remainder of the spacing (exact long-run rate, as the simulator).
    frac: u64,
    result: SessionResult,
}

/// A rate in bit/s as the integer pacing uses (the simulator's `pacing_bps`).
fn pacing_bps(rate: f64) -> u64 {
    if rate > 0.0 {
        rate.round().min(1e18) as u64
    } else {
        0
    }
}

/// Runs every session from `zero_ns` (monotonic clock) until `until` (run time) or the router's
/// stop signal; `groups`: one per protocol, in the setups' numbering.
pub fn run(
    setups: Vec<SessionSetup>,
    mut groups: Vec<Box<dyn SourceGroup>>,
    zero_ns: u64,
    until: Time,
    sample_every: Dur,
) -> io::Result<SessionRun> {
    let mut rx_socks: Vec<UdpSocket> = Vec::new();
    let mut rx_of: HashMap<[u8; 4], usize> = HashMap::new();
    let mut sessions = Vec::new();
    for s in setups {
        if let std::collections::hash_map::Entry::Vacant(e) = rx_of.entry(s.dst_addr) {
            let a = SocketAddrV4::new(Ipv4Addr::from(s.dst_addr), SESSION_UDP_PORT);
            let sock = sys::in_netns(&s.dst_netns, || UdpSocket::bind(a))?;
            sock.set_nonblocking(true)?;
            set_buffers(&sock, SOCKET_BUFFER)?;
            use_device_mtu(&sock)?;
            e.insert(rx_socks.len());
            rx_socks.push(sock);
        }
        let tx = sys::in_netns(&s.src_netns, || UdpSocket::bind(SocketAddrV4::new(Ipv4Addr::from(s.src_addr), 0)))?;
        tx.connect(SocketAddrV4::new(Ipv4Addr::from(s.dst_addr), SESSION_UDP_PORT))?;
        tx.set_nonblocking(true)?;
        set_buffers(&tx, SOCKET_BUFFER)?;
        use_device_mtu(&tx)?;
        let result = SessionResult { flow: s.flow, ..SessionResult::default() };
        sessions.push(Session {
            setup: s,
            tx,
            joined: false,
            sending: false,
            data_bps: 0,
            next_send: Time::NEVER,
            last_send: None,
            frac: 0,
            result,
        });
    }
    // A datagram names its session by protocol and number.
    let by_id: HashMap<(u8, u32), usize> =
        sessions.iter().enumerate().map(|(i, s)| ((groups[s.setup.group].proto(), s.setup.local), i)).collect();
    sys::minimal_timer_slack();
    let realtime = sys::realtime_priority(40);
    let now = || Time(sys::monotonic_ns().saturating_sub(zero_ns));
    let mut out = SessionRun { realtime, ..SessionRun::default() };
    let mut pfds: Vec<libc::pollfd> = rx_socks
        .iter()
        .map(|s| s.as_raw_fd())
        .chain(sessions.iter().map(|s| s.tx.as_raw_fd()))
        .map(|fd| libc::pollfd { fd, events: libc::POLLIN, revents: 0 })
        .collect();
    let mut buf = [0u8; 2048];
    let mut data = vec![0u8; crate::hosts::udp_transport::MTU as usize];
    let mut next_sample = Time::ZERO;
    loop {
        let t = now();
        if t >= until || crate::os::signals::STOP.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
        let mut wake = until;
        for s in sessions.iter_mut() {
            let g = &mut groups[s.setup.group];
            if !s.joined {
                if t < s.setup.start {
                    wake = wake.min(s.setup.start);
                    continue;
                }
                // API.Join: the first control cycle; data waits for a rate.
                s.joined = true;
                s.sending = true;
                g.join(s.setup.local, t, s.setup.demand);
            }
            if s.sending && s.setup.stop.is_some_and(|st| t >= st) {
                leave(s, g.as_mut(), t);
            }
            // Data due (late wake-ups made up within the catch-up bound, as the transport does).
            while s.sending && s.data_bps > 0 && s.next_send <= t {
                let floor = Time(t.as_ns().saturating_sub(PACING_CATCH_UP.as_ns()));
                // Sending time beyond the catch-up bound is lost as rate (counted, per session).
                s.result.pacing_lost_ns += floor.as_ns().saturating_sub(s.next_send.as_ns());
                let at = s.next_send.max(floor);
                let left = s.setup.size_bytes.map_or(u64::MAX, |n| n - s.result.bytes_sent);
                let n = (s.setup.packet_bytes as u64).min(left) as u32;
                let len = (n.max(MIN_PACKET_BYTES) - IP_UDP_LEN) as usize;
                SessionHeader { kind: SessionKind::Data, proto: g.proto(), session: s.setup.local, body_len: 0 }
                    .emit(&mut data)
                    .expect("room for the framing");
                if s.tx.send(&data[..len]).is_err() {
                    out.send_failures += 1;
                }
                s.result.bytes_sent += n as u64;
                s.last_send = Some(at);
                let num = n as u64 * 8_000_000_000 + s.frac;
                s.frac = num % s.data_bps;
                s.next_send = at + Dur((num / s.data_bps).max(1));
                if s.setup.size_bytes.is_some_and(|size| s.result.bytes_sent >= size) {
                    leave(s, g.as_mut(), t);
                }
            }
            after_source(s, g.as_mut(), t, &mut buf, &mut out.send_failures);
            if s.sending && s.data_bps > 0 {
                wake = wake.min(s.next_send);
            }
            // Its control packets due now were just sent: a wake-up at or before now has
            // nothing left to do (the simulator schedules only later ones).
            if let Some(w) = g.next_wakeup(s.setup.local).filter(|&w| w > t) {
                wake = wake.min(w);
            }
            if let Some(st) = s.setup.stop.filter(|_| s.sending) {
                wake = wake.min(st);
            }
        }
        if t >= next_sample {
            for s in sessions.iter_mut() {
                s.result.samples.push((t, s.result.bytes_delivered));
            }
            next_sample = Time(t.as_ns() + sample_every.as_ns());
        }
        wake = wake.min(next_sample);
        let t = now();
        let timeout_ns = wake.as_ns().saturating_sub(t.as_ns());
        let ts =
            libc::timespec { tv_sec: (timeout_ns / 1_000_000_000) as _, tv_nsec: (timeout_ns % 1_000_000_000) as _ };
        // SAFETY: valid pollfd array and timespec.
        let n = unsafe { libc::ppoll(pfds.as_mut_ptr(), pfds.len() as _, &ts, std::ptr::null()) };
        if n <= 0 {
            out.wake_late_max_ns = out.wake_late_max_ns.max(now().as_ns().saturating_sub(wake.as_ns()));
            continue;
        }
        for k in 0..pfds.len() {
            if pfds[k].revents & libc::POLLIN == 0 {
                continue;
            }
            let dest = k < rx_socks.len();
            loop {
                let sock = if dest { &rx_socks[k] } else { &sessions[k - rx_socks.len()].tx };
                let (len, from) = match sock.recv_from(&mut buf) {
                    Ok(r) => r,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) => return Err(e),
                };
                let t = now();
                let udp = &buf[..len];
                let Ok(h) = SessionHeader::parse(udp) else {
                    out.unreadable += 1;
                    continue;
                };
                let Some(&i) = by_id.get(&(h.proto, h.session)) else {
                    out.unreadable += 1;
                    continue;
                };
                let s = &mut sessions[i];
                let g = &mut groups[s.setup.group];
                match (dest, h.kind) {
                    (true, SessionKind::Data) => {
                        // The packet's size on the wire, within what the session carries.
                        let wire = (len as u64 + IP_UDP_LEN as u64).min(s.setup.packet_bytes as u64);
                        let cap = s.setup.size_bytes.unwrap_or(u64::MAX);
                        s.result.bytes_delivered = (s.result.bytes_delivered + wire).min(cap);
                        if s.result.completed_at.is_none() && s.result.bytes_delivered >= cap {
                            s.result.completed_at = Some(t);
                        }
                    }
                    (true, SessionKind::Control(Direction::Downstream)) => {
                        let mut back = [0u8; 256];
                        match g.bounce(&h, udp, &mut back) {
                            Ok(Some(n)) => {
                                if rx_socks[k].send_to(&back[..n], from).is_err() {
                                    out.send_failures += 1;
                                }
                            }
                            Ok(None) => {}
                            Err(_) => out.unreadable += 1,
                        }
                    }
                    (false, SessionKind::Control(Direction::Upstream)) => {
                        if g.on_packet(s.setup.local, t, &h, udp).is_err() {
                            out.unreadable += 1;
                            continue;
                        }
                        s.result.control_back += 1;
                        after_source(s, g.as_mut(), t, &mut [0u8; 256], &mut out.send_failures);
                    }
                    _ => out.unreadable += 1,
                }
            }
        }
    }
    // A last sample at the end, so that the delivered bytes at `until` are measured, not the
    // sample up to 10 ms before.
    let t = now();
    for s in sessions.iter_mut() {
        s.result.samples.push((t, s.result.bytes_delivered));
    }
    out.sessions = sessions.into_iter().map(|s| s.result).collect();
    Ok(out)
}

/// API.Leave: no more data; the source sends its last control packets.
fn leave(s: &mut Session, g: &mut dyn SourceGroup, t: Time) {
    if !s.sending {
        return;
    }
    s.sending = false;
    s.next_send = Time::NEVER;
    g.leave(s.setup.local, t);
}

/// After any input to a source: send its control packets, follow its rate (the simulator's
/// `after_source`: never above the session's own demand, times the data share).
fn after_source(s: &mut Session, g: &mut dyn SourceGroup, t: Time, buf: &mut [u8], failures: &mut u64) {
    while let Some(n) = g.poll_transmit(s.setup.local, t, buf) {
        s.result.control_sent += 1;
        if s.tx.send(&buf[..n]).is_err() {
            *failures += 1;
        }
    }
    let want = match g.rate(s.setup.local) {
        Some(r) if s.sending => pacing_bps(r.min(s.setup.demand) * g.data_share()),
        _ => 0,
    };
    if want == s.data_bps {
        return;
    }
    // The next packet is due one spacing at the new rate after the last one (at once if that
    // time has passed), as the simulator's `set_data_rate`.
    s.data_bps = want;
    s.frac = 0;
    if want == 0 {
        s.next_send = Time::NEVER;
        return;
    }
    let bytes = s.setup.packet_bytes as u64;
    s.next_send = match s.last_send {
        Some(last) => (last + Dur((bytes * 8_000_000_000 / want).max(1))).max(t),
        None => t,
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use xcc_core::algorithms::bfyz::Bfyz;
    use xcc_core::algorithms::slbn::{Slbn, SlbnKind, SlbnPacket, SlbnParams};

    /// One SLBN session's host side on bytes, with no network between (every link task
    /// absent, so the fields come back as the source sent them):
    ///
    /// ```text
    /// source --Join(demand 5e6)--> destination: bounced as a ProbeAck, same fields, upstream
    /// source <--ProbeAck--------- : the source's rate is bw = 5e6; data at 99 % of it
    /// source --Leave-->            destination: dropped there (nothing bounced)
    /// ```
    #[test]
    fn slbn_source_and_destination_on_bytes() {
        let mut g = source_group(&Protocol::Slbn(SlbnParams::default()), 2);
        let t0 = Time::ZERO;
        g.join(1, t0, 5e6);
        let mut buf = [0u8; 256];
        let n = g.poll_transmit(1, t0, &mut buf).expect("Join");
        assert_eq!(g.poll_transmit(1, t0, &mut buf[n..]), None, "one packet per cycle");
        let h = SessionHeader::parse(&buf[..n]).unwrap();
        assert_eq!((h.kind, h.proto, h.session), (SessionKind::Control(Direction::Downstream), Slbn::PROTO, 1));
        let sent = wire::parse_control::<Slbn>(&h, &buf[..n]).unwrap();
        assert_eq!(sent, SlbnPacket::join(5e6));
        let mut back = [0u8; 256];
        let m = g.bounce(&h, &buf[..n], &mut back).unwrap().expect("a Join is bounced");
        let hb = SessionHeader::parse(&back[..m]).unwrap();
        assert_eq!((hb.kind, hb.session), (SessionKind::Control(Direction::Upstream), 1));
        assert_eq!(
            wire::parse_control::<Slbn>(&hb, &back[..m]).unwrap(),
            SlbnPacket { kind: SlbnKind::ProbeAck, ..sent }
        );
        assert_eq!(g.rate(1), None, "no rate before the ProbeAck");
        g.on_packet(1, Time(1_000_000), &hb, &back[..m]).unwrap();
        assert_eq!(g.rate(1), Some(5e6));
        assert_eq!(g.data_share(), 0.99);
        g.leave(1, Time(2_000_000));
        let n = g.poll_transmit(1, Time(2_000_000), &mut buf).expect("Leave at once");
        let h = SessionHeader::parse(&buf[..n]).unwrap();
        assert_eq!(wire::parse_control::<Slbn>(&h, &buf[..n]).unwrap().kind, SlbnKind::Leave);
        assert_eq!(g.bounce(&h, &buf[..n], &mut back), Ok(None), "a Leave ends at the destination");
        assert_eq!(g.rate(1), None, "the source is gone once its Leave is out");
        // Bytes of another protocol are refused, not given to the source.
        let rm = xcc_core::session::rm_cell::RmCell { kind: xcc_core::session::rm_cell::RmKind::Rm, ccr: 0.0, er: 1.0 };
        let k = wire::emit_control::<Bfyz>(0, Direction::Upstream, &rm, &mut buf).unwrap();
        let h = SessionHeader::parse(&buf[..k]).unwrap();
        assert_eq!(g.on_packet(0, t0, &h, &buf[..k]), Err(WireError::Malformed));
    }

    /// The simulator's integer pacing rate: rounded, nothing for no rate.
    #[test]
    fn pacing_rate_is_the_simulators() {
        assert_eq!(pacing_bps(4_950_000.4), 4_950_000);
        assert_eq!(pacing_bps(0.0), 0);
        assert_eq!(pacing_bps(-1.0), 0);
        assert_eq!(pacing_bps(f64::INFINITY), 1_000_000_000_000_000_000);
    }
}
