"""The reproduction index (``xcc reproduce --all --out DIR``) as the data of its page: per
report, its claims table from ``metrics.json`` (as judged when the report or the index was
written) and its runs made interactive where their data is there (the run directories under
the report, each with the run page's drawing, slider and plots at a smaller budget).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import ScenarioError
from ..results import RunResult
from .run_data import SMALL, run_data

#: Runs shown per report (the first ones in path order; the page says how many there are).
RUNS_PER_REPORT = 4

CLAIM_COLUMNS = ("id", "type", "expected", "ours", "verdict", "counted")


def report_dirs(directory: Path) -> list[Path]:
    """The reports: DIR itself when it is one (``xcc reproduce ID --out DIR``), else DIR/<id>/."""
    if (directory / "metrics.json").is_file():
        return [directory]
    return sorted(p.parent for p in directory.glob("*/metrics.json"))


def index_data(directory: Path) -> dict[str, Any]:
    reports = report_dirs(directory)
    if not reports:
        raise ScenarioError(
            f"{directory}: no reports (expected DIR/<id>/metrics.json, as written by "
            "`xcc reproduce --all --out DIR`)"
        )
    return {
        "title": f"reproduction: {directory.resolve().name}",
        "reports": [_report(d) for d in reports],
    }


def _report(d: Path) -> dict[str, Any]:
    metrics = json.loads((d / "metrics.json").read_text(encoding="utf-8"))
    claims = metrics.get("claims") or []
    rows = [[_cell(c, k) for k in CLAIM_COLUMNS] for c in claims]
    verdict = (metrics.get("verdict") or {}).get("verdict", "not judged")
    if metrics.get("quick"):
        verdict = "not judged (quick run)"
    run_dirs = sorted(p.parent for p in d.rglob("run.json"))
    runs = []
    for r in run_dirs[:RUNS_PER_REPORT]:
        result = RunResult.load(r)
        if result.link_series.height or result.flow_series.height:
            runs.append(run_data(result, SMALL, str(r.relative_to(d))))
    return {
        "id": metrics.get("experiment", d.name),
        "verdict": verdict,
        "claims": {
            "name": "claims",
            "columns": list(CLAIM_COLUMNS),
            "rows": rows,
            "total": len(rows),
            "sorted_by": None,
            "kind": None,
        },
        "runs": runs,
        "runs_total": len(run_dirs),
        "figures": [f for f in metrics.get("figures", []) if f.endswith(".png")],
    }


def _cell(claim: dict[str, Any], key: str) -> Any:
    v = claim.get(key)
    if key == "ours" and isinstance(v, dict):
        mean = v.get("mean")
        lo, hi = (v.get("ci95") or [None, None])[:2]
        unit = claim.get("unit") or ""
        text = f"{mean:.4g}" if isinstance(mean, (int, float)) else str(mean)
        if isinstance(lo, (int, float)) and isinstance(hi, (int, float)) and lo != hi:
            text += f" [{lo:.4g}, {hi:.4g}]"
        return f"{text} {unit}".strip()
    return v
