"""The parallel packet engine gives the same bytes for every thread count (issue 32).

A network of 64 routers or more is cut into domains at router links of 100 us or longer
(crates/xcc-sim/src/partition.rs); the tests run small such networks with 1 and 2 threads and
compare every table and the run's stats, and check that small networks (dumbbells, the
reproductions' scenarios) stay one domain, the serial engine.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import xcclab
from xcclab.results import RunResult

ROOT = Path(__file__).resolve().parents[2]


def chain_scenario(routers: int = 64) -> str:
    """A chain of routers (200-500 us links, every seventh with a 40-packet buffer), a host
    per router, and TCP, CBR and session flows crossing the cuts."""
    parts = ['name = "chain"', 'duration = "300ms"', "seed = 7", "[metrics]", 'interval = "50ms"']
    for i in range(routers):
        parts += [f'[[router]]\nname = "r{i}"', f'[[host]]\nname = "h{i}"']
        parts.append(
            f'[[link]]\nbetween = ["h{i}", "r{i}"]\nrate = "1Gbps"\ndelay = "1us"\n'
            'buffer = "1000pkt"'
        )
        if i:
            delay = 200 + 100 * (i % 4)
            buf = '\nbuffer = "40pkt"' if i % 7 == 0 else '\nbuffer = "500pkt"'
            parts.append(
                f'[[link]]\nbetween = ["r{i - 1}", "r{i}"]\nrate = "100Mbps"\n'
                f'delay = "{delay}us"{buf}'
            )
    flows = [
        ("h0", "h63", 'cc = "cubic"'),
        ("h5", "h40", 'cc = "newreno"\nsize = "300KB"'),
        ("h62", "h1", 'cc = "bbr"'),
        ("h20", "h50", 'kind = "cbr"\nrate = "20Mbps"'),
        ("h33", "h2", 'kind = "session"\nprotocol = "slbn"'),
        ("h10", "h12", 'cc = "newreno"\nstart = "50ms"\nstop = "300ms"'),
    ]
    for k, (src, dst, extra) in enumerate(flows):
        parts.append(f'[[flow]]\nname = "f{k}"\nsrc = "{src}"\ndst = "{dst}"\n{extra}')
    return "\n".join(parts) + "\n"


SESSIONS = """
name = "ts"
duration = "150ms"
seed = 3
[metrics]
interval = "50ms"
[sessions]
protocol = "slbn"
packet_size = "1500B"
topology = { transit_stub = { transit_domains = 2, transit_routers_per_domain = 2, \
stubs_per_transit_router = 2, routers_per_stub = 8 } }
workload = { arrivals = [{ count = 300, from_s = 0.0, to_s = 0.05 }] }
"""


def assert_same(a: RunResult, b: RunResult) -> None:
    assert a.run_info == b.run_info
    for name, frame in a.tables.items():
        other = b.tables[name]
        assert frame.columns == other.columns, name
        assert frame.equals(other, null_equal=True), f"table {name} differs"


def write_bytes(result: RunResult, out: Path) -> dict[str, bytes]:
    result.save(out)
    return {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.name != "timing.json"}


@pytest.mark.parametrize("text", [chain_scenario(), SESSIONS], ids=["chain", "transit-stub"])
def test_threads_give_the_same_bytes(text: str, tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text(text)
    one = xcclab.run(str(path), threads=1)
    two = xcclab.run(str(path), threads=2)
    three = xcclab.run(str(path), threads=3)
    assert one.timing["domains"] == 4, "the network is cut into domains"
    assert one.run_info["stats"]["packet_hops"] > 10_000
    assert_same(one, two)
    assert_same(one, three)
    assert write_bytes(one, tmp_path / "one") == write_bytes(two, tmp_path / "two")
    delivering = (one.flows["bytes_delivered"] > 0).mean()
    assert delivering > 0.75, f"only {delivering:.0%} of the flows deliver across the cuts"


def test_small_networks_stay_one_domain(tmp_path: Path) -> None:
    for scenario in ["dumbbell-10.toml", "parking-lot.toml", "slbn-parking-lot.toml"]:
        path = ROOT / "scenarios" / scenario
        one = xcclab.run(str(path), threads=1, series=False)
        two = xcclab.run(str(path), threads=2, series=False)
        assert two.timing["domains"] == 1
        assert_same(one, two)
