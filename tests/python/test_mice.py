"""The mice experiments in quick mode: all three stacks run, every response arrives, MaxNet
keeps (almost) no queue while RED holds one between its thresholds."""

import json

import pytest

pytest.importorskip("xcclab._native")

from xcclab.reproduce import run  # noqa: E402


def test_quick_mice_http_200(tmp_path):
    run("mice-http-200", tmp_path / "out", quick=True, progress=False)
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    m = metrics["measured"]
    assert set(m) == {"maxnet", "reno-red", "reno-red-ecn"}
    assert all(s["completed"] == s["transactions"] == 200 for s in m.values())
    assert m["maxnet"]["queue_during_pkts"] < 2.0
    assert 5.0 < m["reno-red"]["queue_during_pkts"] < 90.0
    claims = {c["id"]: c for c in metrics["claims"]}
    c = claims["Reno/RED responses within 135 ms"]
    assert c["type"] == "point" and c["value"] == 30.0 and "30%" in c["quote"]
    assert claims["MaxNet responses within 135 ms"]["type"] == "bound"
    assert metrics["verdict"]["verdict"] in ("reproduced", "partly", "not reproduced")
