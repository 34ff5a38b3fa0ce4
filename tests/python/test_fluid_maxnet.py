"""The MaxNet fluid model: equilibrium, convergence to mu C, and bad input."""

import numpy as np
import pytest

from xcclab.fluid.maxnet import MaxNetFluidParams, equilibrium, single_link


def test_equilibrium_is_a_fixed_point():
    # Without a change in cross traffic nothing moves (the integrator and the price stand still).
    r = single_link(1e8, 0.9, 0.05, 2, lambda t: 10e6, 1.0)
    assert np.allclose(r.rate_per_flow_bps, (0.9e8 - 10e6) / 2, rtol=1e-9)
    q, _ = equilibrium((0.9e8 - 10e6) / 2, 0.05, MaxNetFluidParams())
    assert np.allclose(r.price, q, rtol=1e-9)


@pytest.mark.parametrize("tau", [0.01, 0.1])
def test_flows_take_back_freed_capacity_and_settle_at_mu_c(tau):
    # Seed 000 Fig. 9's step (the cross traffic stops) on other RTTs: back at mu C within 1 %
    # a few seconds later, overshooting mu C by less than 5 % (the design is well damped).
    r = single_link(1e9, 0.94, tau, 1, lambda t: 400e6 if t <= 0 else 0.0, 100 * tau + 5)
    assert r.rate_per_flow_bps[-1] == pytest.approx(0.94e9, rel=0.01)
    assert r.rate_per_flow_bps.max() < 0.94e9 * 1.05
    # The price fell by the demand function's difference: T ln(940 / 540).
    assert r.price[0] - r.price[-1] == pytest.approx(0.4 * np.log(940 / 540), rel=0.02)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="mu"):
        single_link(1e9, 1.5, 0.03, 1, lambda t: 0.0, 1.0)
    with pytest.raises(ValueError, match="no capacity"):
        single_link(1e9, 0.9, 0.03, 1, lambda t: 1e9, 1.0)
    with pytest.raises(ValueError, match="tau"):
        single_link(1e9, 0.9, -1.0, 1, lambda t: 0.0, 1.0)
