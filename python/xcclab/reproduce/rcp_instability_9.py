"""rcp-instability-9: see :mod:`xcclab.reproduce.rcp_instability` (MaxNet half)."""

from __future__ import annotations

from .rcp_instability import run_case

ID = "rcp-instability-9"
TITLE = "RCP's unstable network, N=9 (MaxNet half; RCP pending)"
CLAIM = "MaxNet shows only minor rate variation (RCP's instability comes with RCP)"


def run(out_dir, quick=False, *, log=None, progress=True):
    """Run MaxNet on the network with N = 9."""
    return run_case(9, ID, out_dir, quick, log, progress)
