//! Construction: from a resolved scenario's entries to the xcc-core state machines. Both
//! drivers (the simulator and the emulator) build their algorithms here, so they run the same
//! configuration of the same code.

use xcc_core::host::{
    AnyController, AnyEchoer, JetMax, JetMaxConfig, MaxNet, MaxNetConfig, MaxNetEcho, NewReno, NewRenoConfig, PiqiRcp,
    PiqiRcpConfig, PlainEcho, Rcp, RcpConfig, Xcp, XcpConfig, XcpEcho,
};
use xcc_core::link::AnyLinkAlgorithm;
use xcc_core::rng::Pcg64Mcg;
use xcc_core::transport::{DelayedAck, TransportConfig};
use xcc_core::wire::{CongestionHeader, JetMaxHeader, MaxNetHeader};
use xcc_core::Dur;

use crate::scenario::model::{self, Cc, Queue};

/// The transport configuration of a flow.
pub fn transport_config(t: &model::Transport) -> TransportConfig {
    TransportConfig {
        mss_bytes: t.mss_bytes,
        header_bytes: t.header_bytes,
        ecn: t.ecn,
        sack: t.sack,
        delayed_ack: t.delayed_ack_ns.map(|d| DelayedAck { every_segments: 2, max_delay: Dur(d) }),
        min_rto: Dur(t.min_rto_ns),
        initial_rto: Dur(t.initial_rto_ns),
        pace_windowed: t.pace,
        ..TransportConfig::default()
    }
}

/// The sender's controller of a flow.
pub fn controller(cc: &Cc, t: &model::Transport) -> AnyController {
    match *cc {
        Cc::NewReno { initial_window } => AnyController::NewReno(NewReno::new(NewRenoConfig {
            mss_bytes: t.mss_bytes,
            initial_window_segments: initial_window,
            ..NewRenoConfig::default()
        })),
        Cc::MaxNet { x_max_bps, t_s, alpha, eta, dt_min_ns, maxstart, pace } => {
            AnyController::MaxNet(MaxNet::new(MaxNetConfig {
                x_max_bps,
                t_s,
                alpha,
                eta,
                dt_min: Dur(dt_min_ns),
                maxstart,
                mss_bytes: t.mss_bytes,
                pace,
                packet_bytes: full_packet_bytes(t, CongestionHeader::MaxNet(MaxNetHeader::default())),
            }))
        }
        Cc::Xcp => AnyController::Xcp(Xcp::new(XcpConfig { mss_bytes: t.mss_bytes, ..XcpConfig::default() })),
        Cc::Rcp => AnyController::Rcp(Rcp::new(RcpConfig {
            mss_bytes: t.mss_bytes,
            packet_bytes: full_packet_bytes(t, CongestionHeader::Rcp(Default::default())),
            ..RcpConfig::default()
        })),
        Cc::PiqiRcp => AnyController::PiqiRcp(PiqiRcp::new(PiqiRcpConfig { mss_bytes: t.mss_bytes })),
        Cc::JetMax { tau, probe_wait_ns } => {
            AnyController::JetMax(JetMax::new(JetMaxConfig {
                tau,
                // A full-size packet on the wire: the share each packet stands for.
                packet_bytes: full_packet_bytes(t, CongestionHeader::JetMax(JetMaxHeader::default())),
                mss_bytes: t.mss_bytes,
                probe_wait: Dur(probe_wait_ns),
            }))
        }
    }
}

/// Bytes of a full data packet on the wire: payload, headers and the protocol's shim (what
/// rate-based sources space their packets by).
fn full_packet_bytes(t: &model::Transport, shim: CongestionHeader) -> u32 {
    t.mss_bytes + t.header_bytes + shim.wire_len() as u32
}

/// The receiver's echoer of a flow; `two_way_delay` is the path's round-trip propagation delay
///.
pub fn echoer(cc: &Cc, two_way_delay: Dur) -> AnyEchoer {
    match cc {
        // MaxNet's receiver averages the price over one RTT: the path's two-way propagation
        // delay.
        Cc::MaxNet { .. } => AnyEchoer::MaxNet(MaxNetEcho::new(two_way_delay)),
        Cc::Xcp => AnyEchoer::Xcp(XcpEcho::default()),
        _ => AnyEchoer::Plain(PlainEcho::default()),
    }
}

/// The link algorithm a scenario's queue asks for.
pub fn link_algorithm(q: &Queue, rng: Pcg64Mcg, rate_bps: u64) -> AnyLinkAlgorithm {
    q.build(rng, rate_bps)
}
