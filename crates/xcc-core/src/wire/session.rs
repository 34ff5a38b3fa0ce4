//! Seed 004's session protocols on a real network: the UDP payload of a session's datagrams.
//!
//! ```text
//! IPv4 | UDP (destination side: port 9871) | kind:u8 proto:u8 len:u8 0:u8 session:u32 | body[len] | padding
//! ```
//!
//! - `kind`: 0 data, 1 control packet travelling downstream, 2 upstream (bounced by the
//!   destination). RM cells do not say which way they travel (the direction is where they
//!   are, [`crate::session::Direction`]); the router needs it to place the link tasks, so the
//!   framing carries it for every protocol.
//! - `proto`: the session protocol ([`SessionWire::PROTO`]: SLBN 1, BFYZ 2, ERICA 3, COBB 4,
//!   RCP 5, PIQI-RCP 6); BFYZ and ERICA share the RM cell's body, RCP and PIQI-RCP the feedback
//!   packet's, but not their link tasks.
//! - `session`: the session's number within its protocol, the id link tasks key their tables
//!   on ([`crate::session::Hop::session`]).
//! - `body`: the control packet's fields ([`SessionBody`]), big-endian, rates as IEEE 754
//!   doubles so that a body survives the trip bit for bit (the simulator passes the `f64`
//!   values themselves). Data datagrams have no body; their padding makes the datagram the
//!   session's packet size on the wire.
//!
//! SLBN's body with the session number and type is the paper's `type(s, bw'', bw', bw, B, b)`:
//! 1 + 4 + 3 x 8 + 16 + 2 = 47 bytes, the size [`crate::algorithms::slbn::SlbnPacket::WIRE_BYTES`]
//! counts (with a 20-byte IP header).

use super::WireError;
use crate::session::feedback::FeedbackPacket;
use crate::session::rm_cell::{RmCell, RmKind};
use crate::session::{Direction, SessionProtocol};
use crate::time::Time;

/// UDP port of a session's destination (sources send from an ephemeral port; the bounced
/// control packets come back from this one).
pub const SESSION_UDP_PORT: u16 = 9871;

/// Bytes of the framing before the body.
pub const HEADER_LEN: usize = 8;

/// What a session datagram carries.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SessionKind {
    Data,
    Control(Direction),
}

impl SessionKind {
    fn byte(self) -> u8 {
        match self {
            SessionKind::Data => 0,
            SessionKind::Control(Direction::Downstream) => 1,
            SessionKind::Control(Direction::Upstream) => 2,
        }
    }
}

/// The framing of a session datagram, as parsed from untrusted bytes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SessionHeader {
    pub kind: SessionKind,
    pub proto: u8,
    pub session: u32,
    /// Bytes of body after the framing (0 for data).
    pub body_len: u8,
}

impl SessionHeader {
    /// Writes the framing into `buf[..HEADER_LEN]`.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        if buf.len() < HEADER_LEN {
            return Err(WireError::Truncated);
        }
        buf[0] = self.kind.byte();
        buf[1] = self.proto;
        buf[2] = self.body_len;
        buf[3] = 0;
        buf[4..8].copy_from_slice(&self.session.to_be_bytes());
        Ok(HEADER_LEN)
    }

    /// Reads the framing; the buffer must also hold the body it announces.
    pub fn parse(buf: &[u8]) -> Result<SessionHeader, WireError> {
        if buf.len() < HEADER_LEN {
            return Err(WireError::Truncated);
        }
        let kind = match buf[0] {
            0 => SessionKind::Data,
            1 => SessionKind::Control(Direction::Downstream),
            2 => SessionKind::Control(Direction::Upstream),
            _ => return Err(WireError::Malformed),
        };
        let h = SessionHeader {
            kind,
            proto: buf[1],
            session: u32::from_be_bytes([buf[4], buf[5], buf[6], buf[7]]),
            body_len: buf[2],
        };
        if buf[3] != 0 || (kind == SessionKind::Data && h.body_len != 0) {
            return Err(WireError::Malformed);
        }
        if buf.len() < HEADER_LEN + h.body_len as usize {
            return Err(WireError::Truncated);
        }
        Ok(h)
    }
}

/// A control packet's fields on the wire.
pub trait SessionBody: Sized {
    /// Body length on the wire.
    const LEN: usize;
    /// Writes the body into `buf[..LEN]`.
    fn emit_body(&self, buf: &mut [u8]);
    /// Reads `buf[..LEN]` from untrusted bytes: unknown kinds, NaN or negative rates are
    /// malformed (one NaN would poison a link's aggregates for every session).
    fn parse_body(buf: &[u8]) -> Result<Self, WireError>;
}

/// A session protocol whose control packets can travel in real datagrams.
pub trait SessionWire: SessionProtocol<Packet: SessionBody> {
    /// The framing's `proto` byte (unique among protocols; a test checks it).
    const PROTO: u8;
}

/// Writes control packet `pkt` of session `session` of protocol `P`, travelling `dir`, into
/// `buf`; returns the bytes written (the datagram's UDP payload).
pub fn emit_control<P: SessionWire>(
    session: u32,
    dir: Direction,
    pkt: &P::Packet,
    buf: &mut [u8],
) -> Result<usize, WireError> {
    let n = HEADER_LEN + P::Packet::LEN;
    if buf.len() < n {
        return Err(WireError::Truncated);
    }
    let h = SessionHeader { kind: SessionKind::Control(dir), proto: P::PROTO, session, body_len: P::Packet::LEN as u8 };
    h.emit(buf)?;
    pkt.emit_body(&mut buf[HEADER_LEN..n]);
    Ok(n)
}

/// Reads the body of a control packet of protocol `P` whose framing `h` was parsed from `buf`.
pub fn parse_control<P: SessionWire>(h: &SessionHeader, buf: &[u8]) -> Result<P::Packet, WireError> {
    if h.proto != P::PROTO || h.body_len as usize != P::Packet::LEN || !matches!(h.kind, SessionKind::Control(_)) {
        return Err(WireError::Malformed);
    }
    let body = buf.get(HEADER_LEN..HEADER_LEN + P::Packet::LEN).ok_or(WireError::Truncated)?;
    P::Packet::parse_body(body)
}

/// A rate field: a double that is not NaN and not negative (+infinity is "no limit").
pub(crate) fn rate_at(buf: &[u8], at: usize) -> Result<f64, WireError> {
    let mut b = [0u8; 8];
    b.copy_from_slice(&buf[at..at + 8]);
    let v = f64::from_be_bytes(b);
    if v >= 0.0 {
        Ok(v)
    } else {
        Err(WireError::Malformed)
    }
}

/// `kind:u8 (0 RM, 1 Close) CCR:f64 ER:f64`.
impl SessionBody for RmCell {
    const LEN: usize = 17;

    fn emit_body(&self, buf: &mut [u8]) {
        buf[0] = match self.kind {
            RmKind::Rm => 0,
            RmKind::Close => 1,
        };
        buf[1..9].copy_from_slice(&self.ccr.to_be_bytes());
        buf[9..17].copy_from_slice(&self.er.to_be_bytes());
    }

    fn parse_body(buf: &[u8]) -> Result<RmCell, WireError> {
        let kind = match buf[0] {
            0 => RmKind::Rm,
            1 => RmKind::Close,
            _ => return Err(WireError::Malformed),
        };
        Ok(RmCell { kind, ccr: rate_at(buf, 1)?, er: rate_at(buf, 9)? })
    }
}

/// `rate:f64 rtt_us:u32 sent_at_ns:u64 echoed:u8 data_bits:f64` (`sent_at` is the source's
/// own clock, read back by the source alone).
impl SessionBody for FeedbackPacket {
    const LEN: usize = 29;

    fn emit_body(&self, buf: &mut [u8]) {
        buf[0..8].copy_from_slice(&self.rate.to_be_bytes());
        buf[8..12].copy_from_slice(&self.rtt_us.to_be_bytes());
        buf[12..20].copy_from_slice(&self.sent_at.as_ns().to_be_bytes());
        buf[20] = self.echoed as u8;
        buf[21..29].copy_from_slice(&self.data_bits.to_be_bytes());
    }

    fn parse_body(buf: &[u8]) -> Result<FeedbackPacket, WireError> {
        let mut t = [0u8; 8];
        t.copy_from_slice(&buf[12..20]);
        let echoed = match buf[20] {
            0 => false,
            1 => true,
            _ => return Err(WireError::Malformed),
        };
        Ok(FeedbackPacket {
            rate: rate_at(buf, 0)?,
            rtt_us: u32::from_be_bytes([buf[8], buf[9], buf[10], buf[11]]),
            sent_at: Time(u64::from_be_bytes(t)),
            echoed,
            data_bits: rate_at(buf, 21)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::bfyz::Bfyz;
    use crate::algorithms::cobb::{Cobb, CobbPacket};
    use crate::algorithms::erica::Erica;
    use crate::algorithms::piqi_rcp::PiqiRcpSession as PiqiRcp;
    use crate::algorithms::rcp::RcpSession as Rcp;
    use crate::algorithms::slbn::{HopSet, Slbn, SlbnKind, SlbnPacket};

    fn round_trip<P: SessionWire>(pkt: P::Packet, dir: Direction) -> P::Packet {
        let mut buf = [0xEEu8; 80];
        let n = emit_control::<P>(0x0102_0304, dir, &pkt, &mut buf).unwrap();
        assert_eq!(n, HEADER_LEN + P::Packet::LEN);
        assert_eq!(buf[n..], [0xEE; 80][n..], "nothing written past the body");
        let h = SessionHeader::parse(&buf[..n]).unwrap();
        assert_eq!(
            h,
            SessionHeader {
                kind: SessionKind::Control(dir),
                proto: P::PROTO,
                session: 0x0102_0304,
                body_len: P::Packet::LEN as u8
            }
        );
        assert!(matches!(parse_control::<P>(&h, &buf[..n - 1]), Err(WireError::Truncated)));
        parse_control::<P>(&h, &buf[..n]).unwrap()
    }

    /// SLBN's fields come back bit for bit, infinity (a greedy Join's demand), the top hop of
    /// B and b = -1 included; the framing is `1 1 43 0 session`.
    #[test]
    fn slbn_round_trips_exactly() {
        let mut b = HopSet::default();
        b.insert(0);
        b.insert(127);
        let p = SlbnPacket {
            kind: SlbnKind::Probe,
            bw2: 1.0 / 3.0,
            bw1: 16_666_666.666_666_7,
            bw: f64::INFINITY,
            bottlenecks: b,
            last: Some(127),
        };
        assert_eq!(round_trip::<Slbn>(p, Direction::Downstream), p);
        let j = SlbnPacket::join(f64::INFINITY);
        assert_eq!(round_trip::<Slbn>(SlbnPacket { kind: SlbnKind::ProbeAck, ..j }, Direction::Upstream).last, None);
        let mut buf = [0u8; 51];
        emit_control::<Slbn>(7, Direction::Upstream, &p, &mut buf).unwrap();
        assert_eq!(buf[..8], [2, 1, 43, 0, 0, 0, 0, 7]);
        assert_eq!(buf[8], 1, "Probe");
        assert_eq!(buf[49..51], [0, 127]);
        // The paper's packet (type, session, three rates, B, b) is WIRE_BYTES less the IP header.
        assert_eq!(1 + 4 + SlbnPacket::LEN - 1 + 20, SlbnPacket::WIRE_BYTES as usize - 1);
    }

    /// RM cells (BFYZ, ERICA), COBB's packets and the feedback packets (RCP, PIQI-RCP)
    /// round-trip; protocols sharing a body differ by `proto`.
    #[test]
    fn rm_cells_and_cobb_round_trip() {
        let rm = RmCell { kind: RmKind::Rm, ccr: 12_345.5, er: f64::INFINITY };
        assert_eq!(round_trip::<Bfyz>(rm, Direction::Downstream), rm);
        let close = RmCell { kind: RmKind::Close, ccr: 0.0, er: 1e8 };
        assert_eq!(round_trip::<Erica>(close, Direction::Upstream), close);
        let c = CobbPacket { rate: 9.5e6, er: 2.25e7 };
        assert_eq!(round_trip::<Cobb>(c, Direction::Upstream), c);
        let f =
            FeedbackPacket { rate: 2.5e7, rtt_us: 41_000, sent_at: Time(123_456_789), echoed: true, data_bits: 1.2e6 };
        assert_eq!(round_trip::<Rcp>(f, Direction::Upstream), f);
        let down = FeedbackPacket { echoed: false, ..f };
        assert_eq!(round_trip::<PiqiRcp>(down, Direction::Downstream), down);
        let protos = [Slbn::PROTO, Bfyz::PROTO, Erica::PROTO, Cobb::PROTO, Rcp::PROTO, PiqiRcp::PROTO];
        for (i, p) in protos.iter().enumerate() {
            assert!(protos[i + 1..].iter().all(|q| q != p), "proto {p} repeated");
        }
    }

    /// A body of another protocol, a NaN or negative rate, an unknown kind, a b beyond the
    /// hop set, a data datagram with a body: all refused, never handed to a link task.
    #[test]
    fn bad_bytes_are_refused() {
        let rm = RmCell { kind: RmKind::Rm, ccr: 1.0, er: 2.0 };
        let mut buf = [0u8; 64];
        let n = emit_control::<Bfyz>(1, Direction::Downstream, &rm, &mut buf).unwrap();
        let h = SessionHeader::parse(&buf[..n]).unwrap();
        assert_eq!(parse_control::<Erica>(&h, &buf[..n]), Err(WireError::Malformed), "BFYZ's cell is not ERICA's");
        let mut bad = buf;
        bad[HEADER_LEN + 9..HEADER_LEN + 17].copy_from_slice(&f64::NAN.to_be_bytes());
        assert_eq!(parse_control::<Bfyz>(&h, &bad[..n]), Err(WireError::Malformed));
        bad[HEADER_LEN + 9..HEADER_LEN + 17].copy_from_slice(&(-1.0f64).to_be_bytes());
        assert_eq!(parse_control::<Bfyz>(&h, &bad[..n]), Err(WireError::Malformed));
        let mut bad = buf;
        bad[HEADER_LEN] = 9;
        assert_eq!(parse_control::<Bfyz>(&h, &bad[..n]), Err(WireError::Malformed));
        let mut s = [0u8; 64];
        let n = emit_control::<Slbn>(1, Direction::Downstream, &SlbnPacket::join(1e6), &mut s).unwrap();
        s[HEADER_LEN + 41..HEADER_LEN + 43].copy_from_slice(&128u16.to_be_bytes());
        let h = SessionHeader::parse(&s[..n]).unwrap();
        assert_eq!(parse_control::<Slbn>(&h, &s[..n]), Err(WireError::Malformed));
        assert_eq!(SessionHeader::parse(&[3, 1, 0, 0, 0, 0, 0, 0]), Err(WireError::Malformed), "kind 3");
        assert_eq!(
            SessionHeader::parse(&[0, 1, 4, 0, 0, 0, 0, 0, 1, 2, 3, 4]),
            Err(WireError::Malformed),
            "data with a body"
        );
        assert_eq!(SessionHeader::parse(&[1, 1, 43, 0, 0, 0, 0, 0]), Err(WireError::Truncated), "body missing");
        assert_eq!(SessionHeader::parse(&[0, 1, 0]), Err(WireError::Truncated));
        assert_eq!(
            emit_control::<Slbn>(1, Direction::Downstream, &SlbnPacket::join(1e6), &mut [0u8; 50]),
            Err(WireError::Truncated)
        );
    }

    /// Data datagrams: framing only, then padding the parser does not look at.
    #[test]
    fn data_framing_round_trips() {
        let h = SessionHeader { kind: SessionKind::Data, proto: Slbn::PROTO, session: 49, body_len: 0 };
        let mut buf = [0xAAu8; 1000];
        assert_eq!(h.emit(&mut buf), Ok(HEADER_LEN));
        assert_eq!(SessionHeader::parse(&buf), Ok(h));
        assert_eq!(h.emit(&mut [0u8; 7]), Err(WireError::Truncated));
    }
}
