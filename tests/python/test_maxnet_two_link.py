"""maxnet-two-link in quick mode (times divided by 4): MaxNet reaches the max-min rates."""

import json

import pytest

pytest.importorskip("xcclab._native")

from xcclab.reproduce import run  # noqa: E402


def test_quick_run_is_max_min_fair(tmp_path):
    run("maxnet-two-link", tmp_path / "out", quick=True, progress=False)
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    cells = metrics["measured"]["cells"]
    assert len(cells) == 20
    # 5 s intervals leave 2.5 s to converge: within 10 % of max-min (the full run: 1 %).
    worst = max(abs(c["ours_bps"] / c["maxmin_bps"] - 1) for c in cells)
    assert worst < 0.10, worst
