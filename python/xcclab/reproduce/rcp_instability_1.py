"""rcp-instability-1: see :mod:`xcclab.reproduce.rcp_instability`."""

from __future__ import annotations

from .rcp_instability import run_case

ID = "rcp-instability-1"
TITLE = "RCP's unstable network, N=1: RCP and MaxNet"
CLAIM = "RCP settles after ~3 s with ~50 % overshoot; MaxNet shows minor variation"


def run(out_dir, quick=False, *, log=None, progress=True):
    """Run RCP and MaxNet on the network with N = 1."""
    return run_case(1, ID, out_dir, quick, log, progress)
