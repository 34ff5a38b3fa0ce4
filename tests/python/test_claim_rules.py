"""The rules of issue 31 in the scorer (xcclab.claims, docs/reproduction/verdicts.md): each
paper claim counted once, the paper's definition deciding, windows that do not depend on an
alignment, contrasts as one ordering, rounding, causes that are measured or "not
established"; and the committed snapshot (docs/reproduction) judged under them, its index and
README counts equal to what its metrics give."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from xcclab.claims import (
    Bound,
    Ordering,
    Point,
    Quote,
    Scored,
    Shape,
    cause_line,
    check_claims,
    duplicate_counted,
    half_last_digit,
    score,
    verdict,
)

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = ROOT / "docs" / "reproduction"
Q = Quote("the paper's words", "seed 000, Section X")


def test_a_claim_counted_in_two_experiments_is_found():
    a = Point(id="J", quote=Q, measure="m", ours=1.0, value=1.0)
    b = Point(id="J (other id)", quote=Q, measure="m", ours=1.0, value=1.0)
    assert list(duplicate_counted({"e1": [a], "e2": [b]}).values()) == [["e1", "e2"]]
    shown = Point(id="J", quote=Q, measure="m", ours=1.0, value=1.0, counted_in="e1")
    assert duplicate_counted({"e1": [a], "e2": [shown]}) == {}
    # Shown, not counted: the experiment's verdict does not rest on it.
    assert not score(shown).counted
    assert verdict([score(shown)]).verdict == "counted elsewhere"
    with pytest.raises(ValueError, match="its own experiment"):
        check_claims("e1", [Point(id="J", quote=Q, measure="m", ours=1, value=1, counted_in="e1")])


def test_a_second_definition_never_decides_and_needs_the_papers_beside_it():
    paper = Bound(id="ERICA above", quote=Q, measure="assigned", ours=-1.0, op=">", limit=0.0)
    second = Bound(id="ERICA above (delivered)", quote=Q, measure="delivered", ours=5.0,
                   op=">", limit=0.0, second_definition="delivered")  # fmt: skip
    v = verdict([score(paper), score(second)])
    assert (v.counted, v.holding, v.verdict) == (1, 0, "not reproduced")
    assert v.tallies["second definition"] == {"holds": 1}
    check_claims("e", [paper, second])
    with pytest.raises(ValueError, match="paper's definition beside it"):
        check_claims("e", [second])


def test_a_shape_declares_a_window_that_does_not_depend_on_alignment():
    def shape(window, **kw):
        return Shape(id="overshoot", quote=Q, measure="m", ours=300.0, value=300.0,
                     window=window, **kw)  # fmt: skip

    for ok in ("samples", "sliding: 100 ms at every 10 ms alignment", "whole run"):
        check_claims("e", [shape(ok)])
    with pytest.raises(ValueError, match="must declare its window"):
        check_claims("e", [shape("")])
    with pytest.raises(ValueError, match="must declare its window"):
        check_claims("e", [shape("fixed 100 ms bins")])
    # A window left open must be swept.
    with pytest.raises(ValueError, match="no sensitivity row sweeps it"):
        check_claims("e", [shape("open: the slide gives none")])
    swept = Shape(id="overshoot (10 ms window)", quote=Q, measure="m", ours=900.0,
                  value=300.0, window="open: swept", setting="10 ms window")  # fmt: skip
    check_claims("e", [shape("open: the slide gives none"), swept])


def test_a_contrast_is_one_ordering_and_its_sides_are_shown_apart():
    c = Quote("A is slowed; in contrast B is not", "seed 001, Section 4.3", contrast=True)
    side = Point(id="B not slowed", quote=c, measure="m", ours=1.0, value=1.0)
    with pytest.raises(ValueError, match="one ordering"):
        check_claims("e", [side])
    both = Ordering(id="A slowed more than B", quote=c, measure="m", ours=-0.01,
                    first="A", second="B")  # fmt: skip
    check_claims("e", [both, side])
    v = verdict([score(both), score(side)])
    assert (v.counted, v.holding) == (1, 0)  # the side that holds does not count
    assert v.tallies["second definition"] == {"holds": 1}


def test_a_rounded_number_gets_half_its_last_digit():
    assert half_last_digit("0.99") == pytest.approx(0.005)
    assert half_last_digit("300") == pytest.approx(0.5)
    assert half_last_digit("~1.5") == pytest.approx(0.05)
    assert half_last_digit("2e3") == pytest.approx(500)
    # "7 ms" in a table: 5 % is 0.35 ms, narrower than the half millisecond "7" was printed to.
    seven = Point(id="T", quote=Q, measure="m", ours=7.45, value=7.0, printed="7")
    assert score(seven).status == "holds"
    assert seven.band() == (6.5, 7.5)
    assert Point(id="T", quote=Q, measure="m", ours=7.45, value=7.0).band() == pytest.approx(
        (6.65, 7.35)
    )  # not a printed number (no `printed`): the policy's band alone
    # A printed value can say how it was rounded; an exact count is not widened.
    assert Point(id="t", quote=Q, measure="m", ours=0, value=1.0, precision="table",
                 printed="1.00").band() == pytest.approx((0.95, 1.05))  # fmt: skip
    assert Point(id="n", quote=Q, measure="m", ours=0, value=4.0,
                 precision="exact").band() == (4.0, 4.0)  # fmt: skip


def test_a_cause_is_measured_or_not_established():
    metrics = {"measured": {"cobb": {"max_queue_packets": 296023.0}}}
    base = dict(id="c", quote=Q, measure="m", ours=1.0, value=2.0)
    measured = Scored(Point(**base, note="its queues hold the over-assignment",
                            evidence=("measured.cobb.max_queue_packets",)), "fails")  # fmt: skip
    line = cause_line(measured, metrics)
    assert line == (
        "cause: its queues hold the over-assignment (measured: "
        "`measured.cobb.max_queue_packets` = 2.960e+05)"
    )
    bare = Scored(Point(**base, note="the law is reconstructed"), "fails")
    assert cause_line(bare, metrics).startswith(
        "cause not established; a candidate, not measured in this report: the law"
    )
    said = Scored(Point(**base, note="Cause not established: the paper's t_f is unknown"), "fails")
    assert cause_line(said, metrics) == "cause not established; the paper's t_f is unknown"
    assert cause_line(Scored(Point(**base), "fails"), metrics) == "cause not established"
    missing = Scored(Point(**base, note="x", evidence=("measured.nothing",)), "fails")
    with pytest.raises(KeyError):
        cause_line(missing, metrics)
    with pytest.raises(ValueError, match="cannot list evidence"):
        check_claims("e", [Point(**base, note="cause not established", evidence=("a",))])


# --- the committed snapshot --------------------------------------------------------------


def _judged():
    """Every experiment of the catalog with a committed report: its claims and scores."""
    from xcclab.reproduce import experiments
    from xcclab.reproduce.verdicts import judge

    out = {}
    for e in experiments():
        path = SNAPSHOT / e.id / "metrics.json"
        if path.is_file():
            metrics = json.loads(path.read_text(encoding="utf-8"))
            out[e.id] = (e, metrics, *judge(e, metrics))
    return out


@pytest.fixture(scope="module")
def judged():
    return _judged()


def test_no_paper_claim_is_counted_in_two_committed_experiments(judged):
    claims = {eid: [s.claim for s in scored] for eid, (_e, _m, scored, _v) in judged.items()}
    assert duplicate_counted(claims) == {}
    # Every "counted in" names an experiment that counts the same paper claim.
    counted = {
        (eid, s.claim.paper_key()) for eid, (_e, _m, sc, _v) in judged.items() for s in sc
        if s.counted
    }  # fmt: skip
    for eid, (_e, _m, scored, _v) in judged.items():
        for s in scored:
            if s.claim.counted_in:
                assert (s.claim.counted_in, s.claim.paper_key()) in counted, (eid, s.claim.id)


def test_every_failing_claim_of_the_snapshot_has_a_measured_or_not_established_cause(judged):
    for eid, (_e, metrics, scored, _v) in judged.items():
        for s in scored:
            if s.counted or (s.claim.reconstruction and s.claim.kind not in ("reference",)):
                if s.status in ("holds", "described"):
                    continue
                line = cause_line(s, metrics)
                assert line.startswith(("cause: ", "cause not established")), (eid, s.claim.id)
                if line.startswith("cause: "):
                    assert "(measured: `" in line, (eid, s.claim.id)


def test_the_committed_reports_carry_the_verdicts_their_metrics_give(judged):
    for eid, (_e, metrics, _scored, v) in judged.items():
        assert metrics["verdict"]["verdict"] == v.verdict, eid
        assert metrics["verdict"]["tallies"] == v.tallies, eid
        report = (SNAPSHOT / eid / "report.md").read_text(encoding="utf-8")
        assert f"## Verdict: {v.verdict} ({v.holding} of {v.counted} counted" in report, eid


def test_index_and_readme_counts_are_the_datas(judged):
    from xcclab.reproduce.index import COUNTS_BEGIN, COUNTS_END, Row, counts_block, tally

    rows = [
        Row(e, e.summary, tally(v.tallies), v.verdict, f"{eid}/report.md", [], None, v.tallies)
        for eid, (e, _m, _s, v) in judged.items()
    ]
    block = counts_block(rows)
    for doc in ("index.md", "README.md"):
        text = (SNAPSHOT / doc).read_text(encoding="utf-8")
        assert f"{COUNTS_BEGIN}\n{block}\n{COUNTS_END}" in text, (
            f"docs/reproduction/{doc}: its counts are not the committed reports' (regenerate "
            "with `xcc reproduce --index --out docs/reproduction`)"
        )
    # The index's per-experiment verdicts and its per-paper table are the data's too.
    index = (SNAPSHOT / "index.md").read_text(encoding="utf-8")
    for r in rows:
        assert f"| {r.verdict} |" in index.split(f"[{r.experiment.id}]", 1)[1].split("\n")[0]


def test_a_sliding_window_finds_the_burst_fixed_bins_split():
    """xcc-abrupt's overshoot: a 100 ms burst at 4 C from 50 ms, on 10 ms samples. Fixed 100 ms
    bins from 0 see two halves (2.5 C each); the 100 ms window at every alignment sees the
    whole burst (4 C)."""
    import numpy as np

    from xcclab.reproduce.common import explicit as _xcc
    from xcclab.reproduce.xcc.xcc_abrupt import sliding_peak

    t = np.arange(1, 41) * 0.01
    x = np.where((t > 0.05 + 1e-9) & (t <= 0.15 + 1e-9), 4.0, 1.0)
    assert _xcc.averaged(t, x, 10)[1].max() == pytest.approx(2.5)
    assert sliding_peak(t, x, 0.1, 0.0, 0.4) == pytest.approx(4.0)
    assert _xcc.sliding(t, x, 10)[1].max() == pytest.approx(4.0)
    assert sliding_peak(t, x, 0.01, 0.0, 0.4) == pytest.approx(4.0)  # the samples themselves


def test_the_mice_seeds_draw_the_arrival_times():
    from xcclab.reproduce.mice import mice

    def starts(seed):
        sc = mice.scenario("reno-red", 5, arrival_seed=seed)
        return [t["start"] for t in sc.to_dict()["transactions"]]

    assert starts(1) != starts(2) and starts(1) == starts(1)
    even = mice.scenario("reno-red", 5).to_dict()["transactions"]
    assert len(even) == 1 and even[0]["count"] == 5  # without a seed: evenly spaced


def test_index_writes_the_counts_into_the_readme(tmp_path):
    """`xcc reproduce --index` puts the counts it writes into index.md between the README's
    markers too, and refuses a README without them rather than guess where."""
    from xcclab.cli import main
    from xcclab.reproduce.index import COUNTS_BEGIN, COUNTS_END, insert_counts

    out = tmp_path / "snap"
    d = out / "maxnet-encoding"
    d.mkdir(parents=True)
    comparisons = [
        {"quantity": q, "paper": p, "ours": o, "unit": "bits", "cell": {}}
        for q, p, o in (("B_i", 4, 4), ("B_f", 18, 19))
    ]
    (d / "metrics.json").write_text(json.dumps({"comparisons": comparisons, "figures": []}))
    (out / "README.md").write_text(f"# R\n\n{COUNTS_BEGIN}\nold: 99 hold\n{COUNTS_END}\n\ntail\n")
    assert main(["reproduce", "--index", "--out", str(out)]) == 0
    readme = (out / "README.md").read_text()
    block = readme.split(COUNTS_BEGIN)[1].split(COUNTS_END)[0]
    assert "99" not in block and "| counted paper claims | 1 | 1 | 0 | 0 | 0 | 2 |" in block
    assert block in (out / "index.md").read_text() and readme.endswith("tail\n")
    with pytest.raises(ValueError, match="markers"):
        insert_counts("no markers here", "x")
