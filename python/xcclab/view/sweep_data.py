"""A sweep directory as the data of its page: every finished point's swept parameters and
metrics, so the page can group them by any x, hue and facet and draw means with 95 %
intervals over seeds as ``xcc plot-sweep`` does (Student's t, its table from
:mod:`xcclab.plot_sweep`).

The per-run metrics are the catalog's, through :func:`xcclab.plot_sweep.metric_sql`; the page
only averages them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import ScenarioError
from ..plot_sweep import _T975, RUN_METRICS, _per_run, metric_sql
from ..sweep_runner import load_manifest

#: The metrics offered, with the aggregate over a run's rows (``plot-sweep --agg``).
METRICS = [
    *((m, "mean") for m in RUN_METRICS),
    ("flows.goodput_bps", "mean"),
    ("flows.goodput_bps", "sum"),
    ("flows.fct_s", "mean"),
    ("flows.min_rtt_s", "mean"),
    ("flows.retransmits", "sum"),
    ("links.utilisation", "max"),
    ("links.mean_queue_delay_s", "max"),
    ("links.max_queue_bytes", "max"),
    ("links.drops", "sum"),
    ("links.marks", "sum"),
]


def sweep_data(directory: Path) -> dict[str, Any]:
    manifest = load_manifest(directory)
    columns = manifest["columns"]  # dotted path -> column
    params = list(columns.values())
    runs: dict[str, dict[str, Any]] = {}
    metrics = []
    for name, agg in METRICS:
        m = metric_sql(name, agg)
        key = name if name in RUN_METRICS else f"{agg}({name})"
        try:
            per_run = _per_run(directory, m, None, params)
        except ScenarioError:
            continue  # no finished point has rows for it (no flows of that kind, ...)
        metrics.append({"key": key, "label": m.label, "title": m.title, "scale": m.scale})
        for row in per_run.iter_rows(named=True):
            entry = runs.setdefault(row["run_dir"], {"params": {}, "values": {}})
            entry["params"] = {
                p: row.get(p) for p in params + [f"{c}_si" for c in params] if p in row
            }
            v = row["value"]
            entry["values"][key] = None if v is None or v != v else float(v)
    if not runs:
        raise ScenarioError(f"{directory}: no finished point to show")
    return {
        "title": f"sweep {manifest.get('name', directory.name)}",
        "params": [{"column": c, "path": p} for p, c in columns.items()],
        "metrics": metrics,
        "runs": [runs[k] for k in sorted(runs)],
        "t975": list(_T975),
    }
