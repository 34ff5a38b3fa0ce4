//! The congestion header: the explicit-feedback fields a protocol carries between transport and
//! network ("the congestion layer" of seed 002). One variant per protocol; each variant's body
//! has an exact encoding, framed as a shim `proto:u8 len:u8 body[len]`.
//!
//! Adding a protocol: add a variant, its body encoding in `emit_body`/`parse_body`, and a
//! round-trip test.

use super::WireError;

/// Protocol numbers of the shim header.
pub mod proto {
    /// No explicit feedback (TCP NewReno, CBR).
    pub const NONE: u8 = 0;
}

/// Explicit feedback fields, as values.
#[derive(Copy, Clone, Debug, PartialEq, Default)]
pub enum CongestionHeader {
    /// The packet carries no congestion header.
    #[default]
    None,
}

/// Bytes of the shim framing (protocol number and body length).
pub const SHIM_LEN: usize = 2;

impl CongestionHeader {
    pub fn proto(&self) -> u8 {
        match self {
            CongestionHeader::None => proto::NONE,
        }
    }

    /// Length of the body on the wire (without the two shim bytes).
    pub fn body_len(&self) -> usize {
        match self {
            CongestionHeader::None => 0,
        }
    }

    /// Bytes this header adds to a packet on the wire (zero when there is none).
    pub fn wire_len(&self) -> usize {
        match self {
            CongestionHeader::None => 0,
            #[allow(unreachable_patterns)]
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
        Ok(n)
    }

    /// Parses `proto len body` from untrusted bytes; returns the header and the bytes consumed.
    pub fn parse(buf: &[u8]) -> Result<(CongestionHeader, usize), WireError> {
        if buf.len() < SHIM_LEN {
            return Err(WireError::Truncated);
        }
        let (p, len) = (buf[0], buf[1] as usize);
        if buf.len() < SHIM_LEN + len {
            return Err(WireError::Truncated);
        }
        let hdr = match (p, len) {
            (proto::NONE, 0) => CongestionHeader::None,
            _ => return Err(WireError::Malformed),
        };
        Ok((hdr, SHIM_LEN + len))
    }
}
