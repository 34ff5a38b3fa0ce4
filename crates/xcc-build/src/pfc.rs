//! `[pfc]`: priority flow control at every router (a lossless fabric). The thresholds of each
//! ingress port (the law: `xcc_core::algorithms::pfc`), resolved and checked against the links
//! before anything runs, so a file whose thresholds cannot hold is refused with the field named:
//!
//! ```toml
//! [pfc]
//! pause = "22.5KB"    # XOFF when a port's bytes in the switch exceed this
//! resume = "18KB"     # XON when they fall back to this
//! headroom = "auto"   # per port: what its link can deliver after XOFF; or a size
//! ```

use serde::Deserialize;
use xcc_core::algorithms::pfc::{PfcError, PfcParams};
use xcc_core::time::Dur;
use xcc_core::units::parse_bytes;

use crate::scenario::error::ScenarioError;
use crate::scenario::model::{Flow, FlowKind, Link, Node, NodeKind};

/// `[pfc]` as written.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct PfcSpec {
    pub pause: Option<String>,
    pub resume: Option<String>,
    pub headroom: Option<String>,
}

pub use crate::scenario::model::Pfc;

/// Whether link `l` ends at a PFC switch (is one of its ingress ports) and whether it leaves one.
pub fn switch_ports(nodes: &[Node], links: &[Link]) -> (Vec<bool>, Vec<bool>) {
    let router = |n: u32| nodes[n as usize].kind == NodeKind::Router;
    (links.iter().map(|l| router(l.to)).collect(), links.iter().map(|l| router(l.from)).collect())
}

/// The largest packet the flows send: payload, headers and the congestion header.
fn largest_packet(flows: &[Flow]) -> u32 {
    let sizes = flows.iter().map(|f| match f.kind {
        FlowKind::Bulk { cc, transport, .. } => {
            transport.mss_bytes + transport.header_bytes + cc.shim().wire_len() as u32
        }
        FlowKind::Cbr { packet_bytes, .. } | FlowKind::Session { packet_bytes, .. } => packet_bytes,
    });
    sizes.max().unwrap_or(1500)
}

/// Resolves `[pfc]` (`source` names the file) and checks it against the network: resume below
/// pause, a headroom of at least one packet and of what each port's link delivers after XOFF,
/// and every switch egress buffer able to hold what its ports may admit.
pub fn resolve(
    source: &str,
    spec: PfcSpec,
    nodes: &[Node],
    links: &[Link],
    flows: &[Flow],
) -> Result<Pfc, ScenarioError> {
    let err = |field: &str, message: String| ScenarioError {
        source: source.to_string(),
        path: format!("pfc.{field}"),
        message,
    };
    let bytes = |field: &str, v: &Option<String>, default: u64| match v {
        None => Ok(default),
        Some(s) => parse_bytes(s).map_err(|m| err(field, m)),
    };
    let defaults = PfcParams::default();
    let pause_bytes = bytes("pause", &spec.pause, defaults.pause_bytes)?;
    let resume_bytes = bytes("resume", &spec.resume, defaults.resume_bytes)?;
    let headroom_bytes = match spec.headroom.as_deref() {
        None | Some("auto") => None,
        Some(_) => Some(bytes("headroom", &spec.headroom, 0)?),
    };
    let pfc = Pfc { pause_bytes, resume_bytes, headroom_bytes, mtu_bytes: largest_packet(flows) };
    let (ports, egress) = switch_ports(nodes, links);
    let field_of = |e: &PfcError| match e {
        PfcError::ZeroPause => "pause",
        PfcError::ResumeNotBelowPause { .. } => "resume",
        PfcError::HeadroomBelowOnePacket { .. } | PfcError::HeadroomBelowInFlight { .. } => "headroom",
    };
    let probe = PfcParams { headroom_bytes: headroom_bytes.unwrap_or(u64::MAX), ..defaults };
    PfcParams { pause_bytes, resume_bytes, ..probe }
        .check(pfc.mtu_bytes)
        .map_err(|e| err(field_of(&e), e.to_string()))?;
    for (l, link) in links.iter().enumerate().filter(|(l, _)| ports[*l]) {
        if headroom_bytes.is_some() {
            pfc.params_for(link)
                .check_for_link(pfc.mtu_bytes, link.rate_bps as f64, Dur(link.delay_ns))
                .map_err(|e| err("headroom", format!("{e} (link {}, link[{l}])", link.name)))?;
        }
    }
    for link in links.iter().enumerate().filter(|(l, _)| egress[*l]).map(|(_, link)| link) {
        // Every port of the switch may hold pause + headroom; in the worst case all of it
        // waits for this one egress link.
        let admitted: u64 = links
            .iter()
            .enumerate()
            .filter(|(k, into)| ports[*k] && into.to == link.from)
            .map(|(_, into)| pause_bytes + pfc.params_for(into).headroom_bytes)
            .sum();
        if link.buffer.packets.is_some() {
            return Err(err(
                "pause",
                format!(
                    "link {} has a buffer in packets; under PFC the thresholds are bytes: give the buffer in bytes (at least {admitted} B) or \"unlimited\"",
                    link.name
                ),
            ));
        }
        if let Some(buffer) = link.buffer.bytes.filter(|&b| b < admitted) {
            return Err(err(
                "pause",
                format!(
                    "pause + headroom over the ports of {} is {admitted} B, above link {}'s buffer of {buffer} B: a lossless switch must hold what it lets in",
                    nodes[link.from as usize].name, link.name
                ),
            ));
        }
    }
    Ok(pfc)
}

#[cfg(test)]
mod tests {
    use crate::{resolve, Format};

    /// Two senders into a router and one receiver, 10 Gbit/s, 1 us: auto headroom per port
    /// 2·1.25e9·1e-6 + 2·1,500 = 5,500 B; three ports of the router admit 3·(22,500 + 5,500)
    /// = 84,000 B, which a buffer of `buffer` must hold.
    fn scenario(pfc: &str, buffer: &str) -> String {
        format!(
            r#"name = "t"
duration = "1ms"
[[host]]
name = "s{{i}}"
count = 2
[[host]]
name = "d"
[[router]]
name = "r"
[[link]]
between = ["s{{i}}", "r"]
count = 2
rate = "10Gbps"
delay = "1us"
buffer = "{buffer}"
[[link]]
between = ["r", "d"]
rate = "10Gbps"
delay = "1us"
buffer = "{buffer}"
[[flow]]
name = "f"
kind = "bulk"
src = "s1"
dst = "d"
[pfc]
{pfc}
"#
        )
    }

    fn error(pfc: &str, buffer: &str) -> (String, String) {
        let e = resolve(&scenario(pfc, buffer), "incast.toml", Format::Toml).unwrap_err();
        assert_eq!(e.source, "incast.toml");
        (e.path, e.message)
    }

    #[test]
    fn thresholds_resolve_with_a_headroom_per_link() {
        let s = resolve(&scenario("", "84000B"), "incast.toml", Format::Toml).unwrap();
        let pfc = s.pfc.unwrap();
        assert_eq!(
            (pfc.pause_bytes, pfc.resume_bytes, pfc.headroom_bytes, pfc.mtu_bytes),
            (22_500, 18_000, None, 1500)
        );
        assert_eq!(pfc.params_for(&s.links[0]).headroom_bytes, 5_500);
    }

    #[test]
    fn thresholds_that_cannot_hold_are_named() {
        let (path, m) = error("pause = \"10KB\"\nresume = \"12KB\"", "unlimited");
        assert_eq!(path, "pfc.resume");
        assert!(m.contains("must be below pfc.pause_bytes"), "{m}");
        let (path, m) = error("headroom = \"1000B\"", "unlimited");
        assert_eq!(path, "pfc.headroom");
        assert!(m.contains("at least one packet (1500 B)"), "{m}");
        let (path, m) = error("headroom = \"4KB\"", "unlimited");
        assert_eq!(path, "pfc.headroom");
        assert!(m.contains("5500 B the link can deliver after a pause (link s1->r"), "{m}");
        let (path, m) = error("", "83999B");
        assert_eq!(path, "pfc.pause");
        assert!(m.contains("84000 B, above link r->s1's buffer of 83999 B"), "{m}");
        let (path, m) = error("", "100pkt");
        assert_eq!(path, "pfc.pause");
        assert!(m.contains("give the buffer in bytes"), "{m}");
        let (path, _) = error("pause = \"lots\"", "unlimited");
        assert_eq!(path, "pfc.pause");
        let (path, _) = error("xoff = \"1KB\"", "unlimited");
        assert!(path.starts_with("pfc"), "{path}");
    }
}
