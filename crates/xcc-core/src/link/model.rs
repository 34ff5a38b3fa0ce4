//! The one link model every driver uses: a directed link in virtual time, the FIFO, the
//! transmitter and the propagation pipe in one ring buffer.
//!
//! On arrival a packet's transmission start is known at once (`max(now, busy_until)`), so the
//! driver schedules nothing per packet but its delivery at the far end: one event per
//! packet-hop. Departures (transmission starts) are reported to the link algorithm lazily, in
//! time order, before anything else touches the link — exactly the call sequence a two-event
//! model would make, at half the events. Serialisation time is exact: the remainder of
//! `bits * 1e9 / rate` carries over while the link stays busy. The backlog the algorithm sees is
//! the packets whose transmission has not started (ns-2 convention).
//!
//! The model is generic over what the driver carries on the link (`T`): the simulator carries
//! indices into its packet arena, the emulator carries the packet's metadata itself. A
//! [`PacketStore`] tells the model where the [`Packet`] of an item is.

use std::collections::VecDeque;

use crate::link::{AnyLinkAlgorithm, LinkAlgorithm, QueueView, Verdict};
use crate::prefetch::prefetch_bytes;
use crate::rng::{uniform01, Pcg64Mcg};
use crate::wire::Ecn;
use crate::{Dur, FlowId, Packet, Time};

// PFC's pause and resume of the transmitter (a child module: it re-times the pipe's entries).
#[path = "pfc_gate.rs"]
mod pfc_gate;
pub use pfc_gate::PauseStats;

/// Where the packets of carried items live.
pub trait Packets<T> {
    fn packet<'a>(&'a self, item: &'a T) -> &'a Packet;
    fn packet_mut<'a>(&'a mut self, item: &'a mut T) -> &'a mut Packet;
    /// The item's size on the link. A store whose items carry it overrides this, so that a
    /// passive link never reads the packet itself (one memory access less per packet-hop).
    #[inline(always)]
    fn wire_bytes(&self, item: &T) -> u32 {
        self.packet(item).wire_bytes
    }
    /// Whether the item carries flow data ([`Packet::is_data`]); overridable as `wire_bytes`.
    #[inline(always)]
    fn is_data(&self, item: &T) -> bool {
        self.packet(item).is_data()
    }
}

/// A driver's packet store: [`Packets`], and the arriving packet apart from the others, so the
/// algorithm can hold it while it looks at (and marks) the waiting ones — with no copy.
pub trait PacketStore<T>: Packets<T> {
    /// The store without the arriving item's packet.
    type Rest<'a>: Packets<T>
    where
        Self: 'a,
        T: 'a;
    fn split<'a>(&'a mut self, item: &'a mut T) -> (&'a mut Packet, Self::Rest<'a>);
}

/// The store for items that hold their packet themselves.
pub struct Inline;

impl<T: AsRef<Packet> + AsMut<Packet>> Packets<T> for Inline {
    #[inline]
    fn packet<'a>(&'a self, item: &'a T) -> &'a Packet {
        item.as_ref()
    }
    #[inline]
    fn packet_mut<'a>(&'a mut self, item: &'a mut T) -> &'a mut Packet {
        item.as_mut()
    }
}

impl<T: AsRef<Packet> + AsMut<Packet>> PacketStore<T> for Inline {
    type Rest<'a>
        = Inline
    where
        T: 'a;
    #[inline]
    fn split<'a>(&'a mut self, item: &'a mut T) -> (&'a mut Packet, Inline) {
        (item.as_mut(), Inline)
    }
}

/// One packet on the link: waiting, in transmission, or propagating.
#[derive(Copy, Clone, Debug)]
pub struct PipeEntry<T> {
    pub item: T,
    pub bytes: u32,
    pub is_data: bool,
    /// Extra propagation delay drawn for this packet (the link's `jitter`), in ns.
    pub jitter_ns: u32,
    pub start: Time,
    pub end: Time,
}

/// Counters of one link direction. `repr(C)`: the ones every packet updates come first, so
/// that they share the fewest cache lines (see [`LinkModel`]).
#[derive(Clone, Debug, Default)]
#[repr(C)]
pub struct LinkStats {
    pub packets_in: u64,
    pub bytes_in: u64,
    /// Packets and bytes whose transmission started.
    pub packets_out: u64,
    pub bytes_out: u64,
    pub data_bytes_out: u64,
    pub delivered_packets: u64,
    pub delivered_bytes: u64,
    /// Sum over transmitted packets of their waiting time.
    pub wait_ns: u128,
    /// Time integral of the waiting bytes / packets (byte-ns, packet-ns), for exact means.
    pub queue_byte_ns: u128,
    pub queue_packet_ns: u128,
    pub max_queue_bytes: u64,
    pub max_queue_packets: u64,
    /// Drops by the algorithm or the buffer.
    pub drops: u64,
    pub drop_bytes: u64,
    /// Random losses (the link's `loss` probability).
    pub losses: u64,
    pub loss_bytes: u64,
    pub marks: u64,
}

/// Result of offering a packet to a link.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Offer<T> {
    /// Dropped (by the algorithm, the buffer or random loss); the item is handed back.
    Dropped(T),
    /// Queued; `first` is true when the pipe was empty (the caller schedules its delivery).
    Queued { first: bool },
}

/// A directed link: rate, delay, buffer, its algorithm, and the packets on it.
///
/// `repr(C)` keeps the fields in this order: what every packet touches (the pipe, the virtual
/// clock, the limits, the size cache, then the counters) is packed at the front, the algorithm
/// and the rarely used parts behind. With 10^5-10^6 links (seed 004's Large network) a link is
/// rarely in cache when a packet reaches it, and each cache line saved is a miss saved per hop.
#[repr(C)]
pub struct LinkModel<T> {
    pipe: VecDeque<PipeEntry<T>>,
    /// Entries at the front of `pipe` whose transmission has started.
    started: usize,
    busy_until: Time,
    busy_frac: u64,
    waiting_bytes: u64,
    waiting_packets: u64,
    last_change: Time,
    pub rate_bps: u64,
    pub delay: Dur,
    pub max_packets: u64,
    pub max_bytes: u64,
    /// Probability that an arriving packet is lost (0: never; no draw is made).
    pub loss: f64,
    /// Upper bound of the per-packet propagation jitter (0: none; no draw is made).
    pub jitter_ns: u32,
    /// The algorithm always queues and never looks at the queue (DropTail): skip building the
    /// queue view for it.
    passive: bool,
    /// PFC XOFF holds the transmitter: the waiting packets have no start until XON (`pfc_gate`).
    paused: bool,
    /// Something must see each departure (the algorithm's `on_dequeue`, or a capture): one
    /// flag, so a link with neither pays a single predictable branch per departure.
    departure_hooks: bool,
    wants_dequeue: bool,
    /// Serialisation time of the last two packet sizes seen, as (bytes, whole ns, remainder
    /// in 1/rate ns): saves a 64-bit division per packet (sizes repeat: data and ACKs).
    tx_cache: [(u32, u64, u64); 2],
    pub stats: LinkStats,
    pub algo: AnyLinkAlgorithm,
    rng: Pcg64Mcg,
    /// Copies of the departing packets with their transmission start, when capturing.
    capture: Option<Vec<(Time, Packet)>>,
    /// Time paused by PFC and pause frames received (`pfc_gate`).
    pub pause: PauseStats,
}

impl<T: Copy> LinkModel<T> {
    /// A link with no random loss and no jitter; `rng` is drawn from only if they are set.
    pub fn new(
        rate_bps: u64,
        delay: Dur,
        max_packets: u64,
        max_bytes: u64,
        algo: AnyLinkAlgorithm,
        rng: Pcg64Mcg,
    ) -> LinkModel<T> {
        let wants_dequeue = algo.wants_dequeue();
        let passive = algo.is_passive();
        LinkModel {
            rate_bps,
            delay,
            max_packets,
            max_bytes,
            loss: 0.0,
            jitter_ns: 0,
            algo,
            wants_dequeue,
            departure_hooks: wants_dequeue,
            capture: None,
            passive,
            paused: false,
            pause: PauseStats::default(),
            // Grown on demand: most of a large network's links never hold more than a few packets.
            pipe: VecDeque::new(),
            started: 0,
            busy_until: Time::ZERO,
            busy_frac: 0,
            waiting_bytes: 0,
            waiting_packets: 0,
            last_change: Time::ZERO,
            stats: LinkStats::default(),
            rng,
            tx_cache: [(0, 0, 0); 2],
        }
    }

    /// Starts loading the link's front part, what every packet touches (everything before the
    /// algorithm): a driver calls it for the link of an event it will handle soon.
    #[inline(always)]
    pub fn prefetch(&self) {
        prefetch_bytes(self, core::mem::offset_of!(Self, algo));
    }

    /// Starts loading the pipe entries a delivery reads: the head and the next to start
    /// transmitting. Their addresses come from the link's front part, so a driver calls this
    /// once that is in cache (an event after [`LinkModel::prefetch`]).
    #[inline(always)]
    pub fn prefetch_pipe(&self) {
        if let Some(e) = self.pipe.front() {
            prefetch_bytes(e, 1);
        }
        if let Some(e) = self.pipe.get(self.started) {
            prefetch_bytes(e, 1);
        }
    }

    /// Bytes waiting (transmission not started).
    #[inline]
    pub fn waiting_bytes(&self) -> u64 {
        self.waiting_bytes
    }

    /// Packets waiting (transmission not started).
    #[inline]
    pub fn waiting_packets(&self) -> u64 {
        self.waiting_packets
    }

    /// Packets on the link (waiting, in transmission or propagating).
    pub fn pipe_len(&self) -> usize {
        self.pipe.len()
    }

    /// The packets on the link, head first.
    pub fn pipe(&self) -> impl Iterator<Item = &PipeEntry<T>> {
        self.pipe.iter()
    }

    #[inline]
    fn integrate(&mut self, t: Time) {
        let dt = (t.as_ns() - self.last_change.as_ns()) as u128;
        self.stats.queue_byte_ns += self.waiting_bytes as u128 * dt;
        self.stats.queue_packet_ns += self.waiting_packets as u128 * dt;
        self.last_change = t;
    }

    #[inline]
    fn depart<S: PacketStore<T> + ?Sized>(&mut self, k: usize, bytes: u32, is_data: bool, store: &mut S) {
        self.stats.packets_out += 1;
        self.stats.bytes_out += bytes as u64;
        if is_data {
            self.stats.data_bytes_out += bytes as u64;
        }
        if self.departure_hooks {
            self.on_departure_hooks(k, store);
        }
    }

    /// The algorithm's dequeue hook, then the capture (so it records the stamped packet).
    #[inline]
    fn on_departure_hooks<S: PacketStore<T> + ?Sized>(&mut self, k: usize, store: &mut S) {
        let e = &mut self.pipe[k];
        let start = e.start;
        let pkt = store.packet_mut(&mut e.item);
        if self.wants_dequeue {
            self.algo.on_dequeue(start, pkt, self.waiting_bytes);
        }
        if let Some(c) = self.capture.as_mut() {
            c.push((start, *pkt));
        }
    }

    /// Starts recording every packet whose transmission starts on this link.
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
    pub fn advance<S: PacketStore<T> + ?Sized>(&mut self, t: Time, store: &mut S) {
        // The common case (nothing waiting, or the next start is later) costs one comparison.
        match self.pipe.get(self.started) {
            Some(e) if e.start <= t => self.advance_slow(t, store),
            _ => {}
        }
    }

    #[inline(never)]
    fn advance_slow<S: PacketStore<T> + ?Sized>(&mut self, t: Time, store: &mut S) {
        if self.paused {
            return; // held packets start at XON (`pfc_gate`)
        }
        while self.started < self.pipe.len() {
            let e = &self.pipe[self.started];
            if e.start > t {
                break;
            }
            let (start, bytes, is_data) = (e.start, e.bytes, e.is_data);
            self.integrate(start);
            self.waiting_bytes -= bytes as u64;
            self.waiting_packets -= 1;
            self.started += 1;
            self.depart(self.started - 1, bytes, is_data, store);
        }
    }

    /// Offers `item` to the link at `now`.
    #[inline]
    pub fn offer<S: PacketStore<T> + ?Sized>(&mut self, now: Time, mut item: T, store: &mut S) -> Offer<T> {
        self.advance(now, store);
        let bytes = store.wire_bytes(&item);
        self.stats.packets_in += 1;
        self.stats.bytes_in += bytes as u64;
        if self.loss > 0.0 && uniform01(&mut self.rng) < self.loss {
            self.stats.losses += 1;
            self.stats.loss_bytes += bytes as u64;
            return Offer::Dropped(item);
        }
        let verdict = if self.passive {
            Verdict::Queue
        } else {
            // The algorithm gets the arriving packet and, through the view, the waiting ones (it
            // may mark them): the store is split around the arriving packet.
            let idle_since = (self.started == self.pipe.len() && now >= self.busy_until).then_some(self.busy_until);
            let (pkt, rest) = store.split(&mut item);
            let mut view = View {
                pipe: &mut self.pipe,
                started: self.started,
                waiting_bytes: self.waiting_bytes,
                waiting_packets: self.waiting_packets,
                idle_since,
                rate_bps: self.rate_bps,
                store: rest,
                marks: 0,
            };
            let verdict = self.algo.on_enqueue(now, pkt, &mut view);
            // CE set on waiting packets through the view (MarkMax) counts as marks too.
            self.stats.marks += view.marks;
            verdict
        };
        let over = self.waiting_packets + 1 > self.max_packets || self.waiting_bytes + bytes as u64 > self.max_bytes;
        if verdict == Verdict::Drop || over {
            self.stats.drops += 1;
            self.stats.drop_bytes += bytes as u64;
            return Offer::Dropped(item);
        }
        if verdict == Verdict::Mark {
            let pkt = store.packet_mut(&mut item);
            if pkt.ecn.is_ect() {
                pkt.ecn = Ecn::Ce;
                self.stats.marks += 1;
            }
        }
        let is_data = store.is_data(&item);
        if self.paused {
            return self.hold(now, item, bytes, is_data);
        }

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
        self.pipe.push_back(PipeEntry { item, bytes, is_data, jitter_ns, start, end });
        if start <= now {
            self.started += 1;
            self.depart(self.pipe.len() - 1, bytes, is_data, store);
        } else {
            self.integrate(now);
            self.waiting_bytes += bytes as u64;
            self.waiting_packets += 1;
            self.stats.max_queue_bytes = self.stats.max_queue_bytes.max(self.waiting_bytes);
            self.stats.max_queue_packets = self.stats.max_queue_packets.max(self.waiting_packets);
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
        // A head held by PFC (no end yet) is scheduled at XON.
        self.pipe.front().filter(|e| e.end != Time::NEVER).map(|e| e.end + self.delay + Dur(e.jitter_ns as u64))
    }

    /// The item at the head of the pipe (the next to be delivered).
    #[inline(always)]
    pub fn head(&self) -> Option<T> {
        self.pipe.front().map(|e| e.item)
    }

    /// When the head of the pipe started (or starts) its transmission.
    pub fn head_start(&self) -> Option<Time> {
        self.pipe.front().map(|e| e.start)
    }

    /// Removes the head of the pipe at its delivery time `t`; returns the item.
    #[inline]
    pub fn deliver<S: PacketStore<T> + ?Sized>(&mut self, t: Time, store: &mut S) -> T {
        self.advance(t, store);
        debug_assert_eq!(self.next_delivery(), Some(t));
        self.pop_head()
    }

    /// Removes the head of the pipe, whose transmission must have been reported (`advance`).
    #[inline]
    pub fn pop_head(&mut self) -> T {
        debug_assert!(self.started > 0, "the head's transmission start was not reported");
        let e = self.pipe.pop_front().expect("delivery with an empty pipe");
        self.started -= 1;
        self.stats.delivered_packets += 1;
        self.stats.delivered_bytes += e.bytes as u64;
        e.item
    }

    /// Brings the queue integrals up to `t` (for sampling and the end of the run).
    pub fn settle<S: PacketStore<T> + ?Sized>(&mut self, t: Time, store: &mut S) {
        self.advance(t, store);
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
struct View<'a, T, S> {
    pipe: &'a mut VecDeque<PipeEntry<T>>,
    started: usize,
    waiting_bytes: u64,
    waiting_packets: u64,
    idle_since: Option<Time>,
    rate_bps: u64,
    store: S,
    /// Waiting packets marked through `mark_first_of` during this call.
    marks: u64,
}

impl<T, S: Packets<T>> QueueView for View<'_, T, S> {
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
            if !f(self.store.packet(&e.item).flow, e.bytes) {
                break;
            }
        }
    }
    fn mark_first_of(&mut self, flow: FlowId) -> bool {
        for k in self.started..self.pipe.len() {
            let p = self.store.packet_mut(&mut self.pipe[k].item);
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
    use crate::algorithms::droptail::{DropTail, DropTailConfig};
    use crate::algorithms::rcp::RcpHeader;
    use crate::algorithms::rcp::{RcpRouter, RcpRouterConfig};
    use crate::rng::component_rng;
    use crate::wire::{CongestionHeader, Segment, SegmentKind};

    /// An item that carries its packet (as the emulator's do).
    #[derive(Copy, Clone, Default)]
    struct Item(Packet);
    impl AsRef<Packet> for Item {
        fn as_ref(&self) -> &Packet {
            &self.0
        }
    }
    impl AsMut<Packet> for Item {
        fn as_mut(&mut self) -> &mut Packet {
            &mut self.0
        }
    }

    fn droptail() -> AnyLinkAlgorithm {
        AnyLinkAlgorithm::DropTail(DropTail::new(DropTailConfig::default()))
    }

    fn link(rate_bps: u64, delay: Dur, max_packets: u64, jitter_ns: u32) -> LinkModel<Item> {
        let mut l = LinkModel::new(rate_bps, delay, max_packets, u64::MAX, droptail(), component_rng(1, 4, 0));
        l.jitter_ns = jitter_ns;
        l
    }

    fn item(bytes: u32) -> Item {
        Item(Packet { wire_bytes: bytes, ..Packet::default() })
    }

    /// 1500 B at 1 Gb/s take 12 us; back-to-back packets start when the previous one ends, the
    /// serialisation remainder carries over exactly, and the waiting count excludes the packet
    /// in service.
    #[test]
    fn virtual_time_fifo_serialises_exactly() {
        let mut l = link(1_000_000_000, Dur::from_ms(1), u64::MAX, 0);
        for _ in 0..3 {
            assert!(matches!(l.offer(Time::ZERO, item(1500), &mut Inline), Offer::Queued { .. }));
        }
        let ends: Vec<u64> = l.pipe().map(|e| e.end.as_ns()).collect();
        assert_eq!(ends, vec![12_000, 24_000, 36_000]);
        assert_eq!(l.waiting_packets(), 2, "one in service, two waiting");
        assert_eq!(l.next_delivery(), Some(Time(12_000) + Dur::from_ms(1)));
        l.advance(Time(12_000), &mut Inline);
        assert_eq!(l.waiting_packets(), 1);
    }

    /// 1500 B at 10 Mbit/s is 1.2 ms; a buffer of 2 waiting packets drops the fourth of four
    /// back-to-back arrivals; an idle link starts the next packet at its arrival.
    #[test]
    fn buffer_check_and_idle_restart() {
        let mut l = link(10_000_000, Dur::from_ms(5), 2, 0);
        for _ in 0..3 {
            l.offer(Time(0), item(1500), &mut Inline);
        }
        assert!(matches!(l.offer(Time(0), item(1500), &mut Inline), Offer::Dropped(_)), "buffer of 2 is full");
        assert_eq!(l.next_delivery(), Some(Time(6_200_000)));
        l.deliver(Time(6_200_000), &mut Inline);
        assert_eq!(l.next_delivery(), Some(Time(7_400_000)));
        l.deliver(Time(7_400_000), &mut Inline);
        l.deliver(Time(8_600_000), &mut Inline);
        l.offer(Time(50_000_000), item(125), &mut Inline);
        assert_eq!(l.next_delivery(), Some(Time(50_000_000 + 100_000 + 5_000_000)));
        assert_eq!(l.stats.drops, 1);
    }

    /// 1 byte at 3 bit/s is 8/3 s: the remainder carries, so three bytes take exactly 8 s.
    #[test]
    fn remainder_carries_while_busy() {
        let mut l = link(3, Dur::ZERO, 10, 0);
        for _ in 0..3 {
            l.offer(Time(0), item(1), &mut Inline);
        }
        let ends: Vec<u64> = l.pipe().map(|e| e.end.as_ns()).collect();
        assert_eq!(ends, vec![2_666_666_666, 5_333_333_333, 8_000_000_000]);
    }

    /// A packet queued behind another starts its transmission while nothing touches the link;
    /// when it is delivered, it carries the stamp its link algorithm wrote at that start (RCP's
    /// rate, written on dequeue).
    #[test]
    fn a_packet_delivered_after_an_unobserved_start_carries_its_dequeue_stamp() {
        let rcp = RcpRouter::new(RcpRouterConfig::default(), 10_000_000, Time::ZERO, Dur::from_secs(1));
        let mut l: LinkModel<Item> = LinkModel::new(
            10_000_000,
            Dur::from_ms(5),
            10,
            u64::MAX,
            AnyLinkAlgorithm::Rcp(rcp),
            component_rng(1, 4, 0),
        );
        let data = || {
            let mut i = item(1500);
            i.0.seg = Segment { kind: SegmentKind::Data, payload_bytes: 1430, ..Segment::default() };
            i.0.cc = CongestionHeader::Rcp(RcpHeader::default());
            i
        };
        l.offer(Time(0), data(), &mut Inline);
        l.offer(Time(0), data(), &mut Inline);
        let want = CongestionHeader::Rcp(RcpHeader { rate: 0.05 * 10e6 / 8.0, rtt_us: 0 });
        for _ in 0..2 {
            let t = l.next_delivery().unwrap();
            assert_eq!(l.deliver(t, &mut Inline).0.cc, want);
        }
    }

    /// With jitter every packet arrives within [end + delay, end + delay + jitter] unless it
    /// would overtake the one ahead, and deliveries stay in order.
    #[test]
    fn jitter_is_bounded_and_keeps_order() {
        let jitter = 50_000;
        let mut l = link(1_000_000_000, Dur::from_ms(1), u64::MAX, jitter);
        let mut now = Time::ZERO;
        for i in 0..2000 {
            now += Dur(if i % 7 == 0 { 30_000 } else { 500 });
            l.offer(now, item(if i % 3 == 0 { 40 } else { 1500 }), &mut Inline);
        }
        let mut last = 0;
        let mut raised = 0;
        let mut spread = 0;
        for e in l.pipe() {
            let at = (e.end + l.delay).as_ns() + e.jitter_ns as u64;
            assert!(at >= last, "a packet overtakes the one ahead");
            if e.jitter_ns > jitter {
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
