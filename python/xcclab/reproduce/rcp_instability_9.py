"""rcp-instability-9: see :mod:`xcclab.reproduce.rcp_instability`."""

from __future__ import annotations

from .rcp_instability import run_case

ID = "rcp-instability-9"
TITLE = "RCP's unstable network, N=9: RCP and MaxNet"
CLAIM = "RCP oscillates (10-100 Mbit/s, then ~30 % of capacity); MaxNet minor variation"


def run(out_dir, quick=False, *, log=None, progress=True):
    """Run RCP and MaxNet on the network with N = 9."""
    return run_case(9, ID, out_dir, quick, log, progress)
