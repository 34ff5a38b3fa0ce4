//! Receiver half of the reliable transport.
//!
//! The receiver delivers segments in order, buffers out-of-order ones as sorted ranges of segment
//! numbers (no per-packet allocation once the range list has grown to the flow's worst loss
//! pattern), and acknowledges:
//!
//! - cumulatively (`ack` = next expected segment) with up to three SACK blocks when SACK is on
//!   (RFC 2018 section 4: the first block holds the most recently received segment, the others
//!   repeat the most recently reported blocks);
//! - immediately for an out-of-order or duplicate segment, for a segment that fills all or part
//!   of a hole (RFC 5681 section 4.2), and when the ECN-Echo state changes (RFC 3168 section
//!   6.1.3, as Linux and RFC 8311 do); otherwise every `every_segments` in-order segments or
//!   after `max_delay` when delayed ACKs are on (RFC 5681 section 4.2);
//! - echoing a timestamp by the RFC 7323 section 4.3 rule: `TS.Recent` is updated from a segment
//!   only when `seq <= Last.ACK.sent`, so a delayed ACK echoes the earliest unacknowledged
//!   segment and an out-of-order ACK echoes the last in-order one;
//! - with ECE set from the arrival of a CE segment until a segment with CWR arrives, and on any
//!   ACK that covers a CE segment (RFC 3168 section 6.1.3); or, when the echoer asks for it
//!   ([`Echoer::echoes_ce_per_packet`], DCTCP), with ECE equal to the CE state of the segments
//!   it covers (RFC 8257 section 3.2): a change of CE state first sends the ACK being delayed
//!   with the old state, then acknowledges the new segment at once with the new one (Linux
//!   `dctcp_ece_ack_update`).
//!
//! The congestion header of every data packet goes to the [`Echoer`], which fills the header of
//! each ACK.
//!
//! Connections ([`crate::transport::handshake`]): every SYN is answered at once by a SYN-ACK
//! that echoes the SYN's timestamp and congestion header, with ECE if both ends want ECN (RFC
//! 3168 section 6.1.1); a lost SYN-ACK is repaired by the sender's SYN retransmission (Linux's
//! listener also re-sends the SYN-ACK on its own 1 s timer, at about the same time). A segment
//! carrying FIN is acknowledged at once, and once it is delivered the ACK carries FIN too (the
//! receiving application closes its side).
//!
//! With [`DelayedAck::quick_acks`] the first segments are acknowledged one by one (Linux's
//! quick-ACK mode at connection start) before the delayed-ACK rule applies.
//!
//! **Receive window.** Out-of-order segments are held only below `rcv_nxt +`
//! [`MAX_RECEIVE_WINDOW_SEGMENTS`] (the sender's own cap, [`super::sender::MAX_WINDOW_SEGMENTS`]):
//! a segment beyond it is outside the receive window, so it is not held but acknowledged at
//! once (RFC 9293 section 3.10.7.4, an unacceptable segment), and counted in
//! [`ReceiverStats::beyond_window`]. The reorder list therefore holds at most half that many
//! ranges whatever the peer sends; our sender never goes beyond it (the simulator's end-of-run
//! invariants check that the count is 0).

use crate::host::{AnyEchoer, Echoer};
use crate::packet::{FlowId, Packet};
use crate::time::Time;
use crate::transport::{DelayedAck, TransportConfig};
use crate::wire::{CongestionHeader, Ecn, Flags, SackBlock, Segment, SegmentKind, MAX_SACK_BLOCKS};

/// Recently touched out-of-order segments remembered to order SACK blocks (RFC 2018: the
/// first block is the newest; later ones repeat recently reported blocks). A few more than
/// `MAX_SACK_BLOCKS` so that blocks merged by a filled hole do not shorten the list.
const SACK_HISTORY: usize = 2 * MAX_SACK_BLOCKS;

/// The receive window in segments: out-of-order segments at or beyond `rcv_nxt` plus this are
/// refused (see the module doc). Equal to the sender's cap, which our sender never exceeds.
pub const MAX_RECEIVE_WINDOW_SEGMENTS: u32 = super::sender::MAX_WINDOW_SEGMENTS as u32;

/// Counters a driver samples.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct ReceiverStats {
    /// Payload bytes delivered in order to the application.
    pub bytes_delivered: u64,
    /// Data segments received (duplicates included).
    pub segments_received: u64,
    /// Data segments received that were already held or delivered.
    pub duplicates: u64,
    /// Data segments that arrived with CE set.
    pub ce_received: u64,
    /// ACK packets sent.
    pub acks_sent: u64,
    /// Data segments refused because they lay beyond the receive window
    /// (`MAX_RECEIVE_WINDOW_SEGMENTS` above the next expected one).
    pub beyond_window: u64,
}

/// The receiving end of one flow.
#[derive(Debug, Clone)]
pub struct Receiver {
    flow: FlowId,
    cfg: TransportConfig,
    echo: AnyEchoer,
    stats: ReceiverStats,
    /// Next segment expected in order (RCV.NXT, in segments).
    rcv_nxt: u32,
    /// Segments held above `rcv_nxt`: disjoint, non-adjacent, sorted `[start, end)` ranges.
    ooo: Vec<(u32, u32)>,
    /// The one segment whose payload differs from the MSS (the flow's last, if short).
    odd_segment: Option<(u32, u32)>,
    /// Out-of-order segments in most-recently-received order (for SACK block order).
    sack_recent: [u32; SACK_HISTORY],
    sack_recent_len: usize,
    /// ACKs owed now (several when several immediate-ACK events happened between polls).
    acks_owed: u32,
    /// Probes (Flags::PROBE) waiting for their answer.
    probe_acks_owed: u32,
    /// In-order segments received since the last ACK (delayed-ACK counter).
    unacked_segments: u32,
    /// Delayed-ACK deadline.
    ack_deadline: Option<Time>,
    /// RFC 7323 `TS.Recent` and `Last.ACK.sent`.
    ts_recent: Time,
    last_ack_sent: u32,
    /// ECE state: CE seen and no CWR since (RFC 3168 section 6.1.3).
    ece: bool,
    /// A CE segment arrived since the last ACK (so the next ACK must carry ECE).
    ce_unacked: bool,
    /// Echo each segment's CE state (RFC 8257 section 3.2) instead of the RFC 3168 latch.
    ce_per_packet: bool,
    /// RFC 8257's DCTCP.CE: the CE state of the last data segment (per-packet echo).
    ce_state: bool,
    /// The ACK owed, at a change of CE state, for the segments before it: (its cumulative
    /// ACK, its ECE), i.e. RCV.NXT and DCTCP.CE just before the change.
    state_change_ack: Option<(u32, bool)>,
    first_byte_at: Option<Time>,
    /// SYN-ACKs owed (one per SYN received).
    syn_acks_owed: u32,
    /// The latest SYN's timestamp (echoed by the SYN-ACK) and whether it asked for ECN.
    syn_ts: Time,
    syn_ecn: bool,
    /// The segment that carried FIN, once one arrived.
    fin_seq: Option<u32>,
    /// In-order segments still to be acknowledged one by one (quick-ACK mode).
    quick_acks_left: u32,
}

impl Receiver {
    /// The receiving end of `flow`; `echo` builds the congestion header of each ACK.
    pub fn new(flow: FlowId, cfg: TransportConfig, echo: AnyEchoer) -> Receiver {
        let ce_per_packet = echo.echoes_ce_per_packet();
        let cfg = TransportConfig { ecn: cfg.ecn || ce_per_packet, ..cfg };
        Receiver {
            flow,
            cfg,
            echo,
            stats: ReceiverStats::default(),
            rcv_nxt: 0,
            ooo: Vec::with_capacity(8),
            odd_segment: None,
            sack_recent: [0; SACK_HISTORY],
            sack_recent_len: 0,
            acks_owed: 0,
            probe_acks_owed: 0,
            unacked_segments: 0,
            ack_deadline: None,
            ts_recent: Time::ZERO,
            last_ack_sent: 0,
            ece: false,
            ce_unacked: false,
            ce_per_packet,
            ce_state: false,
            state_change_ack: None,
            first_byte_at: None,
            syn_acks_owed: 0,
            syn_ts: Time::ZERO,
            syn_ecn: false,
            fin_seq: None,
            quick_acks_left: cfg.delayed_ack.map_or(0, |d: DelayedAck| d.quick_acks),
        }
    }

    /// A data packet arrived; returns the payload bytes newly delivered in order.
    ///
    /// Packets that are not data (`SegmentKind::Data`) are ignored.
    #[inline]
    pub fn on_packet(&mut self, now: Time, pkt: &Packet) -> u64 {
        if pkt.seg.kind != SegmentKind::Data {
            return 0;
        }
        if pkt.seg.flags.contains(Flags::SYN) {
            // A SYN, or a retransmission of it: a SYN-ACK at once.
            self.echo.on_data(now, &pkt.cc);
            self.syn_ts = pkt.seg.ts_val;
            self.syn_ecn = pkt.seg.flags.contains(Flags::ECE) && pkt.seg.flags.contains(Flags::CWR);
            self.syn_acks_owed += 1;
            return 0;
        }
        if pkt.seg.flags.contains(Flags::PROBE) {
            // A rate probe: its header is echoed at once; the sequence space is untouched.
            self.echo.on_data(now, &pkt.cc);
            self.probe_acks_owed += 1;
            return 0;
        }
        let seg = &pkt.seg;
        let seq = seg.seq;
        self.stats.segments_received += 1;
        if seg.payload_bytes > 0 && self.first_byte_at.is_none() {
            self.first_byte_at = Some(now);
        }
        if seg.payload_bytes != self.cfg.mss_bytes {
            self.odd_segment = Some((seq, seg.payload_bytes));
        }
        self.echo.on_data(now, &pkt.cc);

        let ce = pkt.ecn == Ecn::Ce;
        self.stats.ce_received += ce as u64;
        let mut immediate = if self.ce_per_packet {
            let echoed = self.echo.echo_ce(now, ce);
            self.ce_state_change(echoed)
        } else {
            // RFC 3168 section 6.1.3: CWR ends the ECE state, CE (re)starts it; a packet with
            // both keeps it. A change of state is acknowledged at once.
            let ece_before = self.ece;
            if seg.flags.contains(Flags::CWR) {
                self.ece = false;
            }
            if ce {
                self.ece = true;
                self.ce_unacked = true;
            }
            self.ece != ece_before
        };
        if seg.flags.contains(Flags::FIN) {
            // The peer closes: acknowledged at once (Linux schedules an ACK on a FIN).
            self.fin_seq = Some(seq);
            immediate = true;
        }

        // RFC 7323 section 4.3: update TS.Recent only from a segment at or below the last ACK
        // sent, i.e. not from one that a pending delayed ACK or a hole separates from it.
        if seq <= self.last_ack_sent && seg.ts_val >= self.ts_recent {
            self.ts_recent = seg.ts_val;
        }

        let mut delivered = 0;
        if seq == self.rcv_nxt {
            let from = self.rcv_nxt;
            self.rcv_nxt += 1;
            if let Some(&(s, e)) = self.ooo.first() {
                // Fills the hole below the first held range (RFC 5681 section 4.2: ACK at once).
                immediate = true;
                if s == self.rcv_nxt {
                    self.rcv_nxt = e;
                    self.ooo.remove(0);
                }
            }
            delivered = self.bytes_between(from, self.rcv_nxt);
            self.stats.bytes_delivered += delivered;
            self.unacked_segments += 1;
            if self.quick_acks_left > 0 {
                self.quick_acks_left -= 1;
                immediate = true;
            }
        } else if seq > self.rcv_nxt && seq - self.rcv_nxt >= MAX_RECEIVE_WINDOW_SEGMENTS {
            // Outside the receive window: not held, acknowledged at once (RFC 9293 3.10.7.4).
            self.stats.beyond_window += 1;
            immediate = true;
        } else if seq < self.rcv_nxt || !self.hold(seq) {
            // Duplicate: RFC 5681 section 4.2 asks for an immediate (duplicate) ACK.
            self.stats.duplicates += 1;
            immediate = true;
        } else {
            // Out of order: immediate duplicate ACK (RFC 5681 section 4.2).
            self.note_sack_recent(seq);
            immediate = true;
        }

        match self.cfg.delayed_ack {
            Some(d) if !immediate && self.unacked_segments < d.every_segments.max(1) => {
                if self.ack_deadline.is_none() {
                    self.ack_deadline = Some(now + d.max_delay);
                }
            }
            _ => {
                self.acks_owed += 1;
                self.ack_deadline = None;
            }
        }
        delivered
    }

    /// The next ACK to send, if one is due.
    #[inline]
    pub fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        if self.syn_acks_owed > 0 {
            self.syn_acks_owed -= 1;
            let mut flags = Flags::SYN;
            if self.cfg.ecn && self.syn_ecn {
                flags.insert(Flags::ECE);
            }
            let seg = Segment {
                kind: SegmentKind::Ack,
                flags,
                ack: self.rcv_nxt,
                ts_echo: self.syn_ts,
                ..Segment::default()
            };
            let cc: CongestionHeader = self.echo.echo(now);
            self.stats.acks_sent += 1;
            return Some(Packet {
                flow: self.flow,
                wire_bytes: self.cfg.header_bytes + cc.wire_len() as u32,
                ecn: Ecn::NotEct,
                seg,
                cc,
            });
        }
        if self.probe_acks_owed > 0 {
            self.probe_acks_owed -= 1;
            let seg = Segment {
                kind: SegmentKind::Ack,
                flags: Flags::PROBE,
                ack: self.rcv_nxt,
                ts_echo: self.ts_recent,
                ..Segment::default()
            };
            let cc: CongestionHeader = self.echo.echo(now);
            return Some(Packet {
                flow: self.flow,
                wire_bytes: self.cfg.header_bytes + cc.wire_len() as u32,
                ecn: Ecn::NotEct,
                seg,
                cc,
            });
        }
        if let Some((ack, ece)) = self.state_change_ack.take() {
            // RFC 8257 section 3.2: the segments before a CE-state change, with the old state.
            let flags = if ece { Flags::ECE } else { Flags::default() };
            let mut seg = Segment { kind: SegmentKind::Ack, flags, ack, ts_echo: self.ts_recent, ..Segment::default() };
            if self.cfg.sack {
                self.fill_sack(&mut seg);
            }
            self.last_ack_sent = ack;
            let cc: CongestionHeader = self.echo.echo(now);
            self.stats.acks_sent += 1;
            return Some(Packet {
                flow: self.flow,
                wire_bytes: self.cfg.header_bytes + cc.wire_len() as u32,
                ecn: Ecn::NotEct,
                seg,
                cc,
            });
        }
        if self.acks_owed == 0 {
            return None;
        }
        self.acks_owed -= 1;
        self.unacked_segments = 0;
        self.ack_deadline = None;
        self.last_ack_sent = self.rcv_nxt;
        let mut flags = Flags::default();
        let ece = if self.ce_per_packet { self.ce_state } else { self.ece || self.ce_unacked };
        if ece {
            flags.insert(Flags::ECE);
        }
        if self.fin_seq.is_some_and(|f| f < self.rcv_nxt) {
            flags.insert(Flags::FIN);
        }
        self.ce_unacked = false;
        let mut seg =
            Segment { kind: SegmentKind::Ack, flags, ack: self.rcv_nxt, ts_echo: self.ts_recent, ..Segment::default() };
        if self.cfg.sack {
            self.fill_sack(&mut seg);
        }
        let cc: CongestionHeader = self.echo.echo(now);
        self.stats.acks_sent += 1;
        Some(Packet {
            flow: self.flow,
            wire_bytes: self.cfg.header_bytes + cc.wire_len() as u32,
            ecn: Ecn::NotEct,
            seg,
            cc,
        })
    }

    /// RFC 8257 section 3.2, a data segment with CE state `ce` arrived: true (acknowledge it at
    /// once) if the state changed, after turning an ACK still owed or delayed for the segments
    /// before it into one that carries the old state.
    fn ce_state_change(&mut self, ce: bool) -> bool {
        if ce == self.ce_state {
            return false;
        }
        if self.unacked_segments > 0 || self.acks_owed > 0 {
            self.state_change_ack = Some((self.rcv_nxt, self.ce_state));
            self.acks_owed = self.acks_owed.saturating_sub(1);
            self.unacked_segments = 0;
            self.ack_deadline = None;
        }
        self.ce_state = ce;
        true
    }

    /// Delayed-ACK deadline, if armed.
    pub fn poll_timeout(&self) -> Option<Time> {
        self.ack_deadline
    }

    /// Delayed-ACK timer; early or repeated calls do nothing.
    pub fn on_timeout(&mut self, now: Time) {
        if let Some(t) = self.ack_deadline {
            if t <= now {
                self.ack_deadline = None;
                self.acks_owed += 1;
            }
        }
    }

    /// Counters so far.
    pub fn stats(&self) -> ReceiverStats {
        self.stats
    }

    /// When the first data payload byte arrived (the start of a response, for response times).
    pub fn first_byte_at(&self) -> Option<Time> {
        self.first_byte_at
    }

    /// Next segment expected in order.
    pub fn next_expected(&self) -> u32 {
        self.rcv_nxt
    }

    /// Payload bytes of segments `[from, to)`, all of MSS size except possibly the odd one.
    #[inline]
    fn bytes_between(&self, from: u32, to: u32) -> u64 {
        let n = (to - from) as u64;
        let mss = self.cfg.mss_bytes as u64;
        match self.odd_segment {
            Some((s, b)) if s >= from && s < to => (n - 1) * mss + b as u64,
            _ => n * mss,
        }
    }

    /// Holds out-of-order segment `seq > rcv_nxt`; false if it was already held.
    fn hold(&mut self, seq: u32) -> bool {
        // Index of the first range starting above `seq`.
        let i = self.ooo.partition_point(|&(s, _)| s <= seq);
        if i > 0 && seq < self.ooo[i - 1].1 {
            return false;
        }
        let joins_prev = i > 0 && self.ooo[i - 1].1 == seq;
        let joins_next = i < self.ooo.len() && self.ooo[i].0 == seq + 1;
        match (joins_prev, joins_next) {
            (true, true) => {
                self.ooo[i - 1].1 = self.ooo[i].1;
                self.ooo.remove(i);
            }
            (true, false) => self.ooo[i - 1].1 = seq + 1,
            (false, true) => self.ooo[i].0 = seq,
            (false, false) => self.ooo.insert(i, (seq, seq + 1)),
        }
        true
    }

    /// Records `seq` as the most recently received out-of-order segment.
    fn note_sack_recent(&mut self, seq: u32) {
        let n = self.sack_recent_len;
        let keep = if n == SACK_HISTORY { n - 1 } else { n };
        self.sack_recent.copy_within(0..keep, 1);
        self.sack_recent[0] = seq;
        self.sack_recent_len = keep + 1;
    }

    /// The held range containing `seq`, if any.
    fn range_of(&self, seq: u32) -> Option<(u32, u32)> {
        let i = self.ooo.partition_point(|&(s, _)| s <= seq);
        (i > 0 && seq < self.ooo[i - 1].1).then(|| self.ooo[i - 1])
    }

    /// RFC 2018 section 4: blocks in most-recently-received order, distinct, at most three.
    fn fill_sack(&mut self, seg: &mut Segment) {
        let mut n = 0usize;
        let mut kept = 0usize;
        for k in 0..self.sack_recent_len {
            let seq = self.sack_recent[k];
            let Some((start, end)) = self.range_of(seq) else {
                continue; // delivered since: forget it
            };
            // Keep the history entry (compacted), even if its block repeats an earlier one.
            self.sack_recent[kept] = seq;
            kept += 1;
            let block = SackBlock { start, end };
            if n < MAX_SACK_BLOCKS && !seg.sack[..n].contains(&block) {
                seg.sack[n] = block;
                n += 1;
            }
        }
        self.sack_recent_len = kept;
        seg.sack_len = n as u8;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::PlainEcho;
    use crate::time::Dur;
    use crate::transport::DelayedAck;

    const MSS: u32 = 1000;

    fn cfg() -> TransportConfig {
        TransportConfig { mss_bytes: MSS, ..TransportConfig::default() }
    }

    fn rx(cfg: TransportConfig) -> Receiver {
        Receiver::new(FlowId(7), cfg, AnyEchoer::Plain(PlainEcho::default()))
    }

    fn data(seq: u32, at_ms: u64) -> Packet {
        Packet {
            flow: FlowId(7),
            wire_bytes: MSS + 40,
            ecn: Ecn::Ect0,
            seg: Segment {
                kind: SegmentKind::Data,
                seq,
                payload_bytes: MSS,
                ts_val: Time(at_ms * 1_000_000),
                ..Segment::default()
            },
            cc: CongestionHeader::None,
        }
    }

    fn ms(x: u64) -> Time {
        Time(x * 1_000_000)
    }

    fn acks(r: &mut Receiver, now: Time) -> Vec<Segment> {
        std::iter::from_fn(|| r.poll_transmit(now)).map(|p| p.seg).collect()
    }

    //  data 0 ─▶  ◀─ ack 1 (echo ts 0)
    //  data 2 ─▶  ◀─ ack 1 sack [2,3)      (out of order: immediate, echoes ts of 0)
    //  data 3 ─▶  ◀─ ack 1 sack [2,4)
    //  data 5 ─▶  ◀─ ack 1 sack [5,6) [2,4)
    //  data 1 ─▶  ◀─ ack 4 sack [5,6)      (fills the hole: delivers 1,2,3)
    #[test]
    fn out_of_order_sack_and_hole_fill() {
        let mut r = rx(cfg());
        assert_eq!(r.on_packet(ms(0), &data(0, 0)), MSS as u64);
        let a = acks(&mut r, ms(1));
        assert_eq!((a.len(), a[0].ack, a[0].ts_echo, a[0].sack_len), (1, 1, ms(0), 0));
        assert_eq!(r.on_packet(ms(2), &data(2, 2)), 0);
        let a = acks(&mut r, ms(2));
        assert_eq!((a[0].ack, a[0].ts_echo), (1, ms(0)));
        assert_eq!(a[0].sack_blocks(), &[SackBlock { start: 2, end: 3 }]);
        r.on_packet(ms(3), &data(3, 3));
        let a = acks(&mut r, ms(3));
        assert_eq!(a[0].sack_blocks(), &[SackBlock { start: 2, end: 4 }]);
        r.on_packet(ms(5), &data(5, 5));
        let a = acks(&mut r, ms(5));
        assert_eq!(a[0].sack_blocks(), &[SackBlock { start: 5, end: 6 }, SackBlock { start: 2, end: 4 }]);
        assert_eq!(r.on_packet(ms(6), &data(1, 6)), 3 * MSS as u64);
        let a = acks(&mut r, ms(6));
        assert_eq!((a[0].ack, a[0].ts_echo), (4, ms(6)));
        assert_eq!(a[0].sack_blocks(), &[SackBlock { start: 5, end: 6 }]);
        // A duplicate gets an immediate duplicate ACK.
        r.on_packet(ms(7), &data(2, 7));
        assert_eq!(acks(&mut r, ms(7))[0].ack, 4);
        let s = r.stats();
        assert_eq!((s.segments_received, s.duplicates, s.bytes_delivered), (6, 1, 4 * MSS as u64));
    }

    //  Receive window: a segment MAX_RECEIVE_WINDOW_SEGMENTS or more above rcv_nxt is refused
    //  (acknowledged at once, not held); one just inside is held and SACKed.
    #[test]
    fn segments_beyond_the_receive_window_are_refused_not_held() {
        let mut r = rx(cfg());
        let far = MAX_RECEIVE_WINDOW_SEGMENTS;
        assert_eq!(r.on_packet(ms(1), &data(far, 1)), 0);
        let a = acks(&mut r, ms(1));
        assert_eq!((a.len(), a[0].ack, a[0].sack_len), (1, 0, 0));
        assert_eq!(r.stats().beyond_window, 1);
        r.on_packet(ms(2), &data(far - 1, 2));
        let a = acks(&mut r, ms(2));
        assert_eq!(a[0].sack_blocks(), &[SackBlock { start: far - 1, end: far }]);
        assert_eq!(r.stats().beyond_window, 1);
        // The window moves with rcv_nxt: once 0 arrived, `far` is inside it.
        r.on_packet(ms(3), &data(0, 3));
        r.on_packet(ms(4), &data(far, 4));
        assert_eq!((r.stats().beyond_window, r.next_expected()), (1, 1));
        let a = acks(&mut r, ms(4));
        assert_eq!(a.last().unwrap().sack_blocks(), &[SackBlock { start: far - 1, end: far + 1 }]);
    }

    //  t=0  SYN (ECE CWR, ts 0) ─▶  ◀─ SYN-ACK ECE, ack 0, echoes ts 0
    //  t=1  SYN again (ts 1)   ─▶  ◀─ SYN-ACK again, echoes ts 1
    //  t=20 data 0 ─▶ ◀─ ack 1 │ t=21 data 1 + FIN ─▶ ◀─ ack 2 FIN (at once, delayed ACKs on)
    #[test]
    fn syn_ack_echoes_each_syn_and_fin_is_acknowledged_at_once() {
        let c = TransportConfig {
            ecn: true,
            delayed_ack: Some(DelayedAck { every_segments: 2, max_delay: Dur::from_ms(40), quick_acks: 1 }),
            ..cfg()
        };
        let mut r = rx(c);
        let syn = |at: u64| {
            let mut p = data(0, at);
            (p.seg.flags, p.seg.payload_bytes, p.ecn) =
                (Flags(Flags::SYN.0 | Flags::ECE.0 | Flags::CWR.0), 0, Ecn::NotEct);
            p
        };
        for at in [0, 1] {
            assert_eq!(r.on_packet(ms(at), &syn(at)), 0);
            let a = acks(&mut r, ms(at));
            assert_eq!(a.len(), 1);
            assert_eq!(
                (a[0].kind, a[0].flags, a[0].ack, a[0].ts_echo),
                (SegmentKind::Ack, Flags(Flags::SYN.0 | Flags::ECE.0), 0, ms(at))
            );
        }
        assert_eq!(r.stats().segments_received, 0, "SYNs are outside the sequence space");
        r.on_packet(ms(20), &data(0, 20));
        let a = acks(&mut r, ms(20));
        assert_eq!((a.len(), a[0].ack, a[0].flags), (1, 1, Flags::default()), "the one quick ACK");
        let mut last = data(1, 21);
        last.seg.flags = Flags::FIN;
        r.on_packet(ms(21), &last);
        let a = acks(&mut r, ms(21));
        assert_eq!((a.len(), a[0].ack, a[0].flags), (1, 2, Flags::FIN), "FIN: ACKed at once, closing too");
    }

    //  Linux's receiver: 16 quick ACKs, then one ACK per two segments.
    #[test]
    fn linux_delayed_acks_start_with_quick_acks() {
        let mut r = rx(TransportConfig { delayed_ack: Some(DelayedAck::LINUX), ..cfg() });
        let per_segment: Vec<usize> = (0..20)
            .map(|k| {
                r.on_packet(ms(k), &data(k as u32, k));
                acks(&mut r, ms(k)).len()
            })
            .collect();
        assert_eq!(per_segment[..16], [1; 16]);
        assert_eq!(per_segment[16..], [0, 1, 0, 1]);
        assert_eq!(r.poll_timeout(), None);
        r.on_packet(ms(20), &data(20, 20));
        assert_eq!(r.poll_timeout(), Some(ms(60)), "40 ms delayed-ACK timer");
    }

    //  every 2 segments, max delay 40 ms:
    //  t=0  data 0 ─▶  (held, timer 40 ms)
    //  t=1  data 1 ─▶  ◀─ ack 2, echoes ts 0 (the earliest unacknowledged, RFC 7323)
    //  t=2  data 2 ─▶  (held)
    //  t=42            ◀─ ack 3 (timer)
    #[test]
    fn delayed_ack_every_second_segment_and_timer() {
        let c = TransportConfig {
            delayed_ack: Some(DelayedAck { every_segments: 2, max_delay: Dur::from_ms(40), quick_acks: 0 }),
            ..cfg()
        };
        let mut r = rx(c);
        r.on_packet(ms(0), &data(0, 0));
        assert!(acks(&mut r, ms(0)).is_empty());
        assert_eq!(r.poll_timeout(), Some(ms(40)));
        r.on_packet(ms(1), &data(1, 1));
        let a = acks(&mut r, ms(1));
        assert_eq!((a.len(), a[0].ack, a[0].ts_echo), (1, 2, ms(0)));
        assert_eq!(r.poll_timeout(), None);
        r.on_packet(ms(2), &data(2, 2));
        assert_eq!(r.poll_timeout(), Some(ms(42)));
        r.on_timeout(ms(41)); // early: nothing
        assert!(acks(&mut r, ms(41)).is_empty());
        r.on_timeout(ms(42));
        r.on_timeout(ms(42)); // repeated: still one ACK
        let a = acks(&mut r, ms(42));
        assert_eq!((a.len(), a[0].ack, a[0].ts_echo), (1, 3, ms(2)));
    }

    //  data 0 CE ─▶ ◀─ ack 1 ECE   (state change: immediate even with delayed ACKs)
    //  data 1    ─▶ ◀─ ... ECE     (stays set)
    //  data 2 CWR─▶ ◀─ ack 3       (CWR clears: immediate ACK without ECE)
    #[test]
    fn ece_until_cwr() {
        let c = TransportConfig {
            ecn: true,
            delayed_ack: Some(DelayedAck { every_segments: 2, max_delay: Dur::from_ms(40), quick_acks: 0 }),
            ..cfg()
        };
        let mut r = rx(c);
        let mut p = data(0, 0);
        p.ecn = Ecn::Ce;
        r.on_packet(ms(0), &p);
        let a = acks(&mut r, ms(0));
        assert!(a[0].flags.contains(Flags::ECE));
        r.on_packet(ms(1), &data(1, 1));
        r.on_timeout(ms(41));
        assert!(acks(&mut r, ms(41))[0].flags.contains(Flags::ECE));
        let mut p = data(2, 50);
        p.seg.flags.insert(Flags::CWR);
        r.on_packet(ms(50), &p);
        let a = acks(&mut r, ms(50));
        assert_eq!(a.len(), 1);
        assert!(!a[0].flags.contains(Flags::ECE));
        assert_eq!(r.stats().ce_received, 1);
    }

    // A short last segment: 2.5 segments of 1000 B delivered out of order = 2500 B.
    #[test]
    fn short_last_segment_counts_exact_bytes() {
        let mut r = rx(cfg());
        let mut last = data(2, 0);
        last.seg.payload_bytes = 500;
        assert_eq!(r.on_packet(ms(0), &last), 0);
        assert_eq!(r.on_packet(ms(1), &data(0, 1)), 1000);
        assert_eq!(r.on_packet(ms(2), &data(1, 2)), 1500);
        assert_eq!(r.stats().bytes_delivered, 2500);
        assert_eq!(r.first_byte_at(), Some(ms(0)));
    }

    /// A probe is answered at once by an ACK with the probe flag and the echoed header; it
    /// changes neither the cumulative ACK nor the delivered bytes.
    #[test]
    fn probe_is_answered_at_once_outside_the_sequence_space() {
        use crate::algorithms::rcp::RcpHeader;
        let mut r = rx(cfg());
        assert_eq!(r.on_packet(Time(0), &data(0, 0)), MSS as u64);
        let _ = acks(&mut r, Time(0));
        let mut probe = data(1, 1);
        probe.seg.flags = Flags::PROBE;
        probe.seg.payload_bytes = 0;
        probe.cc = CongestionHeader::Rcp(RcpHeader { rate: 5e5, rtt_us: 0 });
        assert_eq!(r.on_packet(Time(1_000_000), &probe), 0);
        let a = r.poll_transmit(Time(1_000_000)).expect("probe answer");
        assert!(a.seg.flags.contains(Flags::PROBE));
        assert_eq!(a.seg.ack, 1);
        assert_eq!(a.cc, probe.cc);
        assert!(r.poll_transmit(Time(1_000_000)).is_none());
        assert_eq!(r.next_expected(), 1);
    }
}
