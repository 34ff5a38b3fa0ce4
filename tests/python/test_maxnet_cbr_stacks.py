"""maxnet-cbr and maxnet-two-link on real packets (`xcc reproduce ID --stack ...`): the
scenarios, the claims judged per stack, the real-versus-simulated rows and the command line;
the runs themselves need root and take minutes (`xcc reproduce`)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from xcclab.cli import main
from xcclab.reproduce import get
from xcclab.reproduce.common import stacks as _stacks
from xcclab.reproduce.maxnet import maxnet_cbr as cbr
from xcclab.reproduce.maxnet import maxnet_cbr_stacks as stacks
from xcclab.reproduce.maxnet import maxnet_two_link as two_link
from xcclab.reproduce.maxnet import maxnet_two_link_stacks as two_link_stacks


def test_the_scenario_is_the_papers_at_full_rate():
    for stack in stacks.STACKS:
        d = stacks.scenario_dict(1.0, stack)
        rates = {tuple(link["between"]): link["rate"] for link in d["link"]}
        assert rates[("r1", "r2")] in ("1Gbps", "1000Mbps", 1_000_000_000)
        cbr_flow = next(f for f in d["flow"] if f["kind"] == "cbr")
        assert cbr_flow["rate"] in ("400Mbps", 400_000_000)
        assert (cbr_flow["start"], cbr_flow["stop"], d["duration"]) == ("10s", "20s", "30s")
        maxnet = next(f for f in d["flow"] if f["kind"] == "bulk")
        assert ((maxnet.get("transport") or {}).get("mss") == stacks.UDP_MSS) == (stack == "udp")


def _measured(util_before: float = 0.94, reclaimed: float = 0.5) -> dict:
    return {
        "util_before": util_before,
        "util_during": 0.94,
        "util_after": 0.94,
        "reclaimed_0_3s": reclaimed,
        "reclaimed_1s": 0.8,
        "fluid_reclaimed_0_3s": 0.55,
        "time_to_95pct_s": 1.0,
        "time_to_mu_s": 0.2,
        "peak_queue_bytes": 1_000_000,
        "retransmits": 0,
        "saturated_after_cbr_start_s": 0.5,
        "maxnet_rate_during_bps": 5e8,
        "maxnet_rate_after_bps": 9e8,
    }


def test_each_stack_is_judged_by_the_one_scorer():
    measured = {
        "sim": _measured(),
        "kernel": _measured(util_before=0.80, reclaimed=0.7),
        "udp": _measured(),
    }
    judged = _stacks.score_stacks(cbr.claims, measured)
    status = {s: {x.claim.id: x.status for x in judged[s][0]} for s in measured}
    assert status["sim"]["utilisation before the CBR"] == "holds"
    assert status["kernel"]["utilisation before the CBR"] == "fails"  # 80 % against 94 +- 5
    assert status["kernel"]["freed capacity back within 0.3 s"] == "holds"  # 70 % > 2/3
    assert status["udp"]["freed capacity back within 0.3 s"] == "fails"
    assert judged["sim"][1].verdict == "partly" and judged["kernel"][1].counted == 3
    header, rows = _stacks.claim_rows(judged, ("sim", "kernel", "udp"))
    assert len(header) == 4 + 3 + 3 and len(rows) == len(judged["sim"][0])
    row = next(r for r in rows if r[0] == "utilisation before the CBR")
    assert row[4:7] == ["94 %", "80 %", "94 %"]
    assert row[7:] == ["**holds**", "**fails**", "**holds**"]
    assert "relinquishes bandwidth" in next(r for r in rows if r[0] == "gives way at once")[2]


def test_real_against_simulated_rows_state_their_bound():
    measured = {"sim": _measured(), "kernel": _measured(util_before=0.925), "udp": _measured()}
    measured["udp"]["peak_queue_bytes"] = 1_600_000
    gaps = {g.quantity: g for g in stacks.sim_gaps(measured)}
    util = gaps["utilisation before the CBR"]
    assert util.diff("kernel") == pytest.approx(-1.5) and util.within("kernel") is False
    assert util.within("udp") is True and util.bound_text() == "±1 points"
    peak = gaps["peak queue after the CBR starts"]
    assert peak.relative and peak.diff("udp") == pytest.approx(0.6) and not peak.within("udp")
    assert _stacks.gap_summary(list(gaps.values()), "kernel") == (len(gaps) - 1, len(gaps))
    header, rows = _stacks.gap_rows(list(gaps.values()), ("kernel", "udp"))
    assert header[-2:] == ["kernel - sim", "udp - sim"]
    assert rows[0][-2] == "-1.50 (outside)" and rows[0][-1] == "+0.00 (within)"


def test_a_missing_value_is_not_judged():
    g = _stacks.SimGap("x", "s", 1.0, {"kernel": None, "udp": math.nan}, 0.1)
    assert g.diff("kernel") is None and g.within("udp") is None
    assert g.diff_text("kernel") == "n/a"
    assert _stacks.gap_summary([g], "kernel") == (0, 0)


def test_saturation_after_the_cbr_starts_counts_only_while_it_runs():
    t = np.arange(0, 30, 0.1)
    util = np.full_like(t, 0.94)
    util[(t > 10) & (t < 11.5)] = 1.0  # over-full until MaxNet gives way
    util[(t > 22) & (t < 23)] = 1.0  # a burst after the CBR stopped: not counted
    assert stacks.saturated_after_start(t, util, 10.0, 20.0) == pytest.approx(1.4, abs=0.11)
    assert stacks.saturated_after_start(t, np.full_like(t, 0.9), 10.0, 20.0) == 0.0


def test_two_link_scenario_is_the_simulated_one():
    sim = two_link.scenario(1.0)
    for stack in two_link_stacks.STACKS:
        d = two_link_stacks.scenario_dict(1.0, stack)
        assert len(d["flow"]) == 6 and d["duration"] == "120s"
        rates = {tuple(link["between"]): link["rate"] for link in d["link"]}
        assert rates[("A", "B")] in (622e6, 622_000_000, "622Mbps")
        assert all(link["buffer"] == "unlimited" for link in d["link"])
        mss = {(f.get("transport") or {}).get("mss") for f in d["flow"]}
        assert mss == ({two_link_stacks.UDP_MSS} if stack == "udp" else {None})
    assert sim.to_json()  # the same builder


def _two_link_measured(scale: float = 1.0) -> dict:
    cells = [
        {"interval": [0, 20], "flow": "f1", "maxmin_bps": 5.449e8, "ours_bps": 5.4e8 * scale},
        {"interval": [20, 40], "flow": "f1", "maxmin_bps": 2.724e8, "ours_bps": 2.7e8},
        {"interval": [20, 40], "flow": "f2", "maxmin_bps": 2.724e8, "ours_bps": 2.7e8},
    ]
    return {
        "cells": cells,
        "rises": {"f2": {"rise_s": 0.4, "rtt_s": 0.179, "first_window_bps": math.nan}},
        "queues": {
            "A->B": {"max_bytes": 5_000_000, "mean_steady_bytes": 1500.0},
            "B->C": {"max_bytes": 4_000_000, "mean_steady_bytes": 1500.0},
        },
    }


def test_two_link_rows_set_real_beside_simulated_and_the_oracle():
    measured = {"sim": _two_link_measured(), "kernel": _two_link_measured(scale=0.9)}
    gaps = {g.quantity: g for g in two_link_stacks.sim_gaps(measured, "kernel")}
    first = gaps["rate of f1 in 0-20 s"]
    assert first.relative and first.diff("kernel") == pytest.approx(-0.1)
    assert not first.within("kernel") and gaps["rate of f2 in 20-40 s"].within("kernel")
    assert gaps["rise of f2"].within("kernel") and gaps["peak queue of A->B"].unit == "MB"
    judged = _stacks.score_stacks(two_link.claims, measured)
    rows = two_link_stacks.interval_rows(measured, "kernel", judged)
    assert rows[0][:3] == ["0-20 s", "f1", "544.9"]
    assert rows[0][3].startswith("540.0 (-0.9 %)") and rows[0][4] == "holds"
    assert rows[0][5].startswith("486.0") and rows[0][6] == "fails"  # 10 % off the oracle


def test_experiments_with_a_stack_version_accept_stack(capsys):
    assert get("maxnet-cbr").stack is not None and get("maxnet-two-link").stack is not None
    assert main(["reproduce", "maxnet-stability", "--stack", "kernel"]) == 2
    assert "has no --stack version" in capsys.readouterr().err


def test_unknown_stack_is_refused():
    with pytest.raises(ValueError, match="expected one of"):
        stacks.run("/nonexistent", stack="ns3")
    with pytest.raises(ValueError, match="expected one of"):
        two_link_stacks.run("/nonexistent", stack="ns3")


def test_the_mice_experiments_have_a_stack_version():
    from xcclab.reproduce.mice import mice_stacks

    assert get("mice-http-200").stack is not None and get("mice-http-50").stack is not None
    assert get("mice-queue-100M").stack is None
    assert set(mice_stacks.EXPERIMENTS) == {"mice-http-50", "mice-http-200"}
    with pytest.raises(ValueError, match="expected one of"):
        mice_stacks.run("/nonexistent", stack="ns3")


def test_a_failed_real_run_is_recorded_and_tried_again():
    calls = []

    def flaky():
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("xcc-emu: the kernel dropped 3 packet(s) at the TUN devices")
        return "result"

    result, failures = _stacks.run_real(flaky)
    assert result == "result" and len(failures) == 1 and len(calls) == 2

    def broken():
        raise RuntimeError("dropped | twice")

    result, failures = _stacks.run_real(broken)
    assert result is None and failures == ["dropped | twice"] * 2
    text = _stacks.failure_text({"kernel": failures})
    assert text.count("- `kernel`, attempt") == 2 and "dropped \\| twice" in text


MESSAGE = (
    "xcc-emu run --stack kernel failed: xcc-emu: the hosts' UDP sockets dropped 196259 "
    "datagram(s) (...): [DevCounters { rx_packets: 410502, rx_dropped: 0, tx_packets: 810589, "
    "tx_dropped: 0, udp_rcvbuf_errors: 0, udp_sndbuf_errors: 0 }, DevCounters { rx_packets: 0, "
    "rx_dropped: 0, tx_packets: 333334, tx_dropped: 0, udp_rcvbuf_errors: 0, "
    "udp_sndbuf_errors: 0 }, DevCounters { rx_packets: 1453329, rx_dropped: 0, tx_packets: "
    "410502, tx_dropped: 0, udp_rcvbuf_errors: 196259, udp_sndbuf_errors: 0 }]"
)


def test_a_failure_message_says_which_host_lost_what():
    counters = _stacks.kernel_drops(MESSAGE, stacks.HOSTS)
    assert [c["host"] for c in counters] == ["src", "cbr", "dst"]
    assert counters[2]["udp_rcvbuf_errors"] == 196259 and counters[1]["tx_packets"] == 333334
    text = _stacks.drop_summary(MESSAGE, stacks.HOSTS)
    assert text.startswith("lost at: dst udp_rcvbuf_errors 196259")
    assert _stacks.drop_summary("no counters here", stacks.HOSTS) == ""
    shares = stacks.cbr_sink_losses({"kernel": [MESSAGE], "udp": [MESSAGE]})
    assert shares == [pytest.approx(196259 / 333334)]
    assert "59 %" in stacks._sink_text({"kernel": [MESSAGE]}, True)


def test_two_link_discussion_names_the_intervals_off_max_min():
    measured = {"sim": _two_link_measured(), "kernel": _two_link_measured(scale=0.9)}
    for s in measured:
        measured[s]["interval_queues"] = [
            {"link": "A->B", "interval": [0, 20], "mean_packets": 1.0, "max_packets": 4.0}
        ]
    lines = two_link_stacks.discussion(measured, "kernel")
    assert lines[0].startswith("`sim`: every active flow within 5 % of its max-min rate in 0-20 s")
    assert "not in 0-20 s (f1 -11 %)" in lines[1]
    assert "A->B 0-20 s: 1 (max 4) against 1.0 (max 4)" in lines[2]
    assert two_link_stacks.discussion({"sim": measured["sim"]}, "kernel") == []


def test_two_link_rows_over_runs_are_judged_on_their_intervals():
    """Five runs of each side: each claim and each real-against-simulated row is a mean and
    95 % interval with n = 5, and a real spread as wide as the bound is inconclusive."""
    scales = (0.90, 0.95, 1.0, 1.05, 1.10)  # f1's first rate: 486-594 Mbit/s around 540
    runs = {
        "sim": [_two_link_measured() for _ in scales],
        "kernel": [_two_link_measured(scale=k) for k in scales],
    }
    measured = {s: r[0] for s, r in runs.items()}
    gaps = {g.quantity: g for g in two_link_stacks.sim_gaps(measured, "kernel", runs)}
    first = gaps["rate of f1 in 0-20 s"]
    assert first.interval("kernel").n == 5 and first.sim_interval().n == 5
    assert first.status("kernel") == "inconclusive"  # mean equal, interval beyond +-5 %
    assert gaps["rate of f2 in 20-40 s"].status("kernel") == "holds"
    assert "(n = 5)" in _stacks.gap_rows(list(gaps.values()), ("kernel",))[1][0][2]
    judged = _stacks.score_stacks(two_link.claims, measured, runs)
    numbers = [x for x in judged["kernel"][0] if x.ours is not None]
    assert numbers and all(x.ours.n == 5 for x in numbers)
    rows = two_link_stacks.interval_rows(measured, "kernel", judged, runs)
    assert rows[0][5].startswith("540.0")  # the mean of the five runs
