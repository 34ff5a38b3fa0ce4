"""A run's title for figures and pages: the scenario, the protocols that ran (the flows' ``cc``,
the links' queue disciplines other than DropTail), the swept values when the run is a point of
a sweep, and the seed; so a figure says which run it is, not only which scenario."""

from __future__ import annotations

from typing import Any


def swept_values(run: Any) -> dict[str, Any]:
    """The parameters of the sweep point this run is (``OUT/points/<id>/`` of a sweep whose
    ``OUT/manifest.json`` lists it); empty for any other run."""
    from .errors import ScenarioError
    from .sweep_manifest import load_manifest

    path = getattr(run, "path", None)
    if path is None or path.parent.name != "points":
        return {}
    try:
        manifest = load_manifest(path.parent.parent)
    except (ScenarioError, ValueError, OSError):
        return {}
    for point in manifest.get("points", []):
        if point.get("run_dir") == f"points/{path.name}":
            return dict(point.get("params") or {})
    return {}


def run_title(run: Any) -> str:
    """``"parking-lot · xcp · queues: xcp · link[1].delay=20ms · seed 1"``."""
    sc = run.scenario
    parts = [sc.get("name", "run")]
    ccs = sorted(set(run.flows["cc"].to_list()) - {"none"}) if run.flows.height else []
    queues = sorted(set(run.links["algorithm"].to_list()) - {"droptail"})
    if ccs:
        parts.append(", ".join(ccs))
    if queues:
        parts.append("queues: " + ", ".join(queues))
    swept = {k: v for k, v in swept_values(run).items() if k != "protocol"}
    if swept:
        parts.append(", ".join(f"{k}={v}" for k, v in swept.items()))
    parts.append(f"seed {run.seed}")
    return " · ".join(parts)
