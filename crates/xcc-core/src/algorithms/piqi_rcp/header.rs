//! PIQI-RCP's header: the RCP-family pair of a rate and the sender's RTT (protocols.md 3.4 and
//! 4.3.3: PIQI-RCP reuses RCP's end-host machinery so that comparisons isolate the router law).
//!
//! - `rate`: on data packets, the smallest advertised rate of the links crossed so far (bit/s
//!   on the wire; the source writes +infinity, "no request"); on ACKs, the same field echoed
//!   back by the receiver.
//! - `rtt_us`: the sender's smoothed RTT in microseconds (0 before its first sample); routers
//!   take its maximum over a control interval to set their gain (kappa* of Jain & Loguinov).
//!
//! On the wire the body is `rate:f32 rtt_us:u32`, big-endian (8 bytes). The rate is an IEEE-754
//! binary32 so that every capacity from bit/s to far beyond Tb/s is carried with a relative
//! precision of 2^-24; every value round-trips exactly.

use crate::wire::body::{BodyField, FieldKind, HeaderBody};

/// PIQI-RCP's header as a value.
#[derive(Copy, Clone, Debug, PartialEq, Default)]
pub struct PiqiRcpHeader {
    /// Advertised rate in bit/s (forward: path minimum so far; ACK: the echo).
    pub rate_bps: f32,
    /// The sender's RTT estimate in microseconds (0 = none yet).
    pub rtt_us: u32,
}

impl PiqiRcpHeader {
    /// A fresh data-packet header: no rate requested yet, the sender's RTT.
    pub fn request(rtt_us: u32) -> PiqiRcpHeader {
        PiqiRcpHeader { rate_bps: f32::INFINITY, rtt_us }
    }
}

impl HeaderBody for PiqiRcpHeader {
    const PROTO: u8 = 45;
    const NAME: &'static str = "piqi-rcp";
    const LEN: usize = 8;
    const FIELDS: &'static [BodyField] = &[
        BodyField { name: "rate_bps", label: "PIQI-RCP rate (bit/s)", offset: 0, kind: FieldKind::F32 },
        BodyField { name: "rtt_us", label: "PIQI-RCP RTT (us)", offset: 4, kind: FieldKind::U32 },
    ];

    /// Writes `rate rtt_us`, big-endian.
    fn emit_body(&self, buf: &mut [u8]) {
        buf[..4].copy_from_slice(&self.rate_bps.to_bits().to_be_bytes());
        buf[4..8].copy_from_slice(&self.rtt_us.to_be_bytes());
    }

    /// Reads `rate rtt_us` from an 8-byte body.
    fn parse_body(buf: &[u8]) -> Self {
        let word = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
        PiqiRcpHeader { rate_bps: f32::from_bits(word(&buf[..4])), rtt_us: word(&buf[4..8]) }
    }

    fn meaningful(&self) -> bool {
        // False for NaN; +inf means not stamped yet.
        self.rate_bps >= 0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_is_a_big_endian_f32_and_u32() {
        let h = PiqiRcpHeader { rate_bps: 1.0e9, rtt_us: 0x0102_0304 };
        let mut buf = [0u8; 8];
        h.emit_body(&mut buf);
        assert_eq!(buf[..4], 1.0e9f32.to_bits().to_be_bytes());
        assert_eq!(buf[4..], [1, 2, 3, 4]);
        assert_eq!(PiqiRcpHeader::parse_body(&buf), h);
    }

    /// Rates round-trip bit for bit, from 1 bit/s to a googol (infinity: no request).
    #[test]
    fn rates_round_trip_exactly() {
        for r in [1.0f32, 9.6e3, 1.55e8, 9.7e8, 1e13, f32::MAX, f32::INFINITY] {
            let h = PiqiRcpHeader { rate_bps: r, rtt_us: 7 };
            let mut buf = [0u8; 8];
            h.emit_body(&mut buf);
            assert_eq!(PiqiRcpHeader::parse_body(&buf), h);
        }
        assert_eq!(PiqiRcpHeader::request(5).rate_bps, f32::INFINITY);
    }
}
