//! A queue that unit tests describe by its numbers: the view a link algorithm gets of its link,
//! without a link. Marking is not modelled (`mark_first_of` finds nothing); MarkMax's tests,
//! which need a real FIFO, keep their own.

use super::QueueView;
use crate::packet::FlowId;
use crate::time::Time;

#[derive(Clone, Debug)]
pub struct FakeQueue {
    pub packets: u32,
    pub bytes: u64,
    pub idle_since: Option<Time>,
    pub rate_bps: u64,
}

impl FakeQueue {
    /// Nothing waiting on a busy link of `rate_bps`.
    pub fn empty(rate_bps: u64) -> FakeQueue {
        FakeQueue { packets: 0, bytes: 0, idle_since: None, rate_bps }
    }

    /// `packets` waiting packets of 1500 bytes on a busy 10 Mb/s link.
    pub fn busy(packets: u32) -> FakeQueue {
        FakeQueue { packets, bytes: packets as u64 * 1500, idle_since: None, rate_bps: 10_000_000 }
    }

    /// `bytes` waiting (the only number XCP's router reads).
    pub fn bytes(bytes: u64) -> FakeQueue {
        FakeQueue { packets: 0, bytes, idle_since: None, rate_bps: 0 }
    }
}

impl QueueView for FakeQueue {
    fn backlog_bytes(&self) -> u64 {
        self.bytes
    }
    fn backlog_packets(&self) -> u32 {
        self.packets
    }
    fn idle_since(&self) -> Option<Time> {
        self.idle_since
    }
    fn rate_bps(&self) -> u64 {
        self.rate_bps
    }
    fn visit_from_tail(&self, _f: &mut dyn FnMut(FlowId, u32) -> bool) {}
    fn mark_first_of(&mut self, _flow: FlowId) -> bool {
        false
    }
}
