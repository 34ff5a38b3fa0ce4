//! A flow-size distribution given as points of its CDF, linearly interpolated between them (the
//! form the HPCC artifacts ship: `traffic_gen/*_distribution.txt`, read by `custom_rand.py`).
//!
//! File format: `#` starts a comment line; blank lines are skipped; every other line is
//! `<size in bytes> <cumulative percent>`. The parser is strict, and says which line breaks
//! which rule: sizes finite, non-negative and strictly increasing; percents in [0, 100] and
//! never decreasing; the first percent 0 and the last 100; at least two points. (A flat stretch
//! of percent, sizes no flow has, is allowed; the artifact's own check forbids it, needlessly.)

use crate::rng::uniform01;
use rand_core::RngCore;

/// The WebSearch distribution (DCTCP paper), as the HPCC artifact ships it.
pub const WEBSEARCH: &str = include_str!("cdfs/websearch.cdf");
/// The FB_Hadoop distribution (Roy et al., SIGCOMM 2015), as the HPCC artifact ships it.
pub const FB_HADOOP: &str = include_str!("cdfs/fb_hadoop.cdf");

/// Why a text is not a flow-size CDF. Lines count from 1.
#[derive(Clone, Debug, PartialEq)]
pub enum CdfError {
    /// A line is not two numbers.
    NotTwoNumbers { line: usize, text: String },
    /// A size is negative, infinite or NaN.
    BadSize { line: usize, size: f64 },
    /// A percent is outside [0, 100] or NaN.
    PercentOutOfRange { line: usize, percent: f64 },
    /// A size is not larger than the one before.
    SizeNotIncreasing { line: usize, size: f64, previous: f64 },
    /// A percent is smaller than the one before.
    PercentDecreasing { line: usize, percent: f64, previous: f64 },
    /// Fewer than two points.
    TooFewPoints { points: usize },
    /// The first point's percent is not 0.
    FirstPercentNotZero { line: usize, percent: f64 },
    /// The last point's percent is not 100.
    LastPercentNotHundred { line: usize, percent: f64 },
}

impl core::fmt::Display for CdfError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            CdfError::NotTwoNumbers { line, text } => {
                write!(f, "line {line}: expected \"<size bytes> <cumulative percent>\", got {text:?}")
            }
            CdfError::BadSize { line, size } => write!(f, "line {line}: size {size} must be a finite number >= 0"),
            CdfError::PercentOutOfRange { line, percent } => {
                write!(f, "line {line}: percent {percent} must be in [0, 100]")
            }
            CdfError::SizeNotIncreasing { line, size, previous } => {
                write!(f, "line {line}: size {size} must be larger than the previous size {previous}")
            }
            CdfError::PercentDecreasing { line, percent, previous } => {
                write!(f, "line {line}: percent {percent} is below the previous {previous}: a CDF never decreases")
            }
            CdfError::TooFewPoints { points } => write!(f, "a CDF needs at least 2 points, got {points}"),
            CdfError::FirstPercentNotZero { line, percent } => {
                write!(f, "line {line}: the first point must be at 0 percent, got {percent}")
            }
            CdfError::LastPercentNotHundred { line, percent } => {
                write!(f, "line {line}: the last point must be at 100 percent, got {percent}")
            }
        }
    }
}
impl std::error::Error for CdfError {}

/// A checked flow-size CDF.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowSizeCdf {
    /// (size bytes, cumulative percent), sizes strictly increasing, percents 0 ... 100.
    points: Vec<(f64, f64)>,
}

impl FlowSizeCdf {
    /// Parses and checks a CDF in the artifact's text format.
    pub fn parse(text: &str) -> Result<FlowSizeCdf, CdfError> {
        let mut numbered = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let t = raw.trim();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            let fields: Vec<&str> = t.split_whitespace().collect();
            let nums = match fields[..] {
                [a, b] => a.parse::<f64>().ok().zip(b.parse::<f64>().ok()),
                _ => None,
            };
            let Some((size, percent)) = nums else {
                return Err(CdfError::NotTwoNumbers { line, text: raw.to_string() });
            };
            numbered.push((line, size, percent));
        }
        Self::from_numbered(&numbered)
    }

    /// Checks points given directly, `(size bytes, cumulative percent)`; errors number the
    /// points from 1 as lines.
    pub fn from_points(points: &[(f64, f64)]) -> Result<FlowSizeCdf, CdfError> {
        let numbered: Vec<_> = points.iter().enumerate().map(|(i, &(s, p))| (i + 1, s, p)).collect();
        Self::from_numbered(&numbered)
    }

    fn from_numbered(points: &[(usize, f64, f64)]) -> Result<FlowSizeCdf, CdfError> {
        let mut prev: Option<(f64, f64)> = None;
        for &(line, size, percent) in points {
            if !(size.is_finite() && size >= 0.0) {
                return Err(CdfError::BadSize { line, size });
            }
            if !(0.0..=100.0).contains(&percent) {
                return Err(CdfError::PercentOutOfRange { line, percent });
            }
            if let Some((ps, pp)) = prev {
                if size <= ps {
                    return Err(CdfError::SizeNotIncreasing { line, size, previous: ps });
                }
                if percent < pp {
                    return Err(CdfError::PercentDecreasing { line, percent, previous: pp });
                }
            }
            prev = Some((size, percent));
        }
        if points.len() < 2 {
            return Err(CdfError::TooFewPoints { points: points.len() });
        }
        let (first_line, _, first) = points[0];
        if first != 0.0 {
            return Err(CdfError::FirstPercentNotZero { line: first_line, percent: first });
        }
        let (last_line, _, last) = points[points.len() - 1];
        if last != 100.0 {
            return Err(CdfError::LastPercentNotHundred { line: last_line, percent: last });
        }
        Ok(FlowSizeCdf { points: points.iter().map(|&(_, s, p)| (s, p)).collect() })
    }

    /// The shipped WebSearch distribution.
    pub fn websearch() -> FlowSizeCdf {
        Self::parse(WEBSEARCH).expect("the shipped WebSearch CDF is a CDF (a test checks it)")
    }

    /// The shipped FB_Hadoop distribution.
    pub fn fb_hadoop() -> FlowSizeCdf {
        Self::parse(FB_HADOOP).expect("the shipped FB_Hadoop CDF is a CDF (a test checks it)")
    }

    /// The points, `(size bytes, cumulative percent)`.
    pub fn points(&self) -> &[(f64, f64)] {
        &self.points
    }

    /// Mean size in bytes of the interpolated distribution: each segment holds its share of
    /// flows spread evenly between its two sizes.
    pub fn mean_bytes(&self) -> f64 {
        self.points.windows(2).map(|w| (w[0].0 + w[1].0) / 2.0 * (w[1].1 - w[0].1)).sum::<f64>() / 100.0
    }

    /// The size at cumulative `percent` in [0, 100) (the inverse CDF, interpolated).
    pub fn size_at_percent(&self, percent: f64) -> f64 {
        // The first point strictly above `percent` ends a segment of positive height.
        let i = self.points.iter().position(|&(_, p)| p > percent).unwrap_or(self.points.len() - 1).max(1);
        let (x0, y0) = self.points[i - 1];
        let (x1, y1) = self.points[i];
        if y1 <= y0 {
            return x1;
        }
        x0 + (x1 - x0) * (percent - y0) / (y1 - y0)
    }

    /// One flow size in whole bytes: the interpolated size at a uniform percent, truncated and
    /// at least 1 (the artifact's `traffic_gen.py` does the same).
    pub fn sample(&self, rng: &mut impl RngCore) -> u64 {
        let x = self.size_at_percent(uniform01(rng) * 100.0);
        (x as u64).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::component_rng;

    #[test]
    fn the_shipped_distributions_parse_with_their_documented_means() {
        let ws = FlowSizeCdf::websearch();
        assert_eq!(ws.points().len(), 12);
        assert_eq!(ws.points()[6], (200_000.0, 60.0));
        assert_eq!(ws.mean_bytes(), 1_711_250.0);
        let fb = FlowSizeCdf::fb_hadoop();
        assert_eq!(fb.points().len(), 20);
        assert_eq!(fb.mean_bytes(), 120_420.75);
        // Each header states its source and the mean the test checks.
        assert!(WEBSEARCH.contains("DCTCP") && WEBSEARCH.contains("1,711,250"));
        assert!(FB_HADOOP.contains("Roy et al.") && FB_HADOOP.contains("120,420.75"));
    }

    // WebSearch: 15 % at 10 KB, 20 % at 20 KB, so 17.5 % is 15 KB; 0 % is 0 B; 99 % lies
    // between 10 MB (97 %) and 30 MB (100 %): 10 MB + 20 MB·2/3.
    #[test]
    fn inverse_cdf_interpolates() {
        let ws = FlowSizeCdf::websearch();
        assert_eq!(ws.size_at_percent(0.0), 0.0);
        assert_eq!(ws.size_at_percent(15.0), 10_000.0);
        assert_eq!(ws.size_at_percent(17.5), 15_000.0);
        assert!((ws.size_at_percent(99.0) - (10e6 + 20e6 * 2.0 / 3.0)).abs() < 1e-6);
        // A flat stretch (no flow between 2 and 3 KB) is skipped.
        let flat = FlowSizeCdf::from_points(&[(0.0, 0.0), (2000.0, 50.0), (3000.0, 50.0), (4000.0, 100.0)]).unwrap();
        assert_eq!(flat.size_at_percent(50.0), 3000.0);
        assert_eq!(flat.size_at_percent(75.0), 3500.0);
        assert_eq!(flat.mean_bytes(), 0.5 * 1000.0 + 0.5 * 3500.0);
    }

    // 200,000 draws: the empirical CDF at every point of FB_Hadoop within 0.5 percentage
    // points (the standard error of a proportion here is at most 0.11 points).
    #[test]
    fn samples_follow_the_distribution() {
        let fb = FlowSizeCdf::fb_hadoop();
        let mut rng = component_rng(7, 0, 0);
        let n = 200_000;
        let mut sizes: Vec<u64> = (0..n).map(|_| fb.sample(&mut rng)).collect();
        sizes.sort_unstable();
        for &(x, p) in fb.points() {
            let below = sizes.partition_point(|&s| (s as f64) <= x) as f64 / n as f64 * 100.0;
            assert!((below - p).abs() < 0.5, "at {x} B: {below:.3} % of samples, CDF says {p} %");
        }
        assert!(sizes[0] >= 1);
    }

    #[test]
    fn a_text_that_is_not_a_cdf_is_refused_by_name() {
        use CdfError::*;
        let e = |t: &str| FlowSizeCdf::parse(t).unwrap_err();
        assert_eq!(e("0 0\n10 x\n"), NotTwoNumbers { line: 2, text: "10 x".into() });
        assert_eq!(e("0 0 0\n"), NotTwoNumbers { line: 1, text: "0 0 0".into() });
        assert_eq!(e("# c\n-1 0\n"), BadSize { line: 2, size: -1.0 });
        assert_eq!(e("0 0\ninf 100\n"), BadSize { line: 2, size: f64::INFINITY });
        assert_eq!(e("0 0\n10 101\n"), PercentOutOfRange { line: 2, percent: 101.0 });
        assert_eq!(e("0 0\n10 50\n10 100\n"), SizeNotIncreasing { line: 3, size: 10.0, previous: 10.0 });
        assert_eq!(e("0 0\n10 50\n20 40\n30 100\n"), PercentDecreasing { line: 3, percent: 40.0, previous: 50.0 });
        assert_eq!(e("# only a comment\n"), TooFewPoints { points: 0 });
        assert_eq!(e("0 0\n"), TooFewPoints { points: 1 });
        assert_eq!(e("0 5\n10 100\n"), FirstPercentNotZero { line: 1, percent: 5.0 });
        assert_eq!(e("\n0 0\n\n10 99\n"), LastPercentNotHundred { line: 4, percent: 99.0 });
        assert!(e("0 0\n10 50\n20 40\n").to_string().contains("line 3"));
    }
}
