"""Which kind of directory ``xcc view`` was given, from the files that mark each kind."""

from __future__ import annotations

from pathlib import Path

from ..errors import ScenarioError

KINDS = ("run", "compare", "sweep", "index")


def kind_of(path: Path) -> str:
    """ "run" (run.json), "compare" (sim/ and emu/), "sweep" (manifest.json) or "index"
    (reports DIR/<id>/metrics.json, or one report: DIR/metrics.json); a clear error for
    anything else."""
    if not path.exists():
        raise ScenarioError(f"{path}: no such file or directory")
    if not path.is_dir():
        raise ScenarioError(f"{path}: expected a directory (a run, compare, sweep or index)")
    if (path / "run.json").is_file():
        return "run"
    if (path / "sim" / "run.json").is_file() and (path / "emu" / "run.json").is_file():
        return "compare"
    if (path / "manifest.json").is_file():
        return "sweep"
    if (path / "metrics.json").is_file() or any(path.glob("*/metrics.json")):
        return "index"
    raise ScenarioError(
        f"{path}: not a run directory (run.json), a compare directory (sim/ and emu/), a sweep "
        "(manifest.json) or a reproduction index (<id>/metrics.json)"
    )
