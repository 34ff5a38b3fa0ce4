//! RTT estimation and the retransmission timeout: RFC 6298 (the default) or Linux's.
//!
//! With [`RtoPolicy::Rfc6298`] the estimator keeps the smoothed RTT (SRTT), its mean deviation (RTTVAR), the smallest and the
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
//! With [`RtoPolicy::Linux`] it follows `tcp_rtt_estimator` and `tcp_set_rto`
//! (`net/ipv4/tcp_input.c`): the same SRTT gain 1/8, a mean deviation `mdev` with gain 1/4 (but
//! 1/32 when the sample is below SRTT, "similar to one of Eifel findings"), and an `rttvar` that
//! is the largest `4 mdev` of the current round, never below `tcp_rto_min` (200 ms), decaying
//! by a quarter of its excess once per round (a round ends when SND.UNA passes the SND.NXT of
//! its start). `RTO = SRTT + rttvar`, capped at `max_rto` (`tcp_bound_rto`). The difference that
//! matters: the 200 ms minimum bounds the variance term, so Linux's RTO is SRTT + 200 ms or
//! more, where RFC 6298's is max(200 ms, SRTT + 4 RTTVAR), close to SRTT once the RTT is steady.
//! Behind a deep buffer (SRTT 200 ms) the RFC's timer can fire while a fast recovery is still
//! repairing a window; Linux's cannot.
//!
//! Which ACKs give valid samples is the sender's business (timestamps, RFC 7323 section 4); the
//! estimator only does the arithmetic, in integer nanoseconds.

use crate::time::Dur;
use crate::transport::{RtoPolicy, TransportConfig};

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
    policy: RtoPolicy,
    linux: LinuxRto,
}

/// Linux's estimator state (`tcp_sock`'s `mdev_us`, `mdev_max_us`, `rttvar_us`, `rtt_seq`), in ns.
#[derive(Copy, Clone, Debug, Default)]
struct LinuxRto {
    /// Four times the mean deviation (Linux's `mdev_us` is kept at that scale).
    mdev4: u64,
    /// The largest `mdev4` of the current round, at least `min_rto`.
    mdev_max: u64,
    /// The variance term of the RTO: at least `min_rto`.
    rttvar: u64,
    /// The round ends when SND.UNA passes this sequence number (SND.NXT at its start).
    rtt_seq: u32,
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
            policy: RtoPolicy::Rfc6298,
            linux: LinuxRto::default(),
        }
    }

    /// The same estimator computing its RTO by `policy`.
    pub fn with_policy(mut self, policy: RtoPolicy) -> RttEstimator {
        self.policy = policy;
        self
    }

    /// An estimator with the RTO parameters of a transport configuration.
    pub fn from_config(cfg: &TransportConfig) -> RttEstimator {
        RttEstimator::new(cfg.initial_rto, cfg.min_rto, cfg.max_rto, cfg.clock_granularity).with_policy(cfg.rto)
    }

    /// Feeds one valid RTT measurement taken on an ACK that moved SND.UNA to `snd_una` while
    /// SND.NXT is `snd_nxt` (segment numbers): the Linux policy
    /// counts its rounds by them, RFC 6298 ignores them.
    #[inline]
    pub fn on_ack_sample(&mut self, rtt: Dur, snd_una: u32, snd_nxt: u32) {
        match self.policy {
            RtoPolicy::Rfc6298 => self.on_sample(rtt),
            RtoPolicy::Linux => self.on_linux_sample(rtt, snd_una, snd_nxt),
        }
    }

    /// `tcp_rtt_estimator` (see the module's doc), in ns; SRTT is kept unscaled, rounded as
    /// RFC 6298's.
    fn on_linux_sample(&mut self, rtt: Dur, snd_una: u32, snd_nxt: u32) {
        let min_rto = self.min_rto.0;
        let l = &mut self.linux;
        let m = rtt.0;
        self.latest = rtt;
        self.backoff = 0;
        if !self.has_sample {
            self.has_sample = true;
            self.srtt = rtt;
            self.min_rtt = rtt;
            // "make sure rto = 3*rtt": mdev = 2 R at the 4x scale, i.e. RFC 6298's R/2.
            l.mdev4 = m.saturating_mul(2);
            l.rttvar = l.mdev4.max(min_rto);
            l.mdev_max = l.rttvar;
            l.rtt_seq = snd_nxt;
            return;
        }
        self.min_rtt = self.min_rtt.min(rtt);
        let srtt = self.srtt.0;
        self.srtt = Dur(srtt - srtt / 8 + m / 8);
        let quarter = l.mdev4 / 4;
        if m < srtt {
            // A sample below SRTT moves mdev by 1/32 only (and never raises it by much).
            let err = srtt - m;
            if err > quarter {
                l.mdev4 += (err - quarter) / 8;
            } else {
                l.mdev4 -= quarter - err;
            }
        } else {
            // mdev = 3/4 mdev + 1/4 |err| at the 4x scale.
            l.mdev4 = l.mdev4 - quarter + (m - srtt);
        }
        if l.mdev4 > l.mdev_max {
            l.mdev_max = l.mdev4;
            l.rttvar = l.rttvar.max(l.mdev_max);
        }
        if snd_una > l.rtt_seq {
            // A round is over: rttvar decays toward the round's largest mdev, at least min_rto.
            if l.mdev_max < l.rttvar {
                l.rttvar -= (l.rttvar - l.mdev_max) / 4;
            }
            l.rtt_seq = snd_nxt;
            l.mdev_max = min_rto;
        }
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
        match self.policy {
            RtoPolicy::Rfc6298 => self.rttvar,
            RtoPolicy::Linux => Dur(self.linux.mdev4 / 4),
        }
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

    /// The RTO without back-off: `SRTT + max(G, 4 RTTVAR)` bounded to `[min_rto, max_rto]`
    /// (RFC 6298) or `SRTT + rttvar` capped at `max_rto` (Linux), or the initial RTO (bounded as
    /// RFC 6298's) before the first sample.
    pub fn base_rto(&self) -> Dur {
        let raw = match (self.has_sample, self.policy) {
            (false, _) => self.initial_rto,
            (true, RtoPolicy::Rfc6298) => self.srtt + self.granularity.max(self.rttvar.saturating_mul(4)),
            (true, RtoPolicy::Linux) => return (self.srtt + Dur(self.linux.rttvar)).min(self.max_rto),
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

    fn linux() -> RttEstimator {
        est().with_policy(RtoPolicy::Linux)
    }

    // Linux, first sample 40 ms: mdev = 2 R = 80 ms, rttvar = max(80, 200) = 200 ms, so
    // RTO = 40 + 200 = 240 ms (RFC 6298: max(200, 40 + 4 * 20) = 200 ms).
    #[test]
    fn linux_first_sample_adds_min_rto_to_srtt() {
        let mut l = linux();
        l.on_ack_sample(Dur::from_ms(40), 0, 10);
        assert_eq!(l.srtt(), Dur::from_ms(40));
        assert_eq!(l.rto(), Dur::from_ms(240));
        let mut r = est();
        r.on_ack_sample(Dur::from_ms(40), 0, 10);
        assert_eq!(r.rto(), Dur::from_ms(200));
    }

    // A steady RTT behind a deep buffer, 200 ms, for many rounds: RFC 6298's RTO shrinks to
    // SRTT + G -> 201 ms; Linux's stays SRTT + 200 ms = 400 ms.
    #[test]
    fn linux_rto_keeps_min_rto_above_a_steady_srtt() {
        let (mut l, mut r) = (linux(), est());
        for k in 0..200u32 {
            l.on_ack_sample(Dur::from_ms(200), 10 * k + 1, 10 * k + 10);
            r.on_ack_sample(Dur::from_ms(200), 10 * k + 1, 10 * k + 10);
        }
        // rttvar decays geometrically to 200 ms (integer ns: it stops a few ns above).
        assert!(l.rto().0.abs_diff(Dur::from_ms(400).0) < 1_000, "Linux: {:?}", l.rto());
        assert!(r.rto() <= Dur::from_ms(201), "RFC 6298: {:?}", r.rto());
    }

    // First sample 150 ms: mdev4 = 300, rttvar = mdev_max = 300, round ends after seq 10.
    // Sample 150 ms acking to 11 (round over): mdev4 = 300 - 75 + 0 = 225 (not above the
    //   round's max 300); rttvar 300 is not above mdev_max 300: unchanged; mdev_max := 200.
    // Sample 150 ms acking to 21 (> 20, round over): mdev4 = 225 - 56.25 = 168.75; rttvar
    //   decays by (300 - 200) / 4 = 25 -> 275 ms; RTO = 150 + 275 = 425 ms.
    // Sample 150 ms acking to 25 (round not over): mdev4 falls, rttvar stays 275.
    #[test]
    fn linux_rttvar_decays_once_per_round() {
        let mut l = linux();
        l.on_ack_sample(Dur::from_ms(150), 0, 10);
        assert_eq!(l.rto(), Dur::from_ms(450));
        l.on_ack_sample(Dur::from_ms(150), 11, 20);
        assert_eq!(l.rto(), Dur::from_ms(450));
        assert_eq!(l.rttvar(), Dur::from_us(56_250));
        l.on_ack_sample(Dur::from_ms(150), 21, 30);
        assert_eq!(l.rto(), Dur::from_ms(425));
        l.on_ack_sample(Dur::from_ms(150), 25, 30);
        assert_eq!(l.rto(), Dur::from_ms(425));
    }

    // Samples below SRTT move mdev by 1/32 (Linux's Eifel-like rule): first 100 ms (mdev4 =
    // 200 ms), then 20 ms: |err| = 80, a quarter of mdev4 is 50, so mdev4 += 30 / 8 = 3.75 ms.
    // A sample above SRTT by 80 ms instead: mdev4 = 200 - 50 + 80 = 230 ms, and rttvar follows.
    #[test]
    fn linux_mdev_gain_is_smaller_for_samples_below_srtt() {
        let mut l = linux();
        l.on_ack_sample(Dur::from_ms(100), 0, 10);
        l.on_ack_sample(Dur::from_ms(20), 1, 10);
        assert_eq!(l.rttvar(), Dur::from_us(50_937) + Dur(500));
        assert_eq!(l.srtt(), Dur::from_ms(90));
        let mut h = linux();
        h.on_ack_sample(Dur::from_ms(100), 0, 10);
        h.on_ack_sample(Dur::from_ms(180), 1, 10);
        assert_eq!(h.rttvar(), Dur::from_us(57_500));
        // rttvar = max(200, 230) = 230; RTO = SRTT 110 + 230.
        assert_eq!(h.rto(), Dur::from_ms(340));
    }

    // Back-off and the cap work as for RFC 6298.
    #[test]
    fn linux_rto_backs_off_and_is_capped() {
        let mut l = linux();
        l.on_ack_sample(Dur::from_ms(40), 0, 10);
        l.on_backoff();
        assert_eq!(l.rto(), Dur::from_ms(480));
        l.on_ack_sample(Dur::from_secs(100), 1, 10);
        assert_eq!(l.rto(), Dur::from_secs(60));
    }
}
