//! DCTCP's switch: "mark arriving packets with the CE codepoint if the queue occupancy is
//! greater than K upon its arrival" (Alizadeh et al., section 3.1) — a step on the
//! instantaneous queue, no averaging, no randomness.
//!
//! Why a queue kind of its own rather than RED with a step: RED gives the same step on
//! ECN-capable packets (`w_q = 1`, `min_th = K`, `max_th = K + 1`, mark mode; the test below
//! checks it packet by packet), but (1) the paper's switch has one parameter, K, and RED's
//! spelling of it is a trick of four fields; (2) RED in mark mode *drops* a packet that is not
//! ECN-capable wherever it would mark one (RFC 3168 section 5), so every retransmission
//! (Not-ECT, RFC 3168 section 6.1.5) that meets a queue above K would be lost again. The DCTCP
//! switch marks what can be marked and queues the rest (the HPCC authors' ns-3 switch, used for
//! their DCTCP runs, sets CE without dropping); only the buffer drops.

use super::QueueUnit;
use crate::link::{LinkAlgorithm, QueueView, Verdict};
use crate::packet::Packet;
use crate::time::Time;

/// The marking rule of one egress port.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct DctcpMarker {
    k: u64,
    unit: QueueUnit,
    /// ECN-capable arrivals and those marked, for the gauge.
    ect_arrivals: u64,
    marked: u64,
}

impl DctcpMarker {
    /// The marker with threshold `k` counted in `unit`.
    pub fn new(k: u64, unit: QueueUnit) -> DctcpMarker {
        DctcpMarker { k, unit, ect_arrivals: 0, marked: 0 }
    }

    /// Whether a packet arriving to a queue of `queue` (in the marker's unit, the arriving
    /// packet not counted) is marked, if it is ECN-capable.
    pub fn should_mark(&self, queue: u64) -> bool {
        queue > self.k
    }
}

impl LinkAlgorithm for DctcpMarker {
    #[inline]
    fn on_enqueue(&mut self, _now: Time, pkt: &mut Packet, queue: &mut dyn QueueView) -> Verdict {
        if !pkt.ecn.is_ect() {
            return Verdict::Queue;
        }
        self.ect_arrivals += 1;
        let q = match self.unit {
            QueueUnit::Packets => queue.backlog_packets() as u64,
            QueueUnit::Bytes => queue.backlog_bytes(),
        };
        if self.should_mark(q) {
            self.marked += 1;
            Verdict::Mark
        } else {
            Verdict::Queue
        }
    }

    /// The fraction of ECN-capable arrivals marked so far (what a long flow's alpha tracks).
    fn gauge(&self) -> f64 {
        if self.ect_arrivals == 0 {
            0.0
        } else {
            self.marked as f64 / self.ect_arrivals as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::fake_queue::FakeQueue;
    use crate::wire::Ecn;

    fn ect() -> Packet {
        Packet { wire_bytes: 1500, ecn: Ecn::Ect0, ..Packet::default() }
    }

    /// Strictly above K, in packets and in bytes; Not-ECT packets are queued, never dropped;
    /// the gauge is the marked fraction of ECN-capable arrivals.
    #[test]
    fn marks_ect_strictly_above_k_and_queues_the_rest() {
        let mut m = DctcpMarker::new(65, QueueUnit::Packets);
        let t = Time::ZERO;
        assert_eq!(m.on_enqueue(t, &mut ect(), &mut FakeQueue::busy(65)), Verdict::Queue);
        assert_eq!(m.on_enqueue(t, &mut ect(), &mut FakeQueue::busy(66)), Verdict::Mark);
        let mut not_ect = Packet { ecn: Ecn::NotEct, ..ect() };
        assert_eq!(m.on_enqueue(t, &mut not_ect, &mut FakeQueue::busy(500)), Verdict::Queue);
        assert_eq!(m.gauge(), 0.5);
        let mut b = DctcpMarker::new(30_000, QueueUnit::Bytes);
        assert_eq!(b.on_enqueue(t, &mut ect(), &mut FakeQueue::bytes(30_000)), Verdict::Queue);
        assert_eq!(b.on_enqueue(t, &mut ect(), &mut FakeQueue::bytes(30_001)), Verdict::Mark);
    }

    // xcclab's RED gives the same step on ECN-capable packets with w_q = 1 (no averaging),
    // min_th = K, max_th = K + 1 (bytes or packets), classic, mark mode: at q = K the early
    // region's probability is max_p·(K − K)/1 = 0, and from q = K + 1 on the forced region marks
    // every ECT packet. (It differs on Not-ECT packets, which RED drops there: see the module
    // docs.)
    #[test]
    fn red_with_unit_weight_and_adjacent_thresholds_is_the_same_step() {
        use crate::algorithms::red::link::{Red, RedAction, RedConfig, RedUnit, RedVariant};
        use crate::rng::{component_rng, kind};

        let k = 30_000u64;
        let cfg = RedConfig {
            w_q: 1.0,
            min_th: k as f64,
            max_th: k as f64 + 1.0,
            max_p: 1.0,
            unit: RedUnit::Bytes,
            variant: RedVariant::Classic,
            action: RedAction::Mark,
            mean_packet_bytes: 1500,
        };
        assert_eq!(cfg.validate(), Ok(()));
        let mut red = Red::new(cfg, component_rng(1, kind::LINK, 0));
        let mut step = DctcpMarker::new(k, QueueUnit::Bytes);
        // Queues rising through K and falling back, each arrival one microsecond apart.
        let queues: Vec<u64> = (0..=64).map(|i| k - 32 + i).chain((0..=64).map(|i| k + 32 - i)).collect();
        for (n, &bytes) in queues.iter().enumerate() {
            let now = Time::from_ns(n as u64 * 1000);
            let verdict = red.on_enqueue(now, &mut ect(), &mut FakeQueue::bytes(bytes));
            assert_eq!(verdict, step.on_enqueue(now, &mut ect(), &mut FakeQueue::bytes(bytes)), "queue {bytes} B");
        }
        // In packets: K = 65, marks from the 66th waiting packet on.
        let cfg = RedConfig { min_th: 65.0, max_th: 66.0, unit: RedUnit::Packets, ..cfg };
        let mut red = Red::new(cfg, component_rng(1, kind::LINK, 1));
        let mut step = DctcpMarker::new(65, QueueUnit::Packets);
        for (n, packets) in (60..72).chain((60..72).rev()).enumerate() {
            let now = Time::from_ns(n as u64 * 1000);
            let verdict = red.on_enqueue(now, &mut ect(), &mut FakeQueue::busy(packets));
            assert_eq!(verdict, step.on_enqueue(now, &mut ect(), &mut FakeQueue::busy(packets)), "{packets} packets");
            assert_eq!(verdict == Verdict::Mark, packets > 65);
        }
    }
}
