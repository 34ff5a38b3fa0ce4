"""Plots of a sweep: a metric against swept parameters, with confidence intervals over seeds.

``xcc plot-sweep DIR [DIR ...] --metric M --x PARAM [--y PARAM2] [--hue PARAM3]
[--reference M2]``:

- with ``--x`` only: a **line plot** of the metric's mean over seeds against ``PARAM``, with a
  95% confidence interval (Student's t over the seeds: mean +- t(0.975, n-1) s / sqrt(n)),
  one line per value of every other swept parameter (or of ``--hue``, averaging the rest); a
  categorical ``PARAM`` (``protocol``) is drawn as points with error bars, groups side by side,
  since nothing lies between two protocols; the legend sits right of the axes;
- with ``--y`` too: a **heatmap** of the mean over seeds, one panel per combination of the
  remaining parameters, each cell annotated with mean +- half-width of the interval.

The metric is computed per run with the catalog's SQL views (``docs/catalog.md``), so anything
the views hold can be plotted:

- per run, from the ``run_metrics`` view: ``jain`` (Jain's index over the flows' goodputs),
  ``jain_maxmin`` (over each flow's rate / its max-min rate: 1 at the max-min allocation),
  ``max_abs_maxmin_error``, ``max_convergence_s``, ``converged_flows``;
- ``TABLE.COLUMN`` with ``--agg`` (``mean`` by default; ``sum``, ``min``, ``max``) over that
  table's rows of the run, e.g. ``flows.goodput_bps --agg sum``, ``links.utilisation`` with
  ``--where "name = 'r1->r2'"`` (any SQL condition on the table's columns).

``--reference`` (e.g. ``flows.maxmin_bps``, aggregated like the metric) is drawn dashed in
each line's colour. Several sweep directories go into one figure; ``sweep`` (each spec's name)
is then a parameter like ``protocol`` or ``variant``, e.g. ``--hue sweep``. Axis labels are the
metric's name and unit (bit/s shown as Mbit/s); the title says what was aggregated over which
rows.

Parameters are named as in the manifest (``link_1_delay`` or ``link[1].delay``); values with
units are placed on the axis by their SI value (seconds, bit/s, bytes) and labelled as written.
The statistics are returned as a polars DataFrame and written next to the figures as
``<stem>.csv``, so a plot can always be checked against its numbers.
"""

from __future__ import annotations

import math
import os
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import ScenarioError
from .sweep_runner import load_manifest
from .sweep_spec import column_name

AGGREGATES = ("mean", "sum", "min", "max")
#: Two-sided 95% Student t quantiles t(0.975, df) for df = 1..30; 1.96 beyond.
_T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip


def t975(df: int) -> float:
    """t(0.975, df): the 95% two-sided quantile of Student's t (nan for df < 1)."""
    if df < 1:
        return math.nan
    return _T975[df - 1] if df <= len(_T975) else 1.96


#: Per-run metrics of the catalog's ``run_metrics`` view, with their axis labels.
RUN_METRICS = {
    "jain": "Jain's index of goodputs",
    "jain_maxmin": "Jain's index of rate / max-min rate",
    "max_abs_maxmin_error": "largest |rate / max-min rate - 1|",
    "max_convergence_s": "slowest convergence to max-min (s)",
    "converged_flows": "flows within 10 % of max-min",
}
#: Units shown in axis labels, scaled to a readable size.
_UNIT_LABELS = {"bit/s": ("Mbit/s", 1e-6), "B": ("kB", 1e-3)}


@dataclass
class Metric:
    label: str  # the axis label: the metric's name and unit
    title: str  # what was aggregated over which rows
    sql: str  # SELECT run_dir, value ... GROUP BY run_dir
    scale: float = 1.0  # plotted value = value * scale (bit/s shown as Mbit/s)
    reference: str | None = None  # the reference metric's name, drawn dashed


def metric_sql(metric: str, agg: str = "mean", where: str | None = None) -> Metric:
    """The per-run SQL of ``metric`` (see the module doc)."""
    if agg not in AGGREGATES:
        raise ScenarioError(f"--agg: expected one of {', '.join(AGGREGATES)}, got {agg!r}")
    cond = f" AND ({where})" if where else ""
    filtered = f" where {where}" if where else ""
    name = metric.removeprefix("run_metrics.")
    if name in RUN_METRICS:
        sql = f'SELECT run_dir, "{name}" AS value FROM run_metrics WHERE point_id IS NOT NULL{cond}'
        return Metric(RUN_METRICS[name], f"{name} per run{filtered}", sql)
    from .schema import TABLES

    table, _, column = metric.partition(".")
    known = {c.name: c for c in TABLES.get(table, ())}
    if not column or column not in known:
        tables = ", ".join(TABLES)
        raise ScenarioError(
            f"--metric: expected one of {', '.join(RUN_METRICS)} or TABLE.COLUMN "
            f"(tables: {tables}), got {metric!r}"
            + (f"; {table} has {', '.join(sorted(known))}" if known else "")
        )
    unit, scale = _UNIT_LABELS.get(known[column].unit, (known[column].unit, 1.0))
    label = column + (f" ({unit})" if unit else "")
    sql = (
        f'SELECT run_dir, {agg}("{column}") AS value FROM {table} '
        f"WHERE point_id IS NOT NULL{cond} GROUP BY run_dir"
    )
    return Metric(label, f"{agg} over {table}{filtered}", sql, scale)


def sweep_dirs(
    sweep_dir: str | os.PathLike[str] | list[str | os.PathLike[str]],
) -> list[Path]:
    """The sweep directories named: each directory itself if it holds a sweep's manifest,
    else every sweep directory below it (``results/`` holding several sweeps)."""
    out = []
    for d in sweep_dir if isinstance(sweep_dir, list) else [sweep_dir]:
        d = Path(d)
        if (d / "manifest.json").is_file() or not d.is_dir():
            out.append(d)
            continue
        below = sorted(m.parent for m in d.rglob("manifest.json") if _is_sweep(m))
        out.extend(below or [d])  # none: load_manifest says "not a sweep directory"
    return out


def _is_sweep(manifest: Path) -> bool:
    try:
        load_manifest(manifest.parent)
    except (ScenarioError, ValueError):
        return False
    return True


def _params_of(manifest: dict[str, Any]) -> dict[str, str]:
    """Name (dotted path or column) -> column, for a sweep's parameters and ``sweep``."""
    columns = manifest["columns"]
    return {**{c: c for c in columns.values()}, **columns, "sweep": "sweep"}


def sweep_stats(
    sweep_dir: str | os.PathLike[str] | list[str | os.PathLike[str]],
    metric: str,
    params: list[str],
    *,
    agg: str = "mean",
    where: str | None = None,
    reference: str | None = None,
) -> tuple[Any, Metric, dict[str, str]]:
    """Mean, sd, n and 95% CI half-width of ``metric`` over seeds, per combination of ``params``.

    ``sweep_dir`` is one sweep directory or several (``sweep``, the spec's name, is then a
    parameter like the swept ones). ``reference`` (a metric, e.g. ``flows.maxmin_bps``)
    adds its mean per combination as ``reference``, with the same ``agg`` and ``where``.
    Returns (DataFrame, metric, {column: dotted path}). Parameters not in ``params`` are
    averaged over (with the seeds).
    """
    import polars as pl

    dirs = sweep_dirs(sweep_dir)
    m = metric_sql(metric, agg, where)
    ref = metric_sql(reference, agg, where) if reference else None
    m.reference = reference
    frames, paths = [], {}
    for directory in dirs:
        manifest = load_manifest(directory)
        by_name = _params_of(manifest)
        missing = [p for p in params if p not in by_name]
        if missing:
            raise ScenarioError(
                f"{directory}: no swept parameter {missing[0]!r}; swept: "
                + ", ".join(f"{c} ({p})" for p, c in manifest["columns"].items())
            )
        paths.update({c: p for p, c in manifest["columns"].items()})
        frames.append(_per_run(directory, m, ref, [by_name[p] for p in params]))
    cols = [_params_of(load_manifest(dirs[0]))[p] for p in params]
    data = pl.concat(frames, how="diagonal_relaxed")
    sort_cols = []
    for c in cols:
        si = f"{c}_si"
        sort_cols.append(si if si in data.columns else c)
    keys = list(dict.fromkeys(cols + [s for s in sort_cols if s not in cols]))
    aggs = [
        pl.col("value").mean().alias("mean"),
        pl.col("value").std().alias("sd"),
        pl.col("value").count().alias("n"),
    ]
    if ref is not None:
        aggs.append(pl.col("reference").mean().alias("reference"))
    stats = (
        data.group_by(keys)
        .agg(aggs)
        .with_columns(
            (
                pl.col("sd")
                * pl.col("n").map_elements(lambda n: t975(n - 1), return_dtype=pl.Float64)
                / pl.col("n").cast(pl.Float64).sqrt()
            ).alias("ci95")
        )
        .sort(sort_cols)
    )
    paths["sweep"] = "sweep"
    return stats, m, {c: paths[c] for c in cols}


def _per_run(directory: Path, m: Metric, ref: Metric | None, cols: list[str]) -> Any:
    """One row per finished point of the sweep in ``directory``: value (and reference) with
    the runs' columns."""
    import duckdb

    from .results_catalog import catalog

    with catalog(directory) as cat:
        try:
            per_run = cat.sql(m.sql)
            if ref is not None:
                refs = cat.sql(ref.sql).rename({"value": "reference"})
                per_run = per_run.join(refs, on="run_dir", how="left")
        except duckdb.Error as exc:
            raise ScenarioError(f"--metric/--reference/--where: {exc}") from None
        runs = cat.sql("SELECT * FROM runs WHERE point_id IS NOT NULL")
    if per_run.height == 0:
        raise ScenarioError(f"{directory}: no finished point has rows for {m.title}")
    keep = ["run_dir", "sweep"] + [
        c for c in runs.columns if c in cols or (c.endswith("_si") and c[:-3] in cols)
    ]
    return per_run.join(runs.select(list(dict.fromkeys(keep))), on="run_dir")


def plot_sweep(
    sweep_dir: str | os.PathLike[str] | list[str | os.PathLike[str]],
    metric: str,
    x: str,
    *,
    y: str | None = None,
    hue: str | None = None,
    agg: str = "mean",
    where: str | None = None,
    reference: str | None = None,
    out: str | os.PathLike[str] | None = None,
    formats: tuple[str, ...] = ("png", "svg"),
) -> list[Path]:
    """Draw the line plot (``x``) or heatmap (``x`` and ``y``) of one or several sweeps; return
    the files written. ``reference`` draws that metric's mean as a dashed line per group."""
    from .plot import _pyplot, save_figure

    dirs = sweep_dirs(sweep_dir)
    manifest = load_manifest(dirs[0])
    all_cols = list(manifest["columns"].values())
    if is_flow_axis(x):
        if y:
            raise ScenarioError("--y: not with a per-flow --x")
        return _plot_per_flow(dirs, manifest, metric, x, hue, where, out, formats)
    x_col, y_col = _col(manifest, x), _col(manifest, y) if y else None
    if y_col == x_col:
        raise ScenarioError("--y: expected a parameter other than --x")
    if hue is not None:
        groups = [_col(manifest, hue)]
    else:
        groups = [c for c in all_cols if c not in (x_col, y_col)]
        if len(dirs) > 1:
            groups.insert(0, "sweep")
    if reference and y_col:
        raise ScenarioError("--reference: only for line plots (without --y)")
    axes_cols = [x_col] + ([y_col] if y_col else []) + groups
    stats, m, _ = sweep_stats(dirs, metric, axes_cols, agg=agg, where=where, reference=reference)
    out_dir = Path(out) if out is not None else dirs[0] / "plots"
    if out is None and len(dirs) > 1:
        out_dir = Path(os.path.commonpath([str(d) for d in dirs])) / "plots"
    safe_metric = metric.replace(".", "-")
    stem = f"{safe_metric}-vs-{x_col}" + (f"-{y_col}" if y_col else "")
    plt = _pyplot()
    fig = (
        _heatmap(plt, stats, m, x_col, y_col, groups)
        if y_col
        else _lines(plt, stats, m, x_col, groups)
    )
    paths = save_figure(fig, out_dir, stem, formats)
    plt.close(fig)
    csv = out_dir / f"{stem}.csv"
    stats.write_csv(csv)
    return [*paths, csv]


def is_flow_axis(x: str) -> bool:
    """``--x flow`` (each flow by name) or ``--x flows.COLUMN`` (each flow at its mean value of
    that column over the seeds, e.g. ``flows.min_rtt_s``): a per-flow quantity on x."""
    return x == "flow" or x.startswith("flows.")


def flow_stats(
    sweep_dir: str | os.PathLike[str] | list[str | os.PathLike[str]],
    metric: str,
    x: str,
    groups: list[str],
    *,
    where: str | None = None,
) -> tuple[Any, Metric]:
    """Per flow (by name) and combination of ``groups``: the mean, sd, n and 95% CI of the
    flows-table ``metric`` over seeds, and ``x_value``, the flow's mean ``x`` column (its name
    for ``x = "flow"``). The metric is per flow, not aggregated over a run's flows."""
    import polars as pl

    from .schema import TABLES

    known = {c.name: c for c in TABLES["flows"]}
    table, _, column = metric.partition(".")
    if table != "flows" or column not in known:
        raise ScenarioError(
            f"--metric: a per-flow --x needs a flows.COLUMN metric, got {metric!r}; "
            f"flows has {', '.join(sorted(known))}"
        )
    x_column = None if x == "flow" else x.partition(".")[2]
    if x_column is not None and x_column not in known:
        raise ScenarioError(f"--x: flows has no column {x_column!r}; it has {', '.join(known)}")
    unit, scale = _UNIT_LABELS.get(known[column].unit, (known[column].unit, 1.0))
    cond = f" AND ({where})" if where else ""
    xsel = f'"{x_column}"' if x_column else "name"
    sql = (
        f'SELECT run_dir, name AS flow, "{column}" AS value, {xsel} AS x_value FROM flows '
        f"WHERE point_id IS NOT NULL{cond}"
    )
    label = column + (f" ({unit})" if unit else "")
    m = Metric(label, f"per flow{f' where {where}' if where else ''}", sql, scale)
    frames = []
    for directory in sweep_dirs(sweep_dir):
        manifest = load_manifest(directory)
        cols = [_params_of(manifest)[g] if g != "sweep" else g for g in groups]
        frames.append(_per_run(directory, m, None, cols))
    data = pl.concat(frames, how="diagonal_relaxed")
    keys = ["flow", *groups]
    x_agg = pl.col("x_value").mean() if x_column else pl.col("x_value").first()
    stats = (
        data.group_by(keys)
        .agg(
            pl.col("value").mean().alias("mean"),
            pl.col("value").std().alias("sd"),
            pl.col("value").count().alias("n"),
            x_agg.alias("x_value"),
        )
        .with_columns(
            (
                pl.col("sd")
                * pl.col("n").map_elements(lambda n: t975(n - 1), return_dtype=pl.Float64)
                / pl.col("n").cast(pl.Float64).sqrt()
            ).alias("ci95")
        )
        .sort([*groups, "x_value"])
    )
    return stats, m


def _plot_per_flow(dirs, manifest, metric, x, hue, where, out, formats) -> list[Path]:
    import polars as pl

    from .plot import _pyplot, save_figure
    from .schema import TABLES

    groups = [_col(manifest, hue)] if hue else []
    stats, m = flow_stats(dirs, metric, x, groups, where=where)
    numeric = x != "flow"
    xlabel = "flow"
    xscale = 1.0
    if numeric:
        col = next(c for c in TABLES["flows"] if c.name == x.partition(".")[2])
        xunit, xscale = {"s": ("ms", 1e3), **{k: v for k, v in _UNIT_LABELS.items()}}.get(
            col.unit, (col.unit, 1.0)
        )
        xlabel = f"{col.name} per flow, mean over seeds" + (f" ({xunit})" if xunit else "")
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8.5, 4.2), layout="constrained")
    combos = stats.select(groups).unique(maintain_order=True).to_dicts() if groups else [{}]
    flows = sorted(stats["flow"].unique().to_list())
    where_of = {f: i for i, f in enumerate(flows)}
    dodge = 0.6 / len(combos) if not numeric and len(combos) > 1 else 0.0
    for k, combo in enumerate(combos):
        sub = stats
        for g, v in combo.items():
            sub = sub.filter(pl.col(g) == v)
        if numeric:
            xs = (sub["x_value"].cast(pl.Float64).to_numpy() * xscale).tolist()
        else:
            shift = (k - (len(combos) - 1) / 2) * dodge
            xs = [where_of[f] + shift for f in sub["flow"].to_list()]
        mean = sub["mean"].to_numpy() * m.scale
        ci = sub["ci95"].fill_null(0).fill_nan(0).to_numpy() * m.scale
        # Flows are distinct entities: points with error bars, never a line between them.
        ax.errorbar(xs, mean, yerr=ci, fmt="o", capsize=4, label=_group_label(combo, groups))
        if numeric:
            for xv, yv, name in zip(xs, mean, sub["flow"].to_list()):
                ax.annotate(name, (xv, yv), textcoords="offset points", xytext=(4, 4), fontsize=7)
    if not numeric:
        ax.set_xticks(range(len(flows)), flows)
        ax.set_xlim(-0.5, len(flows) - 0.5)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(m.label)
    runs = _seeds(stats).replace("seeds", "runs (seeds and parameters not on the legend)")
    ax.set_title(f"{m.label} {m.title}: mean and 95% CI over {runs}", fontsize=9)
    ax.grid(True, lw=0.3)
    if groups:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)
    out_dir = Path(out) if out is not None else dirs[0] / "plots"
    stem = f"{metric.replace('.', '-')}-vs-{x.replace('.', '-')}"
    paths = save_figure(fig, out_dir, stem, formats)
    plt.close(fig)
    csv = out_dir / f"{stem}.csv"
    stats.write_csv(csv)
    return [*paths, csv]


def _col(manifest: dict[str, Any], name: str) -> str:
    columns = manifest["columns"]
    if name == "sweep":
        return name
    if name in columns:
        return columns[name]
    if name in columns.values():
        return name
    if column_name(name) in columns.values():
        return column_name(name)
    raise ScenarioError(
        f"no swept parameter {name!r}; swept: "
        + ", ".join(f"{c} ({p})" for p, c in columns.items())
    )


def _axis(stats: Any, col: str) -> tuple[list[Any], list[float] | None]:
    """Distinct values of ``col`` in axis order and, if they have units, their SI positions."""
    si = f"{col}_si"
    if si in stats.columns:
        pairs = stats.select(col, si).unique().sort(si)
        return pairs[col].to_list(), pairs[si].to_list()
    values = stats[col].unique().sort().to_list()
    numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
    return values, ([float(v) for v in values] if numeric else None)


def _group_label(row: dict[str, Any], groups: list[str]) -> str:
    return ", ".join(f"{g}={row[g]}" for g in groups) if groups else "all"


def _lines(plt: Any, stats: Any, m: Metric, x: str, groups: list[str]) -> Any:
    import polars as pl

    values, positions = _axis(stats, x)
    where = positions if positions is not None else list(range(len(values)))
    pos = dict(zip(values, where))
    # Constrained layout leaves room for the legend, right of the axes, off the data.
    fig, ax = plt.subplots(figsize=(8.5, 4.2), layout="constrained")
    combos = stats.select(groups).unique(maintain_order=True).to_dicts() if groups else [{}]
    has_ref = "reference" in stats.columns
    # A categorical x (a protocol) has no "between" to draw a line or band through: points
    # with error bars, each group shifted a little so their bars do not overlap.
    categorical = positions is None
    dodge = 0.6 / max(1, len(combos)) if categorical and len(combos) > 1 else 0.0
    for k, combo in enumerate(combos):
        sub = stats
        for g, v in combo.items():
            sub = sub.filter(pl.col(g) == v)
        shift = (k - (len(combos) - 1) / 2) * dodge
        xs = [pos[v] + shift for v in sub[x].to_list()]
        mean = sub["mean"].to_numpy() * m.scale
        ci = sub["ci95"].fill_null(0).fill_nan(0).to_numpy() * m.scale
        label = _group_label(combo, groups)
        if categorical:
            bars = ax.errorbar(xs, mean, yerr=ci, fmt="o", capsize=4, label=label)
            colour = bars[0].get_color()
        else:
            (line,) = ax.plot(xs, mean, "o-", label=label)
            colour = line.get_color()
            ax.fill_between(xs, mean - ci, mean + ci, color=colour, alpha=0.2, lw=0)
        if has_ref:
            ref = sub["reference"].to_numpy() * m.scale
            if categorical:
                ax.plot(xs, ref, "_", color=colour, ms=14, mew=1.5)
            else:
                ax.plot(xs, ref, "--", color=colour, lw=1)
    if has_ref:
        style = "_" if categorical else "--"
        ax.plot(
            [],
            [],
            style,
            color="0.3",
            lw=1,
            label=f"{m.reference} ({'bar' if categorical else 'dashed'})",
        )
    ax.set_xticks(where)
    ax.set_xticklabels([str(v) for v in values])
    ax.set_xlabel(x)
    ax.set_ylabel(m.label)
    ax.set_title(textwrap.fill(f"{m.title}: mean and 95% CI over {_seeds(stats)}", 80), fontsize=9)
    ax.grid(True, lw=0.3)
    if categorical:
        ax.set_xlim(-0.5, len(values) - 0.5)
    if groups or has_ref:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)
    return fig


def _heatmap(plt: Any, stats: Any, m: Metric, x: str, y: str, groups: list[str]) -> Any:
    import numpy as np
    import polars as pl

    xs, _ = _axis(stats, x)
    ys, _ = _axis(stats, y)
    combos = stats.select(groups).unique(maintain_order=True).to_dicts() if groups else [{}]
    fig, axes = plt.subplots(
        1,
        len(combos),
        figsize=(1.2 + 0.9 * len(xs) * len(combos) + 1, 1.2 + 0.6 * len(ys) + 1),
        squeeze=False,
        layout="constrained",
    )
    lo, hi = stats["mean"].min() * m.scale, stats["mean"].max() * m.scale
    for ax, combo in zip(axes[0], combos):
        sub = stats
        for g, v in combo.items():
            sub = sub.filter(pl.col(g) == v)
        grid = np.full((len(ys), len(xs)), np.nan)
        for row in sub.iter_rows(named=True):
            i, j = ys.index(row[y]), xs.index(row[x])
            grid[i, j] = row["mean"] * m.scale
            ci = row["ci95"]
            ci = None if ci is None or ci != ci else ci * m.scale
            text = f"{grid[i, j]:.3g}" + (f"\n±{ci:.2g}" if ci is not None else "")
            ax.text(j, i, text, ha="center", va="center", fontsize=7)
        image = ax.imshow(grid, origin="lower", aspect="auto", vmin=lo, vmax=hi, cmap="viridis")
        ax.set_xticks(range(len(xs)), [str(v) for v in xs])
        ax.set_yticks(range(len(ys)), [str(v) for v in ys])
        ax.set_xlabel(x)
        ax.set_ylabel(y)
        ax.set_title(_group_label(combo, groups), fontsize=9)
    fig.colorbar(image, ax=list(axes[0]), label=textwrap.fill(m.label, 30))
    fig.suptitle(textwrap.fill(f"{m.title}: mean (±95% CI) over {_seeds(stats)}", 60), fontsize=9)
    return fig


def _seeds(stats: Any) -> str:
    lo, hi = stats["n"].min(), stats["n"].max()
    return f"{lo} seeds" if lo == hi else f"{lo} to {hi} seeds"
