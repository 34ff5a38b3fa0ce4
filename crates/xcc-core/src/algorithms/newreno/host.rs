//! TCP NewReno congestion control: the window rules of RFC 5681 with the recovery exit of
//! RFC 6582.
//!
//! The controller only owns `cwnd` and `ssthresh`. Everything NewReno does with segments (fast
//! retransmit, partial ACKs, the `recover` point, window inflation expressed as a shrinking
//! "pipe") lives in the shared transport ([`crate::transport::Sender`]), which calls:
//!
//! - [`Controller::on_ack`] per ACK: slow start `cwnd += min(acked, SMSS)` while
//!   `cwnd < ssthresh` (RFC 5681 section 3.1, eq. 2), else congestion avoidance
//!   `cwnd += SMSS * acked / cwnd` (RFC 5681 eq. 3 with the byte counting of RFC 3465 section 2.1:
//!   about one SMSS per window of acknowledged data, also with delayed ACKs). The fractional part
//!   is carried in an accumulator so integer division never loses growth. Nothing grows while
//!   the transport reports `in_recovery`.
//! - [`Controller::on_congestion_event`]: `ssthresh = max(FlightSize / 2, 2 SMSS)` (RFC 5681
//!   eq. 4), with FlightSize capped at cwnd (see the method), held on a repeated timeout; after a loss or an ECN-Echo `cwnd = ssthresh` (RFC 6582 with the "pipe" form of
//!   inflation, RFC 3168 section 6.1.2), after a timeout `cwnd = 1 SMSS` (RFC 5681 section 3.1,
//!   the loss window).
//! - [`Controller::on_recovery_exit`]: `cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS)`
//!   (RFC 6582 section 3.2 step 3, option 1), which avoids a burst after recovery.

use crate::host::{AckEvent, CongestionEvent, Controller};
use crate::time::Time;

/// NewReno parameters.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct NewRenoConfig {
    /// Sender maximum segment size (SMSS) in payload bytes; must match the transport's MSS.
    pub mss_bytes: u32,
    /// Initial window in segments.
    pub initial_window_segments: u32,
    /// Largest window the receiver allows (ns-2's `window_`), in bytes; `None` for no cap.
    pub max_window_bytes: Option<u64>,
}

impl Default for NewRenoConfig {
    /// - `mss_bytes = 1460`: Ethernet MTU 1500 minus 40 bytes of IPv4 and TCP headers
    ///   (RFC 879, RFC 5681 section 2 "SMSS"), matching [`crate::transport::TransportConfig`].
    /// - `initial_window_segments = 2`: ns-2's `windowInit_`, inside the RFC 5681 section 3.1
    ///   bound `IW <= min(4 SMSS, max(2 SMSS, 4380 B))` (RFC 6928 allows 10 experimentally).
    /// - `max_window_bytes = None`: no receiver window, so the initial `ssthresh` is
    ///   "arbitrarily high" as RFC 5681 section 3.1 recommends. (ns-2's `window_ = 20` is a
    ///   receiver window: set it here to reproduce ns-2 runs.)
    fn default() -> Self {
        NewRenoConfig { mss_bytes: 1460, initial_window_segments: 2, max_window_bytes: None }
    }
}

/// NewReno state: congestion window and slow-start threshold, in bytes.
#[derive(Debug, Clone)]
pub struct NewReno {
    cfg: NewRenoConfig,
    cwnd: u64,
    ssthresh: u64,
    /// Congestion-avoidance remainder: growth owed, in units of 1/cwnd bytes (`SMSS * acked`
    /// products not yet turned into whole bytes).
    ca_acc: u64,
}

impl NewReno {
    /// A controller in slow start with the initial window.
    pub fn new(cfg: NewRenoConfig) -> NewReno {
        let mss = cfg.mss_bytes.max(1) as u64;
        let cap = cfg.max_window_bytes.unwrap_or(u64::MAX).max(mss);
        let iw = (cfg.initial_window_segments.max(1) as u64 * mss).min(cap);
        NewReno { cfg, cwnd: iw, ssthresh: cap, ca_acc: 0 }
    }

    /// The configuration this controller was built with.
    pub fn config(&self) -> &NewRenoConfig {
        &self.cfg
    }

    /// Congestion window in bytes (before the receiver-window cap).
    pub fn cwnd_bytes(&self) -> u64 {
        self.cwnd
    }

    /// True while `cwnd < ssthresh` (RFC 5681 section 3.1).
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    #[inline]
    fn mss(&self) -> u64 {
        self.cfg.mss_bytes.max(1) as u64
    }

    #[inline]
    fn cap(&self) -> u64 {
        self.cfg.max_window_bytes.unwrap_or(u64::MAX).max(self.mss())
    }

    /// RFC 5681 eq. 4: `ssthresh = max(FlightSize / 2, 2 SMSS)`.
    fn halve(&mut self, flight_size: u64) {
        self.ssthresh = (flight_size / 2).max(2 * self.mss());
        self.ca_acc = 0;
    }
}

impl Controller for NewReno {
    #[inline]
    fn on_ack(&mut self, _now: Time, ack: &AckEvent) {
        if ack.in_recovery || ack.newly_acked_bytes == 0 {
            return;
        }
        let mss = self.mss();
        if self.cwnd < self.ssthresh {
            // Slow start, RFC 5681 eq. 2 (at most one SMSS per ACK, RFC 3465 L = 1 SMSS).
            self.cwnd = self.cwnd.saturating_add(ack.newly_acked_bytes.min(mss));
        } else {
            // Congestion avoidance, RFC 5681 eq. 3 in byte-counting form (RFC 3465 section
            // 2.1): cwnd += SMSS * acked / cwnd, remainder carried in `ca_acc`.
            let total = self.ca_acc.saturating_add(mss.saturating_mul(ack.newly_acked_bytes));
            let inc = total / self.cwnd;
            self.ca_acc = total - inc * self.cwnd;
            // Never more than one SMSS per ACK (RFC 5681 section 3.1).
            self.cwnd = self.cwnd.saturating_add(inc.min(mss));
            if inc >= mss {
                self.ca_acc = 0;
            }
        }
        self.cwnd = self.cwnd.min(self.cap());
    }

    fn on_congestion_event(&mut self, _now: Time, event: CongestionEvent, flight_size: u64) {
        // Loss and ECN: half of min(FlightSize, cwnd). FlightSize alone (RFC 5681 eq. 4) counts
        // everything between snd_una and snd_max; without SACK that includes segments the
        // receiver already holds above a hole. After a long NewReno recovery (one hole per RTT,
        // new data flowing all along) a loss among the new data leaves FlightSize many times
        // cwnd, and halving it would *raise* the window (observed: cwnd 436 -> 2144 segments
        // and a drop storm). ns-2 (`slowdown(CLOSE_SSTHRESH_HALF)`) and Linux
        // (`tcp_reno_ssthresh`) halve cwnd; the min keeps RFC 5681's protection for
        // application-limited flights (FlightSize < cwnd) as well. The same holds for a timeout,
        // except a repeated one: cwnd still 1 SMSS means the timer-retransmitted segment got no
        // ACK, and RFC 5681 section 3.1 then holds ssthresh constant.
        let repeated_timeout = event == CongestionEvent::Timeout && self.cwnd <= self.mss();
        if !repeated_timeout {
            self.halve(flight_size.min(self.cwnd));
        }
        self.cwnd = match event {
            // RFC 6582 / RFC 3168 section 6.1.2: the window drops to ssthresh. (RFC 6582 adds
            // 3 SMSS of inflation; the transport expresses it by shrinking its pipe instead.)
            CongestionEvent::Loss | CongestionEvent::Ecn => self.ssthresh,
            // RFC 5681 section 3.1: after a timeout cwnd is the loss window, one segment.
            CongestionEvent::Timeout => self.mss(),
        };
        self.cwnd = self.cwnd.min(self.cap()).max(self.mss());
    }

    fn on_recovery_exit(&mut self, _now: Time, flight_size: u64) {
        // RFC 6582 section 3.2 step 3, option (1).
        let mss = self.mss();
        self.cwnd = self.ssthresh.min(flight_size.max(mss) + mss).max(mss).min(self.cap());
        self.ca_acc = 0;
    }

    #[inline]
    fn window_bytes(&self) -> u64 {
        self.cwnd
    }

    fn ssthresh_bytes(&self) -> u64 {
        self.ssthresh
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Dur;

    const MSS: u64 = 1000;

    fn reno() -> NewReno {
        NewReno::new(NewRenoConfig { mss_bytes: MSS as u32, ..NewRenoConfig::default() })
    }

    fn ack(bytes: u64) -> AckEvent {
        AckEvent {
            newly_acked_bytes: bytes,
            srtt: Dur::from_ms(100),
            min_rtt: Dur::from_ms(100),
            ..AckEvent::default()
        }
    }

    // cwnd 2 MSS --ACK--> 3 --ACK--> 4 ... one MSS per ACK, so the window doubles per RTT.
    // A 3-MSS stretch ACK still adds only 1 MSS (RFC 3465 L = 1).
    #[test]
    fn slow_start_adds_one_mss_per_ack() {
        let mut r = reno();
        assert_eq!(r.window_bytes(), 2 * MSS);
        assert_eq!(r.ssthresh_bytes(), u64::MAX);
        r.on_ack(Time::ZERO, &ack(MSS));
        r.on_ack(Time::ZERO, &ack(MSS));
        assert_eq!(r.window_bytes(), 4 * MSS);
        r.on_ack(Time::ZERO, &ack(3 * MSS));
        assert_eq!(r.window_bytes(), 5 * MSS);
        // Duplicate ACKs and ACKs in recovery do not grow the window.
        r.on_ack(Time::ZERO, &ack(0));
        r.on_ack(Time::ZERO, &AckEvent { in_recovery: true, ..ack(MSS) });
        assert_eq!(r.window_bytes(), 5 * MSS);
    }

    // Congestion avoidance at cwnd = 10 MSS: one window of ACKs (10 ACKs of 1 MSS) adds exactly
    // 1 MSS; 100 windows later cwnd has grown by ~100 MSS with no rounding drift.
    #[test]
    fn congestion_avoidance_adds_one_mss_per_rtt() {
        let mut r = reno_at(20);
        r.on_congestion_event(Time::ZERO, CongestionEvent::Loss, 20 * MSS);
        assert_eq!(r.window_bytes(), 10 * MSS);
        assert!(!r.in_slow_start());
        for _ in 0..10 {
            r.on_ack(Time::ZERO, &ack(MSS));
        }
        // Slightly under 1 MSS: cwnd grows during the window, so later ACKs add a bit less.
        assert!((10_900..=11_000).contains(&r.window_bytes()), "{}", r.window_bytes());
        // One RTT = one cwnd's worth of single-segment ACKs.
        for _ in 0..100 {
            let before = r.window_bytes();
            for _ in 0..before.div_ceil(MSS) {
                r.on_ack(Time::ZERO, &ack(MSS));
            }
            let grown = r.window_bytes() - before;
            assert!((MSS - 100..=MSS + 100).contains(&grown), "grew {grown}");
        }
        let w = r.window_bytes();
        assert!((110 * MSS - 200..=111 * MSS + 200).contains(&w), "cwnd {w}");
        // Byte counting: delayed ACKs (2 MSS each) grow as fast per RTT.
        let before = r.window_bytes();
        for _ in 0..before / (2 * MSS) {
            r.on_ack(Time::ZERO, &ack(2 * MSS));
        }
        assert!(r.window_bytes() - before >= MSS - 100);
    }

    /// A controller in slow start with cwnd = `segs` MSS.
    fn reno_at(segs: u64) -> NewReno {
        let mut r = reno();
        for _ in 2..segs {
            r.on_ack(Time::ZERO, &ack(MSS));
        }
        assert_eq!(r.window_bytes(), segs * MSS);
        r
    }

    // cwnd 20 MSS. Loss with FlightSize 20 MSS: ssthresh = cwnd = 10 MSS. ECN: same rule.
    // Timeout with FlightSize 3 MSS: ssthresh = max(1.5, 2) MSS = 2 MSS, cwnd = 1 MSS.
    #[test]
    fn reactions_to_loss_ecn_and_timeout() {
        let mut r = reno_at(20);
        r.on_congestion_event(Time::ZERO, CongestionEvent::Loss, 20 * MSS);
        assert_eq!((r.window_bytes(), r.ssthresh_bytes()), (10 * MSS, 10 * MSS));
        r.on_congestion_event(Time::ZERO, CongestionEvent::Ecn, 10 * MSS);
        assert_eq!((r.window_bytes(), r.ssthresh_bytes()), (5 * MSS, 5 * MSS));
        r.on_congestion_event(Time::ZERO, CongestionEvent::Timeout, 3 * MSS);
        assert_eq!((r.window_bytes(), r.ssthresh_bytes()), (MSS, 2 * MSS));
        // Slow start again after the timeout, up to ssthresh, then linear.
        r.on_ack(Time::ZERO, &ack(MSS));
        assert_eq!(r.window_bytes(), 2 * MSS);
        assert!(!r.in_slow_start());
        // A tiny flight never takes ssthresh below 2 MSS nor cwnd below 1 MSS.
        r.on_congestion_event(Time::ZERO, CongestionEvent::Loss, 0);
        assert_eq!((r.window_bytes(), r.ssthresh_bytes()), (2 * MSS, 2 * MSS));
    }

    // Recovery exit: cwnd = min(ssthresh, max(FlightSize, MSS) + MSS).
    //   ssthresh 10 MSS, FlightSize 4 MSS at the full ACK -> cwnd 5 MSS (no burst)
    //   ssthresh 10 MSS, FlightSize 20 MSS               -> cwnd 10 MSS
    //   ssthresh 10 MSS, FlightSize 0                    -> cwnd 2 MSS
    #[test]
    fn recovery_exit_avoids_bursts() {
        let mut r = reno_at(20);
        r.on_congestion_event(Time::ZERO, CongestionEvent::Loss, 20 * MSS);
        r.on_recovery_exit(Time::ZERO, 4 * MSS);
        assert_eq!(r.window_bytes(), 5 * MSS);
        r.on_recovery_exit(Time::ZERO, 20 * MSS);
        assert_eq!(r.window_bytes(), 10 * MSS);
        r.on_recovery_exit(Time::ZERO, 0);
        assert_eq!(r.window_bytes(), 2 * MSS);
    }

    // FlightSize above cwnd (receiver holds data above a hole after a long NewReno recovery):
    //   cwnd 10 MSS, FlightSize 400 MSS, loss -> ssthresh = cwnd / 2 = 5 MSS (not 200 MSS)
    // FlightSize below cwnd (application-limited): cwnd 10 MSS, FlightSize 4 MSS -> 2 MSS.
    // Timeout: same rule; a second timeout before any ACK (cwnd still 1 MSS) holds ssthresh.
    #[test]
    fn loss_halves_the_smaller_of_flight_size_and_cwnd() {
        let mut r = reno_at(10);
        r.on_congestion_event(Time::ZERO, CongestionEvent::Loss, 400 * MSS);
        assert_eq!((r.window_bytes(), r.ssthresh_bytes()), (5 * MSS, 5 * MSS));
        let mut r = reno_at(10);
        r.on_congestion_event(Time::ZERO, CongestionEvent::Ecn, 4 * MSS);
        assert_eq!((r.window_bytes(), r.ssthresh_bytes()), (2 * MSS, 2 * MSS));
        let mut r = reno_at(10);
        r.on_congestion_event(Time::ZERO, CongestionEvent::Timeout, 40 * MSS);
        assert_eq!((r.window_bytes(), r.ssthresh_bytes()), (MSS, 5 * MSS));
        r.on_congestion_event(Time::ZERO, CongestionEvent::Timeout, 40 * MSS);
        assert_eq!((r.window_bytes(), r.ssthresh_bytes()), (MSS, 5 * MSS));
    }

    // max_window_bytes = 5 MSS caps slow start and is the initial ssthresh.
    #[test]
    fn receiver_window_caps_cwnd() {
        let mut r = NewReno::new(NewRenoConfig {
            mss_bytes: MSS as u32,
            initial_window_segments: 2,
            max_window_bytes: Some(5 * MSS),
        });
        assert_eq!(r.ssthresh_bytes(), 5 * MSS);
        for _ in 0..100 {
            r.on_ack(Time::ZERO, &ack(MSS));
        }
        assert_eq!(r.window_bytes(), 5 * MSS);
    }
}
