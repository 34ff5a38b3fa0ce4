//! Integer time. `Time` is an instant in nanoseconds since the start of a run, `Dur` a span.
//!
//! Floats never represent time inside the core (style.md, habit 2): every driver passes `now`
//! in, and conversions to seconds happen only at the edges (configuration, reports).

use core::fmt;
use core::ops::{Add, AddAssign, Sub};
use serde::{Deserialize, Serialize};

/// An instant: nanoseconds since the start of the run.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
pub struct Time(pub u64);

/// A span of time in nanoseconds.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
pub struct Dur(pub u64);

impl Time {
    pub const ZERO: Time = Time(0);
    /// Used as "never" for timers that are not armed.
    pub const NEVER: Time = Time(u64::MAX);

    pub const fn from_ns(ns: u64) -> Time {
        Time(ns)
    }
    pub const fn as_ns(self) -> u64 {
        self.0
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    /// `self - earlier`, or zero when `earlier` is later (clocks never run backwards,
    /// but a stale timestamp echoed by a peer may be newer than a local reference).
    pub fn saturating_since(self, earlier: Time) -> Dur {
        Dur(self.0.saturating_sub(earlier.0))
    }
}

impl Dur {
    pub const ZERO: Dur = Dur(0);
    pub const MAX: Dur = Dur(u64::MAX);

    pub const fn from_ns(ns: u64) -> Dur {
        Dur(ns)
    }
    pub const fn from_us(us: u64) -> Dur {
        Dur(us * 1_000)
    }
    pub const fn from_ms(ms: u64) -> Dur {
        Dur(ms * 1_000_000)
    }
    pub const fn from_secs(s: u64) -> Dur {
        Dur(s * 1_000_000_000)
    }
    /// Rounds to the nearest nanosecond; negative or NaN inputs give zero.
    pub fn from_secs_f64(s: f64) -> Dur {
        if s.is_nan() || s <= 0.0 {
            Dur(0)
        } else if s >= u64::MAX as f64 * 1e-9 {
            Dur::MAX
        } else {
            Dur((s * 1e9).round() as u64)
        }
    }
    pub const fn as_ns(self) -> u64 {
        self.0
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    pub fn saturating_mul(self, k: u64) -> Dur {
        Dur(self.0.saturating_mul(k))
    }
}

impl Add<Dur> for Time {
    type Output = Time;
    /// Saturates at `Time::NEVER` so that "now + huge timeout" stays "never".
    fn add(self, d: Dur) -> Time {
        Time(self.0.saturating_add(d.0))
    }
}
impl AddAssign<Dur> for Time {
    fn add_assign(&mut self, d: Dur) {
        *self = *self + d;
    }
}
impl Sub<Time> for Time {
    type Output = Dur;
    /// Panics in debug builds if `rhs` is later than `self`: that is a driver bug.
    fn sub(self, rhs: Time) -> Dur {
        debug_assert!(self.0 >= rhs.0, "time went backwards: {self:?} - {rhs:?}");
        Dur(self.0.saturating_sub(rhs.0))
    }
}
impl Add for Dur {
    type Output = Dur;
    fn add(self, d: Dur) -> Dur {
        Dur(self.0.saturating_add(d.0))
    }
}
impl Sub for Dur {
    type Output = Dur;
    fn sub(self, d: Dur) -> Dur {
        Dur(self.0.saturating_sub(d.0))
    }
}

impl fmt::Debug for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == Time::NEVER {
            write!(f, "never")
        } else {
            write!(f, "{:.9}s", self.as_secs_f64())
        }
    }
}
impl fmt::Debug for Dur {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9}s", self.as_secs_f64())
    }
}

/// Transmission time of `bytes` at `rate_bps`, rounded up to the next nanosecond.
pub fn tx_time(bytes: u64, rate_bps: u64) -> Dur {
    debug_assert!(rate_bps > 0);
    let bits_ns = bytes as u128 * 8 * 1_000_000_000;
    Dur(bits_ns.div_ceil(rate_bps as u128) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_saturates_and_converts() {
        assert_eq!(Time::ZERO + Dur::from_ms(3), Time(3_000_000));
        assert_eq!(Time::NEVER + Dur::from_secs(1), Time::NEVER);
        assert_eq!(Time(10).saturating_since(Time(20)), Dur::ZERO);
        assert_eq!(Dur::from_secs_f64(0.0145), Dur(14_500_000));
        assert_eq!(Dur::from_secs_f64(-1.0), Dur::ZERO);
    }

    #[test]
    fn tx_time_is_exact_or_rounded_up() {
        assert_eq!(tx_time(1500, 1_000_000_000), Dur(12_000));
        // 540 B at 70 Mb/s = 61714.28... ns
        assert_eq!(tx_time(540, 70_000_000), Dur(61_715));
    }
}
