"""rcp-instability-49: see :mod:`xcclab.reproduce.rcp_instability`."""

from __future__ import annotations

from .rcp_instability import run_case

ID = "rcp-instability-49"
TITLE = "RCP's unstable network, N=49: RCP and MaxNet"
CLAIM = "RCP switches between 0 and capacity; MaxNet within a few percent of max-min"


def run(out_dir, quick=False, *, log=None, progress=True):
    """Run RCP and MaxNet on the network with N = 49."""
    return run_case(49, ID, out_dir, quick, log, progress)
