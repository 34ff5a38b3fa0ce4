//! Explicit-rate *session* protocols: SLBN (seed 004) and the algorithms it is compared with
//! (ERICA, BFYZ, COBB, and rate-feedback adaptations of RCP / PIQI-RCP).
//!
//! These protocols compute a rate per session with control packets that travel the session's
//! path downstream and come back upstream; data packets are never inspected. Each protocol is
//! three sans-IO pieces tied together by [`SessionProtocol`]:
//!
//! - a [`LinkTask`] per directed link (the router's output port), called when a control
//!   packet crosses that link downstream, or when it passes back upstream through the router
//!   that owns the link (the upstream pass updates the state of the *forward* link, seed 004
//!   Fig. 2 and protocols.md 6.7-3), and optionally on a periodic tick with the measured load;
//! - a [`SourceTask`] per session (at the source host / access router), with the API of
//!   seed 004 (`join`, `leave`, `change`, and `rate` for the protocol's answer);
//! - a [`ControlPacket`] type, which says what the destination does with a packet (bounce or
//!   drop) and how large it is on the wire.
//!
//! A driver (the session simulator in `xcc-sim`) owns the clock, the queues and the routes.

pub mod budget;
pub mod data_share;
// Seed 004's comparison algorithms and the per-session table ERICA and BFYZ keep at links.
#[cfg(test)]
mod peer_convergence;
pub mod rm_cell;
pub mod rm_source;
pub mod session_table;
#[cfg(test)]
pub mod test_network;

use crate::time::{Dur, Time};

/// Index of a session in the driver (dense, stable for the session's lifetime).
pub type SessionId = u32;

/// Which way a control packet is travelling on its session's path.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Direction {
    /// From the source towards the destination (Join, Probe, Leave, forward RM cells).
    Downstream,
    /// From the destination back to the source (ProbeAck, backward RM cells).
    Upstream,
}

/// Where a control packet is when a link task sees it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Hop {
    /// The session the packet belongs to (per-session-state protocols key their tables on it).
    pub session: SessionId,
    /// Global id of the link (stable for the run).
    pub link: u32,
    /// Position of the link on the session's path, 0 = the source's access link. Protocols
    /// that carry sets of links in packets (SLBN's B) may use it as the link's name: a path
    /// never repeats a link.
    pub index: u16,
    /// Number of links on the path.
    pub path_len: u16,
    pub dir: Direction,
}

/// What the driver measured on a link over the last tick interval (data as fluid plus control
/// packets), for protocols with timer-driven link computations (ERICA, COBB, RCP).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct LinkLoad {
    /// Mean input rate over the interval, bit/s.
    pub input_rate: f64,
    /// Backlog at the end of the interval, bits.
    pub queue_bits: f64,
    /// Length of the interval.
    pub interval: Dur,
}

/// What a link does with a control packet after processing it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Forward {
    /// Pass it on along the path.
    Pass,
    /// Remove it from the network here.
    Drop,
}

/// The router side of a protocol, one instance per directed link.
pub trait LinkTask {
    type Packet;
    /// A control packet crosses this link (see [`Hop::dir`]); may rewrite its fields.
    fn on_packet(&mut self, now: Time, hop: Hop, pkt: &mut Self::Packet) -> Forward;
    /// Period of [`LinkTask::on_tick`]; `None` (the default) for protocols without link timers.
    fn tick_interval(&self) -> Option<Dur> {
        None
    }
    /// Called every `tick_interval` with the load measured over the interval.
    fn on_tick(&mut self, _now: Time, _load: &LinkLoad) {}
    /// The driver's end-of-run check of the task's own invariants (e.g. counters >= 0).
    fn check(&self) -> Result<(), String> {
        Ok(())
    }
}

/// The source side of a protocol, one instance per session.
///
/// The driver calls `join` once, then `leave`/`change` as the workload says, `on_packet` for
/// every control packet that comes back upstream to the source, and after each of these (and
/// at `next_wakeup`) drains `poll_transmit`.
pub trait SourceTask {
    type Packet;
    /// API.Join(s, r): the session starts and asks for at most `demand` bit/s (`INFINITY` = greedy).
    fn join(&mut self, now: Time, demand: f64);
    /// API.Leave(s): the session is no longer active.
    fn leave(&mut self, now: Time);
    /// API.Change(s, r): new maximum rate.
    fn change(&mut self, now: Time, demand: f64);
    /// A control packet arrived back at the source.
    fn on_packet(&mut self, now: Time, pkt: Self::Packet);
    /// The next control packet to send downstream now, if any.
    fn poll_transmit(&mut self, now: Time) -> Option<Self::Packet>;
    /// When the source next wants `poll_transmit` called (`None`: only after an input).
    fn next_wakeup(&self) -> Option<Time>;
    /// API.Rate(s, r): the rate currently assigned to the session (bit/s); `None` until the
    /// protocol has computed one (such sessions send nothing and are left out of the error).
    fn rate(&self) -> Option<f64>;
    /// True once the session has left and its last control packet has been sent: the driver
    /// may forget the source.
    fn is_finished(&self) -> bool;
}

/// A protocol's control packet: the fields it carries, what its destination does with it and
/// its size on the wire.
pub trait ControlPacket: Clone + core::fmt::Debug {
    /// What the destination does with the packet: `Some` to send it back upstream, `None` to
    /// drop it.
    fn at_destination(self) -> Option<Self>;
    /// Size on the wire, bytes (for queueing and transmission delay).
    fn wire_bytes(&self) -> u32;
}

/// A complete protocol: packet, link task, source task, parameters.
pub trait SessionProtocol {
    /// Name used in configurations and reports (`"slbn"`).
    const NAME: &'static str;
    /// Control packet fields (all protocol state the packet carries).
    type Packet: ControlPacket + Send;
    type Link: LinkTask<Packet = Self::Packet> + Send;
    type Source: SourceTask<Packet = Self::Packet> + Send;
    /// Protocol parameters, read from the experiment configuration (strict serde).
    type Params: Clone + Default + core::fmt::Debug + serde::de::DeserializeOwned + Send;

    /// The task of a link of `capacity` bit/s.
    fn new_link(params: &Self::Params, capacity: f64) -> Self::Link;
    /// The source of session `session`; `join` is called next.
    fn new_source(params: &Self::Params, session: SessionId) -> Self::Source;
}

// Closed-loop rate protocols adapted to session experiments (seed 004's RCP-family baselines).
pub mod feedback;
