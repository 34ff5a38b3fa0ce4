"""maxnet-cbr in quick mode: the report and metrics exist and MaxNet holds mu C."""

import json

import pytest

pytest.importorskip("xcclab._native")

from xcclab.reproduce import maxnet_cbr  # noqa: E402


def test_quick_reproduction_reports_the_claims(tmp_path):
    report = maxnet_cbr.run(tmp_path / "out", quick=True, progress=False)
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert report.is_file() and "## Claims" in report.read_text()
    quantities = [c["quantity"] for c in metrics["comparisons"]]
    assert len(quantities) == 4 and all(c["paper"] is not None for c in metrics["comparisons"])
    m = metrics["measured"]
    # MaxNet fills mu C with and without the CBR (within 2 %) and loses nothing.
    for key in ("util_before", "util_during", "util_after"):
        assert abs(m[key] - maxnet_cbr.MU) < 0.02, (key, m[key])
    assert m["retransmits"] == 0
    assert 0.0 < m["reclaimed_0_3s"] <= 1.0
