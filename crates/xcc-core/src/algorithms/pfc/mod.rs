//! Priority flow control (IEEE 802.1Qbb), the receiving side of one (ingress port, priority):
//! the bytes that came in through the port and still wait in the switch; XOFF to the upstream
//! transmitter when they pass the pause threshold, XON when they fall back to the resume
//! threshold; a headroom above the pause threshold for what is already on the wire when XOFF
//! leaves. Sans-IO: the link model (next step of issue #29, docs/decisions.md "Design for the
//! next session") charges and releases bytes and carries the frames; this decides and counts.
//!
//! Static thresholds, as htsim's lossless input queue (`queue_lossless_input.cpp`: pause above
//! a high threshold, resume below a low one, a hard limit above both); HPCC's ns-3 switch uses
//! a dynamic threshold over a shared buffer (`switch-mmu.cc`), a policy for later.

use crate::time::{Dur, Time};
use serde::{Deserialize, Serialize};

/// PFC thresholds of one (ingress port, priority), in bytes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct PfcParams {
    /// XOFF when the ingress bytes exceed this. 22,500 B = 15 packets of 1,500 B: htsim's
    /// lossless input queue (`_high_threshold = 15` packets).
    pub pause_bytes: u64,
    /// XON when they fall to this. 18,000 B = 12 packets: htsim (`_low_threshold`).
    pub resume_bytes: u64,
    /// Room above the pause threshold for bytes in flight after XOFF. 7,500 B = 5 packets:
    /// htsim's queue limit of 20 packets less its 15. It must cover the link's round trip at
    /// line rate plus a packet at each end ([`PfcParams::headroom_needed`]); the default suits
    /// short, slow links only.
    pub headroom_bytes: u64,
}

impl Default for PfcParams {
    fn default() -> Self {
        PfcParams { pause_bytes: 22_500, resume_bytes: 18_000, headroom_bytes: 7_500 }
    }
}

/// Why PFC thresholds cannot hold.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PfcError {
    /// The pause threshold must be positive.
    ZeroPause,
    /// Resume must lie below pause, or a port would pause and resume at once.
    ResumeNotBelowPause { resume_bytes: u64, pause_bytes: u64 },
    /// The headroom must hold at least one packet.
    HeadroomBelowOnePacket { headroom_bytes: u64, mtu_bytes: u32 },
    /// The headroom is smaller than what a link can deliver after XOFF.
    HeadroomBelowInFlight { headroom_bytes: u64, needed_bytes: u64 },
}

impl core::fmt::Display for PfcError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            PfcError::ZeroPause => write!(f, "pfc.pause_bytes must be at least 1"),
            PfcError::ResumeNotBelowPause { resume_bytes, pause_bytes } => {
                write!(f, "pfc.resume_bytes ({resume_bytes}) must be below pfc.pause_bytes ({pause_bytes})")
            }
            PfcError::HeadroomBelowOnePacket { headroom_bytes, mtu_bytes } => {
                write!(f, "pfc.headroom_bytes ({headroom_bytes}) must hold at least one packet ({mtu_bytes} B)")
            }
            PfcError::HeadroomBelowInFlight { headroom_bytes, needed_bytes } => write!(
                f,
                "pfc.headroom_bytes ({headroom_bytes}) is below the {needed_bytes} B the link can deliver after a pause"
            ),
        }
    }
}
impl std::error::Error for PfcError {}

impl PfcParams {
    /// Thresholds that can hold for packets of up to `mtu_bytes`.
    pub fn check(&self, mtu_bytes: u32) -> Result<(), PfcError> {
        if self.pause_bytes == 0 {
            return Err(PfcError::ZeroPause);
        }
        if self.resume_bytes >= self.pause_bytes {
            return Err(PfcError::ResumeNotBelowPause {
                resume_bytes: self.resume_bytes,
                pause_bytes: self.pause_bytes,
            });
        }
        if self.headroom_bytes < mtu_bytes as u64 {
            return Err(PfcError::HeadroomBelowOnePacket { headroom_bytes: self.headroom_bytes, mtu_bytes });
        }
        Ok(())
    }

    /// What a link of `rate_bps` and one-way `delay` can deliver after the switch decides to
    /// pause: a round trip at line rate (XOFF travels up while data still travels down) plus
    /// two packets — one the upstream has just begun to send when XOFF arrives, one the switch
    /// is sending when it decides (htsim's `LosslessQueue` reasoning). HPCC's ns-3 runs give
    /// each port `3·rate·delay`.
    pub fn headroom_needed(rate_bps: f64, delay: Dur, mtu_bytes: u32) -> u64 {
        (2.0 * rate_bps / 8.0 * delay.as_secs_f64()).ceil() as u64 + 2 * mtu_bytes as u64
    }

    /// [`PfcParams::check`] and a headroom that covers a link of `rate_bps` and `delay`.
    pub fn check_for_link(&self, mtu_bytes: u32, rate_bps: f64, delay: Dur) -> Result<(), PfcError> {
        self.check(mtu_bytes)?;
        let needed_bytes = Self::headroom_needed(rate_bps, delay, mtu_bytes);
        if self.headroom_bytes < needed_bytes {
            return Err(PfcError::HeadroomBelowInFlight { headroom_bytes: self.headroom_bytes, needed_bytes });
        }
        Ok(())
    }
}

/// A frame to send to the upstream transmitter of this (port, priority).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PfcFrame {
    /// XOFF: stop sending this priority after the packet in flight.
    Pause,
    /// XON: go on.
    Resume,
}

/// The ingress bytes passed pause threshold plus headroom: the run was not lossless.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PfcOverflow {
    pub ingress_bytes: u64,
    pub limit_bytes: u64,
}

/// PFC state of one (ingress port, priority).
#[derive(Clone, Debug)]
pub struct PfcIngress {
    params: PfcParams,
    bytes: u64,
    paused_since: Option<Time>,
    paused_total: Dur,
    pause_frames: u64,
}

impl PfcIngress {
    /// Checked thresholds for packets of up to `mtu_bytes`.
    pub fn new(params: PfcParams, mtu_bytes: u32) -> Result<PfcIngress, PfcError> {
        params.check(mtu_bytes)?;
        Ok(PfcIngress { params, bytes: 0, paused_since: None, paused_total: Dur::ZERO, pause_frames: 0 })
    }

    /// A packet of `bytes` arrived through this port at `now`: XOFF if it took the count above
    /// the pause threshold; an overflow if it took it above pause plus headroom.
    pub fn on_arrival(&mut self, now: Time, bytes: u64) -> Result<Option<PfcFrame>, PfcOverflow> {
        self.bytes += bytes;
        let limit_bytes = self.params.pause_bytes + self.params.headroom_bytes;
        if self.bytes > limit_bytes {
            return Err(PfcOverflow { ingress_bytes: self.bytes, limit_bytes });
        }
        if self.paused_since.is_none() && self.bytes > self.params.pause_bytes {
            self.paused_since = Some(now);
            self.pause_frames += 1;
            return Ok(Some(PfcFrame::Pause));
        }
        Ok(None)
    }

    /// A packet of `bytes` that came in through this port left the switch at `now`: XON if the
    /// port was paused and the count fell to the resume threshold.
    pub fn on_departure(&mut self, now: Time, bytes: u64) -> Option<PfcFrame> {
        debug_assert!(bytes <= self.bytes, "released more than was charged");
        self.bytes = self.bytes.saturating_sub(bytes);
        match self.paused_since {
            Some(since) if self.bytes <= self.params.resume_bytes => {
                self.paused_total = self.paused_total + now.saturating_since(since);
                self.paused_since = None;
                Some(PfcFrame::Resume)
            }
            _ => None,
        }
    }

    /// Bytes charged to this port now.
    pub fn ingress_bytes(&self) -> u64 {
        self.bytes
    }

    /// Whether the upstream is (asked to be) paused.
    pub fn is_paused(&self) -> bool {
        self.paused_since.is_some()
    }

    /// Total time paused up to `now`, the open interval included.
    pub fn paused_time(&self, now: Time) -> Dur {
        self.paused_total + self.paused_since.map_or(Dur::ZERO, |s| now.saturating_since(s))
    }

    /// XOFF frames sent.
    pub fn pause_frames(&self) -> u64 {
        self.pause_frames
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(n: u64) -> Time {
        Time::from_ns(n * 1000)
    }

    #[test]
    fn thresholds_that_cannot_hold_are_named() {
        assert_eq!(PfcParams::default().check(1500), Ok(()));
        let p =
            |pause, resume, headroom| PfcParams { pause_bytes: pause, resume_bytes: resume, headroom_bytes: headroom };
        assert_eq!(p(0, 0, 1500).check(1500), Err(PfcError::ZeroPause));
        assert_eq!(
            p(10_000, 10_000, 1500).check(1500),
            Err(PfcError::ResumeNotBelowPause { resume_bytes: 10_000, pause_bytes: 10_000 })
        );
        assert_eq!(
            p(10_000, 5_000, 1499).check(1500),
            Err(PfcError::HeadroomBelowOnePacket { headroom_bytes: 1499, mtu_bytes: 1500 })
        );
        assert!(p(10_000, 12_000, 1500).check(1500).unwrap_err().to_string().contains("pfc.resume_bytes (12000)"));
        assert!(serde_json::from_str::<PfcParams>(r#"{"xoff": 1}"#).is_err());
    }

    // 100 Gbit/s, 1 us: a round trip at line rate is 2·12.5e9·1e-6 = 25,000 B, plus two 1,500 B
    // packets: 28,000 B. The default headroom (7,500 B) is too small for that link, and fits a
    // 10 Gbit/s link of 100 ns (250 + 3,000 = 3,250 B).
    #[test]
    fn headroom_against_the_link() {
        assert_eq!(PfcParams::headroom_needed(100e9, Dur::from_us(1), 1500), 28_000);
        assert_eq!(
            PfcParams::default().check_for_link(1500, 100e9, Dur::from_us(1)),
            Err(PfcError::HeadroomBelowInFlight { headroom_bytes: 7_500, needed_bytes: 28_000 })
        );
        assert_eq!(PfcParams::default().check_for_link(1500, 10e9, Dur::from_ns(100)), Ok(()));
    }

    // Default thresholds: XOFF above 22,500 B, XON at or below 18,000 B, limit 30,000 B.
    //   t (us)  event            bytes    frame
    //   0..14   15 arrivals      22,500   —        (not above the threshold)
    //   15      arrival          24,000   XOFF     paused from 15 us
    //   16      arrival          25,500   —        (in flight: headroom)
    //   20..23  4 departures     19,500   —
    //   24      departure        18,000   XON      paused 9 us
    //   30      arrival x 4      24,000   XOFF at the 4th
    //   30      arrival x 5      31,500   the 9th passes the 30,000 B limit: overflow
    #[test]
    fn pause_resume_and_overflow_through_a_burst() {
        let mut p = PfcIngress::new(PfcParams::default(), 1500).unwrap();
        for t in 0..15 {
            assert_eq!(p.on_arrival(us(t), 1500), Ok(None));
        }
        assert_eq!(p.ingress_bytes(), 22_500);
        assert_eq!(p.on_arrival(us(15), 1500), Ok(Some(PfcFrame::Pause)));
        assert_eq!(p.on_arrival(us(16), 1500), Ok(None), "one XOFF per pause");
        assert!(p.is_paused());
        for t in 20..24 {
            assert_eq!(p.on_departure(us(t), 1500), None);
        }
        assert_eq!(p.ingress_bytes(), 19_500);
        assert_eq!(p.paused_time(us(22)), Dur::from_us(7));
        assert_eq!(p.on_departure(us(24), 1500), Some(PfcFrame::Resume));
        assert_eq!(p.paused_time(us(100)), Dur::from_us(9));
        assert_eq!(p.pause_frames(), 1);
        let mut outcomes = Vec::new();
        for _ in 0..9 {
            outcomes.push(p.on_arrival(us(30), 1500));
        }
        assert_eq!(outcomes[3], Ok(Some(PfcFrame::Pause)));
        assert_eq!(outcomes[8], Err(PfcOverflow { ingress_bytes: 31_500, limit_bytes: 30_000 }));
        assert_eq!(p.pause_frames(), 2);
    }
}
