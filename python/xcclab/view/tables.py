"""Summary tables for a page: chosen columns of a polars frame, the busiest rows first, cut
to a limit with the count said."""

from __future__ import annotations

import math
from typing import Any


def table(
    name: str,
    frame: Any,
    columns: list[tuple[str, str]],
    limit: int,
    *,
    sort_by: str | None = None,
    kind: str | None = None,
) -> dict[str, Any]:
    """``{"name", "columns", "rows", "total", "kind"}``; ``kind`` ("flow", "link") makes the
    page open that flow's or link's plots when a row is clicked (by the first column, its id)."""
    present = [(c, label) for c, label in columns if c in frame.columns]
    total = frame.height
    if sort_by and sort_by in frame.columns and total > limit:
        frame = frame.sort(sort_by, descending=True, nulls_last=True)
    rows = [
        [_plain(v) for v in row] for row in frame.select([c for c, _ in present]).head(limit).rows()
    ]
    return {
        "name": name,
        "columns": [label for _, label in present],
        "rows": rows,
        "total": total,
        "sorted_by": sort_by if total > limit else None,
        "kind": kind,
    }


def _plain(v: Any) -> Any:
    if isinstance(v, float):
        return None if not math.isfinite(v) else float(f"{v:.6g}")
    return v
