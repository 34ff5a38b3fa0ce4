"""Issue 34, item 5: real-packet reports judged over repeated runs on 95 % intervals (the
mice reports' agreement with the simulator, markmax-s1's orderings, seed 002's comparisons,
the shared rule of :mod:`xcclab.reproduce.common.repeats`). No root needed: the real-packet
runner is replaced by the simulator where a whole report is run."""

from __future__ import annotations

import json

import pytest

from xcclab.claims import Estimate, Point, Quote, estimate
from xcclab.reproduce.common import repeats
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
    assert mm.RUNS >= 5 and repeats.runs_for(quick=False) >= 5


def _point(value: float) -> Point:
    return Point("x", Quote("q", "w"), "m", value, value=10.0, precision="table")


def test_claims_over_runs_judge_the_interval_by_the_scorers_rule():
    """Inside the band: holds; outside: fails; across an edge: inconclusive (the rule of the
    seeded cells, xcclab.claims), with n = the number of runs that measured the claim."""
    from xcclab.claims import score

    def judged(values):
        runs = [{"v": v} for v in values]
        (c,) = repeats.claims_over_runs(lambda m: [_point(m["measured"]["v"])], runs)
        return score(c)

    inside = judged([9.9, 10.0, 10.1, 10.0, 9.95])
    assert inside.status == "holds" and inside.ours.n == 5
    assert judged([20.0, 20.5, 19.5, 20.2, 19.8]).status == "fails"
    # Every run's value lies inside the band, yet the interval over the five reaches past it.
    band_lo, band_hi = _point(10.0).band()
    straddling = judged([band_lo + 0.01, band_hi - 0.01, 10.0, band_lo + 0.02, band_hi - 0.02])
    assert straddling.ours.lo < band_lo or straddling.ours.hi > band_hi
    assert straddling.status == "inconclusive"
    # A run that did not measure the claim leaves it out of n.
    (c,) = repeats.claims_over_runs(
        lambda m: [_point(m["measured"]["v"])], [{"v": 10.0}, {"v": float("nan")}, {"v": 10.0}]
    )
    assert c.ours.n == 2


def test_agreement_of_two_stacks_on_intervals():
    assert repeats.judge_difference(Estimate(1.0, 0.99, 1.01, 5), 0.05) == "fails"
    assert repeats.judge_difference(Estimate(0.01, -0.02, 0.03, 5), 0.05) == "holds"
    assert repeats.judge_difference(Estimate(0.2, 0.1, 0.3, 5), 0.05) == "fails"
    assert repeats.judge_difference(Estimate(0.04, 0.0, 0.08, 5), 0.05) == "inconclusive"
    d = repeats.difference_interval(Estimate(5.0, 4.0, 6.0, 5), Estimate(3.0, 3.0, 3.0, 1))
    assert (d.mean, d.lo, d.hi, d.n) == (2.0, 1.0, 3.0, 5)


def test_xcc_emu_report_judges_every_real_claim_over_the_full_number_of_runs(tmp_path, monkeypatch):
    """xcc-rtt-fairness --emu with the emulator replaced by the simulator (the real run's
    seed as its seed): the report runs each protocol runs_for(quick=False) times on each side
    and every measured claim carries that n, simulated and real."""
    import xcclab
    import xcclab.emu as emu
    from xcclab.reproduce.xcc import emu_common
    from xcclab.reproduce.xcc import xcc_rtt_fairness_emu as rfe

    calls = []

    def fake_emulate(sc, seed=None, out=None, **_kw):
        calls.append(seed)
        res = xcclab.run(sc, seed=seed, progress=False)
        if out is not None:
            res.save(out)
        return res

    monkeypatch.setattr(emu, "emulate", fake_emulate)
    monkeypatch.setattr(emu, "preflight", lambda _sc: None)
    monkeypatch.setattr(emu_common, "QUICK_SCALE", 0.05)  # 2 s runs: seconds in all
    monkeypatch.setattr(emu_common, "runs_for", lambda quick: repeats.runs_for(False))
    rfe.run_rtt_fairness_emu(tmp_path, quick=True, only=["xcp"])
    n = repeats.runs_for(False)
    assert calls == list(range(1, n + 1))
    m = json.loads((tmp_path / "emu" / "metrics.json").read_text())
    assert m["runs_per_cell"] == n and len(m["real_runs"]["xcp"]) == n
    numeric = [r for r in m["claims_sim_real"] if r["real"] and r["real"]["interval"]]
    assert numeric and all(r["real"]["interval"]["n"] == n for r in numeric)
    assert all(r["sim"]["interval"]["n"] == n for r in numeric)
    # The fake real runs are the simulated ones, seed for seed: the same interval on both
    # sides, so the difference straddles zero and is within any bound wider than its spread.
    for r in numeric:
        assert r["real"]["interval"] == r["sim"]["interval"]
        assert r["difference"] == pytest.approx(0.0)
    assert sorted(p.name for p in (tmp_path / "emu" / "runs").iterdir()) == sorted(
        [f"xcp-emu-{i}" for i in range(1, n + 1)] + [f"xcp-sim-{i}" for i in range(1, n + 1)]
    )
    report = (tmp_path / "emu" / "report.md").read_text()
    assert f"(n = {n})" in report and "load (1 min) before / after" in report


@pytest.mark.parametrize("quick, at_least", [(False, 5), (True, 2)])
def test_runs_per_real_packet_cell(quick, at_least):
    assert repeats.runs_for(quick) >= at_least


@pytest.mark.slow  # fifteen simulated runs and a fluid model: about a minute on a loaded machine
def test_maxnet_cbr_stacks_judge_every_stack_over_the_full_number_of_runs(tmp_path, monkeypatch):
    """maxnet-cbr --stack with the real stacks replaced by the simulator: every stack runs
    runs_for(quick=False) times with seeds 1..n, and every measured claim and every
    real-against-simulated row carries that n."""
    from xcclab.reproduce.maxnet import maxnet_cbr as base
    from xcclab.reproduce.maxnet import maxnet_cbr_stacks as st

    simulate = st.run_stack
    seeds = []

    def fake(stack, scale, seed=1):
        seeds.append((stack, seed))
        return simulate("sim", scale, seed)

    monkeypatch.setattr(st, "run_stack", fake)
    monkeypatch.setattr(base, "QUICK_SCALE", 0.1)  # 3 s runs
    monkeypatch.setattr(st, "runs_for", lambda quick: repeats.runs_for(False))
    st.run(tmp_path, quick=True)
    n = repeats.runs_for(False)
    assert seeds == [(s, i) for s in st.STACKS for i in range(1, n + 1)]
    m = json.loads((tmp_path / "metrics.json").read_text())
    assert {s: len(r) for s, r in m["runs"].items()} == dict.fromkeys(st.STACKS, n)
    for stack, claims in m["claims"].items():
        measured = [c for c in claims if c["ours"] is not None]
        # A time the short runs never reach is missing from some runs: n counts the others.
        assert measured and all(1 <= c["ours"]["n"] <= n for c in measured), stack
        by_id = {c["id"]: c for c in measured}
        assert by_id["utilisation before the CBR"]["ours"]["n"] == n, stack
    gap = m["real_vs_sim"][0]
    assert gap["interval"]["kernel"]["n"] == n and gap["sim_interval"]["n"] == n
    # The fake real runs are the simulated ones: the difference straddles zero.
    assert gap["status"]["kernel"] in ("holds", "inconclusive")
    report = (tmp_path / "report.md").read_text()
    assert f"(n = {n})" in report and "[kernel #5](runs/kernel-5/run.json)" in report


@pytest.mark.slow  # eight simulated mice runs of 30 s
def test_mice_emu_report_tables_every_run_with_its_load(tmp_path, monkeypatch):
    """mice-http-50 --emu --quick with the emulator replaced by the simulator: every stack
    runs runs_for(quick) times on each side, the agreement is judged on intervals of that n and
    the report tables every run with the machine's load."""
    import xcclab
    import xcclab.emu as emu

    def fake_emulate(sc, seed=None, out=None, **_kw):
        res = xcclab.run(sc, seed=seed, progress=False)
        if out is not None:
            res.save(out)
        return res

    monkeypatch.setattr(emu, "emulate", fake_emulate)
    monkeypatch.setattr(emu, "preflight", lambda _sc: None)
    mice_emu.HTTP_50.run(tmp_path, quick=True)
    n = repeats.runs_for(True)
    m = json.loads((tmp_path / "emu" / "metrics.json").read_text())
    assert m["runs_per_stack"] == n
    assert all(a["median_diff_s"]["n"] == n for a in m["agreement"].values())
    report = (tmp_path / "emu" / "report.md").read_text()
    assert "load (1 min) before / after" in report and f"reno-red/emu #{n}" in report


@pytest.mark.slow  # six simulated mice runs of 30 s
def test_mice_stacks_report_gives_every_stack_over_its_runs(tmp_path, monkeypatch):
    """mice-http-200 --stack kernel --quick with the real stacks replaced by the simulator:
    each stack runs runs_for(quick) times with seeds 1..n, summarised with that n."""
    from xcclab.reproduce.mice import mice_stacks as ms

    simulate = ms.run_stack
    seeds = []

    def fake(stack, k, rate, scale, seed=1):
        seeds.append((stack, seed))
        return simulate("sim", k, rate, scale, seed)

    monkeypatch.setattr(ms, "run_stack", fake)
    ms.run(tmp_path, quick=True, stack="kernel")
    n = repeats.runs_for(True)
    assert seeds == [(s, i) for s in ms.STACKS for i in range(1, n + 1)]
    m = json.loads((tmp_path / "metrics.json").read_text())
    assert all(v["share_within_135ms"]["n"] == n for v in m["repeated"].values())
    report = (tmp_path / "report.md").read_text()
    assert f"[kernel #{n}](runs/kernel-{n}/run.json)" in report
