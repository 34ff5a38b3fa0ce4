"""xcc-dumbbell-3 on real packets: ``xcc reproduce xcc-dumbbell-3 --emu``.

Seed 002's single-bottleneck experiment as the simulated reproduction runs it: three flows with
RTT 50 ms join a 1 Gbit/s bottleneck (20 000-packet buffer) at 0, 10 and 20 s, 40 s in all.
Every protocol that runs over xcclab's UDP transport (XCP, RCP, MaxNet, PIQI-RCP, JetMax) runs
this scenario simulated and on real packets (:mod:`xcclab.reproduce.xcc.emu_common`). Measured as in
the simulated report: packets dropped, the bottleneck's peak queue overall and after each join,
the peak input rate over capacity (100 ms averages), utilisation in the last 5 s with three
flows, and the flows' mean rates and Jain index over the last 10 s.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from ..common import explicit
from ..common.report import fmt
from ..experiment import Variant
from . import emu_common
from . import xcc_dumbbell_3 as d3

EXPERIMENT = emu_common.EmuExperiment(
    id=d3.ID,
    title="three flows joining a single bottleneck",
    setup=(__doc__ or "").split("\n\n", 1)[1].strip(),
    flows=d3.flows,
    t_end=d3.T_END,
    measure=d3.measure,
    claims=d3.claims,
    columns=(
        ("drops", lambda m: str(m["drops"])),
        ("peak queue (pkt)", lambda m: fmt(m["peak_queue_packets"], 0)),
        (
            "peak queue after joins 1 / 2 / 3 (pkt)",
            lambda m: " / ".join(fmt(ph["peak_queue_packets"], 0) for ph in m["phases"]),
        ),
        ("peak input / capacity", lambda m: fmt(m["peak_input_over_capacity"], 3)),
        (
            "utilisation, last 5 s with 3 flows",
            lambda m: fmt(100 * m["phases"][-1]["utilisation_end"], 2) + " %",
        ),
        (
            "last 10 s (Mbit/s)",
            lambda m: " / ".join(fmt(r / 1e6, 1) for r in m["final_rates_bps"]),
        ),
        ("Jain index", lambda m: fmt(m["jain"], 4)),
    ),
    steady=lambda m: {f.name: r for f, r in zip(d3.flows(), m["final_rates_bps"])},
    steady_window=(d3.T_END - 10, d3.T_END),
)


def protocols(only: Sequence[str] | None = None) -> list[explicit.Protocol]:
    """The seed-002 protocols (``only`` these names, if given) with 1500-byte packets."""
    return emu_common.protocols(only)


def scenario(p: explicit.Protocol, scale: float):
    return emu_common.scenario(EXPERIMENT, p, scale)


def run_dumbbell_3_emu(
    out_dir: str | Path,
    quick: bool = False,
    *,
    log: Callable[[str], None] | None = None,
    only: Sequence[str] | None = None,
) -> Path:
    """Simulate and emulate every protocol (``only`` those named); write
    ``out_dir/emu/report.md``."""
    return emu_common.run(EXPERIMENT, out_dir, quick, log=log, only=only)


#: ``xcc reproduce {ID} --emu``: every protocol simulated and on real packets (root); report in
#: ``out_dir/emu/``.
VARIANT = Variant(EXPERIMENT.id, "emu", run_dumbbell_3_emu)
