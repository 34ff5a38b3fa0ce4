//! DCTCP's sender and receiver (RFC 8257 section 3, Linux `tcp_dctcp.c`), on the shared
//! transport.
//!
//! ```text
//! per ACK:            BytesAcked += acked;  if ECE: BytesMarked += acked
//! if SND.UNA ≥ WindowEnd (one window of data acknowledged):
//!                     F = BytesMarked / BytesAcked;  alpha = (1 − g)·alpha + g·F
//!                     WindowEnd = SND.NXT;  BytesAcked = BytesMarked = 0
//! on the transport's ECN reaction (ECE, at most once per window of data, RFC 3168 6.1.2):
//!                     cwnd = max(cwnd·(1 − alpha/2), 2·MSS);  ssthresh = cwnd
//! otherwise, outside CWR and recovery: Reno's slow start and congestion avoidance
//! ```
//!
//! The transport tells the controller of the cut ([`CongestionEvent::Ecn`]) before the ACK's
//! bookkeeping ([`Controller::on_ack`]); the cut is applied in `on_ack`, after alpha has taken
//! this ACK into account (RFC 8257's order; Linux updates alpha in `in_ack_event` before the
//! stack enters CWR). The window does not grow while a cut is being absorbed (the transport's
//! CWR state, Linux's too). Linux counts alpha in 1/1024 units and, since 5.1, in packets
//! (`delivered_ce/delivered`); this follows RFC 8257 in bytes and in floating point. On loss,
//! half the window (Linux `dctcp_react_to_loss`); on a timeout, one segment.
//!
//! The receiver ([`DctcpEcho`]) copies no header; it asks the transport to echo each segment's
//! CE state (RFC 8257 section 3.2, the transport's per-packet echo) instead of RFC 3168's latch.
//! Both ends turn ECN on whatever the flow's transport says (Linux's `TCP_CONG_NEEDS_ECN`).

use super::DctcpParams;
use crate::host::{AckEvent, CongestionEvent, Controller, Echoer};
use crate::time::Time;
use crate::wire::CongestionHeader;

/// A DCTCP sender; windows in bytes.
#[derive(Clone, Debug)]
pub struct Dctcp {
    g: f64,
    mss: f64,
    alpha: f64,
    cwnd: f64,
    ssthresh: f64,
    /// Payload bytes cumulatively acknowledged (SND.UNA counted from the flow's first byte).
    snd_una: u64,
    window_end: u64,
    bytes_acked: u64,
    bytes_marked: u64,
    /// The transport's once-per-window ECN reaction came with this ACK; `on_ack` applies it.
    cut_pending: bool,
    windows: u64,
}

impl Dctcp {
    /// A sender with segments of `mss_bytes` (`params` checked by the caller: the scenario
    /// layer resolves them through [`DctcpParams::check`]). WindowEnd starts at SND.NXT = 0, so
    /// the first ACK closes the first observation window (RFC 8257 section 3.3; Linux
    /// `dctcp_reset` at connection start).
    pub fn new(params: DctcpParams, mss_bytes: u32) -> Dctcp {
        let mss = mss_bytes.max(1) as f64;
        Dctcp {
            g: params.g,
            mss,
            alpha: params.initial_alpha,
            cwnd: params.initial_window.max(1) as f64 * mss,
            ssthresh: f64::INFINITY,
            snd_una: 0,
            window_end: 0,
            bytes_acked: 0,
            bytes_marked: 0,
            cut_pending: false,
            windows: 0,
        }
    }

    /// alpha, the estimated fraction of marked bytes.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// Observation windows ended so far (each one updated alpha).
    pub fn windows(&self) -> u64 {
        self.windows
    }

    /// The end of an observation window: alpha takes its marked fraction.
    fn end_window(&mut self, snd_nxt: u64) {
        if self.bytes_acked > 0 {
            let f = self.bytes_marked as f64 / self.bytes_acked as f64;
            self.alpha = (1.0 - self.g) * self.alpha + self.g * f;
            self.windows += 1;
        }
        self.window_end = snd_nxt;
        self.bytes_acked = 0;
        self.bytes_marked = 0;
    }
}

impl Controller for Dctcp {
    fn on_ack(&mut self, _now: Time, ack: &AckEvent) {
        let acked = ack.newly_acked_bytes;
        self.snd_una += acked;
        self.bytes_acked += acked;
        if ack.ece {
            self.bytes_marked += acked;
        }
        if self.snd_una >= self.window_end {
            self.end_window(self.snd_una + ack.flight_bytes);
        }
        if self.cut_pending {
            self.cut_pending = false;
            self.cwnd = (self.cwnd * (1.0 - self.alpha / 2.0)).max(2.0 * self.mss);
            self.ssthresh = self.cwnd;
            return;
        }
        if ack.in_recovery || acked == 0 {
            return;
        }
        if self.cwnd < self.ssthresh {
            self.cwnd += (acked as f64).min(self.mss);
        } else {
            self.cwnd += self.mss * acked as f64 / self.cwnd;
        }
    }

    fn on_congestion_event(&mut self, _now: Time, event: CongestionEvent, flight_size: u64) {
        match event {
            CongestionEvent::Ecn => self.cut_pending = true,
            CongestionEvent::Loss => {
                self.cut_pending = false;
                self.ssthresh = ((flight_size as f64).min(self.cwnd) / 2.0).max(2.0 * self.mss);
                self.cwnd = self.ssthresh;
            }
            CongestionEvent::Timeout => {
                self.cut_pending = false;
                if self.cwnd > self.mss {
                    self.ssthresh = ((flight_size as f64).min(self.cwnd) / 2.0).max(2.0 * self.mss);
                }
                self.cwnd = self.mss;
            }
        }
    }

    fn on_recovery_exit(&mut self, _now: Time, flight_size: u64) {
        // RFC 6582 section 3.2 step 3, option (1), as NewReno.
        self.cwnd = self.ssthresh.min((flight_size as f64).max(self.mss) + self.mss).max(self.mss);
    }

    fn window_bytes(&self) -> u64 {
        self.cwnd as u64
    }

    fn ssthresh_bytes(&self) -> u64 {
        if self.ssthresh.is_finite() {
            self.ssthresh as u64
        } else {
            u64::MAX
        }
    }

    fn needs_ecn(&self) -> bool {
        true
    }
}

/// DCTCP's receiver: the plain echo of the congestion header, with ECN-Echo per packet
/// (RFC 8257 section 3.2) asked of the transport.
#[derive(Clone, Debug, Default)]
pub struct DctcpEcho {
    last: CongestionHeader,
}

impl Echoer for DctcpEcho {
    fn on_data(&mut self, _now: Time, hdr: &CongestionHeader) {
        self.last = *hdr;
    }

    fn echo(&mut self, _now: Time) -> CongestionHeader {
        self.last
    }

    fn echoes_ce_per_packet(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::dctcp::{DctcpMarker, QueueUnit};
    use crate::harness::{LinkConfig, Pair, PairConfig};
    use crate::host::{AnyController, AnyEchoer, PlainEcho};
    use crate::link::{LinkAlgorithm, QueueView, Verdict};
    use crate::packet::{FlowId, Packet};
    use crate::time::Dur;
    use crate::transport::{DelayedAck, Receiver, TransportConfig};
    use crate::wire::{Ecn, Flags, Segment, SegmentKind};

    const MSS: u64 = 1000;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    fn ack(acked: u64, ece: bool, flight: u64) -> AckEvent {
        AckEvent { newly_acked_bytes: acked, ece, flight_bytes: flight, ..AckEvent::default() }
    }

    /// A sender whose first window ends at `first_end` (an ACK of nothing sets WindowEnd).
    fn sender(params: DctcpParams, first_end: u64) -> Dctcp {
        let mut s = Dctcp::new(params, MSS as u32);
        s.on_ack(Time::ZERO, &ack(0, false, first_end));
        assert_eq!((s.windows(), s.window_end), (0, first_end));
        s
    }

    /// Acknowledges one window of ten 1000-byte packets starting at `from`, the last `marked`
    /// of them with ECE; SND.NXT stays at `from` + 20 packets.
    fn window(s: &mut Dctcp, from: u64, marked: u64) {
        for i in 1..=10 {
            let una = from + i * MSS;
            s.on_ack(Time::ZERO, &ack(MSS, i > 10 - marked, from + 20 * MSS - una));
        }
    }

    // g = 1/16, alpha starts at 1; windows of 10 packets with 0, 5, 10, 0 marked:
    //   window  F     alpha
    //   1       0     15/16·1                      = 0.9375
    //   2       0.5   15/16·0.9375 + 1/16·0.5      = 0.91015625
    //   3       1     15/16·0.91015625 + 1/16      = 0.915771484375
    //   4       0     15/16·0.915771484375         = 0.8585357666015625
    // (binary fractions: exact in f64.)
    #[test]
    fn alpha_over_windows() {
        let mut s = sender(DctcpParams::default(), 10 * MSS);
        let want = [0.9375, 0.91015625, 0.915771484375, 0.8585357666015625];
        for (w, (marked, alpha)) in [0, 5, 10, 0].into_iter().zip(want).enumerate() {
            window(&mut s, w as u64 * 10 * MSS, marked);
            assert_eq!(s.windows(), w as u64 + 1);
            assert_eq!(s.alpha(), alpha, "window {}", w + 1);
        }
    }

    // IW = 10 packets, window 1 unmarked: slow start to cwnd = 20,000, alpha = 0.9375.
    // Window 2 = bytes 10,000..30,000 (SND.NXT was 30,000 when window 1 ended):
    //   ack 11 (ECE, the transport's ECN reaction): cwnd = 20,000·(1 − 0.9375/2) = 10,625 = ssthresh
    //   acks 12..29: in CWR (the transport says in_recovery): no growth; ack 12 ECE, no second cut
    //   ack 30 (ECE, a new window's reaction, SND.UNA = 30,000): window 2 ends first:
    //                F = 3,000/20,000 = 0.15, alpha = 15/16·0.9375 + 1/16·0.15 = 0.88828125;
    //                then the cut with the new alpha: cwnd = 10,625·(1 − 0.88828125/2) = 5,906.005859375
    #[test]
    fn cut_by_alpha_half_after_alpha_takes_the_ack() {
        let mut s = sender(DctcpParams::default(), 10 * MSS);
        for i in 1..=10 {
            s.on_ack(Time::ZERO, &ack(MSS, false, 10 * MSS + i * MSS));
        }
        assert_eq!((s.window_bytes(), s.alpha(), s.window_end), (20_000, 0.9375, 30_000));
        let cwr = |i: u64, ece: bool| AckEvent { in_recovery: true, ..ack(MSS, ece, 40_000 - i * MSS) };
        s.on_congestion_event(Time::ZERO, CongestionEvent::Ecn, 20_000);
        s.on_ack(Time::ZERO, &ack(MSS, true, 19_000));
        assert_eq!((s.window_bytes(), s.ssthresh_bytes()), (10_625, 10_625));
        s.on_ack(Time::ZERO, &cwr(12, true));
        for i in 13..=29 {
            s.on_ack(Time::ZERO, &cwr(i, false));
        }
        assert_eq!(s.window_bytes(), 10_625, "no second cut and no growth in CWR");
        s.on_congestion_event(Time::ZERO, CongestionEvent::Ecn, 10_000);
        s.on_ack(Time::ZERO, &ack(MSS, true, 10_000));
        assert!(close(s.alpha(), 0.88828125));
        assert!(close(s.cwnd, 5_906.005_859_375));
        assert_eq!(s.windows(), 2);
    }

    // Above ssthresh the window grows by about one MSS per window: 10,000 + 1000·1000/10,000 =
    // 10,100. A cut never goes below 2 MSS. Loss halves min(FlightSize, cwnd); a timeout leaves
    // one segment; ECN is asked of the transport.
    #[test]
    fn congestion_avoidance_floor_loss_and_timeout() {
        let mut s = sender(DctcpParams { initial_window: 2, ..Default::default() }, u64::MAX);
        s.on_congestion_event(Time::ZERO, CongestionEvent::Ecn, 2 * MSS);
        s.on_ack(Time::ZERO, &ack(MSS, true, MSS));
        assert_eq!(s.window_bytes(), 2_000, "alpha 1: 2,000·(1 − 1/2) is below 2 MSS, held at 2 MSS");
        let mut s = sender(DctcpParams::default(), u64::MAX);
        s.ssthresh = 5_000.0;
        s.on_ack(Time::ZERO, &ack(MSS, false, 10 * MSS));
        assert_eq!(s.window_bytes(), 10_100);
        s.on_congestion_event(Time::ZERO, CongestionEvent::Loss, 30_000);
        assert_eq!((s.window_bytes(), s.ssthresh_bytes()), (5_050, 5_050));
        s.on_congestion_event(Time::ZERO, CongestionEvent::Timeout, 5_050);
        assert_eq!((s.window_bytes(), s.ssthresh_bytes()), (1_000, 2_525));
        assert!(s.needs_ecn() && DctcpEcho::default().echoes_ce_per_packet());
    }

    fn data(seq: u32, ce: bool) -> Packet {
        Packet {
            flow: FlowId(1),
            wire_bytes: MSS as u32 + 40,
            ecn: if ce { Ecn::Ce } else { Ecn::Ect0 },
            seg: Segment { kind: SegmentKind::Data, seq, payload_bytes: MSS as u32, ..Segment::default() },
            cc: CongestionHeader::None,
        }
    }

    /// (ACK number, ECE) of every ACK the receiver sends after each of `marks` in turn, and
    /// after `late` (the delayed-ACK timer).
    fn acks(mut r: Receiver, marks: &[bool], late: Time) -> Vec<Vec<(u32, bool)>> {
        let mut out = Vec::new();
        for (seq, &ce) in marks.iter().enumerate() {
            let now = Time::ZERO + Dur::from_us(seq as u64);
            r.on_packet(now, &data(seq as u32, ce));
            let sent = std::iter::from_fn(|| r.poll_transmit(now));
            out.push(sent.map(|p| (p.seg.ack, p.seg.flags.contains(Flags::ECE))).collect());
        }
        r.on_timeout(late);
        out.push(std::iter::from_fn(|| r.poll_transmit(late)).map(|p| (p.seg.ack, p.seg.flags.contains(Flags::ECE))).collect());
        out
    }

    // RFC 8257 section 3.2. One ACK per segment: each ACK echoes its own segment's CE, where
    // RFC 3168's receiver latches ECE until a CWR arrives (no CWR comes here).
    // Delayed ACKs (every second segment), CE marks 0 1 1 1 0 0:
    //   seg 0 (no CE)  delayed
    //   seg 1 (CE)     state change: ACK 1 with the old state (no ECE), then ACK 2 with ECE at once
    //   seg 2 (CE)     delayed;   seg 3 (CE): second segment, ACK 4 with ECE
    //   seg 4 (no CE)  state change, nothing delayed: ACK 5 without ECE at once
    //   seg 5 (no CE)  delayed until the timer: ACK 6 without ECE
    #[test]
    fn receiver_echoes_ce_per_packet() {
        let cfg = TransportConfig { mss_bytes: MSS as u32, ..TransportConfig::default() };
        let per_packet = Receiver::new(FlowId(1), cfg, AnyEchoer::Dctcp(DctcpEcho::default()));
        let latched = Receiver::new(FlowId(1), cfg, AnyEchoer::Plain(PlainEcho::default()));
        let marks = [false, true, true, false, false];
        let late = Time::ZERO + Dur::from_ms(1);
        let one = |a: u32, e: bool| vec![(a, e)];
        let want = vec![one(1, false), one(2, true), one(3, true), one(4, false), one(5, false), vec![]];
        assert_eq!(acks(per_packet, &marks, late), want);
        let want = vec![one(1, false), one(2, true), one(3, true), one(4, true), one(5, true), vec![]];
        assert_eq!(acks(latched, &marks, late), want);

        let delayed = DelayedAck { every_segments: 2, max_delay: Dur::from_us(100), quick_acks: 0 };
        let cfg = TransportConfig { delayed_ack: Some(delayed), ..cfg };
        let r = Receiver::new(FlowId(1), cfg, AnyEchoer::Dctcp(DctcpEcho::default()));
        let want =
            vec![vec![], vec![(1, false), (2, true)], vec![], one(4, true), one(5, false), vec![], one(6, false)];
        assert_eq!(acks(r, &[false, true, true, true, false, false], late), want);
    }

    /// DCTCP's marker, recording the queue (packets) each ECN-capable arrival found and its
    /// verdict once `from` has passed.
    #[derive(Debug)]
    struct Recorded {
        marker: DctcpMarker,
        from: Time,
        queues: Vec<u32>,
        marks: u64,
    }

    impl LinkAlgorithm for Recorded {
        fn on_enqueue(&mut self, now: Time, pkt: &mut Packet, queue: &mut dyn QueueView) -> Verdict {
            let q = queue.backlog_packets();
            let v = self.marker.on_enqueue(now, pkt, queue);
            if now >= self.from && pkt.ecn.is_ect() {
                self.queues.push(q);
                self.marks += (v == Verdict::Mark) as u64;
            }
            v
        }
    }

    // The paper's claims (section 3.3, N synchronised flows, one ACK per packet) for one long
    // flow, C = 1 Gbit/s, RTT = 100 us (C·RTT = 8.33 packets of 1,500 B), K = 20 packets:
    //   W* = C·RTT + K = 28.33 packets; the marked fraction alpha ≈ sqrt(2/W*) = 0.266;
    //   the queue peaks at Qmax = K + N = 21 packets and swings by A = ½·sqrt(2N(C·RTT + K))
    //   = 3.76 packets, so Qmin = 17.2 > 0: K = 20 is above the C·RTT/7 = 1.2 packets rule and
    //   the link never idles.
    // Measured over 0.2..1 s (2,731 windows): every arrival found 18 to 21 packets, mean 19.48
    // against the sawtooth's (Qmax + Qmin)/2 = 19.12; marked fraction 0.2458 against 0.266;
    // alpha averaged over windows 0.2465; goodput 100 % of the line; no drop. Asserted with
    // tolerances: the queue within [Qmin − 1, Qmax + 1] = [16.2, 22], its mean within 1 packet
    // of (Qmax + Qmin)/2, goodput at least 99 % of the line, the marked fraction within 15 % of
    // sqrt(2/W*) (the analysis approximates the sawtooth), alpha within 5 % of the fraction the
    // switch marked, no drop.
    #[test]
    fn one_flow_holds_the_queue_near_k_and_alpha_tracks_the_marking() {
        let (rate, k) = (1_000_000_000u64, 20u64);
        let cfg = PairConfig {
            transport: TransportConfig { mss_bytes: 1460, ..TransportConfig::default() },
            link: LinkConfig { rate_bps: rate, delay: Dur::from_us(50), buffer_packets: 1000 },
            return_delay: Dur::ZERO,
            trace: false,
            ..PairConfig::default()
        };
        let from = Time::ZERO + Dur::from_ms(200);
        let alg = Recorded { marker: DctcpMarker::new(k, QueueUnit::Packets), from, queues: Vec::new(), marks: 0 };
        let cc = AnyController::Dctcp(Dctcp::new(DctcpParams::default(), 1460));
        let mut p = Pair::with_echoer(cfg, cc, alg, AnyEchoer::Dctcp(DctcpEcho::default()));
        p.drive_until(from);
        let delivered_at_from = p.delivered_bytes();
        let (mut alphas, mut windows) = (Vec::new(), 0);
        let end = Time::ZERO + Dur::from_ms(1000);
        while p.now() < end && p.step() {
            let AnyController::Dctcp(s) = p.sender().controller() else { unreachable!() };
            if s.windows() != windows {
                windows = s.windows();
                alphas.push(s.alpha());
            }
        }
        let rec = p.link_algorithm();
        let (lo, hi) = (*rec.queues.iter().min().unwrap(), *rec.queues.iter().max().unwrap());
        let mean_q = rec.queues.iter().map(|&q| q as f64).sum::<f64>() / rec.queues.len() as f64;
        let marked = rec.marks as f64 / rec.queues.len() as f64;
        let mean_alpha = alphas.iter().sum::<f64>() / alphas.len() as f64;
        let goodput = (p.delivered_bytes() - delivered_at_from) as f64 * 8.0 / 0.8;
        let line = rate as f64 * 1460.0 / 1500.0;
        let w_star = 12_500.0 / 1500.0 + k as f64;
        let amplitude = 0.5 * (2.0 * w_star).sqrt();
        eprintln!(
            "queue {lo}..{hi} mean {mean_q:.2}, marked {marked:.4} (sqrt(2/W*) {:.4}), mean alpha {mean_alpha:.4} \
             over {} windows, goodput {:.4} of the line, {} drops",
            (2.0 / w_star).sqrt(),
            alphas.len(),
            goodput / line,
            p.link_stats().dropped_full,
        );
        let (q_max, q_min) = (k as f64 + 1.0, k as f64 + 1.0 - amplitude);
        assert!(lo as f64 >= q_min - 1.0 && hi as f64 <= q_max + 1.0, "queue {lo}..{hi}");
        assert!((mean_q - (q_max + q_min) / 2.0).abs() <= 1.0, "mean queue {mean_q}");
        assert!(goodput >= 0.99 * line, "goodput {goodput}");
        assert!((marked / (2.0 / w_star).sqrt() - 1.0).abs() <= 0.15, "marked {marked}");
        assert!((mean_alpha / marked - 1.0).abs() <= 0.05, "alpha {mean_alpha} vs marked {marked}");
        assert_eq!(p.link_stats().dropped_full, 0);
    }
}
