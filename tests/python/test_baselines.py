"""The baselines experiment (CUBIC and BBR, simulator beside Linux): its scenarios run, its
measurements read what the runs did, its agreement rule and claims behave."""

from __future__ import annotations

import json

import pytest

from xcclab.claims import score
from xcclab.reproduce.baselines import baselines as b

pytest.importorskip("xcclab._native")


def test_scenarios_have_the_stated_rtts_and_buffers():
    import xcclab

    sc = b.scenario("t", ["cubic", "bbr"], [20.0, 80.0], 100, 1.0, 1)
    xcclab.validate(sc)
    delays = {tuple(link["between"]): link["delay"] for link in sc["link"]}
    # 20 ms flow: 2 x (1 + 8 + 1) ms; 80 ms flow: 2 x (16 + 8 + 16) ms.
    assert delays[("r1", "r2")] == "8000us"
    assert delays[("s1", "r1")] == "1000us" and delays[("s2", "r1")] == "16000us"
    assert sc["link"][-1]["buffer"] == "100pkt"
    assert [f["cc"] for f in sc["flow"]] == ["cubic", "bbr"]


def test_runs_differ_by_seed_in_start_offsets_and_jitter():
    """Run k and run j are distinct: seeded start offsets within the stated spread, the
    access links' jitter set, Linux's RTO and loss recovery on every flow."""
    a = b.scenario("t", ["bbr", "cubic"], [40.0, 40.0], 67, 1.0, 1)
    c = b.scenario("t", ["bbr", "cubic"], [40.0, 40.0], 67, 1.0, 2)
    starts = [[int(f["start"].removesuffix("us")) for f in sc["flow"]] for sc in (a, c)]
    assert starts[0] != starts[1]
    assert all(0 <= s < b.START_SPREAD_MS * 1000 for s in starts[0] + starts[1])
    assert a == b.scenario("t", ["bbr", "cubic"], [40.0, 40.0], 67, 1.0, 1)
    access = [link for link in a["link"] if link["between"] != ["r1", "r2"]]
    assert all(link["jitter"] == b.ACCESS_JITTER for link in access)
    assert all(f["transport"]["rto"] == "linux" for f in a["flow"])
    assert all(f["transport"]["loss_detection"] == "rack" for f in a["flow"])


def test_bbr_state_is_in_the_flow_series():
    """The simulator samples BBR's mode, pacing gain and pacing rate; CUBIC's are null."""
    import xcclab

    sc = b.scenario("t", ["bbr", "cubic"], [40.0, 40.0], 67, 3.0, 1)
    fs = xcclab.run(sc, progress=False).flow_series
    bbr, cubic = (fs.filter(fs["flow_id"] == i) for i in (0, 1))
    states = set(bbr["cc_state"].to_list())
    assert "STARTUP" in states and "PROBE_BW" in states
    assert states <= {"STARTUP", "DRAIN", "PROBE_BW", "PROBE_RTT"}
    assert bbr["pacing_rate_bps"].null_count() == 0 and bbr["pacing_gain"].null_count() == 0
    assert set(bbr["pacing_gain"].round(2).to_list()) & {0.75, 1.0, 1.25, 2.89}
    assert cubic["cc_state"].null_count() == len(cubic)
    assert cubic["pacing_gain"].null_count() == len(cubic)


def test_agreement_is_judged_on_intervals():
    sim = {"utilisation": {"mean": 0.97, "lo": 0.96, "hi": 0.98, "n": 3}}
    near = {"utilisation": {"mean": 0.96, "lo": 0.955, "hi": 0.965, "n": 3}}
    far = {"utilisation": {"mean": 0.80, "lo": 0.79, "hi": 0.81, "n": 3}}
    wide = {"utilisation": {"mean": 0.95, "lo": 0.90, "hi": 1.00, "n": 3}}
    assert b.agreement(sim, near, "utilisation")["status"] == "holds"
    assert b.agreement(sim, far, "utilisation")["status"] == "fails"
    assert b.agreement(sim, wide, "utilisation")["status"] == "inconclusive"
    assert b.agreement(sim, {}, "utilisation") is None


def test_one_cubic_flow_is_measured():
    """A short run: the CUBIC flow fills the one-BDP buffer (drops happen, the queue is well
    above zero) and the bottleneck is busy."""
    import xcclab

    sc = b.scenario("t", ["cubic"], [40.0], 67, 12.0, 1)
    m = b.measure(xcclab.run(sc, progress=False), "cubic-bdp", 5.0)
    assert m["utilisation"] > 0.9
    assert m["drops"] > 0 and m["mean_queue_pkts"] > 10
    assert m["k_rfc_s"] == pytest.approx(((66.67 + 67) * 0.3 / 0.4) ** (1 / 3), rel=1e-3)


def test_claims_score_both_engines():
    est = {"mean": 1.0, "lo": 0.9, "hi": 1.1, "n": 3}
    summary = {
        "bbr-shallow": {"utilisation": {**est, "mean": 0.98, "lo": 0.97, "hi": 0.99}},
        "cubic-shallow": {"utilisation": {**est, "mean": 0.90, "lo": 0.89, "hi": 0.91}},
        "cubic-deep": {"mean_queue_pkts": {**est, "mean": 200, "lo": 190, "hi": 210}},
        "bbr-deep": {"mean_queue_pkts": {**est, "mean": 10, "lo": 8, "hi": 12}},
        "bbr-bdp": {"dip_period_s": {**est, "mean": 10.3, "lo": 10.2, "hi": 10.4}},
    }
    claims = b.claims({"summary": {"sim": summary, "kernel": summary}})
    assert len(claims) == 10
    status = {c.id: score(c).status for c in claims}
    assert status["bbr-shallow-throughput [sim]"] == "holds"
    assert status["bbr-deep-queue [kernel]"] == "holds"
    assert status["cubic-keeps-buffer-full [sim]"] == "holds"
    assert status["probe-rtt-period [sim]"] == "holds"
    json.dumps([score(c).to_json() for c in claims])


def test_shallow_cause_follows_the_measured_numbers():
    """The cause given for the shallow-buffer claim comes from the measured numbers: repeated
    timeouts when the simulated BBR has them, else CUBIC's own utilisation; the kernel's note
    names its bimodality."""
    est = {"mean": 0.98, "lo": 0.97, "hi": 0.99, "n": 5}
    summary = {"bbr-shallow": {"utilisation": est}, "cubic-shallow": {"utilisation": est}}
    timeouts = {
        **summary,
        "bbr-shallow": {**summary["bbr-shallow"], "timeouts": {**est, "mean": 15.8}},
    }
    assert "timeouts" in b._shallow_cause("sim", timeouts)["note"]
    calm = {**summary, "bbr-shallow": {**summary["bbr-shallow"], "timeouts": {**est, "mean": 0.0}}}
    assert "one CUBIC flow loses little" in b._shallow_cause("sim", calm)["note"]
    assert "bimodal" in b._shallow_cause("kernel", summary)["note"]
    assert b._shallow_cause("sim", {}) == {}


def test_per_run_section_lists_every_run():
    measured = {
        "sim": {"a": [{"utilisation": 0.5}, {"utilisation": 0.25}]},
        "kernel": {"a": [{"utilisation": 0.9}], "b": [{"utilisation": 1.0}]},
    }
    text = "\n".join(b.per_run_section(measured))
    assert "| a | 0.500, 0.250 | 0.900 |" in text
    assert "| b | - | 1.000 |" in text


@pytest.mark.slow
def test_quick_run_writes_a_report(tmp_path):
    report = b.run(tmp_path, quick=True)
    text = report.read_text()
    assert "CUBIC loss period" in text and "utilisation" in text
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert set(metrics["summary"]["sim"]) == set(b.cases(1.0))
