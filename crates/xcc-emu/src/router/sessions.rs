//! The router's side of seed 004's session protocols: each link's [`LinkTask`] (xcc-core's, the
//! simulator's own) run on the control packets crossing it.
//!
//! A control datagram's body is decoded once, when the router reads it, and held here by
//! handle while the packet moves through the links (as the simulator's session group holds
//! it); the tasks rewrite the held value, and the body is written back into the datagram when
//! it leaves the router. Placement is the simulator's (`xcc-sim/src/sim/sessions.rs`): the
//! task of a link runs when a packet is about to enter it downstream, and again, upstream,
//! when the bounced packet has crossed the link's reverse and is at the router that owns it.
//! The fabric calls [`SessionRouter::on_link`] at those points; this module keeps the tasks
//! and the bodies, one group per protocol, and the links' timers (ERICA, COBB).

use xcc_build::session::{Protocol, ProtocolVisitor};
use xcc_core::session::data_share::DataShare;
use xcc_core::session::{ControlPacket, Direction, Forward, Hop, LinkLoad, LinkTask, SessionProtocol};
use xcc_core::wire::session::{self as wire, SessionBody, SessionHeader, SessionWire};
use xcc_core::wire::WireError;
use xcc_core::{Dur, Time};

/// One protocol's link tasks and the bodies of its control packets in the router.
pub trait LinkTasks: Send {
    /// The framing's protocol number.
    fn proto(&self) -> u8;
    /// Decodes the body of a control datagram (`udp` is the UDP payload, framing `h`); returns
    /// its handle and its size as the simulator bills it.
    fn decode(&mut self, h: &SessionHeader, udp: &[u8]) -> Result<(u32, u32), WireError>;
    /// The task of link `hop.link` (of `capacity` bit/s; created on first use) processes
    /// control packet `handle`.
    fn on_link(&mut self, capacity: f64, now: Time, hop: Hop, handle: u32) -> Forward;
    /// Writes the (possibly rewritten) body of `handle` back over the one it was decoded from
    /// and frees the handle.
    fn encode(&mut self, handle: u32, udp: &mut [u8]);
    /// The packet left the network inside the router (a full buffer or its task dropped it).
    fn discard(&mut self, handle: u32);
    /// Period of the link tasks' timer (ERICA, COBB), `None` without one.
    fn tick_interval(&self) -> Option<Dur>;
    /// Runs the timer of every link that has a task; `load(link)` measures it.
    fn on_tick(&mut self, now: Time, load: &mut dyn FnMut(u32) -> LinkLoad);
    /// Bodies held (control packets inside the router).
    fn in_flight(&self) -> u64;
    /// The link tasks' own invariants.
    fn check(&self) -> Result<(), String>;
}

/// The link tasks of `protocol` on a network of `links` directed links.
pub fn link_tasks(protocol: &Protocol, links: usize) -> Box<dyn LinkTasks> {
    struct NewTasks(usize);
    impl ProtocolVisitor for NewTasks {
        type Output = Box<dyn LinkTasks>;
        fn visit<P: SessionProtocol + DataShare + SessionWire + 'static>(self, params: P::Params) -> Self::Output {
            Box::new(Tasks::<P>::new(params, self.0))
        }
    }
    protocol.visit(NewTasks(links))
}

/// One protocol's link tasks, created on first use, and its bodies by handle.
pub struct Tasks<P: SessionProtocol> {
    params: P::Params,
    links: Vec<Option<P::Link>>,
    bodies: Vec<Option<P::Packet>>,
    free: Vec<u32>,
    tick: Option<Dur>,
}

impl<P: SessionProtocol> Tasks<P> {
    pub fn new(params: P::Params, links: usize) -> Tasks<P> {
        let tick = P::new_link(&params, 1.0).tick_interval();
        Tasks { params, links: (0..links).map(|_| None).collect(), bodies: Vec::new(), free: Vec::new(), tick }
    }

    /// The task of link `l`, if a control packet has crossed it.
    pub fn link(&self, l: u32) -> Option<&P::Link> {
        self.links.get(l as usize).and_then(|t| t.as_ref())
    }
}

impl<P> LinkTasks for Tasks<P>
where
    P: SessionWire,
    P::Params: Send,
    P::Link: Send,
    P::Packet: Send,
{
    fn proto(&self) -> u8 {
        P::PROTO
    }

    fn decode(&mut self, h: &SessionHeader, udp: &[u8]) -> Result<(u32, u32), WireError> {
        let body = wire::parse_control::<P>(h, udp)?;
        let bytes = body.wire_bytes();
        let handle = match self.free.pop() {
            Some(k) => {
                self.bodies[k as usize] = Some(body);
                k
            }
            None => {
                self.bodies.push(Some(body));
                (self.bodies.len() - 1) as u32
            }
        };
        Ok((handle, bytes))
    }

    fn on_link(&mut self, capacity: f64, now: Time, hop: Hop, handle: u32) -> Forward {
        let params = &self.params;
        let task = self.links[hop.link as usize].get_or_insert_with(|| P::new_link(params, capacity));
        let body = self.bodies[handle as usize].as_mut().expect("live control packet");
        task.on_packet(now, hop, body)
    }

    fn encode(&mut self, handle: u32, udp: &mut [u8]) {
        let body = self.bodies[handle as usize].take().expect("live control packet");
        self.free.push(handle);
        let at = wire::HEADER_LEN;
        body.emit_body(&mut udp[at..at + P::Packet::LEN]);
    }

    fn discard(&mut self, handle: u32) {
        self.bodies[handle as usize].take().expect("live control packet");
        self.free.push(handle);
    }

    fn tick_interval(&self) -> Option<Dur> {
        self.tick
    }

    fn on_tick(&mut self, now: Time, load: &mut dyn FnMut(u32) -> LinkLoad) {
        for (l, task) in self.links.iter_mut().enumerate() {
            if let Some(task) = task {
                task.on_tick(now, &load(l as u32));
            }
        }
    }

    fn in_flight(&self) -> u64 {
        (self.bodies.len() - self.free.len()) as u64
    }

    fn check(&self) -> Result<(), String> {
        for (l, task) in self.links.iter().enumerate() {
            if let Some(t) = task {
                t.check().map_err(|e| format!("link {l}: {e}"))?;
            }
        }
        Ok(())
    }
}

/// A control packet inside the router: its protocol's group, its body's handle, and where it
/// is on its session's path.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Ctrl {
    pub group: u8,
    pub handle: u32,
    pub session: u32,
    pub dir: Direction,
    /// The session's forward route (source host to destination host), whose links own the
    /// tasks, in either direction.
    pub fwd: u32,
}

/// Counters of the session protocols' packets in the router.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct SessionStats {
    /// Control packets read, and those a link task took out of the network.
    pub control_read: u64,
    pub control_absorbed: u64,
    /// Data datagrams read.
    pub data_read: u64,
    /// Session datagrams whose framing or body did not parse, or of a protocol the scenario
    /// does not run: forwarded untouched as plain IP, never given to a task.
    pub malformed: u64,
}

/// Every protocol's link tasks, the control packets in flight and the links' timers.
pub struct SessionRouter {
    pub groups: Vec<Box<dyn LinkTasks>>,
    ctrl: Vec<Option<Ctrl>>,
    free: Vec<u32>,
    /// The next tick of each group with link timers, and the links' `bytes_in` at its last tick.
    ticks: Vec<Option<(Time, Time, Vec<u64>)>>,
    pub stats: SessionStats,
}

impl SessionRouter {
    pub fn new(groups: Vec<Box<dyn LinkTasks>>, links: usize) -> SessionRouter {
        let ticks =
            groups.iter().map(|g| g.tick_interval().map(|d| (Time::ZERO + d, Time::ZERO, vec![0; links]))).collect();
        SessionRouter { groups, ctrl: Vec::new(), free: Vec::new(), ticks, stats: SessionStats::default() }
    }

    /// The group of protocol number `proto`.
    pub fn group_of(&self, proto: u8) -> Option<u8> {
        self.groups.iter().position(|g| g.proto() == proto).map(|g| g as u8)
    }

    /// Registers a decoded control packet; returns its tag for [`crate::router::link::InFlight::ctrl`]
    /// (never 0, which means "not a control packet").
    pub fn admit(&mut self, c: Ctrl) -> u32 {
        self.stats.control_read += 1;
        match self.free.pop() {
            Some(k) => {
                self.ctrl[k as usize] = Some(c);
                k + 1
            }
            None => {
                self.ctrl.push(Some(c));
                self.ctrl.len() as u32
            }
        }
    }

    /// The control packet of tag `tag`.
    pub fn get(&self, tag: u32) -> Ctrl {
        self.ctrl[tag as usize - 1].expect("live control tag")
    }

    /// Runs the task of link `link` (position `index` of `path_len` on the session's forward
    /// path, `capacity` bit/s) on the packet of `tag`; a dropped packet's body is freed.
    pub fn on_link(&mut self, tag: u32, link: u32, index: u32, path_len: u32, capacity: f64, now: Time) -> Forward {
        let c = self.get(tag);
        let hop = Hop { session: c.session, link, index: index as u16, path_len: path_len as u16, dir: c.dir };
        let fwd = self.groups[c.group as usize].on_link(capacity, now, hop, c.handle);
        if fwd == Forward::Drop {
            self.stats.control_absorbed += 1;
            self.release(tag, None);
        }
        fwd
    }

    /// The packet of `tag` leaves the router: its body is written back into `udp` (its UDP
    /// payload) if given, else dropped.
    pub fn release(&mut self, tag: u32, udp: Option<&mut [u8]>) {
        let c = self.ctrl[tag as usize - 1].take().expect("live control tag");
        self.free.push(tag - 1);
        let g = &mut self.groups[c.group as usize];
        match udp {
            Some(buf) => g.encode(c.handle, buf),
            None => g.discard(c.handle),
        }
    }

    /// The earliest link timer.
    pub fn next_tick(&self) -> Time {
        self.ticks.iter().flatten().map(|t| t.0).min().unwrap_or(Time::NEVER)
    }

    /// Runs every group's link timers due at or before `now`, each at its own instant, with
    /// each link's input since the group's last tick (`bytes_in(link, t)`, every packet offered)
    /// and its backlog (`queue_bytes(link, t)`) measured as the simulator does.
    pub fn run_ticks(&mut self, now: Time, measure: &mut dyn FnMut(u32, Time) -> (u64, u64)) {
        for (g, tick) in self.ticks.iter_mut().enumerate() {
            let Some((at, since, last)) = tick else { continue };
            while *at <= now {
                let t = *at;
                let interval = t - *since;
                let secs = interval.as_secs_f64().max(1e-12);
                let mut load = |l: u32| {
                    let (bytes_in, queue_bytes) = measure(l, t);
                    LinkLoad {
                        input_rate: bytes_in.saturating_sub(last[l as usize]) as f64 * 8.0 / secs,
                        queue_bits: queue_bytes as f64 * 8.0,
                        interval,
                    }
                };
                self.groups[g].on_tick(t, &mut load);
                for (l, b) in last.iter_mut().enumerate() {
                    *b = measure(l as u32, t).0;
                }
                *since = t;
                *at = t + self.groups[g].tick_interval().expect("a group with a timer");
            }
        }
    }

    /// Control packets inside the router; every tag has a body in its group and no other body
    /// is held; every task is consistent.
    pub fn check(&self) -> Result<u64, String> {
        let tags = self.ctrl.iter().flatten().count() as u64;
        let held: u64 = self.groups.iter().map(|g| g.in_flight()).sum();
        if tags != held {
            return Err(format!("session control packets: {tags} in the router but {held} bodies held"));
        }
        for g in &self.groups {
            g.check()?;
        }
        Ok(tags)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// Link tasks that only record their timer calls: (tick time, link, load).
    struct Recorder(Arc<Mutex<Vec<(Time, u32, LinkLoad)>>>);

    impl LinkTasks for Recorder {
        fn proto(&self) -> u8 {
            9
        }
        fn decode(&mut self, _: &SessionHeader, _: &[u8]) -> Result<(u32, u32), WireError> {
            Err(WireError::Malformed)
        }
        fn on_link(&mut self, _: f64, _: Time, _: Hop, _: u32) -> Forward {
            Forward::Pass
        }
        fn encode(&mut self, _: u32, _: &mut [u8]) {}
        fn discard(&mut self, _: u32) {}
        fn tick_interval(&self) -> Option<Dur> {
            Some(Dur::from_ms(5))
        }
        fn on_tick(&mut self, now: Time, load: &mut dyn FnMut(u32) -> LinkLoad) {
            for l in 0..2 {
                self.0.lock().unwrap().push((now, l, load(l)));
            }
        }
        fn in_flight(&self) -> u64 {
            0
        }
        fn check(&self) -> Result<(), String> {
            Ok(())
        }
    }

    /// The timers of a group with a 5 ms period, run at 12 ms: ticks at 5 and 10 ms, each at
    /// its own instant, each link's input rate from the bytes offered since the previous tick
    /// (link 0 takes 1000 B per ms = 8 Mbit/s, link 1 nothing) and its backlog at the tick;
    /// the next tick is at 15 ms.
    #[test]
    fn link_timers_get_the_load_measured_since_their_last_tick() {
        let calls = Arc::new(Mutex::new(Vec::new()));
        let mut sr = SessionRouter::new(vec![Box::new(Recorder(calls.clone()))], 2);
        assert_eq!(sr.next_tick(), Time::from_ns(5_000_000));
        let mut measure = |l: u32, t: Time| if l == 0 { (t.as_ns() / 1000, 3000) } else { (0, 0) };
        sr.run_ticks(Time::from_ns(12_000_000), &mut measure);
        let calls = calls.lock().unwrap();
        let five = Dur::from_ms(5);
        let at = |ms: u64| Time::from_ns(ms * 1_000_000);
        let busy = LinkLoad { input_rate: 8e6, queue_bits: 24_000.0, interval: five };
        let idle = LinkLoad { input_rate: 0.0, queue_bits: 0.0, interval: five };
        assert_eq!(*calls, vec![(at(5), 0, busy), (at(5), 1, idle), (at(10), 0, busy), (at(10), 1, idle)]);
        assert_eq!(sr.next_tick(), at(15));
    }
}
