//! The two-bit ECN field of the IP header (RFC 3168 section 5).

use serde::{Deserialize, Serialize};

/// ECN codepoint carried by every packet.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum Ecn {
    /// `00`: the transport does not speak ECN; routers must drop instead of marking.
    #[default]
    NotEct,
    /// `01`
    Ect1,
    /// `10`: what an ECN-capable sender sets on data (RFC 3168 recommends ECT(0)).
    Ect0,
    /// `11`: congestion experienced, set by a router.
    Ce,
}

impl Ecn {
    /// The two bits as they appear in the IP TOS / traffic-class byte.
    pub const fn bits(self) -> u8 {
        match self {
            Ecn::NotEct => 0b00,
            Ecn::Ect1 => 0b01,
            Ecn::Ect0 => 0b10,
            Ecn::Ce => 0b11,
        }
    }
    pub const fn from_bits(bits: u8) -> Ecn {
        match bits & 0b11 {
            0b00 => Ecn::NotEct,
            0b01 => Ecn::Ect1,
            0b10 => Ecn::Ect0,
            _ => Ecn::Ce,
        }
    }
    /// True when a router may set CE instead of dropping.
    pub const fn is_ect(self) -> bool {
        matches!(self, Ecn::Ect0 | Ecn::Ect1 | Ecn::Ce)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn bits_round_trip() {
        for e in [Ecn::NotEct, Ecn::Ect1, Ecn::Ect0, Ecn::Ce] {
            assert_eq!(Ecn::from_bits(e.bits()), e);
        }
        assert!(!Ecn::NotEct.is_ect());
    }
}
