"""maxnet-two-link in quick mode (times divided by 4): MaxNet reaches the max-min rates."""

import json

import pytest

pytest.importorskip("xcclab._native")

from xcclab.reproduce import maxnet_two_link  # noqa: E402


def test_quick_run_is_max_min_fair(tmp_path):
    maxnet_two_link.run(tmp_path / "out", quick=True, progress=False)
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    comparisons = metrics["comparisons"]
    assert len(comparisons) == 20
    # 5 s intervals leave 2.5 s to converge: within 10 % of max-min (the full run: 1 %).
    worst = max(abs(c["ours"] / c["paper"] - 1) for c in comparisons)
    assert worst < 0.10, worst
