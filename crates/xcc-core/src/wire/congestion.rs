//! The congestion header: the explicit-feedback fields a protocol carries between transport and
//! network ("the congestion layer" of seed 002). One variant per protocol; each variant's body
//! has an exact encoding, framed as a shim `proto:u8 len:u8 body[len]`.
//!
//! Adding a protocol: its number in `proto`, one line in the registry below, and its header
//! file (`LEN`, `emit_body`, `parse_body`) with a round-trip test.

use super::jetmax::JetMaxHeader;
use super::maxnet::MaxNetHeader;
use super::piqi_rcp::PiqiRcpHeader;
use super::rcp::RcpHeader;
use super::xcp::XcpHeader;
use super::WireError;

/// Protocol numbers of the shim header.
pub mod proto {
    /// No explicit feedback (TCP NewReno, CBR).
    pub const NONE: u8 = 0;
    /// MaxNet: the TCP option kind of seed 000 (Fig. 4), reused as the shim's protocol number.
    pub const MAXNET: u8 = 42;
    /// XCP (ns-2.35 / draft-falk-xcp-spec fields).
    pub const XCP: u8 = 43;
    /// RCP (rate and RTT).
    pub const RCP: u8 = 44;
    /// PIQI-RCP (Jain and Loguinov, IWQoS 2007): an RCP-family rate and the sender's RTT.
    pub const PIQI_RCP: u8 = 45;
    /// JetMax (Zhang, Leonard and Loguinov, INFOCOM 2006): fair rate and bottleneck hop ids.
    pub const JETMAX: u8 = 46;
}

/// Bytes of the shim framing (protocol number and body length).
pub const SHIM_LEN: usize = 2;

macro_rules! congestion_headers {
    ( $( $(#[$vm:meta])* $V:ident($H:ty) = $proto:path ),* $(,)? ) => {
        /// Explicit feedback fields, as values.
        #[derive(Copy, Clone, Debug, PartialEq, Default)]
        pub enum CongestionHeader {
            /// The packet carries no congestion header.
            #[default]
            None,
            $( $(#[$vm])* $V($H) ),*
        }

        impl CongestionHeader {
            pub fn proto(&self) -> u8 {
                match self {
                    CongestionHeader::None => proto::NONE,
                    $( CongestionHeader::$V(_) => $proto, )*
                }
            }

            /// Length of the body on the wire (without the two shim bytes).
            pub fn body_len(&self) -> usize {
                match self {
                    CongestionHeader::None => 0,
                    $( CongestionHeader::$V(_) => <$H>::LEN, )*
                }
            }

            /// Bytes this header adds to a packet on the wire (zero when there is none).
            pub fn wire_len(&self) -> usize {
                match self {
                    CongestionHeader::None => 0,
                    _ => SHIM_LEN + self.body_len(),
                }
            }

            /// Writes `proto len body` into `buf`; returns the bytes written.
            pub fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
                let n = SHIM_LEN + self.body_len();
                if buf.len() < n {
                    return Err(WireError::Truncated);
                }
                buf[0] = self.proto();
                buf[1] = self.body_len() as u8;
                match self {
                    CongestionHeader::None => {}
                    $( CongestionHeader::$V(h) => h.emit_body(&mut buf[SHIM_LEN..n]), )*
                }
                Ok(n)
            }

            /// Parses `proto len body` from untrusted bytes; returns the header and the bytes
            /// consumed.
            pub fn parse(buf: &[u8]) -> Result<(CongestionHeader, usize), WireError> {
                if buf.len() < SHIM_LEN {
                    return Err(WireError::Truncated);
                }
                let (p, len) = (buf[0], buf[1] as usize);
                if buf.len() < SHIM_LEN + len {
                    return Err(WireError::Truncated);
                }
                let body = &buf[SHIM_LEN..SHIM_LEN + len];
                let hdr = match (p, len) {
                    (proto::NONE, 0) => CongestionHeader::None,
                    $( ($proto, <$H>::LEN) => CongestionHeader::$V(<$H>::parse_body(body)), )*
                    _ => return Err(WireError::Malformed),
                };
                Ok((hdr, SHIM_LEN + len))
            }
        }
    };
}

// The registry of congestion headers: one line each, with its protocol number.
congestion_headers! {
    /// MaxNet's price and echo (seed 000, Fig. 4).
    MaxNet(MaxNetHeader) = proto::MAXNET,
    /// XCP's RTT, inter-packet time and feedback (protocols.md 2.2).
    Xcp(XcpHeader) = proto::XCP,
    /// RCP's offered rate and RTT (protocols.md 3.4).
    Rcp(RcpHeader) = proto::RCP,
    /// PIQI-RCP's rate and RTT.
    PiqiRcp(PiqiRcpHeader) = proto::PIQI_RCP,
    /// JetMax's share, fair rate and bottleneck hop ids.
    JetMax(JetMaxHeader) = proto::JETMAX,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `None` adds nothing to a packet's size (`wire_len` 0: plain TCP carries no shim), and its
    /// shim framing, when emitted, is `proto 0, len 0` and parses back.
    #[test]
    fn none_round_trips_with_zero_wire_length() {
        let h = CongestionHeader::None;
        assert_eq!(h.wire_len(), 0);
        assert_eq!(h.body_len(), 0);
        assert_eq!(h.proto(), proto::NONE);
        assert_eq!(CongestionHeader::default(), CongestionHeader::None);

        let mut buf = [0xEEu8; 8];
        assert_eq!(h.emit(&mut buf), Ok(SHIM_LEN));
        assert_eq!(buf[..SHIM_LEN], [proto::NONE, 0]);
        assert_eq!(buf[SHIM_LEN..], [0xEE; 6], "emit must not write past the header");
        // Trailing bytes (the rest of the packet) are not consumed.
        assert_eq!(CongestionHeader::parse(&buf), Ok((CongestionHeader::None, SHIM_LEN)));
        assert_eq!(CongestionHeader::parse(&buf[..SHIM_LEN]), Ok((CongestionHeader::None, SHIM_LEN)));
    }

    /// MaxNet's shim is byte for byte seed 000's TCP option: kind 42, 6, echo, price.
    #[test]
    fn maxnet_round_trips_as_the_papers_option() {
        let h = CongestionHeader::MaxNet(MaxNetHeader { echo: 0xABCDEF, price: 0x800001 });
        assert_eq!(h.wire_len(), 8);
        let mut buf = [0u8; 8];
        assert_eq!(h.emit(&mut buf), Ok(8));
        assert_eq!(buf, [42, 6, 0xAB, 0xCD, 0xEF, 0x80, 0x00, 0x01]);
        assert_eq!(CongestionHeader::parse(&buf), Ok((h, 8)));
        assert_eq!(CongestionHeader::parse(&[42, 5, 0, 0, 0, 0, 0]), Err(WireError::Malformed));
    }

    /// XCP: proto 43, 16-byte body (rtt, x, feedback, reverse feedback); wrong lengths rejected.
    #[test]
    fn xcp_round_trips_with_proto_43() {
        let h = CongestionHeader::Xcp(XcpHeader {
            rtt_us: 80_000,
            x: 1.25e-4,
            delta_throughput: -3.5e5,
            reverse_feedback: 7.0,
        });
        assert_eq!(h.wire_len(), 18);
        let mut buf = [0u8; 18];
        assert_eq!(h.emit(&mut buf), Ok(18));
        assert_eq!(buf[..6], [43, 16, 0x00, 0x01, 0x38, 0x80]);
        assert_eq!(CongestionHeader::parse(&buf), Ok((h, 18)));
        assert_eq!(CongestionHeader::parse(&[43, 8, 0, 0, 0, 0, 0, 0, 0, 0]), Err(WireError::Malformed));
    }

    /// RCP: proto 44, 8-byte body (rate, rtt); wrong lengths rejected.
    #[test]
    fn rcp_round_trips_with_proto_44() {
        let h = CongestionHeader::Rcp(RcpHeader { rate: 19_375_000.0, rtt_us: 4_200 });
        assert_eq!(h.wire_len(), 10);
        let mut buf = [0u8; 10];
        assert_eq!(h.emit(&mut buf), Ok(10));
        assert_eq!(buf[..2], [44, 8]);
        assert_eq!(buf[6..], [0, 0, 0x10, 0x68]);
        assert_eq!(CongestionHeader::parse(&buf), Ok((h, 10)));
        assert_eq!(
            CongestionHeader::parse(&[44, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
            Err(WireError::Malformed)
        );
    }

    /// PIQI-RCP's shim: proto 45, 8 bytes of body; JetMax's: proto 46, 11 bytes. Both parse back,
    /// and a wrong length is malformed.
    #[test]
    fn piqi_rcp_and_jetmax_round_trip() {
        let p = CongestionHeader::PiqiRcp(PiqiRcpHeader { rate_bps: 1.25e8, rtt_us: 100_000 });
        let j = CongestionHeader::JetMax(JetMaxHeader {
            share_s: 1e-4,
            fair_bps: 5e8,
            bottleneck: 1,
            hop: 2,
            candidate: 0,
        });
        for (h, proto_id, len) in [(p, proto::PIQI_RCP, 8usize), (j, proto::JETMAX, 11)] {
            assert_eq!(h.wire_len(), SHIM_LEN + len);
            let mut buf = [0u8; 16];
            assert_eq!(h.emit(&mut buf), Ok(SHIM_LEN + len));
            assert_eq!(buf[..2], [proto_id, len as u8]);
            assert_eq!(CongestionHeader::parse(&buf[..SHIM_LEN + len]), Ok((h, SHIM_LEN + len)));
            let mut bad = buf;
            bad[1] = len as u8 - 1;
            assert_eq!(CongestionHeader::parse(&bad), Err(WireError::Malformed));
        }
    }

    /// Every packet carries this enum: adding a protocol must not grow it past XCP's 20 bytes
    /// (four 32-bit fields and the tag; JetMax's body is packed to stay below that).
    #[test]
    fn the_header_value_stays_small() {
        assert!(std::mem::size_of::<CongestionHeader>() <= 20, "{}", std::mem::size_of::<CongestionHeader>());
    }

    #[test]
    fn emit_into_short_buffer_is_truncated() {
        let h = CongestionHeader::None;
        assert_eq!(h.emit(&mut []), Err(WireError::Truncated));
        assert_eq!(h.emit(&mut [0u8; 1]), Err(WireError::Truncated));
    }

    #[test]
    fn unknown_proto_or_bad_length_is_malformed() {
        for p in [1u8, 7, 0x80, 0xFF] {
            // (42 is MaxNet: its malformed lengths are tested beside its round trip.)
            assert_eq!(CongestionHeader::parse(&[p, 0]), Err(WireError::Malformed), "proto {p}");
            assert_eq!(CongestionHeader::parse(&[p, 2, 9, 9]), Err(WireError::Malformed));
        }
        // A known protocol with the wrong body length: None has no body.
        assert_eq!(CongestionHeader::parse(&[proto::NONE, 1, 0]), Err(WireError::Malformed));
        assert_eq!(CongestionHeader::parse(&[proto::NONE, 3, 1, 2, 3]), Err(WireError::Malformed));
    }

    #[test]
    fn short_framing_or_body_is_truncated() {
        assert_eq!(CongestionHeader::parse(&[]), Err(WireError::Truncated));
        assert_eq!(CongestionHeader::parse(&[proto::NONE]), Err(WireError::Truncated));
        // The length byte promises more body than the buffer holds: truncation is reported
        // before the protocol is looked at, whatever the protocol number.
        assert_eq!(CongestionHeader::parse(&[proto::NONE, 5, 1, 2]), Err(WireError::Truncated));
        assert_eq!(CongestionHeader::parse(&[0x42, 255]), Err(WireError::Truncated));
        assert_eq!(CongestionHeader::parse(&[0x42, 4, 0, 0, 0]), Err(WireError::Truncated));
    }
}
