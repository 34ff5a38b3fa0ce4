"""maxnet-cbr on real packets (`xcc reproduce maxnet-cbr --stack ...`): the scaled scenario and
the command line; the runs themselves need root and take a minute (`xcc reproduce`)."""

from __future__ import annotations

import pytest

from xcclab.cli import main
from xcclab.reproduce import get
from xcclab.reproduce import maxnet_cbr_stacks as stacks


def test_the_scaled_scenario_keeps_the_papers_ratios():
    for stack in stacks.STACKS:
        d = stacks.scenario_dict(1.0, stack)
        rates = {tuple(link["between"]): link["rate"] for link in d["link"]}
        assert rates[("r1", "r2")] == "100Mbps"
        cbr = next(f for f in d["flow"] if f["kind"] == "cbr")
        assert cbr["rate"] == "40Mbps"  # 0.4 C, as 400 Mbit/s on the paper's 1 Gbit/s
        assert (cbr["start"], cbr["stop"], d["duration"]) == ("10s", "20s", "30s")
        maxnet = next(f for f in d["flow"] if f["kind"] == "bulk")
        assert ("transport" in maxnet) == (stack == "udp")


def test_only_experiments_with_a_stack_version_accept_stack(capsys):
    assert get("maxnet-cbr").stack is not None
    assert main(["reproduce", "maxnet-two-link", "--stack", "kernel"]) == 2
    assert "has no --stack version" in capsys.readouterr().err


def test_unknown_stack_is_refused():
    with pytest.raises(ValueError, match="expected one of"):
        stacks.run("/nonexistent", stack="ns3")


def test_the_mice_experiments_have_a_stack_version():
    from xcclab.reproduce import mice_stacks

    assert get("mice-http-200").stack is not None and get("mice-http-50").stack is not None
    assert get("mice-queue-100M").stack is None
    assert set(mice_stacks.EXPERIMENTS) == {"mice-http-50", "mice-http-200"}
    with pytest.raises(ValueError, match="expected one of"):
        mice_stacks.run("/nonexistent", stack="ns3")
