"""Claims the second reading (issue 31, docs/reproduction/audit.md) put on the paper's own
definition, checked on small synthetic metrics: each test fails if the claim goes back to the
definition the reading replaced."""

from __future__ import annotations

from xcclab.claims import score
from xcclab.reproduce.maxnet import maxnet_two_link
from xcclab.reproduce.slbn import slbn_1b
from xcclab.reproduce.xcc import xcc_multilink


def _classes(means: list[float], counts: list[int]) -> list[dict]:
    edges = [(0, 250), (250, 300), (300, None)]
    return [
        {"from_pkts": a, "to_pkts": b, "sessions": n, "mean_s": m}
        for (a, b), m, n in zip(edges, means, counts, strict=True)
    ]


def _slbn_1b(rcp_counts: list[int]) -> dict:
    full = [20_000, 20_000, 10_000]
    return {
        "quick": False,
        "measured": {
            "slbn": {
                "completion_by_size": _classes([2.7, 3.0, 3.8], full),
                "completed": 50_000,
                "max_queue_packets": 600.0,
            },
            "erica": {
                "completion_by_size": _classes([2.4, 2.7, 3.8], full),
                "completed": 50_000,
                "max_queue_packets": 1e5,
            },
            "rcp": {
                "completion_by_size": _classes([2.2, 2.4, 3.7], rcp_counts),
                "completed": sum(rcp_counts),
                "final_es_p90": -99.9,
                "max_queue_packets": 6e5,
            },
        },
    }


def _completion(metrics: dict, other: str = "SLBN's"):
    (claim,) = [
        c for c in slbn_1b.claims(metrics) if c.id == f"RCP completion times worse than {other}"
    ]
    return score(claim)


def test_unfinished_sessions_leave_rcps_completion_undecided_not_failed():
    # RCP's completed sessions are faster in every size class, but every class has sessions
    # that never finished: each mean is bounded below only, so "RCP is slower" cannot fail.
    s = _completion(_slbn_1b([19_990, 19_950, 9_900]))
    assert s.status == "inconclusive"
    assert s.ours.lo < 0 and s.ours.hi == float("inf")
    assert "unfinished" in s.claim.note


def test_a_class_rcp_finished_faster_decides_against_it():
    # Only the largest class has unfinished sessions; in the others RCP is faster for sure.
    s = _completion(_slbn_1b([20_000, 20_000, 9_900]))
    assert s.status == "fails"


def test_every_session_finished_decides_rcps_completion_per_size_class():
    s = _completion(_slbn_1b([20_000, 20_000, 10_000]))
    assert s.status == "fails"
    # The smallest difference over the classes (250-300: 2.4 - 3.0), not the overall mean.
    assert abs(s.ours.mean - (-0.6)) < 1e-9


def _two_link() -> dict:
    rise = {"rise_s": 0.08, "rtt_s": 0.029}  # 2.76 RTTs from the SYN, 1.76 from the answer
    return {
        "measured": {
            "rises": {"f5": rise},
            "queues": {"A->B": {"max_bytes": 5e6, "mean_steady_bytes": 0.0}},
            "cells": [],
        }
    }


def test_maxstart_rise_is_the_ramp_and_from_the_syn_is_shown_apart():
    scored = {c.id: score(c) for c in maxnet_two_link.claims(_two_link())}
    assert scored["rise within two RTTs"].status == "holds"
    assert abs(scored["rise within two RTTs"].ours.mean - 0.08 / 0.029 + 1) < 1e-9
    apart = scored["rise within two RTTs (from the SYN)"]
    assert apart.status == "fails" and not apart.counted


def test_max_min_fairness_is_scored_and_xcps_cause_is_measured():
    xcp = {
        "rates_bps": [385e6, 519e6, 385e6],
        "maxmin": [385e6, 548e6, 385e6],
        "xcp_equilibrium": [385e6, 519e6, 385e6],
    }
    exact = {"rates_bps": [385e6, 548e6, 385e6], "maxmin": [385e6, 548e6, 385e6]}
    metrics = {"measured": {k: dict(exact) for k in ("rcp", "maxnet", "piqi-rcp", "jetmax")}}
    metrics["measured"]["xcp"] = xcp
    scored = {c.id: score(c) for c in xcc_multilink.claims(metrics)}
    assert scored["XCP max-min fair"].status == "fails"
    assert scored["XCP max-min fair"].counted
    assert scored["XCP max-min fair"].claim.evidence
    assert scored["RCP max-min fair"].status == "holds"
    assert "MaxNet max-min fair" not in scored  # not on the slide
