//! BBR v1's sender law (`net/ipv4/tcp_bbr.c`), per ACK in the kernel's order (`bbr_main`):
//! update the model (bandwidth filter and rounds, long-term sampling, ACK aggregation, gain
//! cycle, STARTUP's full-pipe check, DRAIN's exit, min RTT and PROBE_RTT, gains), then set the
//! pacing rate and the window.
//!
//! Units: bytes and bytes per second where Linux counts segments and segments per µs (shifted
//! by 2^24); the window is rounded to whole segments where Linux's is a segment count.
//! Differences from Linux, all small at the rates and RTTs of this lab (docs/algorithms/bbr.md):
//! no earliest-departure-time queue in the sender (the in-network estimate is the data in
//! flight, plus one TSO burst when probing), no undo of spurious recoveries, and the
//! random starting phase of PROBE_BW comes from a deterministic generator.

use super::filter::WindowedMax;
use super::BbrParams;
use crate::host::{AckEvent, CongestionEvent, Controller};
use crate::time::{Dur, Time};
use crate::transport::RateSample;

/// PROBE_BW's pacing gains (`bbr_pacing_gain`): probe, drain, then cruise for six phases.
pub const PACING_GAIN_CYCLE: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
/// `bbr_cycle_rand`: PROBE_BW starts at a random phase other than the draining one.
const CYCLE_RAND: u64 = 7;
/// `bbr_full_bw_thresh` (1.25) and `bbr_full_bw_cnt` (3): STARTUP ends after three rounds
/// without 25 % bandwidth growth.
const FULL_BW_THRESH: f64 = 1.25;
const FULL_BW_CNT: u32 = 3;
/// Long-term sampling (`bbr_lt_*`): intervals of 4..16 rounds; lossy at 50/256 (~20 %) loss;
/// consistent within 1/8 or 4 kbit/s; then the long-term rate is used for 48 rounds.
const LT_INTVL_MIN_RTTS: u32 = 4;
const LT_LOSS_THRESH: f64 = 50.0 / 256.0;
const LT_BW_RATIO: f64 = 1.0 / 8.0;
const LT_BW_DIFF_BYTES_PER_S: f64 = 4000.0 / 8.0;
const LT_BW_MAX_RTTS: u32 = 48;
/// ACK aggregation (`bbr_extra_acked_*`): gain 1, a max filter of 5..10 rounds, capped at
/// 100 ms of bandwidth; the epoch resets after 2^20 segments.
const EXTRA_ACKED_WIN_RTTS: u32 = 5;
const EXTRA_ACKED_MAX: Dur = Dur::from_ms(100);
const ACK_EPOCH_RESET_SEGS: u64 = 1 << 20;
/// `bbr_min_tso_rate`: below 1.2 Mbit/s the TSO goal is one segment, else at least two.
const MIN_TSO_RATE_BYTES_PER_S: f64 = 1_200_000.0 / 8.0;
/// `sk_pacing_shift` = 10: a TSO burst holds about 1 ms (2^-10 s) of the pacing rate, capped at
/// `GSO_LEGACY_MAX_SIZE - 1 - MAX_TCP_HEADER` bytes (65536 - 1 - 320 on x86-64) and 127 segments.
const TSO_MAX_BYTES: f64 = 65_215.0;
const TSO_MAX_SEGS: u64 = 127;
/// `TCP_INIT_CWND`: the window cap before any RTT sample.
const INIT_CWND_SEGS: u64 = 10;

/// BBR's state machine (`enum bbr_mode`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum BbrMode {
    /// Ramp up at 2/ln 2 until the pipe is full.
    Startup,
    /// Drain STARTUP's queue at the inverse gain.
    Drain,
    /// The 8-phase gain cycle around the estimated bandwidth.
    ProbeBw,
    /// Four packets in flight to re-measure the propagation delay.
    ProbeRtt,
}

impl BbrMode {
    /// A small integer for traces: 0 STARTUP, 1 DRAIN, 2 PROBE_BW, 3 PROBE_RTT (Linux's order).
    pub fn code(self) -> u8 {
        self as u8
    }

    /// The mode's name as `tcp_bbr.c` spells it (`BBR_STARTUP` without the prefix).
    pub fn label(self) -> &'static str {
        match self {
            BbrMode::Startup => "STARTUP",
            BbrMode::Drain => "DRAIN",
            BbrMode::ProbeBw => "PROBE_BW",
            BbrMode::ProbeRtt => "PROBE_RTT",
        }
    }
}

/// The TCP loss state BBR tracks (Linux's `icsk_ca_state`, the part BBR looks at).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum CaState {
    Open,
    Recovery,
    Loss,
}

/// Long-term ("LT") bandwidth sampling state, for policer detection.
#[derive(Copy, Clone, Debug, Default)]
struct LongTerm {
    is_sampling: bool,
    rtt_cnt: u32,
    use_bw: bool,
    bw: f64,
    last_delivered: u64,
    last_stamp_ms: u64,
    last_lost: u64,
}

/// BBR's state.
#[derive(Debug, Clone)]
pub struct Bbr {
    p: BbrParams,
    mss: u64,
    cwnd: u64,
    ssthresh: u64,
    mode: BbrMode,
    /// Pacing rate, bytes/s (0 before the first computation).
    pacing_rate: f64,
    pacing_gain: f64,
    cwnd_gain: f64,
    bw: WindowedMax,
    rtt_cnt: u64,
    next_rtt_delivered: u64,
    round_start: bool,
    min_rtt: Option<Dur>,
    min_rtt_stamp: Time,
    probe_rtt_done_stamp: Option<Time>,
    probe_rtt_round_done: bool,
    cycle_idx: usize,
    cycle_stamp: Time,
    full_bw: f64,
    full_bw_cnt: u32,
    full_bw_reached: bool,
    prior_cwnd: u64,
    prev_ca_state: CaState,
    ca_state: CaState,
    packet_conservation: bool,
    idle_restart: bool,
    has_seen_rtt: bool,
    lt: LongTerm,
    extra_acked: [u64; 2],
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,
    ack_epoch_stamp: Time,
    ack_epoch_acked: u64,
    /// PROBE_RTT marks the connection application-limited (Linux sets `tp->app_limited`):
    /// samples of packets sent while the mark held, i.e. whose delivered snapshot lies in
    /// `[from, to]`, are treated as app-limited.
    al_from: u64,
    al_to: u64,
    /// Cumulative delivered and lost bytes, as the samples report them.
    delivered: u64,
    lost: u64,
    delivered_time: Time,
    srtt: Dur,
    /// Nothing in flight since the last ACK (the next send restarts from idle).
    idle: bool,
    started: bool,
    rng: u64,
    /// Wire bytes per payload byte of a full segment: Linux paces the payload (`skb->len`
    /// before headers) at a rate from payload deliveries; the shared transport spaces wire
    /// bytes, so the rate it gets is scaled by this.
    wire_per_payload: f64,
}

impl Bbr {
    /// A controller in STARTUP with the initial window. Call [`BbrParams::check`] first.
    pub fn new(p: BbrParams, mss_bytes: u32) -> Bbr {
        let mss = mss_bytes.max(1) as u64;
        Bbr {
            p,
            mss,
            cwnd: p.initial_window.max(1) as u64 * mss,
            ssthresh: u64::MAX,
            mode: BbrMode::Startup,
            pacing_rate: 0.0,
            pacing_gain: p.high_gain,
            cwnd_gain: p.high_gain,
            bw: WindowedMax::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            round_start: false,
            min_rtt: None,
            min_rtt_stamp: Time::ZERO,
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
            cycle_idx: 0,
            cycle_stamp: Time::ZERO,
            full_bw: 0.0,
            full_bw_cnt: 0,
            full_bw_reached: false,
            prior_cwnd: 0,
            prev_ca_state: CaState::Open,
            ca_state: CaState::Open,
            packet_conservation: false,
            idle_restart: false,
            has_seen_rtt: false,
            lt: LongTerm::default(),
            extra_acked: [0; 2],
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
            ack_epoch_stamp: Time::ZERO,
            ack_epoch_acked: 0,
            al_from: 0,
            al_to: 0,
            delivered: 0,
            lost: 0,
            delivered_time: Time::ZERO,
            srtt: Dur::ZERO,
            idle: true,
            started: false,
            rng: 0x9e37_79b9_7f4a_7c15,
            wire_per_payload: 1.0,
        }
    }

    /// Every data packet carries `header_bytes` on top of its payload on the wire.
    pub fn with_header_bytes(mut self, header_bytes: u32) -> Bbr {
        self.wire_per_payload = (self.mss + header_bytes as u64) as f64 / self.mss as f64;
        self
    }

    /// The state machine's mode.
    pub fn mode(&self) -> BbrMode {
        self.mode
    }

    /// The bandwidth estimate in bytes/s (the long-term one when a policer was detected).
    pub fn bw(&self) -> f64 {
        if self.lt.use_bw {
            self.lt.bw
        } else {
            self.bw.get()
        }
    }

    /// The windowed min RTT.
    pub fn min_rtt(&self) -> Option<Dur> {
        self.min_rtt
    }

    /// The current pacing gain.
    pub fn pacing_gain(&self) -> f64 {
        self.pacing_gain
    }

    /// The PROBE_BW phase (index into [`PACING_GAIN_CYCLE`]).
    pub fn cycle_index(&self) -> usize {
        self.cycle_idx
    }

    /// Packet-timed rounds so far.
    pub fn rounds(&self) -> u64 {
        self.rtt_cnt
    }

    /// STARTUP found the pipe full.
    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }

    fn min_cwnd(&self) -> u64 {
        self.p.min_cwnd_segments as u64 * self.mss
    }

    /// splitmix64: deterministic, so runs repeat byte for byte (Linux uses get_random_u32).
    fn random_below(&mut self, n: u64, now: Time) -> u64 {
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15 ^ now.0);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) % n
    }

    /// `bbr_rate_bytes_per_sec` / `bbr_bw_to_pacing_rate`: `bw x gain`, 1 % below.
    fn rate_with_gain(&self, bw: f64, gain: f64) -> f64 {
        bw * gain * (1.0 - self.p.pacing_margin)
    }

    /// `bbr_init_pacing_rate_from_rtt`: `high_gain x cwnd / SRTT` (1 ms before any sample).
    fn init_pacing_rate(&mut self) {
        let rtt = if self.srtt > Dur::ZERO {
            self.has_seen_rtt = true;
            self.srtt
        } else {
            Dur::from_ms(1)
        };
        let bw = self.cwnd as f64 / rtt.as_secs_f64();
        self.pacing_rate = self.rate_with_gain(bw, self.p.high_gain);
    }

    /// `bbr_set_pacing_rate`: before the pipe is full the rate only rises.
    fn set_pacing_rate(&mut self, bw: f64, gain: f64) {
        let rate = self.rate_with_gain(bw, gain);
        if !self.has_seen_rtt && self.srtt > Dur::ZERO {
            self.init_pacing_rate();
        }
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// `bbr_tso_segs_goal`: segments per TSO burst (about 1 ms at the pacing rate).
    fn tso_segs_goal(&self) -> u64 {
        let bytes = (self.pacing_rate / 1024.0).min(TSO_MAX_BYTES);
        let min_segs = if self.pacing_rate < MIN_TSO_RATE_BYTES_PER_S { 1 } else { 2 };
        ((bytes as u64) / self.mss).max(min_segs).min(TSO_MAX_SEGS)
    }

    /// `bbr_bdp`: `ceil(bw x min_rtt x gain)`, in whole segments.
    fn bdp(&self, bw: f64, gain: f64) -> u64 {
        let Some(rtt) = self.min_rtt else {
            return INIT_CWND_SEGS * self.mss;
        };
        let bytes = bw * rtt.as_secs_f64() * gain;
        (bytes / self.mss as f64).ceil() as u64 * self.mss
    }

    /// `bbr_quantization_budget`: room for the TSO bursts in the hosts, an even number of
    /// segments, two more in the probing phase.
    fn quantization_budget(&self, cwnd: u64) -> u64 {
        let mut segs = cwnd.div_ceil(self.mss);
        if self.p.quantization_budget {
            segs += 3 * self.tso_segs_goal();
            segs = (segs + 1) & !1;
        }
        if self.mode == BbrMode::ProbeBw && self.cycle_idx == 0 {
            segs += 2;
        }
        segs * self.mss
    }

    /// `bbr_inflight`.
    fn inflight(&self, bw: f64, gain: f64) -> u64 {
        self.quantization_budget(self.bdp(bw, gain))
    }

    /// `bbr_packets_in_net_at_edt`, without a departure-time queue: what is in flight, plus the
    /// next burst when the gain is raising it.
    fn in_net(&self, inflight: u64) -> u64 {
        if self.pacing_gain > 1.0 && self.p.quantization_budget {
            inflight + self.tso_segs_goal() * self.mss
        } else {
            inflight
        }
    }

    /// `bbr_save_cwnd`: the last good window, kept through recovery and PROBE_RTT.
    fn save_cwnd(&mut self) {
        if self.prev_ca_state < CaState::Recovery && self.mode != BbrMode::ProbeRtt {
            self.prior_cwnd = self.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(self.cwnd);
        }
    }

    fn advance_cycle_phase(&mut self) {
        self.cycle_idx = (self.cycle_idx + 1) % PACING_GAIN_CYCLE.len();
        self.cycle_stamp = self.delivered_time;
    }

    fn reset_probe_bw_mode(&mut self, now: Time) {
        self.mode = BbrMode::ProbeBw;
        self.cycle_idx = PACING_GAIN_CYCLE.len() - 1 - self.random_below(CYCLE_RAND, now) as usize;
        self.advance_cycle_phase();
    }

    fn reset_mode(&mut self, now: Time) {
        if self.full_bw_reached {
            self.reset_probe_bw_mode(now);
        } else {
            self.mode = BbrMode::Startup;
        }
    }

    /// `bbr_is_next_cycle_phase`.
    fn is_next_cycle_phase(&self, rs: &RateSample) -> bool {
        let full_length = self.min_rtt.is_some_and(|m| rs.delivered_time.saturating_since(self.cycle_stamp) > m);
        if self.pacing_gain == 1.0 {
            return full_length;
        }
        let inflight = self.in_net(rs.prior_in_flight);
        let bw = self.bw.get();
        if self.pacing_gain > 1.0 {
            // Probe until the gain's share is in flight, but not on through losses.
            return full_length && (rs.losses > 0 || inflight >= self.inflight(bw, self.pacing_gain));
        }
        // Drain until the queue is gone or the phase is over.
        full_length || inflight <= self.inflight(bw, 1.0)
    }

    fn reset_lt_interval(&mut self) {
        self.lt.last_stamp_ms = self.delivered_time.0 / 1_000_000;
        self.lt.last_delivered = self.delivered;
        self.lt.last_lost = self.lost;
        self.lt.rtt_cnt = 0;
    }

    fn reset_lt(&mut self) {
        self.lt.bw = 0.0;
        self.lt.use_bw = false;
        self.lt.is_sampling = false;
        self.reset_lt_interval();
    }

    /// `bbr_lt_bw_interval_done`.
    fn lt_interval_done(&mut self, bw: f64) {
        if self.lt.bw > 0.0 {
            let diff = (bw - self.lt.bw).abs();
            if diff <= LT_BW_RATIO * self.lt.bw || self.rate_with_gain(diff, 1.0) <= LT_BW_DIFF_BYTES_PER_S {
                // Two consistent lossy intervals: a policer. Use their average rate.
                self.lt.bw = (bw + self.lt.bw) / 2.0;
                self.lt.use_bw = true;
                self.pacing_gain = 1.0;
                self.lt.rtt_cnt = 0;
                return;
            }
        }
        self.lt.bw = bw;
        self.reset_lt_interval();
    }

    /// `bbr_lt_bw_sampling`: policer detection.
    fn lt_sampling(&mut self, rs: &RateSample, now: Time) {
        if self.lt.use_bw {
            if self.mode == BbrMode::ProbeBw && self.round_start {
                self.lt.rtt_cnt += 1;
                if self.lt.rtt_cnt >= LT_BW_MAX_RTTS {
                    self.reset_lt();
                    self.reset_probe_bw_mode(now);
                }
            }
            return;
        }
        if !self.lt.is_sampling {
            if rs.losses == 0 {
                return;
            }
            self.reset_lt_interval();
            self.lt.is_sampling = true;
        }
        if rs.is_app_limited {
            return self.reset_lt();
        }
        if self.round_start {
            self.lt.rtt_cnt += 1;
        }
        if self.lt.rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt.rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            return self.reset_lt();
        }
        if rs.losses == 0 {
            return;
        }
        let lost = self.lost - self.lt.last_lost;
        let delivered = self.delivered - self.lt.last_delivered;
        if delivered == 0 || (lost as f64) < LT_LOSS_THRESH * delivered as f64 {
            return;
        }
        let t_ms = (self.delivered_time.0 / 1_000_000).saturating_sub(self.lt.last_stamp_ms);
        if t_ms < 1 {
            return;
        }
        self.lt_interval_done(delivered as f64 / (t_ms as f64 / 1000.0));
    }

    /// `bbr_update_bw`: rounds and the bandwidth filter.
    fn update_bw(&mut self, rs: &RateSample, app_limited: bool, now: Time) {
        self.round_start = false;
        if !rs.valid {
            return;
        }
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = rs.delivered_total;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        if self.p.long_term_sampling {
            self.lt_sampling(&RateSample { is_app_limited: app_limited, ..*rs }, now);
        }
        let bw = rs.delivered as f64 / rs.interval.as_secs_f64();
        // App-limited samples only count when they show more bandwidth than the model.
        if !app_limited || bw >= self.bw.get() {
            self.bw.update(self.p.bw_window_rounds as u64, self.rtt_cnt, bw);
        }
    }

    /// `bbr_update_ack_aggregation`.
    fn update_ack_aggregation(&mut self, rs: &RateSample) {
        if rs.acked_sacked == 0 || !rs.valid {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(31);
            if self.extra_acked_win_rtts >= EXTRA_ACKED_WIN_RTTS {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let epoch = rs.delivered_time.saturating_since(self.ack_epoch_stamp);
        let mut expected = (self.bw() * epoch.as_secs_f64()) as u64;
        if self.ack_epoch_acked <= expected || self.ack_epoch_acked + rs.acked_sacked >= ACK_EPOCH_RESET_SEGS * self.mss
        {
            self.ack_epoch_acked = 0;
            self.ack_epoch_stamp = rs.delivered_time;
            expected = 0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked + rs.acked_sacked).min((ACK_EPOCH_RESET_SEGS - 1) * self.mss);
        let extra = (self.ack_epoch_acked - expected).min(self.cwnd);
        let slot = &mut self.extra_acked[self.extra_acked_win_idx];
        *slot = (*slot).max(extra);
    }

    /// `bbr_ack_aggregation_cwnd`: the window added for ACK aggregation.
    pub fn ack_aggregation_cwnd(&self) -> u64 {
        if !self.full_bw_reached {
            return 0;
        }
        let cap = (self.bw() * EXTRA_ACKED_MAX.as_secs_f64()) as u64;
        self.extra_acked[0].max(self.extra_acked[1]).min(cap)
    }

    /// `bbr_check_full_bw_reached`.
    fn check_full_bw_reached(&mut self, app_limited: bool) {
        if self.full_bw_reached || !self.round_start || app_limited {
            return;
        }
        let max_bw = self.bw.get();
        if max_bw >= self.full_bw * FULL_BW_THRESH {
            self.full_bw = max_bw;
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT;
    }

    /// `bbr_check_drain`.
    fn check_drain(&mut self, in_flight: u64, now: Time) {
        if self.mode == BbrMode::Startup && self.full_bw_reached {
            self.mode = BbrMode::Drain;
            self.ssthresh = self.inflight(self.bw.get(), 1.0);
        }
        if self.mode == BbrMode::Drain && self.in_net(in_flight) <= self.inflight(self.bw.get(), 1.0) {
            self.reset_probe_bw_mode(now);
        }
    }

    /// `bbr_check_probe_rtt_done`.
    fn check_probe_rtt_done(&mut self, now: Time) {
        if self.probe_rtt_done_stamp.is_none_or(|d| now <= d) {
            return;
        }
        self.min_rtt_stamp = now;
        self.cwnd = self.cwnd.max(self.prior_cwnd);
        self.reset_mode(now);
    }

    /// `bbr_update_min_rtt`: the 10 s min-RTT filter and PROBE_RTT.
    fn update_min_rtt(&mut self, now: Time, rs: &RateSample, rtt: Option<Dur>, in_flight: u64) {
        let window = Dur::from_secs_f64(self.p.min_rtt_window_s);
        let expired = now > self.min_rtt_stamp + window;
        if let Some(r) = rtt {
            if self.min_rtt.is_none_or(|m| r < m) || expired {
                self.min_rtt = Some(r);
                self.min_rtt_stamp = now;
            }
        }
        if self.p.probe_rtt_ms > 0 && expired && !self.idle_restart && self.mode != BbrMode::ProbeRtt {
            self.mode = BbrMode::ProbeRtt;
            self.save_cwnd();
            self.probe_rtt_done_stamp = None;
        }
        if self.mode == BbrMode::ProbeRtt {
            // Samples while the window is cut are not the path's: marked app-limited.
            if self.al_to < self.delivered {
                self.al_from = self.delivered;
            }
            self.al_to = (self.delivered + in_flight).max(1);
            if self.probe_rtt_done_stamp.is_none() && in_flight <= self.min_cwnd() {
                self.probe_rtt_done_stamp = Some(now + Dur::from_ms(self.p.probe_rtt_ms as u64));
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = self.delivered;
            } else if self.probe_rtt_done_stamp.is_some() {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(now);
                }
            }
        }
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    /// `bbr_update_gains`.
    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            BbrMode::Startup => (self.p.high_gain, self.p.high_gain),
            BbrMode::Drain => (1.0 / self.p.high_gain, self.p.high_gain),
            BbrMode::ProbeBw => {
                let g = if self.lt.use_bw { 1.0 } else { PACING_GAIN_CYCLE[self.cycle_idx] };
                (g, self.p.cwnd_gain)
            }
            BbrMode::ProbeRtt => (1.0, 1.0),
        };
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: packet conservation in the first round of
    /// recovery, the saved window restored after it. Returns the window and whether
    /// conservation holds it.
    fn recover_or_restore(&mut self, rs: &RateSample, in_flight: u64) -> (u64, bool) {
        let acked = rs.acked_sacked;
        let mut cwnd = self.cwnd;
        if rs.losses > 0 {
            cwnd = cwnd.saturating_sub(rs.losses).max(self.mss);
        }
        let (state, prev) = (self.ca_state, self.prev_ca_state);
        if state == CaState::Recovery && prev != CaState::Recovery {
            self.packet_conservation = true;
            self.next_rtt_delivered = self.delivered;
            cwnd = in_flight + acked;
        } else if prev >= CaState::Recovery && state < CaState::Recovery {
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            return (cwnd.max(in_flight + acked), true);
        }
        (cwnd, false)
    }

    /// `bbr_set_cwnd`.
    fn set_cwnd(&mut self, rs: &RateSample, in_flight: u64, bw: f64, gain: f64) {
        let acked = rs.acked_sacked;
        if acked > 0 {
            let (mut cwnd, conserving) = self.recover_or_restore(rs, in_flight);
            if !conserving {
                let target = self.quantization_budget(self.bdp(bw, gain) + self.ack_aggregation_cwnd());
                if self.full_bw_reached {
                    cwnd = (cwnd + acked).min(target);
                } else if cwnd < target || self.delivered < INIT_CWND_SEGS * self.mss {
                    cwnd += acked;
                }
                cwnd = cwnd.max(self.min_cwnd());
            }
            self.cwnd = cwnd;
        }
        if self.mode == BbrMode::ProbeRtt {
            self.cwnd = self.cwnd.min(self.min_cwnd());
        }
    }
}

impl Controller for Bbr {
    fn on_ack(&mut self, now: Time, ack: &AckEvent) {
        if ack.srtt > Dur::ZERO {
            self.srtt = ack.srtt;
        }
        if ack.bytes_in_flight == 0 {
            self.idle = true;
        }
        let Some(mut rs) = ack.rate else {
            // The SYN-ACK: no delivery yet, but the first RTT sets the pacing rate.
            if !self.has_seen_rtt && self.srtt > Dur::ZERO {
                self.init_pacing_rate();
            }
            return;
        };
        self.delivered = rs.delivered_total;
        self.delivered_time = rs.delivered_time;
        self.lost += rs.losses;
        if self.ca_state == CaState::Loss && !rs.rto_recovery {
            self.ca_state = CaState::Open;
        }
        // PROBE_RTT's application-limited mark (see `al_from`).
        if self.al_to > 0 && rs.prior_delivered >= self.al_from && rs.prior_delivered <= self.al_to {
            rs.is_app_limited = true;
        }
        if self.al_to > 0 && self.delivered > self.al_to {
            self.al_to = 0;
        }
        let app_limited = rs.is_app_limited;
        let in_flight = ack.bytes_in_flight;
        // bbr_update_model
        self.update_bw(&rs, app_limited, now);
        self.update_ack_aggregation(&rs);
        if self.mode == BbrMode::ProbeBw && self.is_next_cycle_phase(&rs) {
            self.advance_cycle_phase();
        }
        self.check_full_bw_reached(app_limited);
        self.check_drain(in_flight, now);
        self.update_min_rtt(now, &rs, ack.rtt_sample, in_flight);
        self.update_gains();
        // bbr_main: pacing rate, then window.
        let bw = self.bw();
        self.set_pacing_rate(bw, self.pacing_gain);
        self.set_cwnd(&rs, in_flight, bw, self.cwnd_gain);
    }

    fn on_congestion_event(&mut self, now: Time, event: CongestionEvent, _flight_size: u64) {
        match event {
            // bbr_ssthresh on entering recovery: remember the window; BBR does not reduce.
            CongestionEvent::Loss => {
                self.save_cwnd();
                self.ca_state = CaState::Recovery;
            }
            // ECN-Echo: Linux enters CWR, which only saves the window (BBR v1 ignores ECN).
            CongestionEvent::Ecn => self.save_cwnd(),
            CongestionEvent::Timeout => {
                // tcp_enter_loss: save the window (not again on a repeated timeout), one
                // segment in flight; bbr_set_state(TCP_CA_Loss): a round ends, STARTUP's
                // full-pipe check starts over, and the loss feeds the policer detector.
                if self.ca_state != CaState::Loss {
                    self.save_cwnd();
                }
                self.cwnd = self.mss;
                self.ca_state = CaState::Loss;
                self.prev_ca_state = CaState::Loss;
                self.full_bw = 0.0;
                self.round_start = true;
                if self.p.long_term_sampling {
                    let rs = RateSample { losses: 1, ..RateSample::default() };
                    self.lt_sampling(&rs, now);
                }
            }
        }
    }

    fn on_recovery_exit(&mut self, _now: Time, _flight_size: u64) {
        self.ca_state = CaState::Open;
    }

    fn on_undo(&mut self, _now: Time) {
        // bbr_undo_cwnd: STARTUP's full-pipe check starts over and long-term sampling is
        // reset; the window is left as it is. The loss state ends (the transport leaves it), so
        // the next ACK restores the saved window (`recover_or_restore`).
        self.full_bw = 0.0;
        self.full_bw_cnt = 0;
        self.reset_lt();
    }

    fn on_sent(&mut self, now: Time, _bytes: u64) {
        if !self.started {
            // bbr_init at the connection's first transmission.
            self.started = true;
            self.min_rtt_stamp = now;
            self.ack_epoch_stamp = now;
            self.init_pacing_rate();
        } else if self.idle {
            // CA_EVENT_TX_START after idle: pace at the estimate, not above it.
            self.idle_restart = true;
            self.ack_epoch_stamp = now;
            self.ack_epoch_acked = 0;
            match self.mode {
                BbrMode::ProbeBw => self.set_pacing_rate(self.bw(), 1.0),
                BbrMode::ProbeRtt => self.check_probe_rtt_done(now),
                _ => {}
            }
        }
        self.idle = false;
    }

    fn window_bytes(&self) -> u64 {
        self.cwnd
    }

    fn pacing_rate_bps(&self) -> Option<f64> {
        (self.pacing_rate > 0.0).then_some(self.pacing_rate * 8.0 * self.wire_per_payload)
    }

    fn ssthresh_bytes(&self) -> u64 {
        self.ssthresh
    }

    fn wants_rate_samples(&self) -> bool {
        true
    }

    fn state_label(&self) -> Option<&'static str> {
        Some(self.mode.label())
    }

    fn current_pacing_gain(&self) -> Option<f64> {
        Some(self.pacing_gain)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn bbr() -> Bbr {
        Bbr::new(BbrParams { quantization_budget: false, ..BbrParams::default() }, MSS as u32)
    }

    /// A scripted path: one ACK per RTT carrying a whole round's delivery.
    struct Script {
        b: Bbr,
        now: Time,
        delivered: u64,
        rtt: Dur,
    }

    impl Script {
        fn new(b: Bbr) -> Script {
            let mut s = Script { b, now: Time::ZERO, delivered: 0, rtt: Dur::from_ms(100) };
            s.b.on_sent(Time::ZERO, MSS);
            s
        }

        /// One round: `bytes` delivered over one RTT at `rtt`, `in_flight` left after the ACK.
        fn round(&mut self, bytes: u64, rtt: Dur, in_flight: u64) {
            let prior = self.delivered;
            self.now += rtt;
            self.delivered += bytes;
            let rs = RateSample {
                valid: true,
                delivered: bytes,
                interval: rtt,
                prior_delivered: prior,
                delivered_total: self.delivered,
                delivered_time: self.now,
                acked_sacked: bytes,
                prior_in_flight: in_flight + bytes,
                ..RateSample::default()
            };
            let ack = AckEvent {
                newly_acked_bytes: bytes,
                rtt_sample: Some(rtt),
                srtt: rtt,
                min_rtt: self.rtt,
                bytes_in_flight: in_flight,
                rate: Some(rs),
                ..AckEvent::default()
            };
            self.b.on_ack(self.now, &ack);
        }
    }

    // STARTUP: the bandwidth doubles per round (10, 20, 40, 80 kB per 100 ms), then stays at
    // 80 kB/round. Rounds 5, 6 and 7 show no 25 % growth: after the third, BBR leaves STARTUP,
    // and with a full pipe in flight it is in DRAIN; once in flight falls to one BDP it enters
    // PROBE_BW at a phase other than 1 (the draining one).
    #[test]
    fn startup_exits_after_three_rounds_without_growth() {
        let mut s = Script::new(bbr());
        let rtt = Dur::from_ms(100);
        for (i, kb) in [10u64, 20, 40, 80].iter().enumerate() {
            s.round(kb * 1000, rtt, 2 * kb * 1000);
            assert_eq!(s.b.mode(), BbrMode::Startup, "round {}", i + 1);
            assert!((s.b.pacing_gain() - 2.8867).abs() < 1e-3);
        }
        s.round(80_000, rtt, 200_000);
        s.round(85_000, rtt, 200_000);
        assert_eq!(s.b.mode(), BbrMode::Startup);
        assert!(!s.b.full_bw_reached());
        s.round(90_000, rtt, 200_000);
        assert!(s.b.full_bw_reached());
        assert_eq!(s.b.mode(), BbrMode::Drain);
        assert!((s.b.pacing_gain() - 256.0 / 739.0).abs() < 1e-3);
        // ssthresh = one BDP: 90 kB/s x 100 ms... the max bw is 900 kB/s -> 90 kB.
        assert_eq!(s.b.ssthresh_bytes(), 90_000);
        s.round(90_000, rtt, 90_000);
        assert_eq!(s.b.mode(), BbrMode::ProbeBw);
        assert_ne!(s.b.cycle_index(), 1);
    }

    // The traced state (what the simulator's flow series records) through the controller
    // dispatch: STARTUP at gain 2.89, DRAIN at 1/2.89, PROBE_BW at its phase's gain.
    #[test]
    fn state_label_and_gain_follow_the_mode() {
        use crate::host::AnyController;
        let trace = |b: &Bbr| {
            let c = AnyController::Bbr(Box::new(b.clone()));
            (c.state_label(), c.current_pacing_gain())
        };
        let mut s = Script::new(bbr());
        let rtt = Dur::from_ms(100);
        assert_eq!(trace(&s.b), (Some("STARTUP"), Some(739.0 / 256.0)));
        for kb in [10u64, 20, 40, 80, 80, 80] {
            s.round(kb * 1000, rtt, 200_000);
        }
        s.round(80_000, rtt, 200_000);
        assert_eq!(trace(&s.b).0, Some("DRAIN"));
        s.round(80_000, rtt, 80_000);
        let (label, gain) = trace(&s.b);
        assert_eq!(label, Some("PROBE_BW"));
        assert_eq!(gain, Some(PACING_GAIN_CYCLE[s.b.cycle_index()]));
        let newreno = AnyController::NewReno(crate::algorithms::newreno::NewReno::new(Default::default()));
        assert_eq!((newreno.state_label(), newreno.current_pacing_gain()), (None, None));
    }

    // PROBE_BW: each phase lasts one min RTT (the 1.0 phases) or until its in-flight target
    // (5/4 BDP to leave the probing phase, 1 BDP to leave the draining one). Driven with
    // in-flight at exactly those targets, the cycle visits 0..7 in order, one phase per round,
    // and the gain sequence is 1.25, 0.75, 1 x 6.
    #[test]
    fn probe_bw_cycles_through_eight_phases() {
        let mut s = Script::new(bbr());
        let rtt = Dur::from_ms(100);
        for kb in [10u64, 20, 40, 80, 80, 80, 80] {
            s.round(kb * 1000, rtt, 80_000);
        }
        assert_eq!(s.b.mode(), BbrMode::ProbeBw);
        let bdp = 80_000;
        // Move to phase 0 (probing).
        while s.b.cycle_index() != 0 {
            s.round(80_000, rtt + Dur::from_ms(1), bdp);
        }
        let mut gains = vec![];
        for _ in 0..8 {
            gains.push(s.b.pacing_gain());
            let idx = s.b.cycle_index();
            let in_flight = if idx == 0 { bdp * 5 / 4 + 2 * MSS } else { bdp };
            s.round(80_000, rtt + Dur::from_ms(1), in_flight);
            assert_eq!(s.b.cycle_index(), (idx + 1) % 8);
        }
        assert_eq!(gains, PACING_GAIN_CYCLE.to_vec());
        // The window in PROBE_BW is cwnd_gain x BDP (+2 segments in the probing phase), plus
        // the ACK-aggregation allowance (one ACK per round here: at most 100 ms of bw = 1 BDP).
        let aggregation = s.b.ack_aggregation_cwnd();
        assert!(aggregation <= bdp);
        assert!(s.b.window_bytes() <= 2 * bdp + 2 * MSS + aggregation, "cwnd {}", s.b.window_bytes());
        assert!(s.b.window_bytes() >= 2 * bdp, "cwnd {}", s.b.window_bytes());
        // Pacing at gain x bw, 1 % below: in the draining phase 0.75 x (80 kB / 101 ms) x 0.99.
        assert_eq!(s.b.cycle_index(), 0);
        s.round(80_000, rtt + Dur::from_ms(1), bdp * 2);
        assert_eq!(s.b.cycle_index(), 1);
        let rate = s.b.pacing_rate_bps().unwrap() / 8.0;
        assert!((rate - 0.75 * 80_000.0 / 0.101 * 0.99).abs() < 1.0, "rate {rate}");
    }

    // PROBE_RTT: 10 s without an RTT at or below the minimum (100 ms; every sample 120 ms)
    // sends BBR to PROBE_RTT with a 4-segment window; once in flight is at 4 segments it
    // holds for 200 ms and one round, then restores the saved window and returns to PROBE_BW.
    // The next dip comes 10 s after the exit.
    #[test]
    fn probe_rtt_entry_and_exit() {
        let mut s = Script::new(bbr());
        let rtt = Dur::from_ms(100);
        for kb in [10u64, 20, 40, 80, 80, 80, 80] {
            s.round(kb * 1000, rtt, 80_000);
        }
        assert_eq!(s.b.mode(), BbrMode::ProbeBw);
        let mut before = 0;
        let slow = Dur::from_ms(120);
        let mut entered = None;
        while entered.is_none() {
            before = s.b.window_bytes();
            s.round(80_000, slow, 100_000);
            if s.b.mode() == BbrMode::ProbeRtt {
                entered = Some(s.now);
            }
        }
        let entered = entered.unwrap();
        assert!((10.0..10.2).contains(&entered.as_secs_f64()), "entered at {entered:?}");
        assert_eq!(s.b.window_bytes(), 4 * MSS);
        assert_eq!(s.b.pacing_gain(), 1.0);
        // In flight falls to 4 segments: the 200 ms clock starts.
        s.round(80_000, slow, 4 * MSS);
        assert_eq!(s.b.mode(), BbrMode::ProbeRtt);
        let mut exit = None;
        for _ in 0..10 {
            s.round(4 * MSS, Dur::from_ms(100), 4 * MSS);
            if s.b.mode() != BbrMode::ProbeRtt {
                exit = Some(s.now);
                break;
            }
        }
        let exit = exit.expect("PROBE_RTT ends");
        let held = exit.saturating_since(entered);
        assert!(held >= Dur::from_ms(200) && held <= Dur::from_ms(450), "held {held:?}");
        assert_eq!(s.b.mode(), BbrMode::ProbeBw);
        assert!(s.b.window_bytes() >= before, "window restored: {} < {before}", s.b.window_bytes());
        assert_eq!(s.b.min_rtt(), Some(Dur::from_ms(100)), "the 100 ms samples in PROBE_RTT");
        // The next PROBE_RTT is 10 s after the exit.
        let mut next = None;
        while next.is_none() {
            s.round(80_000, slow, 100_000);
            if s.b.mode() == BbrMode::ProbeRtt {
                next = Some(s.now);
            }
        }
        let gap = next.unwrap().saturating_since(exit).as_secs_f64();
        assert!((10.0..10.2).contains(&gap), "next dip after {gap} s");
    }

    // Loss recovery: the first round conserves packets (cwnd = in flight + acked); after the
    // recovery the window saved at its start comes back. A timeout leaves one segment.
    #[test]
    fn recovery_conserves_then_restores() {
        let mut s = Script::new(bbr());
        let rtt = Dur::from_ms(100);
        for kb in [10u64, 20, 40, 80, 80, 80, 80] {
            s.round(kb * 1000, rtt, 80_000);
        }
        let saved = s.b.window_bytes();
        s.b.on_congestion_event(s.now, CongestionEvent::Loss, 80_000);
        s.round(10_000, rtt, 30_000);
        assert_eq!(s.b.window_bytes(), 40_000);
        s.b.on_recovery_exit(s.now, 30_000);
        s.round(10_000, rtt, 30_000);
        // Restored, then capped at the PROBE_BW target 2 BDP = 160 kB (not 40 + 10 kB).
        assert!(saved >= 160_000);
        assert!(s.b.window_bytes() >= 160_000, "cwnd {}", s.b.window_bytes());
        s.b.on_congestion_event(s.now, CongestionEvent::Timeout, 80_000);
        assert_eq!(s.b.window_bytes(), MSS);
        // ECN is ignored.
        let w = s.b.window_bytes();
        s.b.on_congestion_event(s.now, CongestionEvent::Ecn, 80_000);
        assert_eq!(s.b.window_bytes(), w);
    }

    #[test]
    fn params_check_names_the_field() {
        assert!(BbrParams::default().check().is_ok());
        let e = BbrParams { cwnd_gain: 0.5, ..BbrParams::default() }.check().unwrap_err();
        assert!(e.starts_with("cwnd_gain:"), "{e}");
    }
}
