"""Column schemas of the result tables (see ``docs/output-schema.md``).

The tables are declared once, in Rust (``xcc_build::schema``, read here through ``_native``),
for the simulator, the emulator and Python alike.

The native module returns each table as ``{column: list}``; this module fixes each column's
type so that every run writes the same Parquet schema, even when a table is empty. Undefined
values become nulls: floats the native side reports as NaN (in any float column, e.g.
``fct_s`` of an unfinished flow, ``stop_s`` of a flow without a stop) and ints it reports as
-1 for "unlimited" or "not applicable" (and ``i64::MAX`` for an unset ssthresh)
(``size_bytes``, ``buffer_packets``, ``buffer_bytes``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Column:
    name: str
    dtype: str  # "i64" | "f64" | "str"
    unit: str
    doc: str
    nullable: bool = False  # NaN (floats) or -1 (ints) in the native output become null


def _load() -> tuple[dict[str, tuple[Column, ...]], tuple[str, ...]]:
    """Every table's columns, and the names of the optional ones."""
    from .errors import load_native

    schema = load_native().table_schema()
    tables = {t: tuple(Column(*c) for c in cols) for t, _, cols in schema}
    return tables, tuple(t for t, optional, _ in schema if optional)


#: Columns of ``flows`` that Python derives (``xcclab.references``) from run.json's resolved
#: scenario and the series when a run is built or loaded; neither driver produces them.
DERIVED_FLOW_COLUMNS: tuple[Column, ...] = (
    Column(
        "late_rate_bps",
        "f64",
        "bit/s",
        "payload delivery rate over the second half of the run; null without series",
        True,
    ),
    Column(
        "maxmin_bps",
        "f64",
        "bit/s",
        "max-min fair payload rate at the links' own utilisation targets; null outside"
        " the reference (sized, arrival and transaction flows, flows stopped early)",
        True,
    ),
    Column("maxmin_error", "f64", "", "late_rate_bps / maxmin_bps - 1", True),
    Column(
        "rate_window_s",
        "f64",
        "s",
        "window of the rates convergence_s is judged on: whole intervals, >= 4 srtt_s",
        True,
    ),
    Column(
        "convergence_s",
        "f64",
        "s",
        "from start until the windowed rate stays within 10 % of maxmin_bps (for at least"
        " one window before the end); null if never",
        True,
    ),
)

#: Every table's columns, in order, as declared once in Rust (``crates/xcc-build/src/schema.rs``),
#: with the derived columns above after the drivers' own.
TABLES: dict[str, tuple[Column, ...]]
#: Tables a run writes only when it measures them (seed 004's ``session_samples`` and
#: ``session_rates``, from a ``[sessions]`` run with a ``sample_interval``; ``fct``,
#: ``slowdown`` and ``queue_cdf`` from a run with a ``[workload]``).
OPTIONAL_TABLE_NAMES: tuple[str, ...]
TABLES, OPTIONAL_TABLE_NAMES = _load()
TABLES["flows"] = TABLES["flows"] + DERIVED_FLOW_COLUMNS
#: The tables every run has (and writes, if empty).
TABLE_NAMES: tuple[str, ...] = tuple(t for t in TABLES if t not in OPTIONAL_TABLE_NAMES)
_I64_MAX = 2**63 - 1


def polars_dtype(dtype: str) -> Any:
    import polars as pl

    return {"i64": pl.Int64, "f64": pl.Float64, "str": pl.String}[dtype]


def to_frame(name: str, columns: dict[str, list[Any]] | None) -> Any:
    """Build the typed polars DataFrame of table ``name`` from the native ``{column: list}``.

    Known columns come first in schema order with their fixed type; columns the native side
    adds beyond the schema are kept after them (with inferred types) so nothing is lost.
    """
    import polars as pl

    columns = dict(columns or {})
    lengths = {len(v) for v in columns.values()}
    if len(lengths) > 1:
        raise ValueError(f"table {name}: columns have different lengths {sorted(lengths)}")
    n_rows = lengths.pop() if lengths else 0
    series = []
    for col in TABLES.get(name, ()):
        dtype = polars_dtype(col.dtype)
        values = columns.pop(col.name, None)
        if values is None:
            values = [None] * n_rows
        s = pl.Series(col.name, values, dtype=dtype, strict=False)
        if col.dtype == "f64":
            s = s.fill_nan(None)  # NaN is the native side's "undefined"
        elif col.nullable and col.dtype == "str":
            s = pl.select(pl.when(s == "").then(None).otherwise(s).alias(col.name)).to_series()
        elif col.nullable and col.dtype == "i64":
            # -1 means "unlimited"/"not applicable"; i64::MAX an unset (infinite) threshold
            unset = (s < 0) | (s == _I64_MAX)
            s = pl.select(pl.when(unset).then(None).otherwise(s).alias(col.name)).to_series()
        series.append(s)
    for extra, values in columns.items():  # forward compatible: keep unknown columns
        series.append(pl.Series(extra, values, strict=False))
    return pl.DataFrame(series)
