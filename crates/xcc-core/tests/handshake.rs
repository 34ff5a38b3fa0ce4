//! Connection set-up through the [`Pair`] harness: what a lost SYN costs, ECN negotiation, and
//! MaxStart filling the pipe one RTT after the SYN (seed 000, Section IV-B).
//!
//! Setup unless a test says otherwise: MSS 1000 B, 40-byte headers, a 10 Mb/s forward link,
//! 10 ms each way. A SYN is 40 B (32 µs on the link), a data packet 1040 B (832 µs).

use xcc_core::algorithms::maxnet::{MaxNet, MaxNetConfig, MaxNetEcho};
use xcc_core::algorithms::maxnet::{MaxNetRouter, MaxNetRouterConfig};
use xcc_core::algorithms::newreno::{NewReno, NewRenoConfig};
use xcc_core::harness::{LinkConfig, Pair, PairConfig, TraceEvent};
use xcc_core::host::{AnyController, AnyEchoer};
use xcc_core::link::{AnyLinkAlgorithm, LinkAlgorithm, QueueView, Verdict};
use xcc_core::packet::Packet;
use xcc_core::time::{Dur, Time};
use xcc_core::transport::TransportConfig;
use xcc_core::wire::{Ecn, Flags};

const MSS: u32 = 1000;

/// Drops (or, with `mark`, marks) the first `n` SYNs; queues everything else.
#[derive(Debug, Clone, Default)]
struct FirstSyns {
    n: u32,
    mark: bool,
    seen: u32,
}
impl LinkAlgorithm for FirstSyns {
    fn on_enqueue(&mut self, _: Time, pkt: &mut Packet, _: &mut dyn QueueView) -> Verdict {
        if pkt.seg.flags.contains(Flags::SYN) {
            self.seen += 1;
            if self.seen <= self.n {
                return if self.mark { Verdict::Mark } else { Verdict::Drop };
            }
        }
        Verdict::Queue
    }
}

fn reno() -> AnyController {
    AnyController::NewReno(NewReno::new(NewRenoConfig {
        mss_bytes: MSS,
        initial_window_segments: 2,
        max_window_bytes: None,
    }))
}

fn pair(transport: TransportConfig, syns: FirstSyns) -> Pair<AnyController, FirstSyns> {
    let cfg = PairConfig {
        transport: TransportConfig { mss_bytes: MSS, handshake: true, ..transport },
        size_bytes: Some(10 * MSS as u64),
        link: LinkConfig { rate_bps: 10_000_000, delay: Dur::from_ms(10), buffer_packets: 100 },
        return_delay: Dur::from_ms(10),
        ..PairConfig::default()
    };
    Pair::with_parts(cfg, reno(), syns)
}

/// (first payload byte at the receiver, completion at the sender, timeouts, retransmissions).
fn run(mut p: Pair<AnyController, FirstSyns>) -> (Time, Time, u64, u64) {
    assert!(p.drive_to_completion(Time::ZERO + Dur::from_secs(60)));
    let s = p.sender_stats();
    (p.receiver().first_byte_at().unwrap(), s.completed_at.unwrap(), s.timeouts, s.retransmits)
}

//  clean:     t=0 SYN ─▶ (0.032 + 10 ms) ─▶ SYN-ACK ◀─ (10 ms) t=20.032 ms: data #0, #1
//             first byte at 20.032 + 0.832 + 10 = 30.864 ms
//  SYN lost:  t=0 SYN ✗ │ t=RTO: SYN again │ everything as above, RTO later
#[test]
fn a_syn_dropped_at_the_queue_costs_the_initial_rto() {
    let clean = run(pair(TransportConfig::default(), FirstSyns::default()));
    assert_eq!(clean.0, Time(30_864_000), "one RTT of handshake, then the data");
    assert_eq!((clean.2, clean.3), (0, 0));
    for rto in [Dur::from_secs(1), Dur::from_secs(3)] {
        let t = TransportConfig { initial_rto: rto, ..TransportConfig::default() };
        let lost = run(pair(t, FirstSyns { n: 1, ..FirstSyns::default() }));
        assert_eq!(lost.0 - clean.0, rto, "first byte delayed by the initial RTO");
        assert_eq!(lost.1 - clean.1, rto, "completion delayed by the initial RTO");
        assert_eq!((lost.2, lost.3), (1, 1), "one SYN timeout, one SYN retransmission");
    }
}

//  Two SYNs lost: the second waits twice the initial RTO (RFC 6298 section 5.5): 1 + 2 s.
#[test]
fn syn_retransmissions_back_off() {
    let clean = run(pair(TransportConfig::default(), FirstSyns::default()));
    let lost = run(pair(TransportConfig::default(), FirstSyns { n: 2, ..FirstSyns::default() }));
    assert_eq!(lost.0 - clean.0, Dur::from_secs(3));
    assert_eq!((lost.2, lost.3), (2, 2));
}

/// A SYN is Not-ECT (RFC 3168 section 6.1.1): an AQM that would mark it drops it, where it
/// would only have marked an ECN-capable data packet. The SYN-ACK agrees to ECN, so the data
/// that follows is ECT(0).
#[test]
fn a_marking_queue_drops_the_not_ect_syn_and_ecn_is_negotiated() {
    let t = TransportConfig { ecn: true, ..TransportConfig::default() };
    let mut p = pair(t, FirstSyns { n: 1, mark: true, ..FirstSyns::default() });
    assert!(p.drive_to_completion(Time::ZERO + Dur::from_secs(60)));
    assert_eq!(p.link_stats().dropped_aqm, 1);
    assert_eq!(p.sender_stats().timeouts, 1);
    let sent: Vec<(Time, Ecn)> = p
        .trace()
        .iter()
        .filter_map(|r| match r.event {
            TraceEvent::Sent { ecn, .. } => Some((r.at, ecn)),
            _ => None,
        })
        .collect();
    // Two SYNs (Not-ECT), then ten data segments, all ECT(0).
    assert_eq!(sent.len(), 12);
    assert!(sent[..2].iter().all(|&(_, e)| e == Ecn::NotEct));
    assert!(sent[2..].iter().all(|&(_, e)| e == Ecn::Ect0));
    assert_eq!(sent[1].0, Time::ZERO + Dur::from_secs(1));
}

/// Seed 000, Section IV-B: MaxStart "fill[s] the transmission pipe with data just one round
/// trip time (RTT) after the SYN packet". The SYN asks an idle MaxNet link for its spare
/// capacity S = (mu + (1 - mu)/4) C; the SYN-ACK brings it back one RTT later and the window
/// is then S tau at once, above the flow's share mu C tau; one RTT after the SYN-ACK the
/// window still holds at least that share and the link has carried it for that whole RTT.
//
//  C = 10 Mb/s, mu = 0.9: S = 9.25 Mb/s. tau = the SYN's RTT = 20.032 ms (+ 4 B of shim).
//  Data packets 1048 B on the wire (MSS 1000 + 40 + 8 B shim).
#[test]
fn maxstart_window_reaches_the_share_one_rtt_after_the_syn_ack() {
    let (c, mu) = (10_000_000u64, 0.9);
    let cfg = PairConfig {
        transport: TransportConfig { mss_bytes: MSS, handshake: true, ..TransportConfig::default() },
        size_bytes: None,
        link: LinkConfig { rate_bps: c, delay: Dur::from_ms(10), buffer_packets: 1000 },
        return_delay: Dur::from_ms(10),
        ..PairConfig::default()
    };
    let cc = AnyController::MaxNet(MaxNet::new(MaxNetConfig { mss_bytes: MSS, ..MaxNetConfig::default() }));
    let router = MaxNetRouter::new(MaxNetRouterConfig { mu, ..MaxNetRouterConfig::default() }, c, Time::ZERO);
    let echo = AnyEchoer::MaxNet(MaxNetEcho::new(Dur::from_ms(20)));
    let mut p = Pair::with_echoer(cfg, cc, AnyLinkAlgorithm::MaxNet(router), echo);
    // The SYN-ACK is the first ACK the sender processes.
    let syn_ack = loop {
        assert!(p.step());
        if let Some(r) = p.trace().iter().find(|r| matches!(r.event, TraceEvent::AckReceived { .. })) {
            break *r;
        }
    };
    let tau = p.sender().rtt().min_rtt().as_secs_f64();
    assert!((tau - 0.020_03).abs() < 1e-4, "tau {tau}");
    let TraceEvent::AckReceived { cwnd, .. } = syn_ack.event else { unreachable!() };
    let spare = (mu + (1.0 - mu) / 4.0) * c as f64;
    let share = mu * c as f64;
    let window_rate = cwnd as f64 * 8.0 / tau;
    assert!((window_rate - spare).abs() / spare < 0.01, "window {cwnd} B = {window_rate} bit/s, S = {spare}");
    // One RTT after the SYN-ACK: the window still encodes at least the share ...
    let t1 = syn_ack.at + Dur::from_secs_f64(tau);
    p.drive_until(t1);
    let w1 = p.sender_stats().cwnd_bytes as f64 * 8.0 / tau;
    assert!(w1 >= share * 0.99, "window rate {w1} bit/s one RTT after the SYN-ACK, share {share}");
    // ... and the link carried the share from the SYN-ACK on: over the next RTT the receiver
    // got the payload of at least mu C (payload 1000 of 1048 wire bytes), less one packet.
    let before = p.delivered_bytes();
    p.drive_until(t1 + Dur::from_secs_f64(tau));
    let rate = (p.delivered_bytes() - before) as f64 * 8.0 / tau;
    let want = share * 1000.0 / 1048.0;
    assert!(rate >= want - 8.0 * 1000.0 / tau, "delivered {rate} bit/s in the second RTT, want {want}");
}
