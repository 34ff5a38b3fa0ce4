//! What one run's flows and transactions came to, whichever stack carried them: filled in by
//! [`super::collect`], read by [`super::tables`].

/// Per-flow outcome, whichever stack carried it.
#[derive(Default, Clone)]
pub struct FlowOut {
    pub bytes_sent: u64,
    pub bytes_delivered: u64,
    pub fct_s: f64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub ce_received: u64,
    pub min_rtt_s: f64,
    pub srtt_s: f64,
    /// (time s, cumulative delivered bytes, srtt s or NaN)
    pub samples: Vec<(f64, u64, f64)>,
}

/// One transaction's outcome (seconds from its start; NaN where it did not happen).
pub struct TxnOut {
    pub group: usize,
    pub start_ns: u64,
    pub response_s: f64,
    pub completion_s: f64,
}

/// Cumulative bytes at time `t`, interpolated linearly between samples `(time, bytes, _)`.
pub fn bytes_at(samples: &[(f64, u64, f64)], t: f64) -> u64 {
    let i = samples.partition_point(|x| x.0 <= t);
    match (i.checked_sub(1).map(|k| samples[k]), samples.get(i)) {
        (None, _) => 0,
        (Some(a), None) => a.1,
        (Some(a), Some(b)) => a.1 + ((b.1 - a.1) as f64 * (t - a.0) / (b.0 - a.0).max(1e-12)) as u64,
    }
}
