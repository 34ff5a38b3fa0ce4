//! The plan of a run with what its hosts' kernels are told: ECN per host, and what Linux TCP
//! flows' `transport` and NewReno's `initial_window` ask where Linux has a knob.

use xcc_build::scenario::model::{Cc, FlowKind, Scenario, Transport};

use crate::os::netns;
use crate::router::carrier::Carriers;
use crate::run::plan::Plan;
use crate::run::stack::Stack;

/// Linux TCP's MSS on the namespaces' route (1500 - 40).
const ROUTE_MSS: u32 = netns::ROUTE_MTU - 40;

/// The MSS a Linux TCP socket is capped at: the scenario's, when below the route's 1460 B.
pub fn linux_mss(t: &Transport) -> Option<u32> {
    (t.mss_bytes < ROUTE_MSS).then_some(t.mss_bytes)
}

/// The plan of scenario `s` under a fresh namespace prefix: the router's carriers model
/// `header_bytes` of explicit header (from the preflight), and every host's ECN and Linux TCP
/// settings are those its flows ask for.
pub fn host_plan(s: &Scenario, stack: Stack, header_bytes: u32) -> Plan {
    let prefix = netns::run_prefix();
    let mut plan = Plan::new(s, &prefix, "reno");
    plan.fabric.carriers = Carriers::with_modelled_header(header_bytes);
    ecn_settings(s, &mut plan);
    linux_tcp_settings(s, &mut plan, stack);
    plan
}

/// A host that sends a flow asking for ECN (or takes part in such a transaction) asks for it
/// (`tcp_ecn = 1`); the others only answer ECN (2), as Linux does by default.
fn ecn_settings(s: &Scenario, plan: &mut Plan) {
    let ecn_hosts: Vec<bool> = (0..plan.hosts.len())
        .map(|h| {
            s.flows.iter().any(|f| {
                plan.port_of(f.src) == Some(h) && matches!(f.kind, FlowKind::Bulk { transport, .. } if transport.ecn)
            }) || s
                .transactions
                .iter()
                .any(|t| t.transport.ecn && (plan.port_of(t.client) == Some(h) || plan.port_of(t.server) == Some(h)))
        })
        .collect();
    for (h, ecn) in plan.hosts.iter_mut().zip(&ecn_hosts) {
        h.tcp_ecn = if *ecn { 1 } else { 2 };
    }
}

/// What Linux TCP flows' `transport` and NewReno's `initial_window` ask of their hosts, set
/// where Linux has a knob: `sack = false` turns SACK off on both ends' namespaces; a NewReno
/// flow's `initial_window` is its sender's route `initcwnd` (both ends of a transaction, the
/// server sends the response); `delayed_ack = false` (the simulator's default, ns-2's sink)
/// sets `quickack` on the receiver's route, while `delayed_ack = "linux"` or a time leaves
/// Linux's delayed ACKs. A host whose flows disagree gets SACK off, quick ACKs and the largest
/// window. Kernel MaxNet's flows keep Linux's defaults (their window is the price's).
fn linux_tcp_settings(s: &Scenario, plan: &mut Plan, stack: Stack) {
    let mut ends: Vec<(Cc, Transport, Vec<usize>, Vec<usize>)> = Vec::new();
    for f in &s.flows {
        if let FlowKind::Bulk { cc, transport, .. } = f.kind {
            let (a, b) = (plan.port_of(f.src).unwrap(), plan.port_of(f.dst).unwrap());
            ends.push((cc, transport, vec![a], vec![b]));
        }
    }
    for t in &s.transactions {
        let (c, sv) = (plan.port_of(t.client).unwrap(), plan.port_of(t.server).unwrap());
        ends.push((t.cc, t.transport, vec![c, sv], vec![c, sv]));
    }
    for (cc, transport, senders, receivers) in ends {
        if cc.linux_tcp(stack == Stack::Kernel).is_none() {
            continue;
        }
        if !transport.sack {
            for &h in senders.iter().chain(&receivers) {
                plan.hosts[h].tcp_sack = false;
            }
        }
        let Cc::NewReno(p) = cc else { continue };
        for &h in &senders {
            let w = &mut plan.hosts[h].initcwnd;
            *w = Some(w.unwrap_or(0).max(p.initial_window));
        }
        if transport.delayed_ack_ns.is_none() {
            for &h in &receivers {
                plan.hosts[h].quickack = true;
            }
        }
    }
}
