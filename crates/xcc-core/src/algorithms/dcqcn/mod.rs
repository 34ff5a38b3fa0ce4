//! DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015): the
//! rate control of RoCEv2 NICs. Three roles: the switch (congestion point) marks ECN with RED's
//! ramp on the instantaneous queue ([`link`]); the receiver (notification point) turns marks
//! into congestion notification packets, at most one per flow per interval ([`host::CnpGenerator`]);
//! the sender (reaction point) cuts its rate on each CNP by its estimate alpha and recovers by
//! timer and byte counter through fast recovery, additive and hyper increase
//! ([`host::DcqcnSender`]). docs/algorithms/dcqcn.md states the law and its sources.

pub mod host;
pub mod link;

pub use host::{CnpGenerator, DcqcnSender, IncreasePhase};
pub use link::DcqcnMarker;

use crate::time::Dur;
use serde::{Deserialize, Serialize};

/// DCQCN's parameters, every role's.
#[derive(Copy, Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct DcqcnParams {
    /// Kmin: no mark at or below this queue, in bytes. 5 KB: the paper's parameter table (its
    /// text was not re-read here; docs/algorithms/dcqcn.md). The DCQCN authors' public ns-3
    /// code (github bobzhuyb/ns3-rdma, `mix/config.txt`) ships a sample with `KMIN 40` KB;
    /// HPCC's ns-3 runs scale it with the link: 100 KB per 25 Gbit/s.
    pub kmin_bytes: u64,
    /// Kmax: every packet is marked above this queue, in bytes. 200 KB: the paper's table.
    /// (ns3-rdma's sample `KMAX 1000` KB; HPCC's runs: 400 KB per 25 Gbit/s.)
    pub kmax_bytes: u64,
    /// Pmax: marking probability at Kmax. 0.01: the paper's table. (ns3-rdma's sample 1.0;
    /// HPCC's runs: 0.2.)
    pub pmax: f64,
    /// N: least time between two CNPs of one flow, in microseconds. 50 us: the paper; the
    /// authors' ns3-rdma (`qbb-net-device.cc` attribute `CNPInterval` 50, `CNP_INTERVAL 50`).
    pub cnp_interval_us: f64,
    /// g: gain of the alpha average. 1/256: the paper; ns3-rdma `DCTCP_GAIN 0.00390625`; HPCC's
    /// `run.py` `EWMA_GAIN 0.00390625` (its ns-3 attribute default is 1/16).
    pub g: f64,
    /// K: alpha decays by (1 − g) every K without a CNP, in microseconds. 55 us: the paper;
    /// ns3-rdma `AlphaResumInterval` 55 (HPCC's `rdma-hw.cc` default 55 too; its `dcqcn_paper`
    /// run sets 50).
    pub alpha_timer_us: f64,
    /// T: the rate-increase timer, in microseconds. 55 us: the paper as we read its table;
    /// HPCC's `dcqcn_paper` run sets `RP_TIMER 55`. The authors' ns3-rdma sample sets
    /// `RP_TIMER 60` (attribute default 1500, the Mellanox NIC's); HPCC's tuned `dcqcn` 300.
    pub increase_timer_us: f64,
    /// B: the byte counter, in bytes. 10 MB: the paper (htsim `_B` 10 MB). ns3-rdma's attribute
    /// default is 150 KB and its sample 300 MB: the code does not pin B.
    pub byte_counter_bytes: u64,
    /// F: fast-recovery steps before additive increase. 5: the paper; ns3-rdma
    /// `FastRecoveryTimes` 5 (HPCC's `run.py` sets 1).
    pub fast_recovery_steps: u32,
    /// R_AI, the additive step of the target rate, in bit/s. 40 Mbit/s: the paper; ns3-rdma's
    /// sample `RATE_AI 40Mb/s` (HPCC's runs `5·bw/25` Mbit/s; htsim rate/20).
    pub rate_ai_bps: f64,
    /// R_HAI, the hyper-increase step, in bit/s. 200 Mbit/s: the DCQCN authors' ns3-rdma sample
    /// (`RATE_HAI 200Mb/s`, five times its `RATE_AI`); the paper names R_HAI without a value we
    /// could read. (HPCC's runs: `50·bw/25` Mbit/s, ten times their R_AI.)
    pub rate_hai_bps: f64,
    /// Least rate in bit/s. 100 Mbit/s: HPCC's ns-3 `MinRate` default and htsim's DCQCN.
    pub min_rate_bps: f64,
}

impl Default for DcqcnParams {
    fn default() -> Self {
        DcqcnParams {
            kmin_bytes: 5_000,
            kmax_bytes: 200_000,
            pmax: 0.01,
            cnp_interval_us: 50.0,
            g: 1.0 / 256.0,
            alpha_timer_us: 55.0,
            increase_timer_us: 55.0,
            byte_counter_bytes: 10_000_000,
            fast_recovery_steps: 5,
            rate_ai_bps: 40e6,
            rate_hai_bps: 200e6,
            min_rate_bps: 100e6,
        }
    }
}

impl DcqcnParams {
    /// Every field in range, or the name of the first one that is not.
    pub fn check(&self) -> Result<(), String> {
        if self.kmax_bytes < self.kmin_bytes {
            return Err(format!(
                "dcqcn.kmax_bytes ({}) must be at least dcqcn.kmin_bytes ({})",
                self.kmax_bytes, self.kmin_bytes
            ));
        }
        if !(self.pmax >= 0.0 && self.pmax <= 1.0) {
            return Err(format!("dcqcn.pmax must be in [0, 1], got {}", self.pmax));
        }
        let positive = |name: &str, v: f64| {
            if v > 0.0 && v.is_finite() {
                Ok(())
            } else {
                Err(format!("dcqcn.{name} must be positive, got {v}"))
            }
        };
        if !(self.cnp_interval_us >= 0.0 && self.cnp_interval_us.is_finite()) {
            return Err(format!("dcqcn.cnp_interval_us must be >= 0, got {}", self.cnp_interval_us));
        }
        if !(self.g > 0.0 && self.g <= 1.0) {
            return Err(format!("dcqcn.g must be in (0, 1], got {}", self.g));
        }
        positive("alpha_timer_us", self.alpha_timer_us)?;
        positive("increase_timer_us", self.increase_timer_us)?;
        if self.byte_counter_bytes == 0 {
            return Err("dcqcn.byte_counter_bytes must be at least 1".into());
        }
        if !(self.rate_ai_bps >= 0.0 && self.rate_ai_bps.is_finite()) {
            return Err(format!("dcqcn.rate_ai_bps must be >= 0, got {}", self.rate_ai_bps));
        }
        if !(self.rate_hai_bps >= 0.0 && self.rate_hai_bps.is_finite()) {
            return Err(format!("dcqcn.rate_hai_bps must be >= 0, got {}", self.rate_hai_bps));
        }
        positive("min_rate_bps", self.min_rate_bps)?;
        Ok(())
    }

    /// N as a duration.
    pub fn cnp_interval(&self) -> Dur {
        Dur::from_secs_f64(self.cnp_interval_us * 1e-6)
    }

    /// K as a duration.
    pub fn alpha_timer(&self) -> Dur {
        Dur::from_secs_f64(self.alpha_timer_us * 1e-6)
    }

    /// T as a duration.
    pub fn increase_timer(&self) -> Dur {
        Dur::from_secs_f64(self.increase_timer_us * 1e-6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_pass_and_each_bad_field_is_named() {
        assert_eq!(DcqcnParams::default().check(), Ok(()));
        let bad = |p: DcqcnParams, field: &str| assert!(p.check().unwrap_err().contains(field), "{field}");
        bad(DcqcnParams { kmax_bytes: 1_000, ..Default::default() }, "dcqcn.kmax_bytes");
        bad(DcqcnParams { pmax: 1.5, ..Default::default() }, "dcqcn.pmax");
        bad(DcqcnParams { cnp_interval_us: -1.0, ..Default::default() }, "dcqcn.cnp_interval_us");
        bad(DcqcnParams { g: 0.0, ..Default::default() }, "dcqcn.g");
        bad(DcqcnParams { alpha_timer_us: 0.0, ..Default::default() }, "dcqcn.alpha_timer_us");
        bad(DcqcnParams { increase_timer_us: f64::NAN, ..Default::default() }, "dcqcn.increase_timer_us");
        bad(DcqcnParams { byte_counter_bytes: 0, ..Default::default() }, "dcqcn.byte_counter_bytes");
        bad(DcqcnParams { rate_ai_bps: -1.0, ..Default::default() }, "dcqcn.rate_ai_bps");
        bad(DcqcnParams { rate_hai_bps: f64::INFINITY, ..Default::default() }, "dcqcn.rate_hai_bps");
        bad(DcqcnParams { min_rate_bps: 0.0, ..Default::default() }, "dcqcn.min_rate_bps");
        assert!(serde_json::from_str::<DcqcnParams>(r#"{"kmin": 1}"#).is_err());
        let p: DcqcnParams = serde_json::from_str(r#"{"kmin_bytes": 100000, "kmax_bytes": 400000}"#).unwrap();
        assert_eq!((p.kmin_bytes, p.kmax_bytes, p.pmax), (100_000, 400_000, 0.01));
    }

    #[test]
    fn timers_convert_to_durations() {
        let p = DcqcnParams::default();
        assert_eq!(p.cnp_interval(), Dur::from_us(50));
        assert_eq!(p.alpha_timer(), Dur::from_us(55));
        assert_eq!(p.increase_timer(), Dur::from_us(55));
    }
}
