"""Issue 34, item 5: real-packet reports judged over repeated runs on 95 % intervals (the
mice reports' agreement with the simulator, markmax-s1's orderings). No root needed."""

from __future__ import annotations

from xcclab.claims import Estimate, estimate
from xcclab.reproduce.markmax import markmax_s1_emu as mm
from xcclab.reproduce.mice import mice_emu


def _runs(median: float, spread: float) -> dict[str, Estimate]:
    runs = [
        {
            "share_within_135ms": 1.0,
            "median_response_s": median + d,
            "p95_response_s": 2 * median + d,
            "median_completion_s": median + d,
            "p95_completion_s": 2 * median + d,
        }
        for d in (-spread, -spread / 2, 0.0, spread / 2, spread)
    ]
    return mice_emu.over_runs(runs)


def test_mice_agreement_is_judged_on_the_intervals_of_five_runs():
    close = {
        "maxnet/sim": _runs(0.045, 0.0002),
        "maxnet/emu": _runs(0.046, 0.0002),
        # Real 20 ms slower: the whole interval of the difference is beyond the 5 ms bound.
        "reno-red/sim": _runs(0.100, 0.001),
        "reno-red/emu": _runs(0.120, 0.001),
    }
    a = mice_emu.agreement(close)
    assert a["maxnet, first byte"]["verdict"] == "holds"
    assert a["reno-red, first byte"]["verdict"] == "fails"
    assert a["maxnet, first byte"]["median_diff_s"]["n"] == 5
    # A spread as wide as the bound: neither inside nor outside.
    wide = dict(close, **{"reno-red/emu": _runs(0.100, 0.02)})
    assert mice_emu.agreement(wide)["reno-red, first byte"]["verdict"] == "inconclusive"


def test_markmax_orderings_are_judged_on_the_intervals():
    def cell(j: float, q: float, spread: float) -> dict[str, Estimate]:
        return {
            "J": estimate([j - spread, j, j + spread, j - spread / 2, j + spread / 2]),
            "queue_bytes": estimate([q] * 5),
        }

    measured = {
        "dt-r7": cell(0.60, 60_000, 0.01),
        "mmb-r7": cell(0.80, 70_000, 0.01),  # fairer, interval clear of DT's
        "mmt-r7": cell(0.62, 70_000, 0.05),  # overlapping DT's
    }
    by_id = {c.id: c for c in mm.claims(measured, (7,))}
    from xcclab.claims import score

    assert score(by_id["J MM-B above DT (ratio 7)"]).status == "holds"
    assert score(by_id["J MM-T above DT (ratio 7)"]).status == "inconclusive"
    assert score(by_id["mean queue MM-B above DT (ratio 7)"]).status == "holds"
    assert mm.RUNS >= 5 and mice_emu.RUNS >= 5
