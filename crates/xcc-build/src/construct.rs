//! Construction: from a resolved scenario's entries to the xcc-core state machines. Both
//! drivers (the simulator and the emulator) build their algorithms here, so they run the same
//! configuration of the same code.

use xcc_core::host::{AnyController, AnyEchoer};
use xcc_core::link::AnyLinkAlgorithm;
use xcc_core::rng::Pcg64Mcg;
use xcc_core::transport::{DelayedAck, RtoPolicy, TransportConfig};
use xcc_core::Dur;

use crate::scenario::model::{self, Cc, Queue};

/// The transport configuration of a flow.
pub fn transport_config(t: &model::Transport) -> TransportConfig {
    TransportConfig {
        mss_bytes: t.mss_bytes,
        header_bytes: t.header_bytes,
        ecn: t.ecn,
        sack: t.sack,
        delayed_ack: t.delayed_ack_ns.map(|d| DelayedAck {
            every_segments: 2,
            max_delay: Dur(d),
            quick_acks: t.quick_acks,
        }),
        min_rto: Dur(t.min_rto_ns),
        initial_rto: Dur(t.initial_rto_ns),
        pace_windowed: t.pace,
        handshake: t.handshake,
        rto: if t.linux_rto { RtoPolicy::Linux } else { RtoPolicy::Rfc6298 },
        ..TransportConfig::default()
    }
}

/// The sender's controller of a flow.
pub fn controller(cc: &Cc, t: &model::Transport) -> AnyController {
    cc.controller(&t.host_context())
}

/// The sender's controller of a flow that leaves its host on a link of `nic_rate_bps`.
pub fn controller_at(cc: &Cc, t: &model::Transport, nic_rate_bps: u64) -> AnyController {
    cc.controller(&xcc_core::params::HostContext { nic_rate_bps: Some(nic_rate_bps), ..t.host_context() })
}

/// The receiver's echoer of a flow; `two_way_delay` is the path's round-trip propagation delay.
pub fn echoer(cc: &Cc, two_way_delay: Dur) -> AnyEchoer {
    cc.echoer(two_way_delay)
}

/// The link algorithm a scenario's queue asks for.
pub fn link_algorithm(q: &Queue, rng: Pcg64Mcg, rate_bps: u64) -> AnyLinkAlgorithm {
    q.build(rng, rate_bps)
}
