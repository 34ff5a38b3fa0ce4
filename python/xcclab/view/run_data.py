"""A run directory as the data of its page: the drawing, the frames of the time slider, each
link's and flow's series (downsampled, :mod:`.downsample`) and the summary tables.

Limits (stated in docs/view.md): the slider has at most ``budget.frames`` frames; each link's
and flow's series at most ``budget.points`` points, fewer when the run has many links and
flows (the series share ``budget.values`` numbers); tables list at most ``budget.rows`` rows,
the busiest first, and say how many there are. A series has at least ``MIN_POINTS`` points, so
when the links and flows are too many for the budget only the busiest links (highest peak
utilisation, then drops) and the first flows keep a series, and the page says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..plot import flows_with_window
from ..results import RunResult
from ..run_title import run_title
from . import downsample, topology
from .encode import f32, u8
from .gauges import gauge_of
from .tables import table


@dataclass(frozen=True)
class Budget:
    """How much of a run goes into a page."""

    frames: int = 240  # slider frames
    points: int = 2000  # points per series, at most
    values: int = 1_500_000  # numbers over all series of the run
    rows: int = 500  # rows per summary table


#: For a page of one run or a compare.
DEFAULT = Budget()
#: For a page that holds many runs (the reproduction index).
SMALL = Budget(frames=120, points=400, values=150_000, rows=50)

#: Utilisation 0..1.275 is stored as 0..255 (200 = fully used), a queue as its fraction of the
#: buffer (or of the link's largest queue, without a buffer limit) times 255.
UTIL_SCALE = 200


def run_data(run: RunResult, budget: Budget = DEFAULT, label: str | None = None) -> dict:
    """The page data of one run (see the module doc)."""
    import polars as pl

    sc = run.scenario
    links, ls, fs = run.links, run.link_series, run.flow_series
    hosts = {n["name"] for n in sc.get("nodes", []) if n.get("kind") == "host"}
    peaks = _peaks(links, ls)
    topo = topology.build(links, hosts, peaks)
    link_rows = {r["link_id"]: r for r in links.iter_rows(named=True)}

    n_flows = fs.select(pl.col("flow_id").n_unique()).item() if fs.height else 0
    keep_links = _busiest(peaks, budget.values // (2 * 5 * MIN_POINTS))
    keep_flows = budget.values // (2 * 4 * MIN_POINTS)
    n_series = len(keep_links) * 5 + min(n_flows, keep_flows) * 4
    points = max(MIN_POINTS, min(budget.points, budget.values // max(1, n_series)))
    data: dict[str, Any] = {
        "label": label or "run",
        "title": run_title(run),
        "notes": list(topo.notes),
        "interval_s": sc.get("metrics", {}).get("interval_ns", 0) * 1e-9,
        "duration_s": sc.get("duration_ns", 0) * 1e-9,
    }
    data["nodes"] = [{"id": n, **v} for n, v in sorted(topo.nodes.items())]
    data["links"] = [_drawn(dl, link_rows) for dl in topo.links]
    data["frames"] = _frames(ls, links, topo.links, budget.frames)
    data["link_series"], ls_note = _link_series(ls, links, points, keep_links)
    data["flow_series"], fs_note = _flow_series(run, points, keep_flows)
    data["notes"] += [n for n in (ls_note, fs_note) if n]
    if len(keep_links) < links.height:
        data["notes"].append(
            f"series kept for the {len(keep_links)} busiest of {links.height} links "
            "(highest peak utilisation, then drops)"
        )
    if n_flows > keep_flows:
        data["notes"].append(f"series kept for the first {keep_flows} of {n_flows} flows")
    data["tables"] = _tables(run, budget.rows)
    data["sessions"] = _sessions(run, points)
    return data


#: The fewest points a kept series has: below it a series says little.
MIN_POINTS = 50


def _busiest(peaks: dict[int, tuple[float, float]], cap: int) -> list[int]:
    """The ``cap`` links with the highest peak utilisation, then the most drops (all of them
    when there are fewer), in link order."""
    if len(peaks) <= cap:
        return sorted(peaks)
    ranked = sorted(peaks, key=lambda i: (-peaks[i][0], -peaks[i][1], i))
    return sorted(ranked[:cap])


def _peaks(links: Any, ls: Any) -> dict[int, tuple[float, float]]:
    """link_id -> (peak utilisation, drops): from the series, else the summary."""
    import polars as pl

    if ls.height:
        peak = dict(ls.group_by("link_id").agg(pl.col("utilisation").max()).rows())
    else:
        peak = dict(zip(links["link_id"].to_list(), links["utilisation"].to_list()))
    drops = dict(zip(links["link_id"].to_list(), links["drops"].to_list()))
    return {i: (peak.get(i) or 0.0, drops.get(i) or 0) for i in links["link_id"].to_list()}


def _drawn(dl: topology.DrawnLink, rows: dict[int, dict[str, Any]]) -> dict[str, Any]:
    first = rows[dl.members[0]]
    g = gauge_of(first["algorithm"])
    return {
        "name": dl.name,
        "src": dl.src,
        "dst": dl.dst,
        "members": dl.members,
        "rate_bps": first["rate_bps"],
        "delay_s": first["delay_s"],
        "algorithm": first["algorithm"],
        "explicit": bool(g and g["explicit"]),
    }


def _matrix(ls: Any, column: str, ids: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """(times, values[time, link]) of one link_series column, links in ``ids`` order.

    A run samples every link at every time, so the table sorted by (time, link) is the matrix
    itself; a pivot (slower) covers any table that is not complete."""
    import polars as pl

    n_t = ls["time_s"].n_unique()
    if ls.height == n_t * len(ids) and ls["link_id"].n_unique() == len(ids):
        order = {lid: k for k, lid in enumerate(ids)}
        key = pl.col("link_id").replace_strict(order, return_dtype=pl.Int64)
        grid = ls.select("time_s", key.alias("k"), pl.col(column).cast(pl.Float64)).sort(
            "time_s", "k"
        )
        t = grid["time_s"].to_numpy()[:: len(ids)]
        return t, grid[column].to_numpy().reshape(n_t, len(ids))
    wide = ls.pivot(on="link_id", index="time_s", values=column).sort("time_s")
    t = wide["time_s"].to_numpy()
    cols = []
    for i in ids:
        name = str(i)
        cols.append(
            wide[name].cast(pl.Float64).to_numpy() if name in wide.columns else np.full(len(t), 0.0)
        )
    return t, np.column_stack(cols) if cols else np.zeros((len(t), 0))


def _frames(ls: Any, links: Any, drawn: list[topology.DrawnLink], limit: int) -> dict | None:
    """The slider's frames: each drawn link's utilisation and queue fill per frame (a group
    link takes its busiest member)."""
    if ls.height == 0 or not drawn:
        return None
    ids = links["link_id"].to_list()
    col = {lid: k for k, lid in enumerate(ids)}
    t, util = _matrix(ls, "utilisation", ids)
    fill = _queue_fill(ls, links, ids)
    size = downsample.bucket_size(len(t), limit)
    util = downsample.reduce(util, size, "mean")
    fill = downsample.reduce(fill, size, "max")
    util_u8 = np.zeros((util.shape[0], len(drawn)), dtype=np.uint8)
    fill_u8 = np.zeros_like(util_u8)
    for j, dl in enumerate(drawn):
        ks = [col[m] for m in dl.members]
        u = np.nan_to_num(np.nanmax(util[:, ks], axis=1) if len(ks) > 1 else util[:, ks[0]])
        q = np.nan_to_num(np.nanmax(fill[:, ks], axis=1) if len(ks) > 1 else fill[:, ks[0]])
        util_u8[:, j] = np.clip(np.round(u * UTIL_SCALE), 0, 255)
        fill_u8[:, j] = np.clip(np.round(q * 255), 0, 255)
    return {
        "t": [round(x, 6) for x in downsample.times(t, size).tolist()],
        "util": u8(util_u8.ravel()),
        "queue": u8(fill_u8.ravel()),
        "util_scale": UTIL_SCALE,
        "bucket": size,
    }


def _queue_fill(ls: Any, links: Any, ids: list[int]) -> np.ndarray:
    """Each link's queue as a fraction of its buffer (bytes or packets, as the buffer is
    given), or of its own largest queue when the buffer is unlimited."""
    _, q_bytes = _matrix(ls, "queue_bytes", ids)
    _, q_packets = _matrix(ls, "queue_packets", ids)
    fill = np.zeros_like(q_bytes)
    buffers = dict(
        zip(links["link_id"].to_list(), links.select("buffer_bytes", "buffer_packets").rows())
    )
    for k, lid in enumerate(ids):
        by_bytes, by_packets = buffers[lid]
        if by_bytes:
            fill[:, k] = q_bytes[:, k] / by_bytes
        elif by_packets:
            fill[:, k] = q_packets[:, k] / by_packets
        else:
            peak = np.nanmax(q_bytes[:, k]) if len(q_bytes) else 0.0
            fill[:, k] = q_bytes[:, k] / peak if peak > 0 else 0.0
    return np.clip(np.nan_to_num(fill), 0.0, 1.0)


def _link_series(
    ls: Any, links: Any, points: int, keep: list[int]
) -> tuple[dict | None, str | None]:
    import polars as pl

    if ls.height == 0:
        return None, None
    ids = keep
    if len(ids) < links.height:
        ls = ls.filter(pl.col("link_id").is_in(ids))
    out: dict[str, Any] = {"links": {}}
    t = None
    size = 1
    for column, how in (
        ("utilisation", "mean"),
        ("queue_bytes", "max"),
        ("drops", "sum"),
        ("marks", "sum"),
        ("gauge", "mean"),
    ):
        t, m = _matrix(ls, column, ids)
        size = downsample.bucket_size(len(t), points)
        m = downsample.reduce(m, size, how)
        for k, lid in enumerate(ids):
            out["links"].setdefault(str(lid), {})[column] = f32(m[:, k])
    out["t"] = f32(downsample.times(t, size))
    out["bucket"] = size
    kept = set(ids)
    all_ids = links["link_id"].to_list()
    algos = {i: a for i, a in zip(all_ids, links["algorithm"].to_list()) if i in kept}
    out["gauges"] = {str(i): gauge_of(a) for i, a in algos.items() if gauge_of(a)}
    out["names"] = {str(i): n for i, n in zip(all_ids, links["name"].to_list()) if i in kept}
    note = (
        f"link series: {len(t)} samples per link shown as {math.ceil(len(t) / size)} "
        f"(mean utilisation, largest queue, summed drops/marks over {size} samples)"
        if size > 1
        else None
    )
    return out, note


def _flow_series(run: RunResult, points: int, keep: int) -> tuple[dict | None, str | None]:
    import polars as pl

    fs = run.flow_series
    if fs.height == 0:
        return None, None
    first = fs.select(pl.col("flow_id").unique().sort().head(keep)).to_series()
    fs = fs.filter(pl.col("flow_id").is_in(first))
    windowed = flows_with_window(fs)
    refs = dict(zip(run.flows["flow_id"].to_list(), run.flows["maxmin_bps"].to_list()))
    out: dict[str, Any] = {"flows": {}}
    biggest = 1
    for (fid,), sub in fs.sort("time_s").group_by(["flow_id"], maintain_order=True):
        t = sub["time_s"].to_numpy()
        size = downsample.bucket_size(len(t), points)
        biggest = max(biggest, size)
        entry = {
            "t": f32(downsample.times(t, size)),
            "rate_bps": f32(downsample.reduce(sub["rate_bps"].to_numpy(), size, "mean")),
            "srtt_s": f32(
                downsample.reduce(sub["srtt_s"].cast(pl.Float64).to_numpy(), size, "mean")
            ),
            "maxmin_bps": refs.get(fid),
        }
        if fid in windowed:
            cwnd = sub["cwnd_bytes"].cast(pl.Float64).to_numpy()
            entry["cwnd_bytes"] = f32(downsample.reduce(cwnd, size, "last"))
        out["flows"][str(fid)] = entry
    note = (
        f"flow series: up to {biggest} samples per point (mean rate and RTT; the window as "
        "sampled at each point's end, so a sawtooth is not smoothed into a curve)"
        if biggest > 1
        else None
    )
    return out, note


FLOW_COLUMNS = [
    ("flow_id", "id"),
    ("name", "flow"),
    ("src", "src"),
    ("dst", "dst"),
    ("cc", "cc"),
    ("goodput_bps", "goodput (bit/s)"),
    ("maxmin_bps", "max-min (bit/s)"),
    ("maxmin_error", "error vs max-min"),
    ("convergence_s", "convergence (s)"),
    ("fct_s", "FCT (s)"),
    ("min_rtt_s", "min RTT (s)"),
    ("packets_dropped", "dropped"),
    ("retransmits", "retransmits"),
]
LINK_COLUMNS = [
    ("link_id", "id"),
    ("name", "link"),
    ("algorithm", "queue"),
    ("rate_bps", "rate (bit/s)"),
    ("delay_s", "delay (s)"),
    ("utilisation", "utilisation"),
    ("mean_queue_packets", "mean queue (pkt)"),
    ("max_queue_bytes", "max queue (B)"),
    ("mean_queue_delay_s", "mean queue delay (s)"),
    ("drops", "drops"),
    ("marks", "marks"),
]


def _tables(run: RunResult, rows: int) -> list[dict[str, Any]]:
    return [
        table("flows", run.flows, FLOW_COLUMNS, rows, sort_by="goodput_bps", kind="flow"),
        table("links", run.links, LINK_COLUMNS, rows, sort_by="utilisation", kind="link"),
    ]


def _sessions(run: RunResult, points: int) -> dict[str, Any] | None:
    """A [sessions] run's error metrics over time and the last sample's per-session errors
    summarised as quantiles (a run may hold 180,000 sessions)."""
    samples = run.tables.get("session_samples")
    if samples is None or samples.height == 0:
        return None
    t = samples["time_s"].to_numpy()
    size = downsample.bucket_size(len(t), points)
    cols = [c for c in samples.columns if c != "time_s"]
    out: dict[str, Any] = {"t": f32(downsample.times(t, size)), "series": {}}
    for c in cols:
        out["series"][c] = f32(downsample.reduce(samples[c].cast(float).to_numpy(), size, "last"))
    rates = run.tables.get("session_rates")
    if rates is not None and rates.height:
        err = np.sort(rates["error_pct"].to_numpy())
        qs = (0.01, 0.1, 0.5, 0.9, 0.99)
        out["error_quantiles"] = {
            "n": int(len(err)),
            "q": [[q, float(err[min(len(err) - 1, int(q * len(err)))])] for q in qs],
        }
    return out
