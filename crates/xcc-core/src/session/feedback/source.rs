//! A feedback source: one feedback packet per round trip; adopts the rate it brings back.

use super::packet::FeedbackPacket;
use crate::session::SourceTask;
use crate::time::Time;

#[derive(Clone, Debug, Default)]
pub struct FeedbackSource {
    demand: f64,
    rate: Option<f64>,
    rtt_us: u32,
    pending: Option<FeedbackPacket>,
    /// When the previous feedback packet left (for `data_bits`).
    last_sent: Option<Time>,
    left: bool,
}

impl FeedbackSource {
    pub fn new() -> FeedbackSource {
        FeedbackSource { demand: f64::INFINITY, ..Default::default() }
    }

    /// The next packet; the session sent at `rate_since` since the previous one left.
    fn request(&mut self, now: Time, rate_since: Option<f64>) {
        let data_bits = match (self.last_sent, rate_since) {
            (Some(t), Some(r)) => r * now.saturating_since(t).as_secs_f64(),
            _ => 0.0,
        };
        self.last_sent = Some(now);
        self.pending =
            Some(FeedbackPacket { rate: self.demand, rtt_us: self.rtt_us, sent_at: now, echoed: false, data_bits });
    }
}

impl SourceTask for FeedbackSource {
    type Packet = FeedbackPacket;

    /// Like RCP's SYN: the first request goes at once; data flow once its answer is back.
    fn join(&mut self, now: Time, demand: f64) {
        self.demand = demand;
        self.request(now, None);
    }

    /// The flow simply stops: nothing to withdraw at the links (they measure their input).
    fn leave(&mut self, _now: Time) {
        self.left = true;
        self.pending = None;
    }

    fn change(&mut self, _now: Time, demand: f64) {
        self.demand = demand;
    }

    fn on_packet(&mut self, now: Time, p: FeedbackPacket) {
        if self.left {
            return;
        }
        let rate_since = self.rate;
        self.rate = Some(p.rate.min(self.demand));
        self.rtt_us = ((now.as_ns().saturating_sub(p.sent_at.as_ns())) / 1_000).min(u32::MAX as u64) as u32;
        self.request(now, rate_since);
    }

    fn poll_transmit(&mut self, _now: Time) -> Option<FeedbackPacket> {
        self.pending.take()
    }

    fn next_wakeup(&self) -> Option<Time> {
        None
    }

    fn rate(&self) -> Option<f64> {
        self.rate
    }

    fn is_finished(&self) -> bool {
        self.left
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_request_per_round_trip_and_the_rate_it_brings() {
        let mut s = FeedbackSource::new();
        s.join(Time::ZERO, f64::INFINITY);
        let p = s.poll_transmit(Time::ZERO).unwrap();
        assert!(s.poll_transmit(Time::ZERO).is_none());
        assert_eq!(s.rate(), None);
        s.on_packet(Time::from_ns(30_000_000), FeedbackPacket { rate: 5e6, echoed: true, ..p });
        assert_eq!(s.rate(), Some(5e6));
        let q = s.poll_transmit(Time::from_ns(30_000_000)).unwrap();
        assert_eq!((q.rtt_us, q.sent_at, q.echoed), (30_000, Time::from_ns(30_000_000), false));
        // No data went before the first answer; the third packet stands for 30 ms at 5 Mb/s.
        assert_eq!((p.data_bits, q.data_bits), (0.0, 0.0));
        s.on_packet(Time::from_ns(60_000_000), FeedbackPacket { rate: 4e6, echoed: true, ..q });
        let r = s.poll_transmit(Time::from_ns(60_000_000)).unwrap();
        assert_eq!((s.rate(), r.data_bits), (Some(4e6), 150_000.0));
        s.leave(Time::from_ns(31_000_000));
        assert!(s.is_finished());
    }
}
