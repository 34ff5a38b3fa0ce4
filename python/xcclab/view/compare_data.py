"""A ``xcc compare`` directory (``sim/``, ``emu/``, ``compare.json``) as the data of its page:
both runs on one drawing, their series overlaid on the same axes, and the differences tables
that ``compare.md`` holds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import ScenarioError
from ..results import RunResult
from .run_data import DEFAULT, Budget, run_data


def compare_data(directory: Path, budget: Budget = DEFAULT) -> dict[str, Any]:
    halves = []
    for name, label in (("sim", "simulated"), ("emu", "real packets")):
        if not (directory / name / "run.json").is_file():
            raise ScenarioError(
                f"{directory}: not a compare directory (no {name}/run.json; "
                "`xcc compare SCENARIO --out DIR` writes sim/, emu/ and compare.json)"
            )
        halves.append(run_data(RunResult.load(directory / name), budget, label))
    sim, emu = halves
    if [x["name"] for x in sim["links"]] != [x["name"] for x in emu["links"]]:
        raise ScenarioError(f"{directory}: sim/ and emu/ do not have the same links")
    path = directory / "compare.json"
    diffs = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
    return {
        "title": f"{sim['title']}: simulated and real packets",
        "runs": halves,
        "tables": _tables(diffs) if diffs else [],
    }


def _tables(d: dict[str, Any]) -> list[dict[str, Any]]:
    """compare.json's sections as page tables (the same numbers as compare.md)."""
    out = []
    v = d.get("verdict")
    if v:
        out.append(
            {
                "name": "verdict: "
                + ("agrees within the stated bounds" if v["agrees"] else "differs beyond them"),
                "columns": ["check", "bound", "within", "judged", "worst", "holds"],
                "rows": [
                    [
                        c["what"],
                        c["bound"],
                        c["within"],
                        c["judged"],
                        None if c["worst"] is None else f"{c['worst'][0]} ({c['worst'][1]:+.2%})",
                        c["holds"],
                    ]
                    for c in v["checks"]
                ],
                "total": len(v["checks"]),
                "sorted_by": None,
                "kind": None,
            }
        )
    health = d.get("router")
    if health:
        rows = [[k, val] for k, val in health["figures"].items()]
        rows += [["warning", w] for w in health["warnings"]]
        out.append(
            {
                "name": "router health (real run)",
                "columns": ["figure", "value"],
                "rows": rows,
                "total": len(rows),
                "sorted_by": None,
                "kind": None,
            }
        )
    for key, kind in (("flows", None), ("links", None)):
        rows = d.get(key) or []
        if rows:
            cols = list(rows[0].keys())
            out.append(
                {
                    "name": f"{key}: simulated against real packets",
                    "columns": cols,
                    "rows": [[r[c] for c in cols] for r in rows],
                    "total": len(rows),
                    "sorted_by": None,
                    "kind": kind,
                }
            )
    for key in ("fct_quantiles_s", "response_time_quantiles_s"):
        q = d.get(key)
        if q and any(v is not None for run in q.values() for v in run.values()):
            cols = ["run", *next(iter(q.values())).keys()]
            rows = [[run, *vals.values()] for run, vals in q.items()]
            out.append(
                {
                    "name": key.replace("_", " "),
                    "columns": cols,
                    "rows": rows,
                    "total": len(rows),
                    "sorted_by": None,
                    "kind": None,
                }
            )
    return out
