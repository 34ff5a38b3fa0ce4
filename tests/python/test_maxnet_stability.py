"""MaxNet's stability design (Algorithm 3) against seed 000's numbers."""

import math

import numpy as np
import pytest

from xcclab.cli import main
from xcclab.maxnet_stability import design, loop_gain, omega0, phase_margin_alpha, slope_range


def test_deployed_parameters_match_the_paper():
    d = design(1000.0, 0.66 * 0.4, 0.06)
    # omega_bar: 0.00153 to three figures, as the paper's 0.001525 rounded half up.
    assert f"{d.omega_bar:.3g}" == "0.00153"
    assert d.omega_bar == pytest.approx(0.001525, rel=0.005)
    assert d.gamma == pytest.approx(0.3523, abs=5e-5)
    assert d.alpha_max > 0.66  # the paper: alpha = 0.66 is provably stable
    # The paper's line (slope 0.3504 through -1/0.66) lies above S and T.
    lo, hi = slope_range(d, 0.66)
    assert lo < 0.3504 < hi
    assert slope_range(d, d.alpha_max * 1.001) is None


def test_paper_gamma_is_the_optimal_slope_for_alpha_t_rounded_to_0_26():
    d = design(1000.0, 0.26, 0.06)
    assert f"{d.gamma:.4f}" == "0.3504"
    assert f"{d.omega_bar:.3g}" == "0.00153"


def test_omega0_is_the_first_real_axis_crossing():
    w = omega0(3.0, 0.1, 0.7)
    assert abs(loop_gain(w, 3.0, 0.1, 0.7).imag) < 1e-9
    below = loop_gain(np.linspace(0.01, 0.99, 50) * w, 3.0, 0.1, 0.7)
    assert np.all(below.imag < 0)  # below the axis before the first crossing


def test_the_line_lies_above_spiral_and_tail():
    d = design(3.0, 0.1, 0.7)
    pts = np.concatenate([d.spiral, d.tail])
    line = d.gamma * (pts.real + 1 / d.alpha_max)
    assert np.all(pts.imag <= line + 1e-9)


def test_phase_margin_rule_and_errors(capsys):
    a = phase_margin_alpha(0.264, 0.264, 0.1)
    assert 0 < a < math.inf
    with pytest.raises(ValueError, match="eta"):
        design(10.0, 0.1, -1.0)
    assert (
        main(
            [
                "analyze",
                "maxnet-stability",
                "--tau-bar",
                "3",
                "--eta",
                "0.7",
                "--alpha",
                "0.25",
                "--t",
                "0.4",
            ]
        )
        == 0
    )
    assert "alpha_max" in capsys.readouterr().out
