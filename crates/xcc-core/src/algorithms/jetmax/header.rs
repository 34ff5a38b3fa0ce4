//! JetMax's header (reconstructed, see docs/algorithms/jetmax.md): what a router needs to count
//! the flows bottlenecked at its link with additions only, and to tell each flow which link of
//! its path limits it.
//!
//! - `share_s`: the time the sender's pacer spends on one full-size packet at its current rate,
//!   `packet_bits / x` in seconds (0 on the first probe and on pure ACKs: counted by nobody). The
//!   sum over a control interval `D` of the shares of one flow's packets is `D` whatever its rate,
//!   so `sum / D` counts flows with one addition per packet and no division.
//! - `fair_bps`: forward, the smallest fair rate of the links crossed so far (the source writes
//!   +infinity); on ACKs, the echo.
//! - `bottleneck`: the hop index (0 = first link of the path) of the link the source believes is
//!   its bottleneck, `NO_HOP` while it has none.
//! - `hop`: incremented by every JetMax link, so each link learns its position on this packet's
//!   path (identifiers are path-local, as 8 bits could not name routers globally; protocols.md
//!   5.3.1).
//! - `candidate`: the hop index of the link that set `fair_bps` (routers write it with the rate);
//!   echoed, it becomes the source's next `bottleneck`.
//!
//! Seed 000 Section IX counts four 32-bit and three 8-bit fields in the paper's header; we carry
//! two 32-bit and three 8-bit ones (the other two 32-bit fields' contents are not known to us, and
//! nothing here needs them). On the wire the body is `share_s:f32 fair_bps:f32 bottleneck:u8
//! hop:u8 candidate:u8`, big-endian (11 bytes); f32 values round-trip exactly.

use crate::wire::body::{BodyField, FieldKind, HeaderBody};

/// "No link": the bottleneck of a flow that has not heard back yet.
pub const NO_HOP: u8 = u8::MAX;

/// JetMax's header as a value. Packed (alignment 1), so that the congestion header, and with it
/// every packet the simulator moves, stays as small as with MaxNet's (12 bytes with its tag):
/// fields are read and written by value.
#[derive(Copy, Clone, Debug, PartialEq)]
#[repr(C, packed)]
pub struct JetMaxHeader {
    /// Seconds of the sender's pacing per full-size packet (`packet_bits / x`), 0 if not counted.
    pub share_s: f32,
    /// Fair rate in bit/s: path minimum so far (forward) or its echo (ACK).
    pub fair_bps: f32,
    /// Hop index of the flow's bottleneck link, or [`NO_HOP`].
    pub bottleneck: u8,
    /// Number of JetMax links crossed so far.
    pub hop: u8,
    /// Hop index of the link that wrote `fair_bps`, or [`NO_HOP`].
    pub candidate: u8,
}

impl Default for JetMaxHeader {
    fn default() -> Self {
        JetMaxHeader { share_s: 0.0, fair_bps: f32::INFINITY, bottleneck: NO_HOP, hop: 0, candidate: NO_HOP }
    }
}

impl HeaderBody for JetMaxHeader {
    const PROTO: u8 = 46;
    const NAME: &'static str = "jetmax";
    const LEN: usize = 11;
    const FIELDS: &'static [BodyField] = &[
        BodyField { name: "share_s", label: "JetMax share (s)", offset: 0, kind: FieldKind::F32 },
        BodyField { name: "fair_bps", label: "JetMax fair rate (bit/s)", offset: 4, kind: FieldKind::F32 },
        BodyField { name: "bottleneck", label: "JetMax bottleneck hop", offset: 8, kind: FieldKind::U8 },
        BodyField { name: "hop", label: "JetMax hop", offset: 9, kind: FieldKind::U8 },
        BodyField { name: "candidate", label: "JetMax candidate hop", offset: 10, kind: FieldKind::U8 },
    ];

    /// Writes the body, big-endian.
    fn emit_body(&self, buf: &mut [u8]) {
        buf[..4].copy_from_slice(&self.share_s.to_bits().to_be_bytes());
        buf[4..8].copy_from_slice(&self.fair_bps.to_bits().to_be_bytes());
        buf[8] = self.bottleneck;
        buf[9] = self.hop;
        buf[10] = self.candidate;
    }

    /// Reads the body from 11 bytes.
    fn parse_body(buf: &[u8]) -> Self {
        let word = |b: &[u8]| f32::from_bits(u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
        JetMaxHeader {
            share_s: word(&buf[..4]),
            fair_bps: word(&buf[4..8]),
            bottleneck: buf[8],
            hop: buf[9],
            candidate: buf[10],
        }
    }

    fn meaningful(&self) -> bool {
        self.share_s.is_finite() && self.share_s >= 0.0 && self.fair_bps >= 0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_layout_and_round_trip() {
        let h = JetMaxHeader { share_s: 1.2e-5, fair_bps: 3.3e8, bottleneck: 2, hop: 3, candidate: 1 };
        let mut buf = [0u8; 11];
        h.emit_body(&mut buf);
        assert_eq!(buf[..4], 1.2e-5f32.to_bits().to_be_bytes());
        assert_eq!(buf[4..8], 3.3e8f32.to_bits().to_be_bytes());
        assert_eq!(buf[8..], [2, 3, 1]);
        assert_eq!(JetMaxHeader::parse_body(&buf), h);
    }

    /// Capacity independence on the wire: rates from 1 bit/s past 1e38 and shares down to
    /// picoseconds keep their bits.
    #[test]
    fn extreme_values_round_trip() {
        for (share, fair) in [(0.0f32, f32::INFINITY), (1e-12, 1.0), (10.0, f32::MAX)] {
            let h = JetMaxHeader { share_s: share, fair_bps: fair, ..JetMaxHeader::default() };
            let mut buf = [0u8; 11];
            h.emit_body(&mut buf);
            assert_eq!(JetMaxHeader::parse_body(&buf), h);
        }
    }
}
