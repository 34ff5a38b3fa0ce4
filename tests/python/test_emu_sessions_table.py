"""A `[sessions]` table on real packets: `xcc compare` expands it into the same routers, hosts,
links and session flows as the simulator (one `Network`, crates/xcc-build/src/network.rs) and
each session's emulated goodput agrees with its simulated one; a workload too large for
namespaces is refused as a scenario error naming the field."""

from __future__ import annotations

import json

import pytest

from xcclab.errors import ScenarioError

# Four SLBN sessions on a 6-router transit-stub network with 10-20 Mbit/s router links, so the
# real router keeps up on a loaded machine (seed 3: three sessions share bottlenecks, one is
# limited by its 100 Mbit/s host link).
TINY = """
name = "tiny-sessions"
duration = "{duration}"
seed = 3
[metrics]
interval = "500ms"
[sessions]
protocol = "slbn"
packet_size = "1000B"
topology = {{ transit_stub = {{ transit_domains = 1, transit_routers_per_domain = 2, \
stubs_per_transit_router = 1, routers_per_stub = 2, transit_capacity_bps = 20e6, \
transit_stub_capacity_bps = 10e6, stub_capacity_bps = 10e6, hosts_per_stub_router = 2, \
host_capacity_bps = 100e6, host_delay_s = 0.0001 }} }}
workload = {{ arrivals = [{{ count = {count}, from_s = 0.0, to_s = 0.2 }}] }}
"""

RUN_SECONDS = 3.0
#: As tests/python/test_session_scenario.py: each session's goodput within 1 % of the
#: simulated one, widened by the share of the run a measured stall took.
GOODPUT_AGREEMENT = 0.01


def _emulator_or_skip():
    from xcclab import emu

    try:
        emu.find_binary()
    except RuntimeError as exc:
        pytest.skip(str(exc))
    if (why := emu.check()) is not None:
        pytest.skip(why)
    return emu


@pytest.mark.native
def test_a_sessions_table_runs_on_real_packets_as_in_the_simulator(tmp_path):
    _emulator_or_skip()
    from xcclab.cli import main
    from xcclab.results import RunResult

    scenario = tmp_path / "tiny.toml"
    scenario.write_text(TINY.format(duration=f"{RUN_SECONDS}s", count=4), encoding="utf-8")
    out = tmp_path / "cmp"
    assert main(["compare", str(scenario), "--out", str(out)]) == 0
    flows = json.loads((out / "compare.json").read_text())["flows"]
    assert [f["flow"] for f in flows] == ["s0", "s1", "s2", "s3"]
    sim, e = RunResult.load(out / "sim"), RunResult.load(out / "emu")
    # The same expansion: the same links, by name, in the same order.
    assert e.links["name"].to_list() == sim.links["name"].to_list()
    stats = e.run_info["emu"]
    stalled_us = stats.get("session_pacing_lost_max_us", 0) + stats.get("lateness_max_us", 0)
    allowance = GOODPUT_AGREEMENT + stalled_us / RUN_SECONDS / 1e6
    for f in flows:
        assert abs(f["goodput_diff"]) < allowance, (allowance, flows)
    assert e.flows["kind"].to_list() == ["session"] * 4
    assert stats["session_control_back"] > 0


@pytest.mark.native
def test_a_sessions_table_too_large_for_namespaces_is_a_scenario_error(tmp_path):
    emu = _emulator_or_skip()
    scenario = tmp_path / "big.toml"
    scenario.write_text(TINY.format(duration="1s", count=65), encoding="utf-8")
    with pytest.raises(ScenarioError, match=r"sessions\.workload\.arrivals: 65 sessions"):
        emu.preflight(scenario)
