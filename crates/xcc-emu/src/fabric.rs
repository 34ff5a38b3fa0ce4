//! The router without I/O: packets in (bytes from a host's TUN, with the time they were read),
//! packets out (bytes for a host's TUN, when they are due). Classification, routing, the links
//! in virtual time and the rewrites live here, so they can be tested without namespaces.

use std::collections::HashMap;

use xcc_core::wire::Ecn;
use xcc_core::{FlowId, Packet, Time};

use crate::carrier::{plain_kind, Carriers, Found};
use crate::ipv4::{self, Ipv4, Ipv4Error};
use crate::link::{EmuLink, InFlight};

/// Largest packet the router handles (the TUN MTU is 1500; room to spare).
pub const BUF_LEN: usize = 2048;

/// Router-wide counters: every packet read ends in exactly one of `forwarded`, `dropped_*`,
/// `not_ipv4`, `bad_ipv4`, `bad_ipv4_checksum`, `unroutable` or is still in flight.
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
    /// the segments it was cut into, see [`crate::gso`]).
    pub super_packets: u64,
    /// Reads whose `virtio_net_hdr` the router could not turn into packets (dropped).
    pub bad_offload: u64,
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
        }
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
        if !claimed {
            let payload = l4.map_or(ip.total_len > ip.header_len, |l| ip.header_len + l.payload_offset < ip.total_len);
            pkt.seg.kind = plain_kind(payload);
            pkt.seg.payload_bytes = (ip.total_len - ip.header_len) as u32;
        }
        let f = InFlight { slot, pkt, read_ecn: ip.ecn, read_cc: pkt.cc, carrier, route, hop: 0, entered: now };
        self.offer(now, f);
    }

    fn offer(&mut self, now: Time, f: InFlight) {
        let link = self.routes[f.route as usize][f.hop as usize] as usize;
        if let Err(slot) = self.links[link].offer(now, f) {
            self.stats.dropped_by_links += 1;
            self.release(slot);
        }
    }

    /// The earliest instant anything is due (a delivery or a control interval).
    pub fn next_event(&self) -> Time {
        self.links.iter().map(|l| l.next_event()).min().unwrap_or(Time::NEVER)
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
            let Some((t, i)) = best else { break };
            let link = &mut self.links[i];
            link.tick(t);
            let Some((mut f, at)) = link.pop_due(t) else { continue };
            f.hop += 1;
            if (f.hop as usize) < self.routes[f.route as usize].len() {
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
