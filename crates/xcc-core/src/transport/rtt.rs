//! RTT estimation and the retransmission timeout (RFC 6298). (In progress.)

use crate::time::Dur;

/// SRTT, RTTVAR, min RTT and the RTO.
#[derive(Copy, Clone, Debug, Default)]
pub struct RttEstimator {
    pub srtt: Dur,
}
