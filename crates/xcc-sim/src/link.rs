//! A directed link in virtual time: the FIFO, the transmitter and the propagation pipe in one
//! ring buffer.
//!
//! On arrival a packet's transmission start is known at once (`max(now, busy_until)`), so the
//! link schedules nothing per packet but its delivery at the far end: one event per
//! packet-hop. Departures (transmission starts) are reported to the link algorithm lazily, in
//! time order, before anything else touches the link — exactly the call sequence a
//! two-event model would make, at half the events. Serialisation time is exact: the remainder
//! of `bits * 1e9 / rate` carries over while the link stays busy.

use std::collections::VecDeque;

use xcc_core::link::{AnyLinkAlgorithm, LinkAlgorithm, QueueView, Verdict};
use xcc_core::rng::{uniform01, Pcg64Mcg};
use xcc_core::wire::Ecn;
use xcc_core::{Dur, FlowId, Packet, Time};

use crate::topology::Route;

/// A packet in the simulator: the core packet plus where it is on its route.
#[derive(Copy, Clone, Debug, Default)]
pub struct SimPacket {
    pub pkt: Packet,
    pub route: Route,
    /// Index in `route` of the link the packet is on (or about to enter).
    pub hop: u32,
}

/// One packet on the link: waiting, in transmission, or propagating.
#[derive(Copy, Clone, Debug)]
pub struct PipeEntry {
    pub pkt: u32,
    pub bytes: u32,
    pub is_data: bool,
    /// Extra propagation delay drawn for this packet (the link's `jitter`), in ns.
    pub jitter_ns: u32,
    pub start: Time,
    pub end: Time,
}

/// Counters of one link direction.
#[derive(Clone, Debug, Default)]
pub struct LinkStats {
    pub packets_in: u64,
    pub bytes_in: u64,
    pub packets_out: u64,
    pub bytes_out: u64,
    pub data_bytes_out: u64,
    /// Drops by the algorithm or the buffer.
    pub drops: u64,
    pub drop_bytes: u64,
    /// Random losses (the link's `loss` probability).
    pub losses: u64,
    pub loss_bytes: u64,
    pub marks: u64,
    pub delivered_packets: u64,
    pub delivered_bytes: u64,
    /// Time integral of the waiting bytes / packets (byte-ns, packet-ns), for exact means.
    pub queue_byte_ns: u128,
    pub queue_packet_ns: u128,
    pub max_queue_bytes: u64,
    /// Sum over transmitted packets of their waiting time.
    pub wait_ns: u128,
}

pub struct SimLink {
    pub from: u32,
    pub to: u32,
    pub rate_bps: u64,
    pub delay: Dur,
    pub max_packets: u64,
    pub max_bytes: u64,
    pub loss: f64,
    /// Upper bound of the per-packet propagation jitter (0: none).
    pub jitter_ns: u32,
    pub algo: AnyLinkAlgorithm,
    wants_dequeue: bool,
    /// Something must see each departure (the algorithm's `on_dequeue`, or a capture): one
    /// flag, so a link with neither pays a single predictable branch per departure, as before
    /// captures existed.
    departure_hooks: bool,
    /// Copies of the departing packets with their transmission start, when capturing.
    capture: Option<Vec<(Time, Packet)>>,
    /// The algorithm always queues and never looks at the queue (DropTail): skip building the
    /// queue view for it.
    passive: bool,
    pub pipe: VecDeque<PipeEntry>,
    /// Entries at the front of `pipe` whose transmission has started.
    started: usize,
    busy_until: Time,
    busy_frac: u64,
    pub waiting_bytes: u64,
    pub waiting_packets: u64,
    last_change: Time,
    pub stats: LinkStats,
    pub rng: Pcg64Mcg,
    /// Algorithm timer currently in the event queue (`NEVER` if none).
    pub timer_at: Time,
    /// Serialisation time of the last two packet sizes seen, as (bytes, whole ns, remainder
    /// in 1/rate ns): saves a 64-bit division per packet (sizes repeat: data and ACKs).
    tx_cache: [(u32, u64, u64); 2],
}

/// Result of offering a packet to a link.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Offer {
    /// Dropped (by the algorithm, the buffer or random loss); the caller frees the packet.
    Dropped,
    /// Queued; `first` is true when the pipe was empty (the caller schedules its delivery).
    Queued { first: bool },
}

impl SimLink {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        from: u32,
        to: u32,
        rate_bps: u64,
        delay: Dur,
        max_packets: u64,
        max_bytes: u64,
        loss: f64,
        algo: AnyLinkAlgorithm,
        rng: Pcg64Mcg,
    ) -> SimLink {
        let wants_dequeue = algo.wants_dequeue();
        let passive = algo.is_passive();
        SimLink {
            from,
            to,
            rate_bps,
            delay,
            max_packets,
            max_bytes,
            loss,
            jitter_ns: 0,
            algo,
            wants_dequeue,
            departure_hooks: wants_dequeue,
            capture: None,
            passive,
            pipe: VecDeque::with_capacity(64),
            started: 0,
            busy_until: Time::ZERO,
            busy_frac: 0,
            waiting_bytes: 0,
            waiting_packets: 0,
            last_change: Time::ZERO,
            stats: LinkStats::default(),
            rng,
            timer_at: Time::NEVER,
            tx_cache: [(0, 0, 0); 2],
        }
    }

    #[inline]
    fn integrate(&mut self, t: Time) {
        let dt = (t.as_ns() - self.last_change.as_ns()) as u128;
        self.stats.queue_byte_ns += self.waiting_bytes as u128 * dt;
        self.stats.queue_packet_ns += self.waiting_packets as u128 * dt;
        self.last_change = t;
    }

    #[inline]
    fn depart(&mut self, e: PipeEntry, arena: &mut [SimPacket]) {
        self.stats.packets_out += 1;
        self.stats.bytes_out += e.bytes as u64;
        if e.is_data {
            self.stats.data_bytes_out += e.bytes as u64;
        }
        if self.departure_hooks {
            self.on_departure_hooks(e, arena);
        }
    }

    /// The algorithm's dequeue hook, then the capture (so it records the stamped packet).
    #[inline]
    fn on_departure_hooks(&mut self, e: PipeEntry, arena: &mut [SimPacket]) {
        if self.wants_dequeue {
            self.algo.on_dequeue(e.start, &mut arena[e.pkt as usize].pkt, self.waiting_bytes);
        }
        if let Some(c) = self.capture.as_mut() {
            c.push((e.start, arena[e.pkt as usize].pkt));
        }
    }

    /// Starts recording every packet whose transmission starts on this link (see `capture`).
    pub fn start_capture(&mut self) {
        self.capture.get_or_insert_with(Vec::new);
        self.departure_hooks = true;
    }

    /// True between `start_capture` and `take_capture`.
    pub fn is_capturing(&self) -> bool {
        self.capture.is_some()
    }

    /// The packets recorded since `start_capture`, in departure order (empty if none).
    pub fn take_capture(&mut self) -> Vec<(Time, Packet)> {
        self.capture.take().unwrap_or_default()
    }

    /// Reports, in order, every transmission that starts at or before `t`.
    #[inline(always)]
    pub fn advance(&mut self, t: Time, arena: &mut [SimPacket]) {
        // The common case (nothing waiting, or the next start is later) costs one comparison.
        match self.pipe.get(self.started) {
            Some(e) if e.start <= t => self.advance_slow(t, arena),
            _ => {}
        }
    }

    #[inline(never)]
    fn advance_slow(&mut self, t: Time, arena: &mut [SimPacket]) {
        while self.started < self.pipe.len() {
            let e = self.pipe[self.started];
            if e.start > t {
                break;
            }
            self.integrate(e.start);
            self.waiting_bytes -= e.bytes as u64;
            self.waiting_packets -= 1;
            self.started += 1;
            self.depart(e, arena);
        }
    }

    /// Offers packet `idx` to the link at `now`.
    #[inline]
    pub fn offer(&mut self, now: Time, idx: u32, arena: &mut [SimPacket]) -> Offer {
        self.advance(now, arena);
        let bytes = arena[idx as usize].pkt.wire_bytes;
        self.stats.packets_in += 1;
        self.stats.bytes_in += bytes as u64;
        if self.loss > 0.0 && uniform01(&mut self.rng) < self.loss {
            self.stats.losses += 1;
            self.stats.loss_bytes += bytes as u64;
            return Offer::Dropped;
        }
        // The algorithm gets the arriving packet and, through the view, the rest of the arena
        // (it may mark queued packets): split the arena around the arriving packet.
        let verdict = if self.passive {
            Verdict::Queue
        } else {
            let idle_since = (self.started == self.pipe.len() && now >= self.busy_until).then_some(self.busy_until);
            let (before, rest) = arena.split_at_mut(idx as usize);
            let (slot, after) = rest.split_first_mut().expect("packet index in arena");
            let mut view = View {
                pipe: &self.pipe,
                started: self.started,
                waiting_bytes: self.waiting_bytes,
                waiting_packets: self.waiting_packets,
                idle_since,
                rate_bps: self.rate_bps,
                before,
                after,
                split: idx,
                marks: 0,
            };
            let verdict = self.algo.on_enqueue(now, &mut slot.pkt, &mut view);
            // CE set on waiting packets through the view (MarkMax) counts as marks too.
            self.stats.marks += view.marks;
            verdict
        };
        let over = self.waiting_packets + 1 > self.max_packets || self.waiting_bytes + bytes as u64 > self.max_bytes;
        if verdict == Verdict::Drop || over {
            self.stats.drops += 1;
            self.stats.drop_bytes += bytes as u64;
            return Offer::Dropped;
        }
        let pkt = &mut arena[idx as usize].pkt;
        if verdict == Verdict::Mark && pkt.ecn.is_ect() {
            pkt.ecn = Ecn::Ce;
            self.stats.marks += 1;
        }
        let is_data = pkt.is_data();

        let start = if now > self.busy_until {
            self.busy_frac = 0;
            now
        } else {
            self.busy_until
        };
        // Exact serialisation: carry the sub-nanosecond remainder while the link stays busy.
        let (whole, rem) = self.tx_time(bytes);
        let mut frac = self.busy_frac + rem;
        let mut ns = whole;
        if frac >= self.rate_bps {
            frac -= self.rate_bps;
            ns += 1;
        }
        self.busy_frac = frac;
        let end = Time(start.as_ns() + ns);
        self.busy_until = end;
        self.stats.wait_ns += (start.as_ns() - now.as_ns()) as u128;
        let jitter_ns = if self.jitter_ns == 0 { 0 } else { self.draw_jitter(end) };
        let entry = PipeEntry { pkt: idx, bytes, is_data, jitter_ns, start, end };
        self.pipe.push_back(entry);
        if start <= now {
            self.started += 1;
            self.depart(entry, arena);
        } else {
            self.integrate(now);
            self.waiting_bytes += bytes as u64;
            self.waiting_packets += 1;
            self.stats.max_queue_bytes = self.stats.max_queue_bytes.max(self.waiting_bytes);
        }
        Offer::Queued { first: self.pipe.len() == 1 }
    }

    /// `bytes * 8e9 / rate` as whole nanoseconds and remainder.
    #[inline]
    fn tx_time(&mut self, bytes: u32) -> (u64, u64) {
        for &(b, whole, rem) in &self.tx_cache {
            if b == bytes {
                return (whole, rem);
            }
        }
        let num = bytes as u64 * 8_000_000_000;
        let entry = (bytes, num / self.rate_bps, num % self.rate_bps);
        self.tx_cache = [entry, self.tx_cache[0]];
        (entry.1, entry.2)
    }

    /// A uniform draw in [0, jitter], raised if needed so that the packet does not arrive
    /// before the one ahead of it (links stay FIFO).
    fn draw_jitter(&mut self, end: Time) -> u32 {
        let draw = (uniform01(&mut self.rng) * (self.jitter_ns as f64 + 1.0)) as u64;
        let earliest = self.pipe.back().map_or(0, |b| (b.end + self.delay).as_ns() + b.jitter_ns as u64);
        let own = (end + self.delay).as_ns();
        (draw.max(earliest.saturating_sub(own))).min(u32::MAX as u64) as u32
    }

    /// When the head of the pipe reaches the far end.
    #[inline]
    pub fn next_delivery(&self) -> Option<Time> {
        self.pipe.front().map(|e| e.end + self.delay + Dur(e.jitter_ns as u64))
    }

    /// Removes the head of the pipe at its delivery time `t`; returns the packet index.
    #[inline]
    pub fn deliver(&mut self, t: Time, arena: &mut [SimPacket]) -> u32 {
        self.advance(t, arena);
        let e = self.pipe.pop_front().expect("delivery event with an empty pipe");
        debug_assert_eq!(e.end + self.delay + Dur(e.jitter_ns as u64), t);
        self.started -= 1;
        self.stats.delivered_packets += 1;
        self.stats.delivered_bytes += e.bytes as u64;
        e.pkt
    }

    /// Brings the queue integrals up to `t` (for sampling and the end of the run).
    pub fn settle(&mut self, t: Time, arena: &mut [SimPacket]) {
        self.advance(t, arena);
        self.integrate(t);
    }

    /// Bytes on the link (waiting, in transmission or propagating).
    pub fn bytes_in_pipe(&self) -> u64 {
        self.pipe.iter().map(|e| e.bytes as u64).sum()
    }

    /// Recounts the waiting packets from the pipe (for the end-of-run invariant check).
    pub fn recount_waiting(&self) -> (u64, u64) {
        self.pipe.iter().skip(self.started).fold((0, 0), |(b, p), e| (b + e.bytes as u64, p + 1))
    }
}

/// The queue as a link algorithm sees it.
struct View<'a> {
    pipe: &'a VecDeque<PipeEntry>,
    started: usize,
    waiting_bytes: u64,
    waiting_packets: u64,
    idle_since: Option<Time>,
    rate_bps: u64,
    /// The arena without the arriving packet: `before` ends and `after` starts around `split`.
    before: &'a mut [SimPacket],
    after: &'a mut [SimPacket],
    split: u32,
    /// Waiting packets marked through `mark_first_of` during this call.
    marks: u64,
}

impl View<'_> {
    fn packet(&mut self, i: u32) -> &mut Packet {
        if i < self.split {
            &mut self.before[i as usize].pkt
        } else {
            &mut self.after[(i - self.split - 1) as usize].pkt
        }
    }
}

impl QueueView for View<'_> {
    fn backlog_bytes(&self) -> u64 {
        self.waiting_bytes
    }
    fn backlog_packets(&self) -> u32 {
        self.waiting_packets as u32
    }
    fn idle_since(&self) -> Option<Time> {
        self.idle_since
    }
    fn rate_bps(&self) -> u64 {
        self.rate_bps
    }
    fn visit_from_tail(&self, f: &mut dyn FnMut(FlowId, u32) -> bool) {
        for e in self.pipe.iter().skip(self.started).rev() {
            let flow = if e.pkt < self.split {
                self.before[e.pkt as usize].pkt.flow
            } else {
                self.after[(e.pkt - self.split - 1) as usize].pkt.flow
            };
            if !f(flow, e.bytes) {
                break;
            }
        }
    }
    fn mark_first_of(&mut self, flow: FlowId) -> bool {
        for k in self.started..self.pipe.len() {
            let e = self.pipe[k];
            let p = self.packet(e.pkt);
            if p.flow == flow {
                if p.ecn.is_ect() && p.ecn != Ecn::Ce {
                    p.ecn = Ecn::Ce;
                    self.marks += 1;
                    return true;
                }
                return false;
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xcc_core::link::DropTail;
    use xcc_core::rng::component_rng;

    fn link(jitter_ns: u32) -> SimLink {
        let algo = AnyLinkAlgorithm::DropTail(DropTail::default());
        let mut l =
            SimLink::new(0, 1, 1_000_000_000, Dur::from_ms(1), u64::MAX, u64::MAX, 0.0, algo, component_rng(1, 4, 0));
        l.jitter_ns = jitter_ns;
        l
    }

    fn packet(bytes: u32) -> SimPacket {
        SimPacket { pkt: Packet { wire_bytes: bytes, ..Packet::default() }, ..SimPacket::default() }
    }

    /// 1500 B at 1 Gb/s take 12 us; back-to-back packets start when the previous one ends, the
    /// serialisation remainder carries over exactly, and the waiting count excludes the packet
    /// in service.
    #[test]
    fn virtual_time_fifo_serialises_exactly() {
        let mut l = link(0);
        let mut arena: Vec<SimPacket> = (0..3).map(|_| packet(1500)).collect();
        for i in 0..3 {
            assert!(matches!(l.offer(Time::ZERO, i, &mut arena), Offer::Queued { .. }));
        }
        let ends: Vec<u64> = l.pipe.iter().map(|e| e.end.as_ns()).collect();
        assert_eq!(ends, vec![12_000, 24_000, 36_000]);
        assert_eq!(l.waiting_packets, 2, "one in service, two waiting");
        assert_eq!(l.next_delivery(), Some(Time(12_000) + Dur::from_ms(1)));
        l.advance(Time(12_000), &mut arena);
        assert_eq!(l.waiting_packets, 1);
    }

    /// With jitter every packet arrives within [end + delay, end + delay + jitter] unless it
    /// would overtake the one ahead, and deliveries stay in order.
    #[test]
    fn jitter_is_bounded_and_keeps_order() {
        let jitter = 50_000;
        let mut l = link(jitter);
        let mut arena: Vec<SimPacket> = (0..2000).map(|k| packet(if k % 3 == 0 { 40 } else { 1500 })).collect();
        let mut now = Time::ZERO;
        for i in 0..2000 {
            now += Dur(if i % 7 == 0 { 30_000 } else { 500 });
            l.offer(now, i, &mut arena);
        }
        let mut last = 0;
        let mut raised = 0;
        let mut spread = 0;
        for e in &l.pipe {
            let base = (e.end + l.delay).as_ns();
            let at = base + e.jitter_ns as u64;
            assert!(at >= last, "packet {} overtakes the one ahead", e.pkt);
            if e.jitter_ns as u64 > jitter as u64 {
                assert_eq!(at, last, "jitter above the bound only to keep FIFO order");
                raised += 1;
            }
            spread = spread.max(e.jitter_ns);
            last = at;
        }
        assert!(spread > jitter / 2, "draws cover the range (max {spread})");
        assert!(raised < 2000);
    }
}
