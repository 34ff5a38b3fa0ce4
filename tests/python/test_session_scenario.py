"""The transit-stub session scenarios for ``xcc compare`` (tools/session_scenario.py): the
committed files are the generator's output, they resolve to the network described, and the
emulator's preflight takes them (where the machine can emulate) and refuses session packets
that cannot travel, as a scenario error naming the value."""

from __future__ import annotations

import importlib.util
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
    big.write_text(_generator().generate("slbn", packet_bytes=2000), encoding="utf-8")
    with pytest.raises(ScenarioError, match=r"packet_bytes = 2000 B.*expected 36 to 1500 B"):
        emu.preflight(big)
