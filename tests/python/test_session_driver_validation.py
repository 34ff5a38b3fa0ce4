"""The session driver against the packet engine on a small case of the Medium network: the
bounds it is stated to meet (docs/reproduction/session-driver-validation.md) hold for the two
converging protocols, and the quantity it is known to get wrong is seen to be wrong."""

from __future__ import annotations

import math

import pytest

from xcclab.reproduce.slbn import slbn_validation as V

#: What the driver is claimed good for: each must be measured and within its bound.
CLAIMED = {"rate_p99", "es_band", "es_mean", "ee_mean", "queue_ratio"}


@pytest.mark.parametrize("protocol", V.CONVERGING)
def test_driver_meets_its_stated_bounds_on_medium(protocol):
    v = V.run_case(protocol)
    assert v.values["rate_sessions"] == V.CASE.workload["arrivals"][0]["count"]
    checked = {b.quantity: (value, ok) for b, value, ok in v.check()}
    assert set(checked) >= CLAIMED, checked
    assert all(ok for _, ok in checked.values()), checked
    # Where it is not validated: while sessions arrive the driver's assigned rates are not the
    # delivered ones (the packet engine's 10th percentile stays at -100 % for 100 ms longer).
    breaks = v.check(V.BREAKS)
    assert [b.quantity for b, _, _ in breaks] == ["es_band_moving"]
    assert all(ok for _, _, ok in breaks), breaks


def test_a_bound_that_fails_is_flagged():
    bound = V.Bound("es_band", ("slbn",), 3.0)
    v = V.Validation("slbn", {"es_band": 4.0, "ee_mean": math.nan}, None)
    assert v.check((bound,)) == [(bound, 4.0, False)]
    assert V.Validation("bfyz", {"es_band": 4.0}, None).check((bound,)) == []
    assert "4.00 **(!)**" in V.table([v])
