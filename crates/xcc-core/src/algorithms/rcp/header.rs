//! RCP's congestion header (protocols.md 3.4): the rate routers offer the flow and the sender's
//! RTT. The source sends "no request" (infinity); each router on the way out lowers `rate` to
//! its own `R` if smaller; the receiver copies the header into its ACKs (ACKs are not stamped,
//! so the copy is what the forward path said).
//!
//! On the wire the body is 8 bytes, big-endian: `rate:f32 rtt_us:u32`, `rate` in bytes/s (IEEE
//! 754 single precision: exact round trip; +infinity = "no request", ns-2's -1). ns-2 charges a
//! 40-byte header for RCP's packet type, rate, RTT, timestamp, sequence number and flow id; here
//! the packet type, timestamp and sequence number live in the shared transport segment, so the
//! shim only carries what routers read or write.

use crate::wire::body::{BodyField, FieldKind, HeaderBody};

/// The RCP header as a value.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct RcpHeader {
    /// Offered rate in bytes/s; `f32::INFINITY` until a router stamps it.
    pub rate: f32,
    /// Sender's RTT in microseconds; 0 = no estimate yet.
    pub rtt_us: u32,
}

impl Default for RcpHeader {
    fn default() -> Self {
        RcpHeader { rate: f32::INFINITY, rtt_us: 0 }
    }
}

impl RcpHeader {
    pub fn rtt_s(&self) -> f64 {
        self.rtt_us as f64 * 1e-6
    }
}

impl HeaderBody for RcpHeader {
    const PROTO: u8 = 44;
    const NAME: &'static str = "rcp";
    const LEN: usize = 8;
    const FIELDS: &'static [BodyField] = &[
        BodyField { name: "rate", label: "RCP rate (bytes/s)", offset: 0, kind: FieldKind::F32 },
        BodyField { name: "rtt_us", label: "RCP RTT (us)", offset: 4, kind: FieldKind::U32 },
    ];

    fn emit_body(&self, buf: &mut [u8]) {
        buf[0..4].copy_from_slice(&self.rate.to_bits().to_be_bytes());
        buf[4..8].copy_from_slice(&self.rtt_us.to_be_bytes());
    }

    fn parse_body(buf: &[u8]) -> Self {
        let word = |i: usize| u32::from_be_bytes([buf[i], buf[i + 1], buf[i + 2], buf[i + 3]]);
        RcpHeader { rate: f32::from_bits(word(0)), rtt_us: word(4) }
    }

    fn meaningful(&self) -> bool {
        // False for NaN; +inf means not stamped yet.
        self.rate >= 0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_bytes_are_rate_then_rtt() {
        let h = RcpHeader { rate: 125e6, rtt_us: 50_000 };
        let mut buf = [0u8; 8];
        h.emit_body(&mut buf);
        // 125e6 = 0x4CEE6B28 in IEEE 754 single precision; 50 000 = 0xC350.
        assert_eq!(buf, [0x4C, 0xEE, 0x6B, 0x28, 0, 0, 0xC3, 0x50]);
        assert_eq!(RcpHeader::parse_body(&buf), h);
        let none = RcpHeader::default();
        none.emit_body(&mut buf);
        assert_eq!(buf[..4], [0x7F, 0x80, 0, 0], "no request is +infinity");
        assert_eq!(RcpHeader::parse_body(&buf), none);
    }
}
