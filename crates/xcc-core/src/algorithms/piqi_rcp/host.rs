//! PIQI-RCP's source: rate-based, as RCP's (protocols.md 3.5 and 4.3.3; seed 002 ran RCP and
//! PIQI-RCP with the same paced end hosts). No slow start and no window: the flow sends paced at
//! the rate the path advertised, as echoed on the latest ACK.
//!
//! Until the first echo the source has one packet in flight (the role of RCP's SYN: it collects
//! the path's rate); then its window is unlimited and its pacing rate is the echoed rate, changed
//! on every ACK. Losses do not change the rate (the transport retransmits). Every data packet
//! carries a fresh request (rate +infinity) and the sender's smoothed RTT.

use crate::algorithms::piqi_rcp::PiqiRcpHeader;
use crate::host::{AckEvent, CongestionEvent, Controller};
use crate::time::Time;
use crate::wire::CongestionHeader;

/// Source parameters.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct PiqiRcpConfig {
    /// Segment payload: the probe's window.
    pub mss_bytes: u32,
}

impl Default for PiqiRcpConfig {
    fn default() -> Self {
        PiqiRcpConfig { mss_bytes: 1460 }
    }
}

/// A PIQI-RCP source.
#[derive(Clone, Debug)]
pub struct PiqiRcp {
    cfg: PiqiRcpConfig,
    /// The latest echoed rate (bit/s on the wire), once one arrived.
    rate_bps: Option<f64>,
    srtt_us: u32,
}

impl PiqiRcp {
    pub fn new(cfg: PiqiRcpConfig) -> PiqiRcp {
        PiqiRcp { cfg, rate_bps: None, srtt_us: 0 }
    }

    /// The rate the source paces at, once it heard one.
    pub fn rate_bps(&self) -> Option<f64> {
        self.rate_bps
    }
}

impl Controller for PiqiRcp {
    fn on_ack(&mut self, _now: Time, ack: &AckEvent) {
        self.srtt_us = (ack.srtt.as_ns() / 1000).min(u32::MAX as u64) as u32;
    }

    /// The rate is set by the routers alone.
    fn on_congestion_event(&mut self, _now: Time, _event: CongestionEvent, _flight_size: u64) {}

    fn on_feedback(&mut self, _now: Time, echo: &CongestionHeader) {
        if let CongestionHeader::PiqiRcp(h) = echo {
            // An unstamped echo (no PIQI-RCP link on the path) says nothing.
            if h.rate_bps.is_finite() && h.rate_bps > 0.0 {
                self.rate_bps = Some(h.rate_bps as f64);
            }
        }
    }

    fn window_bytes(&self) -> u64 {
        match self.rate_bps {
            None => self.cfg.mss_bytes as u64,
            Some(_) => u64::MAX,
        }
    }

    fn pacing_rate_bps(&self) -> Option<f64> {
        self.rate_bps
    }

    fn stamp(&mut self, _now: Time, hdr: &mut CongestionHeader) {
        *hdr = CongestionHeader::PiqiRcp(PiqiRcpHeader::request(self.srtt_us));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Dur;

    fn echo(rate: f32) -> CongestionHeader {
        CongestionHeader::PiqiRcp(PiqiRcpHeader { rate_bps: rate, rtt_us: 0 })
    }

    /// One probe packet until the first echo; then no window and the echoed rate, which follows
    /// every later echo; unstamped echoes and losses change nothing.
    #[test]
    fn probes_then_paces_at_the_echoed_rate() {
        let mut s = PiqiRcp::new(PiqiRcpConfig::default());
        assert_eq!((s.window_bytes(), s.pacing_rate_bps()), (1460, None));
        s.on_feedback(Time::ZERO, &echo(f32::INFINITY));
        assert_eq!(s.pacing_rate_bps(), None);
        s.on_feedback(Time::ZERO, &echo(3e7));
        assert_eq!((s.window_bytes(), s.pacing_rate_bps()), (u64::MAX, Some(3e7)));
        s.on_congestion_event(Time::ZERO, CongestionEvent::Timeout, 0);
        assert_eq!(s.pacing_rate_bps(), Some(3e7));
        s.on_feedback(Time::ZERO, &echo(1e6));
        assert_eq!(s.pacing_rate_bps(), Some(1e6));
    }

    /// Data packets request +infinity and carry the smoothed RTT in microseconds.
    #[test]
    fn stamps_a_request_with_the_rtt() {
        let mut s = PiqiRcp::new(PiqiRcpConfig::default());
        let ack = AckEvent { srtt: Dur::from_ms(42), ..AckEvent::default() };
        s.on_ack(Time::ZERO, &ack);
        let mut h = CongestionHeader::None;
        s.stamp(Time::ZERO, &mut h);
        assert_eq!(h, CongestionHeader::PiqiRcp(PiqiRcpHeader { rate_bps: f32::INFINITY, rtt_us: 42_000 }));
    }
}
