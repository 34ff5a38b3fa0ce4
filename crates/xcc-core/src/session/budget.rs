//! The control-traffic budget of a session: control packets share the session's assigned rate
//! and are limited to about 1 % of it (seed 004, Section II). A source may send its next
//! control packet once the previous one has been "paid for" at `fraction * rate`.

use crate::time::{Dur, Time};
use serde::{Deserialize, Serialize};

/// Control packets may use at most `fraction` of the session's rate.
#[derive(Copy, Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ControlBudget {
    /// Share of the assigned rate for control packets (0.01 in the paper's experiments);
    /// 0 disables the limit (back-to-back cycles, as Fig. 1 without the optional gap).
    pub fraction: f64,
    /// Bytes of one control packet on the wire.
    pub packet_bytes: u32,
}

impl Default for ControlBudget {
    fn default() -> Self {
        ControlBudget { fraction: 0.01, packet_bytes: 64 }
    }
}

impl ControlBudget {
    /// Earliest time the next control packet may leave, given the last one left at `last`
    /// and the session now has `rate` bit/s. Without a rate (or with the limit off) at once.
    pub fn next_allowed(&self, last: Time, rate: Option<f64>) -> Time {
        self.next_cycle(last, rate, 1)
    }

    /// The same for a cycle of `packets` control packets (SLBN: a Probe and its ProbeAck), so
    /// that the control traffic of both directions together stays within the budget.
    pub fn next_cycle(&self, last: Time, rate: Option<f64>, packets: u32) -> Time {
        match rate {
            Some(r) if self.fraction > 0.0 && r > 0.0 && r.is_finite() => {
                let gap = (packets as f64 * self.packet_bytes as f64 * 8.0) / (self.fraction * r);
                last + Dur::from_secs_f64(gap)
            }
            _ => last,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_percent_of_one_megabit_spaces_64_byte_packets_by_51_2_ms() {
        let b = ControlBudget::default();
        // 512 bits at 1 % of 1 Mb/s = 10 kb/s -> 51.2 ms.
        assert_eq!(b.next_allowed(Time::from_ns(1_000), Some(1e6)), Time::from_ns(1_000 + 51_200_000));
        assert_eq!(b.next_allowed(Time::from_ns(7), None), Time::from_ns(7));
        let off = ControlBudget { fraction: 0.0, packet_bytes: 64 };
        assert_eq!(off.next_allowed(Time::from_ns(7), Some(1e6)), Time::from_ns(7));
        // A Probe and its ProbeAck: twice the gap.
        assert_eq!(b.next_cycle(Time::ZERO, Some(1e6), 2), Time::from_ns(102_400_000));
    }
}
