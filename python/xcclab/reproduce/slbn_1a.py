"""slbn-1a: SLBN Experiment 1a: Medium network, churn (seed 004, Figs. 3-4).

50,000 sessions start in the first 500 ms; 10,000 leave and 10,000 join in the next 200 ms;
3 s in all. Error distributions at sources and bottlenecks over time for every protocol.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..claims import Bound, Claim, Ordering, Point, Shape
from .experiment import Experiment
from .paper_claims import quote
from .slbn_common import PAPER_PROTOCOLS, Setup, run_setup

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


def claims(metrics: dict) -> list[Claim]:
    m = metrics["measured"]
    out: list[Claim] = []
    cobb = quote("004", _WHERE, "COBB shows a non convergent behavior with average errors of "
                 "approximately 500%, and values of -15% and 1600% for the 10th and 90th "
                 "percentiles respectively, during the whole experiment.")  # fmt: skip
    if "cobb" in m:
        for key, value, what in (("es_mean_avg", 500.0, "average"),
                                 ("es_p10_avg", -15.0, "10th percentile"),
                                 ("es_p90_avg", 1600.0, "90th percentile")):  # fmt: skip
            out.append(
                Point(
                    id=f"COBB {what} source error",
                    quote=cobb,
                    measure=f"{what} of E_s over the sessions, averaged over the samples of the "
                    "whole run, in % (compared in points)",
                    ours=m["cobb"][key],
                    unit="%",
                    reconstruction="COBB",
                    value=value,
                    precision="about",
                    points=True,
                    note="not the paper's shape: on packets our COBB reconstruction's sessions "
                    "get about their share on average with a wide band (10th/90th percentiles "
                    "averaging "
                    f"{m['cobb']['es_p10_avg']:.0f} / {m['cobb']['es_p90_avg']:.0f} %), and its "
                    "over-assignment waits in the queues (largest "
                    f"{m['cobb']['max_queue_packets']:.0f} packets) instead of showing in "
                    "delivered rates; the session driver's assigned rates beside it (report) "
                    "are higher but far from 500 %; the cause, likely in the reconstructed law "
                    "(docs/algorithms/cobb.md), is not established",
                )
            )
    erratic = quote("004", _WHERE, "RCP and PIQI-RCP show a quite erratic behavior with errors "
                    "that are sometimes of 200%.")  # fmt: skip
    for key in ("rcp", "piqi_rcp"):
        if key in m:
            out.append(
                Shape(
                    id=f"{_NAMES[key]} errors up to 200 %",
                    quote=erratic,
                    measure="E_s at the sources",
                    ours=m[key]["es_p90_max"],
                    unit="%",
                    reconstruction=_RECONSTRUCTED.get(key),
                    definition="the largest 90th percentile of E_s over the run's samples, in %",
                    value=200.0,
                    precision="about",
                    points=True,
                    note="on packets a delivered rate cannot exceed what its bottleneck passes: "
                    "the over-assignment waits in the queues; the session driver's assigned rates "
                    "(beside, in the report) reach far higher",
                )
            )
    accuracy = quote("004", _WHERE, "Clearly, SLBN and BYZF show the better accuracy, with small "
                     "deviations from the average")  # fmt: skip
    for key in ("rcp", "piqi_rcp", "erica", "cobb"):
        if key in m and "slbn" in m:
            out.append(
                Ordering(
                    id=f"SLBN more accurate than {_NAMES[key]}",
                    quote=accuracy,
                    measure="reach of the 10th-90th percentile band of E_s from zero, "
                    "max(|p10|, |p90|), averaged over the samples: theirs minus SLBN's, points "
                    "(the average's magnitude alone would hide a wide band around zero)",
                    ours=m[key]["es_reach_avg"] - m["slbn"]["es_reach_avg"],
                    unit="points",
                    reconstruction=_RECONSTRUCTED.get(key),
                    first=_NAMES[key],
                    second="SLBN",
                )
            )
    if "erica" in m:
        out.append(
            Bound(
                id="ERICA a little above the exact rates",
                quote=quote(
                    "004",
                    _WHERE,
                    "ERICA tends to make rate assignments a little bit over the exact rate",
                ),
                measure="mean E_s (signed) over sessions and samples, %",
                ours=m["erica"]["es_mean_avg"],
                unit="%",
                op=">",
                limit=0.0,
            )
        )
    return out


EXPERIMENT = Experiment(id=ID, seed="004", title=TITLE, summary=CLAIM, run=run, claims=claims)
