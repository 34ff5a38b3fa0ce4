"""Sweep specifications: a base scenario, a grid of parameters and a list of seeds.

A sweep spec is a small TOML file (format in ``docs/sweeps.md``)::

    scenario = "tiny.toml"                 # the base scenario, relative to this file
    seeds = [1, 2, 3]                      # default: the scenario's own seed
    series = true                          # false: skip the time-series tables (faster)

    [grid]                                 # dotted paths into the scenario's TOML structure
    "link[1].delay" = ["5ms", "10ms", "20ms"]
    "flow[0].transport.ecn" = [true, false]

It expands into the Cartesian product grid x seeds, one :class:`Point` each. A point's id is a
hash of the base scenario's *content*, its parameter values, its seed and ``series`` (which
changes what the run directory holds), so a rerun finds the
points it already finished (resuming), and a changed base scenario or grid never reuses a stale
result. Paths are checked against the base scenario before anything runs (an index past the end
of ``[[link]]`` is an error naming the spec file); *values* are checked by the simulator when the
point runs, so a bad value fails that point alone with the simulator's usual message.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

from .errors import ScenarioError
from .scenario import _toml_loads, read_scenario_text

SPEC_KEYS = ("name", "scenario", "seeds", "series", "grid")

#: One step of a dotted path: a table key, optionally with an array index (``link[2]``).
_STEP = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)(?:\[(\d+)\])?$")


@dataclass(frozen=True)
class Point:
    """One run of a sweep: parameter values (in grid order) and a seed."""

    index: int
    params: tuple[tuple[str, Any], ...]
    seed: int
    id: str

    def params_dict(self) -> dict[str, Any]:
        return dict(self.params)


@dataclass
class SweepSpec:
    """A parsed sweep spec; :meth:`points` expands it."""

    name: str
    scenario_path: Path
    base: dict[str, Any]  # the base scenario as parsed (TOML or JSON structure)
    grid: dict[str, list[Any]]
    seeds: list[int]
    series: bool = True
    source: str = "<sweep>"
    _points: list[Point] = field(default_factory=list, repr=False)

    def points(self) -> list[Point]:
        """The grid x seeds points, in a fixed order (grid in spec order, seeds innermost)."""
        if self._points:
            return self._points
        base_hash = _canonical(self.base)
        keys = list(self.grid)
        points = []
        for combo in itertools.product(*(self.grid[k] for k in keys)):
            for seed in self.seeds:
                params = tuple(zip(keys, combo))
                digest = hashlib.sha256(
                    _canonical(
                        {"base": base_hash, "params": params, "seed": seed, "series": self.series}
                    ).encode()
                ).hexdigest()[:12]
                points.append(Point(len(points), params, seed, digest))
        self._points = points
        return points

    def scenario_for(self, point: Point) -> dict[str, Any]:
        """The base scenario with ``point``'s parameter values written in."""
        data = copy.deepcopy(self.base)
        for path, value in point.params:
            set_path(data, path, value, source=self.source)
        return data


SpecLike = Union[str, os.PathLike, dict]


def load_spec(spec: SpecLike, *, base_dir: str | os.PathLike[str] | None = None) -> SweepSpec:
    """Read and check a sweep spec (a TOML file, or a dict with the same keys).

    Relative ``scenario`` paths are taken from the spec file's directory (or ``base_dir`` for a
    dict). Raises :class:`ScenarioError` naming the file, the field and what was expected.
    """
    if isinstance(spec, dict):
        data, source = dict(spec), "<sweep spec>"
        directory = Path(base_dir) if base_dir is not None else Path.cwd()
        default_name = "sweep"
    else:
        path = Path(spec)
        source = str(path)
        if not path.is_file():
            raise ScenarioError(f"{path}: no such sweep spec file")
        try:
            data = _toml_loads(path.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise ScenarioError(f"{path}: invalid TOML: {exc}") from exc
        directory = path.parent
        default_name = path.stem

    def bad(field_: str, expected: str) -> ScenarioError:
        return ScenarioError(f"{source}: {field_}: {expected}")

    unknown = sorted(set(data) - set(SPEC_KEYS))
    if unknown:
        raise bad(unknown[0], f"unknown field; expected one of {', '.join(SPEC_KEYS)}")
    if not isinstance(data.get("scenario"), str) or not data["scenario"]:
        raise bad("scenario", "expected the path of the base scenario (a string)")
    scenario_path = Path(data["scenario"])
    if not scenario_path.is_absolute():
        scenario_path = directory / scenario_path
    text = read_scenario_text(scenario_path)
    try:
        is_json = scenario_path.suffix.lower() == ".json"
        base = json.loads(text) if is_json else _toml_loads(text)
    except ValueError as exc:
        raise ScenarioError(f"{scenario_path}: cannot parse: {exc}") from exc

    grid = data.get("grid", {})
    if not isinstance(grid, dict):
        raise bad("grid", 'expected a table of "dotted.path" = [values]')
    probe = copy.deepcopy(base)  # checking paths creates sub-tables; keep the base pristine
    for key, values in grid.items():
        if not isinstance(values, list) or not values:
            raise bad(f"grid.{key!r}", "expected a non-empty list of values")
        try:
            get_path(probe, key, create=True)
        except KeyError as exc:
            raise bad(f"grid.{key!r}", exc.args[0]) from None

    seeds = data.get("seeds")
    if seeds is None:
        seed = base.get("seed", 1)
        seeds = [seed if isinstance(seed, int) else 1]
    if (
        not isinstance(seeds, list)
        or not seeds
        or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in seeds)
    ):
        raise bad("seeds", "expected a non-empty list of integers >= 0")
    if len(set(seeds)) != len(seeds):
        raise bad("seeds", "expected distinct seeds")
    series = data.get("series", True)
    if not isinstance(series, bool):
        raise bad("series", "expected true or false")
    name = data.get("name", default_name)
    if not isinstance(name, str) or not name:
        raise bad("name", "expected a non-empty string")
    return SweepSpec(
        name=name,
        scenario_path=scenario_path,
        base=base,
        grid={k: list(v) for k, v in grid.items()},
        seeds=list(seeds),
        series=series,
        source=source,
    )


# -- dotted paths ---------------------------------------------------------------------------
def parse_path(path: str) -> list[tuple[str, int | None]]:
    """``"flow[0].transport.ecn"`` -> ``[("flow", 0), ("transport", None), ("ecn", None)]``."""
    steps = []
    for part in path.split("."):
        m = _STEP.match(part)
        if m is None:
            raise KeyError(
                f"bad path step {part!r}; expected key or key[index] separated by dots, "
                'e.g. "link[2].rate"'
            )
        steps.append((m.group(1), None if m.group(2) is None else int(m.group(2))))
    return steps


def get_path(data: dict[str, Any], path: str, *, create: bool = False) -> tuple[dict, str]:
    """The table holding the last key of ``path`` and that key.

    Missing intermediate tables are created when ``create`` (a ``[flow.transport]`` table the
    base scenario leaves out); arrays must exist and indices be in range, since an entry that is
    not in the base scenario cannot be meaningfully half-written by a sweep.
    """
    steps = parse_path(path)
    node: Any = data
    for i, (key, index) in enumerate(steps):
        last = i == len(steps) - 1
        if not isinstance(node, dict):
            raise KeyError(f"{'.'.join(k for k, _ in steps[:i])} is not a table")
        if index is not None:
            array = node.get(key)
            if not isinstance(array, list):
                raise KeyError(f"the base scenario has no [[{key}]] array")
            if index >= len(array):
                raise KeyError(
                    f"index {index} is out of range: the base scenario has {len(array)} "
                    f"[[{key}]] entries (indices from 0)"
                )
            if last:
                raise KeyError(f"{key}[{index}] is a whole entry; address one of its fields")
            node = array[index]
            continue
        if last:
            return node, key
        if key not in node:
            if not create:
                raise KeyError(f"no table {key!r}")
            node[key] = {}
        node = node[key]
    raise KeyError("empty path")


def set_path(data: dict[str, Any], path: str, value: Any, *, source: str = "<sweep>") -> None:
    """Write ``value`` at ``path`` in ``data`` (creating missing sub-tables)."""
    try:
        table, key = get_path(data, path, create=True)
    except KeyError as exc:
        raise ScenarioError(f"{source}: grid.{path!r}: {exc.args[0]}") from None
    table[key] = value


def column_name(path: str) -> str:
    """The SQL-friendly column name of a parameter: ``link[1].delay`` -> ``link_1_delay``."""
    return re.sub(r"_+", "_", re.sub(r"[^A-Za-z0-9_]", "_", path)).strip("_")


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
