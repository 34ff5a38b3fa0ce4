//! The event queue: a binary heap keyed by (time, insertion sequence), so events at equal times
//! run in the order they were scheduled (nexosim's priority queue does the same). Only the
//! simulation owns it; models never schedule themselves.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use xcc_core::Time;

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
}

#[derive(Copy, Clone, Debug)]
struct Entry {
    time: u64,
    seq: u64,
    event: Event,
}

impl Entry {
    #[inline]
    fn key(&self) -> (u64, u64) {
        (self.time, self.seq)
    }
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.key() == o.key()
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    // Reversed: BinaryHeap is a max-heap and we want the earliest first.
    fn cmp(&self, o: &Self) -> Ordering {
        o.key().cmp(&self.key())
    }
}

/// Deterministic future-event list.
///
/// Two heaps share one sequence counter, so the order is exactly that of a single heap: `hot`
/// holds packet deliveries (one entry per busy link: a handful), `cold` holds timers, flow
/// starts and samples (one entry per flow, rarely touched). Keeping per-flow timers out of the
/// way makes each packet-hop's pop and push a few levels deep instead of a dozen.
#[derive(Default)]
pub struct EventQueue {
    hot: BinaryHeap<Entry>,
    cold: BinaryHeap<Entry>,
    seq: u64,
}

impl EventQueue {
    pub fn new() -> Self {
        Self::default()
    }

    #[inline]
    pub fn schedule(&mut self, at: Time, event: Event) {
        self.seq += 1;
        let e = Entry { time: at.as_ns(), seq: self.seq, event };
        match event {
            Event::LinkDeliver(_) => self.hot.push(e),
            _ => self.cold.push(e),
        }
    }

    /// The heap holding the earliest event.
    #[inline]
    fn earliest(&mut self) -> Option<&mut BinaryHeap<Entry>> {
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
    #[inline]
    pub fn pop_due(&mut self, end: Time) -> Option<(Time, Event)> {
        let heap = self.earliest()?;
        if heap.peek().is_some_and(|e| e.time > end.as_ns()) {
            return None;
        }
        heap.pop().map(|e| (Time(e.time), e.event))
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
}
