//! A windowed running maximum in O(1) time and space: Kathleen Nichols' algorithm, as Linux's
//! `lib/win_minmax.c` uses it for BBR's bandwidth filter. It keeps the best, second-best and
//! third-best samples of the window, each younger than the one before, so that when the best
//! ages out the next one is already known.

/// One sample: its time (here a round-trip count) and value.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
struct Sample {
    t: u64,
    v: f64,
}

/// The maximum of the samples of the last `win` time units (approximately: a sample may leave
/// up to half a window early when a newer, smaller one replaces it as a fallback).
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct WindowedMax {
    s: [Sample; 3],
}

impl WindowedMax {
    /// The current maximum.
    pub fn get(&self) -> f64 {
        self.s[0].v
    }

    /// Forgets everything: `v` at `t` is the only sample.
    pub fn reset(&mut self, t: u64, v: f64) {
        self.s = [Sample { t, v }; 3];
    }

    /// Adds the sample `v` at time `t` (non-decreasing) to a window of `win`.
    pub fn update(&mut self, win: u64, t: u64, v: f64) {
        let new = Sample { t, v };
        if v >= self.s[0].v || t.saturating_sub(self.s[2].t) > win {
            // A new maximum, or every kept sample is too old.
            return self.reset(t, v);
        }
        if v >= self.s[1].v {
            self.s[1] = new;
            self.s[2] = new;
        } else if v >= self.s[2].v {
            self.s[2] = new;
        }
        self.age(win, new);
    }

    /// Moves the kept samples along as the best ones age.
    fn age(&mut self, win: u64, new: Sample) {
        let dt = new.t.saturating_sub(self.s[0].t);
        if dt > win {
            // The best left the window: the second-best takes over, and again if it is old too.
            self.s = [self.s[1], self.s[2], new];
            if new.t.saturating_sub(self.s[0].t) > win {
                self.s = [self.s[1], self.s[2], new];
            }
        } else if self.s[1].t == self.s[0].t && dt > win / 4 {
            // A quarter of the window passed with no second choice: take one.
            self.s[1] = new;
            self.s[2] = new;
        } else if self.s[2].t == self.s[1].t && dt > win / 2 {
            // Half the window passed with no third choice: take one.
            self.s[2] = new;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Window of 10 rounds: 100 at round 0, then 50s. The max is 100 through round 10 and
    // falls to a 50 once round 0 is more than 10 rounds old; a larger sample takes over at once.
    #[test]
    fn max_over_a_window_of_rounds() {
        let mut f = WindowedMax::default();
        f.update(10, 0, 100.0);
        for r in 1..=10 {
            f.update(10, r, 50.0);
            assert_eq!(f.get(), 100.0, "round {r}");
        }
        f.update(10, 11, 50.0);
        assert_eq!(f.get(), 50.0);
        f.update(10, 12, 70.0);
        assert_eq!(f.get(), 70.0);
        // A slow decline: each sample is the maximum until it ages out.
        let mut f = WindowedMax::default();
        for r in 0..40u64 {
            f.update(10, r, 100.0 - r as f64);
            let expect_at_least = 100.0 - r as f64;
            assert!(f.get() >= expect_at_least && f.get() <= 100.0 - r.saturating_sub(10) as f64);
        }
    }
}
