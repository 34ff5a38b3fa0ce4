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
pub mod segment;
pub mod session;

pub use body::{BodyField, FieldKind, HeaderBody};
pub use congestion::HeaderInfo;
pub use ecn::Ecn;
pub use segment::{Flags, SackBlock, Segment, SegmentKind, MAX_SACK_BLOCKS};

macro_rules! registered_headers {
    ( $( $name:literal $m:ident {
        $( link: $LV:ident($LT:ident, $LP:ident) as $ltag:literal; )?
        $( host: $HV:ident($HT:ident, $HP:ident) as $htag:literal; )?
        $( echo: $EV:ident($ET:ident); )?
        $( header: $XV:ident($XT:ident); )?
        $( session: $SV:ident($ST:ident, $SP:ident); )?
    } )* ) => {
        congestion_headers! {
            $( $( $XV($crate::algorithms::$m::$XT), )? )*
        }
    };
}

// One variant per registry line with a `header` role (its number is its `HeaderBody::PROTO`).
crate::for_each_algorithm!(registered_headers);

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
