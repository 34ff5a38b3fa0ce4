//! MaxNet's header (seed 000, Section V and Fig. 4): two 24-bit fields, `echo` (untouched by
//! routers; carries the price back on ACKs) and `price` (raised by routers to their own price).
//! The top bit of each field says what the other 23 bits hold: 0, a price; 1, a MaxStart value.
//!
//! Prices are seconds (the unit of the demand function `D(q) = x_max exp(-q/T)`), in unsigned
//! fixed point with [`FRAC_BITS`] = 18 fraction bits: the paper's `B_f >= ceil(-log2(T ln(1 +
//! eps))) = 18` for `T = 0.4`, `eps = 1e-5`. The paper needs `B_i = 4` integer bits; the 23 bits
//! left by the flag give 5, so prices up to 32 s (`x_min = x_max e^{-32/T}`) fit.
//!
//! MaxStart values (seed 000 Section IV-B) are spare capacities; the paper does not give their
//! format. We encode a spare capacity `S` as the price that would produce it, `q_S = T
//! ln(x_max / S)` (protocols.md 1.7 P6), so routers keep the *minimum* spare capacity of the
//! path with the same `max` operation they use for prices, in the same fixed point.
//!
//! On the wire the body is `echo:u24 price:u24` (6 bytes); with the shim's `proto = 42, len = 6`
//! it is byte for byte the TCP option of Fig. 4 (kind 42, 6 bytes of fields).

use crate::wire::body::{BodyField, FieldKind, HeaderBody};

/// Fraction bits of the fixed-point price (seed 000 Section V).
pub const FRAC_BITS: u32 = 18;
/// The flag bit: set for a MaxStart value, clear for a price.
pub const MAXSTART_FLAG: u32 = 1 << 23;
/// Largest 23-bit code.
pub const CODE_MAX: u32 = MAXSTART_FLAG - 1;
/// Largest price the field can carry, in seconds.
pub const PRICE_MAX: f64 = CODE_MAX as f64 / (1u64 << FRAC_BITS) as f64;

/// The MaxNet header as a value: both 24-bit words exactly as carried.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub struct MaxNetHeader {
    pub echo: u32,
    pub price: u32,
}

/// What a 24-bit field says.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum MaxNetField {
    /// A price in seconds.
    Price(f64),
    /// A MaxStart value: the price-equivalent of a spare capacity, in seconds.
    MaxStart(f64),
}

/// Encodes a price (seconds) as a 23-bit code, rounding to nearest and saturating at both ends
/// (negative and NaN give 0, above [`PRICE_MAX`] gives [`CODE_MAX`]).
pub fn encode_price(seconds: f64) -> u32 {
    if seconds.is_nan() || seconds <= 0.0 {
        return 0;
    }
    let code = (seconds * (1u64 << FRAC_BITS) as f64).round();
    if code >= CODE_MAX as f64 {
        CODE_MAX
    } else {
        code as u32
    }
}

/// The price (seconds) of a 23-bit code (the flag bit is ignored).
pub fn decode_price(code: u32) -> f64 {
    (code & CODE_MAX) as f64 / (1u64 << FRAC_BITS) as f64
}

/// A field holding a price.
pub fn price_field(seconds: f64) -> u32 {
    encode_price(seconds)
}

/// A field holding a MaxStart value given as its price-equivalent (seconds).
pub fn maxstart_field(equivalent_price: f64) -> u32 {
    MAXSTART_FLAG | encode_price(equivalent_price)
}

/// Reads a 24-bit field.
pub fn read_field(field: u32) -> MaxNetField {
    let q = decode_price(field);
    if field & MAXSTART_FLAG != 0 {
        MaxNetField::MaxStart(q)
    } else {
        MaxNetField::Price(q)
    }
}

impl HeaderBody for MaxNetHeader {
    const PROTO: u8 = 42;
    const NAME: &'static str = "maxnet";
    const LEN: usize = 6;
    const FIELDS: &'static [BodyField] = &[
        BodyField {
            name: "echo",
            label: "MaxNet echo",
            offset: 0,
            kind: FieldKind::FlaggedFixed24 { frac_bits: FRAC_BITS, flag: "maxstart", flag_label: "MaxStart value" },
        },
        BodyField {
            name: "price",
            label: "MaxNet price",
            offset: 3,
            kind: FieldKind::FlaggedFixed24 { frac_bits: FRAC_BITS, flag: "maxstart", flag_label: "MaxStart value" },
        },
    ];

    /// Writes `echo price`, 3 bytes each, big-endian.
    fn emit_body(&self, buf: &mut [u8]) {
        buf[..3].copy_from_slice(&self.echo.to_be_bytes()[1..]);
        buf[3..6].copy_from_slice(&self.price.to_be_bytes()[1..]);
    }

    /// Reads `echo price` from a 6-byte body.
    fn parse_body(buf: &[u8]) -> Self {
        let word = |b: &[u8]| u32::from_be_bytes([0, b[0], b[1], b[2]]);
        MaxNetHeader { echo: word(&buf[..3]), price: word(&buf[3..6]) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seed 000 Section V: x_max = 1e15, x_min = 32 bit/s, T = 0.4 need 4 integer bits; eps =
    /// 1e-5 needs 18 fraction bits. Our field has 5 + 18.
    #[test]
    fn the_papers_bit_budget_fits() {
        let t = 0.4f64;
        let bi = (t * (1e15f64 / 32.0).ln()).log2().ceil() as u32;
        let bf = (-(t * (1.0f64 + 1e-5).ln()).log2()).ceil() as u32;
        assert_eq!((bi, bf), (4, 18));
        assert_eq!(bf, FRAC_BITS);
        assert!(PRICE_MAX >= t * (1e15f64 / 32.0).ln());
    }

    /// Every code decodes and re-encodes to itself, with and without the flag.
    #[test]
    fn every_code_round_trips() {
        for code in 0..=CODE_MAX {
            let q = decode_price(code);
            assert_eq!(encode_price(q), code);
            assert_eq!(read_field(price_field(q)), MaxNetField::Price(q));
            if code % 4099 == 0 {
                assert_eq!(read_field(maxstart_field(q)), MaxNetField::MaxStart(q));
            }
        }
    }

    /// Prices round to the nearest code (error at most half a step, 2^-19 s) and saturate.
    #[test]
    fn prices_round_and_saturate() {
        let step = 1.0 / (1u64 << FRAC_BITS) as f64;
        for &q in &[0.0, 1e-7, 0.4, 5.5487, 7.37, 31.99] {
            assert!((decode_price(encode_price(q)) - q).abs() <= step / 2.0 + 1e-15, "{q}");
        }
        assert_eq!(encode_price(-1.0), 0);
        assert_eq!(encode_price(f64::NAN), 0);
        assert_eq!(encode_price(1e9), CODE_MAX);
        // Relative rate precision of D(q) = x_max exp(-q/T) with T = 0.4: exp(step/T) - 1 < 1e-5.
        assert!((step / 0.4).exp() - 1.0 < 1e-5);
    }

    #[test]
    fn body_bytes_are_two_big_endian_u24() {
        let h = MaxNetHeader { echo: 0x12_3456, price: MAXSTART_FLAG | 0x00_0102 };
        let mut buf = [0u8; 6];
        h.emit_body(&mut buf);
        assert_eq!(buf, [0x12, 0x34, 0x56, 0x80, 0x01, 0x02]);
        assert_eq!(MaxNetHeader::parse_body(&buf), h);
    }
}
