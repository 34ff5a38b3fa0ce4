//! Linux's loss recovery for the sender, [`super::LossDetection::Rack`]: RACK-TLP (RFC 8985)
//! and the undo of spurious timeouts (RFC 5682 F-RTO, RFC 3522-style timestamps).
//!
//! Linux (`net.ipv4.tcp_recovery = 1`, `tcp_early_retrans = 3`, `tcp_frto = 2`, the defaults)
//! does not wait for a retransmission timeout to learn that a retransmission was lost, and it
//! takes a timeout back when the data it presumed lost arrives after all. The default
//! transport ([`super::LossDetection::Rfc6675`], ns-2's recovery) does neither: a lost
//! retransmission ends in a timeout, which forgets the SACK scoreboard and resends the whole
//! window. This file holds the state and the laws; the sender (`sender.rs`) calls them from a
//! few hooks and owns the scoreboard, which it lends through [`Scoreboard`].
//!
//! # RACK: time-based loss marking (RFC 8985 section 6.2; `tcp_recovery.c`)
//!
//! - **RACK.xmit_ts, RACK.end_seq, RACK.rtt** (step 2, `tcp_rack_advance`): of the segments an
//!   ACK newly delivers (cumulatively or by SACK), the most recently *sent* one; its RTT. A
//!   retransmitted segment whose delivery may be the original's is skipped: its ACK echoes a
//!   timestamp older than the retransmission, or it came back faster than the minimum RTT
//!   (Linux's rule, "the original can be delayed up to aRTT + min_rtt").
//! - **Reordering window** (step 4, `tcp_rack_reo_wnd`): zero during recovery, or once
//!   `dupthresh` segments are SACKed, while no reordering has been seen; otherwise min RTT / 4,
//!   at most SRTT. Reordering is seen when a never-retransmitted segment is delivered below the
//!   highest SACKed one (`tcp_check_sack_reordering`). Not modelled: the window's growth on
//!   D-SACKs (`reo_wnd_steps`; the receiver sends none).
//! - **Detection** (step 5, `tcp_rack_detect_loss`): a segment not SACKed, not already waiting
//!   for its retransmission, and sent before RACK.xmit_ts is lost once
//!   `xmit_ts + RACK.rtt + reo_wnd <= now`. This holds for retransmissions too: a lost
//!   retransmission is retransmitted again, without a timeout. The others arm the reordering
//!   timer for the latest of their deadlines plus 2 ms (`TCP_TIMEOUT_MIN_US`), which runs the
//!   detection again (`tcp_rack_reo_timeout`). Segments are visited in send order (Linux's
//!   `tsorted_sent_queue`): a deque of transmissions, stale entries dropped as they are met.
//!
//! Without RFC 6675's `IsLost` and duplicate-ACK count: with RACK, Linux enters recovery when a
//! segment is marked lost (`tcp_time_to_recover`: `lost_out`), and the zero reordering window
//! after `dupthresh` SACKed segments plays the duplicate-ACK threshold's part.
//!
//! # TLP: the tail loss probe (RFC 8985 section 7; `tcp_schedule_loss_probe`,
//! `tcp_send_loss_probe`, `tcp_process_tlp_ack`)
//!
//! - Armed, outside recovery, SACK scoreboard empty, data outstanding, after new data is sent
//!   and on ACKs of new data: PTO = 2 SRTT, plus the minimum RTO when one segment is outstanding
//!   (a delayed ACK, `tcp_rto_min`) or 2 ms (`TCP_TIMEOUT_MIN`) otherwise, or 1 s before any RTT
//!   sample; never later than the retransmission timer.
//! - On expiry, at most one probe outstanding: one new segment if there is one (the window does
//!   not hold it), else a retransmission of the last outstanding segment. The retransmission
//!   timer restarts from the probe.
//! - When the ACK reaches what was outstanding at the probe (`tlp_high_seq`) and the probe was
//!   a retransmission, a loss was repaired unless the original arrived: the controller reduces
//!   once (Linux's CWR: reduction and its end at once). Linux learns that the original arrived
//!   from a D-SACK; the receiver sends none, so the timestamp the ACK echoes says it instead
//!   (echoed before the probe left: the ACK answers the original).
//!
//! # Timeouts and their undo (`tcp_timeout_mark_lost`, `tcp_enter_loss`, `tcp_process_loss`,
//! `tcp_try_undo_loss`)
//!
//! - A timeout keeps the SACK scoreboard (RFC 6675 section 5.1 allows it; Linux forgets it only
//!   when the receiver reneged, which ours never does). It marks lost the first unacknowledged
//!   segment and every other one not SACKed that RACK would call lost with a zero reordering
//!   window (sent more than RACK.rtt ago); those sent since stay in flight.
//! - The timeout is undone (the controller's [`crate::host::Controller::on_undo`], loss marks
//!   cleared, back to the open state) when, after it, an ACK of new data echoes a timestamp
//!   older than the episode's first retransmission (Linux's `tcp_packet_delayed`, RFC 3522's
//!   Eifel detection), or, with F-RTO on, a segment never retransmitted and sent before the
//!   timeout is delivered (RFC 5682 section 3.1 step 3b, SACK-enhanced; Linux's
//!   `FLAG_ORIG_SACK_ACKED`). F-RTO is on unless the timeout came during fast recovery, the
//!   first time (`tcp_enter_loss`: `new_recovery || icsk_retransmits`). Not modelled: step 2b
//!   (sending new data instead of retransmissions on the first ACK after the timeout).

use std::collections::VecDeque;

use crate::time::{Dur, Time};

/// Linux's `TCP_TIMEOUT_MIN_US` (2 ms): added to the reordering timer's delay, and (as
/// `TCP_TIMEOUT_MIN`, 2 jiffies at HZ = 1000) to the probe timeout of more than one segment.
pub(super) const TIMEOUT_MIN: Dur = Dur::from_ms(2);

/// What RACK needs of one outstanding segment, lent by the sender's scoreboard.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) struct SegmentView {
    /// When it was last sent.
    pub sent_at: Time,
    /// Marked lost and not yet retransmitted: not a candidate until it is sent again.
    pub awaiting_retransmission: bool,
}

/// The sender's scoreboard as RACK sees it.
pub(super) trait Scoreboard {
    /// Segment `seq` if it is outstanding and not SACKed.
    fn segment(&self, seq: u32) -> Option<SegmentView>;
    /// Marks `seq`'s last transmission lost: it waits for a retransmission.
    fn mark_lost(&mut self, seq: u32);
}

/// A tail loss probe in flight (Linux's `tlp_high_seq`, `tlp_retrans`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct TailProbe {
    /// One past the highest segment sent when the probe left.
    high_seq: u32,
    /// The probe was a retransmission (not new data).
    retransmission: bool,
    sent_at: Time,
}

/// What a probe sends when it is due.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum ProbeDue {
    /// Nothing pending.
    None,
    /// Send one probe now (new data if any, else the last outstanding segment).
    Now,
}

/// What the answer to a probe says ([`Rack::on_probe_answer`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum ProbeVerdict {
    /// Nothing decided yet (or no probe).
    Pending,
    /// The probe was new data, or the original arrived: no loss.
    NoLoss,
    /// The probe repaired a loss: the controller reduces once.
    RepairedLoss,
}

/// RACK-TLP and undo state of one sender.
#[derive(Clone, Debug)]
pub(super) struct Rack {
    /// RACK.xmit_ts / RACK.end_seq: the most recently sent segment delivered so far.
    xmit_ts: Time,
    end_seq: u32,
    has_delivered: bool,
    /// RACK.rtt: the RTT of that delivery.
    rtt: Dur,
    /// A delivery moved RACK since the last detection (Linux's `rack.advanced`).
    advanced: bool,
    /// Reordering was seen (Linux's `reord_seen`).
    reord_seen: bool,
    /// Transmissions in send order, `(sent_at, seq)`; an entry is stale once its segment is
    /// acknowledged, SACKed or sent again.
    sent: VecDeque<(Time, u32)>,
    /// The reordering timer.
    reo_deadline: Option<Time>,
    /// The probe timer (PTO).
    pto_deadline: Option<Time>,
    /// The probe timer fired: send a probe.
    probe_pending: bool,
    probe: Option<TailProbe>,
    /// When the episode's first retransmission left (Linux's `retrans_stamp`).
    retrans_stamp: Option<Time>,
    /// One past the highest segment retransmitted in the episode.
    retrans_high: u32,
    /// F-RTO is armed for the current timeout (Linux's `tp->frto`).
    frto: bool,
    /// One past the highest segment sent at the timeout (F-RTO's `high_seq`).
    frto_high: u32,
    /// Since the last check, a segment never retransmitted and below `frto_high` was
    /// delivered (Linux's `FLAG_ORIG_SACK_ACKED`).
    original_delivered: bool,
}

/// `tcp_skb_sent_after`: `(t1, s1)` was sent after `(t2, s2)`; equal times order by sequence.
#[inline]
fn sent_after(t1: Time, s1: u32, t2: Time, s2: u32) -> bool {
    t1 > t2 || (t1 == t2 && s1 > s2)
}

impl Rack {
    pub(super) fn new() -> Rack {
        Rack {
            xmit_ts: Time::ZERO,
            end_seq: 0,
            has_delivered: false,
            rtt: Dur::ZERO,
            advanced: false,
            reord_seen: false,
            sent: VecDeque::with_capacity(64),
            reo_deadline: None,
            pto_deadline: None,
            probe_pending: false,
            probe: None,
            retrans_stamp: None,
            retrans_high: 0,
            frto: false,
            frto_high: 0,
            original_delivered: false,
        }
    }

    /// A data segment `seq` left at `now`, first time or again.
    #[inline]
    pub(super) fn on_sent(&mut self, now: Time, seq: u32, retransmission: bool) {
        self.sent.push_back((now, seq));
        if retransmission {
            if self.retrans_stamp.is_none() {
                self.retrans_stamp = Some(now);
            }
            self.retrans_high = self.retrans_high.max(seq + 1);
        }
    }

    /// Segment `seq`, last sent at `sent_at`, was newly delivered (cumulatively or by SACK)
    /// by an ACK echoing `ts_echo` (RFC 8985 section 6.2 step 2, `tcp_rack_advance`).
    /// `ever_retransmitted`: it was sent more than once; `below_highest_sack`: a segment above
    /// it was SACKed before this ACK.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub(super) fn on_delivered(
        &mut self,
        now: Time,
        seq: u32,
        sent_at: Time,
        ever_retransmitted: bool,
        below_highest_sack: bool,
        ts_echo: Time,
        min_rtt: Dur,
    ) {
        let rtt = now.saturating_since(sent_at);
        if ever_retransmitted {
            // Ambiguous: the ACK may be for an earlier transmission.
            if ts_echo < sent_at || rtt < min_rtt {
                return;
            }
        } else {
            if below_highest_sack {
                // Delivered below a SACKed segment without a retransmission: reordering.
                self.reord_seen = true;
            }
            if self.frto && seq < self.frto_high {
                self.original_delivered = true;
            }
        }
        self.advanced = true;
        if !self.has_delivered || sent_after(sent_at, seq, self.xmit_ts, self.end_seq) {
            self.has_delivered = true;
            self.xmit_ts = sent_at;
            self.end_seq = seq;
            self.rtt = rtt;
        }
    }

    /// RFC 8985 section 6.2 step 4 (`tcp_rack_reo_wnd`): `recovering` is fast recovery or
    /// the loss state after a timeout.
    pub(super) fn reo_wnd(&self, recovering: bool, sacked_segs: u32, dupthresh: u32, min_rtt: Dur, srtt: Dur) -> Dur {
        if !self.reord_seen && (recovering || sacked_segs >= dupthresh) {
            return Dur::ZERO;
        }
        Dur(min_rtt.0 / 4).min(srtt)
    }

    /// True if an ACK moved RACK since the last detection.
    #[inline]
    pub(super) fn advanced(&self) -> bool {
        self.advanced
    }

    /// RFC 8985 section 6.2 step 5 (`tcp_rack_detect_loss`): marks lost every candidate sent
    /// before RACK.xmit_ts whose deadline has passed; arms the reordering timer for the rest.
    /// Returns the number of segments marked.
    pub(super) fn detect_loss(&mut self, now: Time, reo_wnd: Dur, board: &mut impl Scoreboard) -> u32 {
        self.advanced = false;
        self.reo_deadline = None;
        if !self.has_delivered {
            return 0;
        }
        let mut marked = 0;
        let mut wait = Dur::ZERO;
        let mut i = 0;
        while i < self.sent.len() {
            let (t, seq) = self.sent[i];
            let candidate = board.segment(seq).filter(|s| s.sent_at == t && !s.awaiting_retransmission);
            if candidate.is_none() {
                // Stale, or waiting for a retransmission (which adds a new entry).
                if i == 0 {
                    self.sent.pop_front();
                } else {
                    i += 1;
                }
                continue;
            }
            if !sent_after(self.xmit_ts, self.end_seq, t, seq) {
                break;
            }
            let deadline = t + self.rtt + reo_wnd;
            if deadline <= now {
                board.mark_lost(seq);
                marked += 1;
                if i == 0 {
                    self.sent.pop_front();
                } else {
                    i += 1;
                }
            } else {
                wait = wait.max(deadline.saturating_since(now));
                i += 1;
            }
        }
        if wait > Dur::ZERO {
            self.reo_deadline = Some(now + wait + TIMEOUT_MIN);
            // One timer in Linux: the reordering timer replaces the probe's.
            self.pto_deadline = None;
        }
        marked
    }

    /// `tcp_rack_skb_timeout(.., 0) <= 0`: a segment sent at `sent_at` is overdue by RACK's
    /// clock with a zero reordering window (what a timeout marks lost).
    pub(super) fn overdue(&self, now: Time, sent_at: Time) -> bool {
        !self.has_delivered || sent_at + self.rtt <= now
    }

    /// The transmissions in send order again, from the scoreboard (after an undo un-marked
    /// segments whose entries were dropped while they waited for a retransmission).
    pub(super) fn rebuild(&mut self, outstanding: impl Iterator<Item = (Time, u32)>) {
        self.sent.clear();
        self.sent.extend(outstanding);
        self.sent.make_contiguous().sort_unstable();
    }

    /// `tcp_schedule_loss_probe`: arms the PTO at `now` if `allowed` (open state, data
    /// outstanding, no SACKed segment). `rto_left`: how far away the retransmission timer is.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn schedule_probe(
        &mut self,
        now: Time,
        allowed: bool,
        srtt: Option<Dur>,
        packets_out: u32,
        min_rto: Dur,
        initial_rto: Dur,
        rto_left: Dur,
    ) {
        if !allowed || self.reo_deadline.is_some() {
            self.pto_deadline = None;
            return;
        }
        let mut timeout = match srtt {
            Some(srtt) => srtt.saturating_mul(2) + if packets_out == 1 { min_rto } else { TIMEOUT_MIN },
            None => initial_rto,
        };
        if rto_left > Dur::ZERO {
            timeout = timeout.min(rto_left);
        }
        self.pto_deadline = Some(now + timeout);
    }

    /// Cancels the probe and reordering timers (everything acknowledged, or a timeout).
    pub(super) fn cancel_timers(&mut self) {
        self.pto_deadline = None;
        self.reo_deadline = None;
    }

    /// The earliest of the two timers.
    #[inline]
    pub(super) fn poll_timeout(&self) -> Option<Time> {
        match (self.reo_deadline, self.pto_deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The reordering timer is due: it is disarmed; run [`Rack::detect_loss`].
    pub(super) fn take_reo_timer(&mut self, now: Time) -> bool {
        if self.reo_deadline.is_some_and(|t| t <= now) {
            self.reo_deadline = None;
            return true;
        }
        false
    }

    /// The probe timer is due (`tcp_send_loss_probe`): a probe is to be sent unless one is
    /// already outstanding. Returns true if one is.
    pub(super) fn take_pto_timer(&mut self, now: Time) -> Option<ProbeDue> {
        if self.pto_deadline.is_none_or(|t| t > now) {
            return None;
        }
        self.pto_deadline = None;
        if self.probe.is_some() {
            return Some(ProbeDue::None);
        }
        self.probe_pending = true;
        Some(ProbeDue::Now)
    }

    /// A probe is waiting to be sent.
    #[inline]
    pub(super) fn probe_pending(&self) -> bool {
        self.probe_pending
    }

    /// No probe after all (nothing outstanding any more).
    pub(super) fn cancel_probe(&mut self) {
        self.probe_pending = false;
    }

    /// The probe left at `now`; `high_seq`: one past the highest segment sent.
    pub(super) fn on_probe_sent(&mut self, now: Time, high_seq: u32, retransmission: bool) {
        self.probe_pending = false;
        self.pto_deadline = None;
        self.probe = Some(TailProbe { high_seq, retransmission, sent_at: now });
    }

    /// `tcp_process_tlp_ack`, on an ACK up to `ack` echoing `ts_echo`.
    pub(super) fn on_probe_answer(&mut self, ack: u32, ts_echo: Time) -> ProbeVerdict {
        let Some(p) = self.probe else { return ProbeVerdict::Pending };
        if ack < p.high_seq {
            return ProbeVerdict::Pending;
        }
        self.probe = None;
        if !p.retransmission || ts_echo < p.sent_at {
            ProbeVerdict::NoLoss
        } else {
            ProbeVerdict::RepairedLoss
        }
    }

    /// A retransmission timeout: no probe, no reordering timer; F-RTO armed if `frto`;
    /// `high_seq`: one past the highest segment sent.
    pub(super) fn on_timeout(&mut self, frto: bool, high_seq: u32) {
        self.cancel_timers();
        self.probe = None;
        self.probe_pending = false;
        self.frto = frto;
        self.frto_high = high_seq;
        self.original_delivered = false;
    }

    /// In the loss state after a timeout, this ACK (which advanced SND.UNA if `advanced`,
    /// echoing `ts_echo`) proves the timeout spurious (`tcp_try_undo_loss`): Eifel's timestamp
    /// check, or F-RTO's delivery of original data. Clears the evidence either way.
    pub(super) fn timeout_was_spurious(&mut self, advanced: bool, ts_echo: Time) -> bool {
        let delayed = advanced && self.retrans_stamp.is_some_and(|r| ts_echo < r);
        let spurious = delayed || (self.frto && self.original_delivered);
        self.original_delivered = false;
        spurious
    }

    /// In the open state with SND.UNA at `snd_una`: once no retransmitted segment is
    /// outstanding the episode is over (Linux's `tcp_any_retrans_done` clearing
    /// `retrans_stamp`).
    pub(super) fn maybe_end_episode(&mut self, snd_una: u32) {
        if self.retrans_stamp.is_some() && snd_una >= self.retrans_high {
            self.end_episode();
        }
    }

    /// The loss episode is over (recovered, undone, or nothing retransmitted outstanding):
    /// the next retransmission starts a new one.
    pub(super) fn end_episode(&mut self) {
        self.retrans_stamp = None;
        self.frto = false;
        self.original_delivered = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Time {
        Time::ZERO + Dur::from_ms(v)
    }

    /// A scoreboard of its own: per segment, when it was sent, SACKed, awaiting retransmission.
    struct Board {
        sent: Vec<Time>,
        sacked: Vec<bool>,
        lost: Vec<bool>,
    }

    impl Board {
        fn new(sent: &[u64]) -> Board {
            Board {
                sent: sent.iter().map(|&t| ms(t)).collect(),
                sacked: vec![false; sent.len()],
                lost: vec![false; sent.len()],
            }
        }
    }

    impl Scoreboard for Board {
        fn segment(&self, seq: u32) -> Option<SegmentView> {
            let i = seq as usize;
            (i < self.sent.len() && !self.sacked[i])
                .then(|| SegmentView { sent_at: self.sent[i], awaiting_retransmission: self.lost[i] })
        }
        fn mark_lost(&mut self, seq: u32) {
            self.lost[seq as usize] = true;
        }
    }

    fn sent_all(r: &mut Rack, b: &Board) {
        for (seq, &t) in b.sent.iter().enumerate() {
            r.on_sent(t, seq as u32, false);
        }
    }

    // RFC 8985 section 6.2 step 5, with reo_wnd = 0: segments 0..5 sent at 0, 1, .., 4 ms;
    // 3 is SACKed at 50 ms (RACK.rtt = 47 ms, RACK.xmit_ts = 3 ms). 0, 1, 2 were sent before
    // it and their deadline (xmit + 47 ms) has passed: lost. 4 was sent after: not a candidate.
    #[test]
    fn segments_sent_before_the_latest_delivered_one_are_lost_after_rack_rtt() {
        let mut b = Board::new(&[0, 1, 2, 3, 4]);
        let mut r = Rack::new();
        sent_all(&mut r, &b);
        b.sacked[3] = true;
        r.on_delivered(ms(50), 3, ms(3), false, false, ms(3), Dur::from_ms(40));
        assert!(r.advanced());
        assert_eq!(r.detect_loss(ms(50), Dur::ZERO, &mut b), 3);
        assert_eq!(b.lost, vec![true, true, true, false, false]);
        assert_eq!(r.poll_timeout(), None, "nothing left to wait for");
    }

    // The reordering window (min RTT / 4 = 10 ms before dupthresh SACKs, RFC 8985 step 4)
    // delays the marks: at 50 ms the deadlines are 0 + 47 + 10 = 57, 58, 59 ms: none lost, the
    // timer is armed at 50 + 9 + 2 ms. When it fires at 61 ms, all three are lost.
    #[test]
    fn the_reordering_window_defers_the_marks_to_a_timer() {
        let mut b = Board::new(&[0, 1, 2, 3, 4]);
        let mut r = Rack::new();
        sent_all(&mut r, &b);
        b.sacked[3] = true;
        r.on_delivered(ms(50), 3, ms(3), false, false, ms(3), Dur::from_ms(40));
        let reo = r.reo_wnd(false, 1, 3, Dur::from_ms(40), Dur::from_ms(45));
        assert_eq!(reo, Dur::from_ms(10));
        assert_eq!(r.detect_loss(ms(50), reo, &mut b), 0);
        assert_eq!(r.poll_timeout(), Some(ms(61)));
        assert!(!r.take_reo_timer(ms(60)));
        assert!(r.take_reo_timer(ms(61)));
        assert_eq!(r.detect_loss(ms(61), reo, &mut b), 3);
        // Three SACKed segments, or recovery, and no reordering seen: the window is zero.
        assert_eq!(r.reo_wnd(false, 3, 3, Dur::from_ms(40), Dur::from_ms(45)), Dur::ZERO);
        assert_eq!(r.reo_wnd(true, 0, 3, Dur::from_ms(40), Dur::from_ms(45)), Dur::ZERO);
        // ... and at most SRTT.
        assert_eq!(r.reo_wnd(false, 0, 3, Dur::from_ms(40), Dur::from_ms(8)), Dur::from_ms(8));
    }

    // A lost retransmission (the point of RACK): segment 0 is lost, retransmitted at 60 ms;
    // segment 5 (new data) sent at 61 ms is SACKed at 110 ms: RACK.xmit_ts = 61 ms, RACK.rtt =
    // 49 ms; the retransmission of 0 (60 + 49 = 109 <= 110) is lost again.
    #[test]
    fn a_lost_retransmission_is_marked_lost_again() {
        let mut b = Board::new(&[0, 1, 2, 3, 4, 61]);
        let mut r = Rack::new();
        for seq in 0..5 {
            r.on_sent(ms(seq as u64), seq, false);
        }
        b.sacked[1..5].fill(true);
        for seq in 1..5 {
            r.on_delivered(ms(50), seq, ms(seq as u64), false, seq > 1, ms(1), Dur::from_ms(40));
        }
        assert_eq!(r.detect_loss(ms(50), Dur::ZERO, &mut b), 1);
        assert!(b.lost[0]);
        // The retransmission of 0 at 60 ms.
        b.sent[0] = ms(60);
        b.lost[0] = false;
        r.on_sent(ms(60), 0, true);
        r.on_sent(ms(61), 5, false);
        assert_eq!(r.detect_loss(ms(100), Dur::ZERO, &mut b), 0, "no delivery sent after it yet");
        b.sacked[5] = true;
        r.on_delivered(ms(110), 5, ms(61), false, false, ms(61), Dur::from_ms(40));
        assert_eq!(r.detect_loss(ms(110), Dur::ZERO, &mut b), 1);
        assert!(b.lost[0]);
    }

    // Step 2's ambiguity rule: a retransmitted segment acknowledged with an echo older than
    // its retransmission, or sooner than min RTT after it, does not move RACK.
    #[test]
    fn a_possibly_original_delivery_of_a_retransmitted_segment_does_not_move_rack() {
        let mut r = Rack::new();
        r.on_delivered(ms(100), 7, ms(80), true, false, ms(10), Dur::from_ms(15));
        assert!(!r.advanced(), "echo 10 ms < retransmission at 80 ms");
        r.on_delivered(ms(100), 7, ms(90), true, false, ms(90), Dur::from_ms(15));
        assert!(!r.advanced(), "10 ms after the retransmission, below min RTT 15 ms");
        r.on_delivered(ms(100), 7, ms(80), true, false, ms(80), Dur::from_ms(15));
        assert!(r.advanced());
        assert!(r.overdue(ms(100), ms(80)) && !r.overdue(ms(100), ms(81)));
    }

    // Reordering: a never-retransmitted segment delivered below a SACKed one opens the window
    // again (min RTT / 4) even during recovery.
    #[test]
    fn reordering_keeps_the_window_open() {
        let mut r = Rack::new();
        r.on_delivered(ms(50), 2, ms(2), false, true, ms(2), Dur::from_ms(40));
        assert_eq!(r.reo_wnd(true, 5, 3, Dur::from_ms(40), Dur::from_ms(45)), Dur::from_ms(10));
    }

    // RFC 8985 section 7.2: PTO = 2 SRTT + 2 ms with several segments out, 2 SRTT + min RTO
    // with one (a delayed ACK), 1 s before any sample, never after the RTO.
    #[test]
    fn the_probe_timeout_follows_srtt_and_the_flight() {
        let mut r = Rack::new();
        let (min_rto, init) = (Dur::from_ms(200), Dur::from_secs(1));
        r.schedule_probe(ms(0), true, Some(Dur::from_ms(40)), 10, min_rto, init, Dur::from_ms(300));
        assert_eq!(r.poll_timeout(), Some(ms(82)));
        r.schedule_probe(ms(0), true, Some(Dur::from_ms(40)), 1, min_rto, init, Dur::from_ms(300));
        assert_eq!(r.poll_timeout(), Some(ms(280)), "one segment out: 80 + 200 ms");
        r.schedule_probe(ms(0), true, Some(Dur::from_ms(40)), 1, min_rto, init, Dur::from_ms(250));
        assert_eq!(r.poll_timeout(), Some(ms(250)), "capped at the RTO");
        r.schedule_probe(ms(0), true, None, 3, min_rto, init, Dur::from_secs(3));
        assert_eq!(r.poll_timeout(), Some(ms(1000)));
        r.schedule_probe(ms(0), false, Some(Dur::from_ms(40)), 3, min_rto, init, Dur::from_secs(3));
        assert_eq!(r.poll_timeout(), None, "not in recovery");
    }

    // Section 7.4: a retransmitted probe answered with the probe's own timestamp repaired a
    // loss; answered with an older one, the original had arrived; a new-data probe says
    // nothing. One probe at a time.
    #[test]
    fn the_probe_answer_tells_a_repaired_loss_from_a_late_original() {
        let mut r = Rack::new();
        r.schedule_probe(ms(0), true, Some(Dur::from_ms(40)), 10, Dur::from_ms(200), Dur::from_secs(1), Dur::ZERO);
        assert_eq!(r.take_pto_timer(ms(81)), None);
        assert_eq!(r.take_pto_timer(ms(82)), Some(ProbeDue::Now));
        assert!(r.probe_pending());
        r.on_probe_sent(ms(82), 10, true);
        r.schedule_probe(ms(82), true, Some(Dur::from_ms(40)), 10, Dur::from_ms(200), Dur::from_secs(1), Dur::ZERO);
        assert_eq!(r.take_pto_timer(ms(200)), Some(ProbeDue::None), "one probe outstanding");
        assert_eq!(r.on_probe_answer(9, ms(82)), ProbeVerdict::Pending);
        assert_eq!(r.on_probe_answer(10, ms(82)), ProbeVerdict::RepairedLoss);
        r.on_probe_sent(ms(300), 12, true);
        assert_eq!(r.on_probe_answer(12, ms(250)), ProbeVerdict::NoLoss);
        r.on_probe_sent(ms(400), 14, false);
        assert_eq!(r.on_probe_answer(14, ms(400)), ProbeVerdict::NoLoss);
        assert_eq!(r.on_probe_answer(20, ms(400)), ProbeVerdict::Pending, "no probe out");
    }

    // RFC 5682 / tcp_try_undo_loss: after a timeout whose first retransmission left at 500 ms,
    // an ACK of new data echoing 300 ms answers an original: spurious. With F-RTO, a delivered
    // original below the timeout's high mark is evidence too; a retransmission's is not.
    #[test]
    fn a_timeout_is_spurious_when_originals_arrive_after_it() {
        let mut r = Rack::new();
        r.on_timeout(true, 20);
        r.on_sent(ms(500), 0, true);
        assert!(!r.timeout_was_spurious(true, ms(500)));
        assert!(r.timeout_was_spurious(true, ms(300)));
        assert!(!r.timeout_was_spurious(false, ms(300)), "no advance: no Eifel evidence");
        r.on_delivered(ms(600), 0, ms(500), true, false, ms(500), Dur::from_ms(40));
        assert!(!r.timeout_was_spurious(false, ms(500)));
        r.on_delivered(ms(600), 5, ms(100), false, true, ms(500), Dur::from_ms(40));
        assert!(r.timeout_was_spurious(false, ms(500)));
        r.on_delivered(ms(600), 25, ms(550), false, false, ms(500), Dur::from_ms(40));
        assert!(!r.timeout_was_spurious(false, ms(500)), "25 was sent after the timeout");
        r.end_episode();
        r.on_timeout(false, 30);
        r.on_delivered(ms(700), 6, ms(100), false, true, ms(500), Dur::from_ms(40));
        assert!(!r.timeout_was_spurious(false, ms(500)), "F-RTO off");
    }
}
