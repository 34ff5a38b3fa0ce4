//! RTT estimation and the retransmission timeout (RFC 6298).
//!
//! The estimator keeps the smoothed RTT (SRTT), its mean deviation (RTTVAR), the smallest and the
//! latest sample, and derives the retransmission timeout:
//!
//! - first sample R (RFC 6298 section 2.2): `SRTT = R`, `RTTVAR = R/2`;
//! - later samples (section 2.3): `RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R|`, then
//!   `SRTT = 7/8 SRTT + 1/8 R` (in that order: RTTVAR uses the old SRTT);
//! - `RTO = SRTT + max(G, 4 RTTVAR)`, before any sample the configured initial RTO (section 2.1);
//! - the RTO is raised to `min_rto` (section 2.4; RFC says 1 s, ns-2 and Linux use 200 ms) and
//!   capped at `max_rto` (section 2.5);
//! - each expiry doubles it (section 5.5, "back off the timer"), still capped at `max_rto`; the
//!   next valid sample cancels the back-off (section 5.7 and Karn's algorithm, section 3).
//!
//! Which ACKs give valid samples is the sender's business (timestamps, RFC 7323 section 4); the
//! estimator only does the arithmetic, in integer nanoseconds.

use crate::time::Dur;
use crate::transport::TransportConfig;

/// Largest back-off exponent kept (2^32 times any RTO is far beyond every `max_rto`).
const MAX_BACKOFF_SHIFT: u32 = 32;

/// SRTT, RTTVAR, min RTT, latest sample and the (backed-off) RTO of one sender.
#[derive(Copy, Clone, Debug)]
pub struct RttEstimator {
    srtt: Dur,
    rttvar: Dur,
    min_rtt: Dur,
    latest: Dur,
    has_sample: bool,
    /// Number of consecutive back-offs (the RTO is multiplied by `2^backoff`).
    backoff: u32,
    initial_rto: Dur,
    min_rto: Dur,
    max_rto: Dur,
    granularity: Dur,
}

impl RttEstimator {
    /// An estimator with no sample yet. `min_rto <= max_rto` is expected; `initial_rto` is used
    /// (bounded the same way) until the first sample.
    pub fn new(initial_rto: Dur, min_rto: Dur, max_rto: Dur, granularity: Dur) -> RttEstimator {
        RttEstimator {
            srtt: Dur::ZERO,
            rttvar: Dur::ZERO,
            min_rtt: Dur::ZERO,
            latest: Dur::ZERO,
            has_sample: false,
            backoff: 0,
            initial_rto,
            min_rto,
            max_rto: max_rto.max(min_rto),
            granularity,
        }
    }

    /// An estimator with the RTO parameters of a transport configuration.
    pub fn from_config(cfg: &TransportConfig) -> RttEstimator {
        RttEstimator::new(cfg.initial_rto, cfg.min_rto, cfg.max_rto, cfg.clock_granularity)
    }

    /// Feeds one valid RTT measurement (RFC 6298 sections 2.2 and 2.3) and cancels any back-off.
    #[inline]
    pub fn on_sample(&mut self, rtt: Dur) {
        self.latest = rtt;
        if !self.has_sample {
            self.has_sample = true;
            self.srtt = rtt;
            self.rttvar = Dur(rtt.0 / 2);
            self.min_rtt = rtt;
        } else {
            self.min_rtt = self.min_rtt.min(rtt);
            let err = self.srtt.0.abs_diff(rtt.0);
            // beta = 1/4, alpha = 1/8, computed in u128-free integer form: 3/4 x + 1/4 y.
            self.rttvar = Dur(self.rttvar.0 - self.rttvar.0 / 4 + err / 4);
            self.srtt = Dur(self.srtt.0 - self.srtt.0 / 8 + rtt.0 / 8);
        }
        self.backoff = 0;
    }

    /// Doubles the RTO after a retransmission-timer expiry (RFC 6298 section 5.5).
    pub fn on_backoff(&mut self) {
        self.backoff = (self.backoff + 1).min(MAX_BACKOFF_SHIFT);
    }

    /// True once a sample has been taken.
    pub fn has_sample(&self) -> bool {
        self.has_sample
    }
    /// Smoothed RTT, zero before the first sample.
    pub fn srtt(&self) -> Dur {
        self.srtt
    }
    /// RTT variation (mean deviation), zero before the first sample.
    pub fn rttvar(&self) -> Dur {
        self.rttvar
    }
    /// Smallest sample so far, zero before the first sample.
    pub fn min_rtt(&self) -> Dur {
        self.min_rtt
    }
    /// Most recent sample, zero before the first sample.
    pub fn latest(&self) -> Dur {
        self.latest
    }
    /// Consecutive back-offs since the last valid sample.
    pub fn backoff_count(&self) -> u32 {
        self.backoff
    }

    /// The RTO without back-off: `SRTT + max(G, 4 RTTVAR)` bounded to `[min_rto, max_rto]`, or
    /// the initial RTO (same bounds) before the first sample.
    pub fn base_rto(&self) -> Dur {
        let raw = if self.has_sample {
            self.srtt + self.granularity.max(self.rttvar.saturating_mul(4))
        } else {
            self.initial_rto
        };
        raw.max(self.min_rto).min(self.max_rto)
    }

    /// The RTO to arm now: the base RTO times `2^backoff`, capped at `max_rto`.
    #[inline]
    pub fn rto(&self) -> Dur {
        let base = self.base_rto();
        let factor = 1u64.checked_shl(self.backoff).unwrap_or(u64::MAX);
        base.saturating_mul(factor).min(self.max_rto)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est() -> RttEstimator {
        RttEstimator::new(Dur::from_secs(1), Dur::from_ms(200), Dur::from_secs(60), Dur::from_ms(1))
    }

    // No sample: RTO = initial 1 s.
    // sample 100 ms: SRTT = 100, RTTVAR = 50, RTO = 100 + 4*50 = 300 ms.
    #[test]
    fn first_sample_sets_srtt_and_half_rttvar() {
        let mut e = est();
        assert_eq!(e.rto(), Dur::from_secs(1));
        assert!(!e.has_sample());
        e.on_sample(Dur::from_ms(100));
        assert_eq!(e.srtt(), Dur::from_ms(100));
        assert_eq!(e.rttvar(), Dur::from_ms(50));
        assert_eq!(e.min_rtt(), Dur::from_ms(100));
        assert_eq!(e.rto(), Dur::from_ms(300));
    }

    // samples 100 ms then 200 ms:
    //   RTTVAR = 3/4*50 + 1/4*|100-200| = 37.5 + 25 = 62.5 ms
    //   SRTT   = 7/8*100 + 1/8*200      = 112.5 ms
    //   RTO    = 112.5 + 4*62.5         = 362.5 ms
    #[test]
    fn later_samples_follow_rfc6298_gains() {
        let mut e = est();
        e.on_sample(Dur::from_ms(100));
        e.on_sample(Dur::from_ms(200));
        assert_eq!(e.rttvar(), Dur::from_us(62_500));
        assert_eq!(e.srtt(), Dur::from_us(112_500));
        assert_eq!(e.rto(), Dur::from_us(362_500));
        assert_eq!(e.latest(), Dur::from_ms(200));
        assert_eq!(e.min_rtt(), Dur::from_ms(100));
        e.on_sample(Dur::from_ms(50));
        assert_eq!(e.min_rtt(), Dur::from_ms(50));
    }

    // 1 ms samples forever: SRTT + 4 RTTVAR -> 1 ms, so RTO = min_rto (200 ms); G dominates a
    // zero variance; huge samples are capped at max_rto.
    #[test]
    fn rto_is_bounded() {
        let mut e = est();
        for _ in 0..50 {
            e.on_sample(Dur::from_ms(1));
        }
        assert_eq!(e.rto(), Dur::from_ms(200));
        let mut g = RttEstimator::new(Dur::from_secs(1), Dur::ZERO, Dur::from_secs(60), Dur::from_ms(10));
        for _ in 0..200 {
            g.on_sample(Dur::from_ms(100));
        }
        // RTTVAR decays to (nearly) zero, so RTO = SRTT + G.
        assert_eq!(g.rto(), Dur::from_ms(110));
        let mut h = est();
        h.on_sample(Dur::from_secs(100));
        assert_eq!(h.rto(), Dur::from_secs(60));
    }

    // RTO 300 ms -> expiry -> 600 -> 1200 -> ... capped at 60 s; a new sample resets.
    #[test]
    fn backoff_doubles_up_to_max_and_sample_resets() {
        let mut e = est();
        e.on_sample(Dur::from_ms(100));
        e.on_backoff();
        assert_eq!(e.rto(), Dur::from_ms(600));
        e.on_backoff();
        assert_eq!(e.rto(), Dur::from_ms(1200));
        for _ in 0..100 {
            e.on_backoff();
        }
        assert_eq!(e.rto(), Dur::from_secs(60));
        e.on_sample(Dur::from_ms(100));
        assert_eq!(e.backoff_count(), 0);
        assert!(e.rto() < Dur::from_secs(1));
    }
}
