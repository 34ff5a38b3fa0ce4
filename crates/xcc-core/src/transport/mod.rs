//! The one reliable transport every host algorithm runs on.
//!
//! [`Sender`] numbers segments, keeps the retransmission scoreboard, measures RTT (RFC 6298 with
//! RFC 7323-style timestamps), detects losses by duplicate ACKs (RFC 6582 NewReno recovery) or,
//! with SACK on, by the scoreboard (RFC 6675 style), runs the retransmission timer, reacts to
//! ECN-Echo at most once per window (RFC 3168), and paces when the controller gives a rate.
//! With [`LossDetection::Rack`] it recovers as Linux does instead (`rack.rs`): RACK's time-based
//! loss marks, lost retransmissions included, tail loss probes (RFC 8985), and timeouts that
//! keep the SACK scoreboard and are undone when spurious (RFC 5682).
//! The [`crate::host::Controller`] only decides the window or the rate.
//!
//! [`Receiver`] delivers in order, acknowledges cumulatively with SACK blocks, echoes CE until
//! CWR, optionally delays ACKs (RFC 5681 section 4.2), and echoes the congestion header through
//! its [`crate::host::Echoer`].
//!
//! Connections: with [`TransportConfig::handshake`] the sender opens the connection with a SYN
//! and the receiver answers with a SYN-ACK before any data ([`handshake`]: SYN retransmission
//! with the initial RTO and back-off, ECN negotiation, the controller's header on both, FIN on
//! the last segment). Without it the connection is open when the flow starts, like ns-2's
//! one-way agents (which produced most papers' numbers): both ends know the configuration.

mod config;
pub mod handshake;
mod rack;
mod rate;
mod receiver;
mod rtt;
mod sender;

pub use config::{DelayedAck, LossDetection, PartialAckRto, RtoPolicy, TransportConfig};
pub use handshake::Connect;
pub use rate::RateSample;
pub use receiver::{Receiver, ReceiverStats};
pub use rtt::RttEstimator;
pub use sender::{window_cap_segments, Sender, SenderStats};
