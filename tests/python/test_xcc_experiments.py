"""Seed 002's explicit-protocol comparisons: XCP's fluid equilibrium, the protocol list, and
xcc-multilink in quick mode (RCP at max-min, XCP at its own equilibrium)."""

import json

import pytest

from xcclab.xcp_equilibrium import xcp_equilibrium


def test_xcp_equilibrium_is_max_min_on_one_link():
    x = xcp_equilibrium([100.0], [[0]] * 4)
    assert max(abs(v / 25.0 - 1) for v in x) < 1e-4


def test_xcp_equilibrium_leaves_short_flows_below_max_min_on_two_links():
    # n = 2: two long flows over both links (C2 = C1 / 6), two short ones over l1.
    c1 = 155.0
    x = xcp_equilibrium([c1, c1 / 6], [[0, 1], [0, 1], [0], [0]])
    long_mm, short_mm = c1 / 12, (c1 - c1 / 6) / 2
    assert abs(x[0] / long_mm - 1) < 1e-3
    # Short flows: the constrained equilibrium lies about 10 % below max-min, and l1 is not full.
    assert 0.85 < x[2] / short_mm < 0.95
    assert sum(x) < 0.95 * c1


def test_every_listed_protocol_is_a_valid_scenario():
    native = pytest.importorskip("xcclab._native")
    from xcclab.reproduce.common import explicit as _xcc

    for p in _xcc.PROTOCOLS:
        sc = _xcc.dumbbell(p, "t", [_xcc.Flow("f", 0.05)], duration_s=1)
        native.validate(sc.to_toml(), f"{p.name}.toml")


def test_protocol_targets_and_shims_are_the_registrys():
    """A protocol's target utilisation is the parameter its queue's registry entry names, as the
    scenario parser resolves it (given, or the algorithm's default), and its shim is the wire
    registry's header (2 shim bytes + the body): nothing restated in the experiments."""
    pytest.importorskip("xcclab._native")
    from xcclab.errors import load_native
    from xcclab.references import target_utilisation
    from xcclab.reproduce.common import explicit
    from xcclab.results import validate

    header = {name: 2 + n for _, name, n, *_ in load_native().congestion_headers()}
    for p in explicit.PROTOCOLS:
        sc = explicit.dumbbell(p, "t", [explicit.Flow("f", 0.05)], duration_s=1)
        bottleneck = next(x for x in validate(sc)["links"] if x["name"] == explicit.BOTTLENECK)
        assert p.target == target_utilisation(bottleneck["queue"]), p.name
        assert p.shim_bytes == header[p.name], p.name
    given = explicit.Protocol("m", "MaxNet", {"kind": "maxnet", "mu": 0.9}, "maxnet")
    assert given.target == 0.9
    assert explicit.Protocol("d", "DropTail", "droptail", "newreno").target == 1.0


def test_quick_multilink(tmp_path):
    pytest.importorskip("xcclab._native")
    from xcclab.reproduce.xcc import xcc_multilink

    xcc_multilink.run(tmp_path / "out", quick=True, progress=False)
    m = json.loads((tmp_path / "out" / "metrics.json").read_text())["measured"]
    rcp, xcp = m["rcp"], m["xcp"]
    for got, want in zip(rcp["rates_bps"], rcp["maxmin"]):
        assert abs(got / want - 1) < 0.05, (got, want)
    for got, want in zip(xcp["rates_bps"], xcp["xcp_equilibrium"]):
        assert abs(got / want - 1) < 0.02, (got, want)
    assert all(m[p]["drops"] == 0 for p in ("xcp", "rcp"))
    assert "PIQI-RCP" in (tmp_path / "out" / "report.md").read_text()
