"""xcc-rtt-fairness on real packets: ``xcc reproduce xcc-rtt-fairness --emu``.

Seed 002's RTT-fairness experiment as the simulated reproduction runs it: two flows with RTTs
30 ms and 200 ms share a 1 Gbit/s bottleneck with a 20 000-packet buffer; the 30 ms flow starts
at 0 s, the 200 ms flow joins at 10 s, 40 s in all. Every protocol that runs over xcclab's UDP
transport (XCP, RCP, MaxNet, PIQI-RCP, JetMax) runs this scenario simulated and on real packets
(:mod:`xcclab.reproduce.xcc.emu_common`). Measured as in the simulated report: time until the
bottleneck's utilisation (100 ms averages) first reaches 95 % of the protocol's target, the time
the joining flow needs to reach 90 % of its share, the rates and their ratio over the last 10 s,
drops, peak queue.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from ..common import explicit
from ..common.report import fmt
from ..experiment import Variant
from . import emu_common
from . import xcc_rtt_fairness as rf

EXPERIMENT = emu_common.EmuExperiment(
    id=rf.ID,
    title="RTT unfairness, 30 ms and 200 ms",
    setup=(__doc__ or "").split("\n\n", 1)[1].strip(),
    flows=rf.flows,
    t_end=rf.T_END,
    measure=rf.measure,
    claims=rf.claims,
    columns=(
        ("to 95 % of target (s)", lambda m: fmt(m["fill_s"], 2)),
        ("joiner to 90 % of share (s)", lambda m: fmt(m["join_s"], 2)),
        (
            "last 10 s: 30 ms / 200 ms (Mbit/s)",
            lambda m: fmt(m["rate30_bps"] / 1e6, 1) + " / " + fmt(m["rate200_bps"] / 1e6, 1),
        ),
        ("ratio", lambda m: fmt(m["ratio"], 3)),
        ("drops", lambda m: str(m["drops"])),
        ("peak queue (pkt)", lambda m: fmt(m["peak_queue_packets"], 0)),
    ),
    steady=lambda m: {"rtt30": m["rate30_bps"], "rtt200": m["rate200_bps"]},
    steady_window=(rf.T_END - 10, rf.T_END),
)


def protocols(only: Sequence[str] | None = None) -> list[explicit.Protocol]:
    """The seed-002 protocols (``only`` these names, if given) with 1500-byte packets."""
    return emu_common.protocols(only)


def scenario(p: explicit.Protocol, scale: float):
    return emu_common.scenario(EXPERIMENT, p, scale)


def run_rtt_fairness_emu(
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
VARIANT = Variant(EXPERIMENT.id, "emu", run_rtt_fairness_emu)
