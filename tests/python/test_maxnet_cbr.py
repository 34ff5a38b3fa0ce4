"""maxnet-cbr in quick mode: the report and metrics exist and MaxNet holds mu C."""

import json

import pytest

pytest.importorskip("xcclab._native")

from xcclab.reproduce import run  # noqa: E402
from xcclab.reproduce.maxnet import maxnet_cbr


def test_quick_reproduction_reports_the_claims(tmp_path):
    report = run("maxnet-cbr", tmp_path / "out", quick=True, progress=False)
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert report.is_file() and "## Verdict: not judged (quick run)" in report.read_text()
    claims = {c["id"]: c for c in metrics["claims"]}
    assert claims["freed capacity back within 0.3 s"]["type"] == "bound"
    assert "Over two thirds" in claims["freed capacity back within 0.3 s"]["quote"]
    assert claims["utilisation before the CBR"]["value"] == 94.0
    m = metrics["measured"]
    # MaxNet fills mu C with and without the CBR (within 2 %) and loses nothing.
    for key in ("util_before", "util_during", "util_after"):
        assert abs(m[key] - maxnet_cbr.MU) < 0.02, (key, m[key])
    assert m["retransmits"] == 0
    assert 0.0 < m["reclaimed_0_3s"] <= 1.0
