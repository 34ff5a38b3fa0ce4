//! COBB's source (reconstructed): one control packet per period T, from the moment the flow
//! joins, whatever has come back; the rate is `min(ER, demand)` of the latest answer. The
//! period, not the 1 % budget, spaces the packets: the link rules need every flow to be
//! counted once per period.

use super::packet::CobbPacket;
use crate::session::SourceTask;
use crate::time::{Dur, Time};

#[derive(Clone, Debug)]
pub struct CobbSource {
    period: Dur,
    demand: f64,
    rate: Option<f64>,
    next_send: Option<Time>,
    /// Packets sent and not yet back.
    outstanding: u32,
    leaving: bool,
}

impl CobbSource {
    pub fn new(period: Dur) -> CobbSource {
        CobbSource { period, demand: f64::INFINITY, rate: None, next_send: None, outstanding: 0, leaving: false }
    }
}

impl SourceTask for CobbSource {
    type Packet = CobbPacket;

    fn join(&mut self, now: Time, demand: f64) {
        self.demand = demand;
        self.next_send = Some(now);
    }

    /// Routers keep no state of the flow: it simply stops sending.
    fn leave(&mut self, _now: Time) {
        self.leaving = true;
        self.next_send = None;
    }

    fn change(&mut self, _now: Time, demand: f64) {
        self.demand = demand;
        if let Some(r) = self.rate {
            self.rate = Some(r.min(demand));
        }
    }

    fn on_packet(&mut self, _now: Time, p: CobbPacket) {
        self.outstanding = self.outstanding.saturating_sub(1);
        if !self.leaving {
            self.rate = Some(p.er.min(self.demand));
        }
    }

    fn poll_transmit(&mut self, now: Time) -> Option<CobbPacket> {
        match self.next_send {
            Some(t) if t <= now => {
                // Keep the period grid even if polled late.
                let mut next = t + self.period;
                while next <= now {
                    next += self.period;
                }
                self.next_send = Some(next);
                self.outstanding += 1;
                Some(CobbPacket { rate: self.rate.unwrap_or(0.0), er: self.demand })
            }
            _ => None,
        }
    }

    fn next_wakeup(&self) -> Option<Time> {
        self.next_send
    }

    fn rate(&self) -> Option<f64> {
        if self.leaving {
            None
        } else {
            self.rate
        }
    }

    /// Done once it left and its last packet came home (nothing of it remains in the network).
    fn is_finished(&self) -> bool {
        self.leaving && self.outstanding == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Time {
        Time::ZERO + Dur::from_ms(n)
    }

    #[test]
    fn one_packet_per_period_from_join() {
        let mut s = CobbSource::new(Dur::from_ms(70));
        s.join(ms(5), 40e6);
        assert_eq!(s.poll_transmit(ms(5)), Some(CobbPacket { rate: 0.0, er: 40e6 }));
        assert_eq!(s.poll_transmit(ms(6)), None);
        assert_eq!(s.next_wakeup(), Some(ms(75)));
        s.on_packet(ms(60), CobbPacket { rate: 0.0, er: 25e6 });
        assert_eq!(s.rate(), Some(25e6));
        assert_eq!(s.poll_transmit(ms(75)), Some(CobbPacket { rate: 25e6, er: 40e6 }));
        // Polled late: the grid is kept (next at 215, not 230 + 70).
        assert!(s.poll_transmit(ms(160)).is_some());
        assert_eq!(s.next_wakeup(), Some(ms(215)));
    }

    #[test]
    fn leave_finishes_when_the_last_packet_is_home() {
        let mut s = CobbSource::new(Dur::from_ms(70));
        s.join(ms(0), f64::INFINITY);
        s.poll_transmit(ms(0));
        s.leave(ms(10));
        assert!(!s.is_finished(), "one packet still out");
        assert_eq!(s.next_wakeup(), None);
        s.on_packet(ms(40), CobbPacket { rate: 0.0, er: 9.0 });
        assert!(s.is_finished());
        assert_eq!(s.rate(), None);
    }
}
