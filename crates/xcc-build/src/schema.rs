//! The result tables, declared once: every column's name, type, unit, meaning and whether it
//! may be undefined. The simulator and the emulator write exactly these columns (their tests
//! check it), Python reads them through `_native.table_schema()` to type the Parquet files, and
//! `docs/output-schema.md` documents them.

/// A column's type.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Dtype {
    I64,
    F64,
    Str,
}

impl Dtype {
    pub fn name(self) -> &'static str {
        match self {
            Dtype::I64 => "i64",
            Dtype::F64 => "f64",
            Dtype::Str => "str",
        }
    }
}

/// One column of a result table.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ColumnSpec {
    pub name: &'static str,
    pub dtype: Dtype,
    pub unit: &'static str,
    pub doc: &'static str,
    /// Undefined values (NaN in float columns; -1, or i64::MAX for an unset ssthresh, in
    /// integer columns) become nulls.
    pub nullable: bool,
}

const fn c(name: &'static str, dtype: Dtype, unit: &'static str, doc: &'static str) -> ColumnSpec {
    ColumnSpec { name, dtype, unit, doc, nullable: false }
}

/// A column whose undefined values become nulls.
const fn n(name: &'static str, dtype: Dtype, unit: &'static str, doc: &'static str) -> ColumnSpec {
    ColumnSpec { name, dtype, unit, doc, nullable: true }
}

use Dtype::{Str, F64, I64};

/// Every result table with its columns, in order.
pub const TABLES: &[(&str, &[ColumnSpec])] = &[
    (
        "flows",
        &[
            c("flow_id", I64, "", "flow index (0-based, in scenario order after expansion)"),
            c("name", Str, "", "flow name after `{i}` expansion"),
            c("kind", Str, "", "\"bulk\", \"cbr\", \"arrival\", \"request\" or \"response\""),
            c("src", Str, "", "source host"),
            c("dst", Str, "", "destination host"),
            c("cc", Str, "", "congestion control: the `cc` kind (\"newreno\", \"xcp\", ...); \"none\" for cbr"),
            c("start_s", F64, "s", "start time"),
            n("stop_s", F64, "s", "stop time; null when the flow has no stop"),
            n("size_bytes", I64, "B", "application bytes to send; null when unlimited"),
            c("bytes_sent", I64, "B", "payload bytes sent, retransmissions included"),
            c("bytes_delivered", I64, "B", "payload bytes delivered in order to the receiver"),
            c("goodput_bps", F64, "bit/s", "bytes_delivered * 8 / active time"),
            n("fct_s", F64, "s", "flow completion time; null if it did not complete"),
            c("packets_dropped", I64, "packets", "packets of this flow (data and ACKs) dropped or lost on links"),
            c("retransmits", I64, "packets", "retransmitted segments"),
            c("timeouts", I64, "", "retransmission timeouts"),
            c("fast_recoveries", I64, "", "fast retransmit / fast recovery episodes"),
            c("ecn_reductions", I64, "", "window reductions caused by ECN echoes"),
            c("ce_received", I64, "packets", "CE-marked data packets seen by the receiver"),
            n("min_rtt_s", F64, "s", "smallest RTT sample; null without samples"),
            n("srtt_s", F64, "s", "smoothed RTT (RFC 6298) at the end of the flow; null without samples"),
            n("window_capped", I64, "", "times the transport's window cap held a data packet back; null if not measured"),
            n("rto_overdue", I64, "", "RTOs passed with nothing acknowledged and no timer expiry (0 in a correct run)"),
        ],
    ),
    (
        "links",
        &[
            c("link_id", I64, "", "link direction index (one row per direction)"),
            c("name", Str, "", "the direction, \"a->b\""),
            c("src", Str, "", "transmitting node"),
            c("dst", Str, "", "receiving node"),
            c("rate_bps", F64, "bit/s", "capacity"),
            c("delay_s", F64, "s", "one-way propagation delay"),
            n("buffer_packets", I64, "packets", "buffer limit in packets; null if none"),
            n("buffer_bytes", I64, "B", "buffer limit in bytes; null if none"),
            c("algorithm", Str, "", "queue discipline: the `queue` kind (\"droptail\", \"xcp\", ...)"),
            c("packets_in", I64, "packets", "packets offered to the queue"),
            c("bytes_in", I64, "B", "wire bytes offered to the queue"),
            c("packets_out", I64, "packets", "packets transmitted"),
            c("bytes_out", I64, "B", "wire bytes transmitted (data and ACKs)"),
            c("drops", I64, "packets", "packets dropped (buffer overflow, AQM, random loss)"),
            c("marks", I64, "packets", "packets CE-marked"),
            c("mean_queue_bytes", F64, "B", "time-average queue length"),
            c("mean_queue_packets", F64, "packets", "time-average queue length"),
            c("max_queue_bytes", I64, "B", "largest queue length"),
            c("mean_queue_delay_s", F64, "s", "mean queueing delay of transmitted packets"),
            c("utilisation", F64, "", "bytes_out * 8 / (rate_bps * duration)"),
            c("data_bytes_out", I64, "B", "wire bytes of data packets transmitted (no ACKs)"),
        ],
    ),
    (
        "flow_series",
        &[
            c("time_s", F64, "s", "end of the sampling interval"),
            c("flow_id", I64, "", "flow index (joins flows.flow_id)"),
            c("rate_bps", F64, "bit/s", "delivery rate over the interval"),
            n("cwnd_bytes", I64, "B", "congestion window at the sample; null for cbr"),
            n("ssthresh_bytes", I64, "B", "slow-start threshold; null while unset (infinite)"),
            n("srtt_s", F64, "s", "smoothed RTT; null before the first sample"),
            n("bytes_in_flight", I64, "B", "sent but not yet acknowledged; null for cbr"),
            c("delivered_bytes", I64, "B", "cumulative payload bytes delivered"),
            n("pacing_rate_bps", F64, "bit/s", "the controller's pacing rate (wire bits); null when it does not pace"),
            n("cc_state", Str, "", "the controller's named state (BBR: STARTUP, DRAIN, PROBE_BW, PROBE_RTT); null for others"),
            n("pacing_gain", F64, "", "the controller's pacing gain (BBR's: its PROBE_BW phase 1.25, 0.75, 1); null for others"),
        ],
    ),
    (
        "link_series",
        &[
            c("time_s", F64, "s", "end of the sampling interval"),
            c("link_id", I64, "", "link direction index (joins links.link_id)"),
            c("rate_bps", F64, "bit/s", "transmitted rate over the interval"),
            c("utilisation", F64, "", "rate_bps / capacity"),
            c("queue_bytes", I64, "B", "queue length at the sample"),
            c("queue_packets", I64, "packets", "queue length at the sample"),
            c("drops", I64, "packets", "drops during the interval"),
            c("marks", I64, "packets", "CE marks during the interval"),
            n("gauge", F64, "", "algorithm state: RED's average queue (its unit); 0 for droptail"),
        ],
    ),
    (
        "transactions",
        &[
            c("txn_id", I64, "", "transaction index"),
            c("name", Str, "", "name of the [[transactions]] entry"),
            c("client", Str, "", "client host"),
            c("server", Str, "", "server host"),
            c("request_bytes", I64, "B", "request size"),
            c("response_bytes", I64, "B", "response size"),
            c("start_s", F64, "s", "time the client sends the request"),
            n("response_time_s", F64, "s", "the exchange's start (its request's first SYN, or first byte on an open connection) to the first response byte"),
            n("completion_time_s", F64, "s", "the exchange's start to the last response byte"),
        ],
    ),
];

/// Tables a run has only when it measures them, written only then: seed 004's error metrics of
/// a `[sessions]` run with a `sample_interval` (`crates/xcc-sim/src/sim/session_metrics.rs`);
/// the ports of a `[pfc]` run (`crates/xcc-sim/src/sim/pfc.rs`).
pub const OPTIONAL_TABLES: &[(&str, &[ColumnSpec])] = &[
    (
        "session_samples",
        &[
            c("time_s", F64, "s", "sample time (every `sample_interval`)"),
            c("present", I64, "", "sessions present (joined, not left, data still to send) at the sample"),
            c("rated", I64, "", "sessions E_s is computed on: present for the whole window, with a rate at their source"),
            n("es_mean", F64, "%", "E_s, mean over the rated sessions: rate from data delivered over `rate_window` (timed from the last delivery before the window to the last in it; over the data share) against the oracle's; null if none rated"),
            n("es_p10", F64, "%", "E_s, 10th percentile"),
            n("es_p90", F64, "%", "E_s, 90th percentile"),
            n("es_max_abs", F64, "%", "E_s, largest magnitude"),
            c("bottlenecks", I64, "", "links that bottleneck at least one session in the oracle's allocation"),
            n("ee_mean", F64, "%", "E_e, mean over those links: bits sent over the window (data and control) against capacity; null if none"),
            n("ee_p10", F64, "%", "E_e, 10th percentile"),
            n("ee_p90", F64, "%", "E_e, 90th percentile"),
            n("ee_max", F64, "%", "E_e, largest"),
            n("ee_in_mean", F64, "%", "offered E_e, mean over the same links: bits arriving at the link over the window against capacity (above 0 where the sessions are sent faster than it drains: overshoot)"),
            n("ee_in_p10", F64, "%", "offered E_e, 10th percentile"),
            n("ee_in_p90", F64, "%", "offered E_e, 90th percentile"),
            n("ee_in_max", F64, "%", "offered E_e, largest"),
            n("es_asg_mean", F64, "%", "E_s as seed 004 defines it: the rate *assigned* at the sample against the oracle's, mean over the present sessions with a rate; null if none"),
            n("es_asg_p10", F64, "%", "assigned E_s, 10th percentile"),
            n("es_asg_p90", F64, "%", "assigned E_s, 90th percentile"),
            n("ee_asg_mean", F64, "%", "E_e as seed 004 defines it: the sum of the rates assigned to the sessions crossing a bottleneck against its capacity, mean over the bottlenecks"),
            n("ee_asg_p10", F64, "%", "assigned E_e, 10th percentile"),
            n("ee_asg_p90", F64, "%", "assigned E_e, 90th percentile"),
            n("ee_asg_max", F64, "%", "assigned E_e, largest"),
            c("max_queue_bytes", I64, "B", "largest queue of any link since the previous sample"),
            c("max_queue_delay_s", F64, "s", "largest queue of any link since the previous sample, in seconds of its transmission"),
        ],
    ),
    (
        "session_rates",
        &[
            c("time_s", F64, "s", "the last sample's time"),
            c("flow_id", I64, "", "the session's flow index"),
            c("rate_bps", F64, "bit/s", "rate from data delivered over the window (timed from the last delivery before it to the last in it), over the data share"),
            c("maxmin_bps", F64, "bit/s", "the max-min oracle's rate for the session at the sample"),
            c("error_pct", F64, "%", "E_s of the session: (rate_bps - maxmin_bps) / maxmin_bps * 100"),
        ],
    ),
    (
        "pfc_ports",
        &[
            c("link_id", I64, "", "the link direction into the router (joins links.link_id)"),
            c("name", Str, "", "the direction, \"a->b\""),
            c("switch", Str, "", "the router whose ingress port it is"),
            c("pause_frames", I64, "frames", "XOFF frames the port sent up the link"),
            c("resume_frames", I64, "frames", "XON frames the port sent up the link"),
            c("switch_paused_s", F64, "s", "time the port asked for a pause (XOFF sent to XON sent)"),
            c("paused_s", F64, "s", "time the link's transmitter was paused (XOFF received to XON received)"),
            c("headroom_bytes", I64, "B", "the port's headroom above the pause threshold"),
        ],
    ),
];

/// The columns of table `name` (a per-run or an optional table).
pub fn columns(name: &str) -> Option<&'static [ColumnSpec]> {
    TABLES.iter().chain(OPTIONAL_TABLES).find(|(t, _)| *t == name).map(|(_, c)| *c)
}

/// The column names of table `name`, in order (empty for an unknown table).
pub fn names(name: &str) -> Vec<&'static str> {
    columns(name).map_or_else(Vec::new, |c| c.iter().map(|c| c.name).collect())
}

/// Checks that a driver wrote exactly the columns of table `name` (in any order; a table with no
/// rows may have no columns at all).
pub fn check_columns<'a>(name: &str, written: impl IntoIterator<Item = &'a str>) -> Result<(), String> {
    let mut got: Vec<&str> = written.into_iter().collect();
    if got.is_empty() {
        return Ok(());
    }
    let mut want = names(name);
    got.sort_unstable();
    want.sort_unstable();
    if got == want {
        Ok(())
    } else {
        let missing: Vec<_> = want.iter().filter(|w| !got.contains(w)).collect();
        let extra: Vec<_> = got.iter().filter(|g| !want.contains(g)).collect();
        Err(format!("table {name}: columns missing {missing:?}, not in the schema {extra:?}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_has_unique_column_names() {
        for (t, cols) in TABLES.iter().chain(OPTIONAL_TABLES) {
            let mut names: Vec<_> = cols.iter().map(|c| c.name).collect();
            names.sort_unstable();
            names.dedup();
            assert_eq!(names.len(), cols.len(), "table {t} names a column twice");
        }
    }

    #[test]
    fn check_columns_names_what_differs() {
        assert!(check_columns("transactions", names("transactions")).is_ok());
        assert!(check_columns("transactions", []).is_ok());
        let e = check_columns("transactions", ["txn_id", "bogus"]).unwrap_err();
        assert!(e.contains("bogus") && e.contains("completion_time_s"), "{e}");
    }
}
