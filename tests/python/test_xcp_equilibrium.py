"""XCP's equilibrium model against the simulator: the hop-order effect of the implemented law.

On the 100/50/100 Mbit/s parking lot (scenarios/parking-lot.toml) the short flow downstream of
the long flow's bottleneck gets more than the one upstream of it; reversing every flow swaps
them. The model must predict every flow's payload rate within 1 % in both directions.
"""

from __future__ import annotations

import pytest

from conftest import ROOT
from xcclab.scenario import _toml_loads
from xcclab.xcp_equilibrium import xcp_equilibrium

pytest.importorskip("xcclab._native")

CAPS = [100e6, 50e6, 100e6]
#: Payload share of an XCP data packet: 1460 B of 1460 + 40 + 18 (shim) B.
PAYLOAD = 1460 / 1518


def test_model_is_hop_order_aware():
    fwd = xcp_equilibrium(CAPS, [[0, 1, 2], [0], [1], [2]])
    rev = xcp_equilibrium(CAPS, [[2, 1, 0], [0], [1], [2]])
    # long and the middle flow share 50 Mbit/s equally in both directions
    assert fwd[0] == pytest.approx(25e6, rel=1e-4) and fwd[2] == pytest.approx(25e6, rel=1e-4)
    # the short flow after the long flow's bottleneck gets more than the one before it
    assert fwd[3] > 1.05 * fwd[1]
    assert rev[1] == pytest.approx(fwd[3], rel=1e-6) and rev[3] == pytest.approx(fwd[1], rel=1e-6)


@pytest.mark.native
@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reversed"])
def test_model_matches_the_simulator_within_1_percent(reverse):
    import xcclab

    scenario = _toml_loads((ROOT / "scenarios" / "parking-lot.toml").read_text())
    scenario["duration"] = "12s"
    paths = [[0, 1, 2], [0], [1], [2]]
    if reverse:
        for flow in scenario["flow"]:
            flow["src"], flow["dst"] = flow["dst"], flow["src"]
        paths = [[2, 1, 0], [0], [1], [2]]
    result = xcclab.run(scenario, series=True)
    measured = result.flows["late_rate_bps"].to_list()  # payload rate over the last 6 s
    model = [PAYLOAD * v for v in xcp_equilibrium(CAPS, paths)]
    for name, got, want in zip(result.flows["name"], measured, model):
        assert got == pytest.approx(want, rel=0.01), (name, got / 1e6, want / 1e6)
    # and the effect is there: the downstream short flow is ahead by more than 5 %
    down, up = (measured[3], measured[1]) if not reverse else (measured[1], measured[3])
    assert down > 1.05 * up
