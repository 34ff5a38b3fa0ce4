"""The real-packet versions of seed 002's comparisons (xcc-rtt-fairness, xcc-dumbbell-3 --emu):
the claim-by-claim table of simulated against real measurements, and the stated bounds."""

import math

import pytest

from xcclab.claims import Point, Qualitative
from xcclab.reproduce.xcc import emu_common as xe
from xcclab.reproduce.xcc import xcc_dumbbell_3 as d3
from xcclab.reproduce.xcc import xcc_rtt_fairness as rf


def _rtt(fill=0.3, join=0.4, r30=475e6, r200=475e6, drops=0):
    return {"fill_s": fill, "join_s": join, "rate30_bps": r30, "rate200_bps": r200,
            "ratio": r30 / r200, "drops": drops, "peak_queue_packets": 100.0}  # fmt: skip


def _sim():
    return {
        "xcp": _rtt(0.3, 1.4),
        "rcp": _rtt(2.2, 0.39),
        "maxnet": _rtt(0.2, 0.6, 451e6, 452e6),
        "piqi-rcp": _rtt(1.0, 0.39),
        "jetmax": _rtt(0.4, 0.8),
    }


def test_agreement_bounds():
    # Times: one 100 ms bin, or 10 % of a longer time.
    assert xe.TIME.limit(0.3) == pytest.approx(0.1)
    assert xe.TIME.limit(2.2) == pytest.approx(0.22)
    assert xe.TIME.holds(0.3, 0.4) and not xe.TIME.holds(0.3, 0.41)
    assert xe.TIME.holds(2.2, 1.99) and not xe.TIME.holds(2.2, 1.97)
    # Steady rates: 2 %, relative.
    assert xe.STEADY_RATE.holds(500e6, 490.5e6) and not xe.STEADY_RATE.holds(500e6, 489e6)
    # Counts: 10 packets or 10 %.
    assert xe.PACKETS.holds(0, 10) and not xe.PACKETS.holds(0, 11)
    assert xe.PACKETS.holds(9000, 9900) and not xe.PACKETS.holds(9000, 9901)
    assert xe.PACKETS.holds(None, 3) is None and xe.RATIO.holds(1.0, math.nan) is None


def test_default_agreement_by_unit_and_kind():
    claims = {c.id: c for c in rf.claims({"measured": _sim()})}
    assert xe.default_agreement(claims["RCP time to saturate at start"]) is xe.TIME
    assert xe.default_agreement(claims["XCP fills faster than RCP"]) is xe.TIME_DIFFERENCE
    assert xe.default_agreement(claims["XCP RTT fairness"]) is xe.RATIO
    d = {c.id: c for c in d3.claims({"measured": {"rcp": _d3()}})}
    assert xe.default_agreement(d["RCP packets dropped"]) is xe.PACKETS
    assert xe.default_agreement(d["high sending rates"]) is None


def test_claims_of_some_protocols_only():
    """A run of some protocols (``only``, or a failed real run) scores their claims alone."""
    ids = [c.id for c in rf.claims({"measured": {"rcp": _rtt(2.2, 0.39)}})]
    assert ids == [
        "RCP time to saturate at start",
        "RCP time to saturate after the join",
        "RCP RTT fairness",
    ]
    ids = [c.id for c in rf.claims({"measured": {"xcp": _rtt()}})]
    assert ids == ["XCP RTT fairness"]
    ids = [c.id for c in d3.claims({"measured": {"xcp": _d3()}})]
    assert ids == ["XCP packets dropped", "high sending rates"]


def _d3(drops=0, peak=6000.0, util=1.0):
    return {"drops": drops, "peak_queue_packets": peak,
            "phases": [{"utilisation_end": util, "peak_queue_packets": peak}] * 3}  # fmt: skip


def test_claim_rows_pair_simulated_and_real():
    sim = _sim()
    real = _sim()
    real["rcp"] = _rtt(2.19, 0.40, 460e6, 464e6)  # ratio 0.991: within 0.02 of 1.000
    real["xcp"] = _rtt(0.45, 1.4)  # 0.15 s later than simulated: outside one bin
    del real["jetmax"]  # its real run failed
    rows = {r["id"]: r for r in xe.claim_rows(rf.claims, sim, real)}
    assert list(rows) == [c.id for c in rf.claims({"measured": sim})]
    fill = rows["RCP time to saturate at start"]
    assert fill["sim"]["verdict"] == "fails" and fill["real"]["verdict"] == "fails"
    assert fill["expected"].startswith("10 (about")
    assert fill["difference"] == pytest.approx(-0.01) and fill["within_bound"] == "holds"
    assert fill["bound"] == pytest.approx(0.22)
    fair = rows["RCP RTT fairness"]
    assert fair["real"]["ours"] == pytest.approx(460 / 464)
    assert fair["within_bound"] == "holds" and fair["real"]["verdict"] == "holds"
    # XCP's fill time moved by 0.15 s: RCP - XCP moved by as much, within the 0.2 s of a
    # difference of two times.
    order = rows["XCP fills faster than RCP"]
    assert order["difference"] == pytest.approx(-0.16) and order["within_bound"] == "holds"
    # JetMax failed on real packets: its claims have no real side.
    assert rows["JetMax RTT fairness"]["real"] is None
    assert rows["JetMax fills faster than RCP"]["within_bound"] is None
    table = xe.claim_table(list(rows.values()))
    line = next(ln for ln in table.splitlines() if ln.startswith("| JetMax RTT fairness"))
    assert "| failed |" in line
    # Outside the bound shows as such.
    real["piqi-rcp"] = _rtt(1.3, 0.39)
    rows = {r["id"]: r for r in xe.claim_rows(rf.claims, sim, real)}
    assert rows["PIQI-RCP transient better than RCP's"]["within_bound"] == "fails"
    found = xe.findings(["rcp", "piqi-rcp"], {}, list(rows.values()), [], {}, {}, {})
    assert any("outside: PIQI-RCP transient better than RCP's" in f for f in found)


def test_claim_rows_qualitative_and_verdicts():
    sim = {k: _d3() for k in ("xcp", "rcp", "maxnet", "piqi-rcp", "jetmax")}
    real = dict(sim, rcp=_d3(drops=12, peak=9000.0))
    rows = {r["id"]: r for r in xe.claim_rows(d3.claims, sim, real)}
    q = rows["high sending rates"]
    assert q["type"] == "qualitative" and q["within_bound"] is None
    assert "RCP 100.0 %" in q["real"]["observed"]
    drops = rows["RCP packets dropped"]
    assert drops["sim"]["verdict"] == "holds" and drops["real"]["verdict"] == "fails"
    assert drops["within_bound"] == "fails"  # 12 packets: more than 10
    peak = rows["RCP peak queue"]
    assert peak["sim"]["verdict"] == "fails" and peak["real"]["verdict"] == "holds"
    assert peak["within_bound"] == "fails"  # 9000 against 6000: more than 10 %
    vs, vr = xe.verdicts(d3.claims, sim), xe.verdicts(d3.claims, real)
    assert (vs["holding"], vs["counted"]) == (3, 4)
    assert (vr["holding"], vr["counted"]) == (3, 4)
    text = xe.claim_table(list(rows.values()))
    assert "utilisation at the end" in text and "**no**" in text


def test_steady_rows_and_evidence_names():
    e = xe.EmuExperiment(
        id="t", title="t", setup="", flows=lambda: [], t_end=40.0, measure=None,
        claims=rf.claims, columns=(),
        steady=lambda m: {"rtt30": m["rate30_bps"], "rtt200": m["rate200_bps"]},
        steady_window=(30.0, 40.0),
    )  # fmt: skip
    measured = {"rcp/sim": _rtt(), "rcp/emu": _rtt(r30=460e6), "xcp/sim": _rtt()}
    rows = xe.steady_rows(e, ["rcp", "xcp"], measured)
    assert [(r["protocol"], r["flow"]) for r in rows] == [("rcp", "rtt30"), ("rcp", "rtt200")]
    assert rows[0]["rel_difference"] == pytest.approx(460 / 475 - 1)
    assert rows[0]["within_bound"] == "fails" and rows[1]["within_bound"] == "holds"
    assert xe._mentions("RCP RTT fairness", "rcp")
    assert not xe._mentions("PIQI-RCP RTT fairness", "rcp")
    assert xe._mentions("PIQI-RCP transient better than RCP's", "rcp")


def test_paper_value_of_a_point_claim():
    c = Point("x", None, "", 1.0, value=9415.0, precision="table")
    assert c.expected().startswith("9415 ")
    assert xe._paper_value({"type": "point", "expected": c.expected()}) == 9415.0
    q = Qualitative("q", None, "", None, observed="seen")
    assert xe._paper_value({"type": q.kind, "expected": q.expected()}) is None


def test_stall_finding_names_the_stalled_runs():
    def real(late_us, share, load):
        return {"router": {"lateness_max_us": late_us, "router_cpu_share": share},
                "load_1min": load}  # fmt: skip

    measured = {
        "xcp/emu": real(32_700, 0.94, (1.8, 2.0)),
        "rcp/emu": real(9_254, 0.90, (2.0, 4.0)),
        "maxnet/sim": {},
    }
    text = xe.stall_finding(["xcp", "rcp", "maxnet"], measured)
    assert text.startswith("Router stalls: 1 of 2 real runs delivered a packet more than 10 ms")
    assert "(XCP 32.7 ms)" in text and "RCP 9.3" not in text
    assert "CPU share was 0.90-0.94" in text and "load average (1 min) 1.8-4.0" in text
    assert xe.stall_finding(["maxnet"], measured) is None
    # Runs with the real-time limit lifted: a stall is blamed on a missing CPU, not the limit.
    for m in (measured["xcp/emu"], measured["rcp/emu"]):
        m["router"]["rt_throttling_lifted"] = True
    text = xe.stall_finding(["xcp", "rcp", "maxnet"], measured)
    assert "throttling was lifted" in text and "sched_rt_runtime_us" not in text


def test_stall_finding_against_the_real_time_limit(monkeypatch):
    """A delay within the kernel's real-time pause is said to be; a longer one is not."""
    monkeypatch.setattr(xe, "rt_throttling", lambda: (950_000, 1_000_000))

    def real(late_us):
        return {"router": {"lateness_max_us": late_us, "router_cpu_share": 0.9}}

    within = xe.stall_finding(["rcp"], {"rcp/emu": real(40_000)})
    assert "pauses of up to 50 ms; the longest delay here, 40.0 ms, is within that" in within
    longer = xe.stall_finding(["rcp"], {"rcp/emu": real(53_900)})
    assert "53.9 ms, is longer" in longer and "within that" not in longer
    assert "pauses" not in xe.stall_finding(["rcp"], {"rcp/emu": real(5_000)})


def test_router_row():
    r = {"packets_read": 6_000_000, "lateness_p50_us": 11, "lateness_p99_us": 10_000,
         "lateness_max_us": 42_501, "router_cpu_share": 0.931, "kernel_tun_tx_dropped": 0,
         "kernel_udp_rcvbuf_errors": 2, "host_wake_late_max_us": 43,
         "transport_data_batched": 9, "transport_data_batches": 3,
         "transport_acks_batched": 8, "transport_ack_batches": 4}  # fmt: skip
    row = xe.router_row("PIQI-RCP", r, (3.2, 3.1))
    assert len(row) == len(xe.ROUTER_HEADERS)
    # The histogram's last bucket reads "10 ms or more", not 10 ms.
    assert row[2:5] == ["11", "≥ 10000", "42501"]
    assert row[5:7] == ["0.93", 2]
    assert row[-3:] == ["9 in 3", "8 in 4", "3.2 / 3.1"]
    assert xe.router_row("XCP", {})[1] == "n/a"


def test_disturbance_finding_splits_the_runs_by_the_fidelity_limits():
    def real(p99, host):
        return {"router": {"lateness_p99_us": p99, "host_wake_late_max_us": host}}

    measured = {"xcp/emu": real(105, 111), "rcp/emu": real(10_000, 3_786),
                "jetmax/emu": real(76, 43_718), "maxnet/sim": {}}  # fmt: skip
    steady = [
        {"protocol": "xcp", "within_bound": True},
        {"protocol": "xcp", "within_bound": True},
        {"protocol": "rcp", "within_bound": False},
        {"protocol": "jetmax", "within_bound": True},
    ]
    text = xe.disturbance_finding(["xcp", "rcp", "maxnet", "jetmax"], measured, steady)
    assert "10 ms late): XCP; steady rates within 2 %: 2 of 2." in text
    assert "Beyond them: RCP (delay error p99 ≥ 10000 µs); JetMax (a host woke up 43.7 ms" in text
    assert text.endswith("steady rates within 2 %: 1 of 2.")
    assert xe.disturbance_finding(["maxnet"], measured, steady) is None
