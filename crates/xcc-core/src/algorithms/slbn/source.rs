//! The SLBN source task (seed 004, Fig. 1), with the optional gap between Probe cycles that
//! keeps control traffic within its budget (about 1 % of the session's rate).

use super::packet::{SlbnKind, SlbnPacket};
use crate::session::budget::ControlBudget;
use crate::session::SourceTask;
use crate::time::Time;

#[derive(Clone, Debug)]
pub struct SlbnSource {
    /// `D`: the requested maximum rate.
    demand: f64,
    /// `pendLeave`: send Leave when the current cycle ends.
    pend_leave: bool,
    /// The last `API.Rate` value.
    rate: Option<f64>,
    /// The next packet and the time it may leave.
    pending: Option<(SlbnPacket, Time)>,
    /// Fields of the last ProbeAck, for a Leave while the next Probe waits for its budget.
    last_ack: Option<SlbnPacket>,
    last_sent: Time,
    budget: ControlBudget,
    finished: bool,
}

impl SlbnSource {
    pub fn new(budget: ControlBudget) -> SlbnSource {
        SlbnSource {
            demand: f64::INFINITY,
            pend_leave: false,
            rate: None,
            pending: None,
            last_ack: None,
            last_sent: Time::ZERO,
            budget,
            finished: false,
        }
    }

    pub fn demand(&self) -> f64 {
        self.demand
    }

    fn leave_packet(ack: &SlbnPacket) -> SlbnPacket {
        SlbnPacket { kind: SlbnKind::Leave, ..*ack }
    }
}

impl SourceTask for SlbnSource {
    type Packet = SlbnPacket;

    /// Fig. 1, lines 4-7.
    fn join(&mut self, now: Time, demand: f64) {
        self.demand = demand;
        self.pend_leave = false;
        self.pending = Some((SlbnPacket::join(demand), now));
    }

    /// Fig. 1, lines 9-11. If the cycle has already ended and the next Probe is only waiting
    /// for its budget, the cycle is over: the Leave goes now with the last ProbeAck's fields,
    /// exactly what line 19 would have sent had the Leave come a moment earlier.
    fn leave(&mut self, now: Time) {
        self.pend_leave = true;
        if let (Some((p, _)), Some(ack)) = (&self.pending, &self.last_ack) {
            if p.kind == SlbnKind::Probe {
                self.pending = Some((Self::leave_packet(ack), now));
            }
        }
    }

    /// Fig. 1, lines 13-15: used from the next Probe cycle.
    fn change(&mut self, _now: Time, demand: f64) {
        self.demand = demand;
    }

    /// Fig. 1, lines 17-24.
    fn on_packet(&mut self, now: Time, p: SlbnPacket) {
        assert_eq!(p.kind, SlbnKind::ProbeAck, "SLBN source received {:?}", p.kind);
        if self.pend_leave {
            self.pending = Some((Self::leave_packet(&p), now));
            return;
        }
        self.rate = Some(p.bw);
        self.last_ack = Some(p);
        let probe = SlbnPacket {
            kind: SlbnKind::Probe,
            bw2: p.bw1,
            bw1: p.bw,
            bw: p.bw.min(self.demand),
            bottlenecks: p.bottlenecks,
            last: p.last,
        };
        // The cycle's two packets (Probe down, ProbeAck up) share the budget (section 6.7-6).
        let due = self.budget.next_cycle(self.last_sent, self.rate, 2).max(now);
        self.pending = Some((probe, due));
    }

    fn poll_transmit(&mut self, now: Time) -> Option<SlbnPacket> {
        match self.pending {
            Some((p, due)) if due <= now => {
                self.pending = None;
                self.last_sent = now;
                if p.kind == SlbnKind::Leave {
                    self.finished = true;
                }
                Some(p)
            }
            _ => None,
        }
    }

    fn next_wakeup(&self) -> Option<Time> {
        self.pending.map(|(_, due)| due)
    }

    fn rate(&self) -> Option<f64> {
        self.rate
    }

    fn is_finished(&self) -> bool {
        self.finished
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Dur;

    fn ack(bw2: f64, bw1: f64, bw: f64) -> SlbnPacket {
        SlbnPacket { kind: SlbnKind::ProbeAck, bw2, bw1, bw, bottlenecks: Default::default(), last: Some(2) }
    }

    #[test]
    fn cycle_shifts_fields_and_caps_at_demand() {
        let mut s = SlbnSource::new(ControlBudget { fraction: 0.0, packet_bytes: 64 });
        s.join(Time::ZERO, 40.0);
        let j = s.poll_transmit(Time::ZERO).unwrap();
        assert_eq!(j, SlbnPacket::join(40.0));
        assert_eq!(s.rate(), None);
        s.on_packet(Time::from_ns(10), ack(0.0, 0.0, 25.0));
        assert_eq!(s.rate(), Some(25.0));
        let p = s.poll_transmit(Time::from_ns(10)).unwrap();
        assert_eq!((p.kind, p.bw2, p.bw1, p.bw, p.last), (SlbnKind::Probe, 0.0, 25.0, 25.0, Some(2)));
        // A larger answer is capped by D in the next Probe's bw, but reported as is.
        s.on_packet(Time::from_ns(20), ack(0.0, 25.0, 60.0));
        assert_eq!(s.rate(), Some(60.0));
        let p = s.poll_transmit(Time::from_ns(20)).unwrap();
        assert_eq!((p.bw2, p.bw1, p.bw), (25.0, 60.0, 40.0));
    }

    #[test]
    fn leave_waits_for_the_cycle_then_carries_the_ack_fields() {
        let mut s = SlbnSource::new(ControlBudget { fraction: 0.0, packet_bytes: 64 });
        s.join(Time::ZERO, f64::INFINITY);
        s.poll_transmit(Time::ZERO).unwrap();
        s.leave(Time::from_ns(5));
        assert!(s.poll_transmit(Time::from_ns(5)).is_none(), "cycle still in flight");
        s.on_packet(Time::from_ns(10), ack(0.0, 0.0, 25.0));
        let l = s.poll_transmit(Time::from_ns(10)).unwrap();
        assert_eq!((l.kind, l.bw2, l.bw1, l.bw), (SlbnKind::Leave, 0.0, 0.0, 25.0));
        assert!(s.is_finished());
    }

    #[test]
    fn budget_delays_the_next_probe_and_leave_cuts_the_wait() {
        // Two 64 B packets = 1024 bit at 1 % of 100 kb/s = 1 kb/s -> 1.024 s after the last send.
        let mut s = SlbnSource::new(ControlBudget::default());
        s.join(Time::ZERO, f64::INFINITY);
        s.poll_transmit(Time::ZERO).unwrap();
        s.on_packet(Time::from_ns(1_000), ack(0.0, 0.0, 100e3));
        assert_eq!(s.next_wakeup(), Some(Time::ZERO + Dur::from_ms(1024)));
        assert!(s.poll_transmit(Time::from_ns(1_000)).is_none());
        s.leave(Time::from_ns(2_000));
        let l = s.poll_transmit(Time::from_ns(2_000)).unwrap();
        assert_eq!((l.kind, l.bw1, l.bw), (SlbnKind::Leave, 0.0, 100e3));
    }
}
