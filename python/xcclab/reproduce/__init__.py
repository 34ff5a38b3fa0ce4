"""Paper reproductions: one :class:`~xcclab.reproduce.experiment.Experiment` per experiment id
of ``experiments.md``.

Each experiment's ``run(out_dir, quick=False)`` writes ``report.md`` (the paper's claims beside
our measurements), ``metrics.json`` and figures into ``out_dir`` (atomically), with the
simulator runs under ``out_dir/runs/``; :func:`run` then scores its claims
(:mod:`xcclab.reproduce.verdicts`). ``quick=True`` shortens the runs for tests; its numbers are
not meant to match the paper.

Adding an experiment: a module in this package that builds an ``Experiment`` (id, seed, title,
summary, run, claims, and optionally emu / stack) at module level. The registry finds it by
importing every module of the package; there is no list to edit.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache
from pathlib import Path

from .experiment import Experiment

__all__ = ["Experiment", "experiments", "get", "run"]


@lru_cache(maxsize=1)
def experiments() -> tuple[Experiment, ...]:
    """Every experiment defined in this package, by paper and id."""
    found: dict[str, Experiment] = {}
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        for value in vars(module).values():
            if isinstance(value, Experiment):
                other = found.setdefault(value.id, value)
                if other is not value:
                    raise RuntimeError(f"experiment id {value.id!r} is defined twice")
    return tuple(sorted(found.values(), key=lambda e: (e.seed, e.id)))


def get(experiment_id: str) -> Experiment:
    """The experiment ``experiment_id``; ``KeyError`` with the known ids if there is none."""
    for e in experiments():
        if e.id == experiment_id:
            return e
    known = ", ".join(e.id for e in experiments())
    raise KeyError(
        f"unknown experiment {experiment_id!r}; known: {known} (`xcc reproduce --list` shows all)"
    )


def run(experiment_id: str, out_dir: str | Path, *, quick: bool = False, **kwargs) -> Path:
    """Run experiment ``experiment_id`` into ``out_dir``, score its claims; return the report."""
    from .verdicts import judge_directory

    e = get(experiment_id)
    report = e.run(Path(out_dir), quick=quick, **kwargs)
    judge_directory(e, Path(out_dir))
    return report
