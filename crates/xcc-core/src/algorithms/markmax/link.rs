//! MarkMax: flow-aware congestion signalling (Osipova, Blanc & Avrachenkov, seed 003;
//! protocols.md §13), in its two variants MarkMax-B (full-backlog) and MarkMax-T (tail-backlog).
//!
//! Instead of choosing *which packet* to drop, MarkMax chooses *which connection* must slow
//! down: each time the total queue reaches the trigger `θ` it sets CE on one packet of the
//! connection with the largest backlog, and only that one. Seed 003, Section II, run on every
//! arrival *after* the arriving packet joined the queue:
//!
//! ```text
//! if q ≤ θ_l or q ≥ θ_h:  flag ← true
//! if q ≥ θ and flag:
//!     j ← MarkMax-B: connection with the largest backlog in the whole queue
//!         MarkMax-T: connection with the largest backlog in the last `fraction` of the queue
//!     set CE on the first packet of j from the HEAD of the queue
//!     flag ← false
//! ```
//!
//! After a signal no further one is sent while the queue stays in (θ_l, θ_h): falling to θ_l
//! (the cut took effect) re-arms the trigger, and at or above θ_h (one cut was not enough, e.g.
//! in slow start) every arrival signals again.
//!
//! How this file realises it with the driver's [`QueueView`] (choices the paper leaves open are
//! collected in docs/algorithms/markmax.md):
//! - **Units.** `q`, the thresholds and the per-connection backlogs are all in one
//!   [`MarkMaxUnit`]: packets (NS-2's default queue accounting, what the paper's "MSS" thresholds
//!   mean when every data packet is one MSS) or bytes. `q` counts the packets *waiting* plus the
//!   arriving one (NS-2 runs its enqueue hook with the arrival already in the queue; the packet
//!   on the wire is not in the queue).
//! - **Per-connection backlog in O(1) per packet.** Counted on `on_enqueue`, uncounted on
//!   `on_dequeue` (`wants_dequeue() = true`), in a `Vec` indexed by `FlowId` (drivers allocate
//!   flow ids densely), plus the set of connections with a non-zero backlog so that the argmax
//!   at a signal costs O(active connections), never a scan of the queue. No heavy-hitter bound:
//!   every connection present in the buffer is tracked (the paper's suggestion of heavy-hitter
//!   counters \[17\] is not needed at the scale of our scenarios).
//! - **Buffer-overflow drops.** The driver applies its hard buffer limit *after* the verdict and
//!   does not report the drop. The last accepted arrival is therefore held as "pending" and
//!   settled at the next call by comparing our byte total with the driver's backlog: equal means
//!   it was queued, larger by exactly its size means the buffer dropped it (then it is
//!   uncounted). Exact, since every other waiting byte is counted in both.
//! - **Pure ACKs** count in `q` (NS-2 counts packets) but in nobody's backlog: the ACK stream
//!   of a reverse-direction connection (seed 003's Scenario 2) is not a sending rate a cut on
//!   this link could reduce, and ACKs are not ECN-capable. Counting them would make a busy ACK
//!   stream the "largest connection" and waste the signal.
//! - **Ties** in the argmax go to the connection whose packet is nearest the head (protocols.md
//!   §13.7-4); resolving them scans the queue, but only at a signal and only when there is a tie.
//! - **MarkMax-T's tail** is taken at signal time by a scan from the tail (the arriving packet
//!   first), in the configured unit, until it covers `⌈fraction · q⌉` units; the packet that
//!   crosses the boundary is included.
//! - **Signal delivery.** [`QueueView::mark_first_of`] sets CE on the selected connection's
//!   packet nearest the head. If the only packet of that connection is the arriving one (not yet
//!   in the driver's queue) the verdict is [`Verdict::Mark`]. If the head packet already carries
//!   CE (repeated signals above θ_h before it left) nothing more happens: the connection will see
//!   that mark.
//! - **Non-ECT fallback** (protocols.md §13.7-5): a connection whose packets are not
//!   ECN-capable is signalled by a drop. The driver cannot remove a packet from the middle of
//!   its FIFO (transmission times are fixed on arrival), so the drop falls on that connection's
//!   next arrival (the arriving packet itself if it belongs to it).

use serde::{Deserialize, Serialize};

use crate::link::{LinkAlgorithm, QueueView, Verdict};
use crate::packet::{FlowId, Packet};
use crate::time::Time;
use crate::wire::{Ecn, SegmentKind};

/// How the connection to signal is selected (seed 003, Section II).
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MarkMaxVariant {
    /// MarkMax-B: the connection with the largest backlog in the whole queue (its average rate
    /// since the start of the busy period).
    Backlog,
    /// MarkMax-T: the connection with the largest backlog in the last `fraction` of the queue
    /// (a shorter averaging window: its *instantaneous* rate). The paper uses 0.1.
    Tail {
        /// Portion of the queue, counted from the tail, `0 < fraction ≤ 1`.
        fraction: f64,
    },
}

/// Unit of `q`, of the thresholds and of the per-connection backlogs.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MarkMaxUnit {
    /// Packets (NS-2's queue length; the paper's MSS units when data packets are one MSS).
    #[default]
    Packets,
    /// Bytes on the wire.
    Bytes,
}

/// MarkMax's parameters; thresholds in `unit`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MarkMaxConfig {
    /// B or T.
    pub variant: MarkMaxVariant,
    /// Packets or bytes.
    pub unit: MarkMaxUnit,
    /// Re-arm threshold: the queue fell back to it, the last cut took effect.
    pub theta_l: u64,
    /// Trigger: a signal is sent when the queue reaches it and the trigger is armed.
    pub theta: u64,
    /// Safety threshold: at or above it every arrival signals again.
    pub theta_h: u64,
}

impl Default for MarkMaxConfig {
    /// Seed 003, Section IV-B (Scenario 1): MarkMax-B with θ_l = 200, θ = 240, θ_h = 280 MSS,
    /// counted in packets (every data packet is one 540 B MSS there).
    fn default() -> MarkMaxConfig {
        MarkMaxConfig {
            variant: MarkMaxVariant::Backlog,
            unit: MarkMaxUnit::Packets,
            theta_l: 200,
            theta: 240,
            theta_h: 280,
        }
    }
}

impl MarkMaxConfig {
    /// Checks `θ_l < θ < θ_h` and, for MarkMax-T, `0 < fraction ≤ 1`.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.theta_l < self.theta && self.theta < self.theta_h) {
            return Err(format!(
                "MarkMax thresholds must satisfy theta_l < theta < theta_h, got {} / {} / {}",
                self.theta_l, self.theta, self.theta_h
            ));
        }
        if let MarkMaxVariant::Tail { fraction } = self.variant {
            // Negated so that NaN fails.
            if !(fraction > 0.0 && fraction <= 1.0) {
                return Err(format!("MarkMax-T tail fraction must be in (0, 1], got {fraction}"));
            }
        }
        Ok(())
    }
}

/// Counters the driver may sample (style.md, habit 10).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct MarkMaxStats {
    /// Packets offered.
    pub arrivals: u64,
    /// Congestion signals decided (one per trigger of the flag logic).
    pub signals: u64,
    /// Signals that set CE on a waiting packet (through the queue view).
    pub marks_queued: u64,
    /// Signals that set CE on the arriving packet (the selected connection's only packet).
    pub marks_arriving: u64,
    /// Signals whose target packet already carried CE (repeated signals above θ_h).
    pub already_marked: u64,
    /// Drops of the Not-ECT fallback.
    pub fallback_drops: u64,
    /// Signals with nobody to signal (only pure ACKs were waiting).
    pub no_target: u64,
}

/// The arrival accepted last, until we know whether the driver's buffer kept it.
#[derive(Copy, Clone, Debug)]
struct Pending {
    flow: FlowId,
    weight: u64,
    bytes: u64,
}

/// One link's MarkMax state.
#[derive(Clone, Debug)]
pub struct MarkMax {
    cfg: MarkMaxConfig,
    /// Seed 003's `flag`: the trigger is armed. Initially true.
    flag: bool,
    /// Backlog per connection in `cfg.unit`, indexed by `FlowId.0`.
    backlog: Vec<u64>,
    /// Position of each connection in `active` (`u32::MAX` if its backlog is zero).
    slot: Vec<u32>,
    /// Connections with a non-zero backlog (unordered).
    active: Vec<FlowId>,
    /// Whether each connection's last arriving *data* packet was ECN-capable.
    ect: Vec<bool>,
    /// Bytes we count as waiting (the pending arrival included): checks the driver's backlog.
    total_bytes: u64,
    pending: Option<Pending>,
    /// Not-ECT fallback: drop this connection's next arrival.
    drop_next: Option<FlowId>,
    /// Scratch for MarkMax-T's tail counts: (flow, weight, scan index of its packet nearest the
    /// head). Kept to avoid an allocation per signal.
    tail: Vec<(FlowId, u64, u64)>,
    stats: MarkMaxStats,
}

impl MarkMax {
    /// A MarkMax queue, trigger armed.
    ///
    /// # Panics
    /// If `cfg.validate()` fails: the scenario loader must validate first.
    pub fn new(cfg: MarkMaxConfig) -> MarkMax {
        if let Err(e) = cfg.validate() {
            panic!("invalid MarkMax configuration: {e}");
        }
        MarkMax {
            cfg,
            flag: true,
            backlog: Vec::new(),
            slot: Vec::new(),
            active: Vec::new(),
            ect: Vec::new(),
            total_bytes: 0,
            pending: None,
            drop_next: None,
            tail: Vec::new(),
            stats: MarkMaxStats::default(),
        }
    }

    /// The configuration in use.
    pub fn config(&self) -> &MarkMaxConfig {
        &self.cfg
    }

    /// Counters since creation.
    pub fn stats(&self) -> &MarkMaxStats {
        &self.stats
    }

    /// Whether the trigger is armed (seed 003's `flag`).
    pub fn armed(&self) -> bool {
        self.flag
    }

    /// Backlog of `flow` as MarkMax counts it (in the configured unit), the last accepted
    /// arrival included.
    pub fn backlog_of(&self, flow: FlowId) -> u64 {
        self.backlog.get(flow.0 as usize).copied().unwrap_or(0)
    }

    /// What a packet adds to its connection's backlog: one packet or its bytes, and nothing
    /// for a pure ACK (the ACK stream of a reverse connection is not a sending rate that a
    /// cut could reduce; its packets still count in the total queue `q`).
    fn weight(&self, pkt: &Packet) -> u64 {
        if pkt.seg.kind == SegmentKind::Ack {
            return 0;
        }
        match self.cfg.unit {
            MarkMaxUnit::Packets => 1,
            MarkMaxUnit::Bytes => pkt.wire_bytes as u64,
        }
    }

    fn ensure(&mut self, flow: FlowId) {
        let need = flow.0 as usize + 1;
        if self.backlog.len() < need {
            self.backlog.resize(need, 0);
            self.slot.resize(need, u32::MAX);
            self.ect.resize(need, false);
        }
    }

    /// Adds a packet to its connection's backlog: O(1).
    fn count(&mut self, flow: FlowId, weight: u64, bytes: u64) {
        self.ensure(flow);
        let i = flow.0 as usize;
        if self.backlog[i] == 0 && weight > 0 {
            self.slot[i] = self.active.len() as u32;
            self.active.push(flow);
        }
        self.backlog[i] += weight;
        self.total_bytes += bytes;
    }

    /// Removes a packet from its connection's backlog: O(1) (swap-remove from the active set).
    fn uncount(&mut self, flow: FlowId, weight: u64, bytes: u64) {
        let i = flow.0 as usize;
        debug_assert!(i < self.backlog.len() && self.backlog[i] >= weight, "uncounting a packet never counted");
        if i >= self.backlog.len() {
            return;
        }
        self.backlog[i] = self.backlog[i].saturating_sub(weight);
        self.total_bytes = self.total_bytes.saturating_sub(bytes);
        if self.backlog[i] == 0 && self.slot[i] != u32::MAX {
            let k = self.slot[i] as usize;
            self.active.swap_remove(k);
            if let Some(&moved) = self.active.get(k) {
                self.slot[moved.0 as usize] = k as u32;
            }
            self.slot[i] = u32::MAX;
        }
    }

    /// Settles the pending arrival against the driver's waiting bytes (see the module docs).
    fn reconcile(&mut self, driver_bytes: u64) {
        if let Some(p) = self.pending {
            if self.total_bytes == driver_bytes {
                self.pending = None; // queued (and maybe already gone)
            } else if self.total_bytes == driver_bytes + p.bytes {
                self.pending = None; // the driver's buffer dropped it
                self.uncount(p.flow, p.weight, p.bytes);
            }
        }
    }

    /// MarkMax-B's argmax over the whole queue; ties to the connection nearest the head. `None`
    /// when no connection has a backlog (only pure ACKs wait).
    fn select_backlog(&self, arriving: FlowId, queue: &dyn QueueView) -> Option<FlowId> {
        if self.active.is_empty() {
            return None;
        }
        let mut best = arriving;
        let mut best_w = 0;
        let mut tied = false;
        for &f in &self.active {
            let w = self.backlog[f.0 as usize];
            if w > best_w {
                (best, best_w, tied) = (f, w, false);
            } else if w == best_w {
                tied = true;
            }
        }
        if !tied {
            return Some(best);
        }
        // Ties: scan from the tail; the last tied connection seen is nearest the head. The
        // arriving packet is at the tail, so it wins only if its connection has nothing waiting.
        let mut nearest = if self.backlog_of(arriving) == best_w { arriving } else { best };
        queue.visit_from_tail(&mut |f, _| {
            if self.backlog_of(f) == best_w {
                nearest = f;
            }
            true
        });
        Some(nearest)
    }

    /// MarkMax-T's argmax over the last `fraction` of the queue (`q` units in all, the arriving
    /// packet included); ties to the connection nearest the head. Every packet counts towards
    /// the tail's length, but only packets of connections with a backlog (not pure ACK streams)
    /// are attributed. `None` if the tail holds none of those.
    fn select_tail(&mut self, fraction: f64, q: u64, pkt: &Packet, queue: &dyn QueueView) -> Option<FlowId> {
        let budget = ((fraction * q as f64).ceil() as u64).max(1);
        let unit = self.cfg.unit;
        let backlog = &self.backlog;
        let tail = &mut self.tail;
        tail.clear();
        let mut add = |f: FlowId, w: u64, idx: u64| {
            if backlog.get(f.0 as usize).copied().unwrap_or(0) == 0 {
                return; // a pure ACK stream
            }
            match tail.iter_mut().find(|e| e.0 == f) {
                Some(e) => {
                    e.1 += w;
                    e.2 = idx;
                }
                None => tail.push((f, w, idx)),
            }
        };
        let size = |bytes: u32| match unit {
            MarkMaxUnit::Packets => 1,
            MarkMaxUnit::Bytes => bytes as u64,
        };
        // The arriving packet is the newest: the tail starts with it.
        let mut covered = size(pkt.wire_bytes);
        if pkt.seg.kind != SegmentKind::Ack {
            add(pkt.flow, covered, 0);
        }
        let mut idx = 0;
        if covered < budget {
            queue.visit_from_tail(&mut |f, bytes| {
                idx += 1;
                let w = size(bytes);
                add(f, w, idx);
                covered += w;
                covered < budget
            });
        }
        // Largest tail backlog; ties to the larger scan index (nearer the head).
        tail.iter().copied().max_by(|a, b| a.1.cmp(&b.1).then(a.2.cmp(&b.2))).map(|e| e.0)
    }

    /// Sends the congestion signal to `j`; returns the arriving packet's verdict.
    fn signal(&mut self, j: FlowId, pkt: &Packet, queue: &mut dyn QueueView) -> Verdict {
        if queue.mark_first_of(j) {
            self.stats.marks_queued += 1;
            return Verdict::Queue;
        }
        let own = if pkt.flow == j { self.weight(pkt) } else { 0 };
        let waiting = self.backlog_of(j) > own;
        if !waiting {
            // The arriving packet is j's only one, hence its first from the head.
            return if pkt.ecn == Ecn::Ce {
                self.stats.already_marked += 1;
                Verdict::Queue
            } else if pkt.ecn.is_ect() {
                self.stats.marks_arriving += 1;
                Verdict::Mark
            } else {
                self.fallback_drop_arriving(pkt)
            };
        }
        if self.ect.get(j.0 as usize).copied().unwrap_or(false) {
            // j is ECN-capable: its head packet already carries CE.
            self.stats.already_marked += 1;
            Verdict::Queue
        } else if pkt.flow == j {
            self.fallback_drop_arriving(pkt)
        } else {
            self.drop_next = Some(j);
            Verdict::Queue
        }
    }

    /// Not-ECT fallback on the arriving packet: drop it, and take it out of our counts.
    fn fallback_drop_arriving(&mut self, pkt: &Packet) -> Verdict {
        self.stats.fallback_drops += 1;
        self.pending = None;
        self.uncount(pkt.flow, self.weight(pkt), pkt.wire_bytes as u64);
        Verdict::Drop
    }
}

impl LinkAlgorithm for MarkMax {
    /// Counts the arrival, runs the flag logic of seed 003 Section II and, on a trigger, marks
    /// the selected connection's first packet from the head. Returns [`Verdict::Mark`] when that
    /// packet is the arriving one, [`Verdict::Drop`] only for the Not-ECT fallback.
    fn on_enqueue(&mut self, _now: Time, pkt: &mut Packet, queue: &mut dyn QueueView) -> Verdict {
        self.stats.arrivals += 1;
        self.reconcile(queue.backlog_bytes());
        if self.drop_next == Some(pkt.flow) {
            self.drop_next = None;
            self.stats.fallback_drops += 1;
            return Verdict::Drop;
        }
        let weight = self.weight(pkt);
        let bytes = pkt.wire_bytes as u64;
        self.count(pkt.flow, weight, bytes);
        self.pending = Some(Pending { flow: pkt.flow, weight, bytes });
        if weight > 0 {
            self.ect[pkt.flow.0 as usize] = pkt.ecn.is_ect();
        }
        // q after enqueueing the arriving packet.
        let q = match self.cfg.unit {
            MarkMaxUnit::Packets => queue.backlog_packets() as u64 + 1,
            MarkMaxUnit::Bytes => queue.backlog_bytes() + bytes,
        };
        if q <= self.cfg.theta_l || q >= self.cfg.theta_h {
            self.flag = true;
        }
        if q < self.cfg.theta || !self.flag {
            return Verdict::Queue;
        }
        self.flag = false;
        self.stats.signals += 1;
        let j = match self.cfg.variant {
            MarkMaxVariant::Backlog => self.select_backlog(pkt.flow, &*queue),
            MarkMaxVariant::Tail { fraction } => {
                // A tail of pure ACKs: fall back to the whole queue.
                self.select_tail(fraction, q, pkt, &*queue).or_else(|| self.select_backlog(pkt.flow, &*queue))
            }
        };
        match j {
            Some(j) => self.signal(j, pkt, queue),
            None => {
                self.stats.no_target += 1;
                Verdict::Queue
            }
        }
    }

    /// Departures uncount the per-connection backlog.
    fn wants_dequeue(&self) -> bool {
        true
    }

    fn on_dequeue(&mut self, _now: Time, pkt: &mut Packet, backlog_bytes: u64) {
        self.uncount(pkt.flow, self.weight(pkt), pkt.wire_bytes as u64);
        self.reconcile(backlog_bytes);
    }

    /// Congestion signals sent so far.
    fn gauge(&self) -> f64 {
        self.stats.signals as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A FIFO the test drives by hand: `(flow, bytes, ecn)` from head to tail.
    #[derive(Default)]
    struct FakeQueue {
        q: std::collections::VecDeque<(FlowId, u32, Ecn)>,
    }

    impl QueueView for FakeQueue {
        fn backlog_bytes(&self) -> u64 {
            self.q.iter().map(|e| e.1 as u64).sum()
        }
        fn backlog_packets(&self) -> u32 {
            self.q.len() as u32
        }
        fn idle_since(&self) -> Option<Time> {
            None
        }
        fn rate_bps(&self) -> u64 {
            70_000_000
        }
        fn visit_from_tail(&self, f: &mut dyn FnMut(FlowId, u32) -> bool) {
            for e in self.q.iter().rev() {
                if !f(e.0, e.1) {
                    break;
                }
            }
        }
        fn mark_first_of(&mut self, flow: FlowId) -> bool {
            match self.q.iter_mut().find(|e| e.0 == flow) {
                Some(e) if e.2.is_ect() && e.2 != Ecn::Ce => {
                    e.2 = Ecn::Ce;
                    true
                }
                _ => false,
            }
        }
    }

    /// Drives one MarkMax link: arrivals at explicit times, departures from the head.
    struct Rig {
        mm: MarkMax,
        q: FakeQueue,
        t: u64,
    }

    impl Rig {
        fn new(cfg: MarkMaxConfig) -> Rig {
            Rig { mm: MarkMax::new(cfg), q: FakeQueue::default(), t: 0 }
        }
        /// One 540 B ECT(0) data packet of `flow` arrives 1 µs after the previous event; returns
        /// the verdict (the packet joins the FIFO unless dropped, with CE if marked).
        fn arrive(&mut self, flow: u32) -> Verdict {
            self.arrive_ecn(flow, Ecn::Ect0)
        }
        fn arrive_ecn(&mut self, flow: u32, ecn: Ecn) -> Verdict {
            self.t += 1000;
            let mut p = Packet { flow: FlowId(flow), wire_bytes: 540, ecn, ..Packet::default() };
            p.seg.kind = SegmentKind::Data;
            let v = self.mm.on_enqueue(Time::from_ns(self.t), &mut p, &mut self.q);
            match v {
                Verdict::Drop => {}
                Verdict::Mark => self.q.q.push_back((p.flow, 540, Ecn::Ce)),
                Verdict::Queue => self.q.q.push_back((p.flow, 540, p.ecn)),
            }
            v
        }
        /// The head packet starts its transmission.
        fn depart(&mut self) -> (FlowId, Ecn) {
            self.t += 1000;
            let (flow, bytes, ecn) = self.q.q.pop_front().expect("queue not empty");
            let mut p = Packet { flow, wire_bytes: bytes, ecn, ..Packet::default() };
            let rest = self.q.backlog_bytes();
            self.mm.on_dequeue(Time::from_ns(self.t), &mut p, rest);
            (flow, ecn)
        }
        /// Positions (from the head) and flows of the CE packets.
        fn marked(&self) -> Vec<(usize, u32)> {
            self.q.q.iter().enumerate().filter(|(_, e)| e.2 == Ecn::Ce).map(|(i, e)| (i, e.0 .0)).collect()
        }
        fn clear_marks(&mut self) {
            for e in self.q.q.iter_mut() {
                if e.2 == Ecn::Ce {
                    e.2 = Ecn::Ect0;
                }
            }
        }
    }

    /// Small thresholds: θ_l = 4, θ = 6, θ_h = 8 packets.
    fn cfg(variant: MarkMaxVariant) -> MarkMaxConfig {
        MarkMaxConfig { variant, unit: MarkMaxUnit::Packets, theta_l: 4, theta: 6, theta_h: 8 }
    }

    /// Queue building to θ with flow 1 holding most of it: the 6th arrival (q = 6 = θ) signals
    /// flow 1, whose packet at the head (position 0) gets CE; nothing else is marked.
    /// ```text
    /// t=1..5 µs  arrivals 1 1 2 1 2     q = 1..5 < θ   no signal
    /// t=6 µs     arrival 1              q = 6 = θ      backlogs f1 = 4, f2 = 2 → mark f1 at head
    /// ```
    #[test]
    fn mmb_marks_head_packet_of_largest_backlog() {
        let mut r = Rig::new(cfg(MarkMaxVariant::Backlog));
        for f in [1, 1, 2, 1, 2] {
            assert_eq!(r.arrive(f), Verdict::Queue);
            assert!(r.marked().is_empty());
        }
        assert_eq!(r.arrive(1), Verdict::Queue);
        assert_eq!(r.marked(), vec![(0, 1)]);
        assert!(!r.mm.armed());
        assert_eq!(r.mm.stats().signals, 1);
        assert_eq!(r.mm.stats().marks_queued, 1);
        assert_eq!((r.mm.backlog_of(FlowId(1)), r.mm.backlog_of(FlowId(2))), (4, 2));
    }

    /// The head of the queue belongs to the smaller flow: the mark goes to the largest flow's
    /// *first* packet from the head (position 1), not to the head and not to the arrival.
    #[test]
    fn mark_goes_to_first_packet_of_selected_flow() {
        let mut r = Rig::new(cfg(MarkMaxVariant::Backlog));
        for f in [2, 1, 1, 2, 1] {
            r.arrive(f);
        }
        r.arrive(1); // q = 6: f1 = 4, f2 = 2
        assert_eq!(r.marked(), vec![(1, 1)]);
    }

    /// θ_l suppresses the oscillation around θ: after one signal the queue moves 6 → 5 → 6 → 5
    /// → 7 by single departures and arrivals; no second signal (the flag stays down) until it
    /// falls to θ_l = 4, which re-arms the trigger, and the next crossing of θ signals again.
    /// ```text
    /// q: 6* 5 6 5 6 7 6 5 4(re-arm) 5 6*     (* = signal)
    /// ```
    #[test]
    fn theta_l_suppresses_oscillation_around_theta() {
        let mut r = Rig::new(cfg(MarkMaxVariant::Backlog));
        for f in [1, 1, 1, 2, 2, 1] {
            r.arrive(f);
        }
        assert_eq!(r.mm.stats().signals, 1);
        assert_eq!(r.marked(), vec![(0, 1)]);
        r.clear_marks();
        // Oscillation: depart/arrive around θ, then up to 7 and back down to 5.
        r.depart(); // 5
        r.arrive(1); // 6
        r.depart(); // 5
        r.arrive(2); // 6
        r.arrive(1); // 7
        r.depart(); // 6
        r.depart(); // 5
        assert_eq!(r.mm.stats().signals, 1, "no signal while q stays in (θ_l, θ_h)");
        assert!(r.marked().is_empty());
        assert!(!r.mm.armed());
        // Down to θ_l: the trigger re-arms only on an *arrival* seeing q ≤ θ_l.
        r.depart(); // 4
        r.depart(); // 3
        assert!(!r.mm.armed(), "departures alone do not run the flag logic");
        r.arrive(2); // q = 4 = θ_l → re-armed
        assert!(r.mm.armed());
        r.arrive(2); // 5
        assert_eq!(r.mm.stats().signals, 1);
        // FIFO now (head → tail) 1 2 1 2 2; the arrival makes f2 = 4 > f1 = 2.
        r.arrive(2); // 6 = θ → second signal, to f2's first packet (position 1)
        assert_eq!(r.mm.stats().signals, 2);
        assert_eq!(r.marked(), vec![(1, 2)]);
    }

    /// The same oscillation with and without a useful θ_l: the queue reaches θ, then three
    /// times two departures take it to θ − 2 and two arrivals bring it back to θ. With θ_l = 4
    /// the arrivals see q = 5 and 6, inside (θ_l, θ_h): one signal in all. With θ_l = 5 the
    /// arrival seeing q = 5 re-arms the trigger and the next one signals: four signals, i.e.
    /// the repeated cuts θ_l exists to suppress.
    #[test]
    fn hysteresis_contrast() {
        let run = |theta_l: u64| {
            let mut r = Rig::new(MarkMaxConfig { theta_l, ..cfg(MarkMaxVariant::Backlog) });
            for f in [1, 1, 1, 2, 2, 1] {
                r.arrive(f);
            }
            for _ in 0..3 {
                r.depart();
                r.depart(); // q = 4 (a departure runs no flag logic)
                r.arrive(1); // q = 5
                r.arrive(2); // q = 6
            }
            r.mm.stats().signals
        };
        assert_eq!(run(4), 1);
        assert_eq!(run(5), 4);
    }

    /// Above θ_h every arrival signals (the flag is re-armed by q ≥ θ_h and consumed at once);
    /// each signal marks the selected flow's first *unmarked*-able packet: the head packet
    /// already carries CE, so the repeated signal is a no-op on it until it departs, and then
    /// the next packet of the flow from the head is marked.
    /// ```text
    /// q = 6 signal#1 (mark f1 head)   q = 7 none   q = 8 ≥ θ_h signal#2 (head already CE)
    /// q = 9 signal#3 (already CE)     depart head  q = 9 signal#4 (new f1 head marked)
    /// ```
    #[test]
    fn repeated_signals_above_theta_h() {
        let mut r = Rig::new(cfg(MarkMaxVariant::Backlog));
        for f in [1, 1, 1, 1, 2, 2] {
            r.arrive(f);
        }
        assert_eq!(r.mm.stats().signals, 1);
        assert_eq!(r.marked(), vec![(0, 1)]);
        r.arrive(1); // 7
        assert_eq!(r.mm.stats().signals, 1);
        r.arrive(1); // 8 = θ_h
        assert_eq!(r.mm.stats().signals, 2);
        r.arrive(1); // 9
        assert_eq!(r.mm.stats().signals, 3);
        assert_eq!(r.mm.stats().already_marked, 2);
        assert_eq!(r.marked(), vec![(0, 1)]);
        assert_eq!(r.depart(), (FlowId(1), Ecn::Ce));
        r.arrive(2); // 9 again: f1 = 5 > f2 = 3
        assert_eq!(r.mm.stats().signals, 4);
        assert_eq!(r.marked(), vec![(0, 1)], "new head of f1 marked");
        assert_eq!(r.mm.stats().marks_queued, 2);
        // Two departures and an arrival: q = 8, still ≥ θ_h, still signalling.
        r.depart();
        r.depart();
        r.arrive(2);
        assert_eq!(r.mm.stats().signals, 5);
        // Back into (θ_l, θ_h) the signals stop: q = 7, the flag was consumed at q = 8.
        r.depart();
        r.depart();
        r.arrive(2);
        assert_eq!(r.mm.stats().signals, 5);
    }

    /// Ties go to the connection whose packet is nearest the head.
    #[test]
    fn ties_go_to_flow_nearest_head() {
        let mut r = Rig::new(cfg(MarkMaxVariant::Backlog));
        for f in [2, 1, 1, 2, 3] {
            r.arrive(f);
        }
        r.arrive(3); // q = 6: f1 = f2 = 2, f3 = 2: three-way tie, f2 is at the head
        assert_eq!(r.marked(), vec![(0, 2)]);
        let mut r = Rig::new(cfg(MarkMaxVariant::Backlog));
        for f in [3, 1, 1, 2, 2] {
            r.arrive(f);
        }
        r.arrive(3); // f1 = f2 = 2 = f3: f3 at the head
        assert_eq!(r.marked(), vec![(0, 3)]);
    }

    /// The selected flow's only packet is the arriving one: the verdict marks it.
    #[test]
    fn arriving_packet_marked_when_it_is_the_only_one_of_selected_flow() {
        let mut r = Rig::new(cfg(MarkMaxVariant::Tail { fraction: 0.1 }));
        for f in [1, 1, 1, 1, 1] {
            r.arrive(f);
        }
        // q = 6, tail = ⌈0.6⌉ = 1 packet = the arrival (flow 2).
        assert_eq!(r.arrive(2), Verdict::Mark);
        assert_eq!(r.marked(), vec![(5, 2)]);
        assert_eq!(r.mm.stats().marks_arriving, 1);
    }

    /// MarkMax-T looks only at the tail: flow 1 holds most of the queue but flow 2 dominates
    /// the last 50 %, so T marks flow 2 (its first packet from the head, position 1) where B
    /// marks flow 1 (the head).
    /// ```text
    /// head → 1 2 1 1 1 1 1 1 2 2 2 2 ← tail   (q = 12: f1 = 7 in all; last 6 packets: f2 = 4)
    /// ```
    #[test]
    fn mmt_selects_by_tail_backlog() {
        let c = MarkMaxConfig { theta_l: 8, theta: 12, theta_h: 20, ..cfg(MarkMaxVariant::Tail { fraction: 0.5 }) };
        let seq = [1, 2, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2];
        let mut t = Rig::new(c.clone());
        let mut b = Rig::new(MarkMaxConfig { variant: MarkMaxVariant::Backlog, ..c });
        for f in seq {
            t.arrive(f);
            b.arrive(f);
        }
        assert_eq!(t.marked(), vec![(1, 2)]);
        assert_eq!(b.marked(), vec![(0, 1)]);
    }

    /// Pure ACKs fill the queue (they count in q) but never win the argmax, even when they are
    /// the most numerous packets: the data connection is marked.
    #[test]
    fn ack_streams_count_in_q_but_are_never_selected() {
        for variant in [MarkMaxVariant::Backlog, MarkMaxVariant::Tail { fraction: 0.5 }] {
            let mut r = Rig::new(cfg(variant));
            let ack = |r: &mut Rig| {
                r.t += 1000;
                let mut p = Packet { flow: FlowId(3), wire_bytes: 40, ecn: Ecn::NotEct, ..Packet::default() };
                p.seg.kind = SegmentKind::Ack;
                let v = r.mm.on_enqueue(Time::from_ns(r.t), &mut p, &mut r.q);
                r.q.q.push_back((p.flow, 40, p.ecn));
                v
            };
            r.arrive(1);
            for _ in 0..4 {
                assert_eq!(ack(&mut r), Verdict::Queue);
            }
            assert_eq!(r.mm.backlog_of(FlowId(3)), 0);
            assert_eq!(ack(&mut r), Verdict::Queue); // q = 6 = θ: 5 ACKs, 1 data packet
            assert_eq!(r.mm.stats().signals, 1);
            assert_eq!(r.marked(), vec![(0, 1)], "{variant:?}");
            assert_eq!(r.mm.stats().fallback_drops, 0);
        }
    }

    /// Byte units: θ counts bytes, and the backlog argmax weighs packets by size (two 1500 B
    /// packets beat three 540 B ones).
    #[test]
    fn byte_unit_weighs_by_size() {
        let mut mm = MarkMax::new(MarkMaxConfig {
            variant: MarkMaxVariant::Backlog,
            unit: MarkMaxUnit::Bytes,
            theta_l: 3000,
            theta: 4000,
            theta_h: 6000,
        });
        let mut q = FakeQueue::default();
        let mut t = 0;
        let mut offer = |mm: &mut MarkMax, q: &mut FakeQueue, flow: u32, bytes: u32| {
            t += 1000;
            let mut p = Packet { flow: FlowId(flow), wire_bytes: bytes, ecn: Ecn::Ect0, ..Packet::default() };
            let v = mm.on_enqueue(Time::from_ns(t), &mut p, q);
            q.q.push_back((p.flow, bytes, if v == Verdict::Mark { Ecn::Ce } else { p.ecn }));
            v
        };
        for _ in 0..3 {
            offer(&mut mm, &mut q, 1, 540);
        }
        offer(&mut mm, &mut q, 2, 1500); // 3120 B
        assert_eq!(mm.stats().signals, 0);
        offer(&mut mm, &mut q, 2, 1500); // 4620 B ≥ θ: f1 = 1620, f2 = 3000
        assert_eq!(mm.stats().signals, 1);
        assert_eq!(q.q[3].2, Ecn::Ce);
        assert!(q.q.iter().filter(|e| e.2 == Ecn::Ce).count() == 1);
    }

    /// Not-ECT fallback: the selected connection's packets cannot carry CE, so its arriving
    /// packet is dropped (or its next one, if another connection's packet triggered the signal).
    #[test]
    fn not_ect_flow_is_signalled_by_a_drop() {
        let mut r = Rig::new(cfg(MarkMaxVariant::Backlog));
        for _ in 0..5 {
            r.arrive_ecn(1, Ecn::NotEct);
        }
        assert_eq!(r.arrive_ecn(1, Ecn::NotEct), Verdict::Drop);
        assert_eq!(r.mm.backlog_of(FlowId(1)), 5, "the dropped arrival is not counted");
        assert!(r.marked().is_empty());

        let mut r = Rig::new(MarkMaxConfig { theta_h: 20, ..cfg(MarkMaxVariant::Backlog) });
        for _ in 0..4 {
            r.arrive_ecn(1, Ecn::NotEct);
        }
        r.arrive(2);
        assert_eq!(r.arrive(2), Verdict::Queue); // q = 6: f1 selected, not ECT → drop its next
        assert_eq!(r.arrive(2), Verdict::Queue);
        assert_eq!(r.arrive_ecn(1, Ecn::NotEct), Verdict::Drop);
        assert_eq!(r.arrive_ecn(1, Ecn::NotEct), Verdict::Queue);
        assert_eq!(r.mm.stats().fallback_drops, 1);
    }

    /// A packet the driver's buffer drops after our verdict is uncounted at the next call, so
    /// the per-connection backlogs stay exact.
    #[test]
    fn buffer_drops_are_reconciled() {
        let mut mm = MarkMax::new(cfg(MarkMaxVariant::Backlog));
        let mut q = FakeQueue::default();
        let mut p = Packet { flow: FlowId(1), wire_bytes: 540, ecn: Ecn::Ect0, ..Packet::default() };
        mm.on_enqueue(Time::from_ns(1), &mut p, &mut q);
        q.q.push_back((FlowId(1), 540, Ecn::Ect0));
        // Flow 3's packet is accepted by MarkMax but dropped by the driver (not pushed).
        let mut p3 = Packet { flow: FlowId(3), wire_bytes: 540, ecn: Ecn::Ect0, ..Packet::default() };
        mm.on_enqueue(Time::from_ns(2), &mut p3, &mut q);
        assert_eq!(mm.backlog_of(FlowId(3)), 1);
        mm.on_enqueue(Time::from_ns(3), &mut p, &mut q);
        q.q.push_back((FlowId(1), 540, Ecn::Ect0));
        assert_eq!(mm.backlog_of(FlowId(3)), 0);
        assert_eq!(mm.backlog_of(FlowId(1)), 2);
        // And on the dequeue side.
        mm.on_enqueue(Time::from_ns(4), &mut p3, &mut q); // dropped by the driver again
        q.q.pop_front();
        mm.on_dequeue(Time::from_ns(5), &mut p, q.backlog_bytes());
        assert_eq!((mm.backlog_of(FlowId(1)), mm.backlog_of(FlowId(3))), (1, 0));
        assert_eq!(mm.active.len(), 1);
    }

    /// Packets are conserved in the accounting: after a random sequence of arrivals and
    /// departures the per-flow counters equal a recount of the FIFO, and each signal marks at
    /// most one packet.
    #[test]
    fn accounting_matches_recount() {
        let mut r = Rig::new(MarkMaxConfig { theta_l: 20, theta: 30, theta_h: 40, ..cfg(MarkMaxVariant::Backlog) });
        let mut x: u64 = 12345;
        for _ in 0..20_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let k = (x >> 33) % 10;
            if k < 5 || r.q.q.is_empty() {
                let before = r.marked().len();
                let s = r.mm.stats().signals;
                r.arrive((k % 4) as u32);
                let added = r.marked().len() - before;
                assert!(added <= (r.mm.stats().signals - s) as usize);
            } else {
                r.depart();
            }
            if x.is_multiple_of(97) {
                for f in 0..4 {
                    let n = r.q.q.iter().filter(|e| e.0 .0 == f).count() as u64;
                    assert_eq!(r.mm.backlog_of(FlowId(f)), n);
                }
                assert_eq!(r.mm.active.len(), (0..4).filter(|f| r.q.q.iter().any(|e| e.0 .0 == *f)).count());
            }
        }
        assert!(r.mm.stats().signals > 10);
    }

    #[test]
    fn validation() {
        assert_eq!(MarkMaxConfig::default().validate(), Ok(()));
        let bad = |f: fn(&mut MarkMaxConfig)| {
            let mut c = MarkMaxConfig::default();
            f(&mut c);
            c.validate()
        };
        assert!(bad(|c| c.theta_l = 240).is_err());
        assert!(bad(|c| c.theta_h = 240).is_err());
        assert!(bad(|c| c.variant = MarkMaxVariant::Tail { fraction: 0.0 }).unwrap_err().contains("fraction"));
        assert!(bad(|c| c.variant = MarkMaxVariant::Tail { fraction: 1.5 }).is_err());
        assert!(bad(|c| c.variant = MarkMaxVariant::Tail { fraction: f64::NAN }).is_err());
        assert_eq!(bad(|c| c.variant = MarkMaxVariant::Tail { fraction: 1.0 }), Ok(()));
    }
}
