//! The resolved scenario: every template expanded, every default filled in, every unit turned
//! into integers. This is what the simulator builds from and what `run.json` records.

use serde::Serialize;
use xcc_core::link::{MarkMaxUnit, RcpRttFilter, RedAction, RedUnit, RedVariant};

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

/// RED parameters as written in the scenario (thresholds in `unit`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct RedParams {
    pub w_q: f64,
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
    pub unit: RedUnit,
    pub variant: RedVariant,
    pub action: RedAction,
    pub mean_packet_bytes: u32,
}

/// MarkMax parameters (seed 003): thresholds in `unit`, `θ_l < θ < θ_h`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct MarkMaxParams {
    pub variant: MarkMaxLetter,
    pub unit: MarkMaxUnit,
    pub theta_l: u64,
    pub theta: u64,
    pub theta_h: u64,
    /// MarkMax-T's tail fraction in (0, 1]; `None` for MarkMax-B.
    pub tail: Option<f64>,
}

/// Which MarkMax (seed 003): the whole backlog (B) or the tail backlog (T).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MarkMaxLetter {
    B,
    T,
}

/// MaxNet router parameters (seed 000).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct MaxNetRouterParams {
    pub mu: f64,
    pub dt_p_ns: u64,
    pub t0_ns: u64,
    pub t_s: f64,
    pub x_max_bps: f64,
}

/// XCP router parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct XcpRouterParams {
    pub alpha: f64,
    pub beta: f64,
    pub gamma: f64,
}

/// RCP router parameters (the preset's name is recorded for the report).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct RcpRouterParams {
    pub preset: &'static str,
    pub alpha: f64,
    pub beta: f64,
    pub gamma: f64,
    pub init_rate_fact: f64,
    pub min_pprtt: f64,
    pub rtt_filter: RcpRttFilter,
}

/// PIQI-RCP router parameters (reconstructed law).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PiqiRcpRouterParams {
    pub interval_ns: u64,
    /// `None`: kappa* from the largest RTT carried ("auto").
    pub kappa: Option<f64>,
    pub gamma: f64,
    pub initial_fraction: f64,
    pub rtt0_ns: u64,
}

/// JetMax router parameters (reconstructed law).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct JetMaxRouterParams {
    pub gamma: f64,
    pub interval_ns: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Queue {
    DropTail,
    Red(RedParams),
    #[serde(rename = "markmax")]
    MarkMax(MarkMaxParams),
    #[serde(rename = "maxnet")]
    MaxNet(MaxNetRouterParams),
    #[serde(rename = "xcp")]
    Xcp(XcpRouterParams),
    #[serde(rename = "rcp")]
    Rcp(RcpRouterParams),
    #[serde(rename = "piqi-rcp")]
    PiqiRcp(PiqiRcpRouterParams),
    #[serde(rename = "jetmax")]
    JetMax(JetMaxRouterParams),
}

impl Queue {
    pub fn name(&self) -> &'static str {
        match self {
            Queue::DropTail => "droptail",
            Queue::Red(_) => "red",
            Queue::MarkMax(_) => "markmax",
            Queue::MaxNet(_) => "maxnet",
            Queue::Xcp(_) => "xcp",
            Queue::Rcp(_) => "rcp",
            Queue::PiqiRcp(_) => "piqi-rcp",
            Queue::JetMax(_) => "jetmax",
        }
    }
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
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Cc {
    NewReno {
        initial_window: u32,
    },
    #[serde(rename = "maxnet")]
    MaxNet {
        x_max_bps: f64,
        t_s: f64,
        alpha: f64,
        eta: f64,
        dt_min_ns: u64,
        maxstart: bool,
        /// Pace at the source rate (ours; `docs/algorithms/maxnet.md`).
        pace: bool,
    },
    #[serde(rename = "xcp")]
    Xcp,
    #[serde(rename = "rcp")]
    Rcp,
    #[serde(rename = "piqi-rcp")]
    PiqiRcp,
    #[serde(rename = "jetmax")]
    JetMax {
        tau: f64,
        probe_wait_ns: u64,
    },
}

impl Cc {
    pub fn name(&self) -> &'static str {
        match self {
            Cc::NewReno { .. } => "newreno",
            Cc::MaxNet { .. } => "maxnet",
            Cc::Xcp => "xcp",
            Cc::Rcp => "rcp",
            Cc::PiqiRcp => "piqi-rcp",
            Cc::JetMax { .. } => "jetmax",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FlowKind {
    Bulk { size_bytes: Option<u64>, cc: Cc, transport: Transport },
    Cbr { rate_bps: u64, packet_bytes: u32 },
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
}

#[derive(Clone, Copy, Debug, Serialize)]
pub struct Metrics {
    /// Time-series sampling interval; 0 disables the series.
    pub interval_ns: u64,
}
