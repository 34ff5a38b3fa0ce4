"""Column schemas of the result tables (see ``docs/output-schema.md``).

The native module returns each table as ``{column: list}``; this module fixes each column's
type so that every run writes the same Parquet schema, even when a table is empty. Undefined
values become nulls: floats the native side reports as NaN (in any float column, e.g.
``fct_s`` of an unfinished flow, ``stop_s`` of a flow without a stop) and ints it reports as
-1 for "unlimited" or "not applicable" (and ``i64::MAX`` for an unset ssthresh)
(``size_bytes``, ``buffer_packets``, ``buffer_bytes``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Column:
    name: str
    dtype: str  # "i64" | "f64" | "str"
    unit: str
    doc: str
    nullable: bool = False  # NaN (floats) or -1 (ints) in the native output become null


def _c(name: str, dtype: str, unit: str, doc: str, nullable: bool = False) -> Column:
    return Column(name, dtype, unit, doc, nullable)


TABLES: dict[str, tuple[Column, ...]] = {
    "flows": (
        _c("flow_id", "i64", "", "flow index (0-based, in scenario order after expansion)"),
        _c("name", "str", "", "flow name after `{i}` expansion"),
        _c("kind", "str", "", '"bulk", "cbr", "arrival", "request" or "response"'),
        _c("src", "str", "", "source host"),
        _c("dst", "str", "", "destination host"),
        _c(
            "cc",
            "str",
            "",
            'congestion control: the `cc` kind ("newreno", "xcp", ...); "none" for cbr',
        ),
        _c("start_s", "f64", "s", "start time"),
        _c("stop_s", "f64", "s", "stop time; null when the flow has no stop", True),
        _c("size_bytes", "i64", "B", "application bytes to send; null when unlimited", True),
        _c("bytes_sent", "i64", "B", "payload bytes sent, retransmissions included"),
        _c("bytes_delivered", "i64", "B", "payload bytes delivered in order to the receiver"),
        _c("goodput_bps", "f64", "bit/s", "bytes_delivered * 8 / active time"),
        _c("fct_s", "f64", "s", "flow completion time; null if it did not complete", True),
        _c(
            "packets_dropped",
            "i64",
            "packets",
            "packets of this flow (data and ACKs) dropped or lost on links",
        ),
        _c("retransmits", "i64", "packets", "retransmitted segments"),
        _c("timeouts", "i64", "", "retransmission timeouts"),
        _c("fast_recoveries", "i64", "", "fast retransmit / fast recovery episodes"),
        _c("ecn_reductions", "i64", "", "window reductions caused by ECN echoes"),
        _c("ce_received", "i64", "packets", "CE-marked data packets seen by the receiver"),
        _c("min_rtt_s", "f64", "s", "smallest RTT sample; null without samples", True),
        _c(
            "srtt_s",
            "f64",
            "s",
            "smoothed RTT (RFC 6298) at the end of the flow; null without samples",
            True,
        ),
        # Derived in Python (xcclab.references) from run.json's resolved scenario and the
        # series when a run is built or loaded; the simulator does not produce these.
        _c(
            "late_rate_bps",
            "f64",
            "bit/s",
            "payload delivery rate over the second half of the run; null without series",
            True,
        ),
        _c(
            "maxmin_bps",
            "f64",
            "bit/s",
            "max-min fair payload rate at the links' own utilisation targets; null outside"
            " the reference (sized, arrival and transaction flows, flows stopped early)",
            True,
        ),
        _c("maxmin_error", "f64", "", "late_rate_bps / maxmin_bps - 1", True),
        _c(
            "rate_window_s",
            "f64",
            "s",
            "window of the rates convergence_s is judged on: whole intervals, >= 4 srtt_s",
            True,
        ),
        _c(
            "convergence_s",
            "f64",
            "s",
            "from start until the windowed rate stays within 10 % of maxmin_bps (for at least"
            " one window before the end); null if never",
            True,
        ),
    ),
    "links": (
        _c("link_id", "i64", "", "link direction index (one row per direction)"),
        _c("name", "str", "", 'the direction, "a->b"'),
        _c("src", "str", "", "transmitting node"),
        _c("dst", "str", "", "receiving node"),
        _c("rate_bps", "f64", "bit/s", "capacity"),
        _c("delay_s", "f64", "s", "one-way propagation delay"),
        _c("buffer_packets", "i64", "packets", "buffer limit in packets; null if none", True),
        _c("buffer_bytes", "i64", "B", "buffer limit in bytes; null if none", True),
        _c("algorithm", "str", "", 'queue discipline: the `queue` kind ("droptail", "xcp", ...)'),
        _c("packets_in", "i64", "packets", "packets offered to the queue"),
        _c("bytes_in", "i64", "B", "wire bytes offered to the queue"),
        _c("packets_out", "i64", "packets", "packets transmitted"),
        _c("bytes_out", "i64", "B", "wire bytes transmitted (data and ACKs)"),
        _c("drops", "i64", "packets", "packets dropped (buffer overflow, AQM, random loss)"),
        _c("marks", "i64", "packets", "packets CE-marked"),
        _c("mean_queue_bytes", "f64", "B", "time-average queue length"),
        _c("mean_queue_packets", "f64", "packets", "time-average queue length"),
        _c("max_queue_bytes", "i64", "B", "largest queue length"),
        _c("mean_queue_delay_s", "f64", "s", "mean queueing delay of transmitted packets"),
        _c("utilisation", "f64", "", "bytes_out * 8 / (rate_bps * duration)"),
        _c("data_bytes_out", "i64", "B", "wire bytes of data packets transmitted (no ACKs)"),
    ),
    "flow_series": (
        _c("time_s", "f64", "s", "end of the sampling interval"),
        _c("flow_id", "i64", "", "flow index (joins flows.flow_id)"),
        _c("rate_bps", "f64", "bit/s", "delivery rate over the interval"),
        _c("cwnd_bytes", "i64", "B", "congestion window at the sample; null for cbr", True),
        _c("ssthresh_bytes", "i64", "B", "slow-start threshold; null while unset (infinite)", True),
        _c("srtt_s", "f64", "s", "smoothed RTT; null before the first sample", True),
        _c("bytes_in_flight", "i64", "B", "sent but not yet acknowledged; null for cbr", True),
        _c("delivered_bytes", "i64", "B", "cumulative payload bytes delivered"),
    ),
    "link_series": (
        _c("time_s", "f64", "s", "end of the sampling interval"),
        _c("link_id", "i64", "", "link direction index (joins links.link_id)"),
        _c("rate_bps", "f64", "bit/s", "transmitted rate over the interval"),
        _c("utilisation", "f64", "", "rate_bps / capacity"),
        _c("queue_bytes", "i64", "B", "queue length at the sample"),
        _c("queue_packets", "i64", "packets", "queue length at the sample"),
        _c("drops", "i64", "packets", "drops during the interval"),
        _c("marks", "i64", "packets", "CE marks during the interval"),
        _c(
            "gauge",
            "f64",
            "",
            "algorithm state: RED's average queue (its unit); 0 for droptail",
            True,
        ),
    ),
    "transactions": (
        _c("txn_id", "i64", "", "transaction index"),
        _c("name", "str", "", "name of the [[transactions]] entry"),
        _c("client", "str", "", "client host"),
        _c("server", "str", "", "server host"),
        _c("request_bytes", "i64", "B", "request size"),
        _c("response_bytes", "i64", "B", "response size"),
        _c("start_s", "f64", "s", "time the client sends the request"),
        _c("response_time_s", "f64", "s", "first request byte sent to first response byte", True),
        _c("completion_time_s", "f64", "s", "until the whole response arrived", True),
    ),
}

TABLE_NAMES: tuple[str, ...] = tuple(TABLES)
_I64_MAX = 2**63 - 1


def polars_dtype(dtype: str) -> Any:
    import polars as pl

    return {"i64": pl.Int64, "f64": pl.Float64, "str": pl.String}[dtype]


def to_frame(name: str, columns: dict[str, list[Any]] | None) -> Any:
    """Build the typed polars DataFrame of table ``name`` from the native ``{column: list}``.

    Known columns come first in schema order with their fixed type; columns the native side
    adds beyond the schema are kept after them (with inferred types) so nothing is lost.
    """
    import polars as pl

    columns = dict(columns or {})
    lengths = {len(v) for v in columns.values()}
    if len(lengths) > 1:
        raise ValueError(f"table {name}: columns have different lengths {sorted(lengths)}")
    n_rows = lengths.pop() if lengths else 0
    series = []
    for col in TABLES.get(name, ()):
        dtype = polars_dtype(col.dtype)
        values = columns.pop(col.name, None)
        if values is None:
            values = [None] * n_rows
        s = pl.Series(col.name, values, dtype=dtype, strict=False)
        if col.dtype == "f64":
            s = s.fill_nan(None)  # NaN is the native side's "undefined"
        elif col.nullable and col.dtype == "i64":
            # -1 means "unlimited"/"not applicable"; i64::MAX an unset (infinite) threshold
            unset = (s < 0) | (s == _I64_MAX)
            s = pl.select(pl.when(unset).then(None).otherwise(s).alias(col.name)).to_series()
        series.append(s)
    for extra, values in columns.items():  # forward compatible: keep unknown columns
        series.append(pl.Series(extra, values, strict=False))
    return pl.DataFrame(series)
