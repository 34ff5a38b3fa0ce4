//! Counting a router's per-packet arithmetic from the code itself.
//!
//! The per-packet paths of the explicit routers (XCP, RCP) are written once, generic over
//! [`Scalar`]. The routers run them on `f64` (no cost); [`Counted`] runs the *same* functions
//! while counting every addition, subtraction, multiplication, division and comparison in a
//! thread-local tally, so the table of `xcc analyze per-packet-work` and docs/algorithms is
//! measured from the implementation, not written by hand.

use std::cell::Cell;
use std::ops::{Add, Div, Mul, Neg, Sub};

/// Arithmetic a per-packet path may use.
pub trait Scalar:
    Copy
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
{
    fn lit(v: f64) -> Self;
    fn value(self) -> f64;
    /// `self < other`, counted as one comparison.
    fn lt(self, other: Self) -> bool;
    fn min(self, other: Self) -> Self {
        if other.lt(self) {
            other
        } else {
            self
        }
    }
    fn max(self, other: Self) -> Self {
        if self.lt(other) {
            other
        } else {
            self
        }
    }
}

impl Scalar for f64 {
    #[inline(always)]
    fn lit(v: f64) -> f64 {
        v
    }
    #[inline(always)]
    fn value(self) -> f64 {
        self
    }
    #[inline(always)]
    fn lt(self, other: f64) -> bool {
        self < other
    }
}

/// Operation counts (additions include subtractions; multiplications include divisions, which
/// are listed separately too).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct OpCounts {
    pub adds: u32,
    pub muls: u32,
    pub divs: u32,
    pub cmps: u32,
}

thread_local! {
    static TALLY: Cell<OpCounts> = const { Cell::new(OpCounts { adds: 0, muls: 0, divs: 0, cmps: 0 }) };
}

enum Op {
    Add,
    Mul,
    Div,
    Cmp,
}

fn tally(op: Op) {
    TALLY.with(|t| {
        let mut c = t.get();
        match op {
            Op::Add => c.adds += 1,
            Op::Mul => c.muls += 1,
            Op::Div => {
                c.muls += 1;
                c.divs += 1;
            }
            Op::Cmp => c.cmps += 1,
        }
        t.set(c);
    });
}

/// Runs `f` and returns what it counted.
pub fn count<R>(f: impl FnOnce() -> R) -> (R, OpCounts) {
    TALLY.with(|t| t.set(OpCounts::default()));
    let r = f();
    (r, TALLY.with(|t| t.get()))
}

/// An `f64` that counts the operations done on it.
#[derive(Copy, Clone, Debug, PartialEq, PartialOrd)]
pub struct Counted(pub f64);

impl Add for Counted {
    type Output = Counted;
    fn add(self, o: Counted) -> Counted {
        tally(Op::Add);
        Counted(self.0 + o.0)
    }
}
impl Sub for Counted {
    type Output = Counted;
    fn sub(self, o: Counted) -> Counted {
        tally(Op::Add);
        Counted(self.0 - o.0)
    }
}
impl Mul for Counted {
    type Output = Counted;
    fn mul(self, o: Counted) -> Counted {
        tally(Op::Mul);
        Counted(self.0 * o.0)
    }
}
impl Div for Counted {
    type Output = Counted;
    fn div(self, o: Counted) -> Counted {
        tally(Op::Div);
        Counted(self.0 / o.0)
    }
}
impl Neg for Counted {
    type Output = Counted;
    fn neg(self) -> Counted {
        Counted(-self.0) // a sign flip, not arithmetic
    }
}

impl Scalar for Counted {
    fn lit(v: f64) -> Counted {
        Counted(v)
    }
    fn value(self) -> f64 {
        self.0
    }
    fn lt(self, other: Counted) -> bool {
        tally(Op::Cmp);
        self.0 < other.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_each_operation_once() {
        let (v, n) = count(|| {
            let a = Counted(2.0);
            let b = Counted(3.0);
            (a * b + a - b / a).max(Counted(0.0))
        });
        assert_eq!(v.0, 6.5);
        assert_eq!(n, OpCounts { adds: 2, muls: 2, divs: 1, cmps: 1 });
        // A fresh count starts at zero.
        assert_eq!(count(|| ()).1, OpCounts::default());
    }
}
