"""slbn-2a: SLBN Experiment 2a: Large network, mass arrival (seed 004, Figs. 7-8).

180,000 sessions injected during the first second on the 11,000-router network; SLBN vs BFYZ.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ...claims import Claim, Ordering, Qualitative
from ..common.paper_claims import quote
from ..experiment import Experiment
from .setup import Setup
from .slbn_common import run_setup

ID = "slbn-2a"
TITLE = "SLBN Experiment 2a: Large network, mass arrival (seed 004, Figs. 7-8)"
CLAIM = (
    "SLBN and BFYZ both approach the max-min rates quickly without overshooting links; "
    "SLBN a little more conservative"
)

SETUP = Setup(
    id=ID,
    title=TITLE,
    claim=CLAIM,
    engine="packets",
    topology="large",
    protocols=("slbn", "bfyz"),
    workload={"arrivals": [{"count": 180_000, "from_s": 0.0, "to_s": 1.0}]},
    duration_s=3.0,
    sample_interval_s=0.1,
    params={"bfyz": {"closed_loop": True}},
    notes=[
        "BFYZ runs with closed-loop RM cells (`closed_loop: true`: one cell in flight, the "
        "next when it is back and the 1 % budget allows), not its default steady stream of cells "
        "(a constant fraction of the cells, several per round trip). On slbn-1a (Medium) the "
        "stream costs 2.4 times the events (80.8 M against 34.4 M) for the same accuracy: mean "
        "width of the 10th-90th percentile band of E_s 20.1 points with the stream, 21.2 closed "
        "loop (SLBN 22.0), both exact at the end; at this scale the same ratio would add some "
        "150 M events, about 6 minutes on the quiet machine and several times that under the "
        "load other jobs put on this shared 2-core machine, against the experiment's 15-minute "
        "budget (docs/algorithms/bfyz.md, docs/performance.md).",
    ],
)


def run(
    out_dir: str | Path,
    quick: bool = False,
    *,
    log: Callable[[str], None] | None = None,
    progress: bool = True,
) -> Path:
    """Run every protocol of the experiment; write report.md, metrics.json and figures."""
    return run_setup(SETUP, out_dir, quick=quick, log=log)


_WHERE = "Section IV, Experiment 2a (Figs 7, 8)"


def claims(metrics: dict) -> list[Claim]:
    m = metrics["measured"]
    out: list[Claim] = []
    # Seed 004's E_s is on the *assigned* rates (issue 31): that decides; the delivered rates
    # of the packet run are shown apart. A packet run from before the engine sampled assigned
    # rates is judged on the session driver's run beside it.
    fluid = metrics.get("measured_fluid") or {}
    if all(p in m and "es_asg_mean_avg" in m[p] for p in ("slbn", "bfyz")):
        asg = {p: m[p]["es_asg_mean_avg"] for p in ("slbn", "bfyz")}
        source = "packet engine, rates assigned at each sample"
    elif all(p in fluid for p in ("slbn", "bfyz")):
        asg = {p: fluid[p]["es_mean_avg"] for p in ("slbn", "bfyz")}
        source = "session driver beside the packet run, rates assigned at each sample"
    else:
        asg = None
    conservative = quote("004", _WHERE, "However, SLBN is a bit more conservative than BFYZ.")
    if asg is not None:
        out.append(
            Ordering(
                id="SLBN more conservative than BFYZ",
                quote=conservative,
                measure="mean E_s (signed) over sessions and samples: BFYZ's minus SLBN's, "
                f"points; {source}",
                ours=asg["bfyz"] - asg["slbn"],
                unit="points",
                reconstruction="BFYZ",
                first="BFYZ",
                second="SLBN",
                note="cause not established: our BFYZ is a reconstruction run with closed-loop "
                "RM cells (set-up), which may make it more cautious than the paper's",
            )
        )
    if asg is not None and "slbn" in m and "bfyz" in m:
        out.append(
            Ordering(
                id="SLBN more conservative than BFYZ (delivered)",
                quote=conservative,
                measure="mean E_s (signed) over sessions and samples: BFYZ's minus SLBN's, "
                "points; delivered rates",
                ours=m["bfyz"]["es_mean_avg"] - m["slbn"]["es_mean_avg"],
                unit="points",
                reconstruction="BFYZ",
                second_definition="delivered rates, not the assigned ones",
                first="BFYZ",
                second="SLBN",
            )
        )
    obs = ", ".join(
        f"{k}: largest 90th percentile of E_e {v['ee_p90_max']:.1f} %, largest E_e "
        f"{v['ee_max_max']:.1f} %, largest queue {v['max_queue_packets']:.0f} packets "
        f"({1e3 * v['max_queue_delay_s']:.1f} ms of its link)"
        for k, v in m.items()
    )
    if metrics.get("engine") == "packets":
        obs += (
            " (on packets a link sends at most its capacity, so an overshoot of the assigned "
            "rates shows as queue, not as E_e above 0)"
        )
    out.append(
        Qualitative(
            id="no significant overshoot",
            quote=quote(
                "004",
                _WHERE,
                "Both algorithms quickly approach the max-min fair rates, "
                "what implies almost full utilization of the links but never "
                "overshooting them significantly.",
            ),
            measure="E_e at the bottlenecks",
            ours=None,
            observed=obs,
        )
    )
    return out


EXPERIMENT = Experiment(id=ID, seed="004", title=TITLE, summary=CLAIM, run=run, claims=claims)
