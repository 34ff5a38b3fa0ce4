//! DCTCP (Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010; RFC 8257): the switch marks
//! CE on every packet that arrives to a queue longer than K ([`link`]); the sender estimates
//! the fraction of marked bytes once per window of data and cuts its window in proportion,
//! by alpha/2, once per window ([`host`]). docs/algorithms/dctcp.md states the law.

pub mod host;
pub mod link;

pub use host::{DctcpAck, DctcpSender};
pub use link::DctcpMarker;

use crate::time::Dur;
use serde::{Deserialize, Serialize};

/// DCTCP's parameters.
#[derive(Copy, Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct DctcpParams {
    /// g, the gain of alpha's average (RFC 8257 section 3.3). 1/16: the paper's experiments
    /// and Linux `tcp_dctcp.c` (`dctcp_shift_g = 4`).
    pub g: f64,
    /// alpha before the first window ends. 1 (the most cautious): Linux
    /// (`dctcp_alpha_on_init = DCTCP_MAX_ALPHA`).
    pub initial_alpha: f64,
    /// K, the marking threshold of the switch, in bytes. 97,500 = 65 packets of 1,500 B, the
    /// paper's K at 10 Gbit/s (section 4; 20 packets at 1 Gbit/s). Its rule: K > C·RTT/7
    /// (section 3.3, [`DctcpParams::k_lower_bound_bytes`]).
    pub k_bytes: u64,
}

impl Default for DctcpParams {
    fn default() -> Self {
        DctcpParams { g: 1.0 / 16.0, initial_alpha: 1.0, k_bytes: 97_500 }
    }
}

impl DctcpParams {
    /// Every field in range, or the name of the first one that is not.
    pub fn check(&self) -> Result<(), String> {
        if !(self.g > 0.0 && self.g <= 1.0) {
            return Err(format!("dctcp.g must be in (0, 1], got {}", self.g));
        }
        if !(self.initial_alpha >= 0.0 && self.initial_alpha <= 1.0) {
            return Err(format!("dctcp.initial_alpha must be in [0, 1], got {}", self.initial_alpha));
        }
        if self.k_bytes == 0 {
            return Err("dctcp.k_bytes must be at least 1 byte".into());
        }
        Ok(())
    }

    /// The paper's guideline for K (section 3.3, eq. 13): `C·RTT/7`, in bytes, for a link of
    /// `capacity_bps` and a round trip of `rtt`. Below it the queue can underflow.
    pub fn k_lower_bound_bytes(capacity_bps: f64, rtt: Dur) -> f64 {
        capacity_bps / 8.0 * rtt.as_secs_f64() / 7.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_pass_and_each_bad_field_is_named() {
        assert_eq!(DctcpParams::default().check(), Ok(()));
        let bad = |p: DctcpParams, field: &str| assert!(p.check().unwrap_err().contains(field), "{field}");
        bad(DctcpParams { g: 0.0, ..Default::default() }, "dctcp.g");
        bad(DctcpParams { initial_alpha: 1.5, ..Default::default() }, "dctcp.initial_alpha");
        bad(DctcpParams { k_bytes: 0, ..Default::default() }, "dctcp.k_bytes");
        assert!(serde_json::from_str::<DctcpParams>(r#"{"k": 3}"#).is_err());
    }

    // 10 Gbit/s, 100 us: C·RTT = 125,000 B, /7 = 17,857 B (12 packets): the default K of 65
    // packets is above it, as the paper's 10 Gbit/s testbed K was.
    #[test]
    fn k_guideline() {
        let k = DctcpParams::k_lower_bound_bytes(10e9, Dur::from_us(100));
        assert!((k - 125_000.0 / 7.0).abs() < 1e-9);
        assert!(DctcpParams::default().k_bytes as f64 > k);
    }
}
