"""Paper reproductions: one :class:`~xcclab.reproduce.experiment.Experiment` per experiment id
of ``experiments.md``.

Each experiment's ``run(out_dir, quick=False)`` writes ``report.md`` (the paper's claims beside
our measurements), ``metrics.json`` and figures into ``out_dir`` (atomically), with the
simulator runs under ``out_dir/runs/``; :func:`run` then scores its claims
(:mod:`xcclab.reproduce.verdicts`). ``quick=True`` shortens the runs for tests; its numbers are
not meant to match the paper.

The experiments live by paper in subpackages (``maxnet/`` seed 000, ``mice/`` 001, ``xcc/`` 002,
``markmax/`` 003, ``slbn/`` 004, ``baselines/`` beyond the papers; ``common/`` holds the helpers
they share). Adding an experiment: a module in its paper's subpackage that builds an
``Experiment`` (id, seed, title, summary, run, claims) at module level; its real-packet or
Linux-stack version is a module of its own that builds a :class:`~.experiment.Variant` naming
the id. The registry finds both by importing every module of the subpackages; there is no list
to edit, and an experiment never imports its variants.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from types import ModuleType

from .experiment import Experiment, Variant

__all__ = ["Experiment", "Variant", "experiments", "get", "run"]


def _modules() -> Iterable[ModuleType]:
    """Every module of the family subpackages (``maxnet.maxnet_cbr``, ...), imported."""
    for info in pkgutil.walk_packages(__path__, f"{__name__}."):
        yield importlib.import_module(info.name)


def collect(modules: Iterable[ModuleType]) -> tuple[Experiment, ...]:
    """The experiments ``modules`` define, each with the variants they define attached, by
    paper and id. Raises ``RuntimeError`` on an id defined twice, a variant of an unknown
    experiment or two variants of one kind for one experiment."""
    found: dict[str, Experiment] = {}
    variants: dict[tuple[str, str], Variant] = {}
    for module in modules:
        for value in vars(module).values():
            if isinstance(value, Experiment):
                other = found.setdefault(value.id, value)
                if other is not value:
                    raise RuntimeError(f"experiment id {value.id!r} is defined twice")
            elif isinstance(value, Variant):
                other = variants.setdefault((value.experiment, value.kind), value)
                if other is not value:
                    raise RuntimeError(
                        f"experiment {value.experiment!r} has two {value.kind} variants "
                        f"({module.__name__} and another module)"
                    )
    for (experiment_id, kind), v in variants.items():
        e = found.get(experiment_id)
        if e is None:
            raise RuntimeError(f"{kind} variant of {experiment_id!r}: no such experiment")
        if getattr(e, kind) is not None:
            raise RuntimeError(f"experiment {experiment_id!r} sets {kind} itself and in a variant")
        found[experiment_id] = dataclasses.replace(e, **{kind: v.run})
    return tuple(sorted(found.values(), key=lambda e: (e.seed, e.id)))


@lru_cache(maxsize=1)
def experiments() -> tuple[Experiment, ...]:
    """Every experiment defined in this package, by paper and id, with its variants."""
    return collect(_modules())


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
