"""The scenario fuzzer (``xcclab.fuzz``): generated scenarios are valid and cover every
registered algorithm; a few hundred seeded cases run with no crash, hang, broken invariant,
memory over the bound or silently starved flow (``make fuzz`` runs thousands)."""

from __future__ import annotations

import pytest

from xcclab.fuzz import flow_problem, fuzz, generate, memory_bound, registries

#: Seeded cases in every CI run (under five minutes on two cores).
CI_CASES = 300
CI_SEED = 35_000


@pytest.mark.native
def test_generated_scenarios_are_valid_and_cover_every_registered_controller():
    from xcclab.results import validate

    ccs, queues = registries()
    cases = [generate(CI_SEED + k, ccs, queues) for k in range(CI_CASES)]
    for case in cases:
        validate(case.scenario)  # raises for an invalid one
        assert memory_bound(case) > 0
    assert {c.notes["cc"] for c in cases} == set(ccs)
    used_queues = {
        q if isinstance(q, str) else q["kind"]
        for c in cases
        for link in c.scenario["link"]
        if (q := link.get("queue")) is not None
    }
    assert used_queues == set(queues)
    assert generate(7, ccs, queues).scenario == generate(7, ccs, queues).scenario


@pytest.mark.native
def test_seeded_fuzz_cases_pass():
    summary = fuzz(CI_CASES, seed=CI_SEED, jobs=2)
    assert summary["failures"] == []
    assert summary["passed"] == CI_CASES


@pytest.mark.native
def test_cases_the_fuzzer_once_failed_pass():
    from xcclab.fuzz import REGRESSIONS, check_batch
    from xcclab.isolated import Limits, run_isolated

    ccs, queues = registries()
    cases = [[generate(seed, ccs, queues)] for seed in REGRESSIONS]
    for outcome in run_isolated(check_batch, cases, limits=Limits(seconds=120)):
        assert outcome.error is None
        assert [r["problem"] for r in outcome.result] == [None]


def test_the_per_flow_checks_fail_on_what_they_look_for():
    ok = {"name": "f1", "start_s": 0.0, "bytes_delivered": 10, "rto_overdue": 0}
    assert flow_problem(ok, "", 1.0) is None
    overdue = {**ok, "rto_overdue": 2}
    assert "timer did not fire 2 times" in flow_problem(overdue, "flow 'f1' ...", 1.0)
    capped = {**ok, "window_capped": 5}
    assert "window cap silently" in flow_problem(capped, "flow 'f2': ...", 1.0)
    assert flow_problem(capped, "flow 'f1': the transport's window reached its cap", 1.0) is None
    starved = {**ok, "late_rate_bps": 1.0, "maxmin_bps": 100.0}
    assert "starved silently" in flow_problem(starved, "", 1.0)
    assert flow_problem({**ok, "bytes_delivered": 0, "start_s": 1.0}, "", 1.0) is None
