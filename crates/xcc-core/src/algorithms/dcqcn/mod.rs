//! DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015): the
//! rate control of RoCEv2 NICs. Three roles: the switch (congestion point) marks ECN with RED's
//! ramp on the instantaneous queue ([`link`]); the receiver (notification point) turns marks
//! into congestion notification packets, at most one per flow per interval ([`host::CnpGenerator`]);
//! the sender (reaction point) cuts its rate on each CNP by its estimate alpha and recovers by
//! timer and byte counter through fast recovery, additive and hyper increase
//! ([`host::DcqcnSender`]). docs/algorithms/dcqcn.md states the law and its sources.

pub mod host;
pub mod link;

pub use host::{CnpGenerator, Dcqcn, DcqcnEcho, DcqcnSender, IncreasePhase};
pub use link::DcqcnMarker;

use crate::host::{AnyController, AnyEchoer};
use crate::link::AnyLinkAlgorithm;
use crate::params::{HostContext, HostParams, LinkParams, ParamError};
use crate::rng::Pcg64Mcg;
use crate::time::Dur;
use crate::wire::CongestionHeader;
use serde::{Deserialize, Serialize};

// ---- `queue = "dcqcn"` or `{ kind = "dcqcn", kmin_bytes, kmax_bytes, pmax }`: the switch.

/// The congestion point's parameters: RED's ramp on the instantaneous egress queue.
#[derive(Copy, Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct DcqcnQueueParams {
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
}

impl Default for DcqcnQueueParams {
    fn default() -> Self {
        DcqcnQueueParams { kmin_bytes: 5_000, kmax_bytes: 200_000, pmax: 0.01 }
    }
}

impl DcqcnQueueParams {
    /// Every field in range, or `"field: what was expected"` for the first one that is not.
    pub fn check(&self) -> Result<(), String> {
        if self.kmax_bytes < self.kmin_bytes {
            return Err(format!(
                "kmax_bytes: {} is below kmin_bytes ({}); expected Kmax >= Kmin",
                self.kmax_bytes, self.kmin_bytes
            ));
        }
        if !(self.pmax >= 0.0 && self.pmax <= 1.0) {
            return Err(format!("pmax: {} is not a probability in [0, 1] (the paper: 0.01)", self.pmax));
        }
        Ok(())
    }
}

impl LinkParams for DcqcnQueueParams {
    type Spec = DcqcnQueueParams;

    fn resolve(spec: Option<DcqcnQueueParams>) -> Result<Self, ParamError> {
        let p = spec.unwrap_or_default();
        p.check().map_err(|e| ParamError::from_check(&e))?;
        Ok(p)
    }

    fn build(&self, rng: Pcg64Mcg, _rate_bps: u64) -> AnyLinkAlgorithm {
        AnyLinkAlgorithm::Dcqcn(DcqcnMarker::new(self, rng))
    }
}

// ---- `cc = "dcqcn"` or `{ kind = "dcqcn", ... }`: the receiver's CNPs and the sender.

/// The notification and reaction points' parameters (the receiver's CNP interval and the
/// sender's rate control).
#[derive(Copy, Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct DcqcnParams {
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
    pub byte_counter_bytes: u32,
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
    /// The NIC's line rate in bit/s, where the sender starts and what it never exceeds. 0 (the
    /// default): the rate of the link the flow leaves its host on, as the simulator knows it;
    /// 40 Gbit/s (the paper's testbed NICs) where the driver does not say. (A plain number, not
    /// an option: the flow record's size budget, `xcc-sim`'s `flow_records_stay_a_few_cache_lines`.)
    pub line_rate_bps: f64,
}

impl Default for DcqcnParams {
    fn default() -> Self {
        DcqcnParams {
            cnp_interval_us: 50.0,
            g: 1.0 / 256.0,
            alpha_timer_us: 55.0,
            increase_timer_us: 55.0,
            byte_counter_bytes: 10_000_000,
            fast_recovery_steps: 5,
            rate_ai_bps: 40e6,
            rate_hai_bps: 200e6,
            min_rate_bps: 100e6,
            line_rate_bps: 0.0,
        }
    }
}

/// The line rate when neither the entry nor the driver gives one: the paper's 40 Gbit/s NICs.
pub const FALLBACK_LINE_RATE_BPS: f64 = 40e9;

impl DcqcnParams {
    /// Every field in range, or `"field: what was expected"` for the first one that is not.
    pub fn check(&self) -> Result<(), String> {
        let positive = |name: &str, v: f64| {
            if v > 0.0 && v.is_finite() {
                Ok(())
            } else {
                Err(format!("{name}: {v} is not a positive number"))
            }
        };
        let at_least_zero = |name: &str, v: f64| {
            if v >= 0.0 && v.is_finite() {
                Ok(())
            } else {
                Err(format!("{name}: {v} is not a number >= 0"))
            }
        };
        at_least_zero("cnp_interval_us", self.cnp_interval_us)?;
        if !(self.g > 0.0 && self.g <= 1.0) {
            return Err(format!("g: {} is not in (0, 1] (the paper: 1/256)", self.g));
        }
        positive("alpha_timer_us", self.alpha_timer_us)?;
        positive("increase_timer_us", self.increase_timer_us)?;
        if self.byte_counter_bytes == 0 {
            return Err("byte_counter_bytes: expected at least 1 byte".into());
        }
        at_least_zero("rate_ai_bps", self.rate_ai_bps)?;
        at_least_zero("rate_hai_bps", self.rate_hai_bps)?;
        positive("min_rate_bps", self.min_rate_bps)?;
        if self.line_rate_bps != 0.0 {
            let r = self.line_rate_bps;
            positive("line_rate_bps", r)?;
            if r < self.min_rate_bps {
                return Err(format!("line_rate_bps: {r} is below min_rate_bps ({})", self.min_rate_bps));
            }
        }
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

impl HostParams for DcqcnParams {
    type Spec = DcqcnParams;

    fn resolve(spec: Option<DcqcnParams>) -> Result<Self, ParamError> {
        let p = spec.unwrap_or_default();
        p.check().map_err(|e| ParamError::from_check(&e))?;
        Ok(p)
    }

    /// The sender at the entry's line rate, else its NIC's (never below `min_rate_bps`).
    fn controller(&self, t: &HostContext) -> AnyController {
        let given = (self.line_rate_bps > 0.0).then_some(self.line_rate_bps);
        let line = given.or(t.path.map(|p| p.nic_rate_bps as f64)).unwrap_or(FALLBACK_LINE_RATE_BPS);
        let sender = DcqcnSender::new(*self, line.max(self.min_rate_bps)).expect("checked parameters");
        AnyController::Dcqcn(Dcqcn::new(sender))
    }

    /// The notification point: CE marks become ECN-Echo on the ACK, at most one per N.
    fn echoer(&self, _two_way_delay: Dur) -> AnyEchoer {
        AnyEchoer::Dcqcn(DcqcnEcho::new(CnpGenerator::new(self).expect("checked parameters")))
    }

    fn shim(&self) -> CongestionHeader {
        CongestionHeader::None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_pass_and_each_bad_field_is_named() {
        assert_eq!(DcqcnParams::resolve(None), Ok(DcqcnParams::default()));
        let bad = |p: DcqcnParams, field: &str| assert_eq!(DcqcnParams::resolve(Some(p)).unwrap_err().field, field);
        bad(DcqcnParams { cnp_interval_us: -1.0, ..Default::default() }, "cnp_interval_us");
        bad(DcqcnParams { g: 0.0, ..Default::default() }, "g");
        bad(DcqcnParams { alpha_timer_us: 0.0, ..Default::default() }, "alpha_timer_us");
        bad(DcqcnParams { increase_timer_us: f64::NAN, ..Default::default() }, "increase_timer_us");
        bad(DcqcnParams { byte_counter_bytes: 0, ..Default::default() }, "byte_counter_bytes");
        bad(DcqcnParams { rate_ai_bps: -1.0, ..Default::default() }, "rate_ai_bps");
        bad(DcqcnParams { rate_hai_bps: f64::INFINITY, ..Default::default() }, "rate_hai_bps");
        bad(DcqcnParams { min_rate_bps: 0.0, ..Default::default() }, "min_rate_bps");
        bad(DcqcnParams { line_rate_bps: 1e6, ..Default::default() }, "line_rate_bps");
        assert!(serde_json::from_str::<DcqcnParams>(r#"{"kmin_bytes": 1}"#).is_err(), "Kmin belongs to the queue");
        let q = |p: DcqcnQueueParams| DcqcnQueueParams::resolve(Some(p));
        assert_eq!(q(DcqcnQueueParams { kmax_bytes: 1_000, ..Default::default() }).unwrap_err().field, "kmax_bytes");
        assert_eq!(q(DcqcnQueueParams { pmax: 1.5, ..Default::default() }).unwrap_err().field, "pmax");
        let p: DcqcnQueueParams = serde_json::from_str(r#"{"kmin_bytes": 100000, "kmax_bytes": 400000}"#).unwrap();
        assert_eq!((p.kmin_bytes, p.kmax_bytes, p.pmax), (100_000, 400_000, 0.01));
    }

    #[test]
    fn timers_convert_to_durations() {
        let p = DcqcnParams::default();
        assert_eq!(p.cnp_interval(), Dur::from_us(50));
        assert_eq!(p.alpha_timer(), Dur::from_us(55));
        assert_eq!(p.increase_timer(), Dur::from_us(55));
    }

    /// The sender starts at the entry's line rate, else the NIC's the driver gives, else 40 G.
    #[test]
    fn line_rate_from_the_entry_or_the_nic() {
        use crate::host::Controller;
        let ctx = |nic: Option<u64>| HostContext {
            mss_bytes: 1000,
            header_bytes: 48,
            path: nic.map(|nic_rate_bps| crate::params::PathContext { base_rtt: Dur::from_us(10), nic_rate_bps }),
        };
        let rate = |p: DcqcnParams, nic| p.controller(&ctx(nic)).pacing_rate_bps();
        assert_eq!(rate(DcqcnParams::default(), Some(25_000_000_000)), Some(25e9));
        assert_eq!(rate(DcqcnParams::default(), None), Some(40e9));
        assert_eq!(rate(DcqcnParams { line_rate_bps: 10e9, ..Default::default() }, Some(25_000_000_000)), Some(10e9));
    }
}
