"""The MaxNet half of rcp-instability in quick mode: flow 1 reaches its max-min rate."""

import json

import pytest

pytest.importorskip("xcclab._native")

from xcclab.reproduce import rcp_instability_9  # noqa: E402


def test_quick_maxnet_half(tmp_path):
    rcp_instability_9.run(tmp_path / "out", quick=True, progress=False)
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    (c,) = metrics["comparisons"]
    assert abs(c["ours"] / c["paper"] - 1) < 0.1, c
    assert metrics["measured"]["cv_flow1"] < 0.2
