//! MaxNet's router (seed 000, Section IV and Fig. 3): a price per output link, integrating the
//! link's rate mismatch against the virtual capacity `mu C`; every data packet leaves carrying
//! the maximum price of the links it crossed.
//!
//! Per packet (on arrival) one addition, one comparison and maybe one store: `y += size`, then
//! `if p > pkt.price { pkt.price = p }`. Every `dt_p` (seed 000 Fig. 3 and eq. (3)):
//!
//! ```text
//! y += Q dt_p / T0                      (virtual queue of the target rates; Q in bits)
//! p  = max(p + y / C - mu dt_p, p_min)  (p_min = D^-1(C) = T ln(x_max / C))
//! y  = 0
//! ```
//!
//! Decisions where the paper is ambiguous (protocols.md 1.7):
//! - P1: Fig. 3 adds `Q / T0`, a rate, to an amount; we add `Q dt_p / T0` so that a standing
//!   queue `Q` acts as an extra input rate `Q / T0` (the text's "virtual queue of the target
//!   rates"; the kernel's `beta = 2^16 / T0` absorbs the same factor).
//! - P3: the text clips at `p_min = D^-1(C)` (Section VI), Fig. 3 at 0; we use `p_min`, so a
//!   link never advertises more than its capacity.
//! - MaxStart (Section IV-B): a flagged packet collects the smallest spare capacity
//!   `S = (mu + (1 - mu)/4) C - y` of its path, where `y` is the input rate measured over the
//!   last `dt_p`; carried as its price-equivalent `T ln(x_max / S)` (see `wire::maxnet`).

use crate::algorithms::maxnet::header::{decode_price, encode_price, MAXSTART_FLAG};
use crate::link::control_interval::ControlInterval;
use crate::link::{LinkAlgorithm, QueueView, Verdict};
use crate::packet::Packet;
use crate::time::{Dur, Time};
use crate::wire::CongestionHeader;

/// Router parameters.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct MaxNetRouterConfig {
    /// Target utilisation mu (seed 000: 0.9 two-link, 0.94 CBR test; seed 001: 0.95).
    pub mu: f64,
    /// Price update interval dt_p (seed 000: 1 ms).
    pub dt_p: Dur,
    /// Virtual-queue time scale T0 (seed 000: 130 ms).
    pub t0: Dur,
    /// Demand-function scale T of the sources, for `p_min` and MaxStart (seed 000: 0.4 s).
    pub t_s: f64,
    /// Largest supported rate x_max in bit/s (seed 000: 1e15).
    pub x_max_bps: f64,
}

impl Default for MaxNetRouterConfig {
    /// Seed 000 Section VI, except mu which each experiment sets (0.9 is the two-link test's).
    fn default() -> Self {
        MaxNetRouterConfig { mu: 0.9, dt_p: Dur::from_ms(1), t0: Dur::from_ms(130), t_s: 0.4, x_max_bps: 1e15 }
    }
}

/// One output link's MaxNet state.
#[derive(Clone, Debug)]
pub struct MaxNetRouter {
    cfg: MaxNetRouterConfig,
    capacity_bps: f64,
    /// Link price in seconds.
    price: f64,
    /// Lower clip D^-1(C).
    p_min: f64,
    /// Bits arrived since the last update.
    y_bits: f64,
    /// Input rate measured over the last interval (bit/s), for MaxStart's spare capacity.
    y_rate: f64,
    updates: ControlInterval,
}

impl MaxNetRouter {
    /// A router for a link of `capacity_bps`; the first update is at `start + dt_p`.
    pub fn new(cfg: MaxNetRouterConfig, capacity_bps: u64, start: Time) -> MaxNetRouter {
        let c = capacity_bps as f64;
        let p_min = (cfg.t_s * (cfg.x_max_bps / c).ln()).max(0.0);
        MaxNetRouter {
            cfg,
            capacity_bps: c,
            price: p_min,
            p_min,
            y_bits: 0.0,
            y_rate: 0.0,
            updates: ControlInterval::starting(start, cfg.dt_p),
        }
    }

    /// The link price in seconds.
    pub fn price(&self) -> f64 {
        self.price
    }

    /// The price-equivalent of this link's spare capacity (MaxStart).
    fn spare_price(&self) -> f64 {
        let mu = self.cfg.mu;
        let spare = (mu + (1.0 - mu) / 4.0) * self.capacity_bps - self.y_rate;
        if spare <= 0.0 {
            f64::INFINITY // no spare capacity: saturates to the largest code
        } else {
            self.cfg.t_s * (self.cfg.x_max_bps / spare).ln()
        }
    }
}

impl LinkAlgorithm for MaxNetRouter {
    fn on_enqueue(&mut self, _now: Time, pkt: &mut Packet, _queue: &mut dyn QueueView) -> Verdict {
        self.y_bits += 8.0 * pkt.wire_bytes as f64;
        if let (true, CongestionHeader::MaxNet(h)) = (pkt.is_data(), &mut pkt.cc) {
            if h.price & MAXSTART_FLAG != 0 {
                // MaxStart: keep the path's smallest spare capacity (largest equivalent price).
                let code = encode_price(self.spare_price());
                if code > h.price & !MAXSTART_FLAG {
                    h.price = MAXSTART_FLAG | code;
                }
            } else if self.price > decode_price(h.price) {
                h.price = encode_price(self.price);
            }
        }
        Verdict::Queue
    }

    fn poll_timeout(&self) -> Option<Time> {
        Some(self.updates.due())
    }

    fn on_timeout(&mut self, now: Time, backlog_bytes: u64) {
        if !self.updates.take(now) {
            return;
        }
        let dt = self.cfg.dt_p.as_secs_f64();
        self.y_rate = self.y_bits / dt;
        // Virtual queue of the target rates (P1): a standing queue counts as Q/T0 more input.
        let y = self.y_bits + 8.0 * backlog_bytes as f64 * dt / self.cfg.t0.as_secs_f64();
        self.price = (self.price + y / self.capacity_bps - self.cfg.mu * dt).max(self.p_min);
        self.y_bits = 0.0;
    }

    fn gauge(&self) -> f64 {
        self.price
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::maxnet::header::{maxstart_field, read_field, MaxNetField};
    use crate::algorithms::maxnet::MaxNetHeader;
    use crate::link::fake_queue::FakeQueue;
    use crate::wire::{Segment, SegmentKind};

    fn data(bytes: u32, price: u32) -> Packet {
        Packet {
            wire_bytes: bytes,
            seg: Segment { kind: SegmentKind::Data, ..Segment::default() },
            cc: CongestionHeader::MaxNet(MaxNetHeader { echo: 0, price }),
            ..Packet::default()
        }
    }

    fn price_of(p: &Packet) -> MaxNetField {
        match p.cc {
            CongestionHeader::MaxNet(h) => read_field(h.price),
            _ => unreachable!(),
        }
    }

    const C: u64 = 1_000_000_000;

    /// The price starts at and never falls below p_min = T ln(x_max / C) (5.526 s for 1 Gb/s).
    #[test]
    fn price_is_clipped_at_the_inverse_demand_of_capacity() {
        let mut r = MaxNetRouter::new(MaxNetRouterConfig::default(), C, Time::ZERO);
        let p_min = 0.4 * (1e15f64 / 1e9).ln();
        assert!((r.price() - p_min).abs() < 1e-12);
        for k in 1..=100 {
            r.on_timeout(Time::ZERO + Dur::from_ms(k), 0);
        }
        assert_eq!(r.price(), p_min, "idle link: mu dt_p is taken off, then clipped");
    }

    /// Eq. (3): with arrivals y and no queue, dp/dt = (y - mu C)/C. At 1.2 C with mu = 0.9 the
    /// price rises 0.3 s per second.
    #[test]
    fn price_integrates_the_rate_mismatch() {
        let mut r = MaxNetRouter::new(MaxNetRouterConfig::default(), C, Time::ZERO);
        let start = r.price();
        let mut q = FakeQueue::empty(C);
        for ms in 1..=100u64 {
            // 1.2 Gb/s for 1 ms = 150 kB in 100 packets of 1500 B.
            for _ in 0..100 {
                r.on_enqueue(Time::ZERO + Dur::from_ms(ms - 1), &mut data(1500, 0), &mut q);
            }
            r.on_timeout(Time::ZERO + Dur::from_ms(ms), 0);
        }
        assert!((r.price() - start - 0.03).abs() < 1e-9, "rose {}", r.price() - start);
    }

    /// Protocols.md 1.7 P1: a standing queue Q with no arrivals changes p at Q/(T0 C) - mu per s.
    #[test]
    fn standing_queue_acts_as_rate_q_over_t0() {
        let cfg = MaxNetRouterConfig { mu: 0.5, ..MaxNetRouterConfig::default() };
        let mut r = MaxNetRouter::new(cfg, C, Time::ZERO);
        let start = r.price();
        // Q = 130 Mbit = 16.25 MB: Q/T0 = 1 Gb/s = C, so p rises (1 - 0.5) per second.
        for ms in 1..=10u64 {
            r.on_timeout(Time::ZERO + Dur::from_ms(ms), 16_250_000);
        }
        assert!((r.price() - start - 0.005).abs() < 1e-9, "rose {}", r.price() - start);
    }

    /// Data packets leave with max(price carried, link price); lower prices are overwritten,
    /// higher ones kept; ACKs are not stamped.
    #[test]
    fn packets_carry_the_maximum_price() {
        let mut r = MaxNetRouter::new(MaxNetRouterConfig::default(), C, Time::ZERO);
        let mut q = FakeQueue::empty(C);
        let mut low = data(1500, encode_price(1.0));
        r.on_enqueue(Time::ZERO, &mut low, &mut q);
        assert_eq!(price_of(&low), MaxNetField::Price(decode_price(encode_price(r.price()))));
        let mut high = data(1500, encode_price(9.0));
        r.on_enqueue(Time::ZERO, &mut high, &mut q);
        assert_eq!(price_of(&high), MaxNetField::Price(decode_price(encode_price(9.0))));
        let mut ack = data(40, 0);
        ack.seg.kind = SegmentKind::Ack;
        r.on_enqueue(Time::ZERO, &mut ack, &mut q);
        assert_eq!(price_of(&ack), MaxNetField::Price(0.0));
    }

    /// MaxStart: the flagged packet keeps the path's smallest spare capacity
    /// S = (mu + (1 - mu)/4) C - y, as the price-equivalent T ln(x_max / S).
    #[test]
    fn maxstart_collects_the_smallest_spare_capacity() {
        let cfg = MaxNetRouterConfig::default();
        let mut r = MaxNetRouter::new(cfg, C, Time::ZERO);
        let mut q = FakeQueue::empty(C);
        // 500 Mb/s measured in the last interval: S = (0.9 + 0.025) 1e9 - 5e8 = 425 Mb/s.
        for _ in 0..(500_000_000 / 8 / 1000 / 1250) {
            r.on_enqueue(Time::ZERO, &mut data(1250, 0), &mut q);
        }
        r.on_timeout(Time::ZERO + Dur::from_ms(1), 0);
        let mut p = data(1500, maxstart_field(0.0));
        r.on_enqueue(Time::ZERO + Dur::from_ms(1), &mut p, &mut q);
        let MaxNetField::MaxStart(qs) = price_of(&p) else { panic!("flag lost") };
        let s = 1e15 * (-qs / 0.4).exp();
        assert!((s / 425e6 - 1.0).abs() < 1e-4, "spare {s}");
        // A link with more spare capacity further on leaves the value alone.
        let mut idle = MaxNetRouter::new(cfg, 10 * C, Time::ZERO);
        idle.on_enqueue(Time::ZERO, &mut p, &mut q);
        assert_eq!(price_of(&p), MaxNetField::MaxStart(qs));
    }
}
