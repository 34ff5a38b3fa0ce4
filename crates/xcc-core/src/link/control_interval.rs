//! A fixed control interval: when a link algorithm's periodic update is due (MaxNet's price,
//! PIQI-RCP's rate, JetMax's fair share).

use crate::time::{Dur, Time};

#[derive(Copy, Clone, Debug)]
pub struct ControlInterval {
    next: Time,
    every: Dur,
}

impl ControlInterval {
    /// Updates every `every`, the first at `start + every`.
    pub fn starting(start: Time, every: Dur) -> ControlInterval {
        ControlInterval { next: start + every, every }
    }

    /// When the next update is due.
    pub fn due(&self) -> Time {
        self.next
    }

    /// Whether an update is due at `now`; if so the next boundary is one interval later. A
    /// driver that woke a whole interval late (it never should) resynchronises from `now`
    /// rather than running the missed updates back to back.
    pub fn take(&mut self, now: Time) -> bool {
        if now < self.next {
            return false;
        }
        self.next += self.every;
        if self.next <= now {
            self.next = now + self.every;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Time {
        Time::ZERO + Dur::from_ms(n)
    }

    #[test]
    fn due_every_interval_and_resynchronised_after_a_late_wake_up() {
        let mut c = ControlInterval::starting(ms(3), Dur::from_ms(5));
        assert_eq!(c.due(), ms(8));
        assert!(!c.take(ms(7)));
        assert!(c.take(ms(8)));
        assert_eq!(c.due(), ms(13));
        // A little late: the schedule is kept.
        assert!(c.take(ms(14)));
        assert_eq!(c.due(), ms(18));
        // More than an interval late: one update, then one interval from now.
        assert!(c.take(ms(30)));
        assert_eq!(c.due(), ms(35));
    }
}
