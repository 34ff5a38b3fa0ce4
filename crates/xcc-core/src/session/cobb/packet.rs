//! COBB's control packet (reconstructed, see docs/algorithms/cobb.md): the flow's current rate
//! and the explicit rate links lower on the way downstream; the destination bounces it back.

use crate::session::ControlPacket;

/// One COBB control packet. Rates in bit/s.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct CobbPacket {
    /// The rate the flow is sending at now (0 before it has one).
    pub rate: f64,
    /// Explicit rate: the demand at the source, then the minimum of the links' shares.
    pub er: f64,
}

impl CobbPacket {
    /// Two rates and the IP/shim framing around them.
    pub const WIRE_BYTES: u32 = 64;
}

impl ControlPacket for CobbPacket {
    /// Every packet is bounced back to the source with its explicit rate.
    fn at_destination(self) -> Option<CobbPacket> {
        Some(self)
    }

    fn wire_bytes(&self) -> u32 {
        CobbPacket::WIRE_BYTES
    }
}
