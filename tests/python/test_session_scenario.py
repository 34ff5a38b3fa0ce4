"""The transit-stub session scenarios for ``xcc compare`` (tools/session_scenario.py): the
committed files are the generator's output, they resolve to the network described, and the
emulator's preflight takes them (where the machine can emulate) and refuses session packets
that cannot travel, as a scenario error naming the value."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from xcclab.errors import ScenarioError
from xcclab.results import validate

ROOT = Path(__file__).resolve().parents[2]


def _generator():
    spec = importlib.util.spec_from_file_location(
        "session_scenario", ROOT / "tools" / "session_scenario.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("protocol", ["slbn", "bfyz"])
def test_committed_scenarios_are_the_generators_output(protocol):
    text = _generator().generate(protocol)
    path = ROOT / "scenarios" / f"{protocol}-transit-stub-emu.toml"
    assert path.read_text(encoding="utf-8") == text, (
        f"regenerate {path.name} with tools/session_scenario.py"
    )
    s = validate(path)
    kinds = [n["kind"] for n in s["nodes"]]
    assert (kinds.count("router"), kinds.count("host")) == (30, 24)
    flows = s["flows"]
    assert len(flows) == 50
    assert all(
        f["kind"]["kind"] == "session" and f["kind"]["protocol"]["kind"] == protocol for f in flows
    )
    assert all(f["kind"]["packet_bytes"] == 1500 for f in flows)
    assert all(f["src"] != f["dst"] for f in flows)


def test_generator_is_deterministic_and_seeded():
    g = _generator()
    assert g.generate("slbn") == g.generate("slbn")
    assert g.generate("slbn", seed=5) != g.generate("slbn")


def test_rate_scale_lightens_the_routers_links_only(tmp_path):
    g = _generator()
    full, half = tmp_path / "full.toml", tmp_path / "half.toml"
    full.write_text(g.generate("slbn"), encoding="utf-8")
    half.write_text(g.generate("slbn", rate_scale=0.5), encoding="utf-8")
    a, b = validate(full), validate(half)
    assert [(x["from"], x["to"], x["delay_ns"]) for x in a["links"]] == [
        (x["from"], x["to"], x["delay_ns"]) for x in b["links"]
    ]
    hosts = {i for i, n in enumerate(a["nodes"]) if n["kind"] == "host"}
    for x, y in zip(a["links"], b["links"]):
        host_link = x["from"] in hosts or x["to"] in hosts
        assert y["rate_bps"] == (x["rate_bps"] if host_link else x["rate_bps"] // 2)


def test_emulator_preflight_takes_them_and_refuses_oversized_session_packets(tmp_path):
    from xcclab import emu

    try:
        emu.find_binary()
    except RuntimeError as exc:
        pytest.skip(str(exc))
    if (why := emu.check()) is not None:
        pytest.skip(why)
    assert emu.check(ROOT / "scenarios" / "slbn-transit-stub-emu.toml") is None
    big = tmp_path / "big.toml"
    big.write_text(_generator().generate("slbn", packet_bytes=2100), encoding="utf-8")
    with pytest.raises(ScenarioError, match=r"packet_bytes = 2100 B.*expected 36 to 2000 B"):
        emu.preflight(big)


# Two SLBN sessions on a parking lot (40 and 12 Mbit/s): max-min 12 and 28 Mbit/s.
PARKING_LOT = """
name = "emu-slbn-compare"
duration = "3s"
[[host]]
name = "s{i}"
count = 2
[[host]]
name = "d{i}"
count = 2
[[router]]
name = "r{i}"
count = 3
[[link]]
between = ["s{i}", "r1"]
count = 2
rate = "1Gbps"
delay = "100us"
buffer = "unlimited"
[[link]]
between = ["r1", "r2"]
rate = "40Mbps"
delay = "5ms"
buffer = "unlimited"
[[link]]
between = ["r2", "r3"]
rate = "12Mbps"
delay = "5ms"
buffer = "unlimited"
[[link]]
between = ["r3", "d1"]
rate = "1Gbps"
delay = "100us"
buffer = "unlimited"
[[link]]
between = ["r2", "d2"]
rate = "1Gbps"
delay = "100us"
buffer = "unlimited"
[[flow]]
name = "f{i}"
count = 2
kind = "session"
src = "s{i}"
dst = "d{i}"
protocol = "slbn"
packet_size = "1000B"
[metrics]
interval = "250ms"
"""

# Each session's goodput over its life, emulated against simulated (measured within 0.1 %
# on a quiet machine; start-up included, where a rate change a few packets earlier or later
# moves the total).
GOODPUT_AGREEMENT = 0.01
RUN_SECONDS = 3.0


@pytest.mark.native
def test_xcc_compare_puts_emulated_sessions_beside_simulated_ones(tmp_path):
    """`xcc compare` on session flows: both halves written, each session a `session` row with
    its protocol, its goodput within 1 % of the simulated one."""
    from xcclab import emu
    from xcclab.cli import main
    from xcclab.results import RunResult

    try:
        emu.find_binary()
    except RuntimeError as exc:
        pytest.skip(str(exc))
    if (why := emu.check()) is not None:
        pytest.skip(why)
    scenario = tmp_path / "slbn.toml"
    scenario.write_text(PARKING_LOT, encoding="utf-8")
    out = tmp_path / "cmp"
    assert main(["compare", str(scenario), "--out", str(out)]) == 0
    flows = json.loads((out / "compare.json").read_text())["flows"]
    assert [f["flow"] for f in flows] == ["f1", "f2"]
    e = RunResult.load(out / "emu")
    # A stall the run itself measured (a source's late wake-ups, a router delivery late) is
    # sending time the real run lost and the simulator did not: it widens the bound by its
    # share of the run, as the fidelity warnings say.
    stats = e.run_info["emu"]
    stalled_us = stats.get("session_pacing_lost_max_us", 0) + stats.get("lateness_max_us", 0)
    allowance = GOODPUT_AGREEMENT + stalled_us / RUN_SECONDS / 1e6
    for f in flows:
        assert abs(f["goodput_diff"]) < allowance, (allowance, flows)
    assert e.flows["kind"].to_list() == ["session", "session"]
    assert e.flows["cc"].to_list() == ["slbn", "slbn"]
    assert e.run_info["emu"]["session_control_back"] > 0
