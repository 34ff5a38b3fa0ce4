//! The congestion header: the explicit-feedback fields a protocol carries between transport and
//! network ("the congestion layer" of seed 002). One variant per protocol; each variant's body
//! has an exact encoding, framed as a shim `proto:u8 len:u8 body[len]`.
//!
//! Adding a protocol: its header file (`impl HeaderBody`: number, name, length, field table,
//! encoding) with a round-trip test, and one line in the registry in `wire/mod.rs`.

use super::body::BodyField;

/// The shim's protocol number for "no congestion header" (TCP NewReno, CBR); every other
/// number is its header's [`HeaderBody::PROTO`](super::body::HeaderBody::PROTO).
pub const PROTO_NONE: u8 = 0;

/// One registered header, as the dissector and `xcc list` describe it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct HeaderInfo {
    pub proto: u8,
    pub name: &'static str,
    /// Body length (the smallest form of a body with a repeated record).
    pub len: usize,
    pub fields: &'static [BodyField],
    /// Length of the record that repeats at the body's tail (the last `record_len` bytes of
    /// `fields`); 0 for a fixed body.
    pub record_len: usize,
}

/// Bytes of the shim framing (protocol number and body length).
pub const SHIM_LEN: usize = 2;

/// Generates [`CongestionHeader`] from the registry in `wire/mod.rs` (one line per header).
macro_rules! congestion_headers {
    ( $( $(#[$vm:meta])* $V:ident($H:ty) ),* $(,)? ) => {
        /// Explicit feedback fields, as values.
        #[derive(Copy, Clone, Debug, PartialEq, Default)]
        pub enum CongestionHeader {
            /// The packet carries no congestion header.
            #[default]
            None,
            $( $(#[$vm])* $V($H) ),*
        }

        impl CongestionHeader {
            /// Every registered header, in registry order.
            pub const REGISTRY: &'static [$crate::wire::congestion::HeaderInfo] = &[
                $( $crate::wire::congestion::HeaderInfo {
                    proto: <$H as $crate::wire::body::HeaderBody>::PROTO,
                    name: <$H as $crate::wire::body::HeaderBody>::NAME,
                    len: <$H as $crate::wire::body::HeaderBody>::LEN,
                    fields: <$H as $crate::wire::body::HeaderBody>::FIELDS,
                    record_len: <$H as $crate::wire::body::HeaderBody>::RECORD_LEN,
                } ),*
            ];

            pub fn proto(&self) -> u8 {
                match self {
                    CongestionHeader::None => $crate::wire::congestion::PROTO_NONE,
                    $( CongestionHeader::$V(_) => <$H as $crate::wire::body::HeaderBody>::PROTO, )*
                }
            }

            /// Whether the fields hold numbers the protocol can mean ([`$crate::wire::body::HeaderBody::meaningful`]).
            pub fn meaningful(&self) -> bool {
                match self {
                    CongestionHeader::None => true,
                    $( CongestionHeader::$V(h) => h.meaningful(), )*
                }
            }

            /// Length of the body on the wire (without the two shim bytes).
            pub fn body_len(&self) -> usize {
                match self {
                    CongestionHeader::None => 0,
                    $( CongestionHeader::$V(h) => <$H as $crate::wire::body::HeaderBody>::body_len(h), )*
                }
            }

            /// Bytes this header adds to a packet on the wire (zero when there is none).
            pub fn wire_len(&self) -> usize {
                match self {
                    CongestionHeader::None => 0,
                    _ => $crate::wire::congestion::SHIM_LEN + self.body_len(),
                }
            }

            /// Writes `proto len body` into `buf`; returns the bytes written.
            pub fn emit(&self, buf: &mut [u8]) -> Result<usize, $crate::wire::WireError> {
                let n = $crate::wire::congestion::SHIM_LEN + self.body_len();
                if buf.len() < n {
                    return Err($crate::wire::WireError::Truncated);
                }
                buf[0] = self.proto();
                buf[1] = self.body_len() as u8;
                match self {
                    CongestionHeader::None => {}
                    $( CongestionHeader::$V(h) => h.emit_body(&mut buf[$crate::wire::congestion::SHIM_LEN..n]), )*
                }
                Ok(n)
            }

            /// Parses `proto len body` from untrusted bytes; returns the header and the bytes
            /// consumed.
            pub fn parse(buf: &[u8]) -> Result<(CongestionHeader, usize), $crate::wire::WireError> {
                if buf.len() < $crate::wire::congestion::SHIM_LEN {
                    return Err($crate::wire::WireError::Truncated);
                }
                let (p, len) = (buf[0], buf[1] as usize);
                if buf.len() < $crate::wire::congestion::SHIM_LEN + len {
                    return Err($crate::wire::WireError::Truncated);
                }
                let body = &buf[$crate::wire::congestion::SHIM_LEN..$crate::wire::congestion::SHIM_LEN + len];
                let hdr = match (p, len) {
                    ($crate::wire::congestion::PROTO_NONE, 0) => CongestionHeader::None,
                    $( (<$H as $crate::wire::body::HeaderBody>::PROTO, _) => {
                        CongestionHeader::$V(<$H as $crate::wire::body::HeaderBody>::parse_sized(body)?)
                    } )*
                    _ => return Err($crate::wire::WireError::Malformed),
                };
                Ok((hdr, $crate::wire::congestion::SHIM_LEN + len))
            }
        }
    };
}

pub use super::CongestionHeader;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::jetmax::JetMaxHeader;
    use crate::algorithms::maxnet::MaxNetHeader;
    use crate::algorithms::piqi_rcp::PiqiRcpHeader;
    use crate::algorithms::rcp::RcpHeader;
    use crate::algorithms::xcp::XcpHeader;
    use crate::wire::{HeaderBody, WireError};

    /// Protocol numbers are unique, none is `PROTO_NONE`, and every field table covers its body
    /// exactly (what the dissector reads).
    #[test]
    fn registry_numbers_are_unique_and_field_tables_cover_the_bodies() {
        let reg = CongestionHeader::REGISTRY;
        for (i, h) in reg.iter().enumerate() {
            assert_ne!(h.proto, PROTO_NONE, "{}", h.name);
            assert!(reg[i + 1..].iter().all(|o| o.proto != h.proto && o.name != h.name), "{} repeated", h.name);
            assert!(
                crate::wire::body::fields_cover(h.fields, h.len),
                "{}: fields do not cover {} bytes",
                h.name,
                h.len
            );
        }
    }

    /// `None` adds nothing to a packet's size (`wire_len` 0: plain TCP carries no shim), and its
    /// shim framing, when emitted, is `proto 0, len 0` and parses back.
    #[test]
    fn none_round_trips_with_zero_wire_length() {
        let h = CongestionHeader::None;
        assert_eq!(h.wire_len(), 0);
        assert_eq!(h.body_len(), 0);
        assert_eq!(h.proto(), PROTO_NONE);
        assert_eq!(CongestionHeader::default(), CongestionHeader::None);

        let mut buf = [0xEEu8; 8];
        assert_eq!(h.emit(&mut buf), Ok(SHIM_LEN));
        assert_eq!(buf[..SHIM_LEN], [PROTO_NONE, 0]);
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
        for (h, proto_id, len) in [(p, PiqiRcpHeader::PROTO, 8usize), (j, JetMaxHeader::PROTO, 11)] {
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

    /// Every packet carries this enum, so its size is every packet's. INT's five inline hop
    /// records (84 bytes) set it since issue #29 (docs/performance.md has the cost); the
    /// other headers stay within XCP's 20 bytes, so none may grow the enum further.
    #[test]
    fn the_header_value_stays_small() {
        use crate::algorithms::int::IntHeader;
        assert_eq!(std::mem::size_of::<IntHeader>(), 84);
        assert!(std::mem::size_of::<CongestionHeader>() <= 88, "{}", std::mem::size_of::<CongestionHeader>());
        assert!(
            std::mem::size_of::<crate::packet::Packet>() <= 160,
            "{}",
            std::mem::size_of::<crate::packet::Packet>()
        );
        for h in CongestionHeader::REGISTRY.iter().filter(|h| h.record_len == 0) {
            assert!(h.len <= 16, "{}: a fixed body above XCP's 16 bytes", h.name);
        }
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
        assert_eq!(CongestionHeader::parse(&[PROTO_NONE, 1, 0]), Err(WireError::Malformed));
        assert_eq!(CongestionHeader::parse(&[PROTO_NONE, 3, 1, 2, 3]), Err(WireError::Malformed));
    }

    #[test]
    fn short_framing_or_body_is_truncated() {
        assert_eq!(CongestionHeader::parse(&[]), Err(WireError::Truncated));
        assert_eq!(CongestionHeader::parse(&[PROTO_NONE]), Err(WireError::Truncated));
        // The length byte promises more body than the buffer holds: truncation is reported
        // before the protocol is looked at, whatever the protocol number.
        assert_eq!(CongestionHeader::parse(&[PROTO_NONE, 5, 1, 2]), Err(WireError::Truncated));
        assert_eq!(CongestionHeader::parse(&[0x42, 255]), Err(WireError::Truncated));
        assert_eq!(CongestionHeader::parse(&[0x42, 4, 0, 0, 0]), Err(WireError::Truncated));
    }
}
