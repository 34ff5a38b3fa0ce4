"""Sweep specifications: a base scenario, a grid of parameters and a list of seeds.

A sweep spec is a small TOML file (format in ``docs/sweeps.md``)::

    scenario = "tiny.toml"                 # the base scenario, relative to this file
    seeds = [1, 2, 3]                      # default: the scenario's own seed
    series = true                          # false: skip the time-series tables (faster)

    protocols = ["xcp", "rcp", "maxnet"]   # sets every flow's cc and every explicit queue

    [variants.small-buffer]                # linked parameters: one named value, several fields
    "link[*].buffer" = "50pkt"
    [variants.large-buffer]
    "link[*].buffer" = "500pkt"

    [grid]                                 # dotted paths into the scenario's TOML structure
    "link[1].delay" = ["5ms", "10ms", "20ms"]
    "flow[0].transport.ecn" = [true, false]

It expands into the Cartesian product protocols x variants x grid x seeds, one :class:`Point`
each, whose parameters are ``protocol`` (the protocol's name), ``variant`` (the variant's name)
and the grid's paths, each present only when the spec uses it. A point's id is a
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

SPEC_KEYS = ("name", "scenario", "seeds", "series", "protocols", "variants", "grid")
#: Parameter names of the two named dimensions (also their manifest and catalog columns).
PROTOCOL = "protocol"
VARIANT = "variant"
#: A protocol entry's keys: ``{ name = "maxnet-95", cc = "maxnet", queue = { kind = ... } }``.
PROTOCOL_KEYS = ("name", "cc", "queue")

#: One step of a dotted path: a table key, optionally with an array index (``link[2]``).
_STEP = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)(?:\[(\d+|\*)\])?$")


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
    #: name -> {"cc": ..., "queue": ...}, in spec order.
    protocols: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: name -> {path: value}, in spec order.
    variants: dict[str, dict[str, Any]] = field(default_factory=dict)
    _points: list[Point] = field(default_factory=list, repr=False)

    def dimensions(self) -> dict[str, list[Any]]:
        """Parameter name -> values: ``protocol``, ``variant`` (names), then the grid."""
        dims: dict[str, list[Any]] = {}
        if self.protocols:
            dims[PROTOCOL] = list(self.protocols)
        if self.variants:
            dims[VARIANT] = list(self.variants)
        dims.update(self.grid)
        return dims

    def points(self) -> list[Point]:
        """The points in a fixed order (dimensions in spec order, seeds innermost)."""
        if self._points:
            return self._points
        base_hash = _canonical(self.base)
        dims = self.dimensions()
        keys = list(dims)
        # What a protocol or variant name stands for is part of the point's identity.
        meaning = {}
        if self.protocols:
            meaning["protocols"] = self.protocols
        if self.variants:
            meaning["variants"] = self.variants
        points = []
        for combo in itertools.product(*(dims[k] for k in keys)):
            for seed in self.seeds:
                params = tuple(zip(keys, combo))
                key = {"base": base_hash, "params": params, "seed": seed, "series": self.series}
                for name, table in meaning.items():
                    chosen = dict(params)[PROTOCOL if name == "protocols" else VARIANT]
                    key[name] = table[chosen]
                digest = hashlib.sha256(_canonical(key).encode()).hexdigest()[:12]
                points.append(Point(len(points), params, seed, digest))
        self._points = points
        return points

    def scenario_for(self, point: Point) -> dict[str, Any]:
        """The base scenario with ``point``'s parameter values written in."""
        data = copy.deepcopy(self.base)
        for path, value in point.params:
            if path == PROTOCOL and self.protocols:
                apply_protocol(data, self.protocols[value])
            elif path == VARIANT and self.variants:
                for vpath, vvalue in self.variants[value].items():
                    set_path(data, vpath, vvalue, source=self.source)
            else:
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
        if key in (PROTOCOL, VARIANT):
            raise bad(f"grid.{key!r}", f"{key!r} is a reserved parameter name; use {key}s")
        try:
            targets(probe, key, create=True)
        except KeyError as exc:
            raise bad(f"grid.{key!r}", exc.args[0]) from None
    protocols = _protocols(data.get("protocols"), bad)
    if protocols and not explicit_links(base):
        raise bad(
            "protocols",
            f"the base scenario {scenario_path} has no link with an explicit queue; write "
            'queue = "droptail" (or any discipline) on the links the protocol should run on',
        )
    variants = data.get("variants", {})
    if not isinstance(variants, dict):
        raise bad("variants", 'expected tables [variants.NAME] of "dotted.path" = value')
    for vname, settings in variants.items():
        if not isinstance(settings, dict) or not settings:
            raise bad(f"variants.{vname}", 'expected a non-empty table of "dotted.path" = value')
        for key in settings:
            try:
                targets(probe, key, create=True)
            except KeyError as exc:
                raise bad(f"variants.{vname}.{key!r}", exc.args[0]) from None

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
        protocols=protocols,
        variants={k: dict(v) for k, v in variants.items()},
    )


def _protocols(value: Any, bad: Any) -> dict[str, dict[str, Any]]:
    """``protocols = ["xcp", { name = "maxnet-95", cc = "maxnet", queue = {...} }]`` as
    name -> {"cc", "queue"}: a string names a protocol whose source and router kinds are both
    that name; a table gives them separately (each defaults to the name)."""
    if value is None:
        return {}
    if not isinstance(value, list) or not value:
        raise bad("protocols", 'expected a non-empty list of names ("xcp") or tables')
    out: dict[str, dict[str, Any]] = {}
    for k, entry in enumerate(value):
        if isinstance(entry, str) and entry:
            name, cc, queue = entry, entry, entry
        elif isinstance(entry, dict):
            unknown = sorted(set(entry) - set(PROTOCOL_KEYS))
            if unknown:
                raise bad(
                    f"protocols[{k}].{unknown[0]}",
                    f"unknown field; expected one of {', '.join(PROTOCOL_KEYS)}",
                )
            name = entry.get("name")
            if not isinstance(name, str) or not name:
                raise bad(f"protocols[{k}].name", "expected a non-empty string")
            cc, queue = entry.get("cc", name), entry.get("queue", name)
        else:
            raise bad(f"protocols[{k}]", 'expected a name ("xcp") or a table with name = ...')
        if name in out:
            raise bad(f"protocols[{k}].name", f"{name!r} appears twice")
        out[name] = {"cc": cc, "queue": queue}
    return out


def explicit_links(scenario: dict[str, Any]) -> list[int]:
    """Indices of the ``[[link]]`` entries that set ``queue`` (or ``reverse.queue``)."""
    links = scenario.get("link", [])
    return [
        i
        for i, link in enumerate(links)
        if isinstance(link, dict) and ("queue" in link or "queue" in (link.get("reverse") or {}))
    ]


def apply_protocol(scenario: dict[str, Any], protocol: dict[str, Any]) -> None:
    """Set ``cc`` of every bulk flow, arrivals and transactions entry, and ``queue`` of every
    link (and reverse direction) that sets one explicitly, so the whole path runs one protocol;
    links left at the default (access links) keep DropTail."""
    for key in ("flow", "arrivals", "transactions"):
        for entry in scenario.get(key, []):
            if isinstance(entry, dict) and entry.get("kind", "bulk") == "bulk":
                entry["cc"] = copy.deepcopy(protocol["cc"])
    for i in explicit_links(scenario):
        link = scenario["link"][i]
        if "queue" in link:
            link["queue"] = copy.deepcopy(protocol["queue"])
        if "queue" in (link.get("reverse") or {}):
            link["reverse"]["queue"] = copy.deepcopy(protocol["queue"])


# -- dotted paths ---------------------------------------------------------------------------
def parse_path(path: str) -> list[tuple[str, int | str | None]]:
    """``"flow[0].transport.ecn"`` -> ``[("flow", 0), ("transport", None), ("ecn", None)]``;
    ``[*]`` gives ``"*"``."""
    steps = []
    for part in path.split("."):
        m = _STEP.match(part)
        if m is None:
            raise KeyError(
                f"bad path step {part!r}; expected key, key[index] or key[*] separated by "
                'dots, e.g. "link[2].rate"'
            )
        index = m.group(2)
        steps.append((m.group(1), int(index) if index and index.isdigit() else index))
    return steps


def targets(data: dict[str, Any], path: str, *, create: bool = False) -> list[tuple[dict, str]]:
    """The tables holding the last key of ``path``, with that key: one, or one per entry of
    an array addressed with ``[*]`` (``link[*].buffer``: every ``[[link]]``).

    Missing intermediate tables are created when ``create`` (a ``[flow.transport]`` table the
    base scenario leaves out); arrays must exist and indices be in range, since an entry that is
    not in the base scenario cannot be meaningfully half-written by a sweep.
    """
    steps = parse_path(path)
    nodes: list[Any] = [data]
    for i, (key, index) in enumerate(steps):
        last = i == len(steps) - 1
        where = ".".join(k for k, _ in steps[:i])
        following: list[Any] = []
        for node in nodes:
            if not isinstance(node, dict):
                raise KeyError(f"{where} is not a table")
            if index is not None:
                array = node.get(key)
                if not isinstance(array, list):
                    raise KeyError(f"the base scenario has no [[{key}]] array")
                if last:
                    raise KeyError(f"{key}[{index}] is a whole entry; address one of its fields")
                if index == "*":
                    following.extend(array)
                    continue
                if int(index) >= len(array):
                    raise KeyError(
                        f"index {index} is out of range: the base scenario has {len(array)} "
                        f"[[{key}]] entries (indices from 0)"
                    )
                following.append(array[int(index)])
                continue
            if last:
                following.append((node, key))
                continue
            if key not in node:
                if not create:
                    raise KeyError(f"no table {key!r}")
                node[key] = {}
            following.append(node[key])
        nodes = following
    if not steps:
        raise KeyError("empty path")
    return nodes


def get_path(data: dict[str, Any], path: str, *, create: bool = False) -> tuple[dict, str]:
    """The table holding the last key of ``path`` and that key (a path without ``[*]``)."""
    found = targets(data, path, create=create)
    if len(found) != 1:
        raise KeyError(f"{path} addresses {len(found)} fields; expected one")
    return found[0]


def set_path(data: dict[str, Any], path: str, value: Any, *, source: str = "<sweep>") -> None:
    """Write ``value`` at ``path`` in ``data`` (creating missing sub-tables; every entry for
    ``[*]``)."""
    try:
        found = targets(data, path, create=True)
    except KeyError as exc:
        raise ScenarioError(f"{source}: grid.{path!r}: {exc.args[0]}") from None
    for table, key in found:
        table[key] = copy.deepcopy(value)


def column_name(path: str) -> str:
    """The SQL-friendly column name of a parameter: ``link[1].delay`` -> ``link_1_delay``."""
    return re.sub(r"_+", "_", re.sub(r"[^A-Za-z0-9_]", "_", path)).strip("_")


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
