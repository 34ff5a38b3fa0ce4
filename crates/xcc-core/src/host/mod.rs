//! Host-side algorithms: congestion controllers (sender side) and feedback echoers (receiver
//! side). They decide *how much* to send; the shared reliable transport in
//! [`crate::transport`] decides *what* to send (new data or a retransmission) and when a loss
//! happened, so window- and rate-based schemes are compared on the same footing (seed 002).
//!
//! The algorithms themselves live in their folders under [`crate::algorithms`]; the registry
//! there makes [`AnyController`] and [`AnyEchoer`] (docs/architecture.md, "Adding an
//! algorithm").

use crate::time::{Dur, Time};
use crate::wire::CongestionHeader;

/// What one arriving ACK told the transport, handed to the controller after the transport has
/// updated its own state (RTT estimator, scoreboard, bytes in flight).
#[derive(Copy, Clone, Debug, Default)]
pub struct AckEvent {
    /// Bytes newly covered by the cumulative ACK (zero for a duplicate ACK).
    pub newly_acked_bytes: u64,
    /// RTT sample from the echoed timestamp, if this ACK gave one.
    pub rtt_sample: Option<Dur>,
    /// Smoothed RTT after this sample (RFC 6298), zero before the first sample.
    pub srtt: Dur,
    /// Smallest RTT seen so far (the base RTT of delay-aware schemes).
    pub min_rtt: Dur,
    /// Bytes still in flight after this ACK.
    pub bytes_in_flight: u64,
    /// True while the transport is in loss or ECN recovery (windows must not grow then).
    pub in_recovery: bool,
    /// The delivery-rate sample of this ACK, for controllers that ask for them
    /// ([`Controller::wants_rate_samples`]); `None` otherwise and on the SYN-ACK.
    pub rate: Option<crate::transport::RateSample>,
    /// The ACK carried ECN-Echo while ECN is in use. With a receiver that echoes CE per packet
    /// ([`Echoer::echoes_ce_per_packet`]) it is set on exactly the ACKs of CE-marked data.
    pub ece: bool,
    /// RFC 5681 FlightSize after this ACK: payload bytes sent and not cumulatively
    /// acknowledged (SND.NXT − SND.UNA), so `SND.NXT` is the acknowledged total plus this.
    pub flight_bytes: u64,
}

/// Why the transport asks the controller to back off. The transport guarantees at most one
/// `Loss` or `Ecn` event per window of data (RFC 6582 `recover`, RFC 3168 section 6.1.2).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CongestionEvent {
    /// Fast retransmit: a loss detected by duplicate ACKs or the SACK scoreboard.
    Loss,
    /// The receiver echoed CE.
    Ecn,
    /// The retransmission timer expired.
    Timeout,
}

/// A sender's congestion controller. Every hook is optional except the ones that define the
/// sending limit; all sizes are bytes.
pub trait Controller {
    /// An ACK arrived (new or duplicate). Called once per ACK after the transport's bookkeeping.
    fn on_ack(&mut self, now: Time, ack: &AckEvent);
    /// The transport detected congestion; `flight_size` is bytes in flight when it did.
    fn on_congestion_event(&mut self, now: Time, event: CongestionEvent, flight_size: u64);
    /// Recovery ended with a full ACK (RFC 6582 step 3); `flight_size` as of that ACK.
    fn on_recovery_exit(&mut self, _now: Time, _flight_size: u64) {}
    /// The transport found its last retransmission timeout spurious and took it back (RFC 5682
    /// F-RTO; Linux's `tcp_try_undo_loss`): restore what the timeout took (Linux's `undo_cwnd`
    /// with `prior_ssthresh`). Only with `LossDetection::Rack`; by default nothing.
    fn on_undo(&mut self, _now: Time) {}
    /// Explicit feedback echoed by the receiver on an ACK.
    fn on_feedback(&mut self, _now: Time, _echo: &CongestionHeader) {}
    /// A data segment of `bytes` payload was sent.
    fn on_sent(&mut self, _now: Time, _bytes: u64) {}
    /// Congestion window in bytes; `u64::MAX` when the scheme sets no window.
    fn window_bytes(&self) -> u64;
    /// Pacing rate in bit/s when the scheme is rate-based (or pacing is wanted).
    fn pacing_rate_bps(&self) -> Option<f64> {
        None
    }
    /// Fills the congestion header of the next data packet.
    fn stamp(&mut self, _now: Time, _hdr: &mut CongestionHeader) {}
    /// Fills the congestion header of a SYN (each one, retransmissions included); by default
    /// as a data packet's.
    fn stamp_syn(&mut self, now: Time, hdr: &mut CongestionHeader) {
        self.stamp(now, hdr)
    }
    /// The controller's own timer (e.g. a rate update), if armed.
    fn poll_timeout(&self) -> Option<Time> {
        None
    }
    /// Timer tick; early or repeated calls do nothing.
    fn on_timeout(&mut self, _now: Time) {}
    /// Slow-start threshold in bytes, for traces (`u64::MAX` if the scheme has none).
    fn ssthresh_bytes(&self) -> u64 {
        u64::MAX
    }
    /// True for a rate-based scheme that may re-time the pacer or send probes (checked once,
    /// when the transport is built, so window-based schemes pay nothing per packet).
    fn is_rate_based(&self) -> bool {
        false
    }
    /// When the next rate probe is due (RCP's REF packets for flows slower than one packet per
    /// RTT); `None` for schemes without probes.
    fn probe_due(&self) -> Option<Time> {
        None
    }
    /// A probe left at `now`.
    fn on_probe_sent(&mut self, _now: Time) {}
    /// True for a scheme that needs delivery-rate samples (BBR); checked once, when the
    /// transport is built, so the others pay nothing for them.
    fn wants_rate_samples(&self) -> bool {
        false
    }
    /// True for a scheme that cannot work without ECN (DCTCP): the transport then uses ECN
    /// whatever its configuration says, as Linux's `TCP_CONG_NEEDS_ECN`. Checked once, when
    /// the transport is built.
    fn needs_ecn(&self) -> bool {
        false
    }
    /// The law's named state, for traces (BBR: "STARTUP", "DRAIN", "PROBE_BW", "PROBE_RTT");
    /// `None` for laws without one.
    fn state_label(&self) -> Option<&'static str> {
        None
    }
    /// The gain on the pacing rate now (BBR's: its PROBE_BW phase); `None` for laws without.
    fn current_pacing_gain(&self) -> Option<f64> {
        None
    }
}

macro_rules! host_algorithms {
    ( $( $name:literal $m:ident {
        $( link: $LV:ident($LT:ident, $LP:ident) as $ltag:literal; )?
        $( host: $HV:ident($HT:ident, $HP:ident) as $htag:literal; )?
        $( echo: $EV:ident($ET:ident); )?
        $( header: $XV:ident($XT:ident); )?
        $( session: $SV:ident($ST:ident, $SP:ident); )?
    } )* ) => {
        /// Static dispatch over every sender algorithm, one variant per registry line with a
        /// `host` role.
        #[derive(Debug, Clone)]
        pub enum AnyController {
            $( $( $HV($crate::algorithms::$m::$HT), )? )*
        }

        macro_rules! dispatch {
            ($self:expr, $a:ident => $body:expr) => {
                match $self {
                    $( $( AnyController::$HV($a) => $body, )? )*
                }
            };
        }

        /// Static dispatch over every receiver algorithm: the plain echo, and one variant per
        /// registry line with an `echo` role.
        #[derive(Debug, Clone)]
        pub enum AnyEchoer {
            Plain(PlainEcho),
            $( $( $EV($crate::algorithms::$m::$ET), )? )*
        }

        macro_rules! dispatch_echoer {
            ($self:expr, $a:ident => $body:expr) => {
                match $self {
                    AnyEchoer::Plain($a) => $body,
                    $( $( AnyEchoer::$EV($a) => $body, )? )*
                }
            };
        }
    };
}

crate::for_each_algorithm!(host_algorithms);

impl Controller for AnyController {
    #[inline]
    fn on_ack(&mut self, now: Time, ack: &AckEvent) {
        dispatch!(self, a => a.on_ack(now, ack))
    }
    fn on_congestion_event(&mut self, now: Time, event: CongestionEvent, flight_size: u64) {
        dispatch!(self, a => a.on_congestion_event(now, event, flight_size))
    }
    fn on_recovery_exit(&mut self, now: Time, flight_size: u64) {
        dispatch!(self, a => a.on_recovery_exit(now, flight_size))
    }
    fn on_undo(&mut self, now: Time) {
        dispatch!(self, a => a.on_undo(now))
    }
    #[inline]
    fn on_feedback(&mut self, now: Time, echo: &CongestionHeader) {
        dispatch!(self, a => a.on_feedback(now, echo))
    }
    #[inline]
    fn on_sent(&mut self, now: Time, bytes: u64) {
        dispatch!(self, a => a.on_sent(now, bytes))
    }
    #[inline]
    fn window_bytes(&self) -> u64 {
        dispatch!(self, a => a.window_bytes())
    }
    #[inline]
    fn pacing_rate_bps(&self) -> Option<f64> {
        dispatch!(self, a => a.pacing_rate_bps())
    }
    #[inline]
    fn stamp(&mut self, now: Time, hdr: &mut CongestionHeader) {
        dispatch!(self, a => a.stamp(now, hdr))
    }
    fn stamp_syn(&mut self, now: Time, hdr: &mut CongestionHeader) {
        dispatch!(self, a => a.stamp_syn(now, hdr))
    }
    fn poll_timeout(&self) -> Option<Time> {
        dispatch!(self, a => a.poll_timeout())
    }
    fn on_timeout(&mut self, now: Time) {
        dispatch!(self, a => a.on_timeout(now))
    }
    fn ssthresh_bytes(&self) -> u64 {
        dispatch!(self, a => a.ssthresh_bytes())
    }
    fn is_rate_based(&self) -> bool {
        dispatch!(self, a => a.is_rate_based())
    }
    #[inline]
    fn probe_due(&self) -> Option<Time> {
        dispatch!(self, a => a.probe_due())
    }
    fn on_probe_sent(&mut self, now: Time) {
        dispatch!(self, a => a.on_probe_sent(now))
    }
    fn wants_rate_samples(&self) -> bool {
        dispatch!(self, a => a.wants_rate_samples())
    }
    fn needs_ecn(&self) -> bool {
        dispatch!(self, a => a.needs_ecn())
    }
    fn state_label(&self) -> Option<&'static str> {
        dispatch!(self, a => a.state_label())
    }
    fn current_pacing_gain(&self) -> Option<f64> {
        dispatch!(self, a => a.current_pacing_gain())
    }
}

/// Receiver side: turns the congestion headers of arriving data into the header echoed on ACKs.
pub trait Echoer {
    /// A data packet arrived carrying `hdr`.
    fn on_data(&mut self, now: Time, hdr: &CongestionHeader);
    /// The header to put on the next ACK.
    fn echo(&mut self, now: Time) -> CongestionHeader;
    /// True for a receiver that echoes each data segment's CE state (RFC 8257 section 3.2,
    /// DCTCP) instead of RFC 3168's ECE latched from a CE mark until CWR. Read once, when the
    /// receiver is built; it also turns ECN on at the receiver.
    fn echoes_ce_per_packet(&self) -> bool {
        false
    }
    /// With the per-packet echo: the CE state a data segment that arrived at `now` with `ce`
    /// puts on its ACK. By default its own; DCQCN's notification point echoes CE at most once
    /// per interval (its CNP).
    fn echo_ce(&mut self, _now: Time, ce: bool) -> bool {
        ce
    }
}

/// Echoes the most recent header unchanged (what XCP, RCP and TCP receivers do).
#[derive(Debug, Clone, Default)]
pub struct PlainEcho {
    last: CongestionHeader,
}

impl Echoer for PlainEcho {
    fn on_data(&mut self, _now: Time, hdr: &CongestionHeader) {
        self.last = *hdr;
    }
    fn echo(&mut self, _now: Time) -> CongestionHeader {
        self.last
    }
}

impl Echoer for AnyEchoer {
    #[inline]
    fn on_data(&mut self, now: Time, hdr: &CongestionHeader) {
        dispatch_echoer!(self, e => e.on_data(now, hdr))
    }
    #[inline]
    fn echo(&mut self, now: Time) -> CongestionHeader {
        dispatch_echoer!(self, e => e.echo(now))
    }
    fn echoes_ce_per_packet(&self) -> bool {
        dispatch_echoer!(self, e => e.echoes_ce_per_packet())
    }
    fn echo_ce(&mut self, now: Time, ce: bool) -> bool {
        dispatch_echoer!(self, e => e.echo_ce(now, ce))
    }
}
