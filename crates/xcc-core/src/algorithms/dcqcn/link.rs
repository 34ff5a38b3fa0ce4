//! DCQCN's congestion point: RED's marking ramp on the *instantaneous* egress queue (Zhu et al.,
//! section 3.1: "the CP algorithm is the same as RED ... with ECN marking", on the current queue
//! rather than an average, as switches do it at line rate):
//!
//! ```text
//!   p(q) = 0                                    q ≤ Kmin
//!          Pmax·(q − Kmin)/(Kmax − Kmin)        Kmin < q ≤ Kmax
//!          1                                    q > Kmax
//! ```
//!
//! Each ECN-capable packet is marked CE with probability p(q), one uniform draw per packet
//! from the link's own stream, no count-based spacing (unlike FJ93's RED,
//! [`crate::algorithms::red::link`]). The queue is the one the packet joins, in bytes, the
//! arriving packet not counted. A packet that is not ECN-capable is queued, never dropped (a
//! lossless port drops nothing; only the buffer may, and under PFC it does not): the same
//! reason as DCTCP's switch ([`crate::algorithms::dctcp::link`]). The HPCC authors' ns-3 switch
//! marks at dequeue on the egress queue (`switch-node.cc`); this marks at enqueue, as the paper
//! describes RED.

use super::DcqcnQueueParams;
use crate::link::{LinkAlgorithm, QueueView, Verdict};
use crate::packet::Packet;
use crate::rng::{uniform01, Pcg64Mcg};
use crate::time::Time;

/// The marking rule of one egress port.
#[derive(Clone, Debug)]
pub struct DcqcnMarker {
    kmin: f64,
    kmax: f64,
    pmax: f64,
    rng: Pcg64Mcg,
    ect_arrivals: u64,
    marked: u64,
}

impl DcqcnMarker {
    /// The marker with `params`' Kmin, Kmax and Pmax (checked by their resolution), drawing
    /// from `rng`.
    pub fn new(params: &DcqcnQueueParams, rng: Pcg64Mcg) -> DcqcnMarker {
        DcqcnMarker {
            kmin: params.kmin_bytes as f64,
            kmax: params.kmax_bytes as f64,
            pmax: params.pmax,
            rng,
            ect_arrivals: 0,
            marked: 0,
        }
    }

    /// p(q) for a queue of `queue_bytes`.
    pub fn probability(&self, queue_bytes: u64) -> f64 {
        let q = queue_bytes as f64;
        if q <= self.kmin {
            0.0
        } else if q <= self.kmax {
            // Kmin < q ≤ Kmax implies Kmax > Kmin: no division by zero.
            self.pmax * (q - self.kmin) / (self.kmax - self.kmin)
        } else {
            1.0
        }
    }

    /// Whether a packet joining a queue of `queue_bytes` is marked, given a uniform draw in
    /// [0, 1) ([`crate::rng::uniform01`]).
    pub fn should_mark(&self, queue_bytes: u64, uniform: f64) -> bool {
        uniform < self.probability(queue_bytes)
    }
}

impl LinkAlgorithm for DcqcnMarker {
    #[inline]
    fn on_enqueue(&mut self, _now: Time, pkt: &mut Packet, queue: &mut dyn QueueView) -> Verdict {
        if !pkt.ecn.is_ect() {
            return Verdict::Queue;
        }
        self.ect_arrivals += 1;
        let p = self.probability(queue.backlog_bytes());
        // No draw below Kmin (p = 0) or above Kmax (p = 1): the stream moves only on the ramp.
        let mark = p >= 1.0 || (p > 0.0 && uniform01(&mut self.rng) < p);
        if mark {
            self.marked += 1;
            Verdict::Mark
        } else {
            Verdict::Queue
        }
    }

    /// The fraction of ECN-capable arrivals marked so far.
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
    use crate::rng::component_rng;
    use crate::wire::Ecn;

    fn marker(p: &DcqcnQueueParams) -> DcqcnMarker {
        DcqcnMarker::new(p, component_rng(1, 4, 0))
    }

    // Kmin = 5 KB, Kmax = 200 KB, Pmax = 1 %:
    //   q:  0      5,000   5,001      102,500   200,000   200,001
    //   p:  0      0       0.01/195k  0.005     0.01      1
    #[test]
    fn the_ramp_of_the_paper() {
        let m = marker(&DcqcnQueueParams::default());
        assert_eq!(m.probability(0), 0.0);
        assert_eq!(m.probability(5_000), 0.0);
        assert!((m.probability(5_001) - 0.01 / 195_000.0).abs() < 1e-15);
        assert!((m.probability(102_500) - 0.005).abs() < 1e-15);
        assert!((m.probability(200_000) - 0.01).abs() < 1e-15);
        assert_eq!(m.probability(200_001), 1.0);
        assert!(m.should_mark(102_500, 0.004_9));
        assert!(!m.should_mark(102_500, 0.005));
        assert!(m.should_mark(1_000_000, 0.999_999));
        assert!(!m.should_mark(4_000, 0.0));
    }

    // Kmin = Kmax = K, Pmax = 1: DCTCP's step, "mark every packet above K".
    #[test]
    fn equal_thresholds_give_a_step() {
        let p = DcqcnQueueParams { kmin_bytes: 30_000, kmax_bytes: 30_000, pmax: 1.0 };
        let m = marker(&p);
        assert_eq!(m.probability(30_000), 0.0);
        assert_eq!(m.probability(30_001), 1.0);
    }

    // On the ramp's middle (p = 0.005) 200,000 ECN-capable arrivals are marked 1,000 ± 3·31.6
    // times (binomial); a packet that is not ECN-capable is queued unmarked even above Kmax.
    #[test]
    fn marks_at_the_ramp_rate_and_never_drops() {
        let mut m = marker(&DcqcnQueueParams::default());
        let mut q = FakeQueue::bytes(102_500);
        let mut marks = 0;
        for _ in 0..200_000 {
            let mut pkt = Packet { wire_bytes: 1500, ecn: Ecn::Ect0, ..Packet::default() };
            marks += (m.on_enqueue(Time::ZERO, &mut pkt, &mut q) == Verdict::Mark) as u32;
        }
        assert!((905..=1095).contains(&marks), "{marks}");
        assert!((m.gauge() - marks as f64 / 200_000.0).abs() < 1e-12);
        q.bytes = 1_000_000;
        let mut plain = Packet { wire_bytes: 1500, ecn: Ecn::NotEct, ..Packet::default() };
        assert_eq!(m.on_enqueue(Time::ZERO, &mut plain, &mut q), Verdict::Queue);
    }
}
