//! The one event heap of xcclab's drivers: a binary min-heap keyed by (time, insertion
//! sequence), so events at equal times run in the order they were scheduled (nexosim's priority
//! queue does the same). The packet engine's future-event list (`engine.rs`, two heaps sharing
//! one sequence) and the fluid session driver (`session/sim.rs`) both use it.

/// A scheduled event: its time in ns and its insertion sequence, the order's tie-break.
#[derive(Copy, Clone, Debug)]
pub struct Entry<E> {
    pub time: u64,
    pub seq: u64,
    pub event: E,
}

impl<E> Entry<E> {
    #[inline]
    pub fn key(&self) -> (u64, u64) {
        (self.time, self.seq)
    }
}

/// A binary min-heap of entries by (time, seq). Hand-written rather than `std`'s `BinaryHeap`
/// so that push and pop inline into the event loop whatever else the loop grows to hold (the
/// std one stopped being inlined once the loop got larger, costing 8 % more instructions).
pub struct MinHeap<E> {
    v: Vec<Entry<E>>,
}

impl<E> Default for MinHeap<E> {
    fn default() -> Self {
        MinHeap { v: Vec::new() }
    }
}

impl<E: Copy> MinHeap<E> {
    #[inline(always)]
    pub fn push(&mut self, e: Entry<E>) {
        let mut i = self.v.len();
        self.v.push(e);
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.v[parent].key() <= e.key() {
                break;
            }
            self.v[i] = self.v[parent];
            i = parent;
        }
        self.v[i] = e;
    }

    #[inline(always)]
    pub fn peek(&self) -> Option<&Entry<E>> {
        self.v.first()
    }

    #[inline(always)]
    pub fn pop(&mut self) -> Option<Entry<E>> {
        let last = self.v.pop()?;
        if self.v.is_empty() {
            return Some(last);
        }
        let top = self.v[0];
        let n = self.v.len();
        let mut i = 0;
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let r = l + 1;
            let c = if r < n && self.v[r].key() < self.v[l].key() { r } else { l };
            if self.v[c].key() >= last.key() {
                break;
            }
            self.v[i] = self.v[c];
            i = c;
        }
        self.v[i] = last;
        Some(top)
    }

    pub fn len(&self) -> usize {
        self.v.len()
    }

    pub fn is_empty(&self) -> bool {
        self.v.is_empty()
    }

    /// The entries in heap order (index 0 is the earliest; children of `i` at `2i+1`, `2i+2`).
    #[inline(always)]
    pub fn entries(&self) -> &[Entry<E>] {
        &self.v
    }
}

/// A future-event list of one heap: what the fluid session driver runs on.
pub struct TimedQueue<E> {
    heap: MinHeap<E>,
    seq: u64,
}

impl<E> Default for TimedQueue<E> {
    fn default() -> Self {
        TimedQueue { heap: MinHeap::default(), seq: 0 }
    }
}

impl<E: Copy> TimedQueue<E> {
    /// Schedules `event` at `at` (after every event already scheduled at that time).
    pub fn push(&mut self, at: xcc_core::Time, event: E) {
        self.seq += 1;
        self.heap.push(Entry { time: at.as_ns(), seq: self.seq, event });
    }

    /// Removes and returns the earliest event.
    pub fn pop(&mut self) -> Option<(xcc_core::Time, E)> {
        self.heap.pop().map(|e| (xcc_core::Time(e.time), e.event))
    }
}
