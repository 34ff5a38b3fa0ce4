"""xcclab: a lab for explicit congestion control.

The simulator is written in Rust (``crates/``) and exposed as :mod:`xcclab._native`; this
package adds the scenario builder, result tables, plots, the ``xcc`` command line and the
paper reproductions.

Quick start::

    import xcclab
    res = xcclab.run("scenarios/dumbbell-10.toml", out="out/dumbbell-10")
    print(res.flows.select("name", "goodput_bps"))

The public names are imported lazily (PEP 562) so that ``python -m xcclab._bench_worker``
imports nothing but the native module: benchmark memory figures then measure the simulator,
not polars and matplotlib.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._version import __version__

__all__ = [
    "RunResult",
    "Scenario",
    "__version__",
    "catalog",
    "max_min_fair",
    "run",
    "sweep",
    "validate",
]

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from .maxmin import max_min_fair
    from .results import RunResult, run, validate
    from .results_catalog import catalog
    from .scenario import Scenario
    from .sweep_runner import sweep

_LAZY = {
    "run": "results",
    "validate": "results",
    "RunResult": "results",
    "Scenario": "scenario",
    "sweep": "sweep_runner",
    "catalog": "results_catalog",
    "max_min_fair": "maxmin",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'xcclab' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
