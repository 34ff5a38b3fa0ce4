"""A sweep's ``OUT/manifest.json``: its format tag and the reader. Apart from the runner
(:mod:`xcclab.sweep_runner`, which writes it) so that what only reads a sweep (run titles,
plots, the viewer) does not import the code that runs one.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from .errors import ScenarioError

MANIFEST_FORMAT = "xcclab-sweep/1"


def load_manifest(out: str | os.PathLike[str]) -> dict[str, Any]:
    """Read ``OUT/manifest.json`` of a sweep."""
    path = Path(out) / "manifest.json"
    if not path.is_file():
        raise ScenarioError(f"{out}: not a sweep directory (no manifest.json)")
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("format") != MANIFEST_FORMAT:
        raise ScenarioError(f"{path}: format: expected {MANIFEST_FORMAT!r}")
    return data
