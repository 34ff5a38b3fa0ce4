"""slbn-1b: SLBN Experiment 1b: Medium network, finite sessions (seed 004, Figs. 5-6).

50,000 sessions start in 500 ms with Pareto sizes (mean 300 packets of 2000 B, shape 4) and
leave when their data is sent. Maximum queue over time and mean completion time by size.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .slbn_common import PAPER_PROTOCOLS, Setup, run_setup

ID = "slbn-1b"
TITLE = "SLBN Experiment 1b: Medium network, finite sessions (seed 004, Figs. 5-6)"
CLAIM = (
    "SLBN alone keeps the maximum queues bounded; COBB and PIQI-RCP stress queues most "
    "(COBB 5293, 8265, 4775 packets in seconds 1-3); RCP's completion times much worse, "
    "the others similar"
)

SETUP = Setup(
    id=ID,
    title=TITLE,
    claim=CLAIM,
    topology="medium",
    protocols=PAPER_PROTOCOLS,
    workload={
        "arrivals": [{"count": 50_000, "from_s": 0.0, "to_s": 0.5}],
        "size": {"mean_packets": 300.0, "shape": 4.0, "packet_bytes": 2000},
    },
    duration_s=10.0,
    sample_interval_s=0.1,
    quick_duration_s=4.0,
    notes=[
        "10 s simulated so that (nearly) every session completes: completion times by size "
        "over the completed sessions only would favour the fast ones."
    ],
)


def run(
    out_dir: str | Path, quick: bool = False, *, log: Callable[[str], None] | None = None
) -> Path:
    """Run every protocol of the experiment; write report.md, metrics.json and figures."""
    return run_setup(SETUP, out_dir, quick=quick, log=log)
