"""Figures for reports: a deterministic pyplot, saving in several formats, Markdown links.

Public helpers used by the reproductions (``xcclab.reproduce``), ``xcc plot`` and the sweep
plots. Output is deterministic: the Agg backend, SVG metadata without a date and a fixed SVG
hash salt, so the same data give the same files.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["DEFAULT_FORMATS", "figure_links", "paper_vs_ours", "pyplot", "save_figure"]

DEFAULT_FORMATS = ("png", "svg")


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the Agg backend, with a fixed SVG hash salt."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.rcParams["svg.hashsalt"] = "xcclab"
    return plt


def save_figure(
    fig: Any, out_dir: str | os.PathLike[str], stem: str, formats: Iterable[str] = DEFAULT_FORMATS
) -> list[Path]:
    """Save ``fig`` as ``out_dir/stem.<fmt>`` for each format, with deterministic metadata."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for fmt in formats:
        path = out_dir / f"{stem}.{fmt}"
        tmp = out_dir / f".{stem}.{fmt}.tmp"
        metadata: dict[str, Any]
        if fmt == "svg":
            metadata = {"Date": None}
        elif fmt == "png":
            metadata = {"Software": None}
        elif fmt == "pdf":
            metadata = {"CreationDate": None, "ModDate": None}
        else:
            metadata = {}
        fig.savefig(tmp, format=fmt, metadata=metadata, dpi=120 if fmt == "png" else None)
        os.replace(tmp, path)
        paths.append(path)
    return paths


def figure_links(files: Iterable[str]) -> str:
    """Markdown image links to the PNG files among ``files``, one per line (the SVG twins are
    for print)."""
    return "\n".join(f"![{Path(f).stem}]({f})" for f in files if f.endswith(".png"))


def paper_bars(ax: Any, categories: Sequence[Any], paper: Sequence[float]) -> None:
    """The paper's value of each table cell once, as a wide black bar centred on its category,
    for panels that set several of our measurements (dots) against it."""
    import numpy as np

    x = np.arange(len(categories))
    ax.scatter(x, paper, marker="_", s=900, linewidths=2, color="black", label="paper", zorder=1)


def paper_vs_ours(
    ax: Any,
    categories: Sequence[Any],
    paper: Sequence[float] | None,
    ours: Sequence[float],
    ours_ci: Sequence[tuple[float, float] | None] | None = None,
    *,
    offset: float = 0.0,
    color: str = "C0",
    label: str = "",
) -> None:
    """Table cells side by side on a categorical axis: the paper's value as a bar marker, ours as
    a dot with its 95 % interval where there is one; no line joins separate cells. ``paper``
    None draws ours only (several of ours against one paper value: see :func:`paper_bars`)."""
    import numpy as np

    x = np.arange(len(categories)) + offset
    if paper is not None:
        ax.scatter(x, paper, marker="_", s=220, linewidths=2, color=color, label=f"{label} paper")
    ours_a = np.asarray(ours, dtype=float)
    lo = np.array([c[0] if c else v for c, v in zip(ours_ci or [None] * len(ours), ours_a)])
    hi = np.array([c[1] if c else v for c, v in zip(ours_ci or [None] * len(ours), ours_a)])
    ax.errorbar(x, ours_a, yerr=[ours_a - lo, hi - ours_a], fmt="o", ms=4, capsize=3,
                color=color, label=f"{label} ours")  # fmt: skip
    ax.set_xticks(np.arange(len(categories)), [str(c) for c in categories])
