"""slbn-1a: SLBN Experiment 1a: Medium network, churn (seed 004, Figs. 3-4).

50,000 sessions start in the first 500 ms; 10,000 leave and 10,000 join in the next 200 ms;
3 s in all. Error distributions at sources and bottlenecks over time for every protocol.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ...claims import Bound, Claim, Ordering, Point, Shape
from ..common.paper_claims import quote
from ..experiment import Experiment
from .setup import PAPER_PROTOCOLS, Setup
from .slbn_common import run_setup

ID = "slbn-1a"
TITLE = "SLBN Experiment 1a: Medium network, churn (seed 004, Figs. 3-4)"
CLAIM = (
    "SLBN and BFYZ most accurate, ERICA a little above the exact rates; RCP and PIQI-RCP "
    "erratic (errors up to 200 %); COBB does not converge (mean ~500 %, p10/p90 -15 % / "
    "1600 %)"
)

SETUP = Setup(
    id=ID,
    title=TITLE,
    claim=CLAIM,
    topology="medium",
    protocols=PAPER_PROTOCOLS,
    workload={
        "arrivals": [
            {"count": 50_000, "from_s": 0.0, "to_s": 0.5},
            {"count": 10_000, "from_s": 0.5, "to_s": 0.7},
        ],
        "departures": [{"count": 10_000, "from_s": 0.5, "to_s": 0.7}],
    },
    duration_s=3.0,
    sample_interval_s=0.05,
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


_RECONSTRUCTED = {"bfyz": "BFYZ", "cobb": "COBB", "piqi_rcp": "PIQI-RCP"}
_NAMES = {"slbn": "SLBN", "rcp": "RCP", "piqi_rcp": "PIQI-RCP", "erica": "ERICA", "bfyz": "BFYZ",
          "cobb": "COBB"}  # fmt: skip

_WHERE = "Section IV, Experiment 1a (Figs 3, 4)"


def assigned(metrics: dict) -> tuple[dict, str]:
    """The measures on seed 004's own E_s (the rate *assigned* to each session) per protocol,
    and where they come from: the packet run's assigned-rate columns, or, for a packet run
    saved before the engine sampled them, the session driver's run beside it on the same
    network and sessions (its E_s is on assigned rates)."""
    m = metrics["measured"]
    if m and all("es_asg_reach_avg" in v for v in m.values()):
        return m, "packet engine, rates assigned at each 50 ms sample"
    fluid = metrics.get("measured_fluid") or {}
    # The driver's E_s is of assigned rates: its es_* are the assigned measures (reports from
    # before the es_asg_* keys name them so).
    stats = ("mean_avg", "p10_avg", "p90_avg", "reach_avg", "p10_min", "p90_max")
    named = {
        p: {**v, **{f"es_asg_{k}": v[f"es_{k}"] for k in stats if f"es_{k}" in v}}
        for p, v in fluid.items()
    }
    return named, "session driver beside the packet run, rates assigned at each 50 ms sample"


def claims(metrics: dict) -> list[Claim]:
    """Seed 004 defines E_s on the rate *assigned* to each session (Section IV: "lambda_s(t)
    the rate assigned to session s at time t"): the claims are judged on it. The same
    statistics on the rates the packets *delivered* (which cannot exceed what a bottleneck
    passes) are shown apart as a second definition and never decide (issue 31)."""
    asg, source = assigned(metrics)
    dlv = metrics["measured"]
    engine = metrics.get("engine", "")
    out: list[Claim] = []
    delivered = "delivered rates (data delivered over the 50 ms before each sample)"
    cobb = quote("004", _WHERE, "COBB shows a non convergent behavior with average errors of "
                 "approximately 500%, and values of -15% and 1600% for the 10th and 90th "
                 "percentiles respectively, during the whole experiment.")  # fmt: skip
    for key, value, what in (("es_mean_avg", 500.0, "average"),
                             ("es_p10_avg", -15.0, "10th percentile"),
                             ("es_p90_avg", 1600.0, "90th percentile")):  # fmt: skip
        asg_key = key.replace("es_", "es_asg_")
        for src, tag, second in (
            (asg, "", None),
            (dlv if engine == "packets" else {}, " (delivered)", delivered),
        ):
            if "cobb" not in src or (asg_key if second is None else key) not in src["cobb"]:
                continue
            ours = src["cobb"][asg_key if second is None else key]
            out.append(
                Point(
                    id=f"COBB {what} source error{tag}",
                    quote=cobb,
                    measure=f"{what} of E_s over the sessions, averaged over the samples of the "
                    f"whole run, in % (compared in points); "
                    + (source if second is None else delivered),
                    ours=ours,
                    unit="%",
                    reconstruction="COBB",
                    second_definition=second,
                    value=value,
                    precision="about",
                    points=True,
                    note="cause not established: COBB is our reconstruction from the paper's "
                    "description (docs/algorithms/cobb.md); its law may not be the paper's",
                )
            )
    erratic = quote("004", _WHERE, "RCP and PIQI-RCP show a quite erratic behavior with errors "
                    "that are sometimes of 200%.")  # fmt: skip
    for key in ("rcp", "piqi_rcp"):
        for src, tag, second in ((asg, "", None), (dlv, " (delivered)", delivered)):
            if key not in src or (second and engine != "packets"):
                continue
            stat = "es_asg_p90_max" if second is None else "es_p90_max"
            if stat not in src[key]:
                continue
            out.append(
                Shape(
                    id=f"{_NAMES[key]} errors up to 200 %{tag}",
                    quote=erratic,
                    measure="E_s at the sources; " + (source if second is None else delivered),
                    ours=src[key][stat],
                    unit="%",
                    reconstruction=_RECONSTRUCTED.get(key),
                    second_definition=second,
                    definition="the largest 90th percentile of E_s over the run's samples, in %",
                    window="samples" if second is None else "samples (of 50 ms delivery windows)",
                    value=200.0,
                    precision="about",
                    points=True,
                    note="cause not established: the paper's Fig. 3 draws RCP's band to the "
                    "top of its axis (150 %) and gives no larger value; ours is the largest "
                    "90th percentile of E_s over the samples (the report's table gives the "
                    "mean and the 10th percentile beside it)",
                )
            )
    accuracy = quote("004", _WHERE, "Clearly, SLBN and BYZF show the better accuracy, with small "
                     "deviations from the average")  # fmt: skip
    for key in ("rcp", "piqi_rcp", "erica", "cobb"):
        for src, tag, second in ((asg, "", None), (dlv, " (delivered)", delivered)):
            if key not in src or "slbn" not in src or (second and engine != "packets"):
                continue
            stat = "es_asg_reach_avg" if second is None else "es_reach_avg"
            if stat not in src[key] or stat not in src["slbn"]:
                continue
            out.append(
                Ordering(
                    id=f"SLBN more accurate than {_NAMES[key]}{tag}",
                    quote=accuracy,
                    measure="reach of the 10th-90th percentile band of E_s from zero, "
                    "max(|p10|, |p90|), averaged over the samples: theirs minus SLBN's, points "
                    "(the average's magnitude alone would hide a wide band around zero); "
                    + (source if second is None else delivered),
                    ours=src[key][stat] - src["slbn"][stat],
                    unit="points",
                    reconstruction=_RECONSTRUCTED.get(key),
                    second_definition=second,
                    first=_NAMES[key],
                    second="SLBN",
                )
            )
    for src, tag, second in ((asg, "", None), (dlv, " (delivered)", delivered)):
        if "erica" not in src or (second and engine != "packets"):
            continue
        stat = "es_asg_mean_avg" if second is None else "es_mean_avg"
        if stat not in src["erica"]:
            continue
        out.append(
            Bound(
                id=f"ERICA a little above the exact rates{tag}",
                quote=quote(
                    "004",
                    _WHERE,
                    "ERICA tends to make rate assignments a little bit over the exact rate",
                ),
                measure="mean E_s (signed) over sessions and samples, %; "
                + (source if second is None else delivered),
                ours=src["erica"][stat],
                unit="%",
                second_definition=second,
                op=">",
                limit=0.0,
            )
        )
    return out


EXPERIMENT = Experiment(id=ID, seed="004", title=TITLE, summary=CLAIM, run=run, claims=claims)
