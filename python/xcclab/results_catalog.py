"""The results catalog: every run under a directory as DuckDB views, queried with SQL.

``xcclab.catalog(root)`` (and ``xcc query "SQL" --root DIR``) finds every run directory under
``root`` (a ``run.json`` written by ``xcc run``, a sweep point, a reproduction's ``runs/``) and
opens an in-memory DuckDB database with:

- ``runs``: one row per run directory: ``run_dir`` (relative to ``root``), ``scenario``,
  ``seed``, ``source``, ``duration_s``, ``events``, ``packet_hops``, ``wall_seconds``, and for
  sweep points ``sweep`` (the spec's name), ``sweep_dir`` (its directory), ``point_id``,
  ``params`` (JSON) and one column per swept parameter (``link[2].delay`` -> ``link_2_delay``
  as written, plus ``link_2_delay_si`` in seconds, bit/s or bytes when the values carry units;
  the text column is then a DuckDB ``ENUM`` ordered by that number, so ``ORDER BY
  link_2_delay`` puts ``"20ms"`` before ``"100ms"`` and ``= '20ms'`` still compares as text);
- ``flows``, ``links``, ``flow_series``, ``link_series``, ``transactions``: views over the
  Parquet files of every run, each row tagged with ``run_dir``, ``sweep``, ``point_id``,
  ``seed`` and the parameter columns; ``session_samples`` and ``session_rates`` (the schema's
  optional tables, seed 004's error metrics) the same over the runs that have them, empty
  with their typed columns when none has.

Why DuckDB and views: the Parquet files stay the single source of truth (nothing is copied or
imported; a new run shows up in the next query), DuckDB reads them in parallel with projection
and filter push-down, and it is embedded (a pip wheel, no server). The small ``runs`` table is
built in Python from the JSON files, because it also carries the sweep manifests' parameters.
Results come back as polars DataFrames (built from rows: DuckDB's own polars export would need
pyarrow, which nothing else here needs).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import ScenarioError
from .schema import TABLES
from .sweep_runner import MANIFEST_FORMAT
from .units import quantity_value

_SQL_TYPE = {"i64": "BIGINT", "f64": "DOUBLE", "str": "VARCHAR"}

#: Columns of ``runs`` before the parameter columns, with their SQL types.
RUN_COLUMNS = (
    ("run_dir", "VARCHAR"),
    ("scenario", "VARCHAR"),
    ("seed", "BIGINT"),
    ("source", "VARCHAR"),
    ("duration_s", "DOUBLE"),
    ("events", "BIGINT"),
    ("packet_hops", "BIGINT"),
    ("wall_seconds", "DOUBLE"),
    ("sweep", "VARCHAR"),
    ("sweep_dir", "VARCHAR"),
    ("point_id", "VARCHAR"),
    ("params", "VARCHAR"),
)
#: Columns of ``runs`` that tag every row of the data views.
TAG_COLUMNS = ("run_dir", "sweep", "sweep_dir", "point_id", "seed")


@dataclass(frozen=True)
class Param:
    """A swept parameter as a column: its name, SQL type, and whether it has an ``_si`` twin
    (then ``sql_type`` is an ENUM of its values in numeric order, ``enum_values``)."""

    path: str
    column: str
    sql_type: str
    has_si: bool
    enum_values: tuple[str, ...] = ()


class Catalog:
    """An open catalog over ``root``; :meth:`sql` runs a query and returns a polars DataFrame."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        import duckdb

        self.root = Path(root)
        if not self.root.is_dir():
            raise ScenarioError(f"{self.root}: no such directory")
        self.con = duckdb.connect(":memory:")
        runs, self.params = _scan(self.root)
        self.run_count = len(runs)
        self._create_runs(runs)
        for name in TABLES:
            self._create_view(name, [r["_dir"] for r in runs])
        self._create_run_metrics()

    # -- queries ---------------------------------------------------------------------------
    def sql(self, query: str) -> Any:
        """Run ``query``; the result as a polars DataFrame (``duckdb.Error`` if it is bad)."""
        import polars as pl

        rel = self.con.execute(query)
        if rel.description is None:  # a statement without a result (CREATE, SET, ...)
            return pl.DataFrame()
        names = [d[0] for d in rel.description]
        rows = rel.fetchall()
        return pl.DataFrame(rows, schema=names, orient="row", infer_schema_length=None)

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> Catalog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- construction ----------------------------------------------------------------------
    def _create_runs(self, runs: list[dict[str, Any]]) -> None:
        cols = list(RUN_COLUMNS)
        for p in self.params:
            if p.enum_values:
                values = ", ".join(_literal(v) for v in p.enum_values)
                self.con.execute(f'CREATE TYPE "{p.sql_type}" AS ENUM ({values})')
        for p in self.params:
            cols.append((p.column, p.sql_type))
            if p.has_si:
                cols.append((f"{p.column}_si", "DOUBLE"))
        self.con.execute("CREATE TABLE runs (" + ", ".join(f'"{c}" {t}' for c, t in cols) + ")")
        if runs:
            placeholders = ", ".join("?" for _ in cols)
            self.con.executemany(
                f"INSERT INTO runs VALUES ({placeholders})",
                [[r.get(c) for c, _ in cols] for r in runs],
            )
        self._tags = [c for c in TAG_COLUMNS] + [
            name for p in self.params for name in (p.column, f"{p.column}_si")[: 1 + p.has_si]
        ]

    def _create_view(self, table: str, run_dirs: list[Path]) -> None:
        files = [(str(d / f"{table}.parquet"), d) for d in run_dirs]
        files = [(f, d) for f, d in files if os.path.isfile(f)]
        tags = ", ".join(f'r."{c}"' for c in self._tags)
        if not files:
            typed = ", ".join(
                f'CAST(NULL AS {_SQL_TYPE[c.dtype]}) AS "{c.name}"' for c in TABLES[table]
            )
            self.con.execute(
                f"CREATE VIEW {table} AS SELECT {tags}, {typed} FROM runs r WHERE false"
            )
            return
        index = f"_files_{table}"
        self.con.execute(f"CREATE TABLE {index} (file VARCHAR, run_dir VARCHAR)")
        self.con.executemany(
            f"INSERT INTO {index} VALUES (?, ?)",
            [[f, _rel(self.root, d)] for f, d in files],
        )
        listing = "[" + ", ".join(_literal(f) for f, _ in files) + "]"
        self.con.execute(
            f"CREATE VIEW {table} AS SELECT {tags}, t.* EXCLUDE (filename) "
            f"FROM read_parquet({listing}, filename = true, union_by_name = true) t "
            f"JOIN {index} f ON f.file = t.filename JOIN runs r ON r.run_dir = f.run_dir"
        )

    def _create_run_metrics(self) -> None:
        """``run_metrics``: one row per run with flows, its fairness and reference metrics."""
        have = {d[0] for d in self.con.execute("SELECT * FROM flows LIMIT 0").description}
        derived = ("late_rate_bps", "maxmin_bps", "maxmin_error", "convergence_s")
        # Runs written before the reference columns existed: those columns are NULL.
        missing = "".join(f", CAST(NULL AS DOUBLE) AS {c}" for c in derived if c not in have)
        tags = ", ".join(f'any_value("{c}") AS "{c}"' for c in self._tags if c != "run_dir")
        self.con.execute(
            f"""CREATE VIEW run_metrics AS
            WITH f AS (
                SELECT *{missing},
                       CASE WHEN maxmin_bps > 0 THEN late_rate_bps / maxmin_bps END AS ratio
                FROM flows
            )
            SELECT run_dir, {tags},
                count(*) AS flows,
                sum(goodput_bps) ^ 2 / (count(*) * sum(goodput_bps ^ 2)) AS jain,
                sum(ratio) ^ 2 / (count(ratio) * sum(ratio ^ 2)) AS jain_maxmin,
                max(abs(maxmin_error)) AS max_abs_maxmin_error,
                count(maxmin_bps) AS reference_flows,
                count(convergence_s) AS converged_flows,
                max(convergence_s) AS max_convergence_s
            FROM f GROUP BY run_dir"""
        )


def catalog(root: str | os.PathLike[str] = ".") -> Catalog:
    """Open the results catalog over every run directory under ``root`` (see module doc)."""
    return Catalog(root)


# -- scanning -------------------------------------------------------------------------------
def _scan(root: Path) -> tuple[list[dict[str, Any]], list[Param]]:
    """The runs under ``root`` (sorted by path) and the parameters swept in any of them."""
    sweeps = _sweep_points(root)
    runs = []
    for run_json in sorted(root.rglob("run.json")):
        directory = run_json.parent
        if any(part.startswith(".") for part in directory.relative_to(root).parts):
            continue  # a run directory still being written (atomic_dir's temporary)
        try:
            info = json.loads(run_json.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise ScenarioError(f"{run_json}: invalid JSON: {exc}") from exc
        timing_path = directory / "timing.json"
        timing = json.loads(timing_path.read_text()) if timing_path.is_file() else {}
        stats = info.get("stats", {})
        scenario = info.get("scenario", {})
        row: dict[str, Any] = {
            "_dir": directory,
            "run_dir": _rel(root, directory),
            "scenario": scenario.get("name"),
            "seed": info.get("seed"),
            "source": info.get("source"),
            "duration_s": stats.get("sim_seconds"),
            "events": stats.get("events"),
            "packet_hops": stats.get("packet_hops"),
            "wall_seconds": timing.get("wall_seconds"),
        }
        point = sweeps.get(directory.resolve())
        if point is not None:
            row.update(point)
        runs.append(row)
    params = _params(runs)
    for row in runs:
        values = json.loads(row["params"]) if row.get("params") else {}
        for p in params:
            value = values.get(p.path)
            row[p.column] = _sql_value(value, p.sql_type)
            if p.has_si:
                row[f"{p.column}_si"] = quantity_value(value)
    return runs, params


def _sweep_points(root: Path) -> dict[Path, dict[str, Any]]:
    """Run directory (resolved) -> sweep tags, from every sweep manifest under ``root``."""
    points = {}
    for manifest in sorted(root.rglob("manifest.json")):
        try:
            data = json.loads(manifest.read_text(encoding="utf-8"))
        except ValueError:
            continue
        if not isinstance(data, dict) or data.get("format") != MANIFEST_FORMAT:
            continue
        sweep_dir = manifest.parent
        for p in data.get("points", []):
            points[(sweep_dir / p["run_dir"]).resolve()] = {
                "sweep": data.get("name") or sweep_dir.name,
                "sweep_dir": _rel(root, sweep_dir),
                "point_id": p["point_id"],
                "params": json.dumps(p["params"], sort_keys=True),
            }
    return points


def _params(runs: list[dict[str, Any]]) -> list[Param]:
    """One column per parameter path seen in any sweep; its type fits all its values."""
    from .sweep_spec import column_name

    values: dict[str, list[Any]] = {}
    for row in runs:
        for path, value in (json.loads(row["params"]) if row.get("params") else {}).items():
            values.setdefault(path, []).append(value)
    params, taken = [], {c for c, _ in RUN_COLUMNS}
    for path in sorted(values):
        column = column_name(path)
        if column in taken:
            column = f"param_{column}"
        taken.add(column)
        kinds = {type(v) for v in values[path]}
        if kinds <= {bool}:
            sql_type = "BOOLEAN"
        elif kinds <= {int}:
            sql_type = "BIGINT"
        elif kinds <= {int, float}:
            sql_type = "DOUBLE"
        else:
            sql_type = "VARCHAR"
        has_si = sql_type == "VARCHAR" and any(quantity_value(v) is not None for v in values[path])
        enum: tuple[str, ...] = ()
        if has_si and all(isinstance(v, str) for v in values[path]):
            # Numeric order, values without a number ("unlimited") last, then as written.
            distinct = set(values[path])
            enum = tuple(sorted(distinct, key=lambda v: _enum_key(v)))
            sql_type = f"param_{column}_t"
        params.append(Param(path, column, sql_type, has_si, enum))
    return params


def _enum_key(value: str) -> tuple[bool, float, str]:
    number = quantity_value(value)
    return (number is None, number if number is not None else 0.0, value)


def _sql_value(value: Any, sql_type: str) -> Any:
    if value is None or sql_type in ("BOOLEAN", "BIGINT", "DOUBLE") or isinstance(value, str):
        return value
    return json.dumps(value)


def _rel(root: Path, path: Path) -> str:
    rel = path.relative_to(root).as_posix()
    return rel if rel else "."


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
