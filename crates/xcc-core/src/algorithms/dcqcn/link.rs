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
//! Each packet is marked CE with probability p(q), one uniform draw per packet, no count-based
//! spacing (unlike FJ93's RED, [`crate::algorithms::red::link`]). The queue is the one the packet joins.

use super::DcqcnParams;

/// The marking rule of one egress port.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct DcqcnMarker {
    kmin: f64,
    kmax: f64,
    pmax: f64,
}

impl DcqcnMarker {
    /// The marker with `params`' Kmin, Kmax and Pmax (checked).
    pub fn new(params: &DcqcnParams) -> Result<DcqcnMarker, String> {
        params.check()?;
        Ok(DcqcnMarker { kmin: params.kmin_bytes as f64, kmax: params.kmax_bytes as f64, pmax: params.pmax })
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

#[cfg(test)]
mod tests {
    use super::*;

    // Kmin = 5 KB, Kmax = 200 KB, Pmax = 1 %:
    //   q:  0      5,000   5,001      102,500   200,000   200,001
    //   p:  0      0       0.01/195k  0.005     0.01      1
    #[test]
    fn the_ramp_of_the_paper() {
        let m = DcqcnMarker::new(&DcqcnParams::default()).unwrap();
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
        let p = DcqcnParams { kmin_bytes: 30_000, kmax_bytes: 30_000, pmax: 1.0, ..Default::default() };
        let m = DcqcnMarker::new(&p).unwrap();
        assert_eq!(m.probability(30_000), 0.0);
        assert_eq!(m.probability(30_001), 1.0);
    }
}
