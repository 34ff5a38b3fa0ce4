//! Sender half of the reliable transport.
//!
//! # What the sender does
//!
//! Segments are numbered from 0 (sequence numbers count segments, see [`crate::wire::segment`]).
//! A sized flow of `S` bytes has `ceil(S / MSS)` segments, the last one possibly short.
//!
//! - **Sending limit.** A segment may leave while `bytes_in_flight + payload <= cwnd`, where
//!   `cwnd` is [`Controller::window_bytes`] and `bytes_in_flight` is the RFC 6675 "pipe"
//!   (section 2, `SetPipe`): outstanding payload bytes, minus segments SACKed or marked lost,
//!   plus retransmissions still in flight. Without SACK, each duplicate ACK during recovery
//!   stands for one segment that left the network (RFC 6582 section 3.2 step 4's window
//!   inflation, expressed on the pipe instead of on cwnd, as Linux does for non-SACK peers).
//!   One segment may always leave when nothing is in flight. With SACK, a SACKed segment
//!   leaves the pipe at once, also before recovery starts, so the first duplicate ACKs release
//!   new data much like Limited Transmit (RFC 3042); without SACK, duplicate ACKs before the
//!   `dupthresh`-th do not open the window (ns-2 NewReno behaviour).
//! - **Loss recovery, SACK off (RFC 6582).** The `dupthresh`-th duplicate ACK starts fast
//!   recovery if the cumulative ACK is at or above `recover` (section 3.2 step 2; strictly
//!   above after a timeout, so go-back-N duplicates cannot cause a false fast retransmit): the
//!   controller gets [`CongestionEvent::Loss`], `recover` = highest segment sent, the first
//!   unacknowledged segment is retransmitted at once. A partial ACK retransmits the next
//!   unacknowledged segment (step 5) and re-arms the RTO: every time by default
//!   ("slow-but-steady", ns-2's default), or the first time only ("impatient"), as
//!   [`crate::transport::PartialAckRto`] says (section 4.1). A full ACK ends recovery
//!   ([`Controller::on_recovery_exit`]).
//! - **Loss recovery, SACK on (RFC 6675).** The scoreboard marks a hole lost once `dupthresh`
//!   segments above it are SACKed (`IsLost`, section 4); recovery starts on that or on
//!   `dupthresh` duplicate ACKs, and lost holes are retransmitted before new data, each at most
//!   once per recovery (a lost retransmission is left to the RTO). Partial ACKs are handled as
//!   without SACK, which covers holes the SACK information cannot prove lost. During recovery a
//!   segment not SACKed, not marked lost and last sent more than one RTO ago is marked lost
//!   (Linux 2.6-3.x `tcp_timeout_skbs`, on by default through FACK: since every ACK of new
//!   data restarts the RTO, a recovery that acknowledges one hole per RTT would otherwise keep
//!   a lost tail "in flight" forever: issue #35's MaxNet flow held 4 MB that way for 30 s).
//!   The scan stops at the first segment sent within the RTO, as Linux's does.
//! - **Loss recovery, [`LossDetection::Rack`] (Linux's).** Instead of the two above (with SACK):
//!   RACK marks losses by time, lost retransmissions included, tail loss probes repair a lost
//!   tail, a timeout keeps the SACK scoreboard and is undone when spurious (`transport/rack.rs`
//!   has the laws, `sender/rack_hooks.rs` the sender's side).
//! - **Retransmission timer (RFC 6298).** Armed when data leaves and none is outstanding,
//!   restarted by ACKs of new data, stopped when all is acknowledged. RTT samples come from the
//!   echoed timestamp of every ACK that advances `snd_una` (RFC 7323 section 4.1: timestamps
//!   make samples of retransmitted segments unambiguous, so Karn's rule is not needed). On
//!   expiry: [`CongestionEvent::Timeout`], back-off, `recover` = highest sent, the SACK
//!   scoreboard is forgotten (RFC 6675 section 5.1, RFC 2018 section 8 on reneging) and all
//!   outstanding segments are retransmitted go-back-N as the window reopens.
//! - **ECN (RFC 3168 section 6.1.2).** An ACK with ECE makes the controller reduce
//!   ([`CongestionEvent::Ecn`]) without retransmitting, at most once per window of data, never
//!   during loss recovery; the next new data segment carries CWR. Data segments are ECT(0)
//!   except retransmissions (section 6.1.5). CWR is also sent after loss and timeout reductions
//!   (section 6.1.2: "for any reason").
//! - **Pacing.** If the controller gives a rate (or `pace_windowed` is set and an RTT is known),
//!   data packets are spaced by `wire_bytes * 8 / rate`. When a controller's own rate changes
//!   (a rate-based scheme's feedback), the next departure is re-timed from the last one at the
//!   new rate, at once (ns-2 rcp-host `rate_change`): a flow released from a low rate does not
//!   wait out the old, long gap.
//! - **Connection.** With [`TransportConfig::handshake`] nothing but SYNs leaves until the
//!   SYN-ACK arrives ([`crate::transport::handshake`]): SYN retransmissions count as timeouts
//!   and retransmissions in [`SenderStats`]; ECN is used only if the SYN-ACK agreed to it; the
//!   last segment of a sized flow carries FIN.
//! - **Probes.** A controller may ask for rate probes ([`Controller::probe_due`]): payload-less
//!   data segments with [`Flags::PROBE`], outside the sequence space, sent only while the flow
//!   has data to send; their ACKs carry feedback and nothing else.
//!
//! - **Window bound.** The window the sender uses is the controller's, capped at
//!   [`MAX_WINDOW_BYTES`] (TCP's largest window, RFC 7323 section 2.3) and at
//!   [`MAX_WINDOW_SEGMENTS`] segments ([`window_cap_segments`] for a given MSS): the
//!   scoreboard, the receiver's reorder list and the queues a flow fills grow with the window,
//!   so a controller that asks for more (a bug, or a law outside its range) cannot exhaust
//!   memory. [`SenderStats::window_capped`] counts the times the cap held a packet back; the
//!   simulator writes it to the flows table, the run's summary names every flow it held, and
//!   a flow whose path needs more than the cap is refused before the run (xcc-sim's
//!   `sim/window_cap.rs`).
//! - **Timer check.** Independently of the timer itself, the sender records when data became
//!   outstanding with no cumulative ACK since and no expiry since, and the RTO then in force:
//!   RFC 6298 section 5 says the timer must expire within that RTO (the clock granularity `G`
//!   of late) unless an ACK of new data arrives first. [`SenderStats::rto_overdue`] counts the
//!   times it did not ([`Sender::stats_at`] also counts a period still open at the end); the
//!   simulator's end-of-run invariants require 0 for every flow, and the scenario fuzzer checks
//!   the flows table's column.
//!
//! # Controller hooks, in order
//!
//! Per ACK, after all of the transport's bookkeeping (RTT sample, scoreboard, recovery state,
//! at most one [`Controller::on_congestion_event`] or [`Controller::on_recovery_exit`]):
//! [`Controller::on_feedback`] with the echoed congestion header, then [`Controller::on_ack`].
//! `AckEvent::in_recovery` is true during fast recovery, on the ACK that ends it, and for the
//! window after an ECN reduction (RFC 3168 CWR state); it is false during the slow start that
//! follows a timeout. Per data segment sent (retransmissions included): [`Controller::stamp`]
//! then [`Controller::on_sent`].
//!
//! # Driver contract
//!
//! After every `on_packet`, `on_timeout` or construction, call [`Sender::poll_transmit`] until it
//! returns `None`, then arm a wake-up at [`Sender::poll_timeout`]. The RTO deadline moves
//! forward on most ACKs: a driver can keep one pending wake-up per sender and re-arm lazily,
//! since early calls to [`Sender::on_timeout`] do nothing.
//!
//! # Cost
//!
//! The scoreboard is a ring (`VecDeque`) of one small entry per outstanding segment, indexed by
//! `seq - snd_una`; it grows to the largest window once and is reused. Per ACK the work is O(1)
//! plus the segments it acknowledges; SACK blocks are applied with skip pointers (path
//! compression) so already-SACKed runs are not walked again.

use std::collections::VecDeque;

use crate::host::{AckEvent, AnyController, CongestionEvent, Controller};
use crate::packet::{FlowId, Packet};
use crate::time::{Dur, Time};
use crate::transport::{Connect, LossDetection, PartialAckRto, RttEstimator, TransportConfig};
use crate::wire::{CongestionHeader, Ecn, Flags, SackBlock, Segment, SegmentKind};

use super::rack::Rack;
use super::rate::RateSampler;

mod rack_hooks;

/// Counters and gauges a driver samples (no logging inside the state machine).
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct SenderStats {
    /// Data segments put on the wire, retransmissions included.
    pub segments_sent: u64,
    /// Payload bytes put on the wire, retransmissions included.
    pub bytes_sent: u64,
    /// Segments retransmitted (fast retransmit, SACK recovery or timeout).
    pub retransmits: u64,
    /// Retransmission-timer expiries.
    pub timeouts: u64,
    /// Loss recoveries entered by duplicate ACKs / SACK.
    pub fast_recoveries: u64,
    /// Window reductions caused by ECN-Echo.
    pub ecn_reductions: u64,
    /// Payload bytes cumulatively acknowledged.
    pub bytes_acked: u64,
    /// Controller window (gauge, sampled when `stats()` is called).
    pub cwnd_bytes: u64,
    /// Controller slow-start threshold (gauge).
    pub ssthresh_bytes: u64,
    /// Transport pipe (gauge).
    pub bytes_in_flight: u64,
    /// Smoothed RTT (gauge).
    pub srtt: Dur,
    /// Smallest RTT sample (gauge).
    pub min_rtt: Dur,
    /// Latest RTT sample (gauge).
    pub latest_rtt: Dur,
    /// Current (backed-off) retransmission timeout (gauge).
    pub rto: Dur,
    /// When the last byte of a sized flow was acknowledged.
    pub completed_at: Option<Time>,
    /// Times a data packet was held back by `MAX_WINDOW_BYTES` or `MAX_WINDOW_SEGMENTS`
    /// while the controller's window would have let it go.
    pub window_capped: u64,
    /// Segments marked lost because they were last sent more than one RTO ago (SACK recovery).
    pub timed_out_marks: u64,
    /// Times data stayed outstanding with no ACK of new data for longer than the RTO in force
    /// (plus the clock granularity) without the retransmission timer firing: a broken timer
    /// (RFC 6298 section 5), 0 in a correct run. See "Timer check" in the module doc.
    pub rto_overdue: u64,
    /// Retransmissions found lost by RACK and sent again ([`LossDetection::Rack`]).
    pub lost_retransmits: u64,
    /// Tail loss probes sent ([`LossDetection::Rack`]).
    pub loss_probes: u64,
    /// Retransmission timeouts undone as spurious ([`LossDetection::Rack`]).
    pub rto_undos: u64,
}

/// The largest window in bytes: TCP's (RFC 7323 section 2.3: a 14-bit scale of a 16-bit
/// window, 2^30 bytes).
pub const MAX_WINDOW_BYTES: u64 = 1 << 30;
/// The largest window in segments, for tiny MSS: 2^20 scoreboard entries (8 MiB plus the send
/// times, 8 MiB) per flow.
pub const MAX_WINDOW_SEGMENTS: u64 = 1 << 20;

/// The window cap in full-sized segments for a flow of this MSS: the smaller of
/// `MAX_WINDOW_BYTES` / MSS and `MAX_WINDOW_SEGMENTS`.
pub fn window_cap_segments(mss_bytes: u32) -> u64 {
    (MAX_WINDOW_BYTES / mss_bytes.max(1) as u64).min(MAX_WINDOW_SEGMENTS)
}

/// Scoreboard flag: the receiver holds this segment (RFC 2018).
const SACKED: u8 = 1;
/// Scoreboard flag: presumed lost (RFC 6675 `IsLost`, partial ACK, or RTO).
const LOST: u8 = 2;
/// Scoreboard flag: retransmitted since it was marked lost.
const RETX: u8 = 4;
/// Scoreboard flag: sent more than once (RACK's ambiguity rule, F-RTO's "original data").
const EVER_RETX: u8 = 8;

/// One outstanding segment on the scoreboard.
#[derive(Copy, Clone, Debug, Default)]
struct SegState {
    flags: u8,
    /// For SACKED entries: a segment number above this one from which to look for the next
    /// segment that is not SACKED (path-compressed, so SACKed runs are crossed in ~O(1)).
    skip: u32,
}

/// Contribution of a segment to the RFC 6675 pipe: its original transmission counts unless it is
/// SACKed or lost, its retransmission counts until it is SACKed.
#[inline]
fn pipe_share(flags: u8, bytes: u64) -> u64 {
    if flags & SACKED != 0 {
        0
    } else {
        bytes * ((flags & LOST == 0) as u64 + (flags & RETX != 0) as u64)
    }
}

/// The sending end of one flow.
///
/// Generic over the controller so tests and experiments can plug in their own; everything in
/// the workspace uses the default, [`AnyController`] (static dispatch).
#[derive(Debug, Clone)]
pub struct Sender<C: Controller = AnyController> {
    flow: FlowId,
    cfg: TransportConfig,
    cc: C,
    size_bytes: Option<u64>,
    stats: SenderStats,
    mss: u64,
    /// Segments of a sized flow, and the payload of its last one.
    total_segs: Option<u32>,
    last_payload: u64,
    stopped: bool,
    /// First unacknowledged segment (SND.UNA).
    snd_una: u32,
    /// One past the highest segment ever sent (SND.MAX).
    snd_max: u32,
    /// Entry `i` describes segment `snd_una + i`, for every segment in `[snd_una, snd_max)`.
    board: VecDeque<SegState>,
    /// Entry `i`: when segment `snd_una + i` was last sent (timed-out marking in recovery).
    sent_at: VecDeque<Time>,
    /// Segments below this were checked by the timed-out marking (Linux's scoreboard hint).
    timeout_scan: u32,
    /// RFC 6675 pipe from the scoreboard flags, in payload bytes.
    pipe: u64,
    /// RFC 5681 FlightSize: payload bytes in `[snd_una, snd_max)`.
    out_bytes: u64,
    /// Without SACK: segments that duplicate ACKs in recovery say have left the network.
    reno_sacked: u32,
    sacked_segs: u32,
    /// One past the highest SACKed segment.
    high_sacked: u32,
    /// Every un-SACKed segment below this is lost by RFC 6675 `IsLost`.
    sack_lost_bound: u32,
    /// Segments below this have been checked against `sack_lost_bound`.
    lost_upto: u32,
    /// One past the highest segment ever marked lost (retransmission search bound).
    lost_hi: u32,
    /// No lost-and-not-retransmitted segment lies below this.
    rtx_scan: u32,
    /// Send the first lost segment now, whatever the window (fast retransmit, partial ACK, RTO).
    force_rtx: bool,
    dupacks: u32,
    in_recovery: bool,
    /// RFC 6582 `recover`, stored as one past the highest segment sent at the time.
    recover: u32,
    /// `recover` was set by a timeout: fast retransmit needs an ACK beyond it (see `on_packet`).
    recover_after_rto: bool,
    /// A partial ACK was already seen in this recovery (impatient RTO re-arming).
    partial_seen: bool,
    /// No ECN reaction until `snd_una` reaches this (one reduction per window).
    ecn_end: u32,
    /// After an ECN reduction, ACKs below this report `in_recovery` (CWR state).
    cwr_end: u32,
    cwr_pending: bool,
    rtt: RttEstimator,
    rto_deadline: Option<Time>,
    /// Timer check: while data is outstanding, the latest time the retransmission timer may
    /// fire unless an ACK of new data comes first (set from the RTO when the period began;
    /// see "Timer check" in the module doc). Kept apart from `rto_deadline` on purpose.
    rto_due_by: Option<Time>,
    /// Pacer: earliest departure of the next data packet.
    next_send: Time,
    /// The last `poll_transmit` had a packet ready but the pacer held it.
    pacing_blocked: bool,
    /// Since the pacer last held a packet, a packet has always been ready (neither the window
    /// nor the data stopped the sender): a departure after `next_send` is the driver's lateness,
    /// which [`TransportConfig::pacing_catch_up`] lets the pacer make up.
    pacer_backlogged: bool,
    /// The controller is rate-based (re-timing and probes apply).
    rate_based: bool,
    /// The controller's rate the pacer last spaced packets at (0: none yet).
    paced_rate: f64,
    /// The pacer's slot of the last data packet (re-timing counts from it) and its size on the
    /// wire. The slot is when it left, or, on a real clock, when it was due if the driver was
    /// late within [`TransportConfig::pacing_catch_up`]: re-timing from the late departure
    /// would lose that lateness at every rate change, and a rate-based flow's rate changes on
    /// almost every ACK.
    last_slot: Time,
    last_wire: u32,
    /// Connection state (handshake).
    conn: Connect,
    /// ECN in use: configured, and agreed by the SYN-ACK when there is a handshake.
    ecn: bool,
    /// Delivery-rate estimation, only for controllers that want samples (boxed: the other
    /// flows carry one pointer).
    rate: Option<Box<RateSampler>>,
    /// RACK-TLP and timeout undo, with [`LossDetection::Rack`] and SACK (boxed, as `rate`).
    rack: Option<Box<Rack>>,
}

impl<C: Controller> Sender<C> {
    /// A sender for `flow` that will send `size_bytes` (or forever when `None`), starting at `now`.
    ///
    /// # Panics
    ///
    /// If the flow has more than `u32::MAX` segments (sequence numbers count segments in `u32`;
    /// an unlimited flow wraps after 2^32 segments, ~6 TB at 1460 B, which no run reaches).
    pub fn new(flow: FlowId, cfg: TransportConfig, cc: C, size_bytes: Option<u64>, now: Time) -> Sender<C> {
        // A controller that cannot work without ECN (DCTCP) turns it on, as Linux's
        // `TCP_CONG_NEEDS_ECN` does whatever the `tcp_ecn` sysctl says.
        let cfg = TransportConfig { ecn: cfg.ecn || cc.needs_ecn(), ..cfg };
        let mss = cfg.mss_bytes.max(1) as u64;
        let rate_based = cc.is_rate_based();
        let rate = cc.wants_rate_samples().then(|| Box::new(RateSampler::new(now)));
        let (total_segs, last_payload) = match size_bytes {
            Some(s) => {
                let n = s.div_ceil(mss);
                let n32 = u32::try_from(n).expect("flow too long: sequence numbers count segments in u32");
                (Some(n32), if n == 0 { 0 } else { s - (n - 1) * mss })
            }
            None => (None, mss),
        };
        let mut stats = SenderStats::default();
        if total_segs == Some(0) {
            stats.completed_at = Some(now);
        }
        Sender {
            flow,
            cfg,
            cc,
            size_bytes,
            stats,
            mss,
            total_segs,
            last_payload,
            stopped: false,
            snd_una: 0,
            snd_max: 0,
            board: VecDeque::with_capacity(64),
            sent_at: VecDeque::with_capacity(64),
            timeout_scan: 0,
            pipe: 0,
            out_bytes: 0,
            reno_sacked: 0,
            sacked_segs: 0,
            high_sacked: 0,
            sack_lost_bound: 0,
            lost_upto: 0,
            lost_hi: 0,
            rtx_scan: 0,
            force_rtx: false,
            dupacks: 0,
            in_recovery: false,
            recover: 0,
            recover_after_rto: false,
            partial_seen: false,
            ecn_end: 0,
            cwr_end: 0,
            cwr_pending: false,
            rtt: RttEstimator::from_config(&cfg),
            rto_deadline: None,
            rto_due_by: None,
            next_send: now,
            pacing_blocked: false,
            rate_based,
            paced_rate: 0.0,
            pacer_backlogged: false,
            last_slot: now,
            last_wire: 0,
            conn: Connect::new(cfg.handshake, cfg.initial_rto.max(cfg.min_rto).min(cfg.max_rto)),
            ecn: cfg.ecn,
            rate,
            rack: (cfg.loss_detection == LossDetection::Rack && cfg.sack).then(|| Box::new(Rack::new())),
        }
    }

    /// The handshake's part of `on_packet`: a SYN-ACK establishes the connection, gives the
    /// first RTT sample and the controller its first feedback; nothing else is expected yet.
    fn on_syn_ack(&mut self, now: Time, pkt: &Packet) {
        let seg = &pkt.seg;
        if seg.kind != SegmentKind::Ack || !seg.flags.contains(Flags::SYN) || !self.conn.on_syn_ack() {
            return;
        }
        // RFC 3168 section 6.1.1: an ECN-setup SYN-ACK has ECE (and not CWR).
        self.ecn = self.cfg.ecn && seg.flags.contains(Flags::ECE) && !seg.flags.contains(Flags::CWR);
        let sample = now.saturating_since(seg.ts_echo);
        self.rtt.on_ack_sample(sample, self.snd_una, self.snd_max);
        self.next_send = self.next_send.max(now);
        self.last_slot = self.last_slot.max(now);
        let ev = AckEvent {
            newly_acked_bytes: 0,
            rtt_sample: Some(sample),
            srtt: self.rtt.srtt(),
            min_rtt: self.rtt.min_rtt(),
            bytes_in_flight: 0,
            in_recovery: false,
            rate: None,
            ece: false,
            flight_bytes: 0,
        };
        self.cc.on_feedback(now, &pkt.cc);
        self.cc.on_ack(now, &ev);
    }

    /// The next SYN: payload-less, Not-ECT, stamped by the controller (see `handshake`).
    fn emit_syn(&mut self, now: Time) -> Packet {
        if self.conn.on_syn_sent(now) {
            self.stats.retransmits += 1;
        }
        let mut flags = Flags::SYN;
        if self.cfg.ecn {
            // RFC 3168 section 6.1.1: an ECN-setup SYN.
            flags.insert(Flags::ECE);
            flags.insert(Flags::CWR);
        }
        let mut cc = CongestionHeader::default();
        self.cc.stamp_syn(now, &mut cc);
        Packet {
            flow: self.flow,
            wire_bytes: self.cfg.header_bytes + cc.wire_len() as u32,
            ecn: Ecn::NotEct,
            seg: Segment { kind: SegmentKind::Data, flags, ts_val: now, ..Segment::default() },
            cc,
        }
    }

    /// True until the connection is established (data waits).
    pub fn connecting(&self) -> bool {
        self.conn.pending()
    }

    /// An ACK for this flow arrived. Anything that is not an ACK, and ACKs below `snd_una`
    /// (reordered, stale) or above `snd_max` (bogus), are ignored.
    #[inline]
    pub fn on_packet(&mut self, now: Time, pkt: &Packet) {
        if self.conn.pending() {
            return self.on_syn_ack(now, pkt);
        }
        let seg = &pkt.seg;
        if seg.flags.contains(Flags::SYN) {
            return; // a duplicate SYN-ACK
        }
        if seg.kind != SegmentKind::Ack || seg.ack < self.snd_una || seg.ack > self.snd_max {
            return;
        }
        if seg.flags.contains(Flags::PROBE) {
            // A probe's answer: feedback only, no sequence-space meaning.
            self.cc.on_feedback(now, &pkt.cc);
            self.retime_pacer();
            return;
        }
        let ack = seg.ack;
        let flight_before = self.out_bytes;
        if self.rate.is_some() {
            let in_flight = self.bytes_in_flight();
            if let Some(r) = self.rate.as_deref_mut() {
                r.begin_ack(in_flight);
            }
        }
        let newly = ack > self.snd_una;
        let rto_loss = self.in_rto_loss();
        let mut rtt_sample = None;
        let mut acked_bytes = 0;
        let mut acked_segs = 0;
        if newly {
            // RFC 7323 section 4.1 / RFC 6298 section 3: with timestamps every ACK of new data
            // gives a valid sample, retransmissions included.
            let sample = now.saturating_since(seg.ts_echo);
            self.rtt.on_ack_sample(sample, ack, self.snd_max);
            rtt_sample = Some(sample);
            acked_segs = ack - self.snd_una;
            if self.rate.is_some() {
                self.rate_cum_ack(ack);
            }
            acked_bytes = self.advance(ack, now, seg.ts_echo);
            self.stats.bytes_acked += acked_bytes;
        }
        if self.cfg.sack && seg.sack_len > 0 {
            self.apply_sack(seg.sack_blocks(), now, seg.ts_echo);
        }
        if rto_loss && self.rack.as_deref_mut().is_some_and(|r| r.timeout_was_spurious(newly, seg.ts_echo)) {
            self.undo_timeout(now);
        }

        // RFC 6582 section 3.2.
        let mut exited = false;
        let mut restart_rto = newly;
        if newly {
            if self.in_recovery {
                if ack >= self.recover {
                    // Step 3: full ACK.
                    self.in_recovery = false;
                    self.reno_sacked = 0;
                    self.dupacks = 0;
                    exited = true;
                    self.cc.on_recovery_exit(now, self.bytes_in_flight());
                } else {
                    // Step 5: partial ACK. One acknowledged segment was the retransmission; the
                    // others had been counted by duplicate ACKs (Linux's `tcp_remove_reno_sacks`).
                    self.reno_sacked = self.reno_sacked.saturating_sub(acked_segs - 1);
                    if self.rack.is_none() {
                        // With RACK, Linux leaves partial ACKs to RACK's clock (no NewReno mark).
                        self.mark_lost(self.snd_una);
                        self.force_rtx = true;
                    }
                    // Section 4.1: slow-but-steady re-arms the RTO on every partial ACK, the
                    // impatient variant only on the first.
                    restart_rto = self.cfg.partial_ack_rto == PartialAckRto::SlowButSteady || !self.partial_seen;
                    self.partial_seen = true;
                }
            } else {
                self.dupacks = 0;
            }
        } else if self.snd_una < self.snd_max {
            // RFC 5681 section 2 duplicate ACK (outstanding data, no advance).
            if self.in_recovery {
                if !self.cfg.sack {
                    // RFC 6582 step 4: each duplicate ACK is a segment that left the network.
                    let max = (self.snd_max - self.snd_una).saturating_sub(1);
                    self.reno_sacked = (self.reno_sacked + 1).min(max);
                }
            } else {
                self.dupacks += 1;
            }
        }

        // Step 2 (fast retransmit), guarded by `recover`; with SACK also on IsLost(snd_una).
        // After a timeout the ACK must cover more than `recover` (RFC 6582 section 3.2 steps 1
        // and 2, the "careful" rule): go-back-N resends segments the receiver already holds,
        // and once the ACK reaches `recover` those duplicates still in flight come back as
        // duplicate ACKs of `recover` itself. Entering recovery on them would retransmit, on
        // every partial ACK, segments that are not lost, whose duplicates trigger the next false
        // fast retransmit (ns-2's bug_fix_ case). After a fast recovery an ACK of exactly
        // `recover` may start the next one (the "less careful" variant): no duplicates are
        // around then, and it repairs a loss of the first segment sent after `recover`
        // without an RTO.
        let beyond_recover = ack > self.recover || (ack == self.recover && !self.recover_after_rto);
        if self.rack.is_some() {
            self.rack_on_ack(now, ack, seg.ts_echo, newly);
        } else if !self.in_recovery && self.snd_una < self.snd_max && beyond_recover {
            let sack_lost = self.cfg.sack && self.snd_una < self.sack_lost_bound;
            if self.dupacks >= self.cfg.dupthresh.max(1) || sack_lost {
                self.enter_recovery(now);
            }
        }
        if self.in_recovery && self.cfg.sack && self.rack.is_none() {
            self.mark_sack_losses();
            self.mark_timed_out(now);
        }

        // RFC 3168 section 6.1.2: react to ECE once per window, not during loss recovery.
        if self.ecn
            && seg.flags.contains(Flags::ECE)
            && !self.in_recovery
            && self.snd_una >= self.recover
            && self.ecn_window_over()
        {
            self.cc.on_congestion_event(now, CongestionEvent::Ecn, flight_before);
            self.ecn_end = self.snd_max;
            self.cwr_end = self.snd_max;
            self.cwr_pending = true;
            self.stats.ecn_reductions += 1;
        }

        // RFC 6298 section 5.2 / 5.3.
        if self.snd_una == self.snd_max {
            self.rto_deadline = None;
        } else if restart_rto {
            self.rto_deadline = Some(now + self.rtt.rto());
        }
        if newly {
            self.rto_period_ends(now);
        }
        if self.rack.is_some() {
            self.rack_rearm(now, newly);
        }
        if let Some(total) = self.total_segs {
            if self.snd_una >= total && self.stats.completed_at.is_none() {
                self.stats.completed_at = Some(now);
            }
        }

        let rate = match self.rate.as_deref_mut() {
            Some(r) => {
                // Linux's TCP_CA_Loss lasts until the ACK passes what was sent at the timeout.
                let rto_recovery = self.recover_after_rto && self.snd_una < self.recover;
                Some(r.generate(now, self.rtt.min_rtt(), rto_recovery))
            }
            None => None,
        };
        let ev = AckEvent {
            newly_acked_bytes: acked_bytes,
            rtt_sample,
            srtt: self.rtt.srtt(),
            min_rtt: self.rtt.min_rtt(),
            bytes_in_flight: self.bytes_in_flight(),
            in_recovery: self.in_recovery || exited || self.snd_una < self.cwr_end,
            rate,
            ece: self.ecn && seg.flags.contains(Flags::ECE),
            flight_bytes: self.out_bytes,
        };
        self.cc.on_feedback(now, &pkt.cc);
        self.cc.on_ack(now, &ev);
        self.retime_pacer();
    }

    /// A rate-based controller changed its rate: the next departure is the last one plus the
    /// new gap (sent at once if that is already past).
    #[inline]
    fn retime_pacer(&mut self) {
        if !self.rate_based {
            return;
        }
        if let Some(r) = self.cc.pacing_rate_bps() {
            if r != self.paced_rate && r.is_finite() && r > 0.0 && self.last_wire > 0 {
                self.next_send = self.last_slot + Dur::from_secs_f64(self.last_wire as f64 * 8.0 / r);
                self.paced_rate = r;
            }
        }
    }

    /// A probe, if the controller wants one now and the flow still has data to move.
    fn poll_probe(&mut self, now: Time) -> Option<Packet> {
        let due = self.cc.probe_due()?;
        if due > now || !self.may_probe() {
            return None;
        }
        self.cc.on_probe_sent(now);
        let mut cc = CongestionHeader::default();
        self.cc.stamp(now, &mut cc);
        Some(Packet {
            flow: self.flow,
            wire_bytes: self.cfg.header_bytes + cc.wire_len() as u32,
            ecn: Ecn::NotEct,
            seg: Segment {
                kind: SegmentKind::Data,
                flags: Flags::PROBE,
                seq: self.snd_max,
                ts_val: now,
                ..Segment::default()
            },
            cc,
        })
    }

    /// Probes go only while the flow has data to move: outstanding or still to send. A probe
    /// the flow may not send is no wake-up either: a stopped flow with everything acknowledged
    /// would otherwise be woken at the same instant forever (found by the scenario fuzzer,
    /// seed 27: an RCP flow stopped at 1.5 s hung the run).
    #[inline]
    fn may_probe(&self) -> bool {
        self.snd_una < self.snd_max || self.has_new_data()
    }

    /// The next packet to send now, if the window, the pacer and the data allow one.
    /// Retransmissions of lost segments go before new data.
    #[inline]
    pub fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        if self.conn.pending() {
            return self.conn.syn_due().then(|| self.emit_syn(now));
        }
        if self.rack.as_deref().is_some_and(Rack::probe_pending) {
            if let Some(p) = self.send_probe(now) {
                return Some(p);
            }
        }
        if self.rate_based {
            if let Some(p) = self.poll_probe(now) {
                return Some(p);
            }
        }
        let (seq, retx) = match self.next_lost() {
            Some(s) => (s, true),
            None if self.has_new_data() => {
                self.force_rtx = false;
                (self.snd_max, false)
            }
            None => {
                self.force_rtx = false;
                self.pacing_blocked = false;
                self.pacer_backlogged = false;
                if self.rate.is_some() {
                    self.check_app_limited();
                }
                return None;
            }
        };
        let payload = self.payload(seq);
        let forced = retx && self.force_rtx;
        let pacing = self.pacing_rate_bps();
        if !forced {
            let flight = self.bytes_in_flight();
            if flight > 0 && flight.saturating_add(payload) > self.cc.window_bytes() {
                self.pacing_blocked = false;
                self.pacer_backlogged = false;
                return None;
            }
            if flight > 0 && (flight.saturating_add(payload) > MAX_WINDOW_BYTES || self.board_full(retx)) {
                self.stats.window_capped += 1;
                self.pacing_blocked = false;
                self.pacer_backlogged = false;
                return None;
            }
            if pacing.is_some() && self.next_send > now {
                self.pacing_blocked = true;
                self.pacer_backlogged = true;
                return None;
            }
        }
        self.force_rtx = false;
        self.pacing_blocked = false;
        Some(self.emit(now, seq, retx, payload, pacing))
    }

    /// Earliest time `on_timeout` has work to do (RTO, pacing, controller timer).
    pub fn poll_timeout(&self) -> Option<Time> {
        if self.conn.pending() {
            return self.conn.poll_timeout();
        }
        let mut t = self.cc.poll_timeout();
        let mut take = |x: Option<Time>| {
            if let Some(x) = x {
                t = Some(t.map_or(x, |t| t.min(x)));
            }
        };
        take(self.rto_deadline);
        take(self.rack.as_deref().and_then(Rack::poll_timeout));
        take(self.pacing_blocked.then_some(self.next_send));
        if self.rate_based && self.may_probe() {
            take(self.cc.probe_due());
        }
        t
    }

    /// Timer expiry; early or repeated calls do nothing.
    pub fn on_timeout(&mut self, now: Time) {
        if self.conn.pending() {
            // RFC 6298 section 5.5 for the SYN; the controller has nothing to time yet.
            if self.conn.on_timeout(now, self.cfg.max_rto) {
                self.stats.timeouts += 1;
            }
            return;
        }
        if self.cc.poll_timeout().is_some_and(|t| t <= now) {
            self.cc.on_timeout(now);
        }
        if self.rack.is_some() {
            self.on_rack_timers(now);
        }
        match self.rto_deadline {
            Some(t) if t <= now => {}
            _ => return,
        }
        if self.snd_una >= self.snd_max {
            self.rto_deadline = None;
            return;
        }
        // RFC 6298 section 5.4-5.6 with RFC 5681 section 3.1 (loss window) and RFC 6582
        // section 3.2 step 1 (`recover` = highest sent, so later duplicate ACKs of the same
        // window do not start a fast retransmit).
        self.stats.timeouts += 1;
        // F-RTO is armed unless this is the first timeout of a fast recovery (`tcp_enter_loss`).
        let frto = !self.in_recovery || self.rtt.backoff_count() > 0;
        self.cc.on_congestion_event(now, CongestionEvent::Timeout, self.out_bytes);
        self.rtt.on_backoff();
        // A timeout ends fast recovery without `on_recovery_exit`: the loss window replaces it.
        self.in_recovery = false;
        self.partial_seen = false;
        self.dupacks = 0;
        self.reno_sacked = 0;
        self.recover = self.snd_max;
        self.recover_after_rto = true;
        self.ecn_end = self.ecn_end.max(self.snd_max);
        self.cwr_end = 0;
        self.cwr_pending = self.ecn;
        if self.rack.is_some() {
            self.rack_timeout_marks(now, frto);
            self.rto_deadline = Some(now + self.rtt.rto());
            self.rto_period_ends(now);
            return;
        }
        // Forget SACK information (RFC 6675 section 5.1, RFC 2018 section 8) and presume every
        // outstanding segment lost: go-back-N from snd_una.
        if let Some(mut r) = self.rate.take() {
            let fresh: u64 = (self.snd_una..self.snd_max)
                .filter(|&seq| self.board[(seq - self.snd_una) as usize].flags & (LOST | SACKED) == 0)
                .map(|seq| self.payload(seq))
                .sum();
            r.on_lost(fresh);
            self.rate = Some(r);
        }
        for st in self.board.iter_mut() {
            st.flags = LOST;
        }
        self.pipe = 0;
        self.sacked_segs = 0;
        self.high_sacked = self.snd_una;
        self.sack_lost_bound = self.snd_una;
        self.lost_upto = self.snd_max;
        self.lost_hi = self.snd_max;
        self.timeout_scan = self.snd_max;
        self.rtx_scan = self.snd_una;
        self.force_rtx = true;
        self.rto_deadline = Some(now + self.rtt.rto());
        self.rto_period_ends(now);
    }

    /// Stop sending new data (the flow's stop time); outstanding data is still recovered.
    pub fn stop(&mut self) {
        self.stopped = true;
    }

    /// True once every byte of a sized flow is acknowledged.
    pub fn is_complete(&self) -> bool {
        self.stats.completed_at.is_some()
    }

    /// [`Sender::stats`] at the end of a run at `now`: `rto_overdue` also counts a period still
    /// open whose RTO has passed (the timer never fired).
    pub fn stats_at(&self, now: Time) -> SenderStats {
        let mut s = self.stats();
        if self.rto_due_by.is_some_and(|due| now > due + self.cfg.clock_granularity) {
            s.rto_overdue += 1;
        }
        s
    }

    /// Counters, with the gauges sampled now.
    pub fn stats(&self) -> SenderStats {
        let mut s = self.stats;
        s.cwnd_bytes = self.cc.window_bytes();
        s.ssthresh_bytes = self.cc.ssthresh_bytes();
        s.bytes_in_flight = self.bytes_in_flight();
        s.srtt = self.rtt.srtt();
        s.min_rtt = self.rtt.min_rtt();
        s.latest_rtt = self.rtt.latest();
        s.rto = self.rtt.rto();
        s
    }

    /// The congestion controller.
    pub fn controller(&self) -> &C {
        &self.cc
    }

    /// The flow this sender belongs to.
    pub fn flow(&self) -> FlowId {
        self.flow
    }

    /// The flow size given at construction (`None`: unlimited).
    pub fn size_bytes(&self) -> Option<u64> {
        self.size_bytes
    }

    /// The RTT estimator.
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }

    /// First unacknowledged segment.
    pub fn snd_una(&self) -> u32 {
        self.snd_una
    }

    /// One past the highest segment sent.
    pub fn snd_max(&self) -> u32 {
        self.snd_max
    }

    /// True during fast recovery (RFC 6582 / RFC 6675), not after a timeout.
    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    /// The pipe: payload bytes presumed in the network (RFC 6675 section 2 `SetPipe`, with
    /// duplicate ACKs standing in for SACKs when SACK is off).
    #[inline]
    pub fn bytes_in_flight(&self) -> u64 {
        self.pipe.saturating_sub(self.reno_sacked as u64 * self.mss)
    }

    // ---- internals -------------------------------------------------------------------------

    #[inline]
    fn payload(&self, seq: u32) -> u64 {
        match self.total_segs {
            Some(t) if seq + 1 == t => self.last_payload,
            _ => self.mss,
        }
    }

    /// RFC 3168 section 6.1.2: ECE is ignored until data sent after the last reduction is
    /// acknowledged. Strictly above `ecn_end`: the ACK of the last segment of the reduced window
    /// still carries ECE, because the receiver only stops echoing when the CWR segment (the
    /// first one sent after the reduction) arrives.
    #[inline]
    fn ecn_window_over(&self) -> bool {
        self.snd_una > self.ecn_end || self.ecn_end == 0
    }

    #[inline]
    fn has_new_data(&self) -> bool {
        !self.stopped
            && match self.total_segs {
                Some(t) => self.snd_max < t,
                None => true,
            }
    }

    /// Pacing rate in bit/s: the controller's, else cwnd/SRTT when `pace_windowed` (scaled as
    /// Linux's `tcp_update_pacing_rate`: x2 in slow start, x1.2 in congestion avoidance).
    #[inline]
    fn pacing_rate_bps(&self) -> Option<f64> {
        let r = match self.cc.pacing_rate_bps() {
            Some(r) => r,
            None if self.cfg.pace_windowed && self.rtt.has_sample() && self.rtt.srtt() > Dur::ZERO => {
                let cwnd = self.cc.window_bytes();
                if cwnd == u64::MAX {
                    return None;
                }
                let factor = if cwnd < self.cc.ssthresh_bytes() { 2.0 } else { 1.2 };
                factor * cwnd as f64 * 8.0 / self.rtt.srtt().as_secs_f64()
            }
            None => return None,
        };
        (r.is_finite() && r > 0.0).then_some(r)
    }

    /// Builds and accounts for the data packet carrying `seq`.
    fn emit(&mut self, now: Time, seq: u32, retx: bool, payload: u64, pacing: Option<f64>) -> Packet {
        let mut flags = Flags::default();
        if retx {
            let i = (seq - self.snd_una) as usize;
            self.set_flags(i, self.board[i].flags | RETX | EVER_RETX, payload);
            self.sent_at[i] = now;
            self.stats.retransmits += 1;
            if let Some(r) = self.rate.as_deref_mut() {
                r.on_sent(now, i, false, false);
            }
        } else {
            if let Some(r) = self.rate.as_deref_mut() {
                let index = (seq - self.snd_una) as usize;
                r.on_sent(now, index, true, self.snd_una == self.snd_max);
            }
            self.board.push_back(SegState::default());
            self.sent_at.push_back(now);
            self.snd_max += 1;
            self.pipe += payload;
            self.out_bytes += payload;
            if self.cwr_pending {
                // RFC 3168 section 6.1.2: CWR on the first new data packet after a reduction.
                flags.insert(Flags::CWR);
                self.cwr_pending = false;
            }
        }
        let mut cc = CongestionHeader::default();
        self.cc.stamp(now, &mut cc);
        let wire_bytes = payload as u32 + self.cfg.header_bytes + cc.wire_len() as u32;
        if self.cfg.handshake && self.total_segs == Some(seq + 1) {
            // The last segment closes the connection (see `handshake`).
            flags.insert(Flags::FIN);
        }
        if let Some(r) = self.rack.as_deref_mut() {
            r.on_sent(now, seq, retx);
        }
        self.cc.on_sent(now, payload);
        self.stats.segments_sent += 1;
        self.stats.bytes_sent += payload;
        // RFC 6298 section 5.1: start the timer if it is not running.
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rtt.rto());
        }
        if self.rto_due_by.is_none() {
            self.rto_due_by = Some(now + self.rtt.rto());
        }
        if !retx && self.rack.is_some() {
            self.schedule_probe(now, false);
        }
        if let Some(rate) = pacing {
            let gap = Dur::from_secs_f64(wire_bytes as f64 * 8.0 / rate);
            // From the scheduled departure if the driver was late (within the catch-up bound),
            // else from now (TransportConfig::pacing_catch_up).
            let late_ok = if self.pacer_backlogged { self.cfg.pacing_catch_up.0 } else { 0 };
            let slot = self.next_send.max(Time(now.0.saturating_sub(late_ok)));
            self.next_send = slot + gap;
            self.paced_rate = rate;
            // A packet sent ahead of its slot (a forced retransmission) counts from now.
            self.last_slot = slot.min(now);
            self.last_wire = wire_bytes;
        }
        Packet {
            flow: self.flow,
            wire_bytes,
            // RFC 3168 section 6.1.5: retransmissions are not ECN-capable.
            ecn: if self.ecn && !retx { Ecn::Ect0 } else { Ecn::NotEct },
            seg: Segment {
                kind: SegmentKind::Data,
                flags,
                seq,
                payload_bytes: payload as u32,
                ts_val: now,
                ..Segment::default()
            },
            cc,
        }
    }

    /// Changes the flags of board entry `i` (payload `bytes`), keeping the pipe in step.
    #[inline]
    fn set_flags(&mut self, i: usize, flags: u8, bytes: u64) {
        let old = self.board[i].flags;
        self.pipe = self.pipe - pipe_share(old, bytes) + pipe_share(flags, bytes);
        self.board[i].flags = flags;
    }

    /// Delivery-rate bookkeeping of a cumulative ACK up to `ack` (before `advance`): every
    /// segment not already SACKed is delivered now, and the snapshots of all are dropped.
    fn rate_cum_ack(&mut self, ack: u32) {
        let Some(mut r) = self.rate.take() else { return };
        for seq in self.snd_una..ack {
            r.on_delivered((seq - self.snd_una) as usize, seq, self.payload(seq));
        }
        r.advance((ack - self.snd_una) as usize);
        self.rate = Some(r);
    }

    /// `tcp_rate_check_app_limited`: nothing to send or retransmit, and room in the window.
    fn check_app_limited(&mut self) {
        let in_flight = self.bytes_in_flight();
        if in_flight < self.cc.window_bytes() {
            if let Some(r) = self.rate.as_deref_mut() {
                r.mark_app_limited(in_flight);
            }
        }
    }

    /// Cumulative ACK up to `ack` (exclusive): drops the entries, returns the bytes acknowledged.
    #[inline]
    fn advance(&mut self, ack: u32, now: Time, ts_echo: Time) -> u64 {
        let mut bytes = 0;
        let (high_sacked, min_rtt) = (self.high_sacked, self.rtt.min_rtt());
        for seq in self.snd_una..ack {
            let st = self.board.pop_front().unwrap_or_default();
            let sent_at = self.sent_at.pop_front().unwrap_or_default();
            if let Some(r) = self.rack.as_deref_mut() {
                if st.flags & SACKED == 0 {
                    let ever = st.flags & EVER_RETX != 0;
                    r.on_delivered(now, seq, sent_at, ever, seq < high_sacked, ts_echo, min_rtt);
                }
            }
            let b = self.payload(seq);
            bytes += b;
            self.pipe -= pipe_share(st.flags, b);
            if st.flags & SACKED != 0 {
                self.sacked_segs -= 1;
            }
        }
        self.out_bytes -= bytes;
        self.snd_una = ack;
        self.high_sacked = self.high_sacked.max(ack);
        self.sack_lost_bound = self.sack_lost_bound.max(ack);
        self.lost_upto = self.lost_upto.max(ack);
        self.lost_hi = self.lost_hi.max(ack);
        self.rtx_scan = self.rtx_scan.max(ack);
        self.timeout_scan = self.timeout_scan.max(ack);
        bytes
    }

    /// Timer check: an ACK of new data or an expiry ends the period at `now` (counted as
    /// overdue if it lasted past its RTO and the clock granularity); the next one starts now,
    /// with the RTO now in force, if data is still outstanding.
    #[inline]
    fn rto_period_ends(&mut self, now: Time) {
        if self.rto_due_by.is_some_and(|due| now > due + self.cfg.clock_granularity) {
            self.stats.rto_overdue += 1;
        }
        self.rto_due_by = (self.snd_una < self.snd_max).then(|| now + self.rtt.rto());
    }

    /// New data would take the scoreboard past [`MAX_WINDOW_SEGMENTS`] entries.
    #[inline]
    fn board_full(&self, retx: bool) -> bool {
        !retx && self.board.len() as u64 >= MAX_WINDOW_SEGMENTS
    }

    /// Marks lost every segment, from the scan point on, that is neither SACKed nor already
    /// lost and was last sent more than one RTO ago, stopping at the first one sent within the
    /// RTO (Linux 2.6-3.x `tcp_timeout_skbs` with `tcp_skb_timedout`: `now - when > rto`).
    fn mark_timed_out(&mut self, now: Time) {
        let rto = self.rtt.rto();
        let mut seq = self.timeout_scan.max(self.snd_una);
        while seq < self.snd_max {
            let i = (seq - self.snd_una) as usize;
            if now.saturating_since(self.sent_at[i]) <= rto {
                break;
            }
            if self.board[i].flags & (SACKED | LOST) == 0 {
                self.mark_lost(seq);
                self.stats.timed_out_marks += 1;
            }
            seq += 1;
        }
        self.timeout_scan = seq;
    }

    fn enter_recovery(&mut self, now: Time) {
        self.in_recovery = true;
        self.recover = self.snd_max;
        self.recover_after_rto = false;
        self.partial_seen = false;
        self.stats.fast_recoveries += 1;
        // One reduction per window: an ECN reduction of this same window already happened.
        if self.snd_una >= self.ecn_end {
            self.cc.on_congestion_event(now, CongestionEvent::Loss, self.out_bytes);
            self.cwr_pending = self.ecn;
        }
        self.ecn_end = self.ecn_end.max(self.snd_max);
        if !self.cfg.sack {
            // The `dupthresh` duplicate ACKs were segments that left the network.
            let max = (self.snd_max - self.snd_una).saturating_sub(1);
            self.reno_sacked = self.dupacks.min(max);
        }
        self.dupacks = 0;
        // RFC 6582 step 2 / RFC 6675 section 5 (4.3): retransmit the first unacknowledged segment
        // (with RACK: the first segment RACK marked, which need not be that one).
        if self.rack.is_none() {
            self.mark_lost(self.snd_una);
        }
        self.force_rtx = true;
    }

    /// Marks `seq` lost unless it is SACKed or was already retransmitted.
    #[inline]
    fn mark_lost(&mut self, seq: u32) {
        if seq < self.snd_una || seq >= self.snd_max {
            return;
        }
        let i = (seq - self.snd_una) as usize;
        let f = self.board[i].flags;
        if f & (SACKED | LOST) == 0 {
            let bytes = self.payload(seq);
            if let Some(r) = self.rate.as_deref_mut() {
                r.on_lost(bytes);
            }
            self.set_flags(i, f | LOST, bytes);
            self.rtx_scan = self.rtx_scan.min(seq);
            self.lost_hi = self.lost_hi.max(seq + 1);
        }
    }

    /// RFC 6675 `IsLost`: every un-SACKed segment below `sack_lost_bound` is lost.
    fn mark_sack_losses(&mut self) {
        let end = self.sack_lost_bound.min(self.snd_max);
        let mut seq = self.lost_upto.max(self.snd_una);
        while seq < end {
            seq = self.find_unsacked(seq);
            if seq >= end {
                break;
            }
            self.mark_lost(seq);
            seq += 1;
        }
        self.lost_upto = self.lost_upto.max(end);
    }

    /// The lowest segment that is lost and not yet retransmitted.
    #[inline]
    fn next_lost(&mut self) -> Option<u32> {
        while self.rtx_scan < self.lost_hi {
            let seq = self.rtx_scan;
            let f = self.board[(seq - self.snd_una) as usize].flags;
            if f & (LOST | RETX | SACKED) == LOST {
                return Some(seq);
            }
            self.rtx_scan += 1;
        }
        None
    }

    /// First segment at or above `seq` that is not SACKed (`snd_max` if none), following and
    /// compressing the skip pointers.
    fn find_unsacked(&mut self, start: u32) -> u32 {
        let una = self.snd_una;
        let mut seq = start;
        while seq < self.snd_max {
            let st = self.board[(seq - una) as usize];
            if st.flags & SACKED == 0 {
                break;
            }
            seq = st.skip;
        }
        // Path compression: every SACKed entry on the way now points at the answer.
        let mut s = start;
        while s < seq {
            let e = &mut self.board[(s - una) as usize];
            let next = e.skip;
            e.skip = seq;
            s = next;
        }
        seq.min(self.snd_max)
    }

    /// Applies the SACK blocks of one ACK (RFC 2018); blocks below `snd_una` (D-SACK) or beyond
    /// `snd_max` are clipped.
    fn apply_sack(&mut self, blocks: &[SackBlock], now: Time, ts_echo: Time) {
        let mut new = false;
        let (high_sacked, min_rtt) = (self.high_sacked, self.rtt.min_rtt());
        for b in blocks {
            let end = b.end.min(self.snd_max);
            let mut seq = b.start.max(self.snd_una);
            while seq < end {
                seq = self.find_unsacked(seq);
                if seq >= end {
                    break;
                }
                let i = (seq - self.snd_una) as usize;
                let f = self.board[i].flags;
                let bytes = self.payload(seq);
                if let Some(r) = self.rate.as_deref_mut() {
                    r.on_delivered(i, seq, bytes);
                }
                if let Some(r) = self.rack.as_deref_mut() {
                    let ever = f & EVER_RETX != 0;
                    r.on_delivered(now, seq, self.sent_at[i], ever, seq < high_sacked, ts_echo, min_rtt);
                }
                self.set_flags(i, f | SACKED, bytes);
                self.board[i].skip = seq + 1;
                self.sacked_segs += 1;
                self.high_sacked = self.high_sacked.max(seq + 1);
                new = true;
                seq += 1;
            }
        }
        let need = self.cfg.dupthresh.max(1);
        if new && self.sacked_segs >= need {
            // The `dupthresh`-th highest SACKed segment: every hole below it has at least
            // `dupthresh` SACKed segments above (RFC 6675 section 4, IsLost).
            let mut count = 0;
            let mut seq = self.high_sacked;
            while seq > self.sack_lost_bound {
                seq -= 1;
                if self.board[(seq - self.snd_una) as usize].flags & SACKED != 0 {
                    count += 1;
                    if count == need {
                        self.sack_lost_bound = seq;
                        break;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::newreno::{NewReno, NewRenoConfig};

    const MSS: u32 = 1000;

    fn cfg() -> TransportConfig {
        TransportConfig { mss_bytes: MSS, sack: false, ..TransportConfig::default() }
    }

    fn reno() -> AnyController {
        AnyController::NewReno(NewReno::new(NewRenoConfig { mss_bytes: MSS, ..NewRenoConfig::default() }))
    }

    fn ms(x: u64) -> Time {
        Time(x * 1_000_000)
    }

    fn drain<C: Controller>(s: &mut Sender<C>, now: Time) -> Vec<Packet> {
        std::iter::from_fn(|| s.poll_transmit(now)).collect()
    }

    fn ack_pkt(ack: u32, ts: Time) -> Packet {
        Packet {
            flow: FlowId(1),
            wire_bytes: 40,
            seg: Segment { kind: SegmentKind::Ack, ack, ts_echo: ts, ..Segment::default() },
            ..Packet::default()
        }
    }

    //  t=0   seg 0, seg 1 ─▶        (IW = 2)
    //  t=100 ◀─ ack 1 (ts 0)        RTT 100 ms; slow start: cwnd 3 -> segs 2, 3
    //  t=100 ◀─ ack 2               cwnd 4 -> segs 4, 5
    #[test]
    fn initial_window_and_slow_start() {
        let mut s = Sender::new(FlowId(1), cfg(), reno(), None, Time::ZERO);
        let p = drain(&mut s, Time::ZERO);
        assert_eq!(p.iter().map(|p| p.seg.seq).collect::<Vec<_>>(), vec![0, 1]);
        assert_eq!(p[0].wire_bytes, MSS + 40);
        assert_eq!(p[0].ecn, Ecn::NotEct);
        assert_eq!(s.poll_timeout(), Some(ms(1000))); // initial RTO 1 s
        s.on_packet(ms(100), &ack_pkt(1, Time::ZERO));
        assert_eq!(s.stats().srtt, Dur::from_ms(100));
        assert_eq!(drain(&mut s, ms(100)).len(), 2);
        s.on_packet(ms(100), &ack_pkt(2, Time::ZERO));
        let p = drain(&mut s, ms(100));
        assert_eq!(p.iter().map(|p| p.seg.seq).collect::<Vec<_>>(), vec![4, 5]);
        assert_eq!(s.stats().bytes_in_flight, 4 * MSS as u64);
        // Second sample 100 ms: RTTVAR 37.5 ms, RTO = 100 + 4 * 37.5 = 250 ms.
        assert_eq!(s.poll_timeout(), Some(ms(350)));
    }

    //  Handshake, ECN, 2500-byte flow (segs 0, 1, 2):
    //  t=0    SYN (ECE CWR, Not-ECT, 40 B) ─▶ lost        nothing else may leave
    //  t=1000 SYN again (RTO 1 s) ─▶                      timeout 1, retransmit 1; next RTO 2 s
    //  t=1100 ◀─ SYN-ACK ECE (echoes ts 1000)            RTT 100 ms; segs 0, 1 ECT(0)
    //  t=1200 ◀─ ack 2                                    seg 2 (last) carries FIN
    #[test]
    fn handshake_retransmits_the_syn_then_sends_data_with_fin() {
        let c = TransportConfig { ecn: true, handshake: true, ..cfg() };
        let mut s = Sender::new(FlowId(1), c, reno(), Some(2500), Time::ZERO);
        let p = drain(&mut s, Time::ZERO);
        assert_eq!(p.len(), 1);
        let syn = Flags(Flags::SYN.0 | Flags::ECE.0 | Flags::CWR.0);
        assert_eq!((p[0].seg.flags, p[0].seg.payload_bytes, p[0].wire_bytes, p[0].ecn), (syn, 0, 40, Ecn::NotEct));
        assert!(s.connecting());
        assert_eq!(s.poll_timeout(), Some(ms(1000)));
        s.on_packet(ms(500), &ack_pkt(0, Time::ZERO)); // not a SYN-ACK: ignored
        assert!(drain(&mut s, ms(500)).is_empty());
        s.on_timeout(ms(1000));
        let p = drain(&mut s, ms(1000));
        assert_eq!((p.len(), p[0].seg.flags, p[0].seg.ts_val), (1, syn, ms(1000)));
        assert_eq!((s.stats().timeouts, s.stats().retransmits), (1, 1));
        assert_eq!(s.poll_timeout(), Some(ms(3000)), "backed off to 2 s");
        let mut syn_ack = ack_pkt(0, ms(1000));
        syn_ack.seg.flags = Flags(Flags::SYN.0 | Flags::ECE.0);
        s.on_packet(ms(1100), &syn_ack);
        assert!(!s.connecting());
        assert_eq!(s.stats().srtt, Dur::from_ms(100));
        let p = drain(&mut s, ms(1100));
        assert_eq!(seqs(&p), vec![0, 1]);
        assert!(p.iter().all(|p| p.ecn == Ecn::Ect0 && !p.seg.flags.contains(Flags::FIN)));
        s.on_packet(ms(1150), &syn_ack); // a duplicate SYN-ACK changes nothing
        assert_eq!(s.snd_una(), 0);
        s.on_packet(ms(1200), &ack_pkt(2, ms(1100)));
        let p = drain(&mut s, ms(1200));
        assert_eq!((seqs(&p), p[0].seg.flags), (vec![2], Flags::FIN));
    }

    //  2500-byte flow: segs 0 (1000), 1 (1000), 2 (500). Early and repeated timeouts do
    //  nothing; a real expiry retransmits seg 0 Not-ECT; the last ACK completes the flow.
    #[test]
    fn sized_flow_timeout_and_completion() {
        let c = TransportConfig { ecn: true, ..cfg() };
        let mut s = Sender::new(FlowId(1), c, reno(), Some(2500), Time::ZERO);
        let p = drain(&mut s, Time::ZERO);
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].ecn, Ecn::Ect0);
        s.on_timeout(ms(999));
        s.on_timeout(ms(500));
        assert!(drain(&mut s, ms(999)).is_empty());
        assert_eq!(s.stats().timeouts, 0);
        s.on_timeout(ms(1000));
        let p = drain(&mut s, ms(1000));
        assert_eq!((p.len(), p[0].seg.seq, p[0].ecn), (1, 0, Ecn::NotEct));
        assert_eq!(s.stats().timeouts, 1);
        assert_eq!(s.stats().cwnd_bytes, MSS as u64);
        s.on_timeout(ms(1000)); // repeated: backed-off deadline not reached
        assert_eq!(s.stats().timeouts, 1);
        assert_eq!(s.poll_timeout(), Some(ms(3000))); // 1 s doubled
        s.on_packet(ms(1100), &ack_pkt(2, ms(1000)));
        let p = drain(&mut s, ms(1100));
        assert_eq!(p.iter().map(|p| (p.seg.seq, p.seg.payload_bytes)).collect::<Vec<_>>(), vec![(2, 500)]);
        // CWR rides on the first new data after the timeout reduction.
        assert!(p[0].seg.flags.contains(Flags::CWR));
        assert!(!s.is_complete());
        s.on_packet(ms(1200), &ack_pkt(3, ms(1100)));
        assert!(s.is_complete());
        assert_eq!(s.stats().completed_at, Some(ms(1200)));
        assert_eq!(s.stats().bytes_acked, 2500);
        assert_eq!(s.poll_timeout(), None);
        assert!(drain(&mut s, ms(1200)).is_empty());
    }

    fn seqs(p: &[Packet]) -> Vec<u32> {
        p.iter().map(|p| p.seg.seq).collect()
    }

    //  RFC 6582 with the pipe, SACK off, IW = cwnd = 10 MSS, segments 0 and 5 lost:
    //
    //  t=0  0✗ 1 2 3 4 5✗ 6 7 8 9 ─▶
    //  ◀─ ack 0 x2 (for 1, 2)      nothing
    //  ◀─ ack 0 #3 (for 3)         ssthresh = cwnd = 5 MSS, recover = 10, retransmit 0
    //                              pipe = 10 - 1 lost - 3 dup + 1 rtx = 7 MSS
    //  ◀─ ack 0 #4..#8 (4,6..9)    pipe 6,5,4(+10),4(+11),4(+12): one new segment per dup
    //                              once pipe < cwnd (= RFC 6582's inflated cwnd 5+8 = 13)
    //  ◀─ ack 5 (partial, for 0')  retransmit 5 at once, pipe 4 -> send 13 (RFC 6582:
    //                              cwnd 13 - 5 + 1 = 9 > flight 8)
    //  ◀─ ack 5 x4 (10..13)        one new segment each (14..17)
    //  ◀─ ack 18 (full, for 5')    exit: cwnd = min(ssthresh, pipe + MSS)
    #[test]
    fn newreno_fast_retransmit_partial_and_full_ack() {
        let cc = AnyController::NewReno(NewReno::new(NewRenoConfig {
            mss_bytes: MSS,
            initial_window_segments: 10,
            max_window_bytes: None,
        }));
        let mut s = Sender::new(FlowId(1), cfg(), cc, None, Time::ZERO);
        assert_eq!(seqs(&drain(&mut s, Time::ZERO)), (0..10).collect::<Vec<_>>());
        let t = ms(100);
        let dup = |s: &mut Sender, n: usize| -> Vec<u32> {
            (0..n)
                .flat_map(|_| {
                    s.on_packet(t, &ack_pkt(0, Time::ZERO));
                    seqs(&drain(s, t))
                })
                .collect()
        };
        assert!(dup(&mut s, 2).is_empty());
        assert!(!s.in_recovery());
        assert_eq!(dup(&mut s, 1), vec![0]);
        assert!(s.in_recovery());
        let st = s.stats();
        assert_eq!((st.cwnd_bytes, st.ssthresh_bytes, st.bytes_in_flight), (5000, 5000, 7000));
        assert_eq!((st.fast_recoveries, st.retransmits), (1, 1));
        assert!(dup(&mut s, 2).is_empty());
        assert_eq!(s.bytes_in_flight(), 5000);
        assert_eq!(dup(&mut s, 3), vec![10, 11, 12]);
        assert_eq!(s.bytes_in_flight(), 5000);
        // Partial ACK: retransmit 5 whatever the window, then new data as the pipe allows.
        s.on_packet(ms(120), &ack_pkt(5, t));
        assert_eq!(seqs(&drain(&mut s, ms(120))), vec![5, 13]);
        assert!(s.in_recovery());
        assert_eq!(s.poll_timeout(), Some(ms(120) + s.rtt().rto())); // partial ACK re-arms
        let t2 = ms(130);
        for k in 0..4 {
            s.on_packet(t2, &ack_pkt(5, t));
            assert_eq!(seqs(&drain(&mut s, t2)), vec![14 + k]);
        }
        // The full ACK ends recovery.
        s.on_packet(ms(140), &ack_pkt(18, ms(120)));
        assert!(!s.in_recovery());
        let st = s.stats();
        assert_eq!((st.retransmits, st.timeouts, st.ssthresh_bytes), (2, 0, 5000));
        assert_eq!(st.bytes_in_flight, 0);
        assert_eq!(st.cwnd_bytes, 2000); // min(ssthresh, max(0, MSS) + MSS), no growth on exit
    }

    //  pace_windowed, NewReno, no RTT yet: IW of 2 leaves as a burst.
    //  t=100 ◀─ ack 1 (RTT 100 ms), cwnd 3000 B in slow start:
    //        rate = 2 x 3000 B x 8 / 100 ms = 480 kb/s, gap = 1040 B x 8 / 480 kb/s = 17.333 ms
    //        seg 2 now, seg 3 at t = 117.333 ms
    #[test]
    fn windowed_pacing_uses_cwnd_over_srtt() {
        let c = TransportConfig { pace_windowed: true, ..cfg() };
        let mut s = Sender::new(FlowId(1), c, reno(), None, Time::ZERO);
        assert_eq!(drain(&mut s, Time::ZERO).len(), 2);
        s.on_packet(ms(100), &ack_pkt(1, Time::ZERO));
        let p = drain(&mut s, ms(100));
        assert_eq!(p.iter().map(|p| p.seg.seq).collect::<Vec<_>>(), vec![2]);
        let release = Time(100_000_000 + 17_333_333);
        assert_eq!(s.poll_timeout(), Some(release));
        assert!(drain(&mut s, Time(release.0 - 1)).is_empty());
        s.on_timeout(release);
        assert_eq!(drain(&mut s, release).len(), 1);
    }

    /// A controller with a fixed window and pacing rate (test only).
    #[derive(Debug, Clone)]
    struct Paced;
    impl Controller for Paced {
        fn on_ack(&mut self, _: Time, _: &AckEvent) {}
        fn on_congestion_event(&mut self, _: Time, _: CongestionEvent, _: u64) {}
        fn window_bytes(&self) -> u64 {
            u64::MAX
        }
        fn pacing_rate_bps(&self) -> Option<f64> {
            Some(8_320_000.0) // 1040-byte packets -> one per millisecond
        }
    }

    //  rate 8.32 Mb/s, 1040-byte packets:
    //  t=0 seg 0 │ t=1ms seg 1 │ t=2ms seg 2 ...   (poll_timeout says when the pacer opens)
    #[test]
    fn pacing_spaces_packets_at_the_rate() {
        let mut s = Sender::new(FlowId(1), cfg(), Paced, None, Time::ZERO);
        let mut now = Time::ZERO;
        let mut sent = vec![];
        while sent.len() < 10 {
            let p = drain(&mut s, now);
            assert!(p.len() <= 1, "paced sender sent a burst");
            sent.extend(p.iter().map(|p| (now, p.seg.seq)));
            let t = s.poll_timeout().unwrap();
            // The RTO (1 s) is later than the pacing release.
            assert!(t > now && t <= now + Dur::from_ms(1));
            s.on_timeout(t);
            now = t;
        }
        for (k, &(t, seq)) in sent.iter().enumerate() {
            assert_eq!((t, seq), (ms(k as u64), k as u32));
        }
    }

    /// A driver on a real clock wakes late. Without catch-up every late wake-up is lost rate;
    /// with `pacing_catch_up` the pacer keeps its schedule (several packets may leave at once to
    /// make up a late wake-up, never more than the bound); after the sender ran out of data the
    /// schedule restarts from the next departure, with no burst.
    //
    //  1 ms gaps; the driver wakes 0.4 ms after each release, once 2.5 ms late:
    //  no catch-up:  0   1.4  2.8  4.2 ...           (1.4 ms per packet)
    //  catch-up 3ms: 0   1.4  2.4  3.4  6.9 (x3) ... (one per ms on average)
    #[test]
    fn pacing_catches_up_with_a_late_driver_within_the_bound() {
        let run = |catch_up: Dur| {
            let c = TransportConfig { pacing_catch_up: catch_up, ..cfg() };
            let mut s = Sender::new(FlowId(1), c, Paced, None, Time::ZERO);
            let mut now = Time::ZERO;
            let mut sent = vec![];
            for k in 0..12 {
                sent.extend(drain(&mut s, now).iter().map(|_| now));
                let late = if k == 4 { Dur::from_us(2500) } else { Dur::from_us(400) };
                now = s.poll_timeout().unwrap() + late;
                s.on_timeout(now);
            }
            sent
        };
        let plain = run(Dur::ZERO);
        assert_eq!(plain.len(), 12, "one per wake-up");
        assert_eq!(plain[3], Time::ZERO + Dur::from_us(4200), "each gap counts from the late wake-up");
        let caught = run(Dur::from_ms(3));
        // 12 wake-ups over about 11 x 1 ms + lateness: the schedule was kept, so about one packet
        // per millisecond of the 14.3 ms run left.
        let span = caught.last().unwrap().as_secs_f64();
        assert!(caught.len() as f64 >= span * 1e3 - 1.0, "{} packets in {span} s", caught.len());
        let most_at_once = caught.chunk_by(|a, b| a == b).map(|c| c.len()).max().unwrap();
        assert!((2..=4).contains(&most_at_once), "a late wake-up makes up at most 3 ms: {most_at_once}");
    }

    /// Catch-up only makes up a driver's lateness: a sender the window stopped restarts its
    /// schedule from the next departure, with no burst, whatever the bound.
    //
    //  window 2 segments, 1 ms gaps, catch-up 3 ms:
    //  t=0 seg 0 │ t=1ms seg 1 │ (window full) │ t=10ms ACK 2 → seg 2 only; seg 3 at 11 ms
    #[test]
    fn pacing_catch_up_does_not_burst_after_the_window_held_the_sender() {
        struct TwoSegments;
        impl Controller for TwoSegments {
            fn on_ack(&mut self, _: Time, _: &AckEvent) {}
            fn on_congestion_event(&mut self, _: Time, _: CongestionEvent, _: u64) {}
            fn window_bytes(&self) -> u64 {
                2 * MSS as u64
            }
            fn pacing_rate_bps(&self) -> Option<f64> {
                Some(8_320_000.0)
            }
        }
        let c = TransportConfig { pacing_catch_up: Dur::from_ms(3), ..cfg() };
        let mut s = Sender::new(FlowId(1), c, TwoSegments, None, Time::ZERO);
        assert_eq!(drain(&mut s, Time::ZERO).len(), 1);
        assert_eq!(drain(&mut s, ms(1)).len(), 1);
        assert_eq!(drain(&mut s, ms(2)).len(), 0, "window full");
        s.on_packet(ms(10), &ack_pkt(2, ms(1)));
        assert_eq!(drain(&mut s, ms(10)).len(), 1, "no burst after the window held the sender");
        assert_eq!(s.poll_timeout(), Some(ms(11)));
    }

    /// On a real clock a rate-based flow keeps its pacing schedule although its rate changes on
    /// almost every ACK: re-timing counts from the last packet's slot, not from its late
    /// departure (which would lose each wake-up's lateness).
    //
    //  R = 1 MB/s, 1050 B packets: 1.05 ms gaps. The driver wakes 0.3 ms late every time and
    //  finds an ACK whose rate differs from the last by 1 B/s. Kept: one packet per 1.05 ms.
    //  Lost: one per 1.35 ms.
    #[test]
    fn retiming_keeps_the_schedule_of_a_late_driver() {
        use crate::algorithms::rcp::RcpHeader;
        use crate::algorithms::rcp::{Rcp, RcpConfig};
        let c = TransportConfig { pacing_catch_up: Dur::from_ms(1), ..cfg() };
        let rcp = Rcp::new(RcpConfig { mss_bytes: MSS, packet_bytes: 1050, ..RcpConfig::default() });
        let mut s = Sender::new(FlowId(1), c, rcp, None, Time::ZERO);
        assert_eq!(drain(&mut s, Time::ZERO).len(), 1);
        let (start, mut now, mut sent) = (ms(10), ms(10), 0);
        for k in 0..200 {
            let mut a = ack_pkt(s.snd_max(), Time::ZERO);
            a.cc = CongestionHeader::Rcp(RcpHeader { rate: 1e6 + (k % 2) as f32, rtt_us: 0 });
            s.on_packet(now, &a);
            sent += drain(&mut s, now).len();
            now = s.poll_timeout().unwrap() + Dur::from_us(300);
            s.on_timeout(now);
        }
        let per_packet_ms = (now - start).as_secs_f64() * 1e3 / sent as f64;
        assert!((1.04..1.1).contains(&per_packet_ms), "{per_packet_ms} ms per packet");
    }

    /// A rate-based controller (RCP): one packet until the first rate; a slow rate (gap above
    /// min_rtt) brings a probe, outside the sequence space; a faster rate on the probe's answer
    /// re-times the next departure from the last one, so it leaves at once instead of after the
    /// old 1.5 s gap.
    #[test]
    fn rate_based_sender_probes_and_retimes() {
        use crate::algorithms::rcp::RcpHeader;
        use crate::algorithms::rcp::{Rcp, RcpConfig};
        let rcp = Rcp::new(RcpConfig { mss_bytes: MSS, packet_bytes: 1050, ..RcpConfig::default() });
        let mut s = Sender::new(FlowId(1), cfg(), rcp, None, Time::ZERO);
        let first = drain(&mut s, Time::ZERO);
        assert_eq!(first.len(), 1, "one packet before any rate");
        let rate = |r: f32| CongestionHeader::Rcp(RcpHeader { rate: r, rtt_us: 0 });
        // ACK at 10 ms with R = 700 B/s: 1050 B every 1.5 s, slower than one per RTT.
        let mut a = ack_pkt(1, Time::ZERO);
        a.cc = rate(700.0);
        s.on_packet(ms(10), &a);
        let p = drain(&mut s, ms(10));
        assert_eq!(p.len(), 2, "{p:?}");
        assert!(p[0].seg.flags.contains(Flags::PROBE) && p[0].seg.payload_bytes == 0);
        assert_eq!((p[1].seg.seq, p[1].seg.flags.contains(Flags::PROBE)), (1, false));
        assert_eq!(s.snd_max(), 2, "the probe takes no sequence number");
        // The next probe is due one min_rtt (10 ms) later; data only after 1.5 s.
        assert_eq!(s.poll_timeout(), Some(ms(20)));
        assert!(drain(&mut s, ms(15)).is_empty());
        // The probe's answer at 20 ms says 1 MB/s: the next data packet is due at
        // 10 ms + 1.05 ms, already past, so it leaves now.
        let mut pa = ack_pkt(1, ms(10));
        pa.seg.flags = Flags::PROBE;
        pa.cc = rate(1e6);
        s.on_packet(ms(20), &pa);
        let p = drain(&mut s, ms(20));
        assert_eq!(p.len(), 1);
        assert_eq!((p[0].seg.seq, p[0].seg.payload_bytes), (2, MSS));
        assert_eq!(s.snd_una(), 1, "a probe answer acknowledges nothing");
    }

    /// Fuzzer seed 27: a rate-based flow stopped with everything acknowledged has a probe due
    /// that it may not send; its next wake-up must not be that (past) time, or the driver
    /// wakes it at the same instant forever.
    #[test]
    fn a_stopped_rate_based_flow_asks_for_no_probe_wake_up() {
        use crate::algorithms::rcp::RcpHeader;
        use crate::algorithms::rcp::{Rcp, RcpConfig};
        let rcp = Rcp::new(RcpConfig { mss_bytes: MSS, packet_bytes: 1050, ..RcpConfig::default() });
        let mut s = Sender::new(FlowId(1), cfg(), rcp, None, Time::ZERO);
        assert_eq!(drain(&mut s, Time::ZERO).len(), 1);
        let mut a = ack_pkt(1, Time::ZERO);
        a.cc = CongestionHeader::Rcp(RcpHeader { rate: 700.0, rtt_us: 0 });
        s.stop();
        s.on_packet(ms(10), &a);
        assert!(drain(&mut s, ms(10)).is_empty(), "stopped, all acknowledged: nothing to send");
        assert!(s.controller().probe_due().is_some_and(|t| t <= ms(30)));
        assert!(drain(&mut s, ms(30)).is_empty());
        assert!(s.poll_timeout().is_none_or(|t| t > ms(30)), "{:?}", s.poll_timeout());
    }

    /// A window that drops from 20 segments to 2 at the first loss (MaxNet's window after a
    /// price spike; test only).
    #[derive(Debug, Clone)]
    struct Collapsing {
        segments: u64,
    }
    impl Controller for Collapsing {
        fn on_ack(&mut self, _: Time, _: &AckEvent) {}
        fn on_congestion_event(&mut self, _: Time, _: CongestionEvent, _: u64) {
            self.segments = 2;
        }
        fn window_bytes(&self) -> u64 {
            self.segments * MSS as u64
        }
    }

    fn sack_ack(ack: u32, ts: Time, block: Option<(u32, u32)>) -> Packet {
        let mut p = ack_pkt(ack, ts);
        if let Some((start, end)) = block {
            p.seg.sack[0] = SackBlock { start, end };
            p.seg.sack_len = 1;
        }
        p
    }

    //  t=0    segments 0..19 leave; 0 and 4..19 are lost, 1..3 arrive
    //  t=100  dup ACKs with SACK 1..3: recovery, the window drops to 2, 0 is resent
    //  t=200  ACK 4 (partial): 4 resent; RTO 300 ms, 5 was sent 200 ms ago: still in flight
    //  t=300  ACK 5 (partial): RTO 250 ms, 5..19 were sent 300 ms ago: lost, so 5 and 6 leave
    //         (without the marking only 5 would, and 14 lost segments would stay "in flight",
    //         one repaired per RTT, while every partial ACK restarts the RTO)
    #[test]
    fn sack_recovery_marks_segments_sent_more_than_an_rto_ago_lost() {
        let cfg =
            TransportConfig { mss_bytes: MSS, sack: true, min_rto: Dur::from_ms(10), ..TransportConfig::default() };
        let mut s = Sender::new(FlowId(1), cfg, Collapsing { segments: 20 }, None, Time::ZERO);
        assert_eq!(seqs(&drain(&mut s, Time::ZERO)), (0..20).collect::<Vec<_>>());
        for end in 2..=4 {
            s.on_packet(ms(100), &sack_ack(0, Time::ZERO, Some((1, end))));
        }
        assert!(s.in_recovery());
        assert_eq!(seqs(&drain(&mut s, ms(100))), vec![0]);
        s.on_packet(ms(200), &sack_ack(4, ms(100), None));
        assert_eq!(seqs(&drain(&mut s, ms(200))), vec![4]);
        assert_eq!(s.stats().timed_out_marks, 0, "5..19 were sent 200 ms ago, within the 300 ms RTO");
        s.on_packet(ms(300), &sack_ack(5, ms(200), None));
        assert_eq!(s.stats().timed_out_marks, 14, "6..19 (5 is marked by the partial ACK)");
        assert_eq!(seqs(&drain(&mut s, ms(300))), vec![5, 6]);
        assert_eq!(s.bytes_in_flight(), 2 * MSS as u64);
    }

    //  Timer check (RFC 6298 section 5): segs 0, 1 leave at t=0 with the initial RTO of 1 s.
    //  A driver that calls on_timeout at 1000 ms sees no overdue period; one that skips it
    //  sees one, counted by the next ACK of new data, or by stats_at for a period still open.
    #[test]
    fn the_timer_check_counts_a_retransmission_timer_that_did_not_fire() {
        // Driven correctly: the expiry at 1000 ms ends the first period, the ACK the second.
        let mut s = Sender::new(FlowId(1), cfg(), reno(), None, Time::ZERO);
        drain(&mut s, Time::ZERO);
        s.on_timeout(ms(1000));
        drain(&mut s, ms(1000));
        assert_eq!(s.stats().timeouts, 1);
        s.on_packet(ms(1100), &ack_pkt(1, ms(1000)));
        assert_eq!(s.stats_at(ms(1100)).rto_overdue, 0);

        // The driver forgets the timer: the ACK at 1500 ms ends a period that passed its RTO.
        let mut s = Sender::new(FlowId(1), cfg(), reno(), None, Time::ZERO);
        drain(&mut s, Time::ZERO);
        s.on_packet(ms(1500), &ack_pkt(1, Time::ZERO));
        assert_eq!((s.stats().timeouts, s.stats().rto_overdue), (0, 1));

        // Still open at the end: late by more than the clock granularity (1 ms) only counts.
        let mut s = Sender::new(FlowId(1), cfg(), reno(), None, Time::ZERO);
        drain(&mut s, Time::ZERO);
        assert_eq!(s.stats_at(Time(1_001_000_000)).rto_overdue, 0);
        assert_eq!(s.stats_at(Time(1_001_000_001)).rto_overdue, 1);
        assert_eq!(s.stats().rto_overdue, 0);

        // Nothing outstanding, nothing due: an idle flow is never overdue.
        let mut s = Sender::new(FlowId(1), cfg(), reno(), Some(1000), Time::ZERO);
        drain(&mut s, Time::ZERO);
        s.on_packet(ms(100), &ack_pkt(1, Time::ZERO));
        assert!(s.is_complete());
        assert_eq!(s.stats_at(ms(60_000)).rto_overdue, 0);
    }

    //  A duplicate ACK must not postpone the timer: if it did (a restart on every ACK instead
    //  of every ACK of new data, RFC 6298 section 5.3), a flow whose ACKs keep coming without
    //  progress would never time out. The check sees the difference.
    #[test]
    fn duplicate_acks_do_not_postpone_the_timer_and_the_check_agrees() {
        let mut s = Sender::new(FlowId(1), cfg(), reno(), None, Time::ZERO);
        drain(&mut s, Time::ZERO);
        s.on_packet(ms(100), &ack_pkt(1, Time::ZERO)); // RTO now 300 ms: due at 400 ms
        drain(&mut s, ms(100));
        for t in [200, 300, 390] {
            s.on_packet(ms(t), &ack_pkt(1, Time::ZERO)); // duplicates (no fast retransmit: < 3)
        }
        assert_eq!(s.poll_timeout(), Some(ms(400)));
        s.on_timeout(ms(400));
        assert_eq!((s.stats().timeouts, s.stats_at(ms(400)).rto_overdue), (1, 0));
    }

    /// A controller that asks for an unbounded window gets TCP's largest (2^30 bytes), or
    /// 2^20 segments with a tiny MSS: the scoreboard cannot grow without bound (issue #35's
    /// 8 GiB allocation).
    #[test]
    fn the_window_is_capped_in_bytes_and_in_segments() {
        #[derive(Debug, Clone)]
        struct Unbounded;
        impl Controller for Unbounded {
            fn on_ack(&mut self, _: Time, _: &AckEvent) {}
            fn on_congestion_event(&mut self, _: Time, _: CongestionEvent, _: u64) {}
            fn window_bytes(&self) -> u64 {
                u64::MAX
            }
        }
        for (mss, want) in [(1460u32, MAX_WINDOW_BYTES / 1460), (100, MAX_WINDOW_SEGMENTS)] {
            let cfg = TransportConfig { mss_bytes: mss, ..TransportConfig::default() };
            let mut s = Sender::new(FlowId(1), cfg, Unbounded, None, Time::ZERO);
            let mut sent = 0u64;
            while s.poll_transmit(Time::ZERO).is_some() {
                sent += 1;
            }
            assert_eq!(sent, want, "mss {mss}");
            assert_eq!(s.stats().window_capped, 1);
        }
    }
}
