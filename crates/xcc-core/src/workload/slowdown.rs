//! FCT slowdown as the HPCC paper reports it (Figure 11): a flow's completion time over the
//! time it would take alone on an empty network, by flow-size bin at p50, p95 and p99.
//!
//! The ideal ("standalone") FCT is the HPCC artifact's (`scratch/third.cc`, `qp_finish` and
//! `CalculateRoute`):
//!
//! ```text
//! base RTT   = 2·Σ delay_i + Σ payload·8/rate_i          (one packet serialised at every hop)
//! wire bytes = size + ⌈size/payload⌉·header              (the headers every packet carries, INT excluded)
//! ideal FCT  = base RTT + wire bytes·8 / min_i rate_i
//! ```
//!
//! in whole nanoseconds, each division rounded down as the artifact's integer arithmetic does.
//! Slowdown = FCT / ideal FCT, at least 1. Bins (`analysis/fct_analysis.py`): flows sorted by
//! size and cut into equal-count bins of `step` percent; each bin reports its largest size and
//! the slowdown at p50, p95, p99 as the element at index ⌊n·p⌋ of its sorted slowdowns.

use crate::time::Dur;

/// One link of a flow's path: its rate and one-way propagation delay.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PathHop {
    pub rate_bps: u64,
    pub delay: Dur,
}

/// Why an ideal FCT or a binning cannot be computed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SlowdownError {
    /// A path needs at least one link.
    EmptyPath,
    /// Link `hop` of the path has rate 0.
    ZeroRate { hop: usize },
    /// Packets must carry at least one byte of payload.
    ZeroPayload,
    /// The bin step must divide 100 into whole bins: 1 to 100 percent.
    BadStep { step_percent: u32 },
}

impl core::fmt::Display for SlowdownError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            SlowdownError::EmptyPath => write!(f, "a flow's path needs at least one link"),
            SlowdownError::ZeroRate { hop } => write!(f, "link {hop} of the path has rate 0"),
            SlowdownError::ZeroPayload => write!(f, "the payload per packet must be at least 1 byte"),
            SlowdownError::BadStep { step_percent } => {
                write!(f, "bin step {step_percent} % must be between 1 and 100")
            }
        }
    }
}
impl std::error::Error for SlowdownError {}

/// The base RTT of `path` with `payload_bytes` per packet.
pub fn base_rtt(path: &[PathHop], payload_bytes: u32) -> Result<Dur, SlowdownError> {
    check_path(path, payload_bytes)?;
    let mut ns = 0u64;
    for hop in path {
        ns += 2 * hop.delay.as_ns() + payload_bytes as u64 * 8_000_000_000 / hop.rate_bps;
    }
    Ok(Dur::from_ns(ns))
}

/// The ideal FCT of a flow of `size_bytes` on `path`, packets of `payload_bytes` payload and
/// `header_bytes` of headers.
pub fn ideal_fct(
    size_bytes: u64,
    path: &[PathHop],
    payload_bytes: u32,
    header_bytes: u32,
) -> Result<Dur, SlowdownError> {
    let rtt = base_rtt(path, payload_bytes)?;
    let packets = size_bytes.div_ceil(payload_bytes as u64).max(1);
    let wire = size_bytes + packets * header_bytes as u64;
    let bottleneck = path.iter().map(|h| h.rate_bps).min().expect("checked non-empty");
    Ok(rtt + Dur::from_ns(wire * 8_000_000_000 / bottleneck))
}

fn check_path(path: &[PathHop], payload_bytes: u32) -> Result<(), SlowdownError> {
    if path.is_empty() {
        return Err(SlowdownError::EmptyPath);
    }
    if let Some(hop) = path.iter().position(|h| h.rate_bps == 0) {
        return Err(SlowdownError::ZeroRate { hop });
    }
    if payload_bytes == 0 {
        return Err(SlowdownError::ZeroPayload);
    }
    Ok(())
}

/// FCT over ideal FCT, at least 1 (a flow cannot beat an empty network; rounding can make it
/// look so).
pub fn slowdown(fct: Dur, ideal: Dur) -> f64 {
    (fct.as_ns() as f64 / ideal.as_ns().max(1) as f64).max(1.0)
}

/// One size bin of the slowdown figure.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct SlowdownBin {
    /// The largest flow size in the bin, in bytes (the figure's x axis).
    pub max_size_bytes: u64,
    pub flows: usize,
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
}

/// Slowdown by size bin: `flows` are (size bytes, slowdown); bins of `step_percent` of the
/// flows each, smallest sizes first. Empty bins (fewer flows than bins) are left out.
pub fn slowdown_by_size(flows: &[(u64, f64)], step_percent: u32) -> Result<Vec<SlowdownBin>, SlowdownError> {
    if !(1..=100).contains(&step_percent) {
        return Err(SlowdownError::BadStep { step_percent });
    }
    let mut sorted = flows.to_vec();
    sorted.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let n = sorted.len();
    let mut bins = Vec::new();
    let mut lo_pct = 0;
    while lo_pct < 100 {
        let hi_pct = (lo_pct + step_percent).min(100);
        let (l, r) = (lo_pct as usize * n / 100, hi_pct as usize * n / 100);
        lo_pct = hi_pct;
        if l >= r {
            continue;
        }
        let mut s: Vec<f64> = sorted[l..r].iter().map(|f| f.1).collect();
        s.sort_by(f64::total_cmp);
        let at = |p: f64| s[((s.len() as f64 * p) as usize).min(s.len() - 1)];
        bins.push(SlowdownBin {
            max_size_bytes: sorted[r - 1].0,
            flows: r - l,
            p50: at(0.5),
            p95: at(0.95),
            p99: at(0.99),
        });
    }
    Ok(bins)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Host - ToR - host at 100 Gbit/s, 1 us per link.
    fn two_links() -> [PathHop; 2] {
        [PathHop { rate_bps: 100_000_000_000, delay: Dur::from_us(1) }; 2]
    }

    // Base RTT = 2·(1 + 1) us + 2·(1000 B·8/100 Gbit/s = 80 ns) = 4,160 ns.
    // A 10,000 B flow in 1000 B packets with 48 B of headers: 10 packets, 10,480 B on the wire,
    // 838.4 ns at 100 Gbit/s, rounded down: ideal FCT = 4,160 + 838 = 4,998 ns.
    // One byte: 1 packet, 49 B, 3.92 ns → 3: 4,163 ns.
    #[test]
    fn ideal_fct_as_the_artifact_computes_it() {
        assert_eq!(base_rtt(&two_links(), 1000), Ok(Dur::from_ns(4_160)));
        assert_eq!(ideal_fct(10_000, &two_links(), 1000, 48), Ok(Dur::from_ns(4_998)));
        assert_eq!(ideal_fct(1, &two_links(), 1000, 48), Ok(Dur::from_ns(4_163)));
        // The slowest link sets the serialisation: a 25 Gbit/s host link, 10,480 B·8/25 G = 3,353.6 ns;
        // base RTT = 4,000 + 320 + 80 = 4,400 ns.
        let mixed = [PathHop { rate_bps: 25_000_000_000, delay: Dur::from_us(1) }, two_links()[0]];
        assert_eq!(ideal_fct(10_000, &mixed, 1000, 48), Ok(Dur::from_ns(4_400 + 3_353)));
    }

    #[test]
    fn bad_paths_are_named() {
        assert_eq!(base_rtt(&[], 1000), Err(SlowdownError::EmptyPath));
        let zero = [two_links()[0], PathHop { rate_bps: 0, delay: Dur::ZERO }];
        assert_eq!(ideal_fct(1, &zero, 1000, 0), Err(SlowdownError::ZeroRate { hop: 1 }));
        assert_eq!(base_rtt(&two_links(), 0), Err(SlowdownError::ZeroPayload));
        assert_eq!(slowdown_by_size(&[], 0), Err(SlowdownError::BadStep { step_percent: 0 }));
    }

    #[test]
    fn slowdown_is_at_least_one() {
        assert_eq!(slowdown(Dur::from_ns(9_996), Dur::from_ns(4_998)), 2.0);
        assert_eq!(slowdown(Dur::from_ns(4_000), Dur::from_ns(4_998)), 1.0);
    }

    // 200 flows: sizes 1..=200 B, slowdown = 1 + size/100 for the first 100 and 10 for the
    // rest. Bins of 50 %: flows 1-100 (slowdowns 1.01 ... 2.00: p50 = s[50] = 1.51, p95 =
    // s[95] = 1.96, p99 = s[99] = 2.00) and flows 101-200 (all 10).
    #[test]
    fn bins_by_size_with_the_artifacts_percentile_index() {
        let flows: Vec<(u64, f64)> =
            (1..=200u64).rev().map(|s| (s, if s <= 100 { 1.0 + s as f64 / 100.0 } else { 10.0 })).collect();
        let bins = slowdown_by_size(&flows, 50).unwrap();
        assert_eq!(bins.len(), 2);
        assert_eq!((bins[0].max_size_bytes, bins[0].flows), (100, 100));
        assert_eq!((bins[0].p50, bins[0].p95, bins[0].p99), (1.51, 1.96, 2.0));
        assert_eq!((bins[1].max_size_bytes, bins[1].flows, bins[1].p50, bins[1].p99), (200, 100, 10.0, 10.0));
        // 20 bins of 5 % (the artifact's default) of 200 flows: 10 flows each.
        let bins = slowdown_by_size(&flows, 5).unwrap();
        assert_eq!(bins.len(), 20);
        assert!(bins.iter().all(|b| b.flows == 10));
        assert_eq!(bins[0].max_size_bytes, 10);
        // Fewer flows than bins: empty bins are left out, no flow is lost.
        let few = slowdown_by_size(&flows[..3], 5).unwrap();
        assert_eq!(few.iter().map(|b| b.flows).sum::<usize>(), 3);
    }
}
