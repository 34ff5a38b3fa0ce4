"""Session experiments (seed 004): the Python front end of the session simulator."""

from __future__ import annotations

import json

import pytest

from xcclab import sessions

SMALL = {
    "transit_stub": {
        "transit_domains": 1,
        "transit_routers_per_domain": 3,
        "stubs_per_transit_router": 2,
        "routers_per_stub": 3,
        "hosts_per_stub_router": 50,
    }
}


def experiment(**over):
    e = {
        "protocol": "slbn",
        "seed": 3,
        "topology": SMALL,
        "workload": {"arrivals": [{"count": 200, "from_s": 0.0, "to_s": 0.1}]},
        "duration_s": 1.5,
        "sample_interval_s": 0.1,
        "record_final": True,
    }
    e.update(over)
    return e


def test_slbn_converges_to_max_min_and_is_deterministic(tmp_path):
    assert "slbn" in sessions.protocols()
    r = sessions.run_sessions(experiment())
    f = r.finals
    assert f.height == 200
    rel = ((f["rate_bps"] - f["maxmin_bps"]).abs() / f["maxmin_bps"]).max()
    assert rel < 1e-6, rel
    last = r.samples.row(-1, named=True)
    assert last["rated"] == 200 and abs(last["es_p90"]) < 1e-4
    again = sessions.run_sessions(experiment())
    assert again.samples.equals(r.samples)
    r.save(tmp_path / "run")
    assert json.loads((tmp_path / "run" / "experiment.json").read_text())["protocol"] == "slbn"


def test_finite_sessions_complete():
    w = {
        "arrivals": [{"count": 100, "from_s": 0.0, "to_s": 0.1}],
        "size": {"mean_packets": 30.0, "shape": 4.0, "packet_bytes": 2000},
    }
    r = sessions.run_sessions(experiment(workload=w, duration_s=3.0, record_final=False))
    c = r.completions
    assert c.height == 100
    assert (c["finish_s"] > c["start_s"]).all()


def test_bad_experiment_names_the_field():
    with pytest.raises(ValueError, match="duratoin_s"):
        sessions.run_sessions({**experiment(), "duratoin_s": 1})
    with pytest.raises(ValueError, match="unknown session protocol"):
        sessions.run_sessions(experiment(protocol="nope"))


def test_slbn_1a_quick_report(tmp_path):
    from xcclab.reproduce import run

    report = run("slbn-1a", tmp_path / "r", quick=True)
    text = report.read_text()
    assert "SLBN" in text and "Pending protocols" in text
    metrics = json.loads((tmp_path / "r" / "metrics.json").read_text())
    assert "slbn" in metrics["measured"]


def test_slbn_2a_benchmark_is_the_reproduction():
    """`xcc bench --scenario slbn-2a` measures exactly the SLBN run of `xcc reproduce slbn-2a`."""
    from pathlib import Path

    from xcclab.reproduce.slbn_2a import SETUP

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "slbn-2a.session.json"
    assert json.loads(path.read_text()) == SETUP.experiment("slbn", False)
