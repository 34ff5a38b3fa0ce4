"""MaxNet's price-encoding calculator and its reproduction."""

import json

import pytest

from xcclab.cli import main
from xcclab.price_encoding import price_encoding
from xcclab.reproduce.maxnet import maxnet_encoding


def test_the_papers_numbers():
    enc = price_encoding(1e15, 32.0, 0.4, 1e-5)
    assert (enc.integer_bits, enc.fraction_bits) == (4, 18)
    assert enc.relative_step < 1e-5


def test_more_precision_needs_more_bits():
    assert price_encoding(1e15, 32.0, 0.4, 1e-7).fraction_bits > 18
    assert price_encoding(1e15, 1e-3, 0.4, 1e-5).integer_bits >= 4


def test_bad_input_is_refused(capsys):
    with pytest.raises(ValueError, match="x_min"):
        price_encoding(1e15, 1e16, 0.4, 1e-5)
    assert main(["analyze", "price-encoding", "--epsilon", "-1"]) == 2
    assert "epsilon" in capsys.readouterr().err


def test_reproduction_reports_the_papers_bits(tmp_path):
    maxnet_encoding.run(tmp_path / "out")
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert all(c["paper"] == c["ours"] for c in metrics["comparisons"])
    assert metrics["wire"]["worst_relative_rate_error"] < 1e-5
