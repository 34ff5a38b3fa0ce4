//! The resolved scenario: every template expanded, every default filled in, every unit turned
//! into integers. This is what the simulator builds from and what `run.json` records.

use serde::Serialize;

pub use crate::cc::Cc;
pub use crate::queue::{DropTailParams, MarkMaxLetter, MarkMaxParams, Queue, RedParams};
pub use crate::session::Protocol;

/// A fully resolved scenario.
#[derive(Clone, Debug, Serialize)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    pub duration_ns: u64,
    pub seed: u64,
    pub nodes: Vec<Node>,
    /// Directed links; a duplex link `a -- b` is links `2k` (a->b) and `2k+1` (b->a).
    pub links: Vec<Link>,
    pub flows: Vec<Flow>,
    pub arrivals: Vec<Arrivals>,
    pub transactions: Vec<Transactions>,
    pub metrics: Metrics,
    /// `[sessions]`: a generated session workload; the simulation adds its routers, hosts,
    /// links and session flows to the lists above when it is built (they are not recorded here).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sessions: Option<SessionWorkload>,
    /// `[fabric]`: the datacenter network its nodes and links came from, and its routing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fabric: Option<Fabric>,
    /// `[workload]`: flows generated when the network is built (not recorded in `flows`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workload: Option<Workload>,
    /// `[pfc]`: a lossless fabric, PFC at every router ([`crate::pfc`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pfc: Option<Pfc>,
}

/// A generated datacenter network (`[fabric]`); its nodes and links are in the scenario's lists.
#[derive(Clone, Debug, Serialize)]
pub struct Fabric {
    pub topology: crate::fabric::FabricTopology,
    pub hosts: u32,
    pub switches: u32,
    pub host_rate_bps: u64,
    pub fabric_rate_bps: u64,
    pub delay_ns: u64,
    /// Down over up capacity at the first switch tier.
    pub oversubscription: f64,
    /// Flows hash onto one of the equal-cost shortest paths ([`crate::topology::Topology::ecmp`]).
    pub ecmp: bool,
}

/// A generated workload (`[workload]`): Poisson flows among every host with sizes from a CDF,
/// and incast requests mixed in ([`xcc_core::workload`]).
#[derive(Clone, Debug, Serialize)]
pub struct Workload {
    /// "websearch", "fb_hadoop", or the CDF file as written.
    pub cdf: String,
    /// The CDF's points, (size bytes, cumulative percent), so a run records what it drew from.
    pub cdf_points: Vec<(f64, f64)>,
    pub load: f64,
    pub start_ns: u64,
    pub stop_ns: u64,
    /// The hosts' link rate the load is a fraction of.
    pub host_rate_bps: u64,
    pub cc: Cc,
    pub transport: Transport,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub incast: Option<Incast>,
    /// Width of the slowdown table's flow-size bins, percent of the flows.
    pub bin_percent: u32,
}

/// Incast requests of a workload.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Incast {
    pub fan_in: u32,
    pub request_bytes: u64,
    pub requests_per_sec: f64,
}

/// A generated session workload (seed 004): its protocol and data packet size, the network and
/// sessions as the session driver describes them, and the error metrics' sampling.
#[derive(Clone, Debug, Serialize)]
pub struct SessionWorkload {
    pub protocol: Protocol,
    pub packet_bytes: u32,
    /// `"medium"`, `"large"` or `{ transit_stub = { ... } }` ([`crate::sessions::TopologySpec`]).
    pub topology: serde_json::Value,
    /// Seeds the network alone; `None`: the scenario's seed.
    pub topology_seed: Option<u64>,
    /// Arrivals, departures, sizes, demand ([`crate::sessions::WorkloadSpec`]).
    pub workload: serde_json::Value,
    /// Error metrics every `sample_interval_ns`; 0: none.
    pub sample_interval_ns: u64,
    /// Delivered rates are measured over the `rate_window_ns` before each sample.
    pub rate_window_ns: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    Host,
    Router,
}

#[derive(Clone, Debug, Serialize)]
pub struct Node {
    pub name: String,
    pub kind: NodeKind,
}

/// Buffer limit of a link direction; `None` in both means unlimited.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Buffer {
    pub packets: Option<u64>,
    pub bytes: Option<u64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Link {
    pub name: String,
    pub from: u32,
    pub to: u32,
    pub rate_bps: u64,
    pub delay_ns: u64,
    pub buffer: Buffer,
    pub queue: Queue,
    /// Probability that a packet is lost on this link (random-loss model checks).
    pub loss: f64,
    /// Each packet's propagation delay is `delay_ns` plus a uniform draw in [0, jitter_ns],
    /// never overtaking the packet before it (breaks deterministic phase effects).
    pub jitter_ns: u64,
    /// An INT-capable egress port: data packets carrying INT get its record (`int = true`).
    /// Left out of the resolved scenario when false, so files written before it read the same.
    #[serde(skip_serializing_if = "is_false")]
    pub int: bool,
}

fn is_false(v: &bool) -> bool {
    !*v
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Transport {
    pub mss_bytes: u32,
    pub header_bytes: u32,
    pub ecn: bool,
    pub sack: bool,
    pub delayed_ack_ns: Option<u64>,
    pub min_rto_ns: u64,
    pub initial_rto_ns: u64,
    pub pace: bool,
    /// Linux's quick ACKs at connection start (`delayed_ack = "linux"`); 0 otherwise. Left out
    /// of the resolved scenario when 0, so files written before the option read the same.
    #[serde(skip_serializing_if = "is_zero")]
    pub quick_acks: u32,
    /// The connection opens with a SYN / SYN-ACK exchange (`connection = "handshake"`, the
    /// default). `false` (`"open"`, ns-2's agents) is left out of the resolved scenario, which is
    /// what every run before the option did.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub handshake: bool,
    /// Linux's retransmission timer (`rto = "linux"`) instead of RFC 6298's; left out of the
    /// resolved scenario when false, so files written before the option read the same.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub linux_rto: bool,
    /// Linux's loss recovery, RACK-TLP with timeout undo (`loss_detection = "rack"`), instead of
    /// RFC 6675's; left out of the resolved scenario when false, as `linux_rto`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub rack: bool,
}

fn is_zero(v: &u32) -> bool {
    *v == 0
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FlowKind {
    Bulk {
        size_bytes: Option<u64>,
        cc: Cc,
        transport: Transport,
    },
    Cbr {
        rate_bps: u64,
        packet_bytes: u32,
    },
    /// A session of an explicit-rate session protocol (seed 004): data packets of
    /// `packet_bytes` paced at the rate the protocol assigns, capped by `demand_bps`
    /// (`None`: greedy); `size_bytes` of data, or until the flow's stop.
    Session {
        protocol: Protocol,
        size_bytes: Option<u64>,
        demand_bps: Option<u64>,
        packet_bytes: u32,
    },
}

#[derive(Clone, Debug, Serialize)]
pub struct Flow {
    /// Where in the file it came from, for error messages (e.g. `flow[2] (i=5)`).
    #[serde(skip)]
    pub origin: String,
    pub name: String,
    pub src: u32,
    pub dst: u32,
    pub start_ns: u64,
    pub stop_ns: Option<u64>,
    /// Explicit route as node ids (src first, dst last), if given.
    pub route: Option<Vec<u32>>,
    pub kind: FlowKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "dist", rename_all = "snake_case")]
pub enum SizeDist {
    Fixed { bytes: u64 },
    Exponential { mean_bytes: f64 },
    Pareto { mean_bytes: f64, shape: f64 },
}

#[derive(Clone, Debug, Serialize)]
pub struct Arrivals {
    /// Where in the file it came from, for error messages (e.g. `flow[2] (i=5)`).
    #[serde(skip)]
    pub origin: String,
    pub name: String,
    pub src: u32,
    pub dst: u32,
    pub start_ns: u64,
    pub stop_ns: u64,
    pub mean_interarrival_ns: u64,
    pub size: SizeDist,
    pub cc: Cc,
    pub transport: Transport,
}

#[derive(Clone, Debug, Serialize)]
pub struct Transactions {
    /// Where in the file it came from, for error messages (e.g. `flow[2] (i=5)`).
    #[serde(skip)]
    pub origin: String,
    pub name: String,
    pub client: u32,
    pub server: u32,
    pub count: u32,
    pub start_ns: u64,
    pub stop_ns: u64,
    pub request_bytes: u64,
    pub response_bytes: u64,
    pub cc: Cc,
    pub transport: Transport,
    /// The group's first exchange opens the connection and the others reuse it (HTTP/1.1
    /// keep-alive); false (the default, HTTP/1.0): each exchange opens its own. Left out of the
    /// resolved scenario when false.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub persistent: bool,
}

impl Transactions {
    /// Whether exchange `k` of the group (0-based, in start order) opens a connection.
    pub fn opens_connection(&self, k: u32) -> bool {
        self.transport.handshake && (k == 0 || !self.persistent)
    }
}

#[derive(Clone, Copy, Debug, Serialize)]
pub struct Metrics {
    /// Time-series sampling interval; 0 disables the series.
    pub interval_ns: u64,
}

impl Transport {
    /// What a sender's construction needs of the transport.
    pub fn host_context(&self) -> xcc_core::params::HostContext {
        xcc_core::params::HostContext { mss_bytes: self.mss_bytes, header_bytes: self.header_bytes, path: None }
    }
}

/// `[pfc]` resolved (what `run.json` records; resolved and checked in [`crate::pfc`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Pfc {
    pub pause_bytes: u64,
    pub resume_bytes: u64,
    /// `None`: each port's own, [`xcc_core::algorithms::pfc::PfcParams::headroom_needed`] of its link.
    pub headroom_bytes: Option<u64>,
    /// The largest packet of the scenario's traffic (what the headroom must hold).
    pub mtu_bytes: u32,
}

impl Pfc {
    /// The thresholds, with the headroom of a port at the end of `link`.
    pub fn params_for(&self, link: &Link) -> xcc_core::algorithms::pfc::PfcParams {
        xcc_core::algorithms::pfc::PfcParams {
            pause_bytes: self.pause_bytes,
            resume_bytes: self.resume_bytes,
            headroom_bytes: self.headroom_bytes.unwrap_or_else(|| self.auto_headroom(link)),
        }
    }

    fn auto_headroom(&self, link: &Link) -> u64 {
        xcc_core::algorithms::pfc::PfcParams::headroom_needed(
            link.rate_bps as f64,
            xcc_core::time::Dur(link.delay_ns),
            self.mtu_bytes,
        )
    }
}
