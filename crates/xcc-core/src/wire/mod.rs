//! Bytes and meaning, kept apart (style.md, habit 5).
//!
//! Each header has a `Repr` value type (what the state machines use) and a byte encoding with
//! `parse`/`emit` (what the real-network mode puts on the wire and what pcap export writes).
//! The simulator passes `Repr` values; it never encodes.

pub mod body;
#[macro_use]
pub mod congestion;
pub mod datagram;
pub mod ecn;
pub mod jetmax;
pub mod maxnet;
pub mod piqi_rcp;
pub mod rcp;
pub mod segment;
pub mod session;
pub mod tcp_option;
pub mod xcp;

pub use body::{BodyField, FieldKind, HeaderBody};
pub use congestion::HeaderInfo;
pub use ecn::Ecn;
pub use jetmax::JetMaxHeader;
pub use maxnet::MaxNetHeader;
pub use piqi_rcp::PiqiRcpHeader;
pub use rcp::RcpHeader;
pub use segment::{Flags, SackBlock, Segment, SegmentKind, MAX_SACK_BLOCKS};
pub use xcp::XcpHeader;

// The registry of congestion headers: one line each (its number is its `HeaderBody::PROTO`).
congestion_headers! {
    /// MaxNet's price and echo (seed 000, Fig. 4).
    MaxNet(MaxNetHeader),
    /// XCP's RTT, inter-packet time and feedback (protocols.md 2.2).
    Xcp(XcpHeader),
    /// RCP's offered rate and RTT (protocols.md 3.4).
    Rcp(RcpHeader),
    /// PIQI-RCP's rate and RTT.
    PiqiRcp(PiqiRcpHeader),
    /// JetMax's share, fair rate and bottleneck hop ids.
    JetMax(JetMaxHeader),
}

/// Why a byte buffer could not be parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireError {
    /// The buffer is shorter than the header says it is.
    Truncated,
    /// A field holds a value the format does not allow (unknown kind, bad length, ...).
    Malformed,
}

impl core::fmt::Display for WireError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            WireError::Truncated => write!(f, "buffer too short for the header"),
            WireError::Malformed => write!(f, "header field holds a value the format forbids"),
        }
    }
}
impl std::error::Error for WireError {}
