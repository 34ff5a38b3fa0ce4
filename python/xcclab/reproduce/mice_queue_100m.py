"""mice-queue-100M: the transient queue with 100 Mbit/s links (seed 001, Figs 8 and 9); see
:mod:`xcclab.reproduce.mice`."""

from __future__ import annotations

from .mice import run_mice

ID = "mice-queue-100M"
TITLE = "Transient queue at 100 Mbit/s, MaxNet vs Reno/RED (seed 001, Figs 8, 9)"
CLAIM = "RED keeps a standing backlog, MaxNet's queue is only transient"


def run(out_dir, quick=False, *, log=None, progress=True):
    """Run the three stacks with K = 200 on a 100 Mbit/s bottleneck."""
    return run_mice(ID, 200, "100Mbps", out_dir, quick, log=log, progress=progress)
