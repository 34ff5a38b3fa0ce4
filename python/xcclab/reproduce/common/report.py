"""Helpers shared by the reproductions: comparisons, Markdown tables, metrics.json, figures.

A reproduction compares *quantities* (a paper's table cell) between the paper and our run. Each
:class:`Comparison` records both numbers and the unit; :func:`write_metrics` writes them as

    {"experiment": ID, "comparisons": [{"quantity", "paper", "ours", "unit", ...}], ...}

and :func:`gap_summary` turns them into sentences computed from the numbers, so the report's
discussion never states a conclusion the data do not support.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..._fsutil import atomic_dir
from ...claims import PRECISION
from ...figures import figure_links, save_figure

__all__ = [
    "Comparison",
    "atomic_dir",
    "figure_links",
    "gap_summary",
    "jain_index",
    "markdown_table",
    "save_figure",
    "write_metrics",
]


@dataclass
class Comparison:
    """One number of the paper beside ours."""

    quantity: str  # e.g. "J"
    paper: float
    ours: float | None
    unit: str = ""
    cell: dict[str, Any] = field(default_factory=dict)  # e.g. {"delta_ratio": 3}

    @property
    def diff(self) -> float | None:
        return None if self.ours is None else self.ours - self.paper

    @property
    def rel_diff(self) -> float | None:
        """(ours - paper) / |paper|; None if undefined."""
        if self.ours is None or self.paper == 0 or not math.isfinite(self.ours):
            return None
        return (self.ours - self.paper) / abs(self.paper)

    def within(self, tolerance: float) -> bool:
        rel = self.rel_diff
        return rel is not None and abs(rel) <= tolerance + 1e-12

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["diff"] = self.diff
        out["rel_diff"] = self.rel_diff
        return out


def jain_index(values: Sequence[float]) -> float:
    """Jain's fairness index (sum x)^2 / (n sum x^2); 1 for all-equal, 1/n for one-takes-all."""
    n = len(values)
    total = sum(values)
    squares = sum(v * v for v in values)
    if n == 0 or squares == 0:
        return float("nan")
    return total * total / (n * squares)


def fmt(value: float | None, digits: int) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "n/a"
    return f"{value:.{digits}f}"


def fmt_pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:+.1f}%"


def markdown_table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A GitHub-flavoured Markdown table; the first column left-aligned, the rest right."""
    lines = ["| " + " | ".join(headers) + " |"]
    lines.append("|" + "|".join([":---"] + ["---:"] * (len(headers) - 1)) + "|")
    for row in rows:
        lines.append("| " + " | ".join(str(c) for c in row) + " |")
    return "\n".join(lines)


def gap_summary(
    comparisons: Sequence[Comparison],
    *,
    tolerance: float = PRECISION["table"]["rel"],
    cell_label: str = "cell",
    describe_cell: Any = None,
) -> list[str]:
    """Sentences on how far our numbers are from the paper's, per quantity.

    For each quantity: which cells are within ``tolerance`` (relative; the tolerance policy's
    "table" precision, :data:`xcclab.claims.PRECISION`), which are not, whether
    ours are mostly above or below, and the largest gap. Everything is computed from
    ``comparisons``; nothing is hard-coded.
    """
    describe_cell = describe_cell or (lambda c: ", ".join(f"{k}={v}" for k, v in c.cell.items()))
    sentences = []
    quantities: dict[str, list[Comparison]] = {}
    for c in comparisons:
        quantities.setdefault(c.quantity, []).append(c)
    for quantity, cs in quantities.items():
        measured = [c for c in cs if c.rel_diff is not None]
        if not measured:
            sentences.append(f"{quantity}: no cell could be measured.")
            continue
        inside = [describe_cell(c) for c in measured if c.within(tolerance)]
        outside = [c for c in measured if not c.within(tolerance)]
        above = sum(1 for c in measured if (c.diff or 0) > 0)
        below = sum(1 for c in measured if (c.diff or 0) < 0)
        worst = max(measured, key=lambda c: abs(c.rel_diff or 0))
        pct = f"{tolerance * 100:g}%"
        if not outside:
            text = f"{quantity}: all {len(measured)} {cell_label}s are within {pct} of the paper"
        elif not inside:
            text = f"{quantity}: none of the {len(measured)} {cell_label}s is within {pct}"
        else:
            far = ", ".join(f"{describe_cell(c)} ({fmt_pct(c.rel_diff)})" for c in outside)
            text = (
                f"{quantity}: {len(inside)} of {len(measured)} {cell_label}s within {pct} "
                f"({', '.join(inside)}); outside: {far}"
            )
        direction = (
            "ours are higher in every cell"
            if above == len(measured)
            else "ours are lower in every cell"
            if below == len(measured)
            else f"ours are higher in {above} and lower in {below}"
        )
        text += (
            f"; {direction}; the largest gap is {fmt_pct(worst.rel_diff)} at "
            f"{describe_cell(worst)}."
        )
        sentences.append(text)
    return sentences


def write_metrics(out_dir: str | os.PathLike[str], experiment: str, **payload: Any) -> Path:
    """Write ``metrics.json``: ``{"experiment": ID, "comparisons": [...], **payload}``.

    ``payload["comparisons"]`` may hold :class:`Comparison` objects or plain dicts.
    """
    comparisons = [
        c.to_json() if isinstance(c, Comparison) else dict(c)
        for c in payload.pop("comparisons", [])
    ]
    data = _finite({"experiment": experiment, "comparisons": comparisons, **payload})
    path = Path(out_dir) / "metrics.json"
    path.write_text(json.dumps(data, indent=2, allow_nan=False, default=_plain) + "\n")
    return path


def _finite(value: Any) -> Any:
    """Replace NaN and infinities (not valid JSON) by None, recursively."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _plain(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"not JSON serialisable: {value!r}")
