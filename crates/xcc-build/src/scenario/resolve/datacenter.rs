//! `[fabric]` and `[workload]`: the datacenter network generated into the scenario's nodes and
//! links, and the workload checked before anything runs (its flows are drawn when the network
//! is built, `crate::network`).

use std::path::Path;

use xcc_core::units::{parse_bytes, parse_rate_bps};
use xcc_core::workload::FlowSizeCdf;

use super::Resolver;
use crate::scenario::error::ScenarioError;
use crate::scenario::model::{Fabric, Incast, Link, NodeKind, Workload};
use crate::scenario::spec::{FabricSpec, TransportSpec, WorkloadSpec};

/// Default link delay of a fabric: the HPCC paper's 1 us per link (fat.txt: `1000ns`).
const DEFAULT_DELAY: &str = "1us";
/// Default slowdown bin width: 5 % of the flows, the HPCC artifact's `fct_analysis.py` step.
const DEFAULT_BIN_PERCENT: u32 = 5;

impl Resolver<'_> {
    /// Generates `[fabric]`'s hosts, switches and links (appended after any declared ones).
    pub(super) fn fabric(&mut self, spec: FabricSpec, links: &mut Vec<Link>) -> Result<Fabric, ScenarioError> {
        let graph = spec.topology.graph().map_err(|(f, m)| self.err(&field("fabric.topology", &spec, &f), m))?;
        let host_rate_bps = parse_rate_bps(&spec.host_rate).map_err(|m| self.err("fabric.host_rate", m))?;
        if host_rate_bps == 0 {
            return Err(self.err("fabric.host_rate", "expected a positive rate"));
        }
        let given = match &spec.fabric_rate {
            Some(r) => match parse_rate_bps(r).map_err(|m| self.err("fabric.fabric_rate", m))? {
                0 => return Err(self.err("fabric.fabric_rate", "expected a positive rate")),
                bps => Some(bps),
            },
            None => None,
        };
        let fabric_rate_bps = spec
            .topology
            .fabric_rate_bps(host_rate_bps, given)
            .map_err(|(f, m)| self.err(&format!("fabric.{f}"), m))?;
        let ecmp = match spec.routing.as_deref() {
            None | Some("ecmp") => true,
            Some("single") => false,
            Some(other) => {
                return Err(self.err(
                    "fabric.routing",
                    format!("'{other}': expected \"ecmp\" (a flow hash picks among equal-cost paths) or \"single\""),
                ))
            }
        };
        let delay = spec.delay.clone().unwrap_or_else(|| DEFAULT_DELAY.to_string());
        let delay_ns = self.time("fabric.delay", &delay)?;
        let first = self.node_count();
        for h in 0..graph.hosts {
            self.add_node("fabric", format!("h{h}"), NodeKind::Host)?;
        }
        for name in &graph.switches {
            self.add_node("fabric", name.clone(), NodeKind::Router)?;
        }
        let host_rate = format!("{host_rate_bps}bps");
        let fabric_rate = format!("{fabric_rate_bps}bps");
        for &(a, b, tier) in &graph.links {
            let rate = if tier == crate::fabric::Tier::Host { &host_rate } else { &fabric_rate };
            let (a, b) = (first + a, first + b);
            for (from, to) in [(a, b), (b, a)] {
                links.push(self.direction(
                    "fabric",
                    from,
                    to,
                    rate,
                    &delay,
                    &spec.buffer,
                    spec.queue.as_ref(),
                    None,
                    None,
                )?);
            }
        }
        Ok(Fabric {
            oversubscription: spec.topology.oversubscription(host_rate_bps, fabric_rate_bps),
            topology: spec.topology,
            hosts: graph.hosts,
            switches: graph.switches.len() as u32,
            host_rate_bps,
            fabric_rate_bps,
            delay_ns,
            ecmp,
        })
    }

    /// Checks `[workload]`: its CDF (a shipped one or a file), the load, the window, the incast
    /// and that every host has one link, all of one rate (the load is a fraction of it).
    pub(super) fn workload(
        &self,
        spec: WorkloadSpec,
        links: &[Link],
        duration_ns: u64,
    ) -> Result<Workload, ScenarioError> {
        let cdf = match spec.cdf.as_str() {
            "websearch" => FlowSizeCdf::websearch(),
            "fb_hadoop" => FlowSizeCdf::fb_hadoop(),
            file => {
                let path = self.relative_to_source(file);
                let text = std::fs::read_to_string(&path).map_err(|e| {
                    self.err(
                        "workload.cdf",
                        format!(
                            "'{file}': not \"websearch\", \"fb_hadoop\" or a readable CDF file ({}: {e})",
                            path.display()
                        ),
                    )
                })?;
                FlowSizeCdf::parse(&text)
                    .map_err(|e| self.err("workload.cdf", format!("{}: not a flow-size CDF: {e}", path.display())))?
            }
        };
        if !(spec.load > 0.0 && spec.load <= 1.0) {
            return Err(self.err(
                "workload.load",
                format!("{}: expected a fraction of the hosts' link capacity in (0, 1]", spec.load),
            ));
        }
        let (start_ns, stop_ns) = self.window("workload", &spec.start, &spec.stop, duration_ns)?;
        let host_rate_bps = self.host_link_rate(links)?;
        let incast = match spec.incast {
            None => None,
            Some(i) => {
                let hosts = self.host_count();
                if i.fan_in == 0 || i.fan_in >= hosts {
                    return Err(self.err(
                        "workload.incast.fan_in",
                        format!("{}: expected 1 to {} (the other hosts)", i.fan_in, hosts.saturating_sub(1)),
                    ));
                }
                let request_bytes = parse_bytes(&i.size).map_err(|m| self.err("workload.incast.size", m))?;
                if request_bytes < i.fan_in as u64 {
                    return Err(self.err(
                        "workload.incast.size",
                        format!("'{}': expected at least one byte for each of the {} senders", i.size, i.fan_in),
                    ));
                }
                if !(i.requests_per_sec > 0.0 && i.requests_per_sec.is_finite()) {
                    return Err(self.err(
                        "workload.incast.requests_per_sec",
                        format!("{}: expected a positive rate", i.requests_per_sec),
                    ));
                }
                Some(Incast { fan_in: i.fan_in, request_bytes, requests_per_sec: i.requests_per_sec })
            }
        };
        let bin_percent = spec.bin_percent.unwrap_or(DEFAULT_BIN_PERCENT);
        if !(1..=100).contains(&bin_percent) {
            return Err(self.err("workload.bin_percent", format!("{bin_percent}: expected 1 to 100")));
        }
        // RDMA message flows start at once: no handshake unless the scenario asks for one.
        let transport = spec.transport.unwrap_or_default();
        let transport = TransportSpec { connection: transport.connection.or(Some("open".into())), ..transport };
        Ok(Workload {
            cdf: spec.cdf,
            cdf_points: cdf.points().to_vec(),
            load: spec.load,
            start_ns,
            stop_ns: stop_ns.unwrap_or(duration_ns),
            host_rate_bps,
            cc: self.cc("workload.cc", spec.cc)?,
            transport: self.transport("workload.transport", Some(transport))?,
            incast,
            bin_percent,
        })
    }

    /// The one rate of every host's link; an error naming a host without one link or with
    /// another rate.
    fn host_link_rate(&self, links: &[Link]) -> Result<u64, ScenarioError> {
        let mut uplinks: Vec<Vec<u64>> = vec![Vec::new(); self.node_count() as usize];
        for l in links {
            uplinks[l.from as usize].push(l.rate_bps);
        }
        let mut rate = None;
        for (id, node) in self.nodes().iter().enumerate() {
            if node.kind != NodeKind::Host {
                continue;
            }
            match (uplinks[id].as_slice(), rate) {
                ([r], None) => rate = Some((*r, id)),
                ([r], Some((want, _))) if *r == want => {}
                ([r], Some((want, first))) => {
                    return Err(self.err(
                        "workload",
                        format!(
                            "the load is a fraction of the hosts' link rate, and hosts '{}' ({want} bit/s) and '{}' \
                             ({r} bit/s) differ",
                            self.nodes()[first].name,
                            node.name
                        ),
                    ))
                }
                (l, _) => {
                    return Err(self.err(
                        "workload",
                        format!("host '{}' has {} links; a workload's hosts have one each", node.name, l.len()),
                    ))
                }
            }
        }
        match rate {
            Some((r, _)) if self.host_count() >= 2 => Ok(r),
            _ => Err(self.err("workload", "a workload needs at least 2 hosts")),
        }
    }

    /// `file` relative to the scenario file's directory (when the source is a file), else as is.
    fn relative_to_source(&self, file: &str) -> std::path::PathBuf {
        let p = Path::new(file);
        if p.is_absolute() {
            return p.to_path_buf();
        }
        match Path::new(self.source).parent() {
            Some(dir) if Path::new(self.source).is_file() => dir.join(p),
            _ => p.to_path_buf(),
        }
    }
}

/// The full path of a topology error: `fabric.topology.fat_tree.k`.
fn field(prefix: &str, spec: &FabricSpec, f: &str) -> String {
    let kind = match spec.topology {
        crate::fabric::FabricTopology::FatTree(_) => "fat_tree",
        crate::fabric::FabricTopology::LeafSpine(_) => "leaf_spine",
    };
    if f.is_empty() {
        format!("{prefix}.{kind}")
    } else {
        format!("{prefix}.{kind}.{f}")
    }
}
