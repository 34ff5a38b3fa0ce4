//! CUBIC's sender law, in the kernel's units (`net/ipv4/tcp_cubic.c`, RFC 9438).
//!
//! - **Window in segments.** Linux counts `snd_cwnd` in segments and grows it through
//!   `tcp_cong_avoid_ai`: one segment after `cnt` segments are acknowledged. This controller
//!   does the same and reports `cwnd * MSS` bytes; acknowledged bytes are turned into segments
//!   with the remainder carried.
//! - **Slow start** adds every acknowledged segment up to `ssthresh` (`tcp_slow_start`; no
//!   per-ACK limit), and HyStart may end it early by setting `ssthresh = cwnd`.
//! - **Congestion avoidance** (`bictcp_update`): at most once per jiffy (and at least every
//!   HZ/32 when cwnd is unchanged) the target `W(t + delay_min)` is computed in fixed point,
//!   time in 1/1024 s and `C / 1024` scaled by 2^40, and `cnt = cwnd / (target - cwnd)`
//!   segments per increment; then the Reno-friendly estimate may lower `cnt`, never below 2
//!   (cwnd at most x1.5 per RTT).
//! - **Reduction** (`cubictcp_recalc_ssthresh`): the epoch ends, `W_max` is cwnd (or
//!   `cwnd (1 + beta) / 2` with fast convergence when cwnd is below the previous `W_max`), and
//!   `ssthresh = max(cwnd beta, 2)`. Linux's PRR then walks cwnd down to ssthresh during
//!   recovery and sets it there at the end (`tcp_end_cwnd_reduction`); the shared transport has
//!   no PRR, so cwnd drops to ssthresh at once (its pipe still releases one segment per
//!   segment that leaves, as RFC 6675 does).
//! - **Timeout**: ssthresh as on a loss, cwnd 1 segment, and the whole CUBIC and HyStart state
//!   reset (`cubictcp_state` on `TCP_CA_Loss`), `W_max` included.
//! - **Idle**: when data leaves with nothing in flight, the epoch start moves forward by the
//!   time since the last send (`cubictcp_cwnd_event`, `CA_EVENT_TX_START`), so an
//!   application pause does not count as time on the cubic curve.

use super::CubicParams;
use crate::host::{AckEvent, CongestionEvent, Controller};
use crate::time::{Dur, Time};

/// `BICTCP_BETA_SCALE`: beta is a fraction of 1024 (tcp_cubic.c).
const BETA_SCALE: u32 = 1024;
/// `BICTCP_HZ`: CUBIC's time unit is 2^-10 s (tcp_cubic.c).
const BICTCP_HZ: u32 = 10;
/// `HYSTART_MIN_SAMPLES`: RTT samples per round before the delay exit may fire.
const HYSTART_MIN_SAMPLES: u8 = 8;
/// `HYSTART_DELAY_MIN` / `HYSTART_DELAY_MAX` (µs): the delay exit's threshold is
/// `delay_min / 8` clamped to 4..16 ms.
const HYSTART_DELAY_MIN_US: u32 = 4_000;
const HYSTART_DELAY_MAX_US: u32 = 16_000;
/// `sk_gso_max_size` the kernel assumes in `hystart_ack_delay` (`GSO_LEGACY_MAX_SIZE`).
const GSO_MAX_BYTES: u64 = 65_536;
/// `TCP_INFINITE_SSTHRESH`.
const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

/// Floor of the cube root of `a` (Linux approximates it with a table and one Newton step,
/// `cubic_root`, average error 0.195 %; this one is exact, so `K` may differ by a few 1/1024 s).
pub fn cube_root(a: u64) -> u32 {
    if a == 0 {
        return 0;
    }
    let mut x = (a as f64).cbrt() as u64;
    // Correct the float estimate to the exact floor.
    while x > 0 && x.checked_pow(3).is_none_or(|c| c > a) {
        x -= 1;
    }
    while (x + 1).checked_pow(3).is_some_and(|c| c <= a) {
        x += 1;
    }
    x as u32
}

/// `cube_factor` of `cubictcp_register`: `2^(10 + 3 BICTCP_HZ) / (bic_scale * 10)`, so that
/// `K = cbrt(cube_factor * (W_max - cwnd))` is in 1/1024 s.
pub fn cube_factor(bic_scale: u32) -> u64 {
    (1u64 << (10 + 3 * BICTCP_HZ)) / (bic_scale as u64 * 10)
}

/// `K` in 1/1024 s for a window `gap = W_max - cwnd` segments below the origin.
pub fn kernel_k(gap: u32, bic_scale: u32) -> u32 {
    cube_root(cube_factor(bic_scale) * gap as u64)
}

/// The kernel's fixed-point cubic: the target window (segments) at time `t` (1/1024 s since the
/// epoch start, the RTT already added) for origin `origin` and `k` (1/1024 s):
/// `origin +- (bic_scale * 10 * |t - K|^3) >> 40`.
pub fn kernel_target(origin: u32, k: u32, t: u64, bic_scale: u32) -> u32 {
    let k = k as u64;
    let offs = t.abs_diff(k);
    let delta = ((bic_scale as u64 * 10) * offs * offs * offs) >> (10 + 3 * BICTCP_HZ);
    if t < k {
        origin.wrapping_sub(delta as u32)
    } else {
        origin.wrapping_add(delta as u32)
    }
}

/// CUBIC's state: the kernel's `struct bictcp` plus the window it governs.
#[derive(Debug, Clone)]
pub struct Cubic {
    p: CubicParams,
    mss: u64,
    /// `snd_cwnd`, `snd_cwnd_cnt` and `snd_ssthresh`, in segments.
    cwnd: u32,
    cwnd_cnt: u32,
    ssthresh: u32,
    /// Acknowledged bytes not yet a whole segment.
    acked_rem: u64,
    /// `cnt`: segments to acknowledge per one-segment increase.
    cnt: u32,
    last_max_cwnd: u32,
    last_cwnd: u32,
    last_time: u64,
    origin: u32,
    k: u32,
    /// Smallest RTT sample, µs (0: none yet).
    delay_min_us: u32,
    /// Epoch start in jiffies (`None`: no epoch, the next update starts one).
    epoch_start: Option<u64>,
    ack_cnt: u32,
    tcp_cwnd: u32,
    /// HyStart: the exit was found; samples this round; round start and last train ACK (µs);
    /// the round ends when this many bytes are acknowledged; the round's smallest RTT (µs).
    found: bool,
    sample_cnt: u8,
    round_start_us: u64,
    last_ack_us: u64,
    end_seq: u64,
    curr_rtt_us: u32,
    /// Bytes ever sent and ever cumulatively acknowledged (sequence-space stand-ins).
    sent_total: u64,
    acked_total: u64,
    /// When data last left (`lsndtime`), and whether nothing was in flight since the last ACK.
    last_send: Time,
    idle: bool,
    srtt: Dur,
    /// What a reduction took, for its undo (`tcp_sock`'s `prior_cwnd`, `prior_ssthresh`; 0: no
    /// undo), and whether a loss reduction is in progress (`tcp_in_cwnd_reduction`).
    prior_cwnd: u32,
    prior_ssthresh: u32,
    reducing: bool,
}

impl Cubic {
    /// A controller in slow start with the initial window. Call [`CubicParams::check`] first.
    pub fn new(p: CubicParams, mss_bytes: u32) -> Cubic {
        Cubic {
            p,
            mss: mss_bytes.max(1) as u64,
            cwnd: p.initial_window.max(1),
            cwnd_cnt: 0,
            ssthresh: INFINITE_SSTHRESH,
            acked_rem: 0,
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            origin: 0,
            k: 0,
            delay_min_us: 0,
            epoch_start: None,
            ack_cnt: 0,
            tcp_cwnd: 0,
            found: false,
            sample_cnt: 0,
            round_start_us: 0,
            last_ack_us: 0,
            end_seq: 0,
            curr_rtt_us: u32::MAX,
            sent_total: 0,
            acked_total: 0,
            last_send: Time::ZERO,
            idle: true,
            srtt: Dur::ZERO,
            prior_cwnd: 0,
            prior_ssthresh: 0,
            reducing: false,
        }
    }

    /// Congestion window in segments.
    pub fn cwnd_segments(&self) -> u32 {
        self.cwnd
    }

    /// `W_max`, the window (segments) of the last reduction (0 before the first).
    pub fn w_max_segments(&self) -> u32 {
        self.last_max_cwnd
    }

    /// `K` of the current epoch, in seconds.
    pub fn k_secs(&self) -> f64 {
        self.k as f64 / 1024.0
    }

    /// HyStart found the exit from slow start.
    pub fn hystart_found(&self) -> bool {
        self.found
    }

    fn jiffies(&self, now: Time) -> u64 {
        (now.0 as u128 * self.p.hz as u128 / 1_000_000_000) as u64
    }

    /// `usecs_to_jiffies`: rounded up.
    fn us_to_jiffies(&self, us: u32) -> u64 {
        (us as u64 * self.p.hz as u64).div_ceil(1_000_000)
    }

    fn hystart_reset(&mut self, now_us: u64) {
        self.round_start_us = now_us;
        self.last_ack_us = now_us;
        self.end_seq = self.sent_total;
        self.curr_rtt_us = u32::MAX;
        self.sample_cnt = 0;
    }

    /// `bictcp_reset`: everything CUBIC learnt, `W_max` and `delay_min` included.
    fn reset(&mut self) {
        self.cnt = 0;
        self.last_max_cwnd = 0;
        self.last_cwnd = 0;
        self.last_time = 0;
        self.origin = 0;
        self.k = 0;
        self.delay_min_us = 0;
        self.epoch_start = None;
        self.ack_cnt = 0;
        self.tcp_cwnd = 0;
        self.found = false;
    }

    /// `hystart_ack_delay`: a cushion for TSO/GRO batching, `4 GSO / pacing rate` capped at
    /// 1 ms, with the pacing rate Linux derives for non-paced flows (`tcp_update_pacing_rate`:
    /// 2 cwnd MSS / SRTT in slow start).
    fn hystart_ack_delay_us(&self) -> u64 {
        let srtt_us = self.srtt.as_ns() / 1000;
        if srtt_us == 0 {
            return 0;
        }
        let rate = 2 * self.cwnd as u64 * self.mss * 1_000_000 / srtt_us; // bytes/s
        if rate == 0 {
            return 0;
        }
        (GSO_MAX_BYTES * 4 * 1_000_000 / rate).min(1000)
    }

    /// `hystart_update`: the ACK-train and delay exits.
    fn hystart_update(&mut self, now_us: u64, delay_us: u32) {
        if self.acked_total > self.end_seq {
            self.hystart_reset(now_us);
        }
        if self.cwnd < self.p.hystart_low_window {
            return;
        }
        if self.p.hystart_ack_train && now_us.saturating_sub(self.last_ack_us) <= self.p.hystart_ack_delta_us as u64 {
            self.last_ack_us = now_us;
            // Without a pacing qdisc (SK_PACING_NONE) the train only has to outlast half the
            // base RTT: the ACKs of one window arrive within it unless a queue spreads them.
            let threshold = (self.delay_min_us as u64 + self.hystart_ack_delay_us()) >> 1;
            if now_us - self.round_start_us > threshold {
                self.found = true;
                self.ssthresh = self.cwnd;
            }
        }
        if self.p.hystart_delay {
            self.curr_rtt_us = self.curr_rtt_us.min(delay_us);
            if self.sample_cnt < HYSTART_MIN_SAMPLES {
                self.sample_cnt += 1;
            } else {
                let thresh = (self.delay_min_us >> 3).clamp(HYSTART_DELAY_MIN_US, HYSTART_DELAY_MAX_US);
                if self.curr_rtt_us > self.delay_min_us + thresh {
                    self.found = true;
                    self.ssthresh = self.cwnd;
                }
            }
        }
    }

    /// `cubictcp_acked`: an RTT sample feeds `delay_min` and HyStart.
    fn on_delay_sample(&mut self, now: Time, rtt: Dur) {
        // Samples within a second of a reduction are skewed by the recovery: discarded.
        if let Some(e) = self.epoch_start {
            if self.jiffies(now).saturating_sub(e) < self.p.hz as u64 {
                return;
            }
        }
        let delay = ((rtt.as_ns() / 1000).min(u32::MAX as u64) as u32).max(1);
        if self.delay_min_us == 0 || self.delay_min_us > delay {
            self.delay_min_us = delay;
        }
        let hystart = self.p.hystart_ack_train || self.p.hystart_delay;
        if !self.found && self.cwnd < self.ssthresh && hystart {
            self.hystart_update(now.0 / 1000, delay);
        }
    }

    /// `bictcp_update`: the segments to acknowledge per increase (`cnt`) at time `now`.
    fn update(&mut self, now: Time, acked: u32) {
        let cwnd = self.cwnd;
        let now_j = self.jiffies(now);
        self.ack_cnt = self.ack_cnt.wrapping_add(acked);
        if self.last_cwnd == cwnd && now_j.saturating_sub(self.last_time) <= (self.p.hz / 32) as u64 {
            return;
        }
        // The cubic is evaluated at most once per jiffy; a reduction (epoch end) forces it.
        if !(self.epoch_start.is_some() && now_j == self.last_time) {
            self.last_cwnd = cwnd;
            self.last_time = now_j;
            let epoch = match self.epoch_start {
                Some(e) => e,
                None => {
                    self.epoch_start = Some(now_j);
                    self.ack_cnt = acked;
                    self.tcp_cwnd = cwnd;
                    if self.last_max_cwnd <= cwnd {
                        self.k = 0;
                        self.origin = cwnd;
                    } else {
                        self.k = kernel_k(self.last_max_cwnd - cwnd, self.p.bic_scale);
                        self.origin = self.last_max_cwnd;
                    }
                    now_j
                }
            };
            // t = time since the epoch plus one (minimum) RTT: the target for the next RTT.
            let t_j = now_j.saturating_sub(epoch) + self.us_to_jiffies(self.delay_min_us);
            let t = (t_j << BICTCP_HZ) / self.p.hz as u64;
            let target = kernel_target(self.origin, self.k, t, self.p.bic_scale);
            self.cnt = if target > cwnd { cwnd / (target - cwnd) } else { 100 * cwnd };
            // No W_max yet: at least 5 % growth per RTT (bandwidth still unknown).
            if self.last_max_cwnd == 0 && self.cnt > 20 {
                self.cnt = 20;
            }
        }
        if self.p.tcp_friendliness {
            // The Reno-friendly window: +1 segment per cwnd * 8 (1 - beta) / (3 (1 + beta))
            // ACKs, i.e. alpha = 3 (1 - beta) / (1 + beta) segments per RTT (RFC 9438 eq. 4),
            // in the kernel's integer form (beta_scale = 15 for beta = 717).
            let beta = self.p.beta;
            let beta_scale = 8 * (BETA_SCALE + beta) / 3 / (BETA_SCALE - beta);
            let delta = ((cwnd as u64 * beta_scale as u64) >> 3).max(1) as u32;
            while self.ack_cnt > delta {
                self.ack_cnt -= delta;
                self.tcp_cwnd += 1;
            }
            if self.tcp_cwnd > cwnd {
                let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
                self.cnt = self.cnt.min(max_cnt);
            }
        }
        // At most one segment per two acknowledged: x1.5 per RTT.
        self.cnt = self.cnt.max(2);
    }

    /// `tcp_cong_avoid_ai`: one segment per `w` acknowledged.
    fn cong_avoid_ai(&mut self, w: u32, acked: u32) {
        if self.cwnd_cnt >= w {
            self.cwnd_cnt = 0;
            self.cwnd += 1;
        }
        self.cwnd_cnt += acked;
        if self.cwnd_cnt >= w {
            let delta = self.cwnd_cnt / w;
            self.cwnd_cnt -= delta * w;
            self.cwnd += delta;
        }
    }

    /// `tcp_current_ssthresh`: ssthresh, or 3/4 of the window if that is more (outside a
    /// reduction).
    fn current_ssthresh(&self) -> u32 {
        if self.reducing {
            self.ssthresh
        } else {
            self.ssthresh.max((self.cwnd >> 1) + (self.cwnd >> 2))
        }
    }

    /// `cubictcp_recalc_ssthresh`.
    fn recalc_ssthresh(&mut self) -> u32 {
        self.epoch_start = None;
        let beta = self.p.beta;
        self.last_max_cwnd = if self.cwnd < self.last_max_cwnd && self.p.fast_convergence {
            (self.cwnd as u64 * (BETA_SCALE + beta) as u64 / (2 * BETA_SCALE) as u64) as u32
        } else {
            self.cwnd
        };
        ((self.cwnd as u64 * beta as u64 / BETA_SCALE as u64) as u32).max(2)
    }
}

impl Controller for Cubic {
    fn on_ack(&mut self, now: Time, ack: &AckEvent) {
        self.acked_total += ack.newly_acked_bytes;
        self.srtt = ack.srtt;
        if ack.bytes_in_flight == 0 {
            self.idle = true;
        }
        if let Some(rtt) = ack.rtt_sample {
            self.on_delay_sample(now, rtt);
        }
        if ack.in_recovery || ack.newly_acked_bytes == 0 {
            return;
        }
        let total = self.acked_rem + ack.newly_acked_bytes;
        let mut acked = (total / self.mss).min(u32::MAX as u64) as u32;
        self.acked_rem = total % self.mss;
        if acked == 0 {
            return;
        }
        if self.cwnd < self.ssthresh {
            // tcp_slow_start: up to ssthresh, the rest goes to congestion avoidance.
            let grown = (self.cwnd + acked).min(self.ssthresh);
            acked -= grown - self.cwnd;
            self.cwnd = grown;
            if acked == 0 {
                return;
            }
        }
        self.update(now, acked);
        self.cong_avoid_ai(self.cnt, acked);
    }

    fn on_congestion_event(&mut self, now: Time, event: CongestionEvent, _flight_size: u64) {
        match event {
            CongestionEvent::Loss | CongestionEvent::Ecn => {
                // tcp_enter_recovery / tcp_init_cwnd_reduction: an ECN reduction is not undone.
                self.prior_ssthresh = if event == CongestionEvent::Loss { self.current_ssthresh() } else { 0 };
                self.prior_cwnd = self.cwnd;
                self.reducing = true;
                self.ssthresh = self.recalc_ssthresh();
                self.cwnd = self.ssthresh;
                self.cwnd_cnt = 0;
            }
            CongestionEvent::Timeout => {
                // tcp_enter_loss: a repeated timeout (cwnd already 1) keeps ssthresh.
                if self.cwnd > 1 {
                    // tcp_enter_loss saves the window for an undo unless a fast recovery's
                    // reduction already did.
                    if !self.reducing {
                        self.prior_ssthresh = self.current_ssthresh();
                        self.prior_cwnd = self.cwnd;
                    }
                    self.ssthresh = self.recalc_ssthresh();
                }
                self.reducing = false;
                self.cwnd = 1;
                self.cwnd_cnt = 0;
                self.reset();
                self.hystart_reset(now.0 / 1000);
            }
        }
    }

    fn on_undo(&mut self, _now: Time) {
        // tcp_undo_cwnd_reduction with tcp_reno_undo_cwnd (CUBIC's `undo_cwnd`): the window
        // before the reduction, ssthresh back to what it was; CUBIC's own state stays reset.
        if self.prior_ssthresh > 0 {
            self.cwnd = self.cwnd.max(self.prior_cwnd);
            self.ssthresh = self.ssthresh.max(self.prior_ssthresh);
        }
        self.reducing = false;
    }

    fn on_recovery_exit(&mut self, _now: Time, _flight_size: u64) {
        self.reducing = false;
        // tcp_end_cwnd_reduction: cwnd = ssthresh.
        if self.ssthresh < INFINITE_SSTHRESH {
            self.cwnd = self.ssthresh;
        }
    }

    fn on_sent(&mut self, now: Time, bytes: u64) {
        if self.idle {
            // CA_EVENT_TX_START: shift the epoch by the idle time.
            let now_j = self.jiffies(now);
            if let Some(e) = self.epoch_start {
                let delta = now_j.saturating_sub(self.jiffies(self.last_send));
                if delta > 0 {
                    self.epoch_start = Some((e + delta).min(now_j));
                }
            }
            self.idle = false;
        }
        self.last_send = now;
        self.sent_total += bytes;
    }

    fn window_bytes(&self) -> u64 {
        self.cwnd as u64 * self.mss
    }

    fn ssthresh_bytes(&self) -> u64 {
        if self.ssthresh >= INFINITE_SSTHRESH {
            u64::MAX
        } else {
            self.ssthresh as u64 * self.mss
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn cubic() -> Cubic {
        Cubic::new(CubicParams { hz: 1000, ..CubicParams::default() }, MSS as u32)
    }

    fn ack(bytes: u64, rtt_ms: u64) -> AckEvent {
        AckEvent {
            newly_acked_bytes: bytes,
            rtt_sample: Some(Dur::from_ms(rtt_ms)),
            srtt: Dur::from_ms(rtt_ms),
            min_rtt: Dur::from_ms(rtt_ms),
            bytes_in_flight: 10 * MSS,
            ..AckEvent::default()
        }
    }

    /// RFC 9438 eq. 1 with C = 0.4: the window (segments) `t` seconds into the epoch.
    fn rfc_w(t: f64, w_max: f64, k: f64) -> f64 {
        0.4 * (t - k).powi(3) + w_max
    }

    #[test]
    fn cube_root_is_the_exact_floor() {
        for a in [0u64, 1, 7, 8, 26, 27, 1 << 40, 999_999_999_999, u64::MAX] {
            let r = cube_root(a) as u128;
            assert!(r * r * r <= a as u128 && (r + 1).pow(3) > a as u128, "{a}");
        }
    }

    // W_max = 100, cwnd = 70 after the reduction: K = cbrt(100 * 0.3 / 0.4) = cbrt(75)
    // = 4.2172 s (RFC 9438 eq. 2); the kernel's K is 4318 / 1024 s = 4.2168 s. At
    // t = 0, K/2, K, 1.5 K, 2 K the fixed-point target is the RFC's W(t) within one segment (the delta is truncated)
    // (the kernel's C is 410 / 1024 = 0.40039, not 0.4).
    #[test]
    fn kernel_fixed_point_cubic_matches_rfc_9438() {
        let k = kernel_k(30, 41);
        let k_rfc = 75f64.cbrt();
        // The exact floor of cbrt(2^40 / 410 * 30) (Linux's table-and-Newton root is within
        // 0.2 % of it).
        assert_eq!(k, 4316);
        // 0.05 % shorter: the kernel's C is 410 / 1024 = 0.40039.
        assert!((k as f64 / 1024.0 - k_rfc).abs() < 3e-3);
        for frac in [0.0, 0.5, 1.0, 1.5, 2.0] {
            let t_secs = frac * k_rfc;
            let t = (t_secs * 1024.0) as u64;
            let kernel = kernel_target(100, k, t, 41) as f64;
            let rfc = rfc_w(t_secs, 100.0, k_rfc);
            assert!((kernel - rfc).abs() <= 1.0, "t = {t_secs:.3} s: kernel {kernel} vs RFC {rfc:.2}");
        }
        // Hand-checked values: t = 0 -> 70 (100 - 0.40039 * 4.2168^3 = 69.98, rounded up by
        // the truncated delta); t = 2K -> 130.
        assert_eq!(kernel_target(100, k, 0, 41), 71);
        assert_eq!(kernel_target(100, k, 2 * 4316, 41), 129);
    }

    /// A controller in congestion avoidance right after a loss at `w` segments.
    fn after_loss_at(w: u32) -> Cubic {
        let mut c = cubic();
        c.cwnd = w;
        c.on_congestion_event(Time::ZERO, CongestionEvent::Loss, w as u64 * MSS);
        c
    }

    /// One RTT of ACKs (one per segment of the current window) at `now`.
    fn one_rtt(c: &mut Cubic, now: Time, rtt_ms: u64) {
        for _ in 0..c.cwnd {
            c.on_ack(now, &ack(MSS, rtt_ms));
        }
    }

    // Loss at 100 segments, RTT 100 ms: cwnd 70, W_max 100. Fed one window of ACKs per RTT,
    // the window follows W(t + RTT) (the kernel aims one RTT ahead): concave up to W_max at
    // t = K - RTT = 4.1 s, flat around it, convex after. Checked against the RFC's W within
    // 3 segments (cwnd lags the target by the increments of one RTT).
    #[test]
    fn window_follows_the_cubic_through_a_loss() {
        let mut c = after_loss_at(100);
        assert_eq!((c.cwnd_segments(), c.ssthresh_bytes()), (70, 70 * MSS));
        let rtt = 100;
        let k = 75f64.cbrt();
        let mut t_ms = 0;
        let mut seen = vec![];
        while t_ms <= 7000 {
            one_rtt(&mut c, Time(t_ms * 1_000_000), rtt);
            t_ms += rtt;
            seen.push((t_ms, c.cwnd_segments()));
        }
        assert!((c.k_secs() - k).abs() < 0.01, "K {}", c.k_secs());
        for &(t, w) in &seen {
            let target = rfc_w(t as f64 / 1000.0 + 0.1, 100.0, k);
            if (1000..=6500).contains(&t) {
                assert!((w as f64 - target).abs() <= 3.0, "t {t} ms: cwnd {w}, W(t + RTT) {target:.1}");
            }
        }
        // Concave then convex: growth per second shrinks towards K and grows after it.
        let at = |ms: u64| seen.iter().find(|(t, _)| *t == ms).unwrap().1 as i64;
        let (g1, g2, g3) = (at(1000) - at(100), at(4100) - at(3100), at(7000) - at(6000));
        assert!(g1 > g2 && g3 > g2, "growth per second {g1}, {g2}, {g3}");
    }

    // Fast convergence: a second loss at 90 < W_max 100 sets W_max = 90 * 1741 / 2048 = 76;
    // ssthresh = 90 * 717 / 1024 = 63. Without it W_max = 90.
    #[test]
    fn fast_convergence_lowers_w_max() {
        let mut c = after_loss_at(100);
        c.cwnd = 90;
        c.on_congestion_event(Time::ZERO, CongestionEvent::Loss, 90 * MSS);
        assert_eq!((c.w_max_segments(), c.cwnd_segments()), (76, 63));
        let mut c = Cubic::new(CubicParams { fast_convergence: false, ..CubicParams::default() }, MSS as u32);
        c.cwnd = 100;
        c.on_congestion_event(Time::ZERO, CongestionEvent::Loss, 0);
        c.cwnd = 90;
        c.on_congestion_event(Time::ZERO, CongestionEvent::Loss, 0);
        assert_eq!(c.w_max_segments(), 90);
    }

    // Short RTT (10 ms) after a loss at 20 segments: the cubic would take K = cbrt(15)
    // = 2.47 s to return to 20; the Reno-friendly window grows 8/15 = 0.53 segment per RTT,
    // i.e. +53 in 100 RTTs, and CUBIC follows it (RFC 9438 section 4.3). Without the region
    // the window stays near the cubic's (about W(1 s) = 20 - 0.4 * 1.47^3 = 18.7).
    #[test]
    fn tcp_friendly_region_at_short_rtts() {
        let mut c = after_loss_at(20);
        for i in 0..100 {
            one_rtt(&mut c, Time(i * 10_000_000), 10);
        }
        let w = c.cwnd_segments() as f64;
        assert!((14.0 + 53.0 * 0.85..=14.0 + 53.0 * 1.15).contains(&w), "friendly cwnd {w}");
        let mut c = Cubic::new(CubicParams { tcp_friendliness: false, hz: 1000, ..CubicParams::default() }, 1000);
        c.cwnd = 20;
        c.on_congestion_event(Time::ZERO, CongestionEvent::Loss, 0);
        for i in 0..100 {
            one_rtt(&mut c, Time(i * 10_000_000), 10);
        }
        assert!((17..=21).contains(&c.cwnd_segments()), "cubic-only cwnd {}", c.cwnd_segments());
    }

    /// A slow-starting controller at `w` segments with a base RTT of 100 ms learnt.
    fn slow_start_at(w: u32, p: CubicParams) -> Cubic {
        let mut c = Cubic::new(p, MSS as u32);
        c.on_sent(Time::ZERO, 1_000_000);
        c.cwnd = w;
        c.on_ack(Time::ZERO, &AckEvent { newly_acked_bytes: 0, ..ack(0, 100) });
        assert_eq!(c.delay_min_us, 100_000);
        // A fresh round: its minimum starts from the samples that follow.
        c.hystart_reset(0);
        c
    }

    // Delay exit: the threshold is delay_min + clamp(delay_min / 8, 4, 16 ms) = 112.5 ms.
    // Eight samples of 112 ms (ACKs 5 ms apart, no train) leave slow start alone; the ninth
    // sample of a round whose minimum is 113 ms sets ssthresh = cwnd.
    #[test]
    fn hystart_delay_exit() {
        let p = CubicParams { hystart_ack_train: false, hz: 1000, ..CubicParams::default() };
        let mut c = slow_start_at(32, p);
        for i in 0..12 {
            c.on_ack(Time::from_ns(i * 5_000_000), &AckEvent { newly_acked_bytes: 0, ..ack(0, 112) });
        }
        assert!(!c.hystart_found());
        let mut c = slow_start_at(32, p);
        for i in 0..9 {
            c.on_ack(Time::from_ns(i * 5_000_000), &AckEvent { newly_acked_bytes: 0, ..ack(0, 113) });
            assert_eq!(c.hystart_found(), i == 8, "sample {i}");
        }
        assert_eq!(c.ssthresh_bytes(), 32 * MSS);
        // Below hystart_low_window (16 segments) nothing happens.
        let mut c = slow_start_at(15, p);
        for i in 0..20 {
            c.on_ack(Time::from_ns(i * 5_000_000), &AckEvent { newly_acked_bytes: 0, ..ack(0, 150) });
        }
        assert!(!c.hystart_found());
    }

    // ACK-train exit: ACKs 1 ms apart (a train: within 2 ms) from the round start. With
    // delay_min 100 ms and the 1 ms GSO cushion the train must last (100 + 1) / 2 = 50.5 ms:
    // the ACK at 51 ms ends slow start, the one at 50 ms does not.
    #[test]
    fn hystart_ack_train_exit() {
        let p = CubicParams { hystart_delay: false, hz: 1000, ..CubicParams::default() };
        let mut c = slow_start_at(32, p);
        let t0 = 1_000_000_000u64;
        c.acked_total = 0;
        c.end_seq = 0;
        c.on_ack(Time::from_ns(t0), &AckEvent { newly_acked_bytes: 0, ..ack(0, 100) });
        // A new round began at t0 (acked_total 0 is not after end_seq 0: reset by hand).
        c.hystart_reset(t0 / 1000);
        for ms in 1..=51u64 {
            c.on_ack(Time::from_ns(t0 + ms * 1_000_000), &AckEvent { newly_acked_bytes: 0, ..ack(0, 100) });
            assert_eq!(c.hystart_found(), ms == 51, "ACK at {ms} ms");
            if c.hystart_found() {
                break;
            }
        }
        // A gap of more than 2 ms breaks the train: no exit however long the round.
        let mut c = slow_start_at(32, p);
        c.hystart_reset(t0 / 1000);
        for i in 1..=40u64 {
            c.on_ack(Time::from_ns(t0 + i * 3_000_000), &AckEvent { newly_acked_bytes: 0, ..ack(0, 100) });
        }
        assert!(!c.hystart_found());
    }

    // Slow start adds every acknowledged segment (a 2-segment ACK adds 2) up to ssthresh; the
    // rest of that ACK goes to congestion avoidance.
    #[test]
    fn slow_start_counts_segments_up_to_ssthresh() {
        let mut c = cubic();
        assert_eq!(c.window_bytes(), 10 * MSS);
        c.on_ack(Time::ZERO, &ack(2 * MSS, 100));
        assert_eq!(c.cwnd_segments(), 12);
        c.on_ack(Time::ZERO, &ack(500, 100));
        c.on_ack(Time::ZERO, &ack(500, 100));
        assert_eq!(c.cwnd_segments(), 13);
        c.ssthresh = 14;
        c.on_ack(Time::ZERO, &ack(3 * MSS, 100));
        assert_eq!(c.cwnd_segments(), 14);
        // Nothing grows during recovery.
        c.on_ack(Time::ZERO, &AckEvent { in_recovery: true, ..ack(5 * MSS, 100) });
        assert_eq!(c.cwnd_segments(), 14);
    }

    // Timeout: ssthresh = 0.7 cwnd, cwnd 1, W_max forgotten (bictcp_reset); a second timeout
    // keeps ssthresh. After the timeout the epoch restarts with K = 0 and at least 5 % growth
    // per RTT (cnt <= 20).
    #[test]
    fn timeout_resets_cubic() {
        let mut c = cubic();
        c.cwnd = 100;
        c.on_congestion_event(Time::ZERO, CongestionEvent::Timeout, 0);
        assert_eq!((c.cwnd_segments(), c.ssthresh_bytes(), c.w_max_segments()), (1, 70 * MSS, 0));
        c.on_congestion_event(Time::ZERO, CongestionEvent::Timeout, 0);
        assert_eq!(c.ssthresh_bytes(), 70 * MSS);
    }

    // Undo of a spurious timeout (tcp_undo_cwnd_reduction with tcp_reno_undo_cwnd): cwnd 100,
    // ssthresh 80 -> timeout: prior_cwnd 100, prior_ssthresh = max(80, 3/4 x 100) = 80; cwnd 1,
    // ssthresh 70 -> undo: cwnd 100, ssthresh 80. A second timeout (cwnd 1) saves nothing, so
    // the undo still restores 100. After a fast recovery's reduction the timeout keeps the
    // recovery's saved window. An ECN reduction is never undone.
    #[test]
    fn undo_restores_the_window_before_the_timeout() {
        let mut c = cubic();
        c.cwnd = 100;
        c.ssthresh = 80;
        c.on_congestion_event(Time::ZERO, CongestionEvent::Timeout, 0);
        c.on_congestion_event(Time::ZERO, CongestionEvent::Timeout, 0);
        assert_eq!((c.cwnd_segments(), c.ssthresh_bytes()), (1, 70 * MSS));
        c.on_undo(Time::ZERO);
        assert_eq!((c.cwnd_segments(), c.ssthresh_bytes()), (100, 80 * MSS));
        let mut c = cubic();
        c.cwnd = 100;
        c.on_congestion_event(Time::ZERO, CongestionEvent::Loss, 0);
        assert_eq!(c.cwnd_segments(), 70);
        c.on_congestion_event(Time::ZERO, CongestionEvent::Timeout, 0);
        c.on_undo(Time::ZERO);
        assert_eq!(c.cwnd_segments(), 100);
        let mut c = cubic();
        c.cwnd = 100;
        c.ssthresh = 80;
        c.on_congestion_event(Time::ZERO, CongestionEvent::Ecn, 0);
        c.on_undo(Time::ZERO);
        assert_eq!((c.cwnd_segments(), c.ssthresh_bytes()), (70, 70 * MSS));
    }

    // Idle: with an epoch running, 3 s without sending (nothing in flight) moves the epoch
    // start 3 s later, so the curve resumes where it stopped.
    #[test]
    fn epoch_moves_over_idle_time() {
        let mut c = after_loss_at(100);
        c.on_sent(Time::ZERO, MSS);
        c.on_ack(Time::from_ns(100_000_000), &ack(MSS, 100));
        let e = c.epoch_start.unwrap();
        c.on_sent(Time::from_ns(200_000_000), MSS);
        c.on_ack(Time::from_ns(300_000_000), &AckEvent { bytes_in_flight: 0, ..ack(MSS, 100) });
        // Last send at 200 ms, next at 3.2 s: 3 s idle.
        c.on_sent(Time::from_ns(3_200_000_000), MSS);
        assert_eq!(c.epoch_start, Some(e + 3000));
        // Sending with data in flight does not move it.
        c.on_sent(Time::from_ns(3_300_000_000), MSS);
        assert_eq!(c.epoch_start, Some(e + 3000));
    }

    #[test]
    fn params_check_names_the_field() {
        assert!(CubicParams::default().check().is_ok());
        let e = CubicParams { beta: 1024, ..CubicParams::default() }.check().unwrap_err();
        assert!(e.starts_with("beta:"), "{e}");
        let e = CubicParams { initial_window: 0, ..CubicParams::default() }.check().unwrap_err();
        assert!(e.starts_with("initial_window:"), "{e}");
    }
}
