"""MaxNet's stability design (Algorithm 3) against seed 000's numbers."""

import math

import numpy as np
import pytest

from xcclab.cli import main
from xcclab.maxnet_stability import design, loop_gain, omega0, phase_margin_alpha


def test_deployed_parameters_match_the_paper_within_one_percent():
    d = design(1000.0, 0.66 * 0.4, 0.06)
    assert d.omega_bar == pytest.approx(0.001525, rel=0.01)
    assert d.gamma == pytest.approx(0.3504, rel=0.01)
    assert d.alpha_max > 0.66  # the paper: alpha = 0.66 is provably stable


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
