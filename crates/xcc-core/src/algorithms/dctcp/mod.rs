//! DCTCP (Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010; RFC 8257): the switch marks
//! CE on every ECN-capable packet that arrives to a queue longer than K ([`link`]); the receiver
//! echoes each packet's CE state; the sender estimates the fraction of marked bytes once per
//! window of data and cuts its window by alpha/2, at most once per window ([`host`]).
//! docs/algorithms/dctcp.md states the law and its sources.

pub mod host;
pub mod link;

pub use host::{Dctcp, DctcpEcho};
pub use link::DctcpMarker;

use serde::{Deserialize, Serialize};

use crate::host::{AnyController, AnyEchoer};
use crate::link::AnyLinkAlgorithm;
use crate::params::{HostContext, HostParams, LinkParams, ParamError};
use crate::rng::Pcg64Mcg;
use crate::time::Dur;
use crate::units::{parse_amount, Amount};
use crate::wire::CongestionHeader;

// ---- `cc = "dctcp"` or `{ kind = "dctcp", g, initial_alpha, initial_window }`: the sender.

/// DCTCP's sender parameters (the scenario entry and its resolved form).
#[derive(Copy, Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct DctcpParams {
    /// g, the gain of alpha's average (RFC 8257 section 3.3). 1/16: the paper's experiments
    /// (section 3.3's guideline and section 4) and Linux `tcp_dctcp.c` (`dctcp_shift_g = 4`,
    /// "g = 1/2^4"; read this session).
    pub g: f64,
    /// alpha before the first window ends. 1 (the most cautious): Linux
    /// (`dctcp_alpha_on_init = DCTCP_MAX_ALPHA`); RFC 8257 section 3.3 leaves it open.
    pub initial_alpha: f64,
    /// Initial window in segments. 10: Linux's `TCP_INIT_CWND` (RFC 6928), the stack the
    /// DCTCP module runs in.
    pub initial_window: u32,
}

impl Default for DctcpParams {
    fn default() -> Self {
        DctcpParams { g: 1.0 / 16.0, initial_alpha: 1.0, initial_window: 10 }
    }
}

impl DctcpParams {
    /// Every field in range, or `"field: what was expected"` for the first one that is not.
    pub fn check(&self) -> Result<(), String> {
        if !(self.g > 0.0 && self.g <= 1.0) {
            return Err(format!("g: {} is not in (0, 1] (the paper and Linux: 1/16)", self.g));
        }
        if !(self.initial_alpha >= 0.0 && self.initial_alpha <= 1.0) {
            return Err(format!("initial_alpha: {} is not in [0, 1] (Linux: 1)", self.initial_alpha));
        }
        if self.initial_window == 0 {
            return Err("initial_window: expected at least 1 segment".into());
        }
        Ok(())
    }
}

impl HostParams for DctcpParams {
    type Spec = DctcpParams;

    fn resolve(spec: Option<DctcpParams>) -> Result<Self, ParamError> {
        let p = spec.unwrap_or_default();
        p.check().map_err(|e| ParamError::from_check(&e))?;
        Ok(p)
    }

    fn controller(&self, t: &HostContext) -> AnyController {
        AnyController::Dctcp(Dctcp::new(*self, t.mss_bytes))
    }

    /// RFC 8257 section 3.2's receiver: each ACK echoes the CE state of what it acknowledges.
    fn echoer(&self, _two_way_delay: Dur) -> AnyEchoer {
        AnyEchoer::Dctcp(DctcpEcho::default())
    }

    fn shim(&self) -> CongestionHeader {
        CongestionHeader::None
    }

    /// On `--stack kernel` DCTCP runs in Linux: the BPF struct_ops [`KERNEL_NAME`]
    /// (python/xcclab/kernel/src/dctcp.bpf.c, the law of Linux's `tcp_dctcp.c`, docs/kernel.md).
    fn linux_tcp(&self, kernel_stack: bool) -> Option<&'static str> {
        kernel_stack.then_some(KERNEL_NAME)
    }
}

/// Linux's name of kernel DCTCP as xcclab registers it (not `dctcp`, the module's, so the two
/// never collide on kernels that have the module).
pub const KERNEL_NAME: &str = "xcc_dctcp";

// ---- `queue = "dctcp"` or `{ kind = "dctcp", k = "65pkt" }`: the switch's marking threshold.

/// `queue = { kind = "dctcp", ... }` as written.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct DctcpQueueSpec {
    /// K in packets (`"65pkt"`) or bytes (`"97500B"`, `"100KB"`).
    pub k: Option<String>,
}

/// The unit K and the queue are counted in.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum QueueUnit {
    Packets,
    Bytes,
}

/// The switch's resolved parameters.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DctcpQueueParams {
    /// K, the marking threshold: packets arriving to a queue longer than K are marked.
    /// Default 65 packets: the paper's K at 10 Gbit/s (section 4; 20 packets at 1 Gbit/s),
    /// also the heuristic Linux's `TCP_CONG_DCTCP` help text gives ("20 packets (30KB) at
    /// 1Gbps, and 65 packets (~100KB) at 10Gbps"). The paper's rule is K > C·RTT/7 (section
    /// 3.3, [`k_lower_bound_bytes`]).
    pub k: u64,
    /// What `k` counts.
    pub unit: QueueUnit,
}

impl LinkParams for DctcpQueueParams {
    type Spec = DctcpQueueSpec;

    fn resolve(spec: Option<Self::Spec>) -> Result<Self, ParamError> {
        let Some(text) = spec.and_then(|s| s.k) else {
            return Ok(DctcpQueueParams { k: 65, unit: QueueUnit::Packets });
        };
        let (k, unit) = match parse_amount(&text, false).map_err(|m| ParamError::new("k", m))? {
            Amount::Packets(p) => (p, QueueUnit::Packets),
            Amount::Bytes(b) => (b, QueueUnit::Bytes),
            Amount::Unlimited => unreachable!("parse_amount refuses \"unlimited\" here"),
        };
        if !(k >= 1.0 && k.fract() == 0.0) {
            return Err(ParamError::new("k", format!("'{text}': expected a whole number of packets or bytes, at least 1")));
        }
        Ok(DctcpQueueParams { k: k as u64, unit })
    }

    fn build(&self, _rng: Pcg64Mcg, _rate_bps: u64) -> AnyLinkAlgorithm {
        AnyLinkAlgorithm::Dctcp(DctcpMarker::new(self.k, self.unit))
    }
}

/// The paper's guideline for K (section 3.3, eq. 13): `C·RTT/7`, in bytes, for a link of
/// `capacity_bps` and a round trip of `rtt`. Below it the queue can empty and the link idle.
pub fn k_lower_bound_bytes(capacity_bps: f64, rtt: Dur) -> f64 {
    capacity_bps / 8.0 * rtt.as_secs_f64() / 7.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_pass_and_each_bad_field_is_named() {
        assert_eq!(DctcpParams::resolve(None), Ok(DctcpParams::default()));
        let bad = |p: DctcpParams, field: &str| assert_eq!(DctcpParams::resolve(Some(p)).unwrap_err().field, field);
        bad(DctcpParams { g: 0.0, ..Default::default() }, "g");
        bad(DctcpParams { initial_alpha: 1.5, ..Default::default() }, "initial_alpha");
        bad(DctcpParams { initial_window: 0, ..Default::default() }, "initial_window");
        assert!(serde_json::from_str::<DctcpParams>(r#"{"k": 3}"#).is_err(), "K belongs to the queue");
    }

    #[test]
    fn queue_k_in_packets_or_bytes() {
        let k = |s: &str| DctcpQueueParams::resolve(Some(DctcpQueueSpec { k: Some(s.into()) }));
        assert_eq!(DctcpQueueParams::resolve(None).unwrap(), DctcpQueueParams { k: 65, unit: QueueUnit::Packets });
        assert_eq!(k("20pkt").unwrap(), DctcpQueueParams { k: 20, unit: QueueUnit::Packets });
        assert_eq!(k("30KB").unwrap(), DctcpQueueParams { k: 30_000, unit: QueueUnit::Bytes });
        for bad in ["0pkt", "1.5pkt", "lots", "unlimited"] {
            assert_eq!(k(bad).unwrap_err().field, "k", "{bad}");
        }
    }

    // 10 Gbit/s, 100 us: C·RTT = 125,000 B, /7 = 17,857 B (12 packets): the default K of 65
    // packets is above it, as the paper's 10 Gbit/s testbed K was.
    #[test]
    fn k_guideline() {
        let k = k_lower_bound_bytes(10e9, Dur::from_us(100));
        assert!((k - 125_000.0 / 7.0).abs() < 1e-9);
        assert!(65.0 * 1500.0 > k);
    }
}
