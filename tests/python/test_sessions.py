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
    """The report of slbn-1a on the quick network, with two of its protocols (ERICA and BFYZ
    take a minute each even there) and one left out of this run, listed as pending."""
    from dataclasses import replace

    from xcclab.reproduce.slbn.slbn_1a import SETUP
    from xcclab.reproduce.slbn.slbn_common import run_setup

    setup = replace(SETUP, protocols=("slbn", "cobb", "rcp"))
    report = run_setup(setup, tmp_path / "r", quick=True, only=("slbn", "cobb"))
    text = report.read_text()
    assert "SLBN" in text and "COBB" in text and "Pending protocols" in text
    assert "Not run in this report: RCP" in text
    metrics = json.loads((tmp_path / "r" / "metrics.json").read_text())
    assert set(metrics["measured"]) == {"slbn", "cobb"}
    assert metrics["pending"] == ["rcp"]
    # On packets SLBN's delivered rates are within 1 % by the end of the quick run (delivery
    # jitter over 50 ms windows; measured 0.18 %); COBB's band is wider. The session driver
    # beside it has SLBN's assigned rates exact.
    assert metrics["engine"] == "packets"
    slbn, cobb = metrics["measured"]["slbn"], metrics["measured"]["cobb"]
    assert abs(slbn["final_es_p90"]) < 1.0 and cobb["es_spread_avg"] > slbn["es_spread_avg"]
    assert abs(metrics["measured_fluid"]["slbn"]["final_es_p90"]) < 0.01
    assert "## The packet engine beside the session driver" in text
    # The report is rewritten from the saved runs alone, to the same numbers.
    from xcclab.reproduce.slbn.slbn_common import rereport

    rereport(setup, tmp_path / "r", quick=True)
    assert json.loads((tmp_path / "r" / "metrics.json").read_text()) == metrics
    assert (tmp_path / "r" / "report.md").read_text() == text
    # The band's reach from zero is at least half its width.
    for m in (slbn, cobb):
        assert m["es_reach_avg"] >= m["es_spread_avg"] / 2 - 1e-9
    assert cobb["es_reach_avg"] > slbn["es_reach_avg"]
    assert "SLBN, COBB. Of the 1 pair the paper ranks, 1 agree" in text
    # Seed 004's own E_s, on the rates assigned at each sample (issue 31), beside the delivered
    # one: the claims are judged on it, the delivered statistics are a second definition.
    from xcclab.reproduce.slbn.slbn_1a import assigned, claims

    asg, source = assigned(metrics)
    assert source.startswith("packet engine") and asg is metrics["measured"]
    assert cobb["es_asg_reach_avg"] > slbn["es_asg_reach_avg"]
    judged = {c.id: c for c in claims(metrics)}
    assert judged["SLBN more accurate than COBB"].second_definition is None
    assert judged["SLBN more accurate than COBB (delivered)"].second_definition


def test_a_packet_run_over_its_budget_is_reported_as_such(tmp_path, monkeypatch):
    """A packet-level run that exceeds its time budget is stopped and listed as not run to the
    end, with the session driver's numbers beside and no packet-level measure invented."""
    from dataclasses import replace

    from xcclab.reproduce.slbn import slbn_packets
    from xcclab.reproduce.slbn.slbn_1a import SETUP
    from xcclab.reproduce.slbn.slbn_common import run_setup

    monkeypatch.setattr(slbn_packets, "TIME_BUDGET_S", 0.5)
    setup = replace(SETUP, protocols=("slbn",))
    text = run_setup(setup, tmp_path / "r", quick=True).read_text()
    metrics = json.loads((tmp_path / "r" / "metrics.json").read_text())
    assert metrics["measured"] == {} and set(metrics["measured_fluid"]) == {"slbn"}
    assert "stopped after" in metrics["over_budget"]["slbn"]
    assert "Not run to the end on the packet engine: SLBN, stopped after" in text
    assert "| SLBN | - / " in text


@pytest.mark.parametrize(("bench", "protocol"), [("slbn-2a", "slbn"), ("slbn-2a-bfyz", "bfyz")])
def test_slbn_2a_benchmarks_are_the_reproduction(bench, protocol):
    """`xcc bench --scenario slbn-2a` (and `slbn-2a-bfyz`) measure exactly the SLBN (BFYZ) run
    of `xcc reproduce slbn-2a` on the packet engine, and `slbn-2a-fluid` (`slbn-2a-bfyz-fluid`)
    the session driver's run beside it."""
    from pathlib import Path

    import tomllib

    from xcclab.reproduce.slbn import slbn_packets
    from xcclab.reproduce.slbn.slbn_2a import SETUP
    from xcclab.reproduce.slbn.slbn_common import PACKET_BYTES

    benchmarks = Path(__file__).resolve().parents[2] / "benchmarks"
    experiment = SETUP.experiment(protocol, False)
    fluid = benchmarks / f"{bench}-fluid.session.json"
    assert json.loads(fluid.read_text()) == experiment
    packets = tomllib.loads((benchmarks / f"{bench}.scale.toml").read_text())
    assert packets == slbn_packets.scenario(experiment, bench, PACKET_BYTES)
