//! CUBIC and BBR on the shared transport, end to end through the two-endpoint harness: sized
//! transfers complete byte for byte, BBR's delivery-rate samples measure the bottleneck and its
//! pacing keeps the queue short, CUBIC fills a one-BDP buffer.

use xcc_core::algorithms::bbr::{Bbr, BbrMode, BbrParams};
use xcc_core::algorithms::cubic::{Cubic, CubicParams};
use xcc_core::harness::{LinkConfig, LossModel, Pair, PairConfig};
use xcc_core::host::AnyController;
use xcc_core::link::{LinkAlgorithm, QueueView, Verdict};
use xcc_core::packet::Packet;
use xcc_core::time::{Dur, Time};
use xcc_core::transport::TransportConfig;

const MSS: u32 = 1460;
/// 10 Mbit/s, 20 ms each way: one BDP of 1500-byte packets is 33 packets.
const RATE: u64 = 10_000_000;

#[derive(Debug, Clone, Default)]
struct Fifo;
impl LinkAlgorithm for Fifo {
    fn on_enqueue(&mut self, _: Time, _: &mut Packet, _: &mut dyn QueueView) -> Verdict {
        Verdict::Queue
    }
}

fn config(segments: u64, buffer_packets: u32) -> PairConfig {
    PairConfig {
        transport: TransportConfig { mss_bytes: MSS, ..TransportConfig::default() },
        size_bytes: Some(segments * MSS as u64),
        link: LinkConfig { rate_bps: RATE, delay: Dur::from_ms(20), buffer_packets },
        return_delay: Dur::from_ms(20),
        loss: LossModel::None,
        trace: false,
        ..PairConfig::default()
    }
}

// 10 000 segments (14.6 MB, 12.0 s at the link's payload rate 9.73 Mbit/s) through a one-BDP
// buffer: BBR delivers every byte within 5 % of that time (STARTUP's ramp, one PROBE_RTT),
// estimates the bandwidth within 3 % of the payload rate, and is in PROBE_BW at the end.
#[test]
fn bbr_transfer_measures_the_bottleneck() {
    let cc = AnyController::Bbr(Box::new(Bbr::new(BbrParams::default(), MSS).with_header_bytes(40)));
    let mut pair = Pair::with_parts(config(10_000, 33), cc, Fifo);
    assert!(pair.drive_to_completion(Time::ZERO + Dur::from_secs(60)));
    assert_eq!(pair.receiver_stats().bytes_delivered, 10_000 * MSS as u64);
    let payload_rate = RATE as f64 / 8.0 * MSS as f64 / (MSS + 40) as f64;
    let ideal = 10_000.0 * MSS as f64 / payload_rate;
    let done = pair.sender_stats().completed_at.unwrap().as_secs_f64();
    assert!(done < ideal * 1.05 + 0.2, "took {done:.2} s, ideal {ideal:.2} s");
    let AnyController::Bbr(b) = pair.sender().controller() else { unreachable!() };
    assert!((b.bw() / payload_rate - 1.0).abs() < 0.03, "bw {} vs {payload_rate}", b.bw());
    assert_eq!(b.mode(), BbrMode::ProbeBw);
    assert!(b.min_rtt().unwrap() < Dur::from_ms(43), "min RTT {:?}", b.min_rtt());
}

// The same transfer with CUBIC: it fills the buffer (drops), recovers every loss, and moves
// the data within 10 % of the ideal time (a one-BDP buffer keeps the link busy through the
// 0.7 reductions).
#[test]
fn cubic_transfer_fills_a_one_bdp_buffer() {
    let cc = AnyController::Cubic(Cubic::new(CubicParams::default(), MSS));
    let mut pair = Pair::with_parts(config(10_000, 33), cc, Fifo);
    assert!(pair.drive_to_completion(Time::ZERO + Dur::from_secs(60)));
    assert_eq!(pair.receiver_stats().bytes_delivered, 10_000 * MSS as u64);
    assert!(pair.link_stats().dropped_full > 0);
    let payload_rate = RATE as f64 / 8.0 * MSS as f64 / (MSS + 40) as f64;
    let ideal = 10_000.0 * MSS as f64 / payload_rate;
    let done = pair.sender_stats().completed_at.unwrap().as_secs_f64();
    assert!(done < ideal * 1.10 + 0.2, "took {done:.2} s, ideal {ideal:.2} s");
}
