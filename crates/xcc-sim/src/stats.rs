//! Summary statistics over one sample: mean and linear-interpolated percentiles.

/// Mean, 10th and 90th percentiles (numpy's default "linear" method); NaN when empty.
pub fn mean_p10_p90(v: &mut [f64]) -> (f64, f64, f64) {
    if v.is_empty() {
        return (f64::NAN, f64::NAN, f64::NAN);
    }
    v.sort_unstable_by(|a, b| a.total_cmp(b));
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    (mean, percentile_sorted(v, 10.0), percentile_sorted(v, 90.0))
}

/// Percentile `q` (0..100) of sorted data, linear between closest ranks.
pub fn percentile_sorted(v: &[f64], q: f64) -> f64 {
    let pos = q / 100.0 * (v.len() - 1) as f64;
    let (lo, frac) = (pos.floor() as usize, pos - pos.floor());
    if lo + 1 < v.len() {
        v[lo] + (v[lo + 1] - v[lo]) * frac
    } else {
        v[lo]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_numpy_linear() {
        // numpy.percentile([1..10], [10, 90]) = [1.9, 9.1]
        let mut v: Vec<f64> = (1..=10).rev().map(f64::from).collect();
        let (m, p10, p90) = mean_p10_p90(&mut v);
        assert_eq!(m, 5.5);
        assert!((p10 - 1.9).abs() < 1e-12 && (p90 - 9.1).abs() < 1e-12);
        assert!(mean_p10_p90(&mut []).0.is_nan());
    }
}
