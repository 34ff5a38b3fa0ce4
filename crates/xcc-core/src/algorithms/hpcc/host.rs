//! HPCC's sender (Li et al., SIGCOMM 2019, Algorithm 1), as a sans-IO state machine.
//!
//! Per ACK, with `L` the INT records kept from the previous ACK and `T` the base RTT:
//!
//! ```text
//! MeasureInflight:  for each hop j:
//!                     txRate_j = (ack.tx_j − L.tx_j) / (ack.ts_j − L.ts_j)
//!                     u_j      = min(ack.q_j, L.q_j) / (B_j·T) + txRate_j / B_j
//!                   u, tau = u_j and ts difference of the hop with the largest u_j
//!                   tau = min(tau, T);  U = (1 − tau/T)·U + (tau/T)·u
//! ComputeWind:      if U ≥ eta or incStage ≥ maxStage:  W = Wc / (U/eta) + W_AI   (update: incStage = 0)
//!                   else:                               W = Wc + W_AI           (update: incStage += 1)
//!                   update: Wc = W
//! NewAck:           update = ack.seq > lastUpdateSeq;  W = ComputeWind(MeasureInflight(ack), update)
//!                   if update: lastUpdateSeq = snd_nxt;   R = W/T;   L = ack.L
//! ```
//!
//! So the reference window `Wc` moves once per RTT (the first ACK of data sent after the last
//! update) and every other ACK reacts at once from that reference ("fast reaction",
//! `FAST_REACT 1` in the authors' ns-3 runs). As in the authors' `rdma-hw.cc` (`UpdateRateHp`):
//! the first ACK only stores the records, U starts at 1, and W stays within
//! `[min_rate·T, W_init]` with `W_init = B_NIC·T` (the paper's initial window, section 3.3).
//! The sender's own extra: a hop whose timestamp did not move (a repeated record) gives no
//! rate and is skipped, and a record whose hop count changed (a new path) restarts the history.

use super::HpccParams;
use crate::algorithms::int::IntHeader;
use crate::host::{AckEvent, CongestionEvent, Controller};
use crate::time::{Dur, Time};
use crate::wire::CongestionHeader;

/// HPCC sender state. Windows are bytes (f64: the law divides), rates bit/s.
#[derive(Clone, Debug)]
pub struct HpccSender {
    params: HpccParams,
    /// T, the base RTT, in seconds.
    t: f64,
    w_init: f64,
    w_min: f64,
    w_ai: f64,
    /// W, the window in force.
    window: f64,
    /// Wc, the reference window.
    reference: f64,
    inc_stage: u32,
    /// U, the smoothed normalised in-flight bytes of the most loaded hop.
    u: f64,
    last_update_seq: Option<u64>,
    /// L, the records of the previous ACK.
    last: Option<IntHeader>,
}

impl HpccSender {
    /// A sender on a NIC of `line_rate_bps` with base RTT `base_rtt`, starting at W_init.
    pub fn new(params: HpccParams, line_rate_bps: f64, base_rtt: Dur) -> Result<HpccSender, String> {
        params.check()?;
        if !(line_rate_bps > 0.0 && line_rate_bps.is_finite()) {
            return Err(format!("hpcc: the NIC's line rate must be positive, got {line_rate_bps} bit/s"));
        }
        if base_rtt == Dur::ZERO {
            return Err("hpcc: the base RTT T must be positive".into());
        }
        let t = base_rtt.as_secs_f64();
        let w_init = line_rate_bps / 8.0 * t;
        let w_min = (params.min_rate_bps / 8.0 * t).min(w_init);
        Ok(HpccSender {
            params,
            t,
            w_init,
            w_min,
            w_ai: params.w_ai(w_init),
            window: w_init,
            reference: w_init,
            inc_stage: 0,
            u: 1.0,
            last_update_seq: None,
            last: None,
        })
    }

    /// An ACK arrived: `ack_seq` is the sequence it acknowledges, `snd_nxt` the next sequence
    /// the sender will send, `int` the records the receiver echoed.
    pub fn on_ack(&mut self, ack_seq: u64, snd_nxt: u64, int: &IntHeader) {
        let Some(last) = self.last.filter(|l| l.hops().len() == int.hops().len()) else {
            // First records of this path: nothing to compare yet.
            self.last = Some(*int);
            self.last_update_seq.get_or_insert(snd_nxt);
            return;
        };
        let update = !matches!(self.last_update_seq, Some(s) if ack_seq <= s);
        if let Some((u, tau)) = self.measure(&last, int) {
            let tau = tau.min(self.t);
            self.u = (1.0 - tau / self.t) * self.u + (tau / self.t) * u;
            self.compute_window(update);
        }
        if update {
            self.last_update_seq = Some(snd_nxt);
        }
        self.last = Some(*int);
    }

    /// MeasureInflight's per-hop part: the largest `u_j` and its interval in seconds.
    fn measure(&self, last: &IntHeader, now: &IntHeader) -> Option<(f64, f64)> {
        let mut best: Option<(f64, f64)> = None;
        for (old, new) in last.hops().iter().zip(now.hops()) {
            let tau = new.time_since(old).as_secs_f64();
            if tau <= 0.0 {
                continue;
            }
            let b = new.line_rate_bytes_per_sec();
            let tx_rate = new.tx_bytes_since(old) as f64 / tau;
            let queue = new.queue_bytes.min(old.queue_bytes) as f64;
            let u = queue / (b * self.t) + tx_rate / b;
            if !matches!(best, Some((bu, _)) if u <= bu) {
                best = Some((u, tau));
            }
        }
        best
    }

    /// ComputeWind.
    fn compute_window(&mut self, update: bool) {
        let eta = self.params.eta;
        let multiplicative = self.u >= eta || self.inc_stage >= self.params.max_stage;
        let w = if multiplicative { self.reference / (self.u / eta) + self.w_ai } else { self.reference + self.w_ai };
        self.window = w.clamp(self.w_min, self.w_init);
        if update {
            self.reference = self.window;
            self.inc_stage = if multiplicative { 0 } else { self.inc_stage + 1 };
        }
    }

    /// W in bytes.
    pub fn window_bytes(&self) -> f64 {
        self.window
    }

    /// Wc, the reference window, in bytes.
    pub fn reference_window_bytes(&self) -> f64 {
        self.reference
    }

    /// The pacing rate `R = W/T` in bit/s.
    pub fn rate_bps(&self) -> f64 {
        self.window * 8.0 / self.t
    }

    /// U, the smoothed normalised in-flight bytes.
    pub fn utilisation(&self) -> f64 {
        self.u
    }

    /// incStage: additive steps since the last multiplicative one.
    pub fn inc_stage(&self) -> u32 {
        self.inc_stage
    }

    /// W_init = B_NIC·T in bytes.
    pub fn initial_window_bytes(&self) -> f64 {
        self.w_init
    }

    /// W_AI in bytes.
    pub fn additive_increase_bytes(&self) -> f64 {
        self.w_ai
    }
}

/// HPCC on the shared transport: [`HpccSender`] fed from each ACK, the window `W` limiting
/// the bytes in flight and every packet paced at `W/T` (as the authors' NIC, which keeps both
/// a window and a rate, `rdma-hw.cc`). Every data packet reserves an INT header of `slots`
/// records; the receiver's plain echo copies the last one back. The transport tells the
/// controller of an ACK's echo (`on_feedback`) before its bookkeeping (`on_ack`), which gives
/// `ack_seq` (bytes cumulatively acknowledged) and `snd_nxt` (that plus the flight).
///
/// Losses and timeouts leave the window alone: HPCC runs on a lossless fabric and its law
/// has no loss reaction (the authors' NIC retransmits go-back-N at the same rate); the
/// transport still retransmits.
#[derive(Clone, Debug)]
pub struct Hpcc {
    law: HpccSender,
    slots: usize,
    acked: u64,
    echo: Option<IntHeader>,
}

impl Hpcc {
    /// A sender whose packets reserve `slots` INT records.
    pub fn new(law: HpccSender, slots: usize) -> Hpcc {
        Hpcc { law, slots, acked: 0, echo: None }
    }

    /// The law's state.
    pub fn law(&self) -> &HpccSender {
        &self.law
    }
}

impl Controller for Hpcc {
    fn on_feedback(&mut self, _now: Time, echo: &CongestionHeader) {
        if let CongestionHeader::Int(h) = echo {
            self.echo = Some(*h);
        }
    }

    fn on_ack(&mut self, _now: Time, ack: &AckEvent) {
        self.acked += ack.newly_acked_bytes;
        // An echo with no stamped hop (a path without INT ports) carries nothing to use.
        if let Some(int) = self.echo.take().filter(|h| !h.hops().is_empty()) {
            self.law.on_ack(self.acked, self.acked + ack.flight_bytes, &int);
        }
    }

    fn on_congestion_event(&mut self, _now: Time, _event: CongestionEvent, _flight_size: u64) {}

    fn window_bytes(&self) -> u64 {
        self.law.window_bytes() as u64
    }

    fn pacing_rate_bps(&self) -> Option<f64> {
        Some(self.law.rate_bps())
    }

    fn stamp(&mut self, _now: Time, hdr: &mut CongestionHeader) {
        *hdr = CongestionHeader::Int(IntHeader::new(self.slots).expect("slots checked when the parameters resolved"));
    }

    /// The rate changes per ACK: the pacer is re-timed at once.
    fn is_rate_based(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::int::IntHop;

    // NIC and hop at 100 Gbit/s = 12.5e9 B/s, T = 10 us: W_init = B·T = 125,000 B,
    // W_AI = W_init·(1 − 0.95)/125 = 50 B.
    const KBPS_100G: u32 = 100_000_000;
    const BDP: f64 = 125_000.0;

    fn sender(max_stage: u32) -> HpccSender {
        let p = HpccParams { max_stage, ..HpccParams::default() };
        HpccSender::new(p, 100e9, Dur::from_us(10)).unwrap()
    }

    /// One hop's record: queue bytes, cumulative tx bytes, time in us.
    fn int1(q: u32, tx: u32, t_us: u32) -> IntHeader {
        IntHeader::from_hops(
            5,
            &[IntHop { queue_bytes: q, tx_bytes: tx, timestamp_ns: t_us * 1000, line_rate_kbps: KBPS_100G }],
        )
        .unwrap()
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[track_caller]
    fn expect(s: &HpccSender, u: f64, w: f64, wc: f64, stage: u32) {
        assert!(close(s.utilisation(), u), "U = {}, expected {u}", s.utilisation());
        assert!(close(s.window_bytes(), w), "W = {}, expected {w}", s.window_bytes());
        assert!(close(s.reference_window_bytes(), wc), "Wc = {}, expected {wc}", s.reference_window_bytes());
        assert_eq!(s.inc_stage(), stage);
    }

    // ack  seq      INT (q, tx, ts)           u                          U     W (Wc)
    // 1    1000     (0, 0, 0us)               first records: stored     1     125,000 (125,000)  lastUpdateSeq = 125,000
    // 2    126,000  (25,000, 125,000, 10us)   min(q)=0 + 125,000/10us/B = 1.0   tau = T: U = 1.0
    //               update (126,000 > 125,000): W = 125,000/(1.0/0.95) + 50 = 118,800 = Wc, stage 0
    // 3    127,000  (25,000, 187,500, 15us)   min(q)=25,000/(B·T) = 0.2 + 62,500/5us/B = 1.0 → 1.2
    //               tau = T/2: U = 0.5·1.0 + 0.5·1.2 = 1.1
    //               fast reaction (127,000 ≤ lastUpdateSeq 250,000): W = 118,800/(1.1/0.95) + 50 = 102,650, Wc stays
    #[test]
    fn utilisation_and_window_through_an_update_and_a_fast_reaction() {
        let mut s = sender(5);
        assert!(close(s.additive_increase_bytes(), 50.0));
        s.on_ack(1000, 125_000, &int1(0, 0, 0));
        expect(&s, 1.0, BDP, BDP, 0);
        s.on_ack(126_000, 250_000, &int1(25_000, 125_000, 10));
        expect(&s, 1.0, 118_800.0, 118_800.0, 0);
        s.on_ack(127_000, 251_000, &int1(25_000, 187_500, 15));
        expect(&s, 1.1, 102_650.0, 118_800.0, 0);
        assert!(close(s.rate_bps(), 102_650.0 * 8.0 / 10e-6));
    }

    // maxStage = 5. A standing queue of 0.9·B·T at line rate: U = 0.9 + 1.0 = 1.9,
    // W = 125,000/(1.9/0.95) + 50 = 62,550. Then the hop runs at half rate with no queue
    // (U = 0.5 < eta), one update per RTT:
    //   stage 1..5 (additive):  62,600  62,650  62,700  62,750  62,800
    //   stage 5 reached:        multiplicative: 62,800/(0.5/0.95) + 50 = 119,370, stage 0
    //   then additive again:    119,420 (stage 1)
    #[test]
    fn additive_stages_then_multiplicative_increase_at_max_stage() {
        let mut s = sender(5);
        let (mut seq, mut t_us, mut tx) = (1000u64, 0u32, 0u32);
        s.on_ack(seq, 100_000, &int1(112_500, tx, t_us));
        let mut next_update = |s: &mut HpccSender, q: u32, bytes: u32| {
            seq += 125_000; // past lastUpdateSeq: every ACK here is an update
            t_us += 10;
            tx = tx.wrapping_add(bytes);
            s.on_ack(seq, seq + 100_000, &int1(q, tx, t_us));
        };
        next_update(&mut s, 112_500, 125_000);
        expect(&s, 1.9, 62_550.0, 62_550.0, 0);
        for (stage, w) in [62_600.0, 62_650.0, 62_700.0, 62_750.0, 62_800.0].into_iter().enumerate() {
            next_update(&mut s, 0, 62_500);
            expect(&s, 0.5, w, w, stage as u32 + 1);
        }
        next_update(&mut s, 0, 62_500);
        expect(&s, 0.5, 119_370.0, 119_370.0, 0);
        next_update(&mut s, 0, 62_500);
        expect(&s, 0.5, 119_420.0, 119_420.0, 1);
    }

    // maxStage = 0 (the authors' run.py default): every update is multiplicative, so U = 0.5
    // doubles-minus-5 % the window at once: 62,550/(0.5/0.95) + 50 = 118,895.
    #[test]
    fn max_stage_zero_is_multiplicative_every_update() {
        let mut s = sender(0);
        s.on_ack(1000, 125_000, &int1(112_500, 0, 0));
        s.on_ack(126_000, 250_000, &int1(112_500, 125_000, 10));
        expect(&s, 1.9, 62_550.0, 62_550.0, 0);
        s.on_ack(251_000, 375_000, &int1(0, 187_500, 20));
        expect(&s, 0.5, 118_895.0, 118_895.0, 0);
    }

    // Two hops: the sender follows the more loaded one. Hop 0 idle (u = 0.1), hop 1 at line
    // rate with 50,000 B queued in both records (u = 0.4 + 1.0 = 1.4).
    // U = 1.4: W = 125,000/(1.4/0.95) + 50 = 84,871.43 (= 125,000·0.95/1.4 + 50).
    #[test]
    fn the_most_loaded_hop_sets_u() {
        let mut s = sender(5);
        let two = |tx0: u32, tx1: u32, t_us: u32| {
            let h =
                |q, tx| IntHop { queue_bytes: q, tx_bytes: tx, timestamp_ns: t_us * 1000, line_rate_kbps: KBPS_100G };
            IntHeader::from_hops(5, &[h(0, tx0), h(50_000, tx1)]).unwrap()
        };
        s.on_ack(1000, 125_000, &two(0, 0, 0));
        s.on_ack(126_000, 250_000, &two(12_500, 125_000, 10));
        expect(&s, 1.4, 125_000.0 * 0.95 / 1.4 + 50.0, 125_000.0 * 0.95 / 1.4 + 50.0, 0);
    }

    // The window stays in [min_rate·T, W_init]: U = 100 would ask 125,000·0.95/100 + 50 =
    // 1,237.5 B, below 1 Gbit/s·10 us = 1,250 B.
    #[test]
    fn window_is_clamped_to_min_rate_and_line_rate() {
        let mut s = sender(5);
        s.on_ack(1000, 125_000, &int1(12_375_000, 0, 0));
        s.on_ack(126_000, 250_000, &int1(12_375_000, 125_000, 10));
        assert!(close(s.utilisation(), 100.0));
        assert!(close(s.window_bytes(), 1_250.0));
        assert!(HpccSender::new(HpccParams::default(), 0.0, Dur::from_us(10)).is_err());
        assert!(HpccSender::new(HpccParams::default(), 1e9, Dur::ZERO).is_err());
    }

    #[test]
    fn a_new_path_restarts_the_history() {
        let mut s = sender(5);
        s.on_ack(1000, 125_000, &int1(0, 0, 0));
        let two = IntHeader::from_hops(5, &[IntHop { line_rate_kbps: 1, ..IntHop::default() }; 2]).unwrap();
        s.on_ack(126_000, 250_000, &two);
        expect(&s, 1.0, BDP, BDP, 0);
    }
}
