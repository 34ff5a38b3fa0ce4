//! The sender's side of [`LossDetection::Rack`](crate::transport::LossDetection::Rack): the
//! hooks `sender.rs` calls, and the scoreboard lent to [`Rack`] (the laws are in
//! `transport/rack.rs`).

use crate::host::{CongestionEvent, Controller};
use crate::packet::Packet;
use crate::time::Time;
use crate::transport::rack::{ProbeDue, ProbeVerdict, Rack, Scoreboard, SegmentView};

use super::{Sender, LOST, RETX, SACKED};

impl<C: Controller> Scoreboard for Sender<C> {
    fn segment(&self, seq: u32) -> Option<SegmentView> {
        if seq < self.snd_una || seq >= self.snd_max {
            return None;
        }
        let i = (seq - self.snd_una) as usize;
        let f = self.board[i].flags;
        (f & SACKED == 0)
            .then(|| SegmentView { sent_at: self.sent_at[i], awaiting_retransmission: f & (LOST | RETX) == LOST })
    }

    /// `tcp_mark_skb_lost`: the last transmission is lost (a retransmission too: it leaves the
    /// pipe and the segment waits to be sent again).
    fn mark_lost(&mut self, seq: u32) {
        if seq < self.snd_una || seq >= self.snd_max {
            return;
        }
        let i = (seq - self.snd_una) as usize;
        let f = self.board[i].flags;
        if f & SACKED != 0 || f & (LOST | RETX) == LOST {
            return;
        }
        if f & RETX != 0 {
            self.stats.lost_retransmits += 1;
        }
        let bytes = self.payload(seq);
        if let Some(r) = self.rate.as_deref_mut() {
            r.on_lost(bytes);
        }
        self.set_flags(i, (f | LOST) & !RETX, bytes);
        self.rtx_scan = self.rtx_scan.min(seq);
        self.lost_hi = self.lost_hi.max(seq + 1);
    }
}

impl<C: Controller> Sender<C> {
    /// Linux's `TCP_CA_Loss`: after a timeout, until the ACK passes what was sent before it.
    #[inline]
    pub(super) fn in_rto_loss(&self) -> bool {
        self.recover_after_rto && self.snd_una < self.recover
    }

    /// RACK's reordering window in the current state.
    fn rack_reo_wnd(&self, rack: &Rack) -> crate::time::Dur {
        let recovering = self.in_recovery || self.in_rto_loss();
        rack.reo_wnd(recovering, self.sacked_segs, self.cfg.dupthresh.max(1), self.rtt.min_rtt(), self.rtt.srtt())
    }

    /// Runs RACK's detection (RFC 8985 step 5); true if it marked a segment.
    fn rack_detect(&mut self, now: Time, force: bool) -> bool {
        let Some(mut r) = self.rack.take() else { return false };
        let marked = if force || r.advanced() {
            let reo = self.rack_reo_wnd(&r);
            r.detect_loss(now, reo, self)
        } else {
            0
        };
        self.rack = Some(r);
        marked > 0
    }

    /// Fast recovery starts when a segment is marked lost (`tcp_time_to_recover`: `lost_out`),
    /// outside recovery and the loss state.
    fn rack_maybe_enter_recovery(&mut self, now: Time) {
        if !self.in_recovery && !self.in_rto_loss() && self.snd_una < self.snd_max && self.next_lost().is_some() {
            self.enter_recovery(now);
        }
    }

    /// Per ACK, after the scoreboard and the recovery state: the probe's answer
    /// (`tcp_process_tlp_ack`), RACK's marks, and the start of fast recovery.
    pub(super) fn rack_on_ack(&mut self, now: Time, ack: u32, ts_echo: Time, _newly: bool) {
        let verdict = self.rack.as_deref_mut().map_or(ProbeVerdict::Pending, |r| r.on_probe_answer(ack, ts_echo));
        if verdict == ProbeVerdict::RepairedLoss
            && !self.in_recovery
            && !self.in_rto_loss()
            && self.snd_una >= self.ecn_end
        {
            // Linux's CWR for a loss the probe repaired: the reduction and its end at once.
            self.cc.on_congestion_event(now, CongestionEvent::Loss, self.out_bytes);
            self.cc.on_recovery_exit(now, self.bytes_in_flight());
            self.ecn_end = self.ecn_end.max(self.snd_max);
            self.cwr_pending = self.ecn;
        }
        self.rack_detect(now, false);
        self.rack_maybe_enter_recovery(now);
    }

    /// After an ACK: the probe timer follows ACKs of new data (`tcp_set_xmit_timer`), stops
    /// with the data; the loss episode ends when no retransmission is outstanding.
    pub(super) fn rack_rearm(&mut self, now: Time, newly: bool) {
        let open = !self.in_recovery && !self.in_rto_loss();
        let (una, max) = (self.snd_una, self.snd_max);
        let Some(r) = self.rack.as_deref_mut() else { return };
        if open {
            r.maybe_end_episode(una);
        }
        if una == max {
            r.cancel_timers();
        } else if newly {
            self.schedule_probe(now, true);
        }
    }

    /// `tcp_schedule_loss_probe` (`advancing`: the retransmission timer is being restarted).
    pub(super) fn schedule_probe(&mut self, now: Time, advancing: bool) {
        let allowed = !self.in_recovery && !self.in_rto_loss() && self.sacked_segs == 0 && self.snd_una < self.snd_max;
        let rto = self.rtt.rto();
        let rto_left = if advancing { rto } else { self.rto_deadline.map_or(rto, |d| d.saturating_since(now)) };
        let srtt = self.rtt.has_sample().then(|| self.rtt.srtt());
        let packets_out = self.snd_max - self.snd_una;
        let (min_rto, initial_rto) = (self.cfg.min_rto, self.cfg.initial_rto);
        if let Some(r) = self.rack.as_deref_mut() {
            r.schedule_probe(now, allowed, srtt, packets_out, min_rto, initial_rto, rto_left);
        }
    }

    /// The reordering timer (`tcp_rack_reo_timeout`) and the probe timer (`tcp_send_loss_probe`).
    pub(super) fn on_rack_timers(&mut self, now: Time) {
        let Some(r) = self.rack.as_deref_mut() else { return };
        if r.take_reo_timer(now) && self.rack_detect(now, true) {
            self.rack_maybe_enter_recovery(now);
        }
        let Some(r) = self.rack.as_deref_mut() else { return };
        if r.take_pto_timer(now) == Some(ProbeDue::Now) {
            // The probe takes the retransmission timer's place; it restarts from the probe.
            // For the timer check the probe is an expiry: the period ends here.
            self.rto_deadline = Some(now + self.rtt.rto());
            self.rto_period_ends(now);
        }
    }

    /// The probe (`tcp_send_loss_probe`): one new segment if there is one, whatever the window,
    /// else the last outstanding segment not SACKed again.
    pub(super) fn send_probe(&mut self, now: Time) -> Option<Packet> {
        if self.snd_una >= self.snd_max {
            // Everything was acknowledged since the timer fired: nothing to probe.
            if let Some(r) = self.rack.as_deref_mut() {
                r.cancel_probe();
            }
            return None;
        }
        let (seq, retx) = if self.has_new_data() && !self.board_full(false) {
            (self.snd_max, false)
        } else {
            let mut seq = self.snd_max - 1;
            while seq > self.snd_una && self.board[(seq - self.snd_una) as usize].flags & SACKED != 0 {
                seq -= 1;
            }
            (seq, true)
        };
        let payload = self.payload(seq);
        let pacing = self.pacing_rate_bps();
        let pkt = self.emit(now, seq, retx, payload, pacing);
        self.stats.loss_probes += 1;
        let high = self.snd_max;
        if let Some(r) = self.rack.as_deref_mut() {
            r.on_probe_sent(now, high, retx);
        }
        Some(pkt)
    }

    /// The timeout's marks (`tcp_timeout_mark_lost`): the SACK scoreboard is kept; the first
    /// unacknowledged segment and every other one RACK calls overdue are lost.
    pub(super) fn rack_timeout_marks(&mut self, now: Time, frto: bool) {
        let Some(mut r) = self.rack.take() else { return };
        for seq in self.snd_una..self.snd_max {
            let i = (seq - self.snd_una) as usize;
            if self.board[i].flags & SACKED == 0 && (seq == self.snd_una || r.overdue(now, self.sent_at[i])) {
                Scoreboard::mark_lost(self, seq);
            }
        }
        r.on_timeout(frto, self.snd_max);
        self.rack = Some(r);
        self.rtx_scan = self.snd_una;
        self.force_rtx = true;
    }

    /// The last timeout was spurious (`tcp_try_undo_loss`): loss marks cleared (the segments
    /// count as in flight again), back to the open state, the controller's window restored.
    pub(super) fn undo_timeout(&mut self, now: Time) {
        for i in 0..self.board.len() {
            let f = self.board[i].flags;
            if f & LOST != 0 && f & SACKED == 0 {
                let bytes = self.payload(self.snd_una + i as u32);
                self.set_flags(i, f & !LOST, bytes);
            }
        }
        let una = self.snd_una;
        let outstanding: Vec<(Time, u32)> = (0..self.board.len())
            .filter(|&i| self.board[i].flags & SACKED == 0)
            .map(|i| (self.sent_at[i], una + i as u32))
            .collect();
        if let Some(r) = self.rack.as_deref_mut() {
            r.rebuild(outstanding.into_iter());
            r.end_episode();
        }
        self.recover_after_rto = false;
        self.force_rtx = false;
        self.stats.rto_undos += 1;
        self.cc.on_undo(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::AckEvent;
    use crate::packet::FlowId;
    use crate::transport::{LossDetection, TransportConfig};
    use crate::wire::{SackBlock, Segment, SegmentKind};

    const MSS: u32 = 1000;

    /// A fixed window that drops to one segment on a timeout and comes back on an undo;
    /// counts what the transport told it.
    #[derive(Debug, Clone, Default)]
    struct Counting {
        segs: u64,
        before_timeout: u64,
        losses: u32,
        timeouts: u32,
        exits: u32,
        undos: u32,
    }
    impl Controller for Counting {
        fn on_ack(&mut self, _: Time, _: &AckEvent) {}
        fn on_congestion_event(&mut self, _: Time, e: CongestionEvent, _: u64) {
            match e {
                CongestionEvent::Loss => self.losses += 1,
                CongestionEvent::Timeout => {
                    self.timeouts += 1;
                    self.before_timeout = self.segs;
                    self.segs = 1;
                }
                CongestionEvent::Ecn => {}
            }
        }
        fn on_recovery_exit(&mut self, _: Time, _: u64) {
            self.exits += 1;
        }
        fn on_undo(&mut self, _: Time) {
            self.undos += 1;
            self.segs = self.before_timeout;
        }
        fn window_bytes(&self) -> u64 {
            self.segs * MSS as u64
        }
    }

    fn sender(segs: u64, size: Option<u64>, detection: LossDetection) -> Sender<Counting> {
        let cfg =
            TransportConfig { mss_bytes: MSS, sack: true, loss_detection: detection, ..TransportConfig::default() };
        Sender::new(FlowId(1), cfg, Counting { segs, ..Counting::default() }, size, Time::ZERO)
    }

    fn ms(x: u64) -> Time {
        Time(x * 1_000_000)
    }

    fn sent(s: &mut Sender<Counting>, now: Time) -> Vec<u32> {
        std::iter::from_fn(|| s.poll_transmit(now)).map(|p| p.seg.seq).collect()
    }

    fn ack(ack: u32, ts: Time, blocks: &[(u32, u32)]) -> Packet {
        let mut seg = Segment { kind: SegmentKind::Ack, ack, ts_echo: ts, ..Segment::default() };
        for (k, &(start, end)) in blocks.iter().enumerate() {
            seg.sack[k] = SackBlock { start, end };
        }
        seg.sack_len = blocks.len() as u8;
        Packet { flow: FlowId(1), wire_bytes: 40, seg, ..Packet::default() }
    }

    //  RFC 8985 section 6 (a lost retransmission, found by time, no timeout). Window 10.
    //  t=0    0..9 leave
    //  t=100  ACK 1 (RTT 100 ms, min RTT 100, RTO 300 ms): 10 leaves
    //  t=101  SACKs of 2, 3: RACK waits min RTT / 4 (reordering window); the third SACK (4)
    //         zeroes the window: 1 (sent before 4, 101 ms ago) is lost; recovery; 1 resent,
    //         with 11, 12, 13 (pipe 10 - 3 SACKed - 1 lost + 1 resent = 7)
    //  t=201  SACK of 11 (sent at 101 after the retransmission): the retransmission of 1,
    //         sent at 101, is 100 ms = RACK.rtt old: lost again, resent at once
    //  t=301  ACK 14: recovery over; one reduction, no timeout
    #[test]
    fn a_lost_retransmission_is_resent_without_a_timeout() {
        let mut s = sender(10, None, LossDetection::Rack);
        assert_eq!(sent(&mut s, ms(0)), (0..10).collect::<Vec<_>>());
        s.on_packet(ms(100), &ack(1, ms(0), &[]));
        assert_eq!(sent(&mut s, ms(100)), vec![10]);
        s.on_packet(ms(101), &ack(1, ms(0), &[(2, 3)]));
        s.on_packet(ms(101), &ack(1, ms(0), &[(2, 4)]));
        assert!(!s.in_recovery(), "within the reordering window");
        assert!(s.poll_timeout().is_some_and(|t| t <= ms(101 + 25 + 2)), "reordering timer");
        s.on_packet(ms(101), &ack(1, ms(0), &[(2, 5)]));
        assert!(s.in_recovery());
        assert_eq!(sent(&mut s, ms(101)), vec![1, 11, 12, 13]);
        s.on_packet(ms(201), &ack(1, ms(101), &[(11, 12), (2, 11)]));
        assert_eq!(s.stats().lost_retransmits, 1);
        assert_eq!(sent(&mut s, ms(201)).first(), Some(&1), "resent again at once");
        s.on_packet(ms(301), &ack(14, ms(201), &[]));
        assert!(!s.in_recovery());
        let c = s.controller();
        assert_eq!((c.losses, c.exits, c.timeouts, s.stats().timeouts), (1, 1, 0, 0));
    }

    //  RFC 8985 section 7 (a tail loss): five segments, the last one lost. ACK 4 at 100 ms
    //  (RTT 100, RTO 300 ms): one segment out, PTO = 2 SRTT + min RTO = 400 ms, capped at the
    //  RTO: 400 ms. The probe resends 4 and restarts the timer; its ACK echoes the probe's
    //  timestamp: it repaired a loss, so one reduction (Linux's CWR), and no timeout.
    #[test]
    fn a_tail_loss_is_repaired_by_a_probe() {
        let mut s = sender(10, Some(5 * MSS as u64), LossDetection::Rack);
        assert_eq!(sent(&mut s, ms(0)), vec![0, 1, 2, 3, 4]);
        s.on_packet(ms(100), &ack(4, ms(0), &[]));
        assert_eq!(s.poll_timeout(), Some(ms(400)));
        s.on_timeout(ms(400));
        assert_eq!(sent(&mut s, ms(400)), vec![4]);
        assert_eq!((s.stats().loss_probes, s.stats().timeouts), (1, 0));
        assert_eq!(s.poll_timeout(), Some(ms(700)), "the RTO restarts from the probe");
        s.on_packet(ms(500), &ack(5, ms(400), &[]));
        assert!(s.is_complete());
        let c = s.controller();
        assert_eq!((c.losses, c.exits, c.timeouts), (1, 1, 0));
    }

    //  The same tail, but the original of 4 was only late: the ACK reaching the probe's mark
    //  echoes the original's timestamp, so nothing was lost and nothing is reduced.
    #[test]
    fn a_probe_that_was_not_needed_costs_no_reduction() {
        let mut s = sender(10, Some(5 * MSS as u64), LossDetection::Rack);
        sent(&mut s, ms(0));
        s.on_packet(ms(100), &ack(4, ms(0), &[]));
        s.on_timeout(ms(400));
        assert_eq!(sent(&mut s, ms(400)), vec![4]);
        s.on_packet(ms(410), &ack(5, ms(0), &[]));
        assert_eq!(s.controller().losses, 0);
    }

    //  A timeout keeps the SACK scoreboard (Linux's tcp_timeout_mark_lost). Window 10; 1 is
    //  lost, 2..4 SACKed at 101 ms; 1 is resent and lost again, and so is everything after:
    //  the RTO (300 ms after the last ACK of new data) marks lost 1 and every segment RACK
    //  calls overdue, never 2..4, which RFC 6675 (scoreboard forgotten) resends.
    #[test]
    fn a_timeout_resends_only_what_was_not_sacked() {
        let resent = |detection| {
            let mut s = sender(10, None, detection);
            sent(&mut s, ms(0));
            s.on_packet(ms(100), &ack(1, ms(0), &[]));
            sent(&mut s, ms(100));
            for end in 3..=5 {
                s.on_packet(ms(101), &ack(1, ms(0), &[(2, end)]));
            }
            sent(&mut s, ms(101));
            assert_eq!(s.poll_timeout(), Some(ms(400)));
            s.on_timeout(ms(400));
            s.cc.segs = 20;
            let mut all = sent(&mut s, ms(400));
            all.sort_unstable();
            all
        };
        let rack = resent(LossDetection::Rack);
        assert!(rack.contains(&1) && rack.contains(&5) && !rack.iter().any(|s| (2..5).contains(s)), "{rack:?}");
        let rfc = resent(LossDetection::Rfc6675);
        assert!((2..5).all(|s| rfc.contains(&s)), "{rfc:?}");
    }

    //  A spurious timeout, Eifel's way (Linux's tcp_packet_delayed): window 4, no ACK at all.
    //  Before any RTT sample the probe timer is the initial RTO (1 s): new data 4 is the
    //  probe, and the retransmission timer restarts from it. At 2000 ms it expires: the window
    //  drops to 1 and 0 is resent. ACK 2 at 2050 ms echoes 0 ms, before the retransmission:
    //  the originals arrived. Undo: the window is back to 4, 2, 3 and 4 are in flight again,
    //  so new data (5) leaves, not 2 and 3.
    #[test]
    fn a_timeout_answered_by_the_originals_is_undone() {
        let mut s = sender(4, None, LossDetection::Rack);
        assert_eq!(sent(&mut s, ms(0)), vec![0, 1, 2, 3]);
        assert_eq!(s.poll_timeout(), Some(ms(1000)));
        s.on_timeout(ms(1000));
        assert_eq!(sent(&mut s, ms(1000)), vec![4], "the probe");
        assert_eq!(s.poll_timeout(), Some(ms(2000)));
        s.on_timeout(ms(2000));
        assert_eq!(sent(&mut s, ms(2000)), vec![0]);
        s.on_packet(ms(2050), &ack(2, ms(0), &[]));
        assert_eq!((s.controller().undos, s.stats().rto_undos), (1, 1));
        assert_eq!(sent(&mut s, ms(2050)), vec![5]);
        assert_eq!(s.stats().retransmits, 1);
    }

    //  F-RTO (RFC 5682 section 3.1 step 3b, SACK-enhanced): as above (probe at 1 s, timeout
    //  at 2 s), but the ACK of the retransmission echoes the retransmission; it SACKs 2, an
    //  original never resent: not everything was lost, the timeout is undone.
    #[test]
    fn a_timeout_is_undone_when_original_data_is_sacked_after_it() {
        let mut s = sender(4, None, LossDetection::Rack);
        sent(&mut s, ms(0));
        s.on_timeout(ms(1000));
        sent(&mut s, ms(1000));
        s.on_timeout(ms(2000));
        assert_eq!(sent(&mut s, ms(2000)), vec![0]);
        s.on_packet(ms(2100), &ack(1, ms(2000), &[(2, 3)]));
        assert_eq!(s.stats().rto_undos, 1);
        // Without that evidence (only the retransmission acknowledged) nothing is undone.
        let mut s = sender(4, None, LossDetection::Rack);
        sent(&mut s, ms(0));
        s.on_timeout(ms(1000));
        sent(&mut s, ms(1000));
        s.on_timeout(ms(2000));
        sent(&mut s, ms(2000));
        s.on_packet(ms(2100), &ack(1, ms(2000), &[]));
        assert_eq!(s.stats().rto_undos, 0);
        assert_eq!(s.controller().segs, 1);
    }
}
