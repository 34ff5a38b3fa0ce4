//! Seed 004's session protocols on the packet engine: one group per protocol of a scenario,
//! holding the xcc-core state machines (a `SourceTask` per session, a `LinkTask` per link a
//! session crosses, created on first use) and the bodies of the control packets in flight.
//!
//! The simulation moves control packets as ordinary packets through the links' FIFOs; the body
//! a packet carries (SLBN's fields, an RM cell, ...) stays here, named by a handle the packet
//! holds. The group is a trait object: only control packets (about 1 % of the bytes) and
//! source events reach it, never a data packet, so the dynamic call costs nothing that matters
//! and the simulation stays free of type parameters.

use xcc_build::session::{Protocol, ProtocolVisitor};
use xcc_core::session::data_share::DataShare;
use xcc_core::session::{ControlPacket, Forward, Hop, LinkLoad, LinkTask, SessionProtocol, SourceTask};
use xcc_core::wire::session::SessionWire;
use xcc_core::{Dur, Time};

/// What the simulation asks of a protocol's sessions and links. Sessions are numbered densely
/// within the group (`s`); control packets are named by handles.
pub trait SessionGroup: Send {
    /// API.Join of session `s` (at most `demand` bit/s, `INFINITY` for greedy).
    fn join(&mut self, s: u32, now: Time, demand: f64);
    /// API.Leave of session `s`.
    fn leave(&mut self, s: u32, now: Time);
    /// The next control packet session `s` sends now: its handle and size on the wire.
    fn poll_transmit(&mut self, s: u32, now: Time) -> Option<(u32, u32)>;
    /// When session `s`'s source next wants `poll_transmit` called.
    fn next_wakeup(&self, s: u32) -> Option<Time>;
    /// API.Rate: the rate assigned to session `s` now, bit/s.
    fn rate(&self, s: u32) -> Option<f64>;
    /// The link task of `hop.link` (a link of `capacity` bit/s) processes control packet `h`.
    fn on_link(&mut self, capacity: f64, now: Time, hop: Hop, h: u32) -> Forward;
    /// Control packet `h` reached its destination: `Some(size)` if it goes back upstream (same
    /// handle), `None` if it ends there (the handle is freed).
    fn at_destination(&mut self, h: u32) -> Option<u32>;
    /// Control packet `h` came back to session `s`'s source (the handle is freed).
    fn at_source(&mut self, s: u32, now: Time, h: u32);
    /// Control packet `h` left the network elsewhere (a link task dropped it).
    fn discard(&mut self, h: u32);
    /// Period of the link tasks' timer (ERICA, COBB), `None` without one.
    fn tick_interval(&self) -> Option<Dur>;
    /// Runs the timer of every link that has a task; `load(link)` measures it.
    fn on_tick(&mut self, now: Time, load: &mut dyn FnMut(u32) -> LinkLoad);
    /// Share of the assigned rate that a source sends as data (the rest is the control budget).
    fn data_share(&self) -> f64;
    /// Control packets whose bodies are held (in flight).
    fn in_flight(&self) -> u64;
    /// The link tasks' own invariants.
    fn check(&self) -> Result<(), String>;
    /// Takes control packet `h`'s body out of the group (it crosses to another domain of the
    /// parallel engine; the handle is freed).
    fn export(&mut self, h: u32) -> Box<dyn std::any::Any + Send>;
    /// Takes in a body [`SessionGroup::export`]ed by the same protocol's group of another
    /// domain; returns its handle here.
    fn import(&mut self, body: Box<dyn std::any::Any + Send>) -> u32;
}

/// The group of a scenario's `protocol` for `sessions` sessions on `links` links.
pub fn new_group(protocol: &Protocol, sessions: usize, links: usize) -> Box<dyn SessionGroup> {
    struct NewGroup(usize, usize);
    impl ProtocolVisitor for NewGroup {
        type Output = Box<dyn SessionGroup>;
        fn visit<P: SessionProtocol + DataShare + SessionWire + 'static>(self, params: P::Params) -> Self::Output {
            Box::new(Group::<P>::new(params, self.0, self.1))
        }
    }
    protocol.visit(NewGroup(sessions, links))
}

/// One protocol's sessions, link tasks and control packets.
pub struct Group<P: SessionProtocol> {
    params: P::Params,
    /// `None` before the session joins and once its last control packet is out.
    sources: Vec<Option<P::Source>>,
    links: Vec<Option<P::Link>>,
    bodies: Vec<Option<P::Packet>>,
    free: Vec<u32>,
    tick: Option<Dur>,
}

impl<P: SessionProtocol> Group<P> {
    pub fn new(params: P::Params, sessions: usize, links: usize) -> Group<P> {
        let tick = P::new_link(&params, 1.0).tick_interval();
        Group {
            params,
            sources: (0..sessions).map(|_| None).collect(),
            links: (0..links).map(|_| None).collect(),
            bodies: Vec::new(),
            free: Vec::new(),
            tick,
        }
    }

    fn store(&mut self, p: P::Packet) -> u32 {
        match self.free.pop() {
            Some(h) => {
                self.bodies[h as usize] = Some(p);
                h
            }
            None => {
                self.bodies.push(Some(p));
                (self.bodies.len() - 1) as u32
            }
        }
    }

    fn take(&mut self, h: u32) -> P::Packet {
        self.free.push(h);
        self.bodies[h as usize].take().expect("live control packet")
    }
}

impl<P: DataShare + 'static> SessionGroup for Group<P> {
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

    fn poll_transmit(&mut self, s: u32, now: Time) -> Option<(u32, u32)> {
        let src = self.sources[s as usize].as_mut()?;
        let p = src.poll_transmit(now)?;
        if src.is_finished() {
            self.sources[s as usize] = None;
        }
        let bytes = p.wire_bytes();
        Some((self.store(p), bytes))
    }

    fn next_wakeup(&self, s: u32) -> Option<Time> {
        self.sources[s as usize].as_ref().and_then(|src| src.next_wakeup())
    }

    fn rate(&self, s: u32) -> Option<f64> {
        self.sources[s as usize].as_ref().and_then(|src| src.rate())
    }

    fn on_link(&mut self, capacity: f64, now: Time, hop: Hop, h: u32) -> Forward {
        let params = &self.params;
        let task = self.links[hop.link as usize].get_or_insert_with(|| P::new_link(params, capacity));
        let body = self.bodies[h as usize].as_mut().expect("live control packet");
        task.on_packet(now, hop, body)
    }

    fn at_destination(&mut self, h: u32) -> Option<u32> {
        let p = self.take(h);
        let back = p.at_destination()?;
        let bytes = back.wire_bytes();
        let h2 = self.store(back);
        debug_assert_eq!(h2, h, "the slot just freed is reused");
        Some(bytes)
    }

    fn at_source(&mut self, s: u32, now: Time, h: u32) {
        let p = self.take(h);
        if let Some(src) = self.sources[s as usize].as_mut() {
            src.on_packet(now, p);
        }
    }

    fn discard(&mut self, h: u32) {
        self.take(h);
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

    fn data_share(&self) -> f64 {
        P::data_share(&self.params)
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

    fn export(&mut self, h: u32) -> Box<dyn std::any::Any + Send> {
        Box::new(self.take(h))
    }

    fn import(&mut self, body: Box<dyn std::any::Any + Send>) -> u32 {
        let p = body.downcast::<P::Packet>().expect("a body of the same protocol");
        self.store(*p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xcc_core::algorithms::slbn::{Slbn, SlbnParams};
    use xcc_core::session::Direction;

    fn hop(index: u16, dir: Direction) -> Hop {
        Hop { session: 0, link: index as u32, index, path_len: 2, dir }
    }

    /// One SLBN session over links 0 (1 Gb/s) and 1 (100 Mb/s), by hand, as the simulation
    /// calls the group:
    /// - Join (68 B): link 0: N = 1, shBW = 1e9 <= inf: NR = 1, B = {0}; link 1: N = 1,
    ///   shBW = 1e8: NR = 1, B = {0, 1}, b = 1. Bounced as ProbeAck, same handle, 68 B.
    /// - Up at link 1: 1 in B, taken out; shBW = 1e8, e = b: bw = 1e8. Up at link 0: 0 in B,
    ///   taken out; shBW = 1e9, e != b and 1e8 < 1e9: saturated, BF += bw' (0), NR = 0.
    /// - The ProbeAck is home at 1 ms; the source's rate is 1e8; its Probe waits for the budget:
    ///   2 x 544 bit at 1 % of 1e8 = 1.088 ms after the Join.
    /// - Leave now goes at once with the ProbeAck's fields: link 0 (not in B): BF -= bw' (0),
    ///   N = 0; link 1 (in B): NR = 0, N = 0; the destination drops it.
    #[test]
    fn slbn_session_through_two_links_by_hand() {
        let mut g = Group::<Slbn>::new(SlbnParams::default(), 1, 2);
        let t0 = Time::ZERO;
        g.join(0, t0, f64::INFINITY);
        let (h, bytes) = g.poll_transmit(0, t0).expect("Join");
        assert_eq!(bytes, 68);
        assert_eq!(g.on_link(1e9, t0, hop(0, Direction::Downstream), h), Forward::Pass);
        assert_eq!(g.on_link(1e8, t0, hop(1, Direction::Downstream), h), Forward::Pass);
        let state = |g: &Group<Slbn>, l: usize| {
            let s = g.links[l].as_ref().expect("task created on first use");
            (s.n, s.nr, s.bf)
        };
        assert_eq!((state(&g, 0), state(&g, 1)), ((1, 1, 0.0), (1, 1, 0.0)));
        assert_eq!(g.at_destination(h), Some(68));
        g.on_link(1e8, t0, hop(1, Direction::Upstream), h);
        g.on_link(1e9, t0, hop(0, Direction::Upstream), h);
        assert_eq!((state(&g, 0), state(&g, 1)), ((1, 0, 0.0), (1, 1, 0.0)));
        let t1 = Time::from_ns(1_000_000);
        g.at_source(0, t1, h);
        assert_eq!(g.in_flight(), 0);
        assert_eq!(g.rate(0), Some(1e8));
        assert_eq!(g.poll_transmit(0, t1), None, "the Probe waits for its budget");
        assert_eq!(g.next_wakeup(0), Some(Time::from_ns(1_088_000)));
        g.leave(0, t1);
        let (h, _) = g.poll_transmit(0, t1).expect("Leave");
        g.on_link(1e9, t1, hop(0, Direction::Downstream), h);
        g.on_link(1e8, t1, hop(1, Direction::Downstream), h);
        assert_eq!((state(&g, 0), state(&g, 1)), ((0, 0, 0.0), (0, 0, 0.0)));
        assert_eq!(g.at_destination(h), None);
        assert_eq!((g.in_flight(), g.rate(0)), (0, None), "the source is gone");
        assert_eq!(g.check(), Ok(()));
    }
}
