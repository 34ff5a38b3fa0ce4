//! What every congestion header's body declares about itself: its protocol number, name,
//! length, encoding, which values are meaningful, and a field table. The field table is what
//! the Wireshark dissector shows (`xcc wireshark` writes it into tools/wireshark/xcclab.lua from
//! the registry), so a new header is described once, in its own file.

/// How one field of a body is laid out and shown.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FieldKind {
    /// An unsigned byte.
    U8,
    /// A big-endian unsigned 32-bit word.
    U32,
    /// A big-endian IEEE 754 single.
    F32,
    /// A big-endian 24-bit word whose top bit is a flag and whose other 23 bits are unsigned
    /// fixed point with `frac_bits` fraction bits (MaxNet's price words).
    FlaggedFixed24 {
        frac_bits: u32,
        /// The flag's field name and label.
        flag: &'static str,
        flag_label: &'static str,
    },
}

impl FieldKind {
    /// Bytes the field takes on the wire.
    pub const fn width(&self) -> usize {
        match self {
            FieldKind::U8 => 1,
            FieldKind::U32 | FieldKind::F32 => 4,
            FieldKind::FlaggedFixed24 { .. } => 3,
        }
    }
}

/// One field of a body: its name (the dissector's `xcclab.<protocol>.<name>`), a label with
/// its unit, and where it sits.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct BodyField {
    pub name: &'static str,
    pub label: &'static str,
    pub offset: usize,
    pub kind: FieldKind,
}

/// A congestion header's body (the bytes after the shim's `proto len`).
pub trait HeaderBody: Sized + Copy {
    /// The shim's protocol number (unique in the registry; a test checks it).
    const PROTO: u8;
    /// The protocol's name, as the dissector and captures show it.
    const NAME: &'static str;
    /// Body length on the wire; for a body with a repeated record ([`HeaderBody::RECORD_LEN`]),
    /// the length of its smallest form (one record).
    const LEN: usize;
    /// Every field, in wire order, covering exactly `LEN` bytes (a test checks it).
    const FIELDS: &'static [BodyField];
    /// For a body whose tail is a record repeated a per-packet number of times (INT's hop
    /// records): the record's length, the last `RECORD_LEN` bytes of `FIELDS`. Zero for a
    /// fixed body. The dissector repeats those fields over the rest of the body.
    const RECORD_LEN: usize = 0;

    /// Writes the body into `buf[..LEN]`, big-endian.
    fn emit_body(&self, buf: &mut [u8]);
    /// Reads the body from `buf[..LEN]`.
    fn parse_body(buf: &[u8]) -> Self;
    /// This value's body length on the wire: `LEN` unless the body has a repeated record.
    #[inline]
    fn body_len(&self) -> usize {
        Self::LEN
    }
    /// Reads a body of exactly `buf.len()` bytes (the shim's `len`) from untrusted bytes: a
    /// fixed body must be `LEN` bytes; a variable one overrides this and checks its own rules.
    fn parse_sized(buf: &[u8]) -> Result<Self, crate::wire::WireError> {
        if buf.len() != Self::LEN {
            return Err(crate::wire::WireError::Malformed);
        }
        Ok(Self::parse_body(buf))
    }
    /// Whether the fields hold numbers the protocol can mean (no NaN, no negative rate or
    /// time; infinity only where it means "not stamped yet"). Received packets that fail are
    /// dropped as malformed; a lying but meaningful value is the protocol's business.
    fn meaningful(&self) -> bool {
        true
    }
}

/// A field table's consistency: fields in order, without gaps or overlaps, covering `len`.
pub fn fields_cover(fields: &[BodyField], len: usize) -> bool {
    let mut at = 0;
    for f in fields {
        if f.offset != at {
            return false;
        }
        at += f.kind.width();
    }
    at == len
}
