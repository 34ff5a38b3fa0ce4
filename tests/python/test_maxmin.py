"""The max-min oracle through Python: hand-solvable networks and input errors."""

import numpy as np
import pytest

pytest.importorskip("xcclab._native")

from xcclab.maxmin import DEMAND, max_min_fair  # noqa: E402


def test_parking_lot_with_utilisation():
    # mu = 0.9 scales both links: (9, 18) -> flows 4.5, 4.5, 13.5.
    a = max_min_fair([10.0, 20.0], [[0, 1], [0], [1]], utilisation=0.9)
    np.testing.assert_allclose(a.rate, [4.5, 4.5, 13.5])
    assert a.bottleneck == [0, 0, 1]
    np.testing.assert_allclose(a.load, [9.0, 18.0])


def test_demand_cap():
    a = max_min_fair([12.0], [[0], [0], [0]], demand=[2.0, np.inf, np.inf])
    np.testing.assert_allclose(a.rate, [2.0, 5.0, 5.0])
    assert a.bottleneck[0] == DEMAND


def test_bad_input_is_a_value_error():
    with pytest.raises(ValueError, match="link 3"):
        max_min_fair([1.0], [[3]])
    with pytest.raises(ValueError, match="expected >= 0"):
        max_min_fair([-1.0], [[0]])


def test_allocation_is_plain_python_numbers():
    import json

    a = max_min_fair([100, 50], [[0, 1], [0], [1]])
    assert all(type(v) is float for v in a.rate + a.load)
    assert all(type(v) is int for v in a.bottleneck)
    assert json.loads(json.dumps(a.__dict__)) == {
        "rate": [25e0, 75.0, 25.0],
        "bottleneck": [1, 0, 1],
        "load": [100.0, 50.0],
    }
