//! RCP's source (ns-2 rcp-host, protocols.md 3.5) over the shared reliable transport.
//!
//! The first data packet goes out alone (it plays the SYN: the rate arrives with its ACK); from
//! then on the source sends at the rate the last ACK carried, paced (no window, no slow start;
//! the transport re-times the next departure as soon as the rate changes). Every data packet and
//! probe carries "no request" (infinity) and the latest RTT sample. While the gap between packets
//! exceeds the smallest RTT seen, the source also sends a payload-less probe every
//! `min(probe_max, min_rtt)` (ns-2's REF packets every `min(SYN_DELAY, min_rtt)`), so a slow
//! flow still hears about rate changes once per RTT. Losses change nothing: the rate is the
//! routers' (the transport retransmits).
//!
//! Deviations from ns-2's host: no separate 40-byte SYN (the first data packet asks), no
//! "quit with probability 0.1 when the rate is 0" (the routers' floor keeps it positive).

use crate::algorithms::rcp::RcpHeader;
use crate::host::{AckEvent, CongestionEvent, Controller};
use crate::time::{Dur, Time};
use crate::wire::CongestionHeader;

/// Source parameters.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct RcpConfig {
    pub mss_bytes: u32,
    /// Bytes of a full data packet on the wire (pacing spaces packets by this at the rate).
    pub packet_bytes: u32,
    /// Longest probe interval (ns-2 `SYN_DELAY`, 0.5 s).
    pub probe_max: Dur,
}

impl Default for RcpConfig {
    fn default() -> Self {
        RcpConfig { mss_bytes: 1460, packet_bytes: 1510, probe_max: Dur::from_ms(500) }
    }
}

/// An RCP source.
#[derive(Clone, Debug)]
pub struct Rcp {
    cfg: RcpConfig,
    /// Offered rate (bytes/s) from the last ACK, once one arrived.
    rate: Option<f64>,
    latest_rtt: Dur,
    min_rtt: Dur,
    last_probe: Time,
}

impl Rcp {
    pub fn new(cfg: RcpConfig) -> Rcp {
        Rcp { cfg, rate: None, latest_rtt: Dur::ZERO, min_rtt: Dur::ZERO, last_probe: Time::ZERO }
    }

    /// The rate in bytes/s the source sends at, once known.
    pub fn rate(&self) -> Option<f64> {
        self.rate
    }
}

impl Controller for Rcp {
    fn on_ack(&mut self, _now: Time, ack: &AckEvent) {
        if let Some(s) = ack.rtt_sample {
            self.latest_rtt = s;
        }
        self.min_rtt = ack.min_rtt;
    }

    fn on_congestion_event(&mut self, _now: Time, _event: CongestionEvent, _flight: u64) {}

    fn on_feedback(&mut self, _now: Time, echo: &CongestionHeader) {
        if let CongestionHeader::Rcp(h) = echo {
            let r = h.rate as f64;
            if r.is_finite() && r > 0.0 {
                self.rate = Some(r);
            }
        }
    }

    fn window_bytes(&self) -> u64 {
        match self.rate {
            None => self.cfg.mss_bytes as u64,
            Some(_) => u64::MAX,
        }
    }

    fn pacing_rate_bps(&self) -> Option<f64> {
        self.rate.map(|r| 8.0 * r)
    }

    fn stamp(&mut self, _now: Time, hdr: &mut CongestionHeader) {
        let rtt_us = (self.latest_rtt.as_ns() / 1000).min(u32::MAX as u64) as u32;
        *hdr = CongestionHeader::Rcp(RcpHeader { rate: f32::INFINITY, rtt_us });
    }

    fn is_rate_based(&self) -> bool {
        true
    }

    fn probe_due(&self) -> Option<Time> {
        let rate = self.rate?;
        if self.min_rtt == Dur::ZERO {
            return None;
        }
        let gap = self.cfg.packet_bytes as f64 / rate;
        if gap <= self.min_rtt.as_secs_f64() {
            return None;
        }
        Some(self.last_probe + self.min_rtt.min(self.cfg.probe_max))
    }

    fn on_probe_sent(&mut self, now: Time) {
        self.last_probe = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn echo(rate: f32) -> CongestionHeader {
        CongestionHeader::Rcp(RcpHeader { rate, rtt_us: 0 })
    }

    /// One packet until the first rate, then paced at the echoed rate with no window.
    #[test]
    fn sends_at_the_echoed_rate() {
        let mut r = Rcp::new(RcpConfig::default());
        assert_eq!((r.window_bytes(), r.pacing_rate_bps()), (1460, None));
        r.on_feedback(Time::ZERO, &echo(1.25e6));
        assert_eq!((r.window_bytes(), r.pacing_rate_bps()), (u64::MAX, Some(1e7)));
        r.on_feedback(Time::ZERO, &echo(f32::INFINITY));
        assert_eq!(r.pacing_rate_bps(), Some(1e7), "an unstamped echo changes nothing");
        r.on_congestion_event(Time::ZERO, CongestionEvent::Loss, 0);
        assert_eq!(r.pacing_rate_bps(), Some(1e7), "losses change nothing");
    }

    /// Packets carry no request and the latest RTT sample.
    #[test]
    fn stamp_asks_for_everything_and_reports_the_rtt() {
        let mut r = Rcp::new(RcpConfig::default());
        r.on_ack(Time::ZERO, &AckEvent { rtt_sample: Some(Dur::from_us(4_200)), ..AckEvent::default() });
        let mut h = CongestionHeader::None;
        r.stamp(Time::ZERO, &mut h);
        assert_eq!(h, CongestionHeader::Rcp(RcpHeader { rate: f32::INFINITY, rtt_us: 4_200 }));
    }

    /// Probes only while a packet gap exceeds min_rtt, every min(0.5 s, min_rtt).
    #[test]
    fn slow_flows_probe_once_per_rtt() {
        let mut r = Rcp::new(RcpConfig::default());
        r.on_ack(Time::ZERO, &AckEvent { min_rtt: Dur::from_ms(200), ..AckEvent::default() });
        r.on_feedback(Time::ZERO, &echo(1e6));
        assert_eq!(r.probe_due(), None, "1510 B at 1 MB/s: 1.5 ms gap < 200 ms");
        r.on_feedback(Time::ZERO, &echo(1000.0));
        let t = Time::ZERO + Dur::from_secs(3);
        r.on_probe_sent(t);
        assert_eq!(r.probe_due(), Some(t + Dur::from_ms(200)));
        r.on_feedback(Time::ZERO, &echo(100.0));
        r.on_ack(Time::ZERO, &AckEvent { min_rtt: Dur::from_secs(2), ..AckEvent::default() });
        assert_eq!(r.probe_due(), Some(t + Dur::from_ms(500)), "capped at SYN_DELAY");
    }
}
