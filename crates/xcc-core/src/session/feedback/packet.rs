//! The feedback packet: a rate request stamped by every link on the way down.

use crate::session::ControlPacket;
use crate::time::Time;

#[derive(Copy, Clone, Debug, PartialEq)]
pub struct FeedbackPacket {
    /// Smallest advertised rate on the path so far (bit/s); the source's demand at first.
    pub rate: f64,
    /// The source's last measured round-trip time, microseconds (0 before the first).
    pub rtt_us: u32,
    /// When the source sent it (to measure the RTT when it comes back).
    pub sent_at: Time,
    /// False on the way down, true once bounced by the destination.
    pub echoed: bool,
    /// Data the session sent since its previous feedback packet, bits (0 for the first): what
    /// the data packets this packet stands for would have carried, so that a link can weight
    /// the RTT by bytes as RCP does (PIQI-RCP does not use it).
    pub data_bits: f64,
}

impl FeedbackPacket {
    /// An IP header and RCP's congestion header (rate, RTT), as in the packet simulator.
    pub const WIRE_BYTES: u32 = 40;
}

impl ControlPacket for FeedbackPacket {
    /// The destination echoes the stamped rate back to the source.
    fn at_destination(self) -> Option<FeedbackPacket> {
        Some(FeedbackPacket { echoed: true, ..self })
    }

    fn wire_bytes(&self) -> u32 {
        FeedbackPacket::WIRE_BYTES
    }
}
