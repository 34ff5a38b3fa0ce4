"""Real-packet reports over repeated runs (issues 31 and 34): each cell runs :data:`RUNS` times
and every claim is judged on the mean and 95 % interval of its value over the runs, by the one
scorer (:func:`xcclab.claims.score`), as the simulator's seeded cells are
(:mod:`xcclab.reproduce.common.seeds`): holds when the interval lies inside the paper's band,
fails when it lies outside, inconclusive when it straddles an edge.

A claim's value is computed on each run by the experiment's own ``claims(metrics)`` and the
values are summarised (:func:`claims_over_runs`), so a claim that combines quantities of one run
(a ratio of two flows' rates, a difference of two times) is a statistic of that run and keeps
the pairing. Real against simulated agreements are judged the same way on the interval of the
difference (:func:`judge_difference`).
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Callable, Sequence
from typing import Any

from ...claims import Claim, Estimate, Qualitative, as_estimate, estimate
from ...claims import _inside as _inside_band

#: Runs of every real-packet cell (issue 34: at least 5; the claims are judged on their 95 %
#: intervals).
RUNS = 5
#: Runs at ``--quick`` (tests, development): enough for an interval, not a verdict.
QUICK_RUNS = 2


def runs_for(quick: bool) -> int:
    """How many times each real-packet cell runs."""
    return QUICK_RUNS if quick else RUNS


def load_1min() -> float:
    """The machine's load average over the last minute (the machine is shared: a run's
    context, reported beside it)."""
    return os.getloadavg()[0]


def claims_over_runs(
    claims: Callable[[dict[str, Any]], list[Claim]],
    runs: Sequence[dict[str, Any]],
) -> list[Claim]:
    """The claims of ``claims({"measured": m})`` for each run's measurements ``m`` of ``runs``,
    each with its value replaced by the mean and 95 % interval over the runs where it was
    measured (:func:`xcclab.claims.estimate`), in the first run's order. A qualitative claim
    keeps the first run's reading, with how many runs it was read on; a claim measured in no run
    stays unmeasured."""
    if not runs:
        return []
    per_run = [claims({"measured": m}) for m in runs]
    values: dict[str, list[float]] = {}
    for cs in per_run:
        for c in cs:
            e = as_estimate(c.ours)
            if e is not None and e.n > 1:
                raise ValueError(
                    f"claim {c.id!r} already carries an interval on one run; "
                    "claims_over_runs summarises single values"
                )
            if e is not None and math.isfinite(e.mean):
                values.setdefault(c.id, []).append(e.mean)
    out = []
    for c in per_run[0]:
        if isinstance(c, Qualitative):
            out.append(c)
            continue
        xs = values.get(c.id)
        out.append(dataclasses.replace(c, ours=estimate(xs) if xs else None))
    return out


def judge_difference(diff: Estimate, bound: float) -> str:
    """An agreement of two stacks: "holds" when the interval of their difference lies inside
    ``[-bound, bound]``, "fails" when it lies outside, else "inconclusive" (the scorer's rule,
    :func:`xcclab.claims._inside`)."""
    return _inside_band(diff, -bound, bound)


def difference_interval(real: Estimate, sim: Estimate) -> Estimate:
    """real - sim as an interval: the ends of the two intervals, conservatively (as
    :func:`xcclab.reproduce.common.paper_claims.difference` does for an ordering)."""
    return Estimate(real.mean - sim.mean, real.lo - sim.hi, real.hi - sim.lo, max(real.n, sim.n))


def summary(values: Sequence[float]) -> dict[str, Any]:
    """``{"values": [...], "mean", "ci95", "n"}`` (the seeded cells' summary,
    :func:`xcclab.reproduce.common.seeds.summarise`)."""
    xs = [float(v) for v in values]
    return {"values": xs, **estimate(xs).to_json()}
