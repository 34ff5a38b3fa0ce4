//! Receiver half of the reliable transport. (API fixed; implementation in progress.)

use crate::host::AnyEchoer;
use crate::packet::{FlowId, Packet};
use crate::time::Time;
use crate::transport::TransportConfig;

/// Counters a driver samples.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct ReceiverStats {
    /// Payload bytes delivered in order to the application.
    pub bytes_delivered: u64,
    /// Data segments received (duplicates included).
    pub segments_received: u64,
    /// Data segments received that were already held or delivered.
    pub duplicates: u64,
    /// Data segments that arrived with CE set.
    pub ce_received: u64,
    pub acks_sent: u64,
}

/// The receiving end of one flow.
#[derive(Debug, Clone)]
pub struct Receiver {
    flow: FlowId,
    cfg: TransportConfig,
    echo: AnyEchoer,
    stats: ReceiverStats,
}

impl Receiver {
    pub fn new(flow: FlowId, cfg: TransportConfig, echo: AnyEchoer) -> Receiver {
        Receiver { flow, cfg, echo, stats: ReceiverStats::default() }
    }
    /// A data packet arrived; returns the payload bytes newly delivered in order.
    pub fn on_packet(&mut self, _now: Time, _pkt: &Packet) -> u64 {
        let _ = (&self.flow, &self.cfg, &self.echo);
        0
    }
    /// The next ACK to send, if one is due.
    pub fn poll_transmit(&mut self, _now: Time) -> Option<Packet> {
        None
    }
    /// Delayed-ACK deadline, if armed.
    pub fn poll_timeout(&self) -> Option<Time> {
        None
    }
    pub fn on_timeout(&mut self, _now: Time) {}
    pub fn stats(&self) -> ReceiverStats {
        self.stats
    }
}
