//! DropTail. (In progress.)
use crate::link::{LinkAlgorithm, QueueView, Verdict};
use crate::packet::Packet;
use crate::time::Time;

#[derive(Debug, Clone, Default)]
pub struct DropTailConfig {}

#[derive(Debug, Clone, Default)]
pub struct DropTail {}

impl LinkAlgorithm for DropTail {
    fn on_enqueue(&mut self, _now: Time, _pkt: &mut Packet, _q: &mut dyn QueueView) -> Verdict {
        Verdict::Queue
    }
}
