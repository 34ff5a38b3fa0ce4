//! Two endpoints and a link algorithm on a virtual clock, with no simulator.
//!
//! [`Pair`] is to xcc-core what quinn-proto's test `Pair` is to quinn: the smallest driver that
//! exercises the sans-IO state machines end to end, and the proof that they do not depend on the
//! simulator. One [`Sender`] and one [`Receiver`] are joined by
//!
//! ```text
//!  Sender ──[loss hook]──▶ FIFO + LinkAlgorithm ──(rate_bps, delay)──▶ Receiver
//!     ▲                                                                   │
//!     └────────────────────────── return path (delay only) ◀──────────────┘
//! ```
//!
//! The forward link is modelled in virtual time: a packet starts its transmission at
//! `start = max(arrival, busy_until)`, occupies the link until `busy_until = start + tx_time`,
//! and arrives `delay` later. The backlog the link algorithm sees counts packets whose
//! transmission has not started (ns-2 convention, see [`crate::link::QueueView`]). A packet is
//! dropped when the algorithm says `Drop` or when `buffer_packets` are already waiting; `Mark`
//! sets CE (a `Mark` of a packet that is not ECN-capable drops it, RFC 3168 section 5).
//!
//! Events at the same instant run in a fixed order (queued packet events in insertion order,
//! then the link algorithm's timer, the receiver's, the sender's), so a run is deterministic.
//! With `trace` on, every send, drop, mark, arrival and ACK is recorded with its time for tests
//! to assert on.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

use crate::host::{AnyController, AnyEchoer, Controller, PlainEcho};
use crate::link::{AnyLinkAlgorithm, LinkAlgorithm, QueueView, Verdict};
use crate::packet::{FlowId, Packet};
use crate::rng::{component_rng, kind, uniform01, Pcg64Mcg};
use crate::time::{tx_time, Dur, Time};
use crate::transport::{Receiver, ReceiverStats, Sender, SenderStats, TransportConfig};
use crate::wire::{Ecn, Flags};

/// The forward (data) link.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct LinkConfig {
    /// Capacity in bit/s.
    pub rate_bps: u64,
    /// One-way propagation delay.
    pub delay: Dur,
    /// Packets that may wait for transmission (the one in service not counted).
    pub buffer_packets: u32,
}

/// Losses applied to data packets before they reach the link queue.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum LossModel {
    /// No losses besides the queue's own.
    #[default]
    None,
    /// Each data packet is lost with `probability`, drawn from a PCG stream seeded by
    /// `(seed, LINK_LOSS, flow)`.
    Random {
        /// Loss probability per data packet, in [0, 1].
        probability: f64,
        /// Run seed of the loss stream.
        seed: u64,
    },
    /// These segment numbers are lost on their first transmission (retransmissions pass).
    FirstTransmission(Vec<u32>),
}

/// Everything a [`Pair`] needs besides the two algorithms.
#[derive(Clone, Debug, PartialEq)]
pub struct PairConfig {
    /// The flow's id.
    pub flow: FlowId,
    /// Shared transport configuration of both ends.
    pub transport: TransportConfig,
    /// Flow size (`None`: unlimited).
    pub size_bytes: Option<u64>,
    /// The forward link.
    pub link: LinkConfig,
    /// One-way delay of the return path.
    pub return_delay: Dur,
    /// Losses before the link queue.
    pub loss: LossModel,
    /// Record a [`TraceRecord`] per event (costs memory on long runs).
    pub trace: bool,
}

impl Default for PairConfig {
    /// 10 Mb/s, 10 ms each way, 100-packet buffer, default transport, unlimited flow.
    fn default() -> Self {
        PairConfig {
            flow: FlowId(0),
            transport: TransportConfig::default(),
            size_bytes: None,
            link: LinkConfig { rate_bps: 10_000_000, delay: Dur::from_ms(10), buffer_packets: 100 },
            return_delay: Dur::from_ms(10),
            loss: LossModel::None,
            trace: true,
        }
    }
}

/// Why a data packet was dropped.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum DropCause {
    /// [`LossModel::Random`].
    Random,
    /// [`LossModel::FirstTransmission`].
    Scheduled,
    /// The link algorithm returned `Drop` (or `Mark` for a packet that is not ECN-capable).
    Aqm,
    /// `buffer_packets` were already waiting.
    BufferFull,
}

/// One traced event.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum TraceEvent {
    /// The sender emitted a data segment.
    Sent {
        /// Segment number.
        seq: u32,
        /// Below the highest segment sent before (go-back-N resends included).
        retransmission: bool,
        /// ECN codepoint as sent.
        ecn: Ecn,
        /// The CWR flag was set.
        cwr: bool,
    },
    /// A data segment was dropped on the forward path.
    Dropped {
        /// Segment number.
        seq: u32,
        /// Who dropped it.
        cause: DropCause,
    },
    /// The link algorithm set CE.
    Marked {
        /// Segment number.
        seq: u32,
    },
    /// A data segment reached the receiver.
    Arrived {
        /// Segment number.
        seq: u32,
        /// It carried CE.
        ce: bool,
    },
    /// The receiver emitted an ACK.
    AckSent {
        /// Cumulative ACK (next expected segment).
        ack: u32,
        /// The ECE flag was set.
        ece: bool,
        /// Number of SACK blocks carried.
        sack_blocks: u8,
    },
    /// The sender processed an ACK; its window state afterwards.
    AckReceived {
        /// Cumulative ACK.
        ack: u32,
        /// Controller window after the ACK, bytes.
        cwnd: u64,
        /// Controller slow-start threshold after the ACK, bytes.
        ssthresh: u64,
        /// Sender pipe after the ACK, bytes.
        in_flight: u64,
        /// The sender is in fast recovery.
        in_recovery: bool,
    },
    /// The sender's retransmission timer expired.
    Timeout {
        /// First unacknowledged segment when it fired.
        snd_una: u32,
    },
}

/// A traced event and when it happened.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct TraceRecord {
    /// Virtual time of the event.
    pub at: Time,
    /// What happened.
    pub event: TraceEvent,
}

/// Forward-link counters.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct LinkStats {
    /// Data packets offered to the link queue (after the loss hook).
    pub arrivals: u64,
    /// Dropped by [`LossModel::Random`].
    pub dropped_random: u64,
    /// Dropped by [`LossModel::FirstTransmission`].
    pub dropped_scheduled: u64,
    /// Dropped by the link algorithm.
    pub dropped_aqm: u64,
    /// Dropped because the buffer was full.
    pub dropped_full: u64,
    /// CE marks set by the link algorithm.
    pub marked: u64,
    /// Packets that started their transmission.
    pub departures: u64,
}

/// A packet-carrying event.
#[derive(Debug)]
enum EventKind {
    /// A data packet reaches the receiver.
    Data(Packet),
    /// An ACK reaches the sender.
    Ack(Packet),
    /// The link may start the next transmission.
    LinkFree,
}

#[derive(Debug)]
struct Event {
    at: Time,
    id: u64,
    kind: EventKind,
}

impl PartialEq for Event {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.id) == (o.at, o.id)
    }
}
impl Eq for Event {}
impl PartialOrd for Event {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Event {
    /// Reversed so that `BinaryHeap` pops the earliest event, ties by insertion order.
    fn cmp(&self, o: &Self) -> Ordering {
        (o.at, o.id).cmp(&(self.at, self.id))
    }
}

/// The forward link's queue and transmitter.
#[derive(Debug)]
struct Link {
    cfg: LinkConfig,
    /// Waiting packets (transmission not started) with their arrival times.
    fifo: VecDeque<(Packet, Time)>,
    backlog_bytes: u64,
    /// When the transmitter finishes its current packet.
    busy_until: Time,
    stats: LinkStats,
}

/// What the link algorithm sees of the queue at one instant.
struct View<'a> {
    link: &'a mut Link,
    now: Time,
}

impl QueueView for View<'_> {
    fn backlog_bytes(&self) -> u64 {
        self.link.backlog_bytes
    }
    fn backlog_packets(&self) -> u32 {
        self.link.fifo.len() as u32
    }
    fn idle_since(&self) -> Option<Time> {
        (self.link.fifo.is_empty() && self.link.busy_until <= self.now).then_some(self.link.busy_until)
    }
    fn rate_bps(&self) -> u64 {
        self.link.cfg.rate_bps
    }
    fn visit_from_tail(&self, f: &mut dyn FnMut(FlowId, u32) -> bool) {
        for (p, _) in self.link.fifo.iter().rev() {
            if !f(p.flow, p.wire_bytes) {
                break;
            }
        }
    }
    fn mark_first_of(&mut self, flow: FlowId) -> bool {
        match self.link.fifo.iter_mut().find(|(p, _)| p.flow == flow) {
            Some((p, _)) if p.ecn.is_ect() => {
                p.ecn = Ecn::Ce;
                true
            }
            _ => false,
        }
    }
}

/// A sender and a receiver of one flow joined by a link, on a virtual clock.
#[derive(Debug)]
pub struct Pair<C: Controller = AnyController, L: LinkAlgorithm = AnyLinkAlgorithm> {
    now: Time,
    sender: Sender<C>,
    receiver: Receiver,
    link: Link,
    alg: L,
    return_delay: Dur,
    loss: LossModel,
    rng: Pcg64Mcg,
    events: BinaryHeap<Event>,
    next_id: u64,
    /// A `LinkFree` event is pending for this time.
    link_wake: Option<Time>,
    /// One past the highest segment sent, to tell retransmissions apart in the trace.
    highest_sent: u32,
    delivered_bytes: u64,
    trace_on: bool,
    trace: Vec<TraceRecord>,
}

impl Pair<AnyController> {
    /// A pair with a plain echoing receiver, starting at time zero.
    pub fn new(cfg: PairConfig, cc: AnyController, alg: AnyLinkAlgorithm) -> Pair<AnyController> {
        Pair::with_parts(cfg, cc, alg)
    }
}

impl<C: Controller, L: LinkAlgorithm> Pair<C, L> {
    /// Like [`Pair::new`] for any controller and link algorithm types (test-only ones included).
    pub fn with_parts(cfg: PairConfig, cc: C, alg: L) -> Pair<C, L> {
        Pair::with_echoer(cfg, cc, alg, AnyEchoer::Plain(PlainEcho::default()))
    }

    /// Like [`Pair::with_parts`] with the receiver's echoer given (MaxNet's averages the price).
    pub fn with_echoer(cfg: PairConfig, cc: C, alg: L, echo: AnyEchoer) -> Pair<C, L> {
        let now = Time::ZERO;
        let sender = Sender::new(cfg.flow, cfg.transport, cc, cfg.size_bytes, now);
        let receiver = Receiver::new(cfg.flow, cfg.transport, echo);
        let mut pair = Pair {
            now,
            sender,
            receiver,
            link: Link {
                cfg: cfg.link,
                fifo: VecDeque::new(),
                backlog_bytes: 0,
                busy_until: Time::ZERO,
                stats: LinkStats::default(),
            },
            alg,
            return_delay: cfg.return_delay,
            rng: component_rng(
                match cfg.loss {
                    LossModel::Random { seed, .. } => seed,
                    _ => 0,
                },
                kind::LINK_LOSS,
                cfg.flow.0 as u64,
            ),
            loss: cfg.loss,
            events: BinaryHeap::new(),
            next_id: 0,
            link_wake: None,
            highest_sent: 0,
            delivered_bytes: 0,
            trace_on: cfg.trace,
            trace: Vec::new(),
        };
        pair.flush_sender();
        pair
    }

    /// The virtual clock.
    pub fn now(&self) -> Time {
        self.now
    }
    /// The sending end.
    pub fn sender(&self) -> &Sender<C> {
        &self.sender
    }
    /// The sending end, mutably (e.g. to `stop()` it).
    pub fn sender_mut(&mut self) -> &mut Sender<C> {
        &mut self.sender
    }
    /// The receiving end.
    pub fn receiver(&self) -> &Receiver {
        &self.receiver
    }
    /// Sender counters and gauges.
    pub fn sender_stats(&self) -> SenderStats {
        self.sender.stats()
    }
    /// Receiver counters.
    pub fn receiver_stats(&self) -> ReceiverStats {
        self.receiver.stats()
    }
    /// Forward-link counters.
    pub fn link_stats(&self) -> LinkStats {
        self.link.stats
    }
    /// The link algorithm.
    pub fn link_algorithm(&self) -> &L {
        &self.alg
    }
    /// Payload bytes the receiver delivered in order (sum of `Receiver::on_packet` results).
    pub fn delivered_bytes(&self) -> u64 {
        self.delivered_bytes
    }
    /// Recorded events (empty unless `trace` was on).
    pub fn trace(&self) -> &[TraceRecord] {
        &self.trace
    }

    /// When the next event is due, if any.
    pub fn next_event_time(&self) -> Option<Time> {
        [
            self.events.peek().map(|e| e.at),
            self.alg.poll_timeout(),
            self.receiver.poll_timeout(),
            self.sender.poll_timeout(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Processes the next event (all timers due at its time included); false if none is left.
    pub fn step(&mut self) -> bool {
        let Some(t) = self.next_event_time() else {
            return false;
        };
        self.now = self.now.max(t);
        let now = self.now;
        if self.events.peek().is_some_and(|e| e.at <= now) {
            let ev = self.events.pop().expect("peeked");
            match ev.kind {
                EventKind::Data(pkt) => self.on_data_arrival(pkt),
                EventKind::Ack(pkt) => self.on_ack_arrival(pkt),
                EventKind::LinkFree => {
                    if self.link_wake == Some(ev.at) {
                        self.link_wake = None;
                    }
                    self.advance_link();
                }
            }
            return true;
        }
        if self.alg.poll_timeout().is_some_and(|x| x <= now) {
            self.advance_link();
            self.alg.on_timeout(now, self.link.backlog_bytes);
        }
        if self.receiver.poll_timeout().is_some_and(|x| x <= now) {
            self.receiver.on_timeout(now);
            self.flush_receiver();
        }
        if self.sender.poll_timeout().is_some_and(|x| x <= now) {
            let before = self.sender.stats().timeouts;
            self.sender.on_timeout(now);
            if self.sender.stats().timeouts > before {
                let snd_una = self.sender.snd_una();
                self.record(TraceEvent::Timeout { snd_una });
            }
            self.flush_sender();
        }
        true
    }

    /// Runs every event due at or before `t`, then sets the clock to `t`.
    pub fn drive_until(&mut self, t: Time) {
        while self.next_event_time().is_some_and(|x| x <= t) {
            self.step();
        }
        self.now = self.now.max(t);
    }

    /// Runs until the sender's sized flow completes or the clock passes `limit`; true if done.
    pub fn drive_to_completion(&mut self, limit: Time) -> bool {
        while !self.sender.is_complete() {
            match self.next_event_time() {
                Some(x) if x <= limit => {
                    self.step();
                }
                _ => return false,
            }
        }
        true
    }

    fn record(&mut self, event: TraceEvent) {
        if self.trace_on {
            self.trace.push(TraceRecord { at: self.now, event });
        }
    }

    fn schedule(&mut self, at: Time, kind: EventKind) {
        self.next_id += 1;
        self.events.push(Event { at, id: self.next_id, kind });
    }

    fn flush_sender(&mut self) {
        while let Some(pkt) = self.sender.poll_transmit(self.now) {
            let seq = pkt.seg.seq;
            let retransmission = seq < self.highest_sent;
            self.highest_sent = self.highest_sent.max(seq + 1);
            self.record(TraceEvent::Sent {
                seq,
                retransmission,
                ecn: pkt.ecn,
                cwr: pkt.seg.flags.contains(Flags::CWR),
            });
            self.forward(pkt, retransmission);
        }
    }

    fn flush_receiver(&mut self) {
        while let Some(pkt) = self.receiver.poll_transmit(self.now) {
            self.record(TraceEvent::AckSent {
                ack: pkt.seg.ack,
                ece: pkt.seg.flags.contains(Flags::ECE),
                sack_blocks: pkt.seg.sack_len,
            });
            self.schedule(self.now + self.return_delay, EventKind::Ack(pkt));
        }
    }

    fn on_data_arrival(&mut self, pkt: Packet) {
        self.record(TraceEvent::Arrived { seq: pkt.seg.seq, ce: pkt.ecn == Ecn::Ce });
        self.delivered_bytes += self.receiver.on_packet(self.now, &pkt);
        self.flush_receiver();
    }

    fn on_ack_arrival(&mut self, pkt: Packet) {
        self.sender.on_packet(self.now, &pkt);
        let s = self.sender.stats();
        self.record(TraceEvent::AckReceived {
            ack: pkt.seg.ack,
            cwnd: s.cwnd_bytes,
            ssthresh: s.ssthresh_bytes,
            in_flight: s.bytes_in_flight,
            in_recovery: self.sender.in_recovery(),
        });
        self.flush_sender();
    }

    /// The loss hook, then the link algorithm's verdict, then the FIFO.
    fn forward(&mut self, mut pkt: Packet, retransmission: bool) {
        let seq = pkt.seg.seq;
        let lost = match &mut self.loss {
            LossModel::None => None,
            LossModel::Random { probability, .. } => {
                (uniform01(&mut self.rng) < *probability).then_some(DropCause::Random)
            }
            LossModel::FirstTransmission(list) => {
                (!retransmission && list.contains(&seq)).then_some(DropCause::Scheduled)
            }
        };
        if let Some(cause) = lost {
            match cause {
                DropCause::Random => self.link.stats.dropped_random += 1,
                _ => self.link.stats.dropped_scheduled += 1,
            }
            self.record(TraceEvent::Dropped { seq, cause });
            return;
        }
        self.advance_link();
        let now = self.now;
        self.link.stats.arrivals += 1;
        let idle = self.link.fifo.is_empty() && self.link.busy_until <= now;
        let verdict = self.alg.on_enqueue(now, &mut pkt, &mut View { link: &mut self.link, now });
        let full = !idle && self.link.fifo.len() as u32 >= self.link.cfg.buffer_packets;
        let drop = match verdict {
            Verdict::Drop => Some(DropCause::Aqm),
            Verdict::Mark if !pkt.ecn.is_ect() => Some(DropCause::Aqm),
            _ if full => Some(DropCause::BufferFull),
            _ => None,
        };
        if let Some(cause) = drop {
            match cause {
                DropCause::Aqm => self.link.stats.dropped_aqm += 1,
                _ => self.link.stats.dropped_full += 1,
            }
            self.record(TraceEvent::Dropped { seq, cause });
            return;
        }
        if verdict == Verdict::Mark {
            pkt.ecn = Ecn::Ce;
            self.link.stats.marked += 1;
            self.record(TraceEvent::Marked { seq });
        }
        self.link.backlog_bytes += pkt.wire_bytes as u64;
        self.link.fifo.push_back((pkt, now));
        self.advance_link();
    }

    /// Starts every transmission due by now (departures before arrivals, link/mod.rs contract)
    /// and schedules the next wake-up of the transmitter.
    fn advance_link(&mut self) {
        let now = self.now;
        while self.link.busy_until <= now {
            let Some((mut pkt, arrived)) = self.link.fifo.pop_front() else {
                break;
            };
            let start = self.link.busy_until.max(arrived);
            self.link.backlog_bytes -= pkt.wire_bytes as u64;
            if self.alg.wants_dequeue() {
                self.alg.on_dequeue(start, &mut pkt, self.link.backlog_bytes);
            }
            self.link.busy_until = start + tx_time(pkt.wire_bytes as u64, self.link.cfg.rate_bps);
            self.link.stats.departures += 1;
            self.schedule(self.link.busy_until + self.link.cfg.delay, EventKind::Data(pkt));
        }
        if !self.link.fifo.is_empty() && self.link_wake != Some(self.link.busy_until) {
            self.link_wake = Some(self.link.busy_until);
            self.schedule(self.link.busy_until, EventKind::LinkFree);
        }
    }
}
