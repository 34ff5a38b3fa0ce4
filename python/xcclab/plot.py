"""Plots of a run: flow rates, congestion windows and link queues over time.

``xcc plot DIR`` and :meth:`RunResult.plot` draw one figure with stacked panels sharing the
time axis and save it as PNG and SVG: flow delivery rates (over a ``smooth`` window of whole
metrics intervals, from the cumulative delivered bytes) with each flow's max-min reference
(``maxmin_bps``) dashed in its colour; congestion windows, only for flows that have one (a
rate-based protocol's flows report none, and the panel is left out when no flow has one); link
queues (beyond :data:`QUEUE_POINTS` samples, each bucket's largest value with its range shaded,
so a 10 ms series stays readable). The title names the scenario, its protocols and queue
disciplines, the swept values when the run is a sweep point, and the seed; legends sit right of
the panels, off the data. Output is deterministic: the Agg backend, SVG
metadata without a date and a fixed SVG hash salt, so the same run gives the same files.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .errors import ScenarioError
from .figures import DEFAULT_FORMATS, save_figure
from .figures import pyplot as _pyplot
from .view.downsample import bucket_size, reduce
from .view.downsample import times as bucket_times

MAX_LINES = 10
#: Queue samples drawn per link at most: beyond, each bucket of samples is drawn as its largest
#: value with the bucket's range shaded (a 60 s run at 10 ms has 6,000 samples, which as one
#: line fill the panel solid).
QUEUE_POINTS = 600


def _pick(ids_by_peak: list[tuple[Any, float]], limit: int) -> list[Any]:
    """The ``limit`` ids with the largest peaks (ties broken by id), in id order."""
    chosen = sorted(ids_by_peak, key=lambda t: (-t[1], t[0]))[:limit]
    return sorted(i for i, _ in chosen)


def flows_with_window(flow_series: Any) -> set[int]:
    """Flows that have a congestion window: most of their samples carry one (the flows of a
    rate-based protocol report none after their first packets)."""
    import polars as pl

    return {
        fid
        for fid, n, nulls in flow_series.group_by("flow_id")
        .agg(pl.len(), pl.col("cwnd_bytes").null_count().alias("nulls"))
        .rows()
        if nulls < 0.5 * n
    }


def smoothing_samples(
    interval_s: float, smooth_s: float | None, rtt_s: float | None, has_window: bool
) -> int:
    """Samples per rate window for ``--smooth``: whole metrics intervals covering ``smooth_s``;
    for a window-based flow at least :data:`~xcclab.references.WINDOW_RTTS` of its RTTs too.

    Such a flow delivers one burst per RTT; a window a fraction of an RTT long holds one burst
    or none, or n or n + 1 of them, depending on phase, and the smoothed rate oscillates at the
    beat of the window against the RTT: structure the flow does not have. Over n >= 4 RTTs the
    phase changes the count by at most one burst in n (the same window the flows' convergence
    is judged on, ``rate_window_s``)."""
    from .references import window_length

    if not interval_s or not smooth_s:
        return 1
    k = window_length(interval_s, None, smooth_s)
    if has_window and rtt_s:
        k = max(k, window_length(interval_s, rtt_s))
    return k


def _column(frame: Any, name: str) -> list[Any]:
    return frame[name].to_list() if name in frame.columns else [None] * frame.height


def plot_run(
    run: Any,
    out: str | os.PathLike[str] | None = None,
    *,
    formats: Iterable[str] = DEFAULT_FORMATS,
    max_lines: int = MAX_LINES,
    smooth: float | None = None,
) -> list[Path]:
    """Draw ``run`` (a :class:`~xcclab.results.RunResult`; ``RunResult.load(DIR)`` for a saved run:
    this module never imports :mod:`xcclab.results`, whose ``plot`` method calls it).

    Shows at most ``max_lines`` flows (the fastest) and links (the fullest queues, leaving out
    those whose peak stays under 1 % of the largest) per panel. ``smooth``: the rate window in
    seconds (rounded up to whole metrics intervals; default one interval).
    Returns the written files. Raises :class:`ScenarioError` if the run has no time series.
    """
    import polars as pl

    if out is None:
        if run.path is None:
            raise ValueError("plot_run: pass `out` for a run that was not saved")
        out = run.path / "plots"
    fs, ls = run.flow_series, run.link_series
    if fs.height == 0 and ls.height == 0:
        where = f"{run.path}: " if run.path else ""
        raise ScenarioError(
            f"{where}the run has no time series (metrics interval 0s); "
            'set [metrics] interval = "100ms" in the scenario and run it again'
        )
    names = dict(zip(run.flows["flow_id"].to_list(), run.flows["name"].to_list()))
    link_names = dict(zip(run.links["link_id"].to_list(), run.links["name"].to_list()))

    from .references import window_rates

    peaks = fs.group_by("flow_id").agg(pl.col("rate_bps").max().fill_null(0)).rows()
    flow_ids = _pick([(i, p or 0.0) for i, p in peaks], max_lines)
    windowed = flows_with_window(fs) & set(flow_ids)
    refs = dict(zip(run.flows["flow_id"].to_list(), _column(run.flows, "maxmin_bps")))
    interval = run.scenario.get("metrics", {}).get("interval_ns", 0) * 1e-9
    rtts = dict(zip(run.flows["flow_id"].to_list(), _column(run.flows, "srtt_s")))
    ks = {
        fid: smoothing_samples(interval, smooth, rtts.get(fid), fid in windowed) for fid in flow_ids
    }

    plt = _pyplot()
    rows = 3 if windowed else 2
    # Constrained layout makes room for the legends, which sit right of the panels, off the data.
    fig, axes = plt.subplots(
        rows, 1, figsize=(10.5, 3 * rows), sharex=True, squeeze=False, layout="constrained"
    )
    axes = axes[:, 0]
    ax_rate, ax_queue = axes[0], axes[-1]
    ax_cwnd = axes[1] if windowed else None
    from .run_title import run_title

    fig.suptitle(run_title(run))

    has_ref = False
    for fid in flow_ids:
        sub = fs.filter(pl.col("flow_id") == fid).sort("time_s")
        label = names.get(fid, str(fid))
        t = sub["time_s"].to_numpy()
        k = ks[fid]
        rate = (
            window_rates(t, sub["delivered_bytes"].to_numpy(), k)
            if k > 1
            else sub["rate_bps"].to_numpy()
        )
        (line,) = ax_rate.plot(t, rate / 1e6, lw=0.9, label=label)
        if refs.get(fid):
            ax_rate.axhline(refs[fid] / 1e6, color=line.get_color(), ls="--", lw=0.8)
            has_ref = True
        if ax_cwnd is not None and fid in windowed:
            ax_cwnd.plot(t, sub["cwnd_bytes"].to_numpy() / 1e3, lw=0.9, label=label)
    if has_ref:
        ax_rate.plot([], [], "--", color="0.3", lw=0.8, label="max-min")
    n_flows = fs["flow_id"].n_unique()
    shown = f" ({len(flow_ids)} of {n_flows} shown)" if n_flows > len(flow_ids) else ""
    spans = sorted({ks[f] * interval * 1e3 for f in flow_ids if ks[f] > 1})
    window = ""
    if spans:
        longest = f"-{spans[-1]:g}" if len(spans) > 1 else ""
        base = smoothing_samples(interval, smooth, None, False)
        widened = any(ks[f] > base for f in flow_ids)
        note = " (window-based flows: at least 4 RTTs)" if widened else ""
        window = f", over {spans[0]:g}{longest} ms windows{note}"
    ax_rate.set_ylabel("rate (Mbit/s)")
    ax_rate.set_title(f"flow delivery rate{window}{shown}", fontsize=10)
    if ax_cwnd is not None:
        ax_cwnd.set_ylabel("cwnd (kB)")
        ax_cwnd.set_title("congestion window", fontsize=10)

    qpeaks = ls.group_by("link_id").agg(pl.col("queue_bytes").max().fill_null(0)).rows()
    top = max((p or 0 for _, p in qpeaks), default=0)
    busy = [(i, p) for i, p in qpeaks if (p or 0) > 0 and (p or 0) >= 0.01 * top]
    link_ids = _pick(busy, max_lines)
    merged = 1
    for lid in link_ids:
        sub = ls.filter(pl.col("link_id") == lid).sort("time_s")
        t, q = sub["time_s"].to_numpy(), sub["queue_bytes"].to_numpy() / 1e3
        size = bucket_size(len(t), QUEUE_POINTS)
        merged = max(merged, size)
        label = link_names.get(lid, str(lid))
        if size == 1:
            ax_queue.plot(t, q, lw=0.9, label=label)
            continue
        tb, hi = bucket_times(t, size), reduce(q, size, "max")
        (line,) = ax_queue.plot(tb, hi, lw=0.9, label=label)
        ax_queue.fill_between(
            tb, reduce(q, size, "min"), hi, color=line.get_color(), alpha=0.25, lw=0
        )
    ax_queue.set_ylabel("queue (kB)")
    ms = interval * 1e3
    how = (
        f", largest of each {merged * ms:g} ms ({merged} samples; range shaded)"
        if merged > 1
        else ""
    )
    ax_queue.set_title(
        "link queues" + ("" if link_ids else " (all empty)") + how,
        fontsize=10,
    )
    ax_queue.set_xlabel("time (s)")
    for ax in axes:
        ax.grid(True, lw=0.3, alpha=0.6)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)
    try:
        return save_figure(fig, out, "timeseries", formats)
    finally:
        plt.close(fig)
