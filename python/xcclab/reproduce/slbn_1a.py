"""slbn-1a: SLBN Experiment 1a: Medium network, churn (seed 004, Figs. 3-4).

50,000 sessions start in the first 500 ms; 10,000 leave and 10,000 join in the next 200 ms;
3 s in all. Error distributions at sources and bottlenecks over time for every protocol.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .slbn_common import PAPER_PROTOCOLS, Setup, run_setup

ID = "slbn-1a"
TITLE = "SLBN Experiment 1a: Medium network, churn (seed 004, Figs. 3-4)"
CLAIM = (
    "SLBN and BFYZ most accurate, ERICA a little above the exact rates; RCP and PIQI-RCP "
    "erratic (errors up to 200 %); COBB does not converge (mean ~500 %, p10/p90 -15 % / "
    "1600 %)"
)

SETUP = Setup(
    id=ID,
    title=TITLE,
    claim=CLAIM,
    topology="medium",
    protocols=PAPER_PROTOCOLS,
    workload={
        "arrivals": [
            {"count": 50_000, "from_s": 0.0, "to_s": 0.5},
            {"count": 10_000, "from_s": 0.5, "to_s": 0.7},
        ],
        "departures": [{"count": 10_000, "from_s": 0.5, "to_s": 0.7}],
    },
    duration_s=3.0,
    sample_interval_s=0.05,
)


def run(
    out_dir: str | Path, quick: bool = False, *, log: Callable[[str], None] | None = None
) -> Path:
    """Run every protocol of the experiment; write report.md, metrics.json and figures."""
    return run_setup(SETUP, out_dir, quick=quick, log=log)
