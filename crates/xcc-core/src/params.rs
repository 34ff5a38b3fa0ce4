//! What every algorithm's typed parameters provide: its scenario entry (`queue = ...` of a link,
//! `cc = ...` of a flow) as written (`Spec`, strict serde), resolved into typed parameters with
//! their defaults and checks, and the state machines built from them. Each algorithm implements
//! these in its own folder (`crate::algorithms::<name>`); the scenario parser (`xcc-build`)
//! only deserialises the table and names the file and the field of an error.

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::host::{AnyController, AnyEchoer, PlainEcho};
use crate::link::AnyLinkAlgorithm;
use crate::rng::Pcg64Mcg;
use crate::time::Dur;
use crate::units::parse_duration_ns;
use crate::wire::CongestionHeader;

/// A rejected parameter: the field inside the algorithm's entry (`"alpha"`; empty for the
/// entry itself) and what was expected. The parser prefixes the entry's path and the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamError {
    pub field: String,
    pub message: String,
}

impl ParamError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> ParamError {
        ParamError { field: field.into(), message: message.into() }
    }

    /// The error of a `check()` that reports `"field: what was expected"` as one string.
    pub fn from_check(text: &str) -> ParamError {
        let (field, message) = text.split_once(": ").unwrap_or(("", text));
        ParamError::new(field, message)
    }
}

/// A time at `field` in nanoseconds.
pub fn time(field: &str, s: &str) -> Result<u64, ParamError> {
    parse_duration_ns(s).map_err(|m| ParamError::new(field, m))
}

/// A positive time at `field`, or `default_ns` when not given.
pub fn positive_time_or(field: &str, v: &Option<String>, default_ns: u64) -> Result<u64, ParamError> {
    match v {
        None => Ok(default_ns),
        Some(s) => match time(field, s)? {
            0 => Err(ParamError::new(field, "expected a positive time")),
            ns => Ok(ns),
        },
    }
}

/// A utilisation target in (0, 1] at `field`, or `default`.
pub fn utilisation(field: &str, v: Option<f64>, default: f64) -> Result<f64, ParamError> {
    let g = v.unwrap_or(default);
    if !(g > 0.0 && g <= 1.0) {
        return Err(ParamError::new(field, format!("{g}: expected 0 < gamma <= 1")));
    }
    Ok(g)
}

/// A link algorithm's parameters (`queue = "name"` or `{ kind = "name", ... }`).
pub trait LinkParams: Sized + Copy + Serialize {
    /// The table as written, without its `kind` (strict: an unknown field is an error).
    type Spec: DeserializeOwned;
    /// The resolved parameter (as `run.json` names it) holding the fraction of capacity the
    /// algorithm aims to fill, if it has one (MaxNet's `mu`, RCP's `gamma`): what the max-min
    /// references of a run scale each link's capacity by.
    const TARGET_UTILISATION: Option<&'static str> = None;
    /// Resolves the entry: `spec` is the table, `None` for the bare name.
    fn resolve(spec: Option<Self::Spec>) -> Result<Self, ParamError>;
    /// The algorithm for a link of `rate_bps`; `rng` is the link's own stream (random phases).
    fn build(&self, rng: Pcg64Mcg, rate_bps: u64) -> AnyLinkAlgorithm;
}

/// What a sender's construction needs of its flow's transport.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct HostContext {
    /// Payload bytes of a full segment.
    pub mss_bytes: u32,
    /// Bytes of the headers under the congestion header (IP and transport).
    pub header_bytes: u32,
    /// The rate of the link the flow leaves its host on (its NIC), when the driver knows it:
    /// what a sender that starts at line rate (DCQCN) starts at.
    pub nic_rate_bps: Option<u64>,
}

impl HostContext {
    /// Bytes of a full data packet on the wire: payload, headers and the protocol's shim (what
    /// rate-based sources space their packets by).
    pub fn full_packet_bytes(&self, shim: CongestionHeader) -> u32 {
        self.mss_bytes + self.header_bytes + shim.wire_len() as u32
    }
}

/// A sender's parameters (`cc = "name"` or `{ kind = "name", ... }`).
pub trait HostParams: Sized + Copy + Serialize {
    /// The table as written, without its `kind` (strict).
    type Spec: DeserializeOwned;
    /// Resolves the entry: `spec` is the table, `None` for the bare name.
    fn resolve(spec: Option<Self::Spec>) -> Result<Self, ParamError>;
    /// The sender's controller for a flow whose transport is `t`.
    fn controller(&self, t: &HostContext) -> AnyController;
    /// The receiver's echoer; `two_way_delay` is the path's round-trip propagation delay.
    fn echoer(&self, _two_way_delay: Dur) -> AnyEchoer {
        AnyEchoer::Plain(PlainEcho::default())
    }
    /// The congestion header (shim) its packets carry on xcclab's transport, as a default
    /// value: what sizes its packets and what the emulator checks against the MTU.
    fn shim(&self) -> CongestionHeader {
        CongestionHeader::None
    }
    /// The Linux congestion control that stands in for it on real packets, if a Linux TCP
    /// connection carries it instead of xcclab's UDP transport; `kernel_stack` is set for
    /// `--stack kernel`, where kernel-resident algorithms run in Linux.
    fn linux_tcp(&self, _kernel_stack: bool) -> Option<&'static str> {
        None
    }
}

/// Any table (`{ kind = "droptail" }`): for entries that take no parameter and say so in their
/// own words when given one.
pub type AnyTable = std::collections::BTreeMap<String, serde::de::IgnoredAny>;

/// `cc = { kind = "newreno", initial_window = N }`, also the table form of the senders that take
/// no parameter (`{ kind = "xcp" }`), which refuse `initial_window` by name.
#[derive(serde::Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct CcTableSpec {
    pub initial_window: Option<u32>,
}
