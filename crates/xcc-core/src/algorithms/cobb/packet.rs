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

/// `rate:f64 ER:f64`.
impl crate::wire::session::SessionBody for CobbPacket {
    const LEN: usize = 16;

    fn emit_body(&self, buf: &mut [u8]) {
        buf[0..8].copy_from_slice(&self.rate.to_be_bytes());
        buf[8..16].copy_from_slice(&self.er.to_be_bytes());
    }

    fn parse_body(buf: &[u8]) -> Result<CobbPacket, crate::wire::WireError> {
        Ok(CobbPacket { rate: crate::wire::session::rate_at(buf, 0)?, er: crate::wire::session::rate_at(buf, 8)? })
    }
}
