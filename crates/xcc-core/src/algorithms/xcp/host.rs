//! XCP's sender and receiver (protocols.md 2.7), in the ns-2.35 form of the router
//! (`crate::algorithms::xcp::link`).
//!
//! Sender: every data packet carries the smoothed RTT (0 until the first sample), `x = srtt s /
//! cwnd` and, as its initial feedback, what the sender would like (`desired`, "as much as
//! allowed" by default). Per ACK, `cwnd += reverse_feedback * srtt` (bytes; ns-2.35's
//! `cwnd += reverse_feedback * srtt / size` in packets), floored at one segment and capped at
//! `max_window`. TCP's own window opening is off (no slow start, no additive increase); loss
//! recovery stays the shared transport's: a fast retransmit halves the window, a timeout sets
//! it to one segment (ns-2.35 XCP is a Reno agent with `opencwnd` disabled), after which XCP's
//! feedback opens it again. The window is kept as a real number (protocols.md 2.9 pitfall 5).
//!
//! Receiver: sums the feedback of every data packet an ACK covers and returns the sum as
//! `reverse_feedback` (ns-2.35; protocols.md 2.9 pitfall 6: with delayed ACKs nothing is lost).

use crate::algorithms::xcp::XcpHeader;
use crate::host::{AckEvent, CongestionEvent, Controller, Echoer};
use crate::time::{Dur, Time};
use crate::wire::CongestionHeader;

/// Sender parameters.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct XcpConfig {
    pub mss_bytes: u32,
    /// Window before any feedback, in segments (ns-2 `windowInit_`).
    pub initial_window_segments: u32,
    /// The feedback a packet starts with (bytes/s); routers only lower it.
    pub desired_bytes_per_s: f32,
    /// Largest window in bytes (ns-2 `maxcwnd_`); a path without XCP routers hands out
    /// `desired` unchanged, this bounds the result.
    pub max_window_bytes: f64,
}

impl Default for XcpConfig {
    fn default() -> Self {
        XcpConfig { mss_bytes: 1460, initial_window_segments: 1, desired_bytes_per_s: f32::MAX, max_window_bytes: 1e9 }
    }
}

/// An XCP source.
#[derive(Clone, Debug)]
pub struct Xcp {
    cfg: XcpConfig,
    cwnd: f64,
    srtt: Dur,
    /// Feedback received since the last ACK was processed (bytes/s).
    pending: f64,
}

impl Xcp {
    pub fn new(cfg: XcpConfig) -> Xcp {
        Xcp { cfg, cwnd: (cfg.initial_window_segments.max(1) * cfg.mss_bytes) as f64, srtt: Dur::ZERO, pending: 0.0 }
    }

    /// The window in bytes, unrounded.
    pub fn cwnd(&self) -> f64 {
        self.cwnd
    }

    fn clamp(&mut self) {
        self.cwnd = self.cwnd.clamp(self.cfg.mss_bytes as f64, self.cfg.max_window_bytes);
    }
}

impl Controller for Xcp {
    fn on_feedback(&mut self, _now: Time, echo: &CongestionHeader) {
        if let CongestionHeader::Xcp(h) = echo {
            self.pending += h.reverse_feedback as f64;
        }
    }

    fn on_ack(&mut self, _now: Time, ack: &AckEvent) {
        self.srtt = ack.srtt;
        if self.pending != 0.0 && ack.srtt > Dur::ZERO {
            self.cwnd += self.pending * ack.srtt.as_secs_f64();
            self.clamp();
        }
        self.pending = 0.0;
    }

    fn on_congestion_event(&mut self, _now: Time, event: CongestionEvent, _flight: u64) {
        match event {
            CongestionEvent::Loss => self.cwnd /= 2.0,
            CongestionEvent::Timeout => self.cwnd = self.cfg.mss_bytes as f64,
            // XCP does not use ECN.
            CongestionEvent::Ecn => {}
        }
        self.clamp();
    }

    fn window_bytes(&self) -> u64 {
        self.cwnd as u64
    }

    fn stamp(&mut self, _now: Time, hdr: &mut CongestionHeader) {
        let rtt = self.srtt.as_secs_f64();
        *hdr = CongestionHeader::Xcp(XcpHeader {
            rtt_us: (rtt * 1e6).round() as u32,
            x: (rtt * self.cfg.mss_bytes as f64 / self.cwnd) as f32,
            delta_throughput: self.cfg.desired_bytes_per_s,
            reverse_feedback: 0.0,
        });
    }
}

/// XCP's receiver: the ACK carries the sum of the feedback of the data it acknowledges.
#[derive(Clone, Debug, Default)]
pub struct XcpEcho {
    sum: f64,
    last: XcpHeader,
}

impl Echoer for XcpEcho {
    fn on_data(&mut self, _now: Time, hdr: &CongestionHeader) {
        if let CongestionHeader::Xcp(h) = hdr {
            self.sum += h.delta_throughput as f64;
            self.last = *h;
        }
    }

    fn echo(&mut self, _now: Time) -> CongestionHeader {
        let h = XcpHeader { reverse_feedback: self.sum as f32, delta_throughput: 0.0, ..self.last };
        self.sum = 0.0;
        CongestionHeader::Xcp(h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(srtt_ms: u64) -> AckEvent {
        AckEvent { srtt: Dur::from_ms(srtt_ms), ..AckEvent::default() }
    }

    fn echo(fb: f32) -> CongestionHeader {
        CongestionHeader::Xcp(XcpHeader { reverse_feedback: fb, ..XcpHeader::default() })
    }

    /// cwnd += reverse_feedback * srtt: +14600 B/s over a 100 ms RTT is one more segment.
    #[test]
    fn feedback_times_rtt_changes_the_window() {
        let mut x = Xcp::new(XcpConfig { initial_window_segments: 10, ..XcpConfig::default() });
        x.on_feedback(Time::ZERO, &echo(14_600.0));
        x.on_ack(Time::ZERO, &ack(100));
        assert!((x.cwnd() - 11.0 * 1460.0).abs() < 1e-6);
        x.on_feedback(Time::ZERO, &echo(-1e9));
        x.on_ack(Time::ZERO, &ack(100));
        assert_eq!(x.window_bytes(), 1460, "floored at one segment");
    }

    /// The header carries srtt, x = srtt s / cwnd and the desired feedback.
    #[test]
    fn stamp_carries_rtt_and_inter_packet_time() {
        let mut x = Xcp::new(XcpConfig { initial_window_segments: 4, ..XcpConfig::default() });
        x.on_ack(Time::ZERO, &ack(80));
        let mut h = CongestionHeader::None;
        x.stamp(Time::ZERO, &mut h);
        let CongestionHeader::Xcp(h) = h else { panic!() };
        assert_eq!(h.rtt_us, 80_000);
        assert!((h.x as f64 - 0.02).abs() < 1e-9, "x = 80 ms / 4 packets");
        assert_eq!(h.delta_throughput, f32::MAX);
    }

    /// Losses are Reno's: halve on fast retransmit, one segment on timeout; ECN is ignored.
    #[test]
    fn loss_recovery_is_renos() {
        let mut x = Xcp::new(XcpConfig { initial_window_segments: 8, ..XcpConfig::default() });
        x.on_congestion_event(Time::ZERO, CongestionEvent::Loss, 0);
        assert_eq!(x.window_bytes(), 4 * 1460);
        x.on_congestion_event(Time::ZERO, CongestionEvent::Ecn, 0);
        assert_eq!(x.window_bytes(), 4 * 1460);
        x.on_congestion_event(Time::ZERO, CongestionEvent::Timeout, 0);
        assert_eq!(x.window_bytes(), 1460);
    }

    /// The receiver sums the feedback of the packets one (delayed) ACK covers.
    #[test]
    fn delayed_ack_carries_the_sum() {
        let mut e = XcpEcho::default();
        let data =
            |fb: f32| CongestionHeader::Xcp(XcpHeader { rtt_us: 5, delta_throughput: fb, ..XcpHeader::default() });
        e.on_data(Time::ZERO, &data(100.0));
        e.on_data(Time::ZERO, &data(-30.0));
        let CongestionHeader::Xcp(h) = e.echo(Time::ZERO) else { panic!() };
        assert_eq!((h.reverse_feedback, h.rtt_us), (70.0, 5));
        let CongestionHeader::Xcp(h) = e.echo(Time::ZERO) else { panic!() };
        assert_eq!(h.reverse_feedback, 0.0, "the sum is reset per ACK");
    }
}
