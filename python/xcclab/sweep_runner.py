"""Run a sweep: every point of a :class:`~xcclab.sweep_spec.SweepSpec` on a pool or a cluster.

(The module is not called ``sweep`` so that importing it never hides the function
``xcclab.sweep`` behind a module attribute of the same name.)

Layout of the output directory (``docs/sweeps.md``)::

    OUT/manifest.json        the spec, and per point: id, parameters, seed, status, error
    OUT/manifest.parquet     the same, one row per point, one column per parameter
    OUT/points/<id>/         the point's run directory (run.json, Parquet tables, ...)

Why it is built this way:

- **Each point is independent and writes its own run directory atomically** (the usual
  :meth:`RunResult.save`), so a point either finished completely or left nothing. Resuming is
  then just "skip points whose ``run.json`` exists"; a crash or Ctrl-C never leaves a run the
  catalog would read half-written.
- **Every point is checked before any runs** (:func:`check_points`): a bad value (the
  simulator's ``ValueError`` naming the point and the field) anywhere in the grid fails the
  whole sweep with exit 2 before a single point ran or a directory was made, since a typo in one
  protocol is found in milliseconds and would otherwise cost every other point's run first.
- **A point that fails while running is recorded, not raised**: a broken invariant or an
  unwritable run directory becomes ``status = "failed"`` with the message, and the other points
  go on; so does a point whose worker process died (:mod:`xcclab.executor`). Rerunning the sweep
  retries exactly those.
- **Executors are interchangeable** (:mod:`xcclab.executor`): the local process pool (default,
  all cores) and Dask distributed (``scheduler=ADDRESS`` or ``local_cluster=True``) run the same
  top-level function :func:`run_point`, and the simulator is deterministic, so the tables are
  identical whichever ran them. Dask workers need xcclab installed and ``OUT`` on a filesystem
  they share with the client.
- **The manifest is deterministic** (no wall times; those stay in each ``timing.json``), so two
  sweeps of the same spec give identical manifests.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._fsutil import write_text_atomic
from .executor import run_tasks
from .isolated import Limits
from .sweep_manifest import MANIFEST_FORMAT
from .sweep_manifest import load_manifest as load_manifest  # re-exported: readers import it here
from .sweep_spec import Point, SpecLike, SweepSpec, column_name, load_spec

POINTS_DIR = "points"


@dataclass
class PointTask:
    """Everything a worker needs to run one point (picklable, no open handles)."""

    point_id: str
    index: int
    params: dict[str, Any]
    seed: int
    scenario_json: str
    source: str
    run_dir: str
    series: bool


def run_point(task: PointTask) -> dict[str, Any]:
    """Run one point and write its run directory; never raises for a bad point.

    Returns ``{"id", "status": "ok"|"failed", "error"}``. Runs in a worker process (pool or
    Dask), so it imports lazily and returns plain data.
    """
    from .results import ScenarioInput, run

    try:
        inp = ScenarioInput(task.scenario_json, task.source, "json")
        run(inp, seed=task.seed, out=task.run_dir, series=task.series)
    except Exception as exc:  # a failing point is data, not a reason to stop the sweep
        return {"id": task.point_id, "status": "failed", "error": _message(exc)}
    return {"id": task.point_id, "status": "ok", "error": None}


def check_points(tasks: list[PointTask], *, shown: int = 5) -> None:
    """Validate every point's scenario with the simulator's own checks (what ``xcc run`` does
    before it simulates); raise :class:`~xcclab.errors.ScenarioError` listing the bad points.

    Points that differ only in their seed share a scenario, which is checked once.
    """
    from .errors import ScenarioError, load_native

    native = load_native()
    verdicts: dict[str, str | None] = {}
    bad: list[str] = []
    for task in tasks:
        if task.scenario_json not in verdicts:
            try:
                native.validate(task.scenario_json, task.source, "json")
                verdicts[task.scenario_json] = None
            except ValueError as exc:
                verdicts[task.scenario_json] = str(exc)
        error = verdicts[task.scenario_json]
        if error is not None:
            bad.append(f"point {task.point_id} (seed {task.seed}): {error}")
    if bad:
        listed = "\n  ".join(bad[:shown])
        more = f"\n  ... and {len(bad) - shown} more" if len(bad) > shown else ""
        raise ScenarioError(
            f"{len(bad)} of {len(tasks)} sweep points are invalid; nothing was run or written:"
            f"\n  {listed}{more}"
        )


def _message(exc: BaseException) -> str:
    kind = "" if isinstance(exc, (ValueError, RuntimeError)) else f"{type(exc).__name__}: "
    return f"{kind}{exc}"


@dataclass
class SweepResult:
    """The outcome of :func:`sweep`: where it wrote, the points and what happened to them."""

    out: Path
    spec: SweepSpec
    records: list[dict[str, Any]]  # manifest rows, in point order
    ran: int
    skipped: int

    @property
    def failed(self) -> list[dict[str, Any]]:
        return [r for r in self.records if r["status"] != "ok"]

    @property
    def manifest(self) -> Any:
        """The manifest as a polars DataFrame (one row per point)."""
        return manifest_frame(self.spec, self.records)

    def summary(self) -> str:
        lines = [
            f"sweep {self.spec.name!r}: {len(self.records)} points "
            f"({self.ran} run, {self.skipped} already done), {len(self.failed)} failed"
        ]
        for r in self.failed:
            lines.append(f"  point {r['point_id']} {_describe(r)}: {r['error']}")
        return "\n".join(lines)


def _describe(record: dict[str, Any]) -> str:
    params = ", ".join(f"{k}={v!r}" for k, v in record["params"].items())
    return f"({params}, seed={record['seed']})" if params else f"(seed={record['seed']})"


def sweep(
    spec: SpecLike,
    out: str | os.PathLike[str],
    *,
    jobs: int | None = None,
    scheduler: str | None = None,
    local_cluster: bool = False,
    progress: bool = True,
    base_dir: str | os.PathLike[str] | None = None,
    limits: Limits | None = None,
) -> SweepResult:
    """Expand ``spec`` and run every point not finished yet; write the manifest.

    ``jobs`` is the number of local worker processes (default: all cores). ``scheduler`` is the
    address of a Dask distributed scheduler (``tcp://host:8786``); ``local_cluster=True`` starts a
    :class:`dask.distributed.LocalCluster` with ``jobs`` workers. Returns a :class:`SweepResult`;
    failed points are in its manifest, not raised. ``limits``: a time and a memory limit per
    point (:class:`xcclab.isolated.Limits`); a point past either is killed and recorded as
    failed with the limit it passed.
    """
    sp = load_spec(spec, base_dir=base_dir)
    out = Path(out)
    points = sp.points()
    all_tasks = [_task(sp, point, out / POINTS_DIR / point.id) for point in points]
    check_points(all_tasks)  # raises before anything is run or written
    tasks, done = [], []
    for point, task in zip(points, all_tasks, strict=True):
        if (Path(task.run_dir) / "run.json").is_file():
            done.append(point.id)
            continue
        tasks.append(task)
    outcome: dict[str, dict[str, Any]] = {pid: {"status": "ok", "error": None} for pid in done}
    (out / POINTS_DIR).mkdir(parents=True, exist_ok=True)
    if tasks:
        bar = _bar(len(tasks), sp.name, progress)
        try:
            results = run_tasks(
                run_point,
                tasks,
                [t.point_id for t in tasks],
                jobs=jobs,
                scheduler=scheduler,
                local_cluster=local_cluster,
                on_done=lambda: bar.update(1),
                limits=limits,
            )
        finally:
            bar.close()
        for point_id, r, crash in results:
            outcome[point_id] = (
                {"status": r["status"], "error": r["error"]}
                if crash is None
                else {"status": "failed", "error": crash}
            )
    records = [_record(sp, p, outcome[p.id]) for p in points]
    _write_manifest(out, sp, records)
    return SweepResult(out, sp, records, ran=len(tasks), skipped=len(done))


def _task(sp: SweepSpec, point: Point, run_dir: Path) -> PointTask:
    params = point.params_dict()
    label = ", ".join(f"{k}={v!r}" for k, v in params.items())
    return PointTask(
        point_id=point.id,
        index=point.index,
        params=params,
        seed=point.seed,
        scenario_json=json.dumps(sp.scenario_for(point)),
        # The simulator prefixes its errors with this, so a bad value names the point.
        source=f"{sp.scenario_path} [sweep point {point.id}: {label}]"
        if label
        else f"{sp.scenario_path} [sweep point {point.id}]",
        run_dir=str(run_dir),
        series=sp.series,
    )


def _record(sp: SweepSpec, point: Point, outcome: dict[str, Any]) -> dict[str, Any]:
    return {
        "point_id": point.id,
        "index": point.index,
        "params": point.params_dict(),
        "seed": point.seed,
        "status": outcome["status"],
        "error": outcome["error"],
        "run_dir": f"{POINTS_DIR}/{point.id}",
    }


# -- progress -------------------------------------------------------------------------------
def _bar(total: int, name: str, progress: bool) -> Any:
    from tqdm import tqdm

    return tqdm(
        total=total,
        desc=f"sweep {name}",
        unit="point",
        file=sys.stderr,
        disable=None if progress else True,
        leave=False,
    )


# -- manifest -------------------------------------------------------------------------------
def manifest_frame(sp: SweepSpec, records: Iterable[dict[str, Any]]) -> Any:
    """One row per point: point_id, index, one column per parameter (and its SI value when it
    has units, ``<column>_si``), seed, status, error."""
    import polars as pl

    from .units import quantity_value

    records = list(records)
    columns: dict[str, Any] = {
        "point_id": pl.Series([r["point_id"] for r in records], dtype=pl.String),
        "index": pl.Series([r["index"] for r in records], dtype=pl.Int64),
    }
    for path in sp.dimensions():
        values = [r["params"][path] for r in records]
        columns[column_name(path)] = param_series(path, values)
        numbers = [quantity_value(v) if isinstance(v, str) else None for v in values]
        if any(n is not None for n in numbers):  # "20ms" -> 0.02 (s), beside the text
            columns[f"{column_name(path)}_si"] = pl.Series(numbers, dtype=pl.Float64)
    columns["seed"] = pl.Series([r["seed"] for r in records], dtype=pl.Int64)
    columns["status"] = pl.Series([r["status"] for r in records], dtype=pl.String)
    columns["error"] = pl.Series([r["error"] for r in records], dtype=pl.String)
    columns["run_dir"] = pl.Series([r["run_dir"] for r in records], dtype=pl.String)
    return pl.DataFrame(columns)


def param_series(path: str, values: list[Any]) -> Any:
    """A parameter column: its natural type when all values share one, else strings."""
    import polars as pl

    kinds = {type(v) for v in values}
    name = column_name(path)
    if kinds <= {bool}:
        return pl.Series(name, values, dtype=pl.Boolean)
    if kinds <= {int}:
        return pl.Series(name, values, dtype=pl.Int64)
    if kinds <= {int, float}:
        return pl.Series(name, [float(v) for v in values], dtype=pl.Float64)
    return pl.Series(
        name, [v if isinstance(v, str) else json.dumps(v) for v in values], dtype=pl.String
    )


def _write_manifest(out: Path, sp: SweepSpec, records: list[dict[str, Any]]) -> None:
    data = {
        "format": MANIFEST_FORMAT,
        "name": sp.name,
        "scenario": str(sp.scenario_path),
        "grid": sp.grid,
        "columns": {path: column_name(path) for path in sp.dimensions()},
        "seeds": sp.seeds,
        "series": sp.series,
        "points": records,
    }
    # Only when used, so manifests of specs without them stay as they were.
    if sp.protocols:
        data["protocols"] = sp.protocols
    if sp.variants:
        data["variants"] = sp.variants
    write_text_atomic(out / "manifest.json", json.dumps(data, indent=2) + "\n")
    tmp = out / ".manifest.parquet.tmp"
    manifest_frame(sp, records).write_parquet(tmp, compression="zstd", statistics=True)
    os.replace(tmp, out / "manifest.parquet")
