"""``xcc view PATH``: a run, a compare directory, a sweep or the reproduction index as one
self-contained HTML page (docs/view.md).

One concept per module: :mod:`.kinds` tells which directory it is; :mod:`.run_data`,
:mod:`.compare_data`, :mod:`.sweep_data`, :mod:`.index_data` turn it into the page's data
(:mod:`.topology` draws the network, :mod:`.downsample` and :mod:`.encode` keep it small);
:mod:`.page` writes the HTML with :mod:`.assets` inlined; :mod:`.browser` opens it.
"""

from __future__ import annotations

import os
from pathlib import Path

from .._fsutil import write_text_atomic
from .kinds import kind_of

DEFAULT_NAME = "view.html"


def build_page(path: str | os.PathLike[str]) -> tuple[str, str]:
    """(kind, HTML) of the page for ``path``."""
    from .page import render

    path = Path(path)
    kind = kind_of(path)
    if kind == "run":
        from ..results import RunResult
        from .run_data import run_data

        data = run_data(RunResult.load(path))
        data = {"title": data["title"], "runs": [data]}
    elif kind == "compare":
        from .compare_data import compare_data

        data = compare_data(path)
    elif kind == "sweep":
        from .sweep_data import sweep_data

        data = sweep_data(path)
    else:
        from .index_data import index_data

        data = index_data(path)
    return kind, render(kind, data)


def write_view(
    path: str | os.PathLike[str], out: str | os.PathLike[str] | None = None
) -> tuple[str, Path]:
    """Write the page for ``path`` to ``out`` (default ``PATH/view.html``); (kind, file)."""
    kind, text = build_page(path)
    target = Path(out) if out is not None else Path(path) / DEFAULT_NAME
    target.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(target, text)
    return kind, target
