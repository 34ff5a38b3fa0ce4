"""The one scorer (xcclab.claims) on constructed cases: each claim type, the tolerance policy,
intervals over seeds and the experiment verdict rule."""

from __future__ import annotations

import math

import pytest

from xcclab.claims import (
    PRECISION,
    Bound,
    Estimate,
    Ordering,
    Point,
    Qualitative,
    Quote,
    Reference,
    Shape,
    estimate,
    score,
    verdict,
)

Q = Quote("text", "seed 000, Section X")


def point(ours, value, precision="table", **kw):
    return score(Point(id="p", quote=Q, measure="m", ours=ours, value=value,
                       precision=precision, **kw)).status  # fmt: skip


def test_point_uses_the_papers_stated_precision():
    assert point(104.9, 100.0) == "holds"  # table: 5 %
    assert point(105.2, 100.0) == "fails"
    assert point(124.0, 100.0, "about") == "holds"  # about: 25 %
    assert point(126.0, 100.0, "about") == "fails"
    assert point(14.0, 5.0, "order") == "holds"  # order: factor 3
    assert point(16.0, 5.0, "order") == "fails"
    assert point(18, 18, "exact") == "holds"
    assert point(17, 18, "exact") == "fails"


def test_a_paper_zero_is_scored_not_dropped():
    assert point(0, 0.0, "exact") == "holds"  # "no packet loss"
    assert point(1, 0.0, "exact") == "fails"
    assert point(0.9, 0.0, "about") == "holds"  # "a queue of zero": one unit
    assert point(1.5, 0.0, "about") == "fails"


def test_a_signed_percentile_is_compared_in_points():
    # Paper: 10th percentile -15 %; ours -10.4 %: 4.6 points off (a relative difference
    # would call it -31 %, or worse near zero).
    assert point(-10.4, -15.0, points=True) == "holds"
    assert point(-88.0, -15.0, "about", points=True) == "fails"
    assert point(-5.5, -15.0, "about", points=True) == "holds"  # 9.5 points
    # A large percentage: the relative band when it is wider (300 % about: 225 to 375).
    assert point(259.0, 300.0, "about", points=True) == "holds"
    assert point(1.9e2, 1600.0, "about", points=True) == "fails"


def test_bound_is_the_papers_bound_and_reads_the_plotted_statistic():
    b = dict(id="b", quote=Q, measure="90th percentile of E_e, largest sample", op="<", limit=5.0)
    assert score(Bound(ours=2.1, **b)).status == "holds"
    assert score(Bound(ours=5.0, **b)).status == "fails"  # no tolerance added
    assert score(Bound(ours=None, **b)).status == "not measured"
    two_thirds = Bound(id="b", quote=Q, measure="m", ours=56.8, op=">", limit=200 / 3)
    assert score(two_thirds).status == "fails"


def test_ordering_and_its_interval():
    o = dict(id="o", quote=Q, measure="J MM-B - J DT", first="MM-B", second="DT")
    assert score(Ordering(ours=0.4, **o)).status == "holds"
    assert score(Ordering(ours=-0.1, **o)).status == "fails"
    assert score(Ordering(ours=Estimate(0.05, -0.02, 0.12, 10), **o)).status == "inconclusive"
    assert score(Ordering(ours=Estimate(0.05, 0.01, 0.09, 10), **o)).status == "holds"


def test_a_censored_value_is_judged_on_its_one_sided_interval():
    # Sessions still running at the end: RCP's mean completion minus SLBN's is at least -0.7 s
    # and has no upper bound, so "RCP slower" is undecided, not failed.
    o = dict(id="o", quote=Q, measure="RCP - SLBN, s", first="RCP", second="SLBN")
    undecided = Estimate.at_least(-0.7)
    assert score(Ordering(ours=undecided, **o)).status == "inconclusive"
    assert score(Ordering(ours=Estimate.at_least(0.3), **o)).status == "holds"
    assert undecided.text() == "at least -0.7"
    assert undecided.to_json() == {"mean": -0.7, "ci95": [-0.7, None], "n": 1}


def test_shape_with_definition_point_or_bound():
    overshoot = Shape(id="s", quote=Q, measure="100 ms averages", ours=11.3,
                      definition="peak over final mean, minus 1, %", value=50.0,
                      precision="about", points=True)  # fmt: skip
    assert score(overshoot).status == "fails"  # 11 % against ~50 %: 40 to 60 accepted
    settle = Shape(id="s", quote=Q, measure="m", ours=2.9, definition="last exit from +-10 %",
                   value=3.0, precision="about")  # fmt: skip
    assert score(settle).status == "holds"
    rise = Shape(id="s", quote=Q, measure="m", ours=2.6, definition="to 90 % of max-min, RTTs",
                 op="<=", limit=2.0)  # fmt: skip
    assert score(rise).status == "fails"
    with pytest.raises(ValueError, match="needs a value or a bound"):
        score(Shape(id="s", quote=Q, measure="m", ours=1.0, definition="d"))


def test_interval_over_seeds_decides_a_point():
    # Paper J = 0.9893 (table: 0.9398 to 1.0388).
    inside = Estimate(0.985, 0.975, 0.995, 10)
    across = Estimate(0.93, 0.88, 0.98, 10)
    outside = Estimate(0.70, 0.62, 0.78, 10)
    assert point(inside, 0.9893) == "holds"
    assert point(across, 0.9893) == "inconclusive"
    assert point(outside, 0.9893) == "fails"


def test_estimate_is_mean_and_student_t_interval():
    e = estimate([1.0, 2.0, 3.0, 4.0])
    assert e.mean == 2.5 and e.n == 4
    half = 3.182 * math.sqrt(5 / 3) / 2  # t(0.975, 3) * s / sqrt(n)
    assert e.lo == pytest.approx(2.5 - half) and e.hi == pytest.approx(2.5 + half)
    assert estimate([7.0]) == Estimate(7.0, 7.0, 7.0, 1)
    assert estimate([]).n == 0


def test_verdict_rule_counts_only_the_papers_claims():
    def s(kind, status_ours, **kw):
        if kind == "point":
            return score(Point(id=str(len(kw)) + repr(kw), quote=Q, measure="m",
                               ours=status_ours, value=1.0, **kw))  # fmt: skip
        return score(Reference(id="r" + repr(kw), quote=Q, measure="m", ours=status_ours,
                               value=1.0, **kw))  # fmt: skip

    # References alone never reproduce anything.
    assert verdict([s("ref", 1.0)]).verdict == "qualitative"
    assert verdict([s("point", 1.0), s("ref", 9.0)]).verdict == "reproduced"
    assert verdict([s("point", 1.0), s("point", 2.0, unit="x")]).verdict == "partly"
    assert verdict([s("point", 2.0), s("point", 1.0, unit="x"),
                    s("point", 3.0, unit="y")]).verdict == "not reproduced"  # fmt: skip
    # A claim on a reconstruction or a sensitivity setting is tallied apart.
    v = verdict([s("point", 1.0), s("point", 5.0, reconstruction="COBB"),
                 s("point", 5.0, setting="alpha 0.1")])  # fmt: skip
    assert v.verdict == "reproduced" and v.counted == 1
    assert v.tallies["reconstruction"] == {"fails": 1}
    assert v.tallies["sensitivity"] == {"fails": 1}
    q = score(Qualitative(id="q", quote=Q, measure="m", ours=None, observed="seen"))
    assert q.status == "described" and verdict([q]).verdict == "qualitative"
    # Inconclusive counts as not holding.
    inc = score(Point(id="i", quote=Q, measure="m", ours=Estimate(1.0, 0.5, 1.5, 10), value=1.0))
    assert verdict([inc]).verdict == "not reproduced"


def test_the_policy_is_the_only_tolerance():
    assert set(PRECISION) == {"table", "about", "order", "exact"}
    with pytest.raises(ValueError, match="precision 'close'"):
        point(1.0, 1.0, "close")


def test_scored_claims_serialise_with_quote_and_type():
    out = score(Point(id="p", quote=Q, measure="m", ours=Estimate(1.0, 0.9, 1.1, 10),
                      value=1.0, reconstruction="JetMax")).to_json()  # fmt: skip
    assert out["type"] == "point" and out["quote"] == "text" and out["where"].startswith("seed")
    assert out["ours"] == {"mean": 1.0, "ci95": [0.9, 1.1], "n": 10}
    assert out["reconstruction"] == "JetMax" and out["counted"] is False


def test_estimate_text_with_no_decimals_for_large_and_tiny_values():
    """`text(0)` (a queue in bytes, say) prints in scientific form beyond the plain range
    instead of failing on a negative precision."""
    from xcclab.claims import Estimate

    assert Estimate(129_600.0, 129_600.0, 129_600.0, 1).text(0) == "1e+05"
    assert Estimate(0.0004, 0.0004, 0.0004, 1).text(0) == "4e-04"
    assert Estimate(240.0, 240.0, 240.0, 1).text(0) == "2e+02"
