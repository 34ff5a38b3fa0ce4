//! The event queue: a binary heap keyed by (time, insertion sequence), so events at equal times
//! run in the order they were scheduled (nexosim's priority queue does the same). Only the
//! simulation owns it; models never schedule themselves.

use xcc_core::Time;

use crate::event_heap::{Entry, MinHeap};

/// What an event does; small and `Copy` so the heap moves 24-byte entries.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// The packet at the head of link `0`'s pipe reaches the far end.
    LinkDeliver(u32),
    /// Link `0`'s algorithm asked for a control-interval tick.
    LinkTimer(u32),
    /// Flow `0`'s sender timer (RTO, pacing, controller tick).
    SenderTimer(u32),
    /// Flow `0`'s receiver timer (delayed ACK).
    ReceiverTimer(u32),
    /// Flow `0` starts.
    FlowStart(u32),
    /// Flow `0` stops sending new data.
    FlowStop(u32),
    /// CBR flow `0` sends its next datagram.
    CbrSend(u32),
    /// Arrival generator `0` starts its next flow.
    Arrival(u32),
    /// Transaction `0` (global index) starts.
    Transaction(u32),
    /// Record one row of time series.
    Sample,
    /// Session flow `0` sends its next data packet (paced at its assigned rate).
    SessionSend(u32),
    /// Session flow `0`'s source asked to be called (its next control packet is due).
    SessionWake(u32),
    /// Session group `0`'s link tasks run their timer.
    SessionTick(u32),
    /// The window of the next session sample opens (`[sessions]` error metrics).
    SessionWindow,
    /// A session sample: rates delivered over the window against the max-min oracle.
    SessionSample,
    /// Packet `0` of the domain's inbox (sent by another domain over a cut link) reaches the
    /// far end of that link (the parallel engine, `sim/domain.rs`).
    Arrive(u32),
    /// Link `0` (leaving a PFC router) starts its next waiting packet (`sim/pfc.rs`).
    PfcDeparture(u32),
    /// A PFC frame reaches the transmitter of link `0`.
    PfcFrame(u32),
}

/// Deterministic future-event list.
///
/// Two heaps share one sequence counter, so the order is exactly that of a single heap: `hot`
/// holds packet deliveries (one entry per busy link: a handful), `cold` holds timers, flow
/// starts and samples (one entry per flow, rarely touched). Keeping per-flow timers out of the
/// way makes each packet-hop's pop and push a few levels deep instead of a dozen.
#[derive(Default)]
pub struct EventQueue {
    hot: MinHeap<Event>,
    cold: MinHeap<Event>,
    seq: u64,
}

impl EventQueue {
    pub fn new() -> Self {
        Self::default()
    }

    #[inline(always)]
    pub fn schedule(&mut self, at: Time, event: Event) {
        self.seq += 1;
        let e = Entry { time: at.as_ns(), seq: self.seq, event };
        match event {
            Event::LinkDeliver(_) => self.hot.push(e),
            _ => self.cold.push(e),
        }
    }

    /// The heap holding the earliest event.
    #[inline(always)]
    fn earliest(&mut self) -> Option<&mut MinHeap<Event>> {
        match (self.hot.peek(), self.cold.peek()) {
            (Some(h), Some(c)) => Some(if h.key() < c.key() { &mut self.hot } else { &mut self.cold }),
            (Some(_), None) => Some(&mut self.hot),
            (None, Some(_)) => Some(&mut self.cold),
            (None, None) => None,
        }
    }

    /// Removes and returns the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        self.earliest()?.pop().map(|e| (Time(e.time), e.event))
    }

    /// Removes and returns the earliest event if it is due at or before `end`.
    #[inline(always)]
    pub fn pop_due(&mut self, end: Time) -> Option<(Time, Event)> {
        let heap = self.earliest()?;
        if heap.peek().is_some_and(|e| e.time > end.as_ns()) {
            return None;
        }
        heap.pop().map(|e| (Time(e.time), e.event))
    }

    /// The links of the next `K` packet deliveries in pop order, as far as the hot heap tells
    /// without popping (a best-first walk of its first levels): what to prefetch. A cold event
    /// in between, or a delivery scheduled meanwhile, only makes a prefetch useless, never
    /// wrong.
    #[inline(always)]
    pub fn next_deliveries<const K: usize>(&self) -> [Option<u32>; K] {
        let v = self.hot.entries();
        let mut out = [None; K];
        // Candidates: the children of the entries taken so far (at most K + 1 of them).
        let mut cand = [0usize; 16];
        let mut n = usize::from(!v.is_empty());
        for slot in out.iter_mut() {
            if n == 0 {
                break;
            }
            let mut best = 0;
            for c in 1..n {
                if v[cand[c]].key() < v[cand[best]].key() {
                    best = c;
                }
            }
            let i = cand[best];
            if let Event::LinkDeliver(l) = v[i].event {
                *slot = Some(l);
            }
            n -= 1;
            cand[best] = cand[n];
            for child in [2 * i + 1, 2 * i + 2] {
                if child < v.len() && n < cand.len() {
                    cand[n] = child;
                    n += 1;
                }
            }
        }
        out
    }

    /// The earliest cold event (timers, session sends), if any.
    #[inline(always)]
    pub fn next_cold(&self) -> Option<Event> {
        self.cold.peek().map(|e| e.event)
    }

    /// Time of the earliest event.
    #[inline]
    pub fn peek_time(&self) -> Option<Time> {
        let h = self.hot.peek().map(|e| e.time);
        let c = self.cold.peek().map(|e| e.time);
        match (h, c) {
            (Some(a), Some(b)) => Some(Time(a.min(b))),
            (a, b) => a.or(b).map(Time),
        }
    }

    pub fn len(&self) -> usize {
        self.hot.len() + self.cold.len()
    }

    pub fn is_empty(&self) -> bool {
        self.hot.is_empty() && self.cold.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Interleaved pushes and pops on both heaps come out exactly as a stable sort by time.
    #[test]
    fn random_schedules_pop_in_time_then_insertion_order() {
        let mut q = EventQueue::new();
        let mut model: Vec<(u64, u64, Event)> = Vec::new(); // (time, insertion index, event)
        let mut x: u64 = 12345;
        let mut rand = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut now = 0u64;
        let mut seq = 0u64;
        for _ in 0..20_000 {
            if rand() % 3 != 0 || model.is_empty() {
                let t = now + rand() % 50;
                let ev = if rand() % 2 == 0 { Event::LinkDeliver(seq as u32) } else { Event::SenderTimer(seq as u32) };
                q.schedule(Time(t), ev);
                model.push((t, seq, ev));
                seq += 1;
            } else {
                let (i, _) = model.iter().enumerate().min_by_key(|(_, m)| (m.0, m.1)).unwrap();
                let (t, _, ev) = model.remove(i);
                assert_eq!(q.pop(), Some((Time(t), ev)));
                now = t;
            }
        }
    }

    #[test]
    fn equal_times_pop_in_insertion_order() {
        let mut q = EventQueue::new();
        q.schedule(Time(5), Event::Sample);
        q.schedule(Time(3), Event::FlowStart(1));
        q.schedule(Time(5), Event::FlowStart(2));
        q.schedule(Time(3), Event::FlowStart(3));
        q.schedule(Time(3), Event::LinkDeliver(7));
        q.schedule(Time(1), Event::LinkDeliver(8));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (Time(1), Event::LinkDeliver(8)),
                (Time(3), Event::FlowStart(1)),
                (Time(3), Event::FlowStart(3)),
                (Time(3), Event::LinkDeliver(7)),
                (Time(5), Event::Sample),
                (Time(5), Event::FlowStart(2)),
            ]
        );
    }

    /// The prefetch hints name the first deliveries in pop order, whatever the heap's
    /// shape (random times, ties broken by insertion).
    #[test]
    fn next_deliveries_are_the_next_pops() {
        let mut x: u64 = 99;
        let mut rand = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for round in 0..500 {
            let mut q = EventQueue::new();
            for k in 0..(round % 40) {
                q.schedule(Time(rand() % 20), Event::LinkDeliver(k));
            }
            let hint = q.next_deliveries::<6>();
            let popped: Vec<Option<u32>> = (0..6)
                .map(|_| match q.pop() {
                    Some((_, Event::LinkDeliver(l))) => Some(l),
                    _ => None,
                })
                .collect();
            assert_eq!(hint.to_vec(), popped, "round {round}");
        }
    }
}
