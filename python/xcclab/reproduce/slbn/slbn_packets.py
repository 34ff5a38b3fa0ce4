"""Seed 004's session experiments on the packet engine.

A ``Setup``'s protocol becomes a ``[sessions]`` scenario (docs/scenario-format.md): the same
generated network and sessions as the session driver's, every data and control packet
simulated through FIFO queues. The run's ``session_samples`` table is turned into the measures
the reports share with the session driver (``slbn_common._measure``), under the driver's column
names, so that one report can put both side by side. What differs in meaning:

- E_s: the session driver compares the *assigned* rate with the oracle's; here the rate is the
  data *delivered* to the destination over the sample interval, over the data share (what the
  paper's "rate assignment" becomes once the data must cross the queues);
- E_e: the driver sums the assigned rates crossing a bottleneck; here it is the bits the link
  sent (data and control) over the interval against its capacity;
- completion: the last byte *delivered* here, the last bit *sent* in the driver.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
import tomli_w

from ...results import RunResult


@dataclass
class PacketSessionResult:
    """One protocol's packet-level run, with the session driver's measures' inputs."""

    scenario: dict[str, Any]
    stats: dict[str, Any]
    samples: Any  # polars.DataFrame, the session driver's sample columns
    completions: Any  # polars.DataFrame: session, size_bits, start_s, finish_s
    run: RunResult

    def save(self, out_dir: str | Path) -> Path:
        """The run's directory: run.json, the tables, session_samples/session_rates."""
        out = Path(out_dir)
        self.run.save(out)
        return out


def scenario(experiment: dict[str, Any], name: str, packet_bytes: int) -> dict[str, Any]:
    """The ``[sessions]`` scenario of a session-driver experiment dict (same seed, network,
    workload, duration and sample interval)."""
    params = experiment.get("protocol_params") or {}
    # Reports key their runs by a file-safe name ("piqi_rcp"); scenarios take the algorithm's.
    kind = experiment["protocol"].replace("_", "-")
    protocol: Any = {"kind": kind, **params} if params else kind
    sessions: dict[str, Any] = {
        "protocol": protocol,
        "packet_size": f"{packet_bytes}B",
        "topology": experiment["topology"],
        "workload": experiment["workload"],
        "sample_interval": f"{experiment['sample_interval_s'] * 1e3:g}ms",
    }
    return {
        "name": name,
        "duration": f"{experiment['duration_s']:g}s",
        "seed": int(experiment.get("seed", 0)),
        "sessions": sessions,
    }


#: What one protocol's packet-level run may take: memory (the child's address space) and
#: wall time. Protocols that assign rates far above the fair share (the paper's PIQI-RCP and
#: COBB, ours too) fill unlimited queues with packets without bound, and on the Medium network
#: that is gigabytes within seconds of simulated time. A run over its budget is reported as
#: such, with what it reached, never as a result.
#: ``XCC_SLBN_PACKET_GIB`` and ``XCC_SLBN_PACKET_MINUTES`` set other budgets.
MEMORY_BUDGET_BYTES = int(float(os.environ.get("XCC_SLBN_PACKET_GIB", "12")) * 2**30)
TIME_BUDGET_S = float(os.environ.get("XCC_SLBN_PACKET_MINUTES", "40")) * 60.0


class OverBudget(Exception):
    """A packet-level run stopped at its memory or time budget."""


def run_packets(
    experiment: dict[str, Any],
    name: str,
    packet_bytes: int,
    memory_bytes: int | None = None,
    time_s: float | None = None,
) -> PacketSessionResult:
    """Runs one protocol of a session experiment on the packet engine, in a child process whose
    memory and time are bounded (``OverBudget``). The results are the same bytes as an
    in-process run."""
    memory_bytes = MEMORY_BUDGET_BYTES if memory_bytes is None else memory_bytes
    time_s = TIME_BUDGET_S if time_s is None else time_s
    sc = scenario(experiment, name, packet_bytes)
    with tempfile.TemporaryDirectory(prefix="xcc-slbn-") as tmp:
        path = Path(tmp) / f"{name}.toml"
        path.write_text(tomli_w.dumps(sc), encoding="utf-8")
        out = Path(tmp) / "run"
        cmd = [sys.executable, "-m", "xcclab.cli", "run", str(path), "--out", str(out)]

        def limit_memory() -> None:
            resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))

        try:
            child = subprocess.run(
                [*cmd, "--no-series"],
                capture_output=True,
                text=True,
                preexec_fn=limit_memory,
                timeout=time_s,
            )
        except subprocess.TimeoutExpired as exc:
            raise OverBudget(f"stopped after {time_s / 60:g} minutes of wall time") from exc
        if child.returncode != 0:
            err = child.stderr.strip()
            if "memory allocation" in err or "MemoryError" in err or child.returncode < 0:
                why = [ln for ln in err.splitlines() if "memory allocation" in ln]
                raise OverBudget(
                    f"stopped at its {memory_bytes / 2**30:g} GiB memory budget "
                    f"(exit {child.returncode}{': ' + why[0].strip() if why else ''})"
                )
            raise RuntimeError(f"{name}: packet-engine run failed: {err}")
        r = RunResult.load(out)
    return from_run(r, sc, float(r.timing.get("wall_seconds", 0.0)))


def load(run_dir: str | Path) -> PacketSessionResult:
    """A packet-level run saved by :meth:`PacketSessionResult.save` (its wall time is the
    simulation's own, from timing.json)."""
    r = RunResult.load(run_dir)
    return from_run(r, r.run_info.get("scenario", {}), float(r.timing.get("wall_seconds", 0.0)))


def from_run(r: RunResult, sc: dict[str, Any], wall: float) -> PacketSessionResult:
    """The report's inputs from a ``[sessions]`` run with a sample interval."""
    samples = r.tables["session_samples"].with_columns(
        (pl.col("max_queue_bytes").cast(pl.Float64) * 8.0).alias("max_queue_bits")
    )
    flows = r.flows
    done = flows.filter(pl.col("size_bytes").is_not_null() & pl.col("fct_s").is_not_null())
    completions = done.select(
        pl.col("flow_id").cast(pl.UInt32).alias("session"),
        (pl.col("size_bytes").cast(pl.Float64) * 8.0).alias("size_bits"),
        pl.col("start_s"),
        (pl.col("start_s") + pl.col("fct_s")).alias("finish_s"),
    )
    stats = {
        "engine": "packets",
        "sessions": int(flows.height),
        "data_bytes_delivered": int(flows["bytes_delivered"].sum()),
        "packets_transmitted": int(r.links["packets_out"].sum()),
        "drops": int(r.links["drops"].sum()),
        "wall_seconds": wall,
    }
    return PacketSessionResult(sc, stats, samples, completions, r)
