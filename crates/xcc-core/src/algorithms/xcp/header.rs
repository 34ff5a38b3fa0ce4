//! XCP's congestion header in the ns-2.35 / draft-falk-xcp-spec form (protocols.md 2.2): the
//! sender's RTT, its idealised inter-packet time `x = rtt * s / cwnd` (replaces the paper's
//! `H_cwnd` and saves the router a division), the feedback routers lower on the way out
//! (`delta_throughput`, a throughput change in bytes/s, signed) and the receiver's sum of the
//! feedback it saw, carried back on ACKs (`reverse_feedback`).
//!
//! On the wire the body is 16 bytes, big-endian: `rtt_us:u32 x:f32 delta_throughput:f32
//! reverse_feedback:f32` (IEEE 754 single precision, so every value round-trips exactly). The
//! draft's 20-byte header also has a version/format byte and a reserved word, which the shim's
//! `proto len` framing replaces. `rtt_us = 0` means "no RTT estimate yet" (the router then gives
//! zero feedback, protocols.md 2.6).

use crate::wire::body::{BodyField, FieldKind, HeaderBody};

/// The XCP header as a value.
#[derive(Copy, Clone, Debug, PartialEq, Default)]
pub struct XcpHeader {
    /// Sender's smoothed RTT in microseconds; 0 = no estimate yet.
    pub rtt_us: u32,
    /// Idealised inter-packet time `rtt * s / cwnd` in seconds.
    pub x: f32,
    /// Feedback in bytes/s: initialised by the sender to what it wants, only lowered by routers.
    pub delta_throughput: f32,
    /// On ACKs: the sum of `delta_throughput` of the data packets this ACK covers.
    pub reverse_feedback: f32,
}

impl XcpHeader {
    /// The RTT in seconds.
    pub fn rtt_s(&self) -> f64 {
        self.rtt_us as f64 * 1e-6
    }
}

impl HeaderBody for XcpHeader {
    const PROTO: u8 = 43;
    const NAME: &'static str = "xcp";
    const LEN: usize = 16;
    const FIELDS: &'static [BodyField] = &[
        BodyField { name: "rtt_us", label: "XCP RTT (us)", offset: 0, kind: FieldKind::U32 },
        BodyField { name: "x", label: "XCP inter-packet time x (s)", offset: 4, kind: FieldKind::F32 },
        BodyField { name: "delta_throughput", label: "XCP feedback (bytes/s)", offset: 8, kind: FieldKind::F32 },
        BodyField {
            name: "reverse_feedback",
            label: "XCP reverse feedback (bytes/s)",
            offset: 12,
            kind: FieldKind::F32,
        },
    ];

    fn emit_body(&self, buf: &mut [u8]) {
        buf[0..4].copy_from_slice(&self.rtt_us.to_be_bytes());
        buf[4..8].copy_from_slice(&self.x.to_bits().to_be_bytes());
        buf[8..12].copy_from_slice(&self.delta_throughput.to_bits().to_be_bytes());
        buf[12..16].copy_from_slice(&self.reverse_feedback.to_bits().to_be_bytes());
    }

    fn parse_body(buf: &[u8]) -> Self {
        let word = |i: usize| u32::from_be_bytes([buf[i], buf[i + 1], buf[i + 2], buf[i + 3]]);
        XcpHeader {
            rtt_us: word(0),
            x: f32::from_bits(word(4)),
            delta_throughput: f32::from_bits(word(8)),
            reverse_feedback: f32::from_bits(word(12)),
        }
    }

    fn meaningful(&self) -> bool {
        self.x.is_finite() && self.x >= 0.0 && self.delta_throughput.is_finite() && self.reverse_feedback.is_finite()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_bytes_are_exact_big_endian_words() {
        let h = XcpHeader { rtt_us: 0x0001_86A0, x: 1.0, delta_throughput: -2.0, reverse_feedback: 0.5 };
        let mut buf = [0u8; 16];
        h.emit_body(&mut buf);
        assert_eq!(
            buf,
            [0x00, 0x01, 0x86, 0xA0, 0x3F, 0x80, 0, 0, 0xC0, 0x00, 0, 0, 0x3F, 0x00, 0, 0],
            "rtt 100 ms, x 1.0, feedback -2.0, reverse 0.5"
        );
        assert_eq!(XcpHeader::parse_body(&buf), h);
        assert!((h.rtt_s() - 0.1).abs() < 1e-12);
    }

    #[test]
    fn every_float_round_trips_bit_for_bit() {
        for v in [0.0f32, -0.0, 1e-9, 3.4e38, -1.5e9, f32::INFINITY, f32::MIN_POSITIVE] {
            let h = XcpHeader { rtt_us: u32::MAX, x: v, delta_throughput: v, reverse_feedback: -v };
            let mut buf = [0u8; 16];
            h.emit_body(&mut buf);
            let back = XcpHeader::parse_body(&buf);
            assert_eq!(back.x.to_bits(), v.to_bits());
            assert_eq!(back.reverse_feedback.to_bits(), (-v).to_bits());
            assert_eq!(back.rtt_us, u32::MAX);
        }
    }
}
