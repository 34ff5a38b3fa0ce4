//! Scenario tests: one NewReno flow through the [`Pair`] harness (no simulator).
//!
//! Common setup unless a test says otherwise: MSS 1000 B, 40-byte headers, a 10 Mb/s forward
//! link (tx time 0.832 ms per data packet), 10 ms each way, so the base RTT is 20.832 ms.
//! The link algorithm is a test-only FIFO (or marker) so these tests depend on no AQM.

use xcc_core::algorithms::newreno::{NewReno, NewRenoConfig};
use xcc_core::harness::{DropCause, LinkConfig, LossModel, Pair, PairConfig, TraceEvent, TraceRecord};
use xcc_core::host::AnyController;
use xcc_core::link::{LinkAlgorithm, QueueView, Verdict};
use xcc_core::packet::Packet;
use xcc_core::time::{Dur, Time};
use xcc_core::transport::{DelayedAck, PartialAckRto, TransportConfig};
use xcc_core::wire::Ecn;

const MSS: u32 = 1000;
/// Base RTT: 10 ms + 0.832 ms transmission forward, 10 ms back (ACKs are not serialised).
const RTT: Dur = Dur::from_us(20_832);

/// Queues everything (the harness's buffer limit is the only drop-tail).
#[derive(Debug, Clone, Default)]
struct Fifo;
impl LinkAlgorithm for Fifo {
    fn on_enqueue(&mut self, _: Time, _: &mut Packet, _: &mut dyn QueueView) -> Verdict {
        Verdict::Queue
    }
}

/// Marks the first transmission of the listed data segments.
#[derive(Debug, Clone, Default)]
struct MarkSeqs(Vec<u32>);
impl LinkAlgorithm for MarkSeqs {
    fn on_enqueue(&mut self, _: Time, pkt: &mut Packet, _: &mut dyn QueueView) -> Verdict {
        match self.0.iter().position(|&s| s == pkt.seg.seq) {
            Some(i) => {
                self.0.remove(i);
                Verdict::Mark
            }
            None => Verdict::Queue,
        }
    }
}

fn reno(max_window_segments: Option<u64>) -> AnyController {
    AnyController::NewReno(NewReno::new(NewRenoConfig {
        mss_bytes: MSS,
        initial_window_segments: 2,
        max_window_bytes: max_window_segments.map(|w| w * MSS as u64),
    }))
}

fn transport(sack: bool) -> TransportConfig {
    TransportConfig { mss_bytes: MSS, sack, ..TransportConfig::default() }
}

fn config(transport: TransportConfig, size_segments: Option<u64>, loss: LossModel) -> PairConfig {
    PairConfig {
        transport,
        size_bytes: size_segments.map(|n| n * MSS as u64),
        link: LinkConfig { rate_bps: 10_000_000, delay: Dur::from_ms(10), buffer_packets: 1000 },
        return_delay: Dur::from_ms(10),
        loss,
        ..PairConfig::default()
    }
}

fn retransmissions(trace: &[TraceRecord]) -> Vec<(Time, u32)> {
    trace
        .iter()
        .filter_map(|r| match r.event {
            TraceEvent::Sent { seq, retransmission: true, .. } => Some((r.at, seq)),
            _ => None,
        })
        .collect()
}

fn ssthresh_values(trace: &[TraceRecord]) -> Vec<u64> {
    let mut v: Vec<u64> = trace
        .iter()
        .filter_map(|r| match r.event {
            TraceEvent::AckReceived { ssthresh, .. } => Some(ssthresh),
            _ => None,
        })
        .collect();
    v.dedup();
    v
}

/// Time of the first ACK that acknowledges segment `seq` (cumulatively).
fn first_ack_covering(trace: &[TraceRecord], seq: u32) -> Time {
    trace
        .iter()
        .find_map(|r| match r.event {
            TraceEvent::AckReceived { ack, .. } if ack > seq => Some(r.at),
            _ => None,
        })
        .expect("segment never acknowledged")
}

// RFC 6582 "three losses in one window", SACK off, receiver window 16 segments:
//
//   sender                                   receiver
//   30 ✗  31 32 33 ✗ 34 35 36 ✗ 37 .. 45 ──▶
//        ◀── ack 30 (dup x3: 31 32 34)       fast retransmit 30, recover = 46,
//                                            ssthresh = cwnd = 8 MSS (FlightSize 16 / 2)
//        ◀── ack 30 (dups: pipe shrinks, new data 46.. when pipe < cwnd)
//   30' ──▶
//        ◀── ack 33 (partial)                retransmit 33, re-arm RTO (first partial)
//   33' ──▶
//        ◀── ack 36 (partial)                retransmit 36
//   36' ──▶
//        ◀── ack >= 46 (full)                cwnd = min(ssthresh, FlightSize + MSS), exit
//
// Exactly one window reduction, one retransmission per partial ACK, no RTO, every byte
// delivered; recovery takes one RTT per hole.
#[test]
fn newreno_three_losses_in_one_window() {
    let cfg = config(transport(false), Some(120), LossModel::FirstTransmission(vec![30, 33, 36]));
    let mut pair = Pair::with_parts(cfg, reno(Some(16)), Fifo);
    assert!(pair.drive_to_completion(Time::ZERO + Dur::from_secs(10)));
    let s = pair.sender_stats();
    let tr = pair.trace();
    let rtx = retransmissions(tr);
    assert_eq!(rtx.iter().map(|r| r.1).collect::<Vec<_>>(), vec![30, 33, 36]);
    assert_eq!((s.retransmits, s.fast_recoveries, s.timeouts), (3, 1, 0));
    assert_eq!(ssthresh_values(tr), vec![16 * MSS as u64, 8 * MSS as u64]);
    // Each hole after the first is retransmitted when the partial ACK pointing at it arrives.
    assert_eq!(first_ack_covering(tr, 30), rtx[1].0);
    assert_eq!(first_ack_covering(tr, 33), rtx[2].0);
    // ... so NewReno needs about one RTT per hole.
    let recovery = first_ack_covering(tr, 36) - rtx[0].0;
    assert!(recovery >= RTT.saturating_mul(3) && recovery < RTT.saturating_mul(4), "{recovery:?}");
    assert_eq!(pair.receiver_stats().bytes_delivered, 120 * MSS as u64);
    assert_eq!(pair.delivered_bytes(), 120 * MSS as u64);
    assert_eq!(pair.receiver_stats().duplicates, 0);
    // The window kept the sender busy during recovery: new data left between retransmissions.
    let new_during_recovery = tr
        .iter()
        .filter(|r| r.at > rtx[0].0 && r.at < rtx[2].0)
        .filter(|r| matches!(r.event, TraceEvent::Sent { retransmission: false, .. }))
        .count();
    assert!(new_during_recovery >= 4, "{new_during_recovery}");
}

// Same three losses with SACK: the scoreboard proves 33 and 36 lost (3 SACKed segments above
// each) while the retransmission of 30 is still in flight, so all holes are repaired in about
// one RTT:
//
//   30 ✗ 31 32 33 ✗ 34 35 36 ✗ 37 38 39 ──▶
//        ◀── ack 30 sack 31-33,34           IsLost(30): fast retransmit 30
//        ◀── ack 30 sack 34-36,31-33,37     IsLost(33): retransmit 33 (pipe permitting)
//        ◀── ack 30 sack 37-40,...          IsLost(36): retransmit 36
//        ◀── ack >= 46 (one RTT after 30')
#[test]
fn sack_recovers_three_losses_in_one_rtt() {
    let cfg = config(transport(true), Some(120), LossModel::FirstTransmission(vec![30, 33, 36]));
    let mut pair = Pair::with_parts(cfg, reno(Some(16)), Fifo);
    assert!(pair.drive_to_completion(Time::ZERO + Dur::from_secs(10)));
    let s = pair.sender_stats();
    let tr = pair.trace();
    let rtx = retransmissions(tr);
    assert_eq!(rtx.iter().map(|r| r.1).collect::<Vec<_>>(), vec![30, 33, 36]);
    assert_eq!((s.retransmits, s.fast_recoveries, s.timeouts), (3, 1, 0));
    assert_eq!(ssthresh_values(tr).len(), 2);
    // All three retransmissions leave before the first one is acknowledged...
    assert!(rtx[2].0 < first_ack_covering(tr, 30));
    // ... and the recovery ends about one RTT after it started.
    let recovery = first_ack_covering(tr, 36) - rtx[0].0;
    assert!(recovery < RTT.saturating_mul(2), "{recovery:?}");
    assert_eq!(pair.receiver_stats().bytes_delivered, 120 * MSS as u64);
    assert_eq!(pair.receiver_stats().duplicates, 0);
}

// ECN: the link marks 20 and 22 (same window) and later 80.
//
//   20(CE) 21 22(CE) ──▶
//        ◀── ack 21 ECE      cwnd, ssthresh = FlightSize/2; next new segment carries CWR
//        ◀── ack 23 ECE      same window: ignored
//   n (CWR) ──▶
//        ◀── acks without ECE from the arrival of n on
//   ... 80(CE) ... ◀── ECE   a second, separate reduction
//
// No retransmissions, no recovery, segments ECT(0) throughout.
#[test]
fn ecn_halves_once_per_window_without_retransmitting() {
    let t = TransportConfig { ecn: true, ..transport(false) };
    let cfg = config(t, Some(200), LossModel::None);
    let mut pair = Pair::with_parts(cfg, reno(None), MarkSeqs(vec![20, 22, 80]));
    assert!(pair.drive_to_completion(Time::ZERO + Dur::from_secs(10)));
    let s = pair.sender_stats();
    let tr = pair.trace();
    assert_eq!((s.ecn_reductions, s.retransmits, s.fast_recoveries, s.timeouts), (2, 0, 0, 0));
    assert_eq!(pair.link_stats().marked, 3);
    assert_eq!(pair.receiver_stats().ce_received, 3);
    let sent: Vec<_> = tr
        .iter()
        .filter_map(|r| match r.event {
            TraceEvent::Sent { seq, ecn, cwr, .. } => Some((r.at, seq, ecn, cwr)),
            _ => None,
        })
        .collect();
    assert!(sent.iter().all(|s| s.2 == Ecn::Ect0));
    let cwr: Vec<_> = sent.iter().filter(|s| s.3).collect();
    assert_eq!(cwr.len(), 2, "one CWR per reduction");
    // The CWR segment is the first one sent after the ECE that caused the reduction.
    let first_ece = tr.iter().find(|r| matches!(r.event, TraceEvent::AckSent { ece: true, .. })).map(|r| r.at).unwrap();
    assert!(cwr[0].0 >= first_ece + Dur::from_ms(10));
    // One reduction for the 20/22 window: ssthresh changes exactly twice in the whole run.
    assert_eq!(ssthresh_values(tr).len(), 3);
    // The receiver stops echoing once the CWR segment has arrived (and before the mark of 80).
    let cwr_arrival =
        tr.iter().find(|r| matches!(r.event, TraceEvent::Arrived { seq, .. } if seq == cwr[0].1)).unwrap().at;
    let eces_after: Vec<bool> = tr
        .iter()
        .filter(|r| r.at >= cwr_arrival)
        .filter_map(|r| match r.event {
            TraceEvent::AckSent { ece, .. } => Some(ece),
            TraceEvent::Arrived { ce: true, .. } => None,
            _ => None,
        })
        .take(5)
        .collect();
    assert_eq!(eces_after, vec![false; 5]);
    assert_eq!(pair.receiver_stats().bytes_delivered, 200 * MSS as u64);
}

// Delayed ACKs (every 2 segments, 40 ms), a 3-segment flow:
//
//   t=0   0 1 ──▶
//               ◀── ack 2 (on the second segment)
//   t≈21  2 ──▶   (cwnd 3, only one segment left)
//               ... 40 ms ...
//               ◀── ack 3 (delayed-ACK timer)
#[test]
fn delayed_ack_pairs_segments_and_times_out_for_a_lone_one() {
    let t = TransportConfig {
        delayed_ack: Some(DelayedAck { every_segments: 2, max_delay: Dur::from_ms(40), quick_acks: 0 }),
        ..transport(false)
    };
    let mut pair = Pair::with_parts(config(t, Some(3), LossModel::None), reno(None), Fifo);
    assert!(pair.drive_to_completion(Time::ZERO + Dur::from_secs(1)));
    let tr = pair.trace();
    let acks: Vec<_> = tr
        .iter()
        .filter_map(|r| match r.event {
            TraceEvent::AckSent { ack, .. } => Some((r.at, ack)),
            _ => None,
        })
        .collect();
    assert_eq!(acks.iter().map(|a| a.1).collect::<Vec<_>>(), vec![2, 3]);
    let arrival_of_1 = tr.iter().find(|r| matches!(r.event, TraceEvent::Arrived { seq: 1, .. })).unwrap().at;
    let arrival_of_2 = tr.iter().find(|r| matches!(r.event, TraceEvent::Arrived { seq: 2, .. })).unwrap().at;
    assert_eq!(acks[0].0, arrival_of_1);
    assert_eq!(acks[1].0, arrival_of_2 + Dur::from_ms(40));

    // A longer loss-free flow: about one ACK per two segments.
    let mut pair = Pair::with_parts(config(t, Some(400), LossModel::None), reno(None), Fifo);
    assert!(pair.drive_to_completion(Time::ZERO + Dur::from_secs(10)));
    let acks = pair.receiver_stats().acks_sent;
    assert!((200..=215).contains(&acks), "{acks} ACKs for 400 segments");
}

// A sized flow whose last segment is short completes: completed_at is set, the receiver got
// exactly `size` bytes, and an early on_timeout changes nothing.
#[test]
fn sized_flow_completes_with_exact_bytes() {
    let size = 100 * MSS as u64 + 321;
    let mut cfg = config(transport(true), None, LossModel::None);
    cfg.size_bytes = Some(size);
    let mut pair = Pair::with_parts(cfg, reno(None), Fifo);
    pair.drive_until(Time::ZERO + Dur::from_ms(30));
    let before = pair.sender_stats();
    let now = pair.now();
    pair.sender_mut().on_timeout(now); // RTO not due: nothing happens
    assert_eq!(pair.sender_mut().poll_transmit(now), None);
    assert_eq!(pair.sender_stats(), before);
    assert!(pair.drive_to_completion(Time::ZERO + Dur::from_secs(10)));
    let s = pair.sender_stats();
    assert!(pair.sender().is_complete());
    assert!(s.completed_at.is_some());
    assert_eq!((s.bytes_acked, s.retransmits, s.timeouts), (size, 0, 0));
    assert_eq!(pair.receiver_stats().bytes_delivered, size);
    assert_eq!(pair.receiver().first_byte_at(), Some(Time::ZERO + Dur::from_us(10_832)));
    // Nothing left to do once complete.
    assert_eq!(pair.sender().poll_timeout(), None);
}

// A drop-tail overflow: slow start overshoots a 20-packet buffer; recovery (with or without
// SACK) delivers everything, and NewReno never needs more reductions than loss episodes.
#[test]
fn buffer_overflow_in_slow_start_is_recovered() {
    for sack in [false, true] {
        let mut cfg = config(transport(sack), Some(2000), LossModel::None);
        cfg.link.buffer_packets = 20;
        let mut pair = Pair::with_parts(cfg, reno(None), Fifo);
        assert!(pair.drive_to_completion(Time::ZERO + Dur::from_secs(60)), "sack={sack}");
        let drops = pair.link_stats().dropped_full;
        assert!(drops > 0);
        let tr = pair.trace();
        assert!(tr.iter().any(|r| matches!(r.event, TraceEvent::Dropped { cause: DropCause::BufferFull, .. })));
        assert_eq!(pair.receiver_stats().bytes_delivered, 2000 * MSS as u64, "sack={sack}");
        let s = pair.sender_stats();
        assert!(s.retransmits >= drops, "sack={sack} {s:?}");
        // Goodput sanity: a 10 Mb/s link moves 2 MB in ~1.7 s; allow for slow start and loss.
        let done = s.completed_at.unwrap().as_secs_f64();
        assert!(done < 4.0, "sack={sack} took {done}s {s:?}");
    }
}

// Random loss p = 1 %, fast link (100 Mb/s, so the window, not the link, limits): the
// throughput should be near Mathis et al. `MSS/RTT * sqrt(3/2) / sqrt(p)` (~4.9 Mb/s here).
#[test]
fn random_loss_throughput_near_mathis() {
    let p = 0.01;
    let mut cfg = config(transport(false), None, LossModel::Random { probability: p, seed: 7 });
    cfg.link.rate_bps = 100_000_000;
    cfg.trace = false;
    let mut pair = Pair::with_parts(cfg, reno(None), Fifo);
    let secs = 30;
    pair.drive_until(Time::ZERO + Dur::from_secs(secs));
    let rtt = pair.sender_stats().min_rtt.as_secs_f64();
    let mathis = MSS as f64 * 8.0 / rtt * (1.5f64).sqrt() / p.sqrt();
    let got = pair.receiver_stats().bytes_delivered as f64 * 8.0 / secs as f64;
    let ratio = got / mathis;
    eprintln!("1% loss: {got:.0} b/s, Mathis {mathis:.0} b/s, ratio {ratio:.2}");
    assert!((0.6..=1.4).contains(&ratio), "got {got:.0} b/s, Mathis {mathis:.0} b/s, ratio {ratio:.2}");
    assert!(pair.link_stats().dropped_random > 0);
}

// The whole tail of a flow is lost: no duplicate ACKs can come, only the RTO recovers.
//
//   ... 16 17✗ 18✗ 19✗ ──▶
//        ◀── ack 17 (for 16)
//        ... RTO ...          cwnd = 1 MSS, go-back-N: 17' ──▶ ◀── ack 18, 18' 19' ──▶ ...
#[test]
fn lost_tail_is_recovered_by_the_rto() {
    for sack in [false, true] {
        let cfg = config(transport(sack), Some(20), LossModel::FirstTransmission(vec![17, 18, 19]));
        let mut pair = Pair::with_parts(cfg, reno(None), Fifo);
        assert!(pair.drive_to_completion(Time::ZERO + Dur::from_secs(10)));
        let s = pair.sender_stats();
        assert_eq!((s.timeouts, s.retransmits, s.fast_recoveries), (1, 3, 0), "sack={sack}");
        let tr = pair.trace();
        let rto_at = tr.iter().find(|r| matches!(r.event, TraceEvent::Timeout { snd_una: 17 })).unwrap().at;
        let rtx = retransmissions(tr);
        assert_eq!(rtx.iter().map(|r| r.1).collect::<Vec<_>>(), vec![17, 18, 19]);
        assert_eq!(rtx[0].0, rto_at);
        // After the timeout the window is 1 MSS: 18 waits for the ACK of 17'.
        assert_eq!(rtx[1].0, first_ack_covering(tr, 17));
        assert_eq!(pair.receiver_stats().bytes_delivered, 20 * MSS as u64);
    }
}

// Invariants under many random loss patterns, with and without SACK, delayed ACKs and ECN
// marks: every flow completes, the receiver gets exactly the flow's bytes, the scoreboard
// arithmetic never underflows (debug build), and retransmissions stay below 3x the losses.
#[test]
fn random_losses_never_break_delivery() {
    let mut runs = 0;
    for seed in 0..12u64 {
        for sack in [false, true] {
            for delayed in [false, true] {
                let t = TransportConfig {
                    ecn: seed % 3 == 0,
                    delayed_ack: delayed.then_some(DelayedAck {
                        every_segments: 2,
                        max_delay: Dur::from_ms(40),
                        quick_acks: 0,
                    }),
                    ..transport(sack)
                };
                let p = [0.002, 0.02, 0.08][(seed % 3) as usize];
                let size = 300 * MSS as u64 + seed * 37;
                let mut cfg = config(t, None, LossModel::Random { probability: p, seed });
                cfg.size_bytes = Some(size);
                cfg.link.buffer_packets = 8 + seed as u32;
                cfg.trace = false;
                let mut pair = Pair::with_parts(cfg, reno(None), MarkSeqs((0..300).step_by(23).collect()));
                let done = pair.drive_to_completion(Time::ZERO + Dur::from_secs(600));
                let s = pair.sender_stats();
                let l = pair.link_stats();
                let ctx = format!("seed={seed} sack={sack} delayed={delayed} {s:?} {l:?}");
                assert!(done, "{ctx}");
                assert_eq!(pair.receiver_stats().bytes_delivered, size, "{ctx}");
                assert_eq!(s.bytes_acked, size, "{ctx}");
                let losses = l.dropped_random + l.dropped_full + l.dropped_aqm;
                assert!(s.retransmits <= 3 * losses + 3 * s.timeouts, "{ctx}");
                assert_eq!(s.bytes_in_flight, 0, "{ctx}");
                runs += 1;
            }
        }
    }
    assert_eq!(runs, 48);
}

/// The proof that a driver other than the simulator runs the real algorithms: a 5 MB NewReno
/// transfer with ECN through the real RED (classic, ECN marking, packet mode, thresholds 5/15)
/// on the Pair's virtual clock. RED marks, the sender halves on the echoes instead of losing
/// packets, the queue's average settles between the thresholds, and every byte arrives.
///
/// ```text
/// sender --data (ECT0)--> [RED 5/15 pkt, mark] --10 Mb/s, 10 ms--> receiver
///        <----------------- ACK (ECE after CE) ---- 10 ms ---------
/// ```
#[test]
fn newreno_ecn_transfer_through_real_red() {
    use xcc_core::algorithms::red::{Red, RedAction, RedConfig, RedUnit, RedVariant};
    use xcc_core::link::AnyLinkAlgorithm;
    use xcc_core::rng::component_rng;
    let red = Red::new(
        RedConfig {
            w_q: 0.02,
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.1,
            unit: RedUnit::Packets,
            // Classic: above max_th every ECT packet is marked (gentle would drop past 2 max_th
            // during the first slow start).
            variant: RedVariant::Classic,
            action: RedAction::Mark,
            mean_packet_bytes: MSS + 40,
        },
        component_rng(1, 1, 0),
    );
    let segments = 5_000;
    let mut cfg = config(TransportConfig { ecn: true, ..transport(false) }, Some(segments), LossModel::None);
    cfg.link.buffer_packets = 100;
    let mut pair = Pair::new(cfg, reno(None), AnyLinkAlgorithm::Red(red));
    assert!(pair.drive_to_completion(Time::ZERO + Dur::from_secs(60)), "transfer did not finish");
    assert_eq!(pair.delivered_bytes(), segments * MSS as u64);
    let link = pair.link_stats();
    let s = pair.sender_stats();
    assert!(link.marked > 10, "RED marked {} packets", link.marked);
    assert_eq!(link.dropped_aqm + link.dropped_full, 0, "ECN-capable traffic below the buffer limit is never dropped");
    assert!(s.ecn_reductions > 5, "sender reduced {} times", s.ecn_reductions);
    assert_eq!(s.retransmits, 0);
    let AnyLinkAlgorithm::Red(red) = pair.link_algorithm() else { unreachable!() };
    let avg = red.avg();
    assert!(avg < 30.0, "RED average {avg} packets stays near its thresholds");
    // 5 MB at 10 Mb/s is 4.2 s of transmission; ECN keeps the link busy, so well under 6 s.
    assert!(pair.now() < Time::ZERO + Dur::from_secs(6), "finished at {:?}", pair.now());
}

/// Reductions: every change of ssthresh on an ACK, as (cwnd before, ssthresh after).
fn reductions(trace: &[TraceRecord]) -> Vec<(u64, u64)> {
    let mut out = vec![];
    let mut prev: Option<(u64, u64)> = None;
    for r in trace {
        if let TraceEvent::AckReceived { cwnd, ssthresh, .. } = r.event {
            if let Some((c, s)) = prev {
                if ssthresh != s {
                    out.push((c, ssthresh));
                }
            }
            prev = Some((cwnd, ssthresh));
        }
    }
    out
}

// A burst of losses in one window, SACK off (what a full DropTail queue does to one flow):
// the 20 odd segments 131, 133, .., 169 are lost while the window is ~64 segments.
//
//   sender                                      receiver
//   130 131✗ 132 133✗ .. 168 169✗ 170 .. ──▶   holds the even ones
//        ◀── ack 131 x3                         fast retransmit 131, recover = snd_max
//   131' ──▶ ◀── ack 133 (partial)              retransmit 133, re-arm the RTO
//   133' ──▶ ◀── ack 135 (partial)              retransmit 135, re-arm the RTO
//   ...          one hole per RTT (~20 RTTs, longer than the 200 ms minimum RTO)
//   169' ──▶ ◀── full ACK                       exit
//
// Slow-but-steady (the default, ns-2's): no RTO, exactly one retransmission per loss, the
// receiver never sees a duplicate. Impatient (RFC 6582 section 4.1's other variant): the RTO
// fires mid-recovery and go-back-N resends the even segments the receiver already holds.
#[test]
fn newreno_burst_loss_recovers_without_rto() {
    let holes: Vec<u32> = (131..170).step_by(2).collect();
    assert_eq!(holes.len(), 20);
    let run = |p: PartialAckRto| {
        let t = TransportConfig { partial_ack_rto: p, ..transport(false) };
        let cfg = config(t, Some(600), LossModel::FirstTransmission(holes.clone()));
        let mut pair = Pair::with_parts(cfg, reno(Some(64)), Fifo);
        assert!(pair.drive_to_completion(Time::ZERO + Dur::from_secs(30)), "{p:?}");
        assert_eq!(pair.receiver_stats().bytes_delivered, 600 * MSS as u64, "{p:?}");
        pair
    };
    let pair = run(PartialAckRto::SlowButSteady);
    let s = pair.sender_stats();
    assert_eq!((s.timeouts, s.fast_recoveries, s.retransmits), (0, 1, 20), "{s:?}");
    assert_eq!(retransmissions(pair.trace()).iter().map(|r| r.1).collect::<Vec<_>>(), holes);
    assert_eq!(pair.receiver_stats().duplicates, 0);
    // The recovery really outlasted the RTO: the last hole was repaired > 400 ms after the first.
    let tr = pair.trace();
    assert!(first_ack_covering(tr, 169) - first_ack_covering(tr, 131) > Dur::from_ms(400));

    // Impatient: the RTO fires mid-recovery, go-back-N resends held segments (each one a
    // receiver duplicate, nothing else is superfluous). Once the ACK reaches `recover` (the
    // highest segment sent before the timeout), the duplicates still in flight come back as
    // duplicate ACKs *of* `recover`; they must not start a fast retransmit (RFC 6582 section
    // 3.2 step 1: only an ACK beyond `recover` may), or partial ACKs would retransmit segments
    // that are merely in flight and their duplicates would trigger the next false one.
    //
    //   RTO: recover = snd_max = R, go-back-N 151' 152' 153' .. (152, 154, .. are held)
    //        ◀── ack R (the hole below R filled)    snd_una = R, new data R, R+1, ..
    //        ◀── ack R, ack R, ack R (for duplicates of 160, 162, .. still in flight)
    //                                                no fast retransmit: ack == recover
    let pair = run(PartialAckRto::Impatient);
    let s = pair.sender_stats();
    let dups = pair.receiver_stats().duplicates;
    assert_eq!((s.timeouts, s.fast_recoveries), (1, 1), "{s:?}");
    assert!(dups > 0, "{s:?}");
    assert_eq!(s.retransmits, 20 + dups, "{s:?}");
}

// A loss among the new data sent during a long NewReno recovery. With FlightSize halving the
// next reduction would raise the window: the receiver holds everything above the new hole,
// so FlightSize (snd_una..snd_max) is several windows.
//
//   window ~64: 131✗ 133✗ .. 149✗ (10 holes)   fast retransmit, ssthresh = cwnd = 32
//   10 RTTs of partial ACKs, ~32 new segments per RTT leave meanwhile; 300✗ is one of them
//   ◀── ack 300 ("full" for the first recovery)  exit, cwnd = 32
//   ◀── ack 300 x3                                fast retransmit 300:
//                                                 ssthresh = min(FlightSize, cwnd) / 2 = 16,
//                                                 not FlightSize / 2 (~100 segments)
#[test]
fn loss_after_long_recovery_halves_the_window() {
    let mut lost: Vec<u32> = (131..150).step_by(2).collect();
    lost.push(300);
    let cfg = config(transport(false), Some(1000), LossModel::FirstTransmission(lost.clone()));
    let mut pair = Pair::with_parts(cfg, reno(None), Fifo);
    assert!(pair.drive_to_completion(Time::ZERO + Dur::from_secs(30)));
    let s = pair.sender_stats();
    assert_eq!((s.timeouts, s.fast_recoveries, s.retransmits), (0, 2, 11), "{s:?}");
    assert_eq!(retransmissions(pair.trace()).iter().map(|r| r.1).collect::<Vec<_>>(), lost);
    assert_eq!(pair.receiver_stats().duplicates, 0);
    let red = reductions(pair.trace());
    assert_eq!(red.len(), 2, "{red:?}");
    for (cwnd, ssthresh) in red {
        assert!(ssthresh <= cwnd / 2 + MSS as u64, "cwnd {cwnd} -> ssthresh {ssthresh}");
    }
}

// Drop-tail overflow, unlimited flow, 20 s, SACK off: the first slow start overshoots the
// 20-packet buffer by about half a window (every other segment of a window dropped), then
// congestion avoidance overflows it now and then. Retransmissions must equal the drops (no
// go-back-N resending of data the receiver holds), no RTO, and no reduction ever raises
// ssthresh above half the window it replaced.
#[test]
fn droptail_overflow_retransmits_only_the_losses() {
    let mut cfg = config(transport(false), None, LossModel::None);
    cfg.link.buffer_packets = 20;
    let mut pair = Pair::with_parts(cfg, reno(None), Fifo);
    pair.drive_until(Time::ZERO + Dur::from_secs(20));
    let s = pair.sender_stats();
    let drops = pair.link_stats().dropped_full;
    assert!(drops > 30 && s.fast_recoveries > 10, "{s:?}");
    assert_eq!((s.retransmits, s.timeouts), (drops, 0), "{s:?}");
    assert_eq!(pair.receiver_stats().duplicates, 0);
    for (cwnd, ssthresh) in reductions(pair.trace()) {
        assert!(ssthresh <= cwnd / 2 + MSS as u64, "cwnd {cwnd} -> ssthresh {ssthresh}");
    }
    // The link stays busy: > 90 % of 10 Mb/s delivered.
    assert!(pair.delivered_bytes() * 8 > 20 * 9_000_000, "{}", pair.delivered_bytes());
}
