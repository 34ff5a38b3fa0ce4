//! A link direction with fluid data and packet-level control: data is a piecewise-constant
//! input rate (the sum of the sessions' current rates), the backlog is integrated exactly
//! between rate changes, and a control packet waits behind the backlog in FIFO order.

use xcc_core::{Dur, Time};

#[derive(Clone, Debug, Default)]
pub struct FluidLink {
    pub capacity: f64,
    pub delay: Dur,
    /// Data input rate, bit/s.
    pub input: f64,
    /// Backlog (data and control), bits.
    pub queue: f64,
    /// Largest backlog since the last [`FluidLink::take_max`].
    max_queue: f64,
    /// Bits that entered since the last [`FluidLink::take_input`].
    bits_in: f64,
    at: Time,
}

impl FluidLink {
    pub fn new(capacity: f64, delay: Dur) -> FluidLink {
        FluidLink { capacity, delay, ..Default::default() }
    }

    /// Integrates the backlog up to `now` (input constant since the last call, so the
    /// backlog is linear and its maximum is at an end point).
    #[inline]
    pub fn advance(&mut self, now: Time) {
        if now > self.at {
            let dt = (now - self.at).as_secs_f64();
            self.bits_in += self.input * dt;
            self.queue = (self.queue + (self.input - self.capacity) * dt).max(0.0);
            self.max_queue = self.max_queue.max(self.queue);
            self.at = now;
        }
    }

    /// Changes the data input rate at `now` by `delta`.
    pub fn add_input(&mut self, now: Time, delta: f64) {
        self.advance(now);
        self.input = (self.input + delta).max(0.0);
    }

    /// A control packet of `bits` enters at `now`: returns when it reaches the far end.
    pub fn traverse(&mut self, now: Time, bits: f64) -> Time {
        self.advance(now);
        self.queue += bits;
        self.bits_in += bits;
        self.max_queue = self.max_queue.max(self.queue);
        now + Dur::from_secs_f64(self.queue / self.capacity) + self.delay
    }

    /// The largest backlog since the previous call; restarts from the current backlog.
    pub fn take_max(&mut self) -> f64 {
        let m = self.max_queue;
        self.max_queue = self.queue;
        m
    }

    /// Bits that entered since the previous call.
    pub fn take_input(&mut self) -> f64 {
        std::mem::take(&mut self.bits_in)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backlog_grows_and_drains_exactly() {
        let mut l = FluidLink::new(1e6, Dur::from_ms(5));
        l.add_input(Time::ZERO, 1.5e6); // 0.5 Mb/s excess
        l.add_input(Time::from_ns(1_000_000_000), -1.0e6); // after 1 s: 0.5 Mb backlog, drains at 0.5 Mb/s
        assert!((l.queue - 5e5).abs() < 1e-6);
        // A 1000-bit packet at 1.5 s waits for 0.25 Mb + itself: 0.251 s, then 5 ms.
        let t = l.traverse(Time::from_ns(1_500_000_000), 1000.0);
        assert_eq!(t, Time::from_ns(1_500_000_000 + 251_000_000 + 5_000_000));
        assert!((l.take_max() - 5e5).abs() < 1e-6);
        l.advance(Time::from_ns(3_000_000_000));
        assert_eq!(l.queue, 0.0);
        let bits = l.take_input();
        assert!((bits - (1.5e6 + 0.5e6 * 2.0 + 1000.0)).abs() < 1e-3, "{bits}");
    }

    #[test]
    fn control_packets_keep_fifo_order() {
        let mut l = FluidLink::new(1e6, Dur::ZERO);
        let a = l.traverse(Time::from_ns(0), 8000.0);
        let b = l.traverse(Time::from_ns(1_000), 8000.0);
        assert!(b > a);
    }
}
