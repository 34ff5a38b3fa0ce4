//! Construction: from a resolved scenario's entries to the xcc-core state machines. Both
//! drivers (the simulator and the emulator) build their algorithms here, so they run the same
//! configuration of the same code.

use xcc_core::host::{
    AnyController, AnyEchoer, JetMax, JetMaxConfig, MaxNet, MaxNetConfig, MaxNetEcho, NewReno, NewRenoConfig, PiqiRcp,
    PiqiRcpConfig, PlainEcho, Rcp, RcpConfig, Xcp, XcpConfig, XcpEcho,
};
use xcc_core::link::{
    AnyLinkAlgorithm, DropTail, DropTailConfig, JetMaxRouter, JetMaxRouterConfig, MarkMax, MarkMaxConfig,
    MarkMaxVariant, MaxNetRouter, MaxNetRouterConfig, PiqiRcpKappa, PiqiRcpRouter, PiqiRcpRouterConfig, RcpRouter,
    RcpRouterConfig, Red, RedConfig, XcpRouter, XcpRouterConfig,
};
use xcc_core::rng::{uniform01, Pcg64Mcg};
use xcc_core::transport::{DelayedAck, TransportConfig};
use xcc_core::wire::{CongestionHeader, JetMaxHeader, MaxNetHeader};
use xcc_core::{Dur, Time};

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
pub fn link_algorithm(q: &Queue, mut rng: Pcg64Mcg, rate_bps: u64) -> AnyLinkAlgorithm {
    match q {
        Queue::DropTail => AnyLinkAlgorithm::DropTail(DropTail::new(DropTailConfig::default())),
        Queue::Red(p) => AnyLinkAlgorithm::Red(Red::new(
            RedConfig {
                w_q: p.w_q,
                min_th: p.min_th,
                max_th: p.max_th,
                max_p: p.max_p,
                unit: p.unit,
                variant: p.variant,
                action: p.action,
                mean_packet_bytes: p.mean_packet_bytes,
            },
            rng,
        )),
        Queue::MarkMax(p) => AnyLinkAlgorithm::MarkMax(MarkMax::new(MarkMaxConfig {
            variant: match p.tail {
                Some(fraction) => MarkMaxVariant::Tail { fraction },
                None => MarkMaxVariant::Backlog,
            },
            unit: p.unit,
            theta_l: p.theta_l,
            theta: p.theta,
            theta_h: p.theta_h,
        })),
        Queue::MaxNet(p) => {
            // Control intervals start at a random phase per link (protocols.md 14.4).
            let phase = Time((uniform01(&mut rng) * p.dt_p_ns as f64) as u64);
            let cfg = MaxNetRouterConfig {
                mu: p.mu,
                dt_p: Dur(p.dt_p_ns),
                t0: Dur(p.t0_ns),
                t_s: p.t_s,
                x_max_bps: p.x_max_bps,
            };
            AnyLinkAlgorithm::MaxNet(MaxNetRouter::new(cfg, rate_bps, phase))
        }
        Queue::Xcp(p) => {
            let cfg = XcpRouterConfig { alpha: p.alpha, beta: p.beta, gamma: p.gamma, ..XcpRouterConfig::default() };
            // ns-2.35 starts the timers at N(T, 0.2 T); a uniform phase in [0.8 T, 1.2 T] here.
            let phase = Dur::from_secs_f64(cfg.initial_rtt.as_secs_f64() * (0.8 + 0.4 * uniform01(&mut rng)));
            AnyLinkAlgorithm::Xcp(XcpRouter::new(cfg, rate_bps, Time::ZERO, phase))
        }
        Queue::Rcp(p) => {
            let cfg = RcpRouterConfig {
                alpha: p.alpha,
                beta: p.beta,
                gamma: p.gamma,
                init_rate_fact: p.init_rate_fact,
                min_pprtt: p.min_pprtt,
                rtt_filter: p.rtt_filter,
                ..RcpRouterConfig::default()
            };
            let t = cfg.upd_timeslot.min(cfg.initial_rtt).as_secs_f64();
            let phase = Dur::from_secs_f64(t * (0.8 + 0.4 * uniform01(&mut rng)));
            AnyLinkAlgorithm::Rcp(RcpRouter::new(cfg, rate_bps, Time::ZERO, phase))
        }
        Queue::PiqiRcp(p) => {
            let phase = Time((uniform01(&mut rng) * p.interval_ns as f64) as u64);
            let cfg = PiqiRcpRouterConfig {
                interval: Dur(p.interval_ns),
                kappa: p.kappa.map_or(PiqiRcpKappa::Auto, PiqiRcpKappa::Fixed),
                gamma: p.gamma,
                initial_fraction: p.initial_fraction,
                rtt0: Dur(p.rtt0_ns),
                ..PiqiRcpRouterConfig::default()
            };
            AnyLinkAlgorithm::PiqiRcp(PiqiRcpRouter::new(cfg, rate_bps, phase))
        }
        Queue::JetMax(p) => {
            let phase = Time((uniform01(&mut rng) * p.interval_ns as f64) as u64);
            let cfg =
                JetMaxRouterConfig { gamma: p.gamma, interval: Dur(p.interval_ns), ..JetMaxRouterConfig::default() };
            AnyLinkAlgorithm::JetMax(JetMaxRouter::new(cfg, rate_bps, phase))
        }
    }
}
