//! DCTCP's switch: "mark arriving packets with the CE codepoint if the queue occupancy is
//! greater than K upon its arrival" (Alizadeh et al., section 3.1) — a step on the
//! instantaneous queue, no averaging, no randomness.

use super::DctcpParams;

/// The marking rule of one egress port.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct DctcpMarker {
    k_bytes: u64,
}

impl DctcpMarker {
    /// The marker with `params`' K (checked).
    pub fn new(params: &DctcpParams) -> Result<DctcpMarker, String> {
        params.check()?;
        Ok(DctcpMarker { k_bytes: params.k_bytes })
    }

    /// Whether a packet arriving to a queue of `queue_bytes` is marked.
    pub fn should_mark(&self, queue_bytes: u64) -> bool {
        queue_bytes > self.k_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_strictly_above_k() {
        let m = DctcpMarker::new(&DctcpParams { k_bytes: 30_000, ..Default::default() }).unwrap();
        assert!(!m.should_mark(0));
        assert!(!m.should_mark(30_000));
        assert!(m.should_mark(30_001));
    }

    // xcclab's RED gives the same step with w_q = 1 (no averaging), min_th = K, max_th = K + 1
    // (bytes or packets), classic, mark mode: at q = K the early region's probability is
    // max_p·(K − K)/1 = 0, and from q = K + 1 on the forced region marks every ECT packet. So a
    // scenario can run DCTCP's switch as `queue = { kind = "red", w_q = 1.0, min_th = "65pkt",
    // max_th = "66pkt", action = "mark" }` without a new queue.
    #[test]
    fn red_with_unit_weight_and_adjacent_thresholds_is_the_same_step() {
        use crate::algorithms::red::link::{Red, RedAction, RedConfig, RedUnit, RedVariant};
        use crate::link::fake_queue::FakeQueue;
        use crate::link::{LinkAlgorithm, Verdict};
        use crate::packet::Packet;
        use crate::rng::{component_rng, kind};
        use crate::time::Time;
        use crate::wire::Ecn;

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
        let step = DctcpMarker::new(&DctcpParams { k_bytes: k, ..Default::default() }).unwrap();
        // Queues rising through K and falling back, each arrival one microsecond apart.
        let queues: Vec<u64> = (0..=64).map(|i| k - 32 + i).chain((0..=64).map(|i| k + 32 - i)).collect();
        for (n, &bytes) in queues.iter().enumerate() {
            let mut q = FakeQueue::bytes(bytes);
            let mut pkt = Packet { wire_bytes: 1500, ecn: Ecn::Ect0, ..Packet::default() };
            let verdict = red.on_enqueue(Time::from_ns(n as u64 * 1000), &mut pkt, &mut q);
            let want = if step.should_mark(bytes) { Verdict::Mark } else { Verdict::Queue };
            assert_eq!(verdict, want, "queue {bytes} B");
        }
        // In packets: K = 65, marks from the 66th waiting packet on.
        let cfg = RedConfig { min_th: 65.0, max_th: 66.0, unit: RedUnit::Packets, ..cfg };
        let mut red = Red::new(cfg, component_rng(1, kind::LINK, 1));
        for (n, packets) in (60..72).chain((60..72).rev()).enumerate() {
            let mut q = FakeQueue::busy(packets);
            let mut pkt = Packet { wire_bytes: 1500, ecn: Ecn::Ect0, ..Packet::default() };
            let verdict = red.on_enqueue(Time::from_ns(n as u64 * 1000), &mut pkt, &mut q);
            assert_eq!(verdict == Verdict::Mark, packets > 65, "queue {packets} packets");
        }
    }
}
