//! The scenario file as written: serde types with `deny_unknown_fields`, strings with units.
//! [`super::resolve()`] turns them into the [`super::model::Scenario`] the simulator runs.

use serde::Deserialize;
use serde_json::Value;

/// The top level. Arrays stay untyped here because `count` templates expand before typing.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct TopSpec {
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub duration: String,
    pub seed: Option<u64>,
    #[serde(default)]
    pub host: Vec<Value>,
    #[serde(default)]
    pub router: Vec<Value>,
    #[serde(default)]
    pub link: Vec<Value>,
    #[serde(default)]
    pub flow: Vec<Value>,
    #[serde(default)]
    pub arrivals: Vec<Value>,
    #[serde(default)]
    pub transactions: Vec<Value>,
    pub metrics: Option<MetricsSpec>,
    /// A generated session workload on a generated network (seed 004's WAN experiments).
    pub sessions: Option<SessionsSpec>,
    /// `[pfc]`: priority flow control at every router ([`crate::pfc`]).
    pub pfc: Option<crate::pfc::PfcSpec>,
}

/// `[sessions]`: seed 004's workloads as one table. The network (a transit-stub graph with
/// hosts that exist only once a session uses them) and the sessions are generated when the
/// network is built ([`crate::network`]), so a file stays a few lines for 180,000 sessions.
/// `topology` and `workload` have the generators' JSON form ([`crate::sessions`]), typed when
/// the network is built.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct SessionsSpec {
    pub protocol: Option<Value>,
    pub packet_size: Option<String>,
    pub topology: Value,
    pub topology_seed: Option<u64>,
    pub workload: Value,
    /// Error metrics against the max-min oracle every `sample_interval` (none if omitted).
    pub sample_interval: Option<String>,
    /// Window over which a sample measures delivered rates (default: the sample interval).
    pub rate_window: Option<String>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    pub name: String,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub between: [String; 2],
    pub rate: String,
    #[serde(default = "zero_time")]
    pub delay: String,
    pub buffer: String,
    pub queue: Option<Value>,
    pub loss: Option<f64>,
    /// Random extra propagation delay per packet, uniform in [0, jitter], order kept.
    pub jitter: Option<String>,
    pub reverse: Option<LinkDirSpec>,
}

/// Per-direction overrides of a duplex link (the b->a direction).
#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct LinkDirSpec {
    pub rate: Option<String>,
    pub delay: Option<String>,
    pub buffer: Option<String>,
    pub queue: Option<Value>,
    pub loss: Option<f64>,
    pub jitter: Option<String>,
}

#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct TransportSpec {
    pub mss: Option<String>,
    pub header: Option<String>,
    pub ecn: Option<bool>,
    pub sack: Option<bool>,
    /// A time like "40ms", or `false` for one ACK per segment.
    pub delayed_ack: Option<Value>,
    pub min_rto: Option<String>,
    pub initial_rto: Option<String>,
    /// "rfc6298" (default) or "linux": how the retransmission timeout follows the RTT.
    pub rto: Option<String>,
    pub pace: Option<bool>,
    /// "handshake" (default) or "open".
    pub connection: Option<String>,
}

/// A `cc` table's `kind`, to report a table whose kind is missing or not a name.
#[derive(Deserialize, Debug)]
pub struct CcKindSpec {
    pub kind: String,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    pub name: String,
    pub kind: Option<String>,
    pub src: String,
    pub dst: String,
    pub start: Option<String>,
    pub stop: Option<String>,
    pub size: Option<String>,
    pub cc: Option<Value>,
    pub rate: Option<String>,
    pub packet_size: Option<String>,
    pub route: Option<Vec<String>>,
    pub transport: Option<TransportSpec>,
    /// Session flows: the protocol (a name or a table with `kind`) and the requested maximum rate.
    pub protocol: Option<Value>,
    pub demand: Option<String>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct SizeDistSpec {
    pub dist: String,
    pub mean: Option<String>,
    pub shape: Option<f64>,
    pub value: Option<String>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct ArrivalsSpec {
    pub name: String,
    pub src: String,
    pub dst: String,
    pub start: Option<String>,
    pub stop: Option<String>,
    pub mean_interarrival: String,
    pub size: SizeDistSpec,
    pub cc: Option<Value>,
    pub transport: Option<TransportSpec>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct TransactionsSpec {
    pub name: String,
    pub client: String,
    pub server: String,
    pub count: u32,
    pub start: Option<String>,
    pub stop: Option<String>,
    pub request: String,
    pub response: String,
    pub cc: Option<Value>,
    pub transport: Option<TransportSpec>,
    /// One connection for the whole group (HTTP/1.1 keep-alive) instead of one per exchange.
    pub persistent: Option<bool>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct MetricsSpec {
    pub interval: Option<String>,
}

fn zero_time() -> String {
    "0s".to_string()
}
