//! Sender half of the reliable transport. (API fixed; implementation in progress.)

use crate::host::AnyController;
use crate::packet::{FlowId, Packet};
use crate::time::{Dur, Time};
use crate::transport::TransportConfig;

/// Counters and gauges a driver samples (no logging inside the state machine).
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct SenderStats {
    /// Data segments put on the wire, retransmissions included.
    pub segments_sent: u64,
    /// Payload bytes put on the wire, retransmissions included.
    pub bytes_sent: u64,
    /// Segments retransmitted (fast retransmit, SACK recovery or timeout).
    pub retransmits: u64,
    /// Retransmission-timer expiries.
    pub timeouts: u64,
    /// Loss recoveries entered by duplicate ACKs / SACK.
    pub fast_recoveries: u64,
    /// Window reductions caused by ECN-Echo.
    pub ecn_reductions: u64,
    /// Payload bytes cumulatively acknowledged.
    pub bytes_acked: u64,
    pub cwnd_bytes: u64,
    pub ssthresh_bytes: u64,
    pub bytes_in_flight: u64,
    pub srtt: Dur,
    pub min_rtt: Dur,
    pub latest_rtt: Dur,
    pub rto: Dur,
    /// When the last byte of a sized flow was acknowledged.
    pub completed_at: Option<Time>,
}

/// The sending end of one flow.
#[derive(Debug, Clone)]
pub struct Sender {
    flow: FlowId,
    cfg: TransportConfig,
    cc: AnyController,
    size_bytes: Option<u64>,
    stats: SenderStats,
}

impl Sender {
    /// A sender for `flow` that will send `size_bytes` (or forever when `None`).
    pub fn new(flow: FlowId, cfg: TransportConfig, cc: AnyController, size_bytes: Option<u64>, _now: Time) -> Sender {
        Sender { flow, cfg, cc, size_bytes, stats: SenderStats::default() }
    }
    /// An ACK for this flow arrived.
    pub fn on_packet(&mut self, _now: Time, _pkt: &Packet) {}
    /// The next packet to send now, if the window, the pacer and the data allow one.
    pub fn poll_transmit(&mut self, _now: Time) -> Option<Packet> {
        let _ = (&self.flow, &self.cfg, &self.size_bytes);
        None
    }
    /// Earliest time `on_timeout` has work to do (RTO, pacing, controller timer).
    pub fn poll_timeout(&self) -> Option<Time> {
        None
    }
    /// Timer expiry; early or repeated calls do nothing.
    pub fn on_timeout(&mut self, _now: Time) {}
    /// Stop sending new data (the flow's stop time); outstanding data is still recovered.
    pub fn stop(&mut self) {}
    /// True once every byte of a sized flow is acknowledged.
    pub fn is_complete(&self) -> bool {
        self.stats.completed_at.is_some()
    }
    pub fn stats(&self) -> SenderStats {
        self.stats
    }
    pub fn controller(&self) -> &AnyController {
        &self.cc
    }
}
