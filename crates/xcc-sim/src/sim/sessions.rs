//! Session flows (seed 004's explicit-rate protocols) on the packet engine.
//!
//! A session's source sends data packets paced at its currently assigned rate (times the data
//! share; the rest is the control budget) through the same FIFO links as every other packet,
//! until its size is sent or it stops. Its control packets are packets too: the link task of
//! each forward link runs when a packet is about to enter that link downstream, and again,
//! upstream, when the packet comes back through the router that owns the link (after crossing
//! the link's reverse direction), as the session driver and seed 004's Fig. 2 do. The
//! destination bounces or drops them; the source gets them back after the task of its own
//! access link. Completion is the delivery of the last data byte.

use super::{Endpoints, Event, Simulation};
use crate::link::SimPacket;
use xcc_core::session::{Direction, Forward, Hop, LinkLoad};
use xcc_core::wire::{Ecn, Segment, SegmentKind};
use xcc_core::{Dur, FlowId, Packet, Time};

/// A rate in bit/s as the integer pacing uses; nothing for no rate.
fn pacing_bps(rate: f64) -> u64 {
    if rate > 0.0 {
        rate.round().min(1e18) as u64
    } else {
        0
    }
}

/// A packet of `bytes` on the wire for flow `f` (data or, with no payload, control).
fn packet(f: u32, bytes: u32, kind: SegmentKind, seq: u32, now: Time) -> Packet {
    let payload_bytes = if kind == SegmentKind::Data { bytes } else { 0 };
    Packet {
        flow: FlowId(f),
        wire_bytes: bytes,
        ecn: Ecn::NotEct,
        seg: Segment { kind, seq, payload_bytes, ts_val: now, ..Segment::default() },
        ..Packet::default()
    }
}

impl Simulation {
    /// API.Join: the source starts its first control cycle; data waits for a rate.
    pub(super) fn start_session(&mut self, f: u32) {
        let now = self.now;
        let rec = &mut self.flows[f as usize];
        let spec = rec.session.expect("session flow");
        rec.ep = Endpoints::Session {
            data_bps: 0,
            next_send: Time::NEVER,
            last_send: None,
            frac: 0,
            seq: 0,
            sending: true,
            wake_at: None,
            last_delivery: Time::NEVER,
        };
        // The destination's domain only counts what arrives.
        if !self.sends(f) {
            return;
        }
        self.groups[spec.group as usize].join(spec.local, now, spec.demand);
        self.after_source(f);
    }

    /// After any input to a source: send its control packets, follow its rate, arm its wake-up.
    fn after_source(&mut self, f: u32) {
        let now = self.now;
        let spec = self.flows[f as usize].session.expect("session flow");
        let g = spec.group as usize;
        while let Some((h, bytes)) = self.groups[g].poll_transmit(spec.local, now) {
            self.send_control(f, h, bytes);
        }
        let group = &self.groups[g];
        let (rate, wake, share) = (group.rate(spec.local), group.next_wakeup(spec.local), group.data_share());
        let Endpoints::Session { sending, wake_at, .. } = &mut self.flows[f as usize].ep else { return };
        if let Some(t) = wake {
            if t > now && *wake_at != Some(t) {
                *wake_at = Some(t);
                self.queue.schedule(t, Event::SessionWake(f));
            }
        }
        // A session never sends above its own request (SLBN may report more: Fig. 1 caps D only
        // in the next Probe).
        let want = if *sending { rate.map_or(0, |r| pacing_bps(r.min(spec.demand) * share)) } else { 0 };
        self.set_data_rate(f, want);
    }

    pub(super) fn session_wake(&mut self, f: u32, t: Time) {
        let Endpoints::Session { wake_at, .. } = &mut self.flows[f as usize].ep else { return };
        if *wake_at != Some(t) {
            return; // superseded
        }
        *wake_at = None;
        self.after_source(f);
    }

    /// The data rate changes: the next packet is due one spacing at the new rate after the
    /// last one (at once if that time has passed).
    fn set_data_rate(&mut self, f: u32, bps: u64) {
        let now = self.now;
        let rec = &mut self.flows[f as usize];
        let bytes = rec.session.expect("session flow").packet_bytes as u64;
        let Endpoints::Session { data_bps, next_send, last_send, frac, .. } = &mut rec.ep else { return };
        if *data_bps == bps {
            return;
        }
        *data_bps = bps;
        *frac = 0;
        if bps == 0 {
            *next_send = Time::NEVER;
            return;
        }
        let due = match *last_send {
            Some(t) => (t + Dur((bytes * 8_000_000_000 / bps).max(1))).max(now),
            None => now,
        };
        if due != *next_send {
            *next_send = due;
            self.queue.schedule(due, Event::SessionSend(f));
        }
    }

    /// The next data packet; an event that is no longer the due one does nothing (after a
    /// send the next one is at least 1 ns later, so a stale event never sends twice).
    pub(super) fn session_send(&mut self, f: u32, t: Time) {
        let now = self.now;
        let rec = &mut self.flows[f as usize];
        let spec = rec.session.expect("session flow");
        let (size, route) = (rec.size, rec.fwd);
        let Endpoints::Session { data_bps, next_send, last_send, frac, seq, sending, .. } = &mut rec.ep else {
            return;
        };
        if t != *next_send || !*sending || *data_bps == 0 {
            return;
        }
        let left = size.map_or(u64::MAX, |s| s - rec.cbr_sent_bytes);
        let n = (spec.packet_bytes as u64).min(left) as u32;
        let pkt = packet(f, n, SegmentKind::Data, *seq, now);
        *seq = seq.wrapping_add(1);
        *last_send = Some(now);
        // Exact long-run rate: carry the sub-nanosecond remainder of the spacing.
        let num = n as u64 * 8_000_000_000 + *frac;
        *frac = num % *data_bps;
        let next = now + Dur((num / *data_bps).max(1));
        rec.cbr_sent_bytes += n as u64;
        let done = size.is_some_and(|s| rec.cbr_sent_bytes >= s);
        *next_send = if done { Time::NEVER } else { next };
        self.inject(pkt, route);
        if done {
            self.end_session_data(f);
        } else {
            self.queue.schedule(next, Event::SessionSend(f));
        }
    }

    /// All data sent, or the flow's stop: API.Leave. The source sends its last control packets.
    pub(super) fn end_session_data(&mut self, f: u32) {
        let now = self.now;
        let rec = &mut self.flows[f as usize];
        let spec = rec.session.expect("session flow");
        let Endpoints::Session { sending, next_send, .. } = &mut rec.ep else { return };
        if !*sending {
            return;
        }
        *sending = false;
        *next_send = Time::NEVER;
        self.groups[spec.group as usize].leave(spec.local, now);
        self.after_source(f);
    }

    /// The source puts control packet `h` on its path: the task of its access link first.
    fn send_control(&mut self, f: u32, h: u32, bytes: u32) {
        let route = self.flows[f as usize].fwd;
        self.sent.0 += 1;
        self.sent.1 += bytes as u64;
        let l = self.routes.hop(route, 0);
        let pkt = packet(f, bytes, SegmentKind::Datagram, 0, self.now);
        let idx = self.alloc(SimPacket { pkt, route, hop: 0, ctrl: h + 1 });
        if self.session_link(idx, l, 0, Direction::Downstream) {
            self.offer(l, idx);
        }
    }

    /// Link `l` (position `index` on the session's forward path) runs its task on the control
    /// packet in arena slot `idx`; false if the task took it out of the network.
    fn session_link(&mut self, idx: u32, l: u32, index: u32, dir: Direction) -> bool {
        let sp = &self.arena[idx as usize];
        let (f, h, bytes) = (sp.pkt.flow.0, sp.ctrl - 1, sp.pkt.wire_bytes);
        let rec = &self.flows[f as usize];
        let spec = rec.session.expect("session flow");
        let hop = Hop { session: spec.local, link: l, index: index as u16, path_len: rec.fwd.len as u16, dir };
        let capacity = self.links[l as usize].rate_bps as f64;
        let group = &mut self.groups[spec.group as usize];
        if group.on_link(capacity, self.now, hop, h) == Forward::Pass {
            return true;
        }
        group.discard(h);
        self.absorbed.0 += 1;
        self.absorbed.1 += bytes as u64;
        self.free.push(idx);
        false
    }

    /// A control packet was just delivered off a link (its `hop` already advanced).
    pub(super) fn session_hop(&mut self, idx: u32) {
        let now = self.now;
        let sp = self.arena[idx as usize];
        let f = sp.pkt.flow.0;
        let rec = &self.flows[f as usize];
        let spec = rec.session.expect("session flow");
        let (fwd, rev, n) = (rec.fwd, rec.rev, rec.fwd.len);
        let g = spec.group as usize;
        let h = sp.ctrl - 1;
        if sp.route == fwd {
            if sp.hop < n {
                let l = self.routes.hop(fwd, sp.hop);
                if self.session_link(idx, l, sp.hop, Direction::Downstream) {
                    self.offer(l, idx);
                }
                return;
            }
            // At the destination: bounced upstream, or gone.
            self.received.0 += 1;
            self.received.1 += sp.pkt.wire_bytes as u64;
            match self.groups[g].at_destination(h) {
                Some(bytes) => {
                    self.sent.0 += 1;
                    self.sent.1 += bytes as u64;
                    let p = &mut self.arena[idx as usize];
                    p.route = rev;
                    p.hop = 0;
                    p.pkt.wire_bytes = bytes;
                    p.pkt.seg.ts_val = now;
                    self.offer(self.routes.hop(rev, 0), idx);
                }
                None => self.free.push(idx),
            }
            return;
        }
        // Upstream: it just crossed the reverse of forward link k and is at the router owning
        // link k, whose task sees it on its way back.
        let k = n - sp.hop;
        let l = self.routes.hop(fwd, k);
        if !self.session_link(idx, l, k, Direction::Upstream) {
            return;
        }
        if sp.hop < n {
            self.offer(self.routes.hop(rev, sp.hop), idx);
            return;
        }
        self.received.0 += 1;
        self.received.1 += sp.pkt.wire_bytes as u64;
        self.free.push(idx);
        self.groups[g].at_source(spec.local, now, h);
        self.after_source(f);
    }

    /// A control packet the network dropped (finite buffer or random loss): its body goes.
    pub(super) fn discard_control(&mut self, f: u32, h: u32) {
        let g = self.flows[f as usize].session.expect("session flow").group;
        self.groups[g as usize].discard(h);
    }

    /// Group `g`'s link timers (ERICA's averaging interval, COBB's period), with each link's
    /// input (every packet offered to it) and backlog measured since the group's last tick.
    pub(super) fn session_tick(&mut self, g: u32) {
        let now = self.now;
        self.uncount_copy(self.dom.as_ref().is_some_and(|d| d.id != 0));
        let g = g as usize;
        let Some(d) = self.groups[g].tick_interval() else { return };
        let (since, last) = &mut self.tick_bytes[g];
        let interval = now - *since;
        *since = now;
        let secs = interval.as_secs_f64().max(1e-12);
        let (links, arena) = (&mut self.links, &mut self.arena);
        let mut load = |l: u32| {
            let link = &mut links[l as usize];
            link.advance(now, &mut arena[..]);
            LinkLoad {
                input_rate: (link.stats.bytes_in - last[l as usize]) as f64 * 8.0 / secs,
                queue_bits: link.waiting_bytes() as f64 * 8.0,
                interval,
            }
        };
        self.groups[g].on_tick(now, &mut load);
        for (l, link) in self.links.iter().enumerate() {
            last[l] = link.stats.bytes_in;
        }
        self.queue.schedule(now + d, Event::SessionTick(g as u32));
    }

    /// Every control packet on a link has its body in its group and no other body is held;
    /// every link task is consistent; no session sent more than its size.
    pub(super) fn check_sessions(&self) -> Result<(), String> {
        let on_links: u64 =
            self.links.iter().flat_map(|l| l.pipe()).filter(|e| self.arena[e.item.idx as usize].ctrl != 0).count()
                as u64;
        let held: u64 = self.groups.iter().map(|g| g.in_flight()).sum();
        if on_links != held {
            return Err(format!("session control packets: {on_links} on links but {held} bodies held"));
        }
        for g in &self.groups {
            g.check()?;
        }
        for rec in self.flows.iter().filter(|r| r.session.is_some()) {
            if let Some(size) = rec.size {
                if rec.cbr_sent_bytes > size {
                    return Err(format!("session {}: sent {} B of {size}", rec.name, rec.cbr_sent_bytes));
                }
            }
        }
        Ok(())
    }
}
