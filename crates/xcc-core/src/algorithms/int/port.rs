//! The egress port's side of INT: what a switch port stamps on a data packet as it starts the
//! packet's transmission. As the HPCC authors' ns-3 switch (`SwitchNode::SwitchNotifyDequeue`,
//! `switch-node.cc`, read this session): the record holds the queue the packet leaves behind
//! (`GetNBytesTotal()` after the dequeue), the bytes the port transmitted *before* this packet
//! (`m_txBytes` is incremented after `PushHop`), the departure time and the port's line rate;
//! only data packets (UDP there) are stamped, every packet's bytes are counted.
//!
//! It is sans-IO; the link model drives it on INT-capable ports (`int = true` on a link,
//! [`crate::link::int_stamp`]), whatever the port's queue discipline.

use super::{IntHeader, IntHop};
use crate::time::Time;

/// One egress port's INT state: its line rate and the bytes it has transmitted.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct IntPort {
    line_rate_bps: f64,
    tx_bytes: u64,
}

impl IntPort {
    /// A port of `line_rate_bps` that has sent nothing yet.
    pub fn new(line_rate_bps: f64) -> IntPort {
        IntPort { line_rate_bps, tx_bytes: 0 }
    }

    /// A packet of `wire_bytes` starts its transmission at `now`, leaving `backlog_bytes`
    /// waiting. If it carries an INT header (`int`, data packets only) with a free slot, the
    /// port's record is appended; returns whether it was. The port counts the packet's bytes
    /// either way, after stamping.
    pub fn on_departure(
        &mut self,
        now: Time,
        wire_bytes: u32,
        backlog_bytes: u64,
        int: Option<&mut IntHeader>,
    ) -> bool {
        let stamped = match int {
            Some(h) => h.push(IntHop::stamp(backlog_bytes, self.tx_bytes, now, self.line_rate_bps)),
            None => false,
        };
        self.tx_bytes += wire_bytes as u64;
        stamped
    }

    /// Bytes transmitted so far (all packets).
    pub fn tx_bytes(&self) -> u64 {
        self.tx_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Dur;

    // A 100 Gbit/s port. At 1 us a 1,000-byte data packet leaves 3,000 B behind: record
    // (queue 3,000, tx 0, 1,000 ns, 100,000,000 kbit/s). An ACK (no INT) of 60 B follows, then at
    // 2 us a data packet leaves an empty queue: (0, 1,060, 2,000 ns). The header had two slots:
    // a third port finds it full, stamps nothing, still counts the bytes.
    #[test]
    fn stamps_before_counting_and_counts_every_packet() {
        let mut port = IntPort::new(100e9);
        let mut h = IntHeader::new(2).unwrap();
        let at = |us| Time::ZERO + Dur::from_us(us);
        assert!(port.on_departure(at(1), 1000, 3000, Some(&mut h)));
        assert!(!port.on_departure(at(1), 60, 0, None));
        assert!(port.on_departure(at(2), 1000, 0, Some(&mut h)));
        let want = [
            IntHop { queue_bytes: 3000, tx_bytes: 0, timestamp_ns: 1000, line_rate_kbps: 100_000_000 },
            IntHop { queue_bytes: 0, tx_bytes: 1060, timestamp_ns: 2000, line_rate_kbps: 100_000_000 },
        ];
        assert_eq!(h.hops(), &want);
        assert!(!port.on_departure(at(3), 1000, 0, Some(&mut h)), "the header is full");
        assert_eq!((h.hops().len(), port.tx_bytes()), (2, 3060));
        // The sender's view of this hop between its two records: 1,060 B in 1 us = 8.48 Gbit/s.
        assert_eq!((want[1].tx_bytes_since(&want[0]), want[1].time_since(&want[0])), (1060, Dur::from_us(1)));
    }
}
