"""rcp-instability in quick mode: MaxNet's flow 1 (window and paced) reaches its max-min rate;
RCP's report is complete (the instability itself needs the full 50 s run)."""

import json

import pytest

pytest.importorskip("xcclab._native")

from xcclab.reproduce import run  # noqa: E402


def test_quick_rcp_and_maxnet(tmp_path):
    run("rcp-instability-9", tmp_path / "out", quick=True, progress=False)
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    claims = {c["id"]: c for c in metrics["claims"]}
    # The max-min rates are the oracle's: references, never counted as the paper's.
    refs = {k.split(" flow 1")[0]: c for k, c in claims.items() if c["type"] == "reference"}
    assert set(refs) == {"RCP", "MaxNet", "MaxNet, paced", "PIQI-RCP"}
    assert not any(c["counted"] for c in refs.values())
    assert claims["RCP oscillation after 10 s"]["type"] == "shape"
    assert claims["RCP oscillation after 10 s"]["value"] == 30.0
    c = refs["MaxNet"]
    assert abs(c["ours"]["mean"] / c["value"] - 1) < 0.1, c
    assert metrics["measured"]["maxnet"]["cv_flow1"] < 0.2
    c = refs["MaxNet, paced"]  # the full 50 s run is within 0.1 %; 10 s is still converging
    assert abs(c["ours"]["mean"] / c["value"] - 1) < 0.1, c
    assert metrics["measured"]["maxnet-paced"]["cv_flow1"] < 0.1
    assert metrics["measured"]["rcp"]["drops"] == 0
    assert "RCP" in (tmp_path / "out" / "report.md").read_text()
