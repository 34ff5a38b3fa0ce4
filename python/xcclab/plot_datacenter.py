"""Figures of a datacenter run (a scenario with ``[workload]``), in the papers' form.

- ``slowdown``: FCT slowdown against flow size, one point per flow-size bin (each bin holds
  the same share of the finished flows, smallest sizes first; the x axis is labelled with the
  bin's largest size), p50, p95 and p99 as lines: the form of the HPCC paper's Figure 11 and
  the PowerTCP paper's FCT figures.
- ``queue_cdf``: the CDF of the queue each packet found on arrival at a switch port, over all
  switch ports together and per switch tier (the port's switch name without its number).

The tables come from the simulator (``fct``, ``slowdown``, ``queue_cdf``; docs/output-schema.md).
This module never imports :mod:`xcclab.results`; it takes a ``RunResult``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .errors import ScenarioError
from .figures import DEFAULT_FORMATS, pyplot, save_figure

__all__ = ["has_datacenter_tables", "plot_datacenter", "size_label"]

TABLES = ("fct", "slowdown", "queue_cdf")


def has_datacenter_tables(run: Any) -> bool:
    """Whether ``run`` has the workload tables (a scenario with ``[workload]``)."""
    return all(t in run.tables for t in TABLES)


def size_label(size_bytes: int) -> str:
    """A flow size as the papers label their x axes: ``"3.2K"``, ``"1M"``, ``"30M"``."""
    for unit, scale in (("M", 1e6), ("K", 1e3)):
        if size_bytes >= scale:
            v = size_bytes / scale
            return f"{v:.0f}{unit}" if v >= 10 or v == int(v) else f"{v:.1f}{unit}"
    return f"{size_bytes}"


def _tier(link: str) -> str:
    """The switch tier of a port ``"tor3->agg1"``: ``"tor"``."""
    return re.sub(r"\d+$", "", link.split("->", 1)[0])


def plot_datacenter(
    run: Any,
    out: str | os.PathLike[str] | None = None,
    *,
    formats: Iterable[str] = DEFAULT_FORMATS,
) -> list[Path]:
    """Draw ``run``'s slowdown-by-size and queue-length CDF figures into ``out`` (default
    ``<run dir>/plots``); return the files written. Raises :class:`ScenarioError` if the run
    has no workload tables."""
    import polars as pl

    if not has_datacenter_tables(run):
        where = f"{run.path}: " if run.path else ""
        raise ScenarioError(f"{where}the run has no [workload], so no FCT slowdown or queue tables")
    if out is None:
        if run.path is None:
            raise ValueError("plot_datacenter: pass `out` for a run that was not saved")
        out = run.path / "plots"
    formats = tuple(formats)
    from .run_title import run_title

    plt = pyplot()
    files: list[Path] = []

    bins = run.tables["slowdown"].sort("bin")
    fct = run.tables["fct"]
    finished = fct.filter(pl.col("slowdown").is_not_null()).height
    fig, ax = plt.subplots(figsize=(9, 4), layout="constrained")
    x = list(range(bins.height))
    for col, style in (("p50", "-o"), ("p95", "-s"), ("p99", "-^")):
        ax.plot(x, bins[col].to_list(), style, label=col, markersize=3)
    ax.set_yscale("log")
    ax.set_xticks(x)
    ax.set_xticklabels([size_label(s) for s in bins["max_size_bytes"].to_list()], rotation=60)
    ax.set_xlabel("flow size (largest in each bin of equal flow counts)")
    ax.set_ylabel("FCT slowdown")
    ax.set_title(f"{run_title(run)}\n{finished} of {fct.height} workload flows finished")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    files += save_figure(fig, out, "slowdown", formats)
    plt.close(fig)

    q = run.tables["queue_cdf"].with_columns(
        pl.col("link").map_elements(_tier, return_dtype=pl.String).alias("tier")
    )
    fig, ax = plt.subplots(figsize=(7, 4), layout="constrained")
    groups = [("all switch ports", q)] + [
        (f"{t} ports", q.filter(pl.col("tier") == t)) for t in sorted(set(q["tier"].to_list()))
    ]
    for label, g in groups:
        if g.height == 0:
            continue
        h = g.group_by("below_bytes").agg(pl.col("packets").sum()).sort("below_bytes")
        total = h["packets"].sum()
        cum = (h["packets"].cum_sum() / total).to_list()
        ax.step([b / 1e3 for b in h["below_bytes"].to_list()], cum, where="post", label=label)
    ax.set_xscale("symlog", linthresh=1)
    ax.set_xlabel("queue found on arrival (KB, 1 KB buckets)")
    ax.set_ylabel("CDF of arriving packets")
    ax.set_title(run_title(run))
    ax.grid(True, alpha=0.3)
    ax.legend()
    files += save_figure(fig, out, "queue_cdf", formats)
    plt.close(fig)
    return files
