//! Transport parameters, with the defaults of the RFCs and the papers' simulators.

use crate::time::Dur;

/// Delayed-ACK policy (RFC 5681 section 4.2: at least every second full segment, within 500 ms).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct DelayedAck {
    /// Acknowledge at the latest after this many in-order segments (RFC 5681: 2).
    pub every_segments: u32,
    /// ... or after this long (Linux: 40 ms; ns-2 `interval_`: 100 ms).
    pub max_delay: Dur,
    /// The first this many data segments are acknowledged one by one (Linux's quick-ACK mode
    /// at connection start, which lets slow start open the window without waiting for the
    /// delayed-ACK timer; Linux: up to 16, `TCP_MAX_QUICKACKS`). 0: none (RFC 5681 alone).
    pub quick_acks: u32,
}

impl DelayedAck {
    /// Linux's receiver (`tcp_input.c`): quick ACKs for the first 16 segments, then an ACK
    /// for every second full segment or after the 40 ms minimum delayed-ACK timer
    /// (`TCP_DELACK_MIN`; Linux may stretch it up to 200 ms on an idle interactive flow, which
    /// bulk and request/response transfers do not reach).
    pub const LINUX: DelayedAck = DelayedAck { every_segments: 2, max_delay: Dur::from_ms(40), quick_acks: 16 };
}

/// When partial ACKs re-arm the retransmission timer during NewReno recovery (RFC 6582
/// section 4.1).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum PartialAckRto {
    /// "Slow-but-steady": every partial ACK re-arms the RTO, so a recovery with many holes
    /// proceeds at one hole per RTT however long it takes. This is ns-2's default
    /// (`Agent/TCP/Newreno` with `newreno_changes1_ = 0`), which produced the papers' numbers.
    /// A timeout in the middle of a burst loss is costly without SACK: the receiver's
    /// out-of-order data is unknown to the sender, so go-back-N resends most of it.
    #[default]
    SlowButSteady,
    /// "Impatient": only the first partial ACK re-arms the RTO, so a recovery longer than one
    /// RTO ends in a timeout and slow start (RFC 6582's recommendation).
    Impatient,
}

/// How the retransmission timeout is computed from the RTT samples ([`super::RttEstimator`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum RtoPolicy {
    /// RFC 6298: `RTO = max(min_rto, SRTT + max(G, 4 RTTVAR))`; ns-2's and the RFC's timer,
    /// which the papers' simulations used.
    #[default]
    Rfc6298,
    /// Linux (`tcp_rtt_estimator`, `tcp_set_rto` in `net/ipv4/tcp_input.c`): `RTO = SRTT +
    /// rttvar`, where `rttvar` is the round's largest `4 mdev` and at least `min_rto`; so at
    /// least SRTT + 200 ms. For comparisons with the kernel's TCP.
    Linux,
}

/// How the sender decides that a segment is lost (see `transport/rack.rs`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum LossDetection {
    /// Duplicate ACKs and RFC 6675's `IsLost` (`dupthresh` segments SACKed above a hole), a lost
    /// retransmission left to the retransmission timer, which forgets the SACK scoreboard and
    /// goes back N; ns-2's recovery, which produced the papers' numbers.
    #[default]
    Rfc6675,
    /// Linux's (`net.ipv4.tcp_recovery = 1`, `tcp_early_retrans = 3`, `tcp_frto = 2`): RACK's
    /// time-based loss marking, lost retransmissions included, and Tail Loss Probes (RFC 8985);
    /// a timeout keeps the SACK scoreboard and is undone when it proves spurious (RFC 5682
    /// F-RTO, and the timestamp check of Linux's `tcp_packet_delayed`). Needs SACK.
    Rack,
}

/// Per-flow transport configuration, shared by both ends.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct TransportConfig {
    /// Payload bytes per full segment.
    pub mss_bytes: u32,
    /// Header bytes added to every packet on the wire (IPv4 + TCP = 40). A pure ACK is this size.
    pub header_bytes: u32,
    /// Mark data ECT(0) and react to ECN-Echo (RFC 3168).
    pub ecn: bool,
    /// Receiver sends SACK blocks and the sender uses them for loss detection.
    pub sack: bool,
    /// `None`: one ACK per data segment (ns-2's default sink).
    pub delayed_ack: Option<DelayedAck>,
    /// Duplicate ACKs that trigger fast retransmit (RFC 5681: 3).
    pub dupthresh: u32,
    /// RTO before the first RTT sample (RFC 6298: 1 s).
    pub initial_rto: Dur,
    /// Lower bound of the RTO (RFC 6298 says 1 s; ns-2 and Linux use 200 ms).
    pub min_rto: Dur,
    /// Upper bound of the backed-off RTO (RFC 6298: at least 60 s).
    pub max_rto: Dur,
    /// Clock granularity G of RFC 6298 (RTO = SRTT + max(G, 4 RTTVAR)).
    pub clock_granularity: Dur,
    /// How the RTO follows the samples. Default [`RtoPolicy::Rfc6298`].
    pub rto: RtoPolicy,
    /// How losses are detected. Default [`LossDetection::Rfc6675`]; [`LossDetection::Rack`]
    /// takes effect only with `sack`.
    pub loss_detection: LossDetection,
    /// Pace window-based senders at cwnd/srtt (rate-based controllers always pace).
    pub pace_windowed: bool,
    /// How far behind its schedule the pacer may catch up. A driver on a real clock wakes a
    /// little after each departure instant; if the next gap were counted from the late wake-up,
    /// every wake-up's lateness would be lost rate (at 100 Mbit/s a 1500-byte gap is 120 µs, so
    /// 30 µs of lateness per packet would cost a fifth of it). While the sender has had a
    /// packet waiting on the pacer since its last departure, the next departure is one gap after
    /// the *scheduled* one, unless that lies more than this far in the past (Linux's fq
    /// scheduler compensates lateness likewise, up to half a gap per packet). Zero (the
    /// default): the gap counts from the actual departure; a simulated clock is never late.
    pub pacing_catch_up: Dur,
    /// RTO re-arming on partial ACKs in NewReno recovery (SACK off, or holes SACK cannot prove
    /// lost). Default: [`PartialAckRto::SlowButSteady`], for ns-2 parity (see there).
    pub partial_ack_rto: PartialAckRto,
    /// Open the connection with a SYN / SYN-ACK exchange before any data (see
    /// [`super::handshake`]); false: the connection is open when the flow starts, as ns-2's
    /// one-way agents have it. The scenario layer defaults to true; this struct's default is
    /// false so that the transport's own tests describe data transfer alone.
    pub handshake: bool,
}

impl Default for TransportConfig {
    fn default() -> Self {
        TransportConfig {
            mss_bytes: 1460,
            header_bytes: 40,
            ecn: false,
            sack: true,
            delayed_ack: None,
            dupthresh: 3,
            initial_rto: Dur::from_secs(1),
            min_rto: Dur::from_ms(200),
            max_rto: Dur::from_secs(60),
            clock_granularity: Dur::from_ms(1),
            rto: RtoPolicy::Rfc6298,
            loss_detection: LossDetection::Rfc6675,
            pace_windowed: false,
            pacing_catch_up: Dur::ZERO,
            partial_ack_rto: PartialAckRto::SlowButSteady,
            handshake: false,
        }
    }
}
