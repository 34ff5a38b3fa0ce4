"""mice-http-200: MaxNet vs NewReno over RED with 200 HTTP transactions (seed 001); see
:mod:`xcclab.reproduce.mice`."""

from __future__ import annotations

from .mice import run_mice

ID = "mice-http-200"
TITLE = "MaxNet vs Reno/RED with 200 HTTP mice (seed 001)"
CLAIM = "MaxNet answers within 135 ms and keeps no queue; RED keeps a backlog"


def run(out_dir, quick=False, *, log=None, progress=True):
    """Run the three stacks with K = 200 on a 10 Mbit/s bottleneck."""
    return run_mice(ID, 200, "10Mbps", out_dir, quick, log=log, progress=progress)


def run_emu(out_dir, quick=False, *, log=None):
    """Both stacks simulated and on real packets (root); report in out_dir/emu/."""
    from .mice_emu import run_mice_emu

    return run_mice_emu(ID, 200, "10Mbps", out_dir, quick, log=log)
