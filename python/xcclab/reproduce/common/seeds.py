"""Runs over seeds for the claims that depend on phase or chance: each case once per seed, on
the sweeps' process pool (:func:`xcclab.executor.run_tasks`), summarised as mean and 95 %
confidence interval (:func:`xcclab.claims.estimate`).

A case is a module-level function ``fn(seed=..., **kwargs) -> dict of numbers`` named as
``"module:function"``, so that a worker process can import it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...claims import Estimate, estimate
from ...executor import run_tasks

#: Seeds of the seeded cells: ten, the issue's minimum for a claim judged on an interval.
SEEDS: tuple[int, ...] = tuple(range(1, 11))


@dataclass
class SeedTask:
    fn: str  # "xcclab.reproduce.family.module:function"
    seed: int
    kwargs: dict[str, Any] = field(default_factory=dict)


def run_seed_task(task: SeedTask) -> dict[str, Any]:
    """Run one task in a worker; an exception becomes data (the pool's contract)."""
    module, name = task.fn.split(":")
    try:
        fn = getattr(importlib.import_module(module), name)
        return {"result": fn(seed=task.seed, **task.kwargs)}
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}


def over_seeds(
    fn: str,
    cases: dict[str, dict[str, Any]],
    seeds: Sequence[int] = SEEDS,
    *,
    jobs: int | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """Every case of ``cases`` (name -> kwargs of ``fn``) once per seed; results by case, in
    seed order. A task that fails raises, naming the case and the seed."""
    tasks = [SeedTask(fn, s, kw) for kw in cases.values() for s in seeds]
    ids = [f"{name}@seed{s}" for name in cases for s in seeds]
    outcomes = {task_id: (result, err) for task_id, result, err in run_tasks(
        run_seed_task, tasks, ids, jobs=jobs)}  # fmt: skip
    out: dict[str, list[dict[str, Any]]] = {}
    for name in cases:
        runs = []
        for s in seeds:
            result, err = outcomes[f"{name}@seed{s}"]
            err = err or result.get("error")
            if err is not None:
                raise RuntimeError(f"{name}, seed {s}: {err}")
            runs.append(result["result"])
        out[name] = runs
    return out


def summarise(runs: list[dict[str, Any]], key: str) -> dict[str, Any]:
    """``{"values": [...], "mean": m, "ci95": [lo, hi], "n": n}`` of ``key`` over ``runs``."""
    values = [float(r[key]) for r in runs]
    e = estimate(values)
    return {"values": values, **e.to_json()}


def seeded_cells(
    fn: str,
    cases: dict[str, dict[str, Any]],
    keys: Sequence[str],
    log: Callable[[str], None] | None = None,
    label: str = "",
    detail: str = "",
) -> dict[str, dict[str, dict[str, Any]]]:
    """Every case of ``cases`` over :data:`SEEDS` (:func:`over_seeds`), each of ``keys``
    summarised (:func:`summarise`): ``{case: {key: summary}}``, cases in their given order.
    ``log`` (if given) is told first: "LABEL: N cells x 10 seeds DETAIL"."""
    if log:
        log(f"{label}: {len(cases)} cells x {len(SEEDS)} seeds{detail}")
    runs = over_seeds(fn, cases)
    return {name: {key: summarise(r, key) for key in keys} for name, r in runs.items()}


def cell_estimate(
    metrics: dict[str, Any],
    comparison: dict[str, Any],
    seeded_key: dict[tuple[Any, Any], str],
    quantity_key: dict[str, str],
) -> float | Estimate | None:
    """Our value of a paper's table cell (a ``comparison`` of ``metrics``): the interval over
    seeds where the cell was seeded (``seeded_key`` maps (queue, delta_ratio) to the name of
    the seeded case, ``quantity_key`` the table's quantity to the summarised key), else the
    single run's value."""
    cell = comparison.get("cell", {})
    key = seeded_key.get((cell.get("queue"), cell.get("delta_ratio")))
    runs = metrics.get("seeded", {}).get(key) if key else None
    if runs and comparison["quantity"] in quantity_key:
        return from_summary(runs[quantity_key[comparison["quantity"]]])
    return comparison.get("ours")


def from_summary(summary: dict[str, Any], scale: float = 1.0) -> Estimate:
    """The :class:`Estimate` written by :func:`summarise`, times ``scale``."""
    lo, hi = summary["ci95"]
    return Estimate(summary["mean"] * scale, lo * scale, hi * scale, summary["n"])
