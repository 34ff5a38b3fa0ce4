"""Session experiments of seed 004 (SLBN and its peers) through the native session simulator.

An experiment is a plain dict (serialised to JSON for ``xcclab._native.run_sessions``)::

    {"protocol": "slbn", "protocol_params": {...}, "seed": 1, "topology": "medium",
     "workload": {"arrivals": [{"count": 50000, "from_s": 0, "to_s": 0.5}], ...},
     "duration_s": 3, "sample_interval_s": 0.05}

The simulator moves control packets one by one through FIFO links and data as fluid rates
(docs/decisions.md, "Session experiments"); it returns per-sample error statistics against the
max-min oracle, completion times of finite sessions and, on request, the final rates.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from . import _native


def protocols() -> list[str]:
    """Session protocols this build can run."""
    return list(_native.session_protocols())


@dataclass
class SessionResult:
    experiment: dict[str, Any]
    stats: dict[str, Any]
    samples: pl.DataFrame
    completions: pl.DataFrame
    finals: pl.DataFrame

    def save(self, out_dir: str | Path) -> Path:
        """Write ``experiment.json``, ``stats.json`` and the tables as Parquet into ``out_dir``."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        (out / "experiment.json").write_text(json.dumps(self.experiment, indent=2) + "\n")
        stats = {k: v for k, v in self.stats.items() if k != "wall_seconds"}
        (out / "stats.json").write_text(json.dumps(stats, indent=2) + "\n")
        (out / "timing.json").write_text(
            json.dumps({"wall_seconds": self.stats["wall_seconds"]}) + "\n"
        )
        for name in ("samples", "completions", "finals"):
            getattr(self, name).write_parquet(out / f"{name}.parquet")
        return out


def load(run_dir: str | Path) -> SessionResult:
    """A run saved by :meth:`SessionResult.save`."""
    d = Path(run_dir)
    stats = json.loads((d / "stats.json").read_text())
    timing = d / "timing.json"
    if timing.is_file():
        stats.update(json.loads(timing.read_text()))
    return SessionResult(
        experiment=json.loads((d / "experiment.json").read_text()),
        stats=stats,
        samples=pl.read_parquet(d / "samples.parquet"),
        completions=pl.read_parquet(d / "completions.parquet"),
        finals=pl.read_parquet(d / "finals.parquet"),
    )


def run_sessions(experiment: dict[str, Any], source: str = "<experiment>") -> SessionResult:
    """Run one session experiment; ``ValueError`` names the bad field."""
    raw = _native.run_sessions(json.dumps(experiment), source)
    t = raw["tables"]
    return SessionResult(
        experiment=experiment,
        stats=dict(raw["stats"]),
        samples=pl.DataFrame(t["samples"]),
        completions=pl.DataFrame(
            t["completions"],
            schema={
                "session": pl.UInt32,
                "size_bits": pl.Float64,
                "start_s": pl.Float64,
                "finish_s": pl.Float64,
            },
        ),
        finals=pl.DataFrame(
            t["finals"],
            schema={"session": pl.UInt32, "rate_bps": pl.Float64, "maxmin_bps": pl.Float64},
        ),
    )
