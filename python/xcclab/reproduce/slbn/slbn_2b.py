"""slbn-2b: SLBN Experiment 2b: Large network, churn after convergence (seed 004, Figs. 9-10).

100,000 sessions in the first second; at 10 s, 50,000 arrive and 50,000 leave during the next
second. Only the second phase is shown (from 9 s), as in the paper.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ...claims import Bound, Claim, Qualitative
from ..common.paper_claims import quote
from ..experiment import Experiment
from .setup import Setup
from .slbn_common import run_setup

ID = "slbn-2b"
TITLE = "SLBN Experiment 2b: Large network, churn after convergence (seed 004, Figs. 9-10)"
CLAIM = (
    "No significant overshoot (BFYZ below 5 %), errors nearly constant through the churn, "
    "maximum queue bounded by ~3 % of link capacity"
)

SETUP = Setup(
    id=ID,
    title=TITLE,
    claim=CLAIM,
    engine="packets",
    topology="large",
    protocols=("slbn", "bfyz"),
    workload={
        "arrivals": [
            {"count": 100_000, "from_s": 0.0, "to_s": 1.0},
            {"count": 50_000, "from_s": 10.0, "to_s": 11.0},
        ],
        "departures": [{"count": 50_000, "from_s": 10.0, "to_s": 11.0}],
    },
    duration_s=13.0,
    sample_interval_s=0.1,
    plot_from_s=9.0,
    quick_duration_s=12.0,
    notes=[
        "Every data and control packet is simulated (the packet engine, as slbn-1a, 1b and "
        "2a); the session driver's run (fluid data) is beside it, a labelled approximation "
        "(its bounds: docs/reproduction/session-driver-validation.md). Each protocol is 5.5 G "
        "packet-hops over the 13 s: 43 minutes (SLBN) and 47 minutes (BFYZ) of wall time, "
        "run side by side on the two cores (2026-11-26; docs/performance.md).",
        'The paper says the churn starts "after 9 seconds"; experiments.md places it at 10 s.',
        "BFYZ runs with closed-loop RM cells (`closed_loop: true`: one cell in flight, the "
        "next when it is back and the 1 % budget allows), not its default steady stream of cells "
        "(a constant fraction of the cells, several per round trip). On slbn-1a (Medium) the "
        "stream costs 2.4 times the events (80.8 M against 34.4 M) for the same accuracy: mean "
        "width of the 10th-90th percentile band of E_s 20.1 points with the stream, 21.2 closed "
        "loop (SLBN 22.0), both exact at the end. Here, with 150,000 sessions over 13 s, the "
        "stream would more than double BFYZ's run (docs/algorithms/bfyz.md).",
    ],
    params={"bfyz": {"closed_loop": True}},
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


_WHERE = "Section IV, Experiment 2b (Figs 9, 10)"


def claims(metrics: dict) -> list[Claim]:
    m = metrics["measured"]
    out: list[Claim] = []
    text = (
        "there is no significant overshooting at the links (BFYZ's being higher, but always "
        "below 5%)"
    )
    offered = (
        "the plotted statistic on the offered load: the 90th percentile over the bottlenecks "
        "of E_e computed from the bits *arriving* at each link over the window (on packets a "
        "link cannot send more than its capacity, so an overshoot is what arrives beyond it), "
        "its largest value over the samples, %"
    )
    # Seed 004 defines E_e on the rates *assigned* to the sessions crossing a link (issue 31):
    # that decides; the offered load on packets (the bits arriving) is shown apart. A packet
    # run from before the engine sampled assigned rates is judged on the session driver's run
    # beside it (its E_e is of assigned rates), and says so.
    fluid = metrics.get("measured_fluid") or {}
    assigned = (
        "the plotted statistic on the assigned rates (seed 004's E_e: the sum of the rates "
        "assigned to the sessions crossing each bottleneck against its capacity), its 90th "
        "percentile over the bottlenecks, largest over the samples, %"
    )
    for proto, claim_id in (
        ("bfyz", "BFYZ overshoot always below 5 %"),
        ("slbn", "SLBN overshoot below 5 %"),
    ):
        if proto in m and "ee_asg_p90_max" in m[proto]:
            asg, source = m[proto]["ee_asg_p90_max"], "packet engine"
        elif proto in fluid:
            asg, source = fluid[proto]["ee_p90_max"], "session driver beside the packet run"
        else:
            asg = None
        if asg is not None:
            out.append(
                Bound(
                    id=claim_id,
                    quote=quote("004", _WHERE, text),
                    measure=f"{assigned}; {source}",
                    ours=asg,
                    unit="%",
                    reconstruction="BFYZ" if proto == "bfyz" else None,
                    op="<",
                    limit=5.0,
                )
            )
        if proto in m and "ee_offered_p90_max" in m[proto] and asg is not None:
            out.append(
                Bound(
                    id=f"{claim_id} (offered load)",
                    quote=quote("004", _WHERE, text),
                    measure=offered,
                    ours=m[proto]["ee_offered_p90_max"],
                    unit="%",
                    reconstruction="BFYZ" if proto == "bfyz" else None,
                    second_definition="the offered load (bits arriving), not the assigned rates",
                    op="<",
                    limit=5.0,
                )
            )
    if "slbn" in m:
        out.append(
            Bound(
                id="SLBN max queue bounded by 3 % of capacity",
                quote=quote(
                    "004",
                    "Section IV, summary",
                    "the maximum of queue sizes is upper bounded by 3% of the link capacity",
                ),
                measure="largest queue of any link over the run, in seconds of that link's "
                "capacity, in % of one second (our reading of '% of the link capacity')",
                ours=100 * m["slbn"]["max_queue_delay_s"],
                unit="%",
                op="<=",
                limit=3.0,
                note="the largest queues are transients at destination hosts' 100 Mb/s "
                "access links during the churn (on packets 730 kB, 58 ms, on one at 10.5 s and "
                "718 kB on another at 11.3 s, from the run's links table); every other link "
                "stays under 2.9 %, router links under 1 %; the reading of '3% of the link "
                "capacity' (bytes per second of capacity) is ours",
            )
        )
    out.append(
        Qualitative(
            id="errors nearly constant through the churn",
            quote=quote(
                "004",
                _WHERE,
                "the session churn pattern does not affect the stability "
                "of the rates at sources and links",
            ),
            measure="E_s percentiles over time (figure)",
            ours=None,
            observed=", ".join(
                f"{k}: E_s 10th-90th percentile spread {v['es_spread_avg']:.1f} points on average"
                for k, v in m.items()
            ),
        )
    )
    return out


EXPERIMENT = Experiment(
    id=ID,
    seed="004",
    title=TITLE,
    summary=CLAIM,
    run=run,
    claims=claims,
)
