//! Link-side algorithms: what a router runs per output link (queue management and explicit
//! feedback). Each algorithm is a plain struct with no clock and no queue of its own: the driver
//! owns the FIFO and tells the algorithm about arrivals, departures and timer ticks.
//!
//! Call order the driver guarantees, per link, in non-decreasing `now`:
//! - `on_enqueue` when a packet arrives, after every departure due at or before `now` was
//!   reported; the verdict decides whether the packet joins the queue.
//! - `on_dequeue` when a packet leaves the queue to start its transmission (only if
//!   `wants_dequeue()`); explicit protocols stamp their feedback here.
//! - `on_timeout` at `poll_timeout()` (control intervals); early or repeated calls do nothing.
//!
//! The algorithms themselves live in their folders under [`crate::algorithms`]; the registry
//! there makes [`AnyLinkAlgorithm`] (docs/architecture.md, "Adding an algorithm").

pub mod control_interval;
#[cfg(test)]
pub(crate) mod fake_queue;
pub mod model;
pub mod pfc_fabric;

use crate::packet::{FlowId, Packet};
use crate::time::Time;

/// What happens to an arriving packet.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Join the queue unchanged.
    Queue,
    /// Set CE (the packet is ECN-capable) and join the queue.
    Mark,
    /// Discard the packet.
    Drop,
}

/// What an algorithm may ask of the queue the driver keeps for it.
///
/// Queue length counts packets *waiting*, not the one being transmitted (ns-2 convention, so a
/// DropTail limit of L packets means the same thing as in the papers' NS-2 runs).
pub trait QueueView {
    /// Bytes waiting, the arriving packet not included.
    fn backlog_bytes(&self) -> u64;
    /// Packets waiting, the arriving packet not included.
    fn backlog_packets(&self) -> u32;
    /// When the link last became idle, if it is idle now (nothing waiting or in service).
    fn idle_since(&self) -> Option<Time>;
    /// Link capacity in bit/s.
    fn rate_bps(&self) -> u64;
    /// Visits waiting packets from the tail (newest) towards the head until `f` returns false.
    fn visit_from_tail(&self, f: &mut dyn FnMut(FlowId, u32) -> bool);
    /// Sets CE on the waiting packet of `flow` nearest the head; false if none waits or it is
    /// not ECN-capable (then nothing changed).
    fn mark_first_of(&mut self, flow: FlowId) -> bool;
}

/// One output link's algorithm.
pub trait LinkAlgorithm {
    /// A packet arrives; decides its fate. May rewrite `pkt.cc` (explicit feedback on arrival).
    fn on_enqueue(&mut self, now: Time, pkt: &mut Packet, queue: &mut dyn QueueView) -> Verdict;
    /// Whether the driver must report departures (costs a little per packet).
    fn wants_dequeue(&self) -> bool {
        false
    }
    /// True for an algorithm that always returns `Verdict::Queue`, never changes the packet and
    /// never looks at the queue (DropTail): the driver may skip calling `on_enqueue`.
    fn is_passive(&self) -> bool {
        false
    }
    /// A packet starts its transmission. `backlog_bytes` excludes it.
    fn on_dequeue(&mut self, _now: Time, _pkt: &mut Packet, _backlog_bytes: u64) {}
    /// Next control-interval deadline, if any.
    fn poll_timeout(&self) -> Option<Time> {
        None
    }
    /// Control-interval tick.
    fn on_timeout(&mut self, _now: Time, _backlog_bytes: u64) {}
    /// One number describing the algorithm's state for time series (RED: average queue in
    /// bytes or packets, as configured; price or fair rate for explicit protocols).
    fn gauge(&self) -> f64 {
        0.0
    }
}

macro_rules! link_algorithms {
    ( $( $name:literal $m:ident {
        $( link: $LV:ident($LT:ident, $LP:ident) as $ltag:literal; )?
        $( host: $HV:ident($HT:ident, $HP:ident) as $htag:literal; )?
        $( echo: $EV:ident($ET:ident); )?
        $( header: $XV:ident($XT:ident); )?
        $( session: $SV:ident($ST:ident, $SP:ident); )?
    } )* ) => {
        /// Static dispatch over every link algorithm (no `Box<dyn>` in the hot loop), one
        /// variant per registry line with a `link` role.
        #[derive(Debug, Clone)]
        pub enum AnyLinkAlgorithm {
            $( $( $LV($crate::algorithms::$m::$LT), )? )*
        }

        macro_rules! dispatch {
            ($self:expr, $a:ident => $body:expr) => {
                match $self {
                    $( $( AnyLinkAlgorithm::$LV($a) => $body, )? )*
                }
            };
        }
    };
}

crate::for_each_algorithm!(link_algorithms);

impl LinkAlgorithm for AnyLinkAlgorithm {
    #[inline]
    fn on_enqueue(&mut self, now: Time, pkt: &mut Packet, queue: &mut dyn QueueView) -> Verdict {
        dispatch!(self, a => a.on_enqueue(now, pkt, queue))
    }
    #[inline]
    fn wants_dequeue(&self) -> bool {
        dispatch!(self, a => a.wants_dequeue())
    }
    fn is_passive(&self) -> bool {
        dispatch!(self, a => a.is_passive())
    }
    #[inline]
    fn on_dequeue(&mut self, now: Time, pkt: &mut Packet, backlog_bytes: u64) {
        dispatch!(self, a => a.on_dequeue(now, pkt, backlog_bytes))
    }
    fn poll_timeout(&self) -> Option<Time> {
        dispatch!(self, a => a.poll_timeout())
    }
    fn on_timeout(&mut self, now: Time, backlog_bytes: u64) {
        dispatch!(self, a => a.on_timeout(now, backlog_bytes))
    }
    fn gauge(&self) -> f64 {
        dispatch!(self, a => a.gauge())
    }
}
