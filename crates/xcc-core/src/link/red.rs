//! RED. (In progress.)
use crate::link::{LinkAlgorithm, QueueView, Verdict};
use crate::packet::Packet;
use crate::time::Time;

#[derive(Debug, Clone, Default)]
pub struct RedConfig {}

#[derive(Debug, Clone, Default)]
pub struct Red {}

impl LinkAlgorithm for Red {
    fn on_enqueue(&mut self, _now: Time, _pkt: &mut Packet, _q: &mut dyn QueueView) -> Verdict {
        Verdict::Queue
    }
}
