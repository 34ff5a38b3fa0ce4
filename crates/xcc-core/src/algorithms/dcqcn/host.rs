//! DCQCN's notification point (the receiver's CNP generator) and reaction point (the sender's
//! rate control), Zhu et al., SIGCOMM 2015, section 3.1, as sans-IO state machines.
//!
//! Reaction point, rates R_C (current) and R_T (target), starting at line rate:
//!
//! ```text
//! on CNP:            R_T = R_C;  R_C = R_C·(1 − α/2);  α = (1 − g)·α + g;  T = BC = 0; restart timers
//! every K, no CNP:   α = (1 − g)·α
//! every T (timer):   T += 1, increase;      every B bytes sent:  BC += 1, increase
//! increase:          max(T, BC) ≤ F   fast recovery:  R_C = (R_T + R_C)/2
//!                    min(T, BC) > F   hyper increase: R_T += (min(T, BC) − F)·R_HAI;  R_C = (R_T + R_C)/2
//!                    otherwise        additive:       R_T += R_AI;  R_C = (R_T + R_C)/2
//! ```
//!
//! alpha starts at 1 (htsim's `DCQCNSrc`; HPCC's ns-3 sets it to 1 on the first CNP), so the
//! first CNP halves the rate. The comparison boundaries (F steps of fast recovery per counter,
//! hyper-increase step `min(T, BC) − F`) follow htsim's `dcqcn.cpp`. Rates stay within
//! `[min_rate, line rate]`. The timers and the byte counter run from the first CNP on; before
//! it the sender is at line rate with nothing to recover.
//!
//! Notification point: a CE-marked packet of a flow triggers a CNP at once unless one was sent
//! for the flow less than N ago (the paper's rule). htsim also sends a deferred CNP at the end
//! of the interval when marks arrived inside it; the paper does not, nor does this.

use super::DcqcnParams;
use crate::host::{AckEvent, CongestionEvent, Controller, Echoer};
use crate::time::{Dur, Time};
use crate::wire::CongestionHeader;

/// The receiver side of one flow: turns CE marks into CNPs, at most one per interval N.
#[derive(Clone, Debug)]
pub struct CnpGenerator {
    interval: Dur,
    last_cnp: Option<Time>,
}

impl CnpGenerator {
    /// A generator with `params`' interval N.
    pub fn new(params: &DcqcnParams) -> Result<CnpGenerator, String> {
        params.check()?;
        Ok(CnpGenerator { interval: params.cnp_interval(), last_cnp: None })
    }

    /// A data packet arrived at `now`, CE-marked or not; true when a CNP must be sent now.
    pub fn on_data(&mut self, now: Time, ce: bool) -> bool {
        if !ce {
            return false;
        }
        if matches!(self.last_cnp, Some(t) if now.saturating_since(t) < self.interval) {
            return false;
        }
        self.last_cnp = Some(now);
        true
    }
}

/// Which rule the last rate increase used.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum IncreasePhase {
    FastRecovery,
    Additive,
    Hyper,
}

/// The sender side of one flow.
#[derive(Clone, Debug)]
pub struct DcqcnSender {
    params: DcqcnParams,
    line_rate: f64,
    rc: f64,
    rt: f64,
    alpha: f64,
    timer_count: u32,
    byte_count: u32,
    bytes_since: u64,
    /// `Time::NEVER` until the first CNP.
    alpha_due: Time,
    increase_due: Time,
    last_phase: Option<IncreasePhase>,
}

impl DcqcnSender {
    /// A sender on a NIC of `line_rate_bps`, sending at line rate.
    pub fn new(params: DcqcnParams, line_rate_bps: f64) -> Result<DcqcnSender, String> {
        params.check()?;
        if !(line_rate_bps >= params.min_rate_bps && line_rate_bps.is_finite()) {
            return Err(format!(
                "dcqcn: the NIC's line rate ({line_rate_bps} bit/s) must be finite and at least dcqcn.min_rate_bps ({})",
                params.min_rate_bps
            ));
        }
        Ok(DcqcnSender {
            params,
            line_rate: line_rate_bps,
            rc: line_rate_bps,
            rt: line_rate_bps,
            alpha: 1.0,
            timer_count: 0,
            byte_count: 0,
            bytes_since: 0,
            alpha_due: Time::NEVER,
            increase_due: Time::NEVER,
            last_phase: None,
        })
    }

    /// A CNP arrived at `now`: cut the rate by alpha/2, raise alpha, restart the recovery.
    pub fn on_cnp(&mut self, now: Time) {
        self.rt = self.rc;
        self.rc = (self.rc * (1.0 - self.alpha / 2.0)).max(self.params.min_rate_bps);
        self.alpha = (1.0 - self.params.g) * self.alpha + self.params.g;
        self.timer_count = 0;
        self.byte_count = 0;
        self.bytes_since = 0;
        self.alpha_due = now + self.params.alpha_timer();
        self.increase_due = now + self.params.increase_timer();
    }

    /// `bytes` left the NIC: the byte counter's part of the recovery.
    pub fn on_sent(&mut self, bytes: u64) {
        if self.alpha_due == Time::NEVER {
            return; // no CNP yet: nothing to recover
        }
        self.bytes_since += bytes;
        while self.bytes_since >= self.params.byte_counter_bytes as u64 {
            self.bytes_since -= self.params.byte_counter_bytes as u64;
            self.byte_count += 1;
            self.increase();
        }
    }

    /// When [`DcqcnSender::on_timeout`] is next due (`None` before the first CNP).
    pub fn poll_timeout(&self) -> Option<Time> {
        let due = self.alpha_due.min(self.increase_due);
        (due != Time::NEVER).then_some(due)
    }

    /// Runs every timer due at or before `now`, in time order (alpha before increase at a tie);
    /// early calls do nothing.
    pub fn on_timeout(&mut self, now: Time) {
        loop {
            let alpha_first = self.alpha_due <= self.increase_due;
            let due = if alpha_first { self.alpha_due } else { self.increase_due };
            if due > now || due == Time::NEVER {
                return;
            }
            if alpha_first {
                self.alpha *= 1.0 - self.params.g;
                self.alpha_due = due + self.params.alpha_timer();
            } else {
                self.timer_count += 1;
                self.increase();
                self.increase_due = due + self.params.increase_timer();
            }
        }
    }

    fn increase(&mut self) {
        let f = self.params.fast_recovery_steps;
        let (t, bc) = (self.timer_count, self.byte_count);
        let phase = if t.max(bc) <= f {
            IncreasePhase::FastRecovery
        } else if t.min(bc) > f {
            self.rt += (t.min(bc) - f) as f64 * self.params.rate_hai_bps;
            IncreasePhase::Hyper
        } else {
            self.rt += self.params.rate_ai_bps;
            IncreasePhase::Additive
        };
        self.rt = self.rt.min(self.line_rate);
        self.rc = ((self.rt + self.rc) / 2.0).min(self.line_rate);
        self.last_phase = Some(phase);
    }

    /// R_C, the sending rate, in bit/s.
    pub fn rate_bps(&self) -> f64 {
        self.rc
    }

    /// R_T, the target rate, in bit/s.
    pub fn target_rate_bps(&self) -> f64 {
        self.rt
    }

    /// alpha, the congestion estimate.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// (T, BC): timer and byte-counter expiries since the last CNP.
    pub fn counters(&self) -> (u32, u32) {
        (self.timer_count, self.byte_count)
    }

    /// The rule of the last increase, if any.
    pub fn last_phase(&self) -> Option<IncreasePhase> {
        self.last_phase
    }
}

/// DCQCN's sender on the shared transport: no window, paced at R_C (wire bits); a CNP is an
/// ACK with ECN-Echo ([`DcqcnEcho`] sets it at most once per N), as the HPCC authors' ns-3 NIC
/// flags the CNP on its ACKs. Losses (none on a lossless fabric) are repaired by the transport
/// and leave the rate alone: RoCE's NICs retransmit (go-back-N) at their current rate.
#[derive(Clone, Debug)]
pub struct Dcqcn {
    sender: DcqcnSender,
    cnps: u64,
}

impl Dcqcn {
    /// The controller around a built reaction point.
    pub fn new(sender: DcqcnSender) -> Dcqcn {
        Dcqcn { sender, cnps: 0 }
    }

    /// The reaction point.
    pub fn sender(&self) -> &DcqcnSender {
        &self.sender
    }

    /// CNPs received.
    pub fn cnps(&self) -> u64 {
        self.cnps
    }
}

impl Controller for Dcqcn {
    fn on_ack(&mut self, now: Time, ack: &AckEvent) {
        if ack.ece {
            self.cnps += 1;
            self.sender.on_cnp(now);
        }
    }

    /// The CNP (on the ACK) is the reaction; the transport's once-per-window ECN event and its
    /// loss events change nothing.
    fn on_congestion_event(&mut self, _now: Time, _event: CongestionEvent, _flight_size: u64) {}

    fn on_sent(&mut self, _now: Time, bytes: u64) {
        self.sender.on_sent(bytes);
    }

    fn window_bytes(&self) -> u64 {
        u64::MAX
    }

    fn pacing_rate_bps(&self) -> Option<f64> {
        Some(self.sender.rate_bps())
    }

    fn poll_timeout(&self) -> Option<Time> {
        self.sender.poll_timeout()
    }

    fn on_timeout(&mut self, now: Time) {
        self.sender.on_timeout(now);
    }

    fn is_rate_based(&self) -> bool {
        true
    }

    fn needs_ecn(&self) -> bool {
        true
    }

    fn state_label(&self) -> Option<&'static str> {
        self.sender.last_phase().map(|p| match p {
            IncreasePhase::FastRecovery => "FAST_RECOVERY",
            IncreasePhase::Additive => "ADDITIVE",
            IncreasePhase::Hyper => "HYPER",
        })
    }
}

/// DCQCN's notification point at the receiver: the transport echoes CE per packet, and this
/// lets through at most one CE per flow per N ([`CnpGenerator`]): that ACK is the CNP.
#[derive(Clone, Debug)]
pub struct DcqcnEcho {
    np: CnpGenerator,
    last: CongestionHeader,
}

impl DcqcnEcho {
    pub fn new(np: CnpGenerator) -> DcqcnEcho {
        DcqcnEcho { np, last: CongestionHeader::default() }
    }
}

impl Echoer for DcqcnEcho {
    fn on_data(&mut self, _now: Time, hdr: &CongestionHeader) {
        self.last = *hdr;
    }

    fn echo(&mut self, _now: Time) -> CongestionHeader {
        self.last
    }

    fn echoes_ce_per_packet(&self) -> bool {
        true
    }

    fn echo_ce(&mut self, now: Time, ce: bool) -> bool {
        self.np.on_data(now, ce)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use IncreasePhase::*;

    const G: f64 = 1e9;

    fn us(n: u64) -> Time {
        Time::from_ns(n * 1000)
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[track_caller]
    fn rates(s: &DcqcnSender, rt_gbps: f64, rc_gbps: f64) {
        assert!(close(s.target_rate_bps(), rt_gbps * G), "R_T = {}, expected {rt_gbps} G", s.target_rate_bps() / G);
        assert!(close(s.rate_bps(), rc_gbps * G), "R_C = {}, expected {rc_gbps} G", s.rate_bps() / G);
    }

    /// The paper's parameters on a 40 Gbit/s NIC (its testbed), byte counter as given.
    fn sender(byte_counter_bytes: u32) -> DcqcnSender {
        // R_HAI 400 Mbit/s (ten times R_AI, HPCC's ratio): the hand computation below was done with it.
        let p = DcqcnParams { byte_counter_bytes, rate_hai_bps: 400e6, ..Default::default() };
        DcqcnSender::new(p, 40e9).unwrap()
    }

    // N = 50 us. CE at 0 → CNP; CE at 30 → none (20 us too soon); unmarked at 50 → none;
    // CE at 50 → CNP; CE at 99.999 → none; CE at 100 → CNP.
    #[test]
    fn at_most_one_cnp_per_interval() {
        let mut np = CnpGenerator::new(&DcqcnParams::default()).unwrap();
        assert!(np.on_data(us(0), true));
        assert!(!np.on_data(us(30), true));
        assert!(!np.on_data(us(50), false));
        assert!(np.on_data(us(50), true));
        assert!(!np.on_data(Time::from_ns(99_999), true));
        assert!(np.on_data(us(100), true));
    }

    // g = 1/256, K = T = 55 us, F = 5, R_AI = 40 Mbit/s; byte counter out of reach.
    //
    //  t (us)  event        α                    T   R_T (G)   R_C (G)
    //  0       CNP          1 → 1                0   40        40·(1 − 1/2) = 20
    //  10      CNP          1 → 1                0   20        20·(1 − 1/2) = 10     timers restart: due at 65
    //  65      α, timer     (255/256)            1   20        (20 + 10)/2 = 15        fast recovery
    //  120     α, timer     (255/256)^2          2   20        17.5                    fast recovery
    //  175                                       3   20        18.75
    //  230                                       4   20        19.375
    //  285                                       5   20        19.6875                 fast recovery (5th, = F)
    //  340     α, timer     (255/256)^6          6   20.04     (20.04 + 19.6875)/2 = 19.86375   additive
    //  350     CNP          α6 = (255/256)^6     0   19.86375  19.86375·(1 − α6/2) = 10.16239...
    //                       α ← (1 − g)·α6 + g
    #[test]
    fn alpha_and_rate_after_cnps_and_through_fast_recovery_to_additive() {
        let mut s = sender(u32::MAX);
        assert_eq!(s.poll_timeout(), None, "no timer before the first CNP");
        s.on_cnp(us(0));
        rates(&s, 40.0, 20.0);
        assert_eq!(s.alpha(), 1.0);
        s.on_cnp(us(10));
        rates(&s, 20.0, 10.0);
        assert_eq!(s.poll_timeout(), Some(us(65)));
        s.on_timeout(us(64));
        rates(&s, 20.0, 10.0);
        let fr = [15.0, 17.5, 18.75, 19.375, 19.6875];
        for (k, rc) in fr.into_iter().enumerate() {
            s.on_timeout(us(65 + 55 * k as u64));
            rates(&s, 20.0, rc);
            assert_eq!(s.last_phase(), Some(FastRecovery));
            assert!(close(s.alpha(), (255.0f64 / 256.0).powi(k as i32 + 1)));
        }
        s.on_timeout(us(340));
        rates(&s, 20.04, 19.86375);
        assert_eq!(s.last_phase(), Some(Additive));
        assert_eq!(s.counters(), (6, 0));
        let a6 = (255.0f64 / 256.0).powi(6);
        assert!(close(s.alpha(), a6));
        s.on_cnp(us(350));
        rates(&s, 19.86375, 19.86375 * (1.0 - a6 / 2.0));
        assert!(close(s.rate_bps(), 10.162_391_899_613_315 * G));
        assert!(close(s.alpha(), (1.0 - 1.0 / 256.0) * a6 + 1.0 / 256.0));
        assert_eq!(s.counters(), (0, 0));
        assert_eq!(s.poll_timeout(), Some(us(405)));
    }

    // Two CNPs at 0 (R_T = 20 G, R_C = 10 G), then B = 10 MB sent six times and the timer:
    //
    //  event   T  BC  rule                      R_T (G)   R_C (G)
    //  B x5    0  1-5 fast recovery             20        15, 17.5, 18.75, 19.375, 19.6875
    //  B       0  6   additive (BC > F ≥ T)     20.04     19.86375
    //  timer   1  6   additive                  20.08     19.971875
    //  timer   2-5 6  additive                  20.12 .. 20.24   20.0459375, 20.10296875, 20.151484375, 20.1957421875
    //  timer   6  6   hyper, 6 − 5 = 1 step     20.64     20.41787109375
    //  B       6  7   hyper, min(6, 7) − 5 = 1  21.04     20.728935546875
    //  timer   7  7   hyper, 7 − 5 = 2 steps    21.84     21.2844677734375
    #[test]
    fn byte_counter_and_timer_through_additive_and_hyper_increase() {
        let mut s = sender(10_000_000);
        s.on_sent(50_000_000);
        rates(&s, 40.0, 40.0); // nothing counts before a CNP
        s.on_cnp(us(0));
        s.on_cnp(us(0));
        rates(&s, 20.0, 10.0);
        for rc in [15.0, 17.5, 18.75, 19.375, 19.6875] {
            s.on_sent(10_000_000);
            rates(&s, 20.0, rc);
        }
        s.on_sent(9_999_999);
        rates(&s, 20.0, 19.6875);
        s.on_sent(1);
        rates(&s, 20.04, 19.86375);
        assert_eq!(s.last_phase(), Some(Additive));
        let timer = [
            (20.08, 19.971875),
            (20.12, 20.0459375),
            (20.16, 20.10296875),
            (20.2, 20.151484375),
            (20.24, 20.1957421875),
        ];
        for (k, (rt, rc)) in timer.into_iter().enumerate() {
            s.on_timeout(us(55 * (k as u64 + 1)));
            rates(&s, rt, rc);
            assert_eq!(s.last_phase(), Some(Additive));
        }
        s.on_timeout(us(330));
        rates(&s, 20.64, 20.417_871_093_75);
        assert_eq!(s.last_phase(), Some(Hyper));
        s.on_sent(10_000_000);
        rates(&s, 21.04, 20.728_935_546_875);
        s.on_timeout(us(385));
        rates(&s, 21.84, 21.284_467_773_437_5);
        assert_eq!(s.counters(), (7, 7));
    }

    // A late poll runs every timer it missed, in order: three alpha decays and three increases.
    #[test]
    fn a_late_poll_catches_up_in_order() {
        let mut s = sender(u32::MAX);
        s.on_cnp(us(0)); // R_C 20, R_T 40
        s.on_timeout(us(170));
        assert_eq!(s.counters(), (3, 0));
        rates(&s, 40.0, 37.5); // 30, 35, 37.5
        assert!(close(s.alpha(), (255.0f64 / 256.0).powi(3)));
        assert_eq!(s.poll_timeout(), Some(us(220)));
    }

    // Rates stay within [min_rate, line rate].
    #[test]
    fn rates_are_bounded() {
        let mut s = sender(1);
        for k in 0..20 {
            s.on_cnp(us(k));
        }
        assert_eq!(s.rate_bps(), 100e6);
        s.on_sent(10_000); // ten thousand additive steps of 40 Mbit/s
        assert_eq!(s.rate_bps(), 40e9);
        assert_eq!(s.target_rate_bps(), 40e9);
        assert!(DcqcnSender::new(DcqcnParams::default(), 1e6).unwrap_err().contains("min_rate_bps"));
    }

    // The controller: an ACK with ECE is a CNP (rate 40 → 20 G at once, timers armed); the
    // transport's ECN and loss events change nothing; sending counts toward B.
    #[test]
    fn the_controller_reacts_to_cnps_on_acks_only() {
        let mut c = Dcqcn::new(sender(1_000_000));
        assert_eq!(c.pacing_rate_bps(), Some(40.0 * G));
        assert_eq!(c.window_bytes(), u64::MAX);
        c.on_ack(us(0), &AckEvent { newly_acked_bytes: 1000, ..AckEvent::default() });
        assert_eq!(c.pacing_rate_bps(), Some(40.0 * G));
        c.on_ack(us(1), &AckEvent { newly_acked_bytes: 1000, ece: true, ..AckEvent::default() });
        assert_eq!(c.pacing_rate_bps(), Some(20.0 * G));
        assert_eq!(c.poll_timeout(), Some(us(56)));
        c.on_congestion_event(us(2), CongestionEvent::Ecn, 10_000);
        c.on_congestion_event(us(2), CongestionEvent::Loss, 10_000);
        assert_eq!(c.pacing_rate_bps(), Some(20.0 * G));
        c.on_sent(us(3), 1_000_000);
        assert_eq!(c.pacing_rate_bps(), Some(30.0 * G), "the byte counter's first fast-recovery step");
        assert_eq!(c.state_label(), Some("FAST_RECOVERY"));
        assert_eq!(c.cnps(), 1);
    }

    // The echoer passes CE at most once per 50 us: the CNPs of a flow whose every packet is marked.
    #[test]
    fn the_echoer_is_the_notification_point() {
        let mut e = DcqcnEcho::new(CnpGenerator::new(&DcqcnParams::default()).unwrap());
        assert!(e.echoes_ce_per_packet());
        let echoed: Vec<bool> = (0..12).map(|k| e.echo_ce(us(10 * k), true)).collect();
        let want: Vec<bool> = (0..12).map(|k| k % 5 == 0).collect();
        assert_eq!(echoed, want);
        assert!(!e.echo_ce(us(200), false));
    }
}
