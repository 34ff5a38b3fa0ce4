//! DropTail: the plain first-in first-out queue (protocols.md §12).
//!
//! A DropTail queue has no policy of its own: an arriving packet joins the tail unless the buffer
//! is full, and then the *arriving* packet is the one lost. In xcclab the driver (simulator or
//! TUN router) owns the FIFO and enforces the hard buffer limit (packets, bytes or unlimited)
//! after every algorithm's verdict, so the algorithm itself always answers [`Verdict::Queue`]
//! and the limit check does all the dropping.
//!
//! Why that is the same as ns-2's `Queue/DropTail`: ns-2's `DropTail::enque` either checks
//! "would the queue overflow with this packet?" before enqueueing (ns-2.35) or enqueues and then
//! removes and drops the packet if the length reached the limit (ns-2.1b); in both the only
//! packet ever lost is the arrival, and only because of the length limit. Splitting that into
//! "algorithm says queue" + "driver applies the limit" gives the same packet fates, so the DT
//! columns of the papers' tables can be reproduced. Two things the *driver* decides (not this
//! file) and that a comparison with ns-2 must keep in mind:
//! - the limit is in packets or in bytes (ns-2's `queue_in_bytes_`, false by default);
//! - ns-2 tests `len + 1 >= limit` on the waiting packets, so a limit of `L` holds `L - 1`
//!   waiting packets plus the one on the wire; protocols.md §12 (`len + 1 > limit`) counts `L`
//!   waiting packets. The difference is one packet of buffer.
//!
//! DropTail never marks ECN: RFC 3168 §5 lets a router set CE instead of the drop an active queue
//! management algorithm decided on, but an overflowing buffer still drops, ECN-capable or not. The ns-2
//! variants drop-front and random-drop are not offered (protocols.md §12 asks for them to be off).

use serde::{Deserialize, Serialize};

use crate::link::{LinkAlgorithm, QueueView, Verdict};
use crate::packet::Packet;
use crate::time::Time;

/// DropTail's configuration. Empty on purpose: the buffer limit is a property of the link (the
/// scenario's `buffer = "240pkt" | "100KB" | "unlimited"`), enforced by the driver for every
/// algorithm alike, so DropTail has nothing left to configure. The struct exists so that every
/// link algorithm has a config type and a scenario line `queue = "droptail"` resolves to a value
/// that can be stored with the results.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DropTailConfig {}

/// The DropTail link algorithm: always queues; the driver's buffer limit drops on overflow.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DropTail {}

impl DropTail {
    /// A DropTail queue. Takes the (empty) config for symmetry with the other algorithms.
    pub fn new(_cfg: DropTailConfig) -> DropTail {
        DropTail {}
    }
}

impl LinkAlgorithm for DropTail {
    /// Always [`Verdict::Queue`]: whether the packet fits is the driver's buffer check, made
    /// after this verdict (see the module docs for why this equals ns-2's DropTail).
    fn on_enqueue(&mut self, _now: Time, _pkt: &mut Packet, _q: &mut dyn QueueView) -> Verdict {
        Verdict::Queue
    }
    /// The buffer alone decides: drivers need not call `on_enqueue` at all.
    fn is_passive(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::fake_queue::FakeQueue;
    use crate::packet::FlowId;
    use crate::wire::Ecn;

    /// Whatever the backlog (empty, moderate, far beyond any sensible limit) and whatever the
    /// ECN codepoint, DropTail queues the packet unchanged: it neither drops nor marks.
    #[test]
    fn always_queues_and_never_touches_the_packet() {
        let mut dt = DropTail::new(DropTailConfig::default());
        for (i, packets) in [0u32, 1, 100, 1_000_000].into_iter().enumerate() {
            for ecn in [Ecn::NotEct, Ecn::Ect0, Ecn::Ect1, Ecn::Ce] {
                let mut q = FakeQueue::busy(packets);
                let mut pkt = Packet { flow: FlowId(7), wire_bytes: 1500, ecn, ..Packet::default() };
                let before = pkt;
                let v = dt.on_enqueue(Time::from_ns(i as u64 * 1000), &mut pkt, &mut q);
                assert_eq!(v, Verdict::Queue);
                assert_eq!(pkt, before, "DropTail must not rewrite the packet");
            }
        }
        assert!(!dt.wants_dequeue());
        assert_eq!(dt.poll_timeout(), None);
        assert_eq!(dt.gauge(), 0.0);
    }
}
