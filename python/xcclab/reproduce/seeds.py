"""Runs over seeds for the claims that depend on phase or chance: each case once per seed, on
the sweeps' process pool (:func:`xcclab.executor.run_tasks`), summarised as mean and 95 %
confidence interval (:func:`xcclab.claims.estimate`).

A case is a module-level function ``fn(seed=..., **kwargs) -> dict of numbers`` named as
``"module:function"``, so that a worker process can import it.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..claims import Estimate, estimate
from ..executor import run_tasks

#: Seeds of the seeded cells: ten, the issue's minimum for a claim judged on an interval.
SEEDS: tuple[int, ...] = tuple(range(1, 11))


@dataclass
class SeedTask:
    fn: str  # "xcclab.reproduce.module:function"
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


def from_summary(summary: dict[str, Any], scale: float = 1.0) -> Estimate:
    """The :class:`Estimate` written by :func:`summarise`, times ``scale``."""
    lo, hi = summary["ci95"]
    return Estimate(summary["mean"] * scale, lo * scale, hi * scale, summary["n"])
