"""`xcc kernel` without the machine's help: clear errors, and the pieces that need no root."""

from __future__ import annotations

import math

import pytest

from xcclab.cli import main
from xcclab.kernel import build, loader


def test_unavailable_kernel_is_a_clear_error(monkeypatch, capsys):
    monkeypatch.setattr(build, "missing_prerequisites", lambda: "needs root (test)")
    monkeypatch.setattr(loader, "status", lambda: {"loader_running": False})
    assert main(["kernel", "load"]) == 1
    assert "kernel MaxNet unavailable here: needs root (test)" in capsys.readouterr().err


def test_price_codes_match_the_24_bit_encoding():
    # 18 fraction bits, 23-bit codes, rounding to nearest and saturating (wire/maxnet.rs).
    assert loader.price_code(1.0) == 1 << 18
    assert loader.price_code(-3.0) == 0
    assert loader.price_code(1e9) == (1 << 23) - 1
    p = loader.MaxNetParams()
    assert math.isclose(p.demand_bps(p.t_s * math.log(1e15 / 1e8)), 1e8)
    assert loader.price_code(0.4 * math.log(1e15 / 1e7)) == p.spare_code(1e7)


def test_the_loader_arguments_carry_the_test_mode():
    args = loader.MaxNetParams(fixed_price_s=1.0, maxstart=False, set_cc=True).loader_args()
    assert "--fixed-price=262144" in args
    assert "--no-maxstart" in args and "--set-cc" in args


def test_a_cgroup_name_must_be_one_plain_directory():
    for bad in ("", "a/b", "..", "."):
        with pytest.raises(ValueError, match="one plain directory name"):
            loader.child_cgroup(bad)
