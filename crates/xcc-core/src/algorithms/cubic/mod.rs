//! CUBIC (RFC 9438) as Linux runs it (`net/ipv4/tcp_cubic.c`): a loss-based window law whose
//! congestion-avoidance window follows a cubic curve of the time since the last reduction,
//!
//! ```text
//! W(t) = C (t - K)^3 + W_max,     K = cbrt(W_max (1 - beta) / C)        (RFC 9438 eqs. 1, 2)
//! ```
//!
//! concave up to the window of the last loss `W_max`, then convex beyond it, with a multiplicative
//! decrease to `beta W_max` on loss, "fast convergence" (a flow whose `W_max` shrank gives up a
//! little more), a TCP-friendly region (never slower than Reno with the same `beta`'s AIMD
//! equivalent) and HyStart (Ha and Rhee 2008: leave slow start on a train of closely spaced
//! ACKs or a rise in delay, before the first loss).
//!
//! The law is in [`host`]; it keeps the kernel's units (segments, jiffies, time in 1/1024 s,
//! the cubic scaled by 2^40) so the window it computes is the kernel's, step for step.
//! docs/algorithms/cubic.md describes it and where it differs from Linux.

pub mod host;

use serde::{Deserialize, Serialize};

pub use host::Cubic;

/// CUBIC's parameters: the module parameters of Linux's `tcp_cubic.c`, with its defaults.
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CubicParams {
    /// Initial window in segments. Default 10: Linux's `TCP_INIT_CWND` (RFC 6928).
    pub initial_window: u32,
    /// Multiplicative decrease factor, in 1/1024: the window after a loss is
    /// `cwnd * beta / 1024`. Default 717 (= 0.7): `tcp_cubic.c` module parameter `beta`;
    /// RFC 9438 section 4.6, `beta_cubic = 0.7`.
    pub beta: u32,
    /// The cubic's scale C, in 1/1024 per 1/10 (the kernel's `bic_scale`: C = bic_scale * 10 /
    /// 1024 = 0.4004 segments/s^3). Default 41: `tcp_cubic.c`; RFC 9438 section 5, C = 0.4.
    pub bic_scale: u32,
    /// Fast convergence (RFC 9438 section 4.7): a loss below the previous `W_max` sets
    /// `W_max = cwnd (1 + beta) / 2`. Default on (`tcp_cubic.c` `fast_convergence = 1`).
    pub fast_convergence: bool,
    /// The TCP-friendly (Reno-friendly) region (RFC 9438 section 4.3). Default on
    /// (`tcp_cubic.c` `tcp_friendliness = 1`).
    pub tcp_friendliness: bool,
    /// HyStart's ACK-train exit. Default on (`tcp_cubic.c` `hystart_detect = 3`, bit 1).
    pub hystart_ack_train: bool,
    /// HyStart's delay-increase exit. Default on (`hystart_detect = 3`, bit 2).
    pub hystart_delay: bool,
    /// HyStart acts only at or above this window in segments. Default 16: `tcp_cubic.c`
    /// `hystart_low_window`.
    pub hystart_low_window: u32,
    /// ACKs closer than this (µs) belong to one train. Default 2000: `tcp_cubic.c`
    /// `hystart_ack_delta_us`.
    pub hystart_ack_delta_us: u32,
    /// The kernel's timer frequency (`CONFIG_HZ`): CUBIC's clock is jiffies, which sets how
    /// often its growth target is recomputed. Default 250: the kernel of this lab's emulator
    /// host (`CONFIG_HZ=250`, also Debian's and Ubuntu's default); 1000 on some distributions.
    pub hz: u32,
}

impl Default for CubicParams {
    fn default() -> Self {
        CubicParams {
            initial_window: 10,
            beta: 717,
            bic_scale: 41,
            fast_convergence: true,
            tcp_friendliness: true,
            hystart_ack_train: true,
            hystart_delay: true,
            hystart_low_window: 16,
            hystart_ack_delta_us: 2000,
            hz: 250,
        }
    }
}

impl CubicParams {
    /// Checks every field's range; the error names the field and what was expected.
    pub fn check(&self) -> Result<(), String> {
        if self.initial_window == 0 {
            return Err("initial_window: expected at least 1 segment".into());
        }
        if !(1..1024).contains(&self.beta) {
            return Err(format!("beta: {} is not in 1..1023 (a fraction of 1024; Linux: 717)", self.beta));
        }
        if !(1..=1024).contains(&self.bic_scale) {
            return Err(format!("bic_scale: {} is not in 1..1024 (Linux: 41, C = 0.4)", self.bic_scale));
        }
        if !(100..=10_000).contains(&self.hz) {
            return Err(format!("hz: {} is not in 100..10000 (CONFIG_HZ: 100, 250, 300 or 1000)", self.hz));
        }
        if self.hystart_ack_delta_us == 0 {
            return Err("hystart_ack_delta_us: expected a positive number of microseconds".into());
        }
        Ok(())
    }
}

/// `cc = "cubic"` or `{ kind = "cubic", ... }` with the fields of [`CubicParams`] (defaults: Linux's). On
/// real packets the kernel's own `cubic` carries the flow.
impl crate::params::HostParams for CubicParams {
    type Spec = CubicParams;

    fn resolve(spec: Option<CubicParams>) -> Result<Self, crate::params::ParamError> {
        let p = spec.unwrap_or_default();
        p.check().map_err(|e| crate::params::ParamError::from_check(&e))?;
        Ok(p)
    }

    fn controller(&self, t: &crate::params::HostContext) -> crate::host::AnyController {
        use crate::host::AnyController;
        AnyController::Cubic(Cubic::new(*self, t.mss_bytes))
    }

    /// Linux's own CUBIC on real packets.
    fn linux_tcp(&self, _kernel_stack: bool) -> Option<&'static str> {
        Some("cubic")
    }
}
