//! The router without I/O: packets in (bytes from a host's TUN, with the time they were read),
//! packets out (bytes for a host's TUN, when they are due). Classification, routing, the links
//! in virtual time and the rewrites live here, so they can be tested without namespaces.

use std::collections::HashMap;

use xcc_core::session::{Direction, Forward};
use xcc_core::wire::session::{SessionHeader, SessionKind, SESSION_UDP_PORT};
use xcc_core::wire::{Ecn, SegmentKind};
use xcc_core::{FlowId, Packet, Time};

use crate::router::carrier::{plain_kind, Carriers, Found};
use crate::router::ipv4::{self, Ipv4, Ipv4Error, PROTO_UDP};
use crate::router::link::{EmuLink, InFlight};
use crate::router::sessions::{Ctrl, SessionRouter};

/// Largest packet the router handles (the TUN MTU is 1500; room to spare).
pub const BUF_LEN: usize = 2048;

/// Router-wide counters: every packet read ends in exactly one of `forwarded`, `dropped_*`,
/// `not_ipv4`, `bad_ipv4`, `bad_ipv4_checksum`, `unroutable`, `absorbed_by_link_tasks` or is
/// still in flight.
#[derive(Clone, Debug, Default)]
pub struct FabricStats {
    pub packets_read: u64,
    /// Not IPv4 (dropped).
    pub not_ipv4: u64,
    /// IPv4 with lengths that contradict the bytes read (dropped).
    pub bad_ipv4: u64,
    /// IPv4 headers whose checksum does not verify (dropped, as a router does).
    pub bad_ipv4_checksum: u64,
    /// Destination is no host of the topology (dropped).
    pub unroutable: u64,
    /// Claimed by a carrier whose header did not parse: forwarded untouched, as plain IP.
    pub malformed_header: u64,
    /// Dropped by a link (buffer or algorithm).
    pub dropped_by_links: u64,
    /// Delivered to the destination host's TUN.
    pub forwarded: u64,
    /// Refused by the destination's TUN on write (counted as a kernel-side drop).
    pub write_failures: u64,
    /// Congestion headers written back after an algorithm changed them.
    pub header_rewrites: u64,
    /// CE marks written into IP headers.
    pub ce_written: u64,
    /// Bytes written to hosts' TUN devices, and the first and last write times (run clock).
    pub bytes_delivered: u64,
    pub first_delivery_ns: Option<u64>,
    pub last_delivery_ns: u64,
    /// Lateness of deliveries behind their virtual-time schedule, in microseconds (histogram,
    /// the last bucket collects everything later).
    pub lateness_us: Vec<u64>,
    /// The latest delivery, in microseconds (beyond the histogram's last bucket too).
    pub lateness_max_us: u64,
    /// Super-packets read from TUN devices with offloads (each counted in `packets_read` as
    /// the segments it was cut into, see [`crate::router::gso`]).
    pub super_packets: u64,
    /// Reads whose `virtio_net_hdr` the router could not turn into packets (dropped).
    pub bad_offload: u64,
    /// Session control packets a link task took out of the network (SLBN never does; the
    /// others' tasks may).
    pub absorbed_by_link_tasks: u64,
}

const LATENESS_BUCKETS: usize = 10_001;

impl FabricStats {
    /// The `q`-quantile of delivery lateness in microseconds (bucket upper bound).
    pub fn lateness_quantile_us(&self, q: f64) -> Option<u64> {
        let total: u64 = self.lateness_us.iter().sum();
        if total == 0 {
            return None;
        }
        let want = ((total as f64) * q).ceil().max(1.0) as u64;
        let mut acc = 0;
        for (i, &n) in self.lateness_us.iter().enumerate() {
            acc += n;
            if acc >= want {
                return Some(i as u64);
            }
        }
        Some((LATENESS_BUCKETS - 1) as u64)
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
struct FlowKey {
    src: [u8; 4],
    dst: [u8; 4],
    proto: u8,
    sport: u16,
    dport: u16,
}

/// One host attached to the router.
#[derive(Clone, Debug)]
pub struct Port {
    pub name: String,
    pub addr: [u8; 4],
}

pub struct Fabric {
    pub ports: Vec<Port>,
    pub links: Vec<EmuLink>,
    /// `routes[r]`: link ids from a source host to a destination host.
    pub routes: Vec<Vec<u32>>,
    /// `route_of[src * n + dst]`: index into `routes`.
    route_of: Vec<Option<u32>>,
    /// Destination address → host index.
    by_addr: HashMap<[u8; 4], usize>,
    pub carriers: Carriers,
    flows: HashMap<FlowKey, u32>,
    pool: Vec<Box<[u8]>>,
    lens: Vec<u16>,
    free: Vec<u32>,
    pub stats: FabricStats,
    /// Time series of the links, one row per link per [`Fabric::sample`].
    pub series: Vec<LinkSample>,
    /// Seed 004's session protocols' link tasks (`None`: the scenario has no session flows,
    /// and session datagrams are plain IP).
    pub sessions: Option<SessionRouter>,
    /// `mirror[r]`: the route that retraces route `r` backwards over the reverse of each of
    /// its links (the path a session's bounced control packets take, as in the simulator).
    mirror: Vec<u32>,
}

/// One link's state at a sampling instant (cumulative counters, instantaneous queue).
#[derive(Clone, Debug, serde::Serialize)]
pub struct LinkSample {
    pub time_ns: u64,
    pub link: u32,
    pub queue_packets: u64,
    pub queue_bytes: u64,
    pub bytes_out: u64,
    pub data_bytes_out: u64,
    pub drops: u64,
    pub marks: u64,
    pub gauge: f64,
}

impl Fabric {
    /// `routes`: (source host, destination host, link ids).
    pub fn new(
        ports: Vec<Port>,
        links: Vec<EmuLink>,
        routes: Vec<(usize, usize, Vec<u32>)>,
        carriers: Carriers,
    ) -> Fabric {
        let n = ports.len();
        let mut route_of = vec![None; n * n];
        let mut list = Vec::new();
        for (s, d, r) in routes {
            route_of[s * n + d] = Some(list.len() as u32);
            list.push(r);
        }
        let by_addr = ports.iter().enumerate().map(|(i, p)| (p.addr, i)).collect();
        Fabric {
            ports,
            links,
            routes: list,
            route_of,
            by_addr,
            carriers,
            flows: HashMap::new(),
            pool: Vec::new(),
            lens: Vec::new(),
            free: Vec::new(),
            stats: FabricStats { lateness_us: vec![0; LATENESS_BUCKETS], ..FabricStats::default() },
            series: Vec::new(),
            sessions: None,
            mirror: Vec::new(),
        }
    }

    /// Runs seed 004's session protocols' link tasks on their control packets. Links come in
    /// duplex pairs (`2k` a->b, `2k+1` b->a, as the scenario model builds them): a bounced
    /// control packet retraces its session's forward route over the reverse links, as the
    /// simulator's session flows do, whatever route the router would give its destination.
    pub fn enable_sessions(&mut self, sessions: SessionRouter) {
        let n = self.routes.len();
        for r in 0..n {
            let back: Vec<u32> = self.routes[r].iter().rev().map(|&l| l ^ 1).collect();
            self.mirror.push(self.routes.len() as u32);
            self.routes.push(back);
        }
        self.sessions = Some(sessions);
    }

    /// A fabric with no ports or links (a placeholder once the real one moved to the router).
    pub fn empty() -> Fabric {
        Fabric::new(Vec::new(), Vec::new(), Vec::new(), Carriers { list: Vec::new() })
    }

    /// The link ids from host `a` to host `b`, if they are connected.
    pub fn route(&self, a: usize, b: usize) -> Option<&[u32]> {
        let n = self.ports.len();
        self.route_of.get(a * n + b).copied().flatten().map(|r| self.routes[r as usize].as_slice())
    }

    /// A free buffer to read a packet into.
    pub fn alloc(&mut self) -> u32 {
        if let Some(s) = self.free.pop() {
            return s;
        }
        self.pool.push(vec![0u8; BUF_LEN].into_boxed_slice());
        self.lens.push(0);
        (self.pool.len() - 1) as u32
    }

    pub fn buf_mut(&mut self, slot: u32) -> &mut [u8] {
        &mut self.pool[slot as usize]
    }

    pub fn release(&mut self, slot: u32) {
        self.free.push(slot);
    }

    /// Takes the `len` bytes in `slot`, read from host `from` at `now`: classifies, routes and
    /// offers them to the first link. The slot is released if the packet goes nowhere.
    pub fn ingress(&mut self, now: Time, from: usize, slot: u32, len: usize) {
        self.stats.packets_read += 1;
        self.lens[slot as usize] = len as u16;
        let buf = &self.pool[slot as usize][..len];
        let ip = match Ipv4::parse(buf) {
            Ok(ip) => ip,
            Err(e) => {
                match e {
                    Ipv4Error::NotIpv4 => self.stats.not_ipv4 += 1,
                    Ipv4Error::BadLength => self.stats.bad_ipv4 += 1,
                    Ipv4Error::BadChecksum => self.stats.bad_ipv4_checksum += 1,
                }
                self.release(slot);
                return;
            }
        };
        let n = self.ports.len();
        let route = self.by_addr.get(&ip.dst).and_then(|&d| self.route_of[from * n + d]);
        let Some(route) = route else {
            self.stats.unroutable += 1;
            self.release(slot);
            return;
        };
        let l4 = ipv4::l4(&ip, buf);
        let key = FlowKey {
            src: ip.src,
            dst: ip.dst,
            proto: ip.proto,
            sport: l4.map_or(0, |l| l.sport),
            dport: l4.map_or(0, |l| l.dport),
        };
        let next_id = self.flows.len() as u32;
        let flow = *self.flows.entry(key).or_insert(next_id);
        let mut pkt = Packet { flow: FlowId(flow), wire_bytes: ip.total_len as u32, ecn: ip.ecn, ..Packet::default() };
        let mut carrier = None;
        let mut claimed = false;
        for (i, c) in self.carriers.list.iter().enumerate() {
            match c.find(&ip, buf, &mut pkt) {
                Found::NotMine => continue,
                Found::Carried { offset } => carrier = Some((i as u8, offset as u16)),
                Found::Malformed => self.stats.malformed_header += 1,
            }
            claimed = carrier.is_some();
            break;
        }
        let mut route = route;
        let mut ctrl = 0;
        if !claimed
            && ip.proto == PROTO_UDP
            && l4.is_some_and(|l| l.sport == SESSION_UDP_PORT || l.dport == SESSION_UDP_PORT)
        {
            let dst = self.by_addr[&ip.dst];
            let udp = &buf[ip.header_len + 8..ip.total_len];
            if let Some(sr) = self.sessions.as_mut() {
                match read_session(sr, udp, &mut pkt) {
                    Some(None) => claimed = true,
                    Some(Some(mut c)) => {
                        // The forward route is the source's: for a bounced packet, from the
                        // host it is going to.
                        c.fwd = if c.dir == Direction::Downstream {
                            route
                        } else {
                            match self.route_of[dst * n + from] {
                                Some(r) => r,
                                None => {
                                    sr.groups[c.group as usize].discard(c.handle);
                                    self.stats.unroutable += 1;
                                    self.release(slot);
                                    return;
                                }
                            }
                        };
                        if c.dir == Direction::Upstream {
                            route = self.mirror[c.fwd as usize];
                        }
                        ctrl = sr.admit(c);
                        claimed = true;
                    }
                    None => {}
                }
            }
        }
        if !claimed {
            let payload = l4.map_or(ip.total_len > ip.header_len, |l| ip.header_len + l.payload_offset < ip.total_len);
            pkt.seg.kind = plain_kind(payload);
            pkt.seg.payload_bytes = (ip.total_len - ip.header_len) as u32;
        }
        let f = InFlight { slot, pkt, read_ecn: ip.ecn, read_cc: pkt.cc, carrier, route, hop: 0, entered: now, ctrl };
        if ctrl != 0 && self.sessions.as_ref().is_some_and(|sr| sr.get(ctrl).dir == Direction::Downstream) {
            // The source's access link sees the packet before it enters (sessions.rs: send_control).
            if !self.session_task(now, &f, 0) {
                return;
            }
        }
        self.offer(now, f);
    }

    fn offer(&mut self, now: Time, f: InFlight) {
        let link = self.routes[f.route as usize][f.hop as usize] as usize;
        let ctrl = f.ctrl;
        if let Err(slot) = self.links[link].offer(now, f) {
            self.stats.dropped_by_links += 1;
            if ctrl != 0 {
                if let Some(sr) = self.sessions.as_mut() {
                    sr.release(ctrl, None);
                }
            }
            self.release(slot);
        }
    }

    /// The task of the link at position `k` of control packet `f`'s forward route runs on it;
    /// false (and the packet freed) if the task took it out of the network.
    fn session_task(&mut self, now: Time, f: &InFlight, k: u32) -> bool {
        let sr = self.sessions.as_mut().expect("control packets only with sessions");
        let fwd = &self.routes[sr.get(f.ctrl).fwd as usize];
        let l = fwd[k as usize];
        let capacity = self.links[l as usize].rate_bps as f64;
        if sr.on_link(f.ctrl, l, k, fwd.len() as u32, capacity, now) == Forward::Pass {
            return true;
        }
        self.stats.absorbed_by_link_tasks += 1;
        self.release(f.slot);
        false
    }

    /// A control packet just came off a link (its `hop` advanced): the task the simulator runs
    /// there, then on to the next link or out of the router. `at`: its delivery time.
    fn session_hop(&mut self, now: Time, at: Time, f: InFlight, out: &mut dyn FnMut(usize, &[u8]) -> bool) {
        let n = self.routes[f.route as usize].len() as u32;
        let dir = self.sessions.as_ref().expect("control packets only with sessions").get(f.ctrl).dir;
        match dir {
            Direction::Downstream if f.hop < n => {
                if self.session_task(at, &f, f.hop) {
                    self.offer(at, f);
                }
            }
            // At the destination host, which bounces it or not.
            Direction::Downstream => self.deliver(now, at, f, out),
            // It crossed the reverse of forward link n - hop and is at the router owning that
            // link, whose task sees it on its way back (the source's access link last).
            Direction::Upstream => {
                if !self.session_task(at, &f, n - f.hop) {
                    return;
                }
                if f.hop < n {
                    self.offer(at, f);
                } else {
                    self.deliver(now, at, f, out);
                }
            }
        }
    }

    /// The earliest instant anything is due (a delivery or a control interval).
    pub fn next_event(&self) -> Time {
        let tick = self.sessions.as_ref().map_or(Time::NEVER, |s| s.next_tick());
        self.links.iter().map(|l| l.next_event()).min().unwrap_or(Time::NEVER).min(tick)
    }

    /// Runs everything due at or before `now`, in time order; packets leaving the router are
    /// handed to `out(host, bytes)`, which returns false if the host's device refused them.
    pub fn run_due(&mut self, now: Time, out: &mut dyn FnMut(usize, &[u8]) -> bool) {
        loop {
            let mut best: Option<(Time, usize)> = None;
            for (i, l) in self.links.iter().enumerate() {
                let t = l.next_event();
                if t <= now && best.is_none_or(|(bt, _)| t < bt) {
                    best = Some((t, i));
                }
            }
            // The session protocols' link timers in time order with the links' events.
            let tick = self.sessions.as_ref().map_or(Time::NEVER, |s| s.next_tick());
            if tick <= now && best.is_none_or(|(bt, _)| tick <= bt) {
                let (links, sr) = (&mut self.links, self.sessions.as_mut().expect("a tick"));
                sr.run_ticks(tick, &mut |l, t| {
                    let link = &mut links[l as usize];
                    let (_, queue) = link.backlog(t);
                    (link.stats.bytes_in, queue)
                });
                continue;
            }
            let Some((t, i)) = best else { break };
            let link = &mut self.links[i];
            link.tick(t);
            let Some((mut f, at)) = link.pop_due(t) else { continue };
            f.hop += 1;
            if f.ctrl != 0 {
                self.session_hop(now, at, f, out);
            } else if (f.hop as usize) < self.routes[f.route as usize].len() {
                self.offer(at, f);
            } else {
                self.deliver(now, at, f, out);
            }
        }
    }

    fn deliver(&mut self, now: Time, at: Time, f: InFlight, out: &mut dyn FnMut(usize, &[u8]) -> bool) {
        let len = self.lens[f.slot as usize] as usize;
        let buf = &mut self.pool[f.slot as usize][..len];
        // The bytes were checked on the way in; only what the algorithms changed is rewritten.
        if let Ok(ip) = Ipv4::parse(buf) {
            if f.pkt.ecn != f.read_ecn && f.pkt.ecn == Ecn::Ce {
                ipv4::set_ecn(buf, Ecn::Ce);
                self.stats.ce_written += 1;
            }
            if let Some((c, offset)) = f.carrier {
                if f.pkt.cc != f.read_cc && f.pkt.cc.proto() == f.read_cc.proto() {
                    self.carriers.list[c as usize].write(&ip, buf, offset as usize, &f.read_cc, &f.pkt.cc);
                    self.stats.header_rewrites += 1;
                }
            }
            if f.ctrl != 0 {
                // The body the link tasks rewrote goes back into the datagram.
                let sr = self.sessions.as_mut().expect("control packets only with sessions");
                let udp = ip.header_len + 8;
                let before = buf[udp..ip.total_len].to_vec();
                sr.release(f.ctrl, Some(&mut buf[udp..ip.total_len]));
                fix_udp_checksum(buf, ip.header_len, &before);
            }
        }
        let dst = self.routes[f.route as usize].last().map(|&l| l as usize);
        let host = dst.and_then(|_| {
            let d = u32::from_be_bytes([buf[16], buf[17], buf[18], buf[19]]).to_be_bytes();
            self.by_addr.get(&d).copied()
        });
        if let Some(h) = host {
            if out(h, buf) {
                self.stats.forwarded += 1;
                self.stats.bytes_delivered += len as u64;
                self.stats.first_delivery_ns.get_or_insert(now.as_ns());
                self.stats.last_delivery_ns = now.as_ns();
            } else {
                self.stats.write_failures += 1;
            }
        }
        let late = now.saturating_since(at).as_ns() / 1000;
        self.stats.lateness_us[(late as usize).min(LATENESS_BUCKETS - 1)] += 1;
        self.stats.lateness_max_us = self.stats.lateness_max_us.max(late);
        self.release(f.slot);
    }

    /// Appends one row per link to [`Fabric::series`].
    pub fn sample(&mut self, now: Time) {
        use xcc_core::link::LinkAlgorithm;
        for (i, l) in self.links.iter_mut().enumerate() {
            let (queue_packets, queue_bytes) = l.backlog(now);
            self.series.push(LinkSample {
                time_ns: now.as_ns(),
                link: i as u32,
                queue_packets,
                queue_bytes,
                bytes_out: l.stats.bytes_out,
                data_bytes_out: l.stats.data_bytes_out,
                drops: l.stats.drops,
                marks: l.stats.marks,
                gauge: l.algo.gauge(),
            });
        }
    }

    /// Packets inside the router (queued or on a link).
    pub fn in_flight(&self) -> usize {
        self.pool.len() - self.free.len()
    }
}

/// Reads a session datagram (`udp`: its UDP payload): data is billed at its length on the
/// wire (the source sends the session's packet size), a control packet's body is decoded and
/// the packet billed at the simulator's size for it. `Some(None)`: data; `Some(Some(ctrl))`:
/// a control packet (its `fwd` still to be set); `None`: it does not parse or its protocol is
/// not run here (counted, forwarded as plain IP).
fn read_session(sr: &mut SessionRouter, udp: &[u8], pkt: &mut Packet) -> Option<Option<Ctrl>> {
    let parsed = SessionHeader::parse(udp).ok().and_then(|h| sr.group_of(h.proto).map(|g| (h, g)));
    let Some((h, group)) = parsed else {
        sr.stats.malformed += 1;
        return None;
    };
    match h.kind {
        SessionKind::Data => {
            sr.stats.data_read += 1;
            pkt.seg.kind = SegmentKind::Data;
            pkt.seg.payload_bytes = pkt.wire_bytes;
            Some(None)
        }
        SessionKind::Control(dir) => match sr.groups[group as usize].decode(&h, udp) {
            Ok((handle, bytes)) => {
                pkt.seg.kind = SegmentKind::Datagram;
                pkt.seg.payload_bytes = 0;
                pkt.wire_bytes = bytes;
                Some(Some(Ctrl { group, handle, session: h.session, dir, fwd: 0 }))
            }
            Err(_) => {
                sr.stats.malformed += 1;
                None
            }
        },
    }
}

/// Fixes the UDP checksum of the IPv4 packet in `buf` (header of `ihl` bytes) after its UDP
/// payload changed from `before` (RFC 1624; a zero checksum, "none", stays so).
fn fix_udp_checksum(buf: &mut [u8], ihl: usize, before: &[u8]) {
    let at = ihl + 6;
    let check = u16::from_be_bytes([buf[at], buf[at + 1]]);
    if check == 0 {
        return;
    }
    let after = &buf[ihl + 8..ihl + 8 + before.len()];
    let mut fixed = crate::router::checksum::update_bytes(check, before, after, false);
    if fixed == 0 {
        fixed = 0xFFFF;
    }
    buf[at..at + 2].copy_from_slice(&fixed.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::router::ipv4::tests::udp_packet;
    use crate::router::sessions::{link_tasks, SessionRouter};
    use xcc_build::session::Protocol;
    use xcc_core::algorithms::droptail::{DropTail, DropTailConfig};
    use xcc_core::algorithms::slbn::Slbn;
    use xcc_core::algorithms::slbn::{SlbnLink, SlbnPacket, SlbnParams};
    use xcc_core::link::AnyLinkAlgorithm;
    use xcc_core::session::{ControlPacket, Hop, LinkTask};
    use xcc_core::wire::session::{emit_control, parse_control};
    use xcc_core::Dur;

    const S: [u8; 4] = [10, 0, 0, 1];
    const D: [u8; 4] = [10, 0, 0, 2];
    const CAP: [u64; 3] = [1_000_000_000, 100_000_000, 500_000_000];

    /// s -(0/1)- r1 -(2/3)- r2 -(4/5)- d, 1 ms per link, forward capacities [`CAP`].
    fn fabric() -> Fabric {
        let dt = || AnyLinkAlgorithm::DropTail(DropTail::new(DropTailConfig::default()));
        let links =
            (0..6).map(|l| EmuLink::new(format!("l{l}"), CAP[l / 2], 1_000_000, u64::MAX, u64::MAX, dt())).collect();
        let ports = vec![Port { name: "s".into(), addr: S }, Port { name: "d".into(), addr: D }];
        let mut f = Fabric::new(ports, links, vec![(0, 1, vec![0, 2, 4]), (1, 0, vec![5, 3, 1])], Carriers::standard());
        let slbn = Protocol::Slbn(SlbnParams::default());
        f.enable_sessions(SessionRouter::new(vec![link_tasks(&slbn, 6)], 6));
        f
    }

    /// An IPv4/UDP datagram with a real UDP checksum (the router must keep it valid).
    fn datagram(src: [u8; 4], dst: [u8; 4], sport: u16, dport: u16, udp: &[u8]) -> Vec<u8> {
        let mut b = udp_packet(src, dst, sport, dport, udp, 0);
        let c = udp_checksum(&b);
        b[26..28].copy_from_slice(&c.to_be_bytes());
        b
    }

    fn udp_checksum(b: &[u8]) -> u16 {
        let len = b.len() - 20;
        let mut pseudo = [0u8; 12];
        pseudo[..8].copy_from_slice(&b[12..20]);
        pseudo[9] = PROTO_UDP;
        pseudo[10..12].copy_from_slice(&(len as u16).to_be_bytes());
        let mut udp = b[20..].to_vec();
        udp[6..8].copy_from_slice(&[0, 0]);
        let c = crate::router::checksum::finish(crate::router::checksum::sum(
            &udp,
            crate::router::checksum::sum(&pseudo, 0),
        ));
        if c == 0 {
            0xFFFF
        } else {
            c
        }
    }

    /// Reads `pkt` from host `from` at `t` and runs the fabric for 100 ms: what comes out, where.
    fn through(f: &mut Fabric, t: Time, from: usize, pkt: &[u8]) -> Vec<(usize, Vec<u8>)> {
        let slot = f.alloc();
        f.buf_mut(slot)[..pkt.len()].copy_from_slice(pkt);
        f.ingress(t, from, slot, pkt.len());
        let mut out = Vec::new();
        f.run_due(t + Dur::from_ms(100), &mut |h, b| {
            out.push((h, b.to_vec()));
            true
        });
        out
    }

    fn body(pkt: &[u8]) -> (SessionHeader, SlbnPacket) {
        let h = SessionHeader::parse(&pkt[28..]).unwrap();
        (h, parse_control::<Slbn>(&h, &pkt[28..]).unwrap())
    }

    /// One SLBN session through the router by hand, against the simulator's placement done by
    /// hand with the same xcc-core tasks (sessions.rs: downstream before each link, upstream at
    /// the router owning the link after its reverse was crossed):
    ///
    /// ```text
    /// s --Join--> [0 down] l0 [1 down] l2 [2 down] l4 --> d   (bounced as ProbeAck)
    /// s <-------- [0 up]   l1 [1 up]   l3 [2 up]   l5 <-- d
    /// ```
    /// Then a Leave goes down the same way. Every body the router hands out equals the
    /// hand-run one, the UDP checksums stay valid, the links bill 68 B per control packet and
    /// the bounced packet retraces the forward path over links 5, 3, 1.
    #[test]
    fn slbn_link_tasks_run_where_the_simulator_runs_them() {
        let mut f = fabric();
        let mut tasks: Vec<SlbnLink> = CAP.iter().map(|&c| SlbnLink::new(c as f64, false)).collect();
        let hop = |k: u16, dir| Hop { session: 3, link: [0, 2, 4][k as usize], index: k, path_len: 3, dir };
        let t0 = Time(1_000_000);

        let join = SlbnPacket::join(f64::INFINITY);
        let mut buf = [0u8; 64];
        let n = emit_control::<Slbn>(3, Direction::Downstream, &join, &mut buf).unwrap();
        let out = through(&mut f, t0, 0, &datagram(S, D, 40_000, SESSION_UDP_PORT, &buf[..n]));
        let mut want = join;
        for k in 0..3 {
            tasks[k as usize].on_packet(t0, hop(k, Direction::Downstream), &mut want);
        }
        assert_eq!(out.len(), 1);
        let (h, got) = body(&out[0].1);
        assert_eq!((out[0].0, h.session, h.kind), (1, 3, SessionKind::Control(Direction::Downstream)));
        assert_eq!(got, want, "the Join as the three tasks left it");
        assert_eq!((got.bottlenecks.len(), got.last), (3, Some(2)), "restricted at every link, b = the last");
        assert_eq!(udp_checksum(&out[0].1), u16::from_be_bytes([out[0].1[26], out[0].1[27]]));

        let ack = want.at_destination().unwrap();
        let n = emit_control::<Slbn>(3, Direction::Upstream, &ack, &mut buf).unwrap();
        let t1 = Time(10_000_000);
        let out = through(&mut f, t1, 1, &datagram(D, S, SESSION_UDP_PORT, 40_000, &buf[..n]));
        let mut want = ack;
        for k in (0..3).rev() {
            tasks[k as usize].on_packet(t1, hop(k, Direction::Upstream), &mut want);
        }
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].0, 0, "back at the source");
        assert_eq!(body(&out[0].1).1, want, "the ProbeAck as the tasks left it, upstream from the far end");
        assert_eq!(want.bw, 1e8, "the 100 Mbit/s link is the bottleneck");
        assert_eq!(udp_checksum(&out[0].1), u16::from_be_bytes([out[0].1[26], out[0].1[27]]));
        let bytes_in: Vec<u64> = f.links.iter().map(|l| l.stats.bytes_in).collect();
        assert_eq!(bytes_in, [68, 68, 68, 68, 68, 68], "each link once, billed at SLBN's 68 B");

        let leave = SlbnPacket { kind: xcc_core::algorithms::slbn::SlbnKind::Leave, ..want };
        let n = emit_control::<Slbn>(3, Direction::Downstream, &leave, &mut buf).unwrap();
        let t2 = Time(20_000_000);
        let out = through(&mut f, t2, 0, &datagram(S, D, 40_000, SESSION_UDP_PORT, &buf[..n]));
        let mut want = leave;
        for k in 0..3 {
            tasks[k as usize].on_packet(t2, hop(k, Direction::Downstream), &mut want);
        }
        assert_eq!(body(&out[0].1).1, want);
        for t in &tasks {
            assert_eq!((t.n, t.nr), (0, 0), "the session left every link");
        }
        assert_eq!(f.sessions.as_ref().unwrap().check(), Ok(0), "no body left in the router");
        assert_eq!(f.in_flight(), 0);
    }

    /// Data datagrams are billed at their length on the wire and never reach a task; a control
    /// datagram of a protocol the scenario does not run is forwarded untouched as plain IP.
    #[test]
    fn data_and_foreign_protocols_pass_untouched() {
        let mut f = fabric();
        let mut data = vec![0u8; 1000 - 28];
        SessionHeader { kind: SessionKind::Data, proto: 1, session: 0, body_len: 0 }.emit(&mut data).unwrap();
        let pkt = datagram(S, D, 40_000, SESSION_UDP_PORT, &data);
        let out = through(&mut f, Time(0), 0, &pkt);
        assert_eq!(out, vec![(1, pkt.clone())]);
        assert_eq!(f.links[0].stats.bytes_in, 1000);
        let rm = xcc_core::session::rm_cell::RmCell { kind: xcc_core::session::rm_cell::RmKind::Rm, ccr: 0.0, er: 1e6 };
        let mut buf = [0u8; 64];
        let n = emit_control::<xcc_core::algorithms::bfyz::Bfyz>(0, Direction::Downstream, &rm, &mut buf).unwrap();
        let pkt = datagram(S, D, 40_000, SESSION_UDP_PORT, &buf[..n]);
        let out = through(&mut f, Time(200_000_000), 0, &pkt);
        assert_eq!(out, vec![(1, pkt.clone())]);
        let st = &f.sessions.as_ref().unwrap().stats;
        assert_eq!((st.data_read, st.control_read, st.malformed), (1, 0, 1));
    }
}
