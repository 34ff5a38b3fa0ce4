//! Everything a run checks before it touches the machine or simulates anything: root, TUN,
//! `ip`, the kernel stack's congestion control, traffic the emulator carries, and every
//! UDP-transport packet fitting the namespaces' MTU. `xcc-emu check SCENARIO` runs it, so
//! `xcc compare` and `xcc reproduce --emu` refuse a scenario before simulating its other half.

use std::io;

use xcc_build::scenario::model::{Cc, FlowKind, Scenario, Transport};
use xcc_core::algorithms::dctcp::DctcpParams;

use crate::os::netns;
use crate::router::carrier::SIM_HEADER_BYTES;
use crate::run::stack::Stack;

/// The namespaces' TUN MTU: the largest packet xcclab's transport and the sessions send
/// (Linux TCP keeps the route's 1500, `netns::ROUTE_MTU`).
pub const MTU: u32 = netns::TUN_MTU;
/// IPv4 (20, no options) and UDP (8) headers in front of every UDP-transport datagram.
const IP_UDP_LEN: u32 = 28;
/// The transport segment's header without SACK blocks (data segments carry none).
const SEGMENT_LEN: u32 = 32;

/// Bytes of a full data packet of this flow on the wire (IPv4 | UDP | shim | segment | MSS).
pub fn wire_packet_bytes(cc: &Cc, t: &Transport) -> u32 {
    IP_UDP_LEN + (2 + cc.shim().body_len()) as u32 + SEGMENT_LEN + t.mss_bytes
}

/// The largest MSS whose data packets fit the MTU for a flow of `cc`.
pub fn largest_mss(cc: &Cc) -> u32 {
    MTU - (IP_UDP_LEN + (2 + cc.shim().body_len()) as u32 + SEGMENT_LEN)
}

/// Whether a flow of `cc` runs on xcclab's UDP transport (or on Linux TCP) with `stack`.
pub fn on_udp_transport(cc: &Cc, stack: Stack) -> bool {
    cc.linux_tcp(stack == Stack::Kernel).is_none()
}

/// Checks the machine (root, `/dev/net/tun`, iproute2) and the scenario; the error says what
/// is missing or which value to use. Returns the header bytes the UDP transport's packets are
/// billed with on the links (the scenario's `transport.header`, one value for all its flows).
pub fn check(s: &Scenario, stack: Stack) -> io::Result<u32> {
    netns::check_environment()?;
    if std::process::Command::new("ip").arg("-V").output().is_err() {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            "iproute2's `ip` is not installed (apt-get install iproute2)",
        ));
    }
    if stack == Stack::Kernel {
        check_kernel_params(s)?;
    }
    if !s.arrivals.is_empty() {
        return Err(io::Error::other("xcc emu: [[arrivals]] are not emulated yet ([[flow]] and [[transactions]] are)"));
    }
    check_sessions(s)?;
    let mut users: Vec<(String, &Cc, &Transport)> = Vec::new();
    for f in &s.flows {
        if f.route.is_some() {
            return Err(io::Error::other(format!(
                "xcc emu: flow {}: explicit routes are not emulated (the router routes by destination, shortest path)",
                f.name
            )));
        }
        if let FlowKind::Bulk { cc, transport, .. } = &f.kind {
            users.push((format!("flow {}", f.name), cc, transport));
        }
    }
    for t in &s.transactions {
        users.push((format!("transactions {}", t.name), &t.cc, &t.transport));
    }
    let mut header = None;
    for (who, cc, t) in users {
        if !on_udp_transport(cc, stack) {
            continue;
        }
        let bytes = wire_packet_bytes(cc, t);
        if bytes > MTU {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{who}: transport.mss = {} B makes {bytes}-byte {} packets on the wire (IPv4 20 + UDP 8 + shim {} \
                     + segment 32 + payload), more than the {MTU}-byte MTU of the namespaces: set \
                     transport.mss = \"{}B\" (or less) in the scenario",
                    t.mss_bytes,
                    cc.name(),
                    2 + cc.shim().body_len(),
                    largest_mss(cc)
                ),
            ));
        }
        match header {
            None => header = Some(t.header_bytes),
            Some(h) if h != t.header_bytes => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "{who}: transport.header = {} B, another flow has {h} B: the emulator bills every \
                         UDP-transport packet with one header size",
                        t.header_bytes
                    ),
                ))
            }
            Some(_) => {}
        }
    }
    Ok(header.unwrap_or(SIM_HEADER_BYTES))
}

fn kernel_users(s: &Scenario) -> Vec<(String, &Cc)> {
    let mut users: Vec<(String, &Cc)> = Vec::new();
    for f in &s.flows {
        if let FlowKind::Bulk { cc, .. } = &f.kind {
            users.push((format!("flow {}", f.name), cc));
        }
    }
    for t in &s.transactions {
        users.push((format!("transactions {}", t.name), &t.cc));
    }
    users
}

/// `--stack kernel`: kernel DCTCP is asked only for what Linux's law has (g = 1/16, alpha
/// starting at 1, 10 segments' initial window: `tcp_dctcp.c`, `TCP_INIT_CWND`).
fn check_kernel_params(s: &Scenario) -> io::Result<()> {
    for (who, cc) in kernel_users(s) {
        let Cc::Dctcp(p) = cc else { continue };
        let d = DctcpParams::default();
        if p.g != d.g || p.initial_alpha != d.initial_alpha || p.initial_window != d.initial_window {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{who}: kernel DCTCP (--stack kernel) runs Linux's law with g = 0.0625, initial_alpha = 1 and an \
                     initial_window of 10 segments; this flow asks g = {}, initial_alpha = {}, initial_window = {}: \
                     remove them or run it on --stack udp",
                    p.g, p.initial_alpha, p.initial_window
                ),
            ));
        }
    }
    Ok(())
}

/// `--stack kernel`, before a run: every kernel-resident congestion control the scenario's
/// flows ask for is registered (the Python side's `emulate(stack="kernel")` loads `maxnet`
/// and `xcc_dctcp` for the run; `xcc kernel load` loads `maxnet`).
pub fn check_registered(s: &Scenario) -> io::Result<()> {
    let available = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control")?;
    for (who, cc) in kernel_users(s) {
        let Some(name) = cc.linux_tcp(true) else { continue };
        if !available.split_whitespace().any(|c| c == name) {
            return Err(io::Error::other(format!(
                "xcc emu --stack kernel: {who} needs the {name} congestion control, which this kernel does not have \
                 registered (tcp_available_congestion_control: {}); `xcc emu --stack kernel` and `xcc compare \
                 --stack kernel` load the BPF ones for the run, `xcc kernel load` loads maxnet",
                available.trim()
            )));
        }
    }
    Ok(())
}

/// Sessions of a `[sessions]` table the emulator runs at most: each session's two hosts are
/// namespaces of their own (Linux handles a few hundred; the run's threads and the router's
/// TUN reads grow with them).
pub const MAX_GENERATED_SESSIONS: u64 = 64;

/// Session flows the emulator can carry: a small `[sessions]` workload (expanded by the
/// network the simulator builds too), data packets that hold the session framing and fit the
/// MTU, and paths SLBN's hop set can name.
pub fn check_sessions(s: &Scenario) -> io::Result<()> {
    let invalid = |m: String| io::Error::new(io::ErrorKind::InvalidInput, m);
    if let Some(w) = &s.sessions {
        // A workload that does not parse is refused, naming the field, when the network is built.
        let spec = serde_json::from_value::<xcc_build::sessions::WorkloadSpec>(w.workload.clone());
        let n: u64 = spec.map_or(0, |w| w.arrivals.iter().map(|a| a.count as u64).sum());
        if n > MAX_GENERATED_SESSIONS {
            return Err(invalid(format!(
                "sessions.workload.arrivals: {n} sessions; the emulator runs a [sessions] workload of at most \
                 {MAX_GENERATED_SESSIONS} (two namespaces each); run it in the simulator (xcc run)"
            )));
        }
    }
    let mut topo = xcc_build::topology::Topology::new(s);
    let link_from: Vec<u32> = s.links.iter().map(|l| l.from).collect();
    let min = crate::hosts::sessions::MIN_PACKET_BYTES;
    for f in &s.flows {
        let FlowKind::Session { packet_bytes, .. } = f.kind else { continue };
        if !(min..=MTU).contains(&packet_bytes) {
            return Err(invalid(format!(
                "flow {}: packet_bytes = {packet_bytes} B: a session's data packet on real packets holds IPv4 20 + \
                 UDP 8 + session framing 8 and fits the {MTU}-byte MTU: expected {min} to {MTU} B",
                f.name
            )));
        }
        let hops = topo.shortest(f.src, f.dst, |l| link_from[l as usize]).map_or(0, |r| r.len());
        if hops > xcc_core::algorithms::slbn::HopSet::MAX_HOPS {
            return Err(invalid(format!(
                "flow {}: the route has {hops} links; session protocols handle at most {}",
                f.name,
                xcc_core::algorithms::slbn::HopSet::MAX_HOPS
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use xcc_core::algorithms::rcp::RcpCcParams;
    use xcc_core::algorithms::xcp::XcpCcParams;

    #[test]
    fn largest_mss_fills_the_mtu_exactly() {
        let t = |mss| Transport {
            mss_bytes: mss,
            header_bytes: 40,
            ecn: false,
            sack: true,
            delayed_ack_ns: None,
            min_rto_ns: 200_000_000,
            initial_rto_ns: 1_000_000_000,
            pace: false,
            quick_acks: 0,
            handshake: true,
            linux_rto: false,
            rack: false,
        };
        // XCP's shim is 2 + 16 bytes: 2000 - 28 - 18 - 32 = 1922 (docs/emu.md).
        assert_eq!(largest_mss(&Cc::Xcp(XcpCcParams {})), 1922);
        assert_eq!(wire_packet_bytes(&Cc::Xcp(XcpCcParams {}), &t(1922)), 2000);
        // The default MSS fits with every shim: XCP's is the largest.
        assert_eq!(wire_packet_bytes(&Cc::Xcp(XcpCcParams {}), &t(1460)), 1538);
        assert_eq!(wire_packet_bytes(&Cc::Rcp(RcpCcParams {}), &t(largest_mss(&Cc::Rcp(RcpCcParams {})))), 2000);
    }

    /// `--stack kernel` runs Linux's DCTCP law: a DCTCP flow asking for another g, initial alpha
    /// or initial window is refused naming the flow and the values; the defaults pass.
    #[test]
    fn kernel_dctcp_with_parameters_linux_lacks_is_refused() {
        let text = |cc: &str| {
            format!(
                r#"
name = "t"
duration = "1s"
[[host]]
name = "a"
[[host]]
name = "b"
[[link]]
between = ["a", "b"]
rate = "10Mbps"
delay = "1ms"
buffer = "unlimited"
queue = "dctcp"
[[flow]]
name = "f"
src = "a"
dst = "b"
cc = {cc}
"#
            )
        };
        let check = |cc: &str| {
            let s = xcc_build::resolve(&text(cc), "t.toml", xcc_build::Format::Toml).unwrap();
            check_kernel_params(&s).map_err(|e| e.to_string())
        };
        assert_eq!(check(r#""dctcp""#), Ok(()));
        assert_eq!(check(r#"{ kind = "dctcp", g = 0.0625 }"#), Ok(()));
        let e = check(r#"{ kind = "dctcp", g = 0.125 }"#).unwrap_err();
        assert!(e.contains("flow f: kernel DCTCP") && e.contains("g = 0.125"), "{e}");
        assert!(check(r#"{ kind = "dctcp", initial_window = 4 }"#).unwrap_err().contains("initial_window = 4"));
    }

    /// Session flows: a packet too large for the MTU or too small for the framing, and a
    /// `[sessions]` workload too large for namespaces, are refused naming the flow or field,
    /// the value and what is expected.
    #[test]
    fn session_flows_that_cannot_travel_are_refused() {
        let text = |size: &str| {
            format!(
                r#"
name = "t"
duration = "1s"
[[host]]
name = "a"
[[host]]
name = "b"
[[link]]
between = ["a", "b"]
rate = "10Mbps"
delay = "1ms"
buffer = "unlimited"
[[flow]]
name = "s"
kind = "session"
src = "a"
dst = "b"
protocol = "slbn"
packet_size = "{size}"
"#
            )
        };
        let check = |size: &str| {
            let s = xcc_build::resolve(&text(size), "t.toml", xcc_build::Format::Toml).unwrap();
            check_sessions(&s).map_err(|e| e.to_string())
        };
        // The simulator's default (2000 B) fits the namespaces' 2000-byte TUN MTU.
        assert_eq!(check("2000B"), Ok(()));
        assert_eq!(check("36B"), Ok(()));
        let e = check("2001B").unwrap_err();
        assert!(e.contains("flow s: packet_bytes = 2001 B") && e.contains("expected 36 to 2000 B"), "{e}");
        assert!(check("35B").unwrap_err().contains("packet_bytes = 35 B"));
        let workload = r#"
name = "w"
duration = "1s"
[sessions]
protocol = "slbn"
topology = "medium"
workload = { arrivals = [{ count = COUNT, from_s = 0.0, to_s = 1.0 }] }
"#;
        let check = |count: u64| {
            let text = workload.replace("COUNT", &count.to_string());
            check_sessions(&xcc_build::resolve(&text, "w.toml", xcc_build::Format::Toml).unwrap())
                .map_err(|e| e.to_string())
        };
        assert_eq!(check(MAX_GENERATED_SESSIONS), Ok(()));
        let e = check(MAX_GENERATED_SESSIONS + 1).unwrap_err();
        assert!(e.contains("sessions.workload.arrivals: 65 sessions") && e.contains("at most 64"), "{e}");
    }
}
