//! # xcc-core: congestion control without I/O
//!
//! Every algorithm of xcclab lives here once, as plain state machines in the sans-IO style of
//! smoltcp and quinn-proto: no clock, no socket, no simulator. A *driver* (the discrete-event
//! simulator in `xcc-sim`, the TUN router of the real-network mode, or the tiny
//! test harness) feeds them packets and the current time and pulls out what they
//! want to send and when they next want to be woken.
//!
//! - [`time`]: integer nanosecond `Time` and `Dur`.
//! - [`wire`]: header values and their exact byte encodings.
//! - [`packet`]: the packet the drivers move.
//! - [`prefetch`]: memory hints for drivers' event loops at large scale.
//! - [`link`]: router side, one algorithm per output link (DropTail, RED, ...).
//! - [`host`]: sender controllers (NewReno, ...) and receiver echoers.
//! - [`params`]: what every algorithm's typed parameters provide (its scenario entry).
//! - [`units`]: quantities with units as scenarios write them.
//! - [`transport`]: the one reliable transport every host algorithm runs on.
//! - [`session`]: explicit-rate session protocols (SLBN, ...): link tasks, sources, control packets.
//! - `harness` (feature `testing`, for tests only): two endpoints and a link on a virtual clock,
//!   with no simulator.

pub mod algorithms;
pub mod analysis;
#[cfg(any(test, feature = "testing"))]
pub mod harness;
pub mod host;
pub mod link;
pub mod packet;
pub mod params;
pub mod prefetch;
pub mod rng;
pub mod session;
pub mod time;
pub mod transport;
pub mod units;
pub mod wire;
pub mod workload;

pub use packet::{FlowId, Packet};
pub use time::{Dur, Time};
