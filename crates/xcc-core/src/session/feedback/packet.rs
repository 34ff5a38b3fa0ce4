//! The feedback packet: a rate request stamped by every link on the way down.

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
}

impl FeedbackPacket {
    /// An IP header and RCP's congestion header (rate, RTT), as in the packet simulator.
    pub const WIRE_BYTES: u32 = 40;
}
