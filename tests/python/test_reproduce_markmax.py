"""``xcc reproduce markmax-fluid | markmax-s1 | markmax-s2 | markmax-s3`` in quick mode, and the
committed scenario files they generate."""

from __future__ import annotations

import json
import math

import pytest

import xcclab
from conftest import ROOT
from xcclab import cli
from xcclab.reproduce.markmax import markmax_s1, markmax_s1_dt, markmax_s2, markmax_s3
from xcclab.reproduce.markmax import packet as _markmax_packet

pytestmark = pytest.mark.native

GENERATED = (
    [
        (markmax_s1.scenario(r, k), markmax_s1.scenario_header(r, k))
        for k in ("mmb", "mmt")
        for r in markmax_s1.RATIOS
    ]
    + [
        (markmax_s2.scenario(r, k), markmax_s2.scenario_header(r, k))
        for k in markmax_s2.KINDS
        for r in markmax_s2.RATIOS
    ]
    + [(markmax_s3.scenario(k), markmax_s3.scenario_header(k)) for k in markmax_s3.KINDS]
)


@pytest.mark.parametrize(("sc", "header"), GENERATED, ids=[g[0].name for g in GENERATED])
def test_committed_scenarios_match_the_generators_and_validate(sc, header):
    path = ROOT / "scenarios" / f"{sc.name}.toml"
    assert path.read_text() == sc.to_toml(header=header), "regenerate with --write-scenarios"
    assert xcclab.validate(path)["name"] == sc.name


def test_generic_builder_reproduces_the_droptail_scenario():
    """The DT cells of s2/s3 are built like markmax-s1-dt's: same resolved links and flows."""
    a = xcclab.validate(markmax_s1_dt.scenario(7).to_toml())
    b = xcclab.validate(
        _markmax_packet.scenario("x", [12_000_000, 84_000_000], "dt", 100).to_toml()
    )
    assert a["links"] == b["links"]
    assert [f["kind"] for f in a["flows"]] == [f["kind"] for f in b["flows"]]


def test_markmax_queue_and_reverse_buffer():
    d = xcclab.validate(markmax_s2.scenario(10, "mmb").to_toml())
    links = {link["name"]: link for link in d["links"]}
    fwd, rev = links["S->D"], links["D->S"]
    assert fwd["queue"] == {
        "kind": "markmax",
        "variant": "b",
        "unit": "packets",
        "theta_l": 200,
        "theta": 240,
        "theta_h": 280,
        "tail": None,
    }
    assert fwd["buffer"] == {"packets": None, "bytes": None}
    assert rev["queue"] == {"kind": "drop_tail"} and rev["buffer"]["packets"] == 240
    # Connection 3 runs D -> S with delta_3 = delta_2 = 120 ms: a_3 = (120 - 2) / 4 ms.
    assert links["s3->D"]["delay_ns"] == 29_500_000 and links["S->d3"]["delay_ns"] == 29_500_000
    t = xcclab.validate(markmax_s1.scenario(3, "mmt").to_toml())
    q = {link["name"]: link for link in t["links"]}["S->D"]["queue"]
    assert q["variant"] == "t" and q["tail"] == 0.1


def test_s3_deltas_grow_by_sqrt2():
    d = markmax_s3.deltas_ns()
    assert len(d) == 10 and d[0] == 12_000_000
    for a, b in zip(d, d[1:]):
        assert b / a == pytest.approx(math.sqrt(2), rel=1e-7)


def _metrics(out):
    return json.loads((out / "metrics.json").read_text())


def test_fluid_quick(tmp_path):
    out = tmp_path / "fl"
    assert cli.main(["reproduce", "markmax-fluid", "--out", str(out), "--quick"]) == 0
    m = _metrics(out)
    comps = m["comparisons"]
    assert len(comps) == 30  # J and rho for 5 ratios x 3 thetas
    assert all(isinstance(c["ours"], float) for c in comps)
    by = {(c["quantity"], c["cell"]["rtt_ratio"], c["cell"]["theta_mss"]): c for c in comps}
    assert by[("J", 3, 60)]["paper"] == 0.9893
    # The fluid model reproduces Table I closely even on the short windows.
    for c in comps:
        assert abs(c["rel_diff"]) < 0.03, c
    assert all(cell["max_cuts_per_event"] == 1 for cell in m["cells"].values())
    assert "## Discussion" in (out / "report.md").read_text()


@pytest.mark.parametrize(
    ("module", "n_comparisons"),
    [(markmax_s1, 48), (markmax_s2, 24), (markmax_s3, 8)],
    ids=["s1", "s2", "s3"],
)
def test_packet_experiments_quick(tmp_path, module, n_comparisons):
    out = tmp_path / "mm"
    assert cli.main(["reproduce", module.ID, "--out", str(out), "--quick"]) == 0
    m = _metrics(out)
    assert m["experiment"] == module.ID and m["quick"] is True
    comps = m["comparisons"]
    assert len(comps) == n_comparisons
    for c in comps:
        assert isinstance(c["ours"], float), c
        assert c["paper"] is not None
    for key, cell in m["cells"].items():
        assert 0 < cell["rho"] <= 1.0
        assert 0 < cell["J"] <= 1.0
        if not key.startswith("dt"):
            # Unlimited buffer, ECN everywhere: MarkMax signals by marks, never by drops.
            assert cell["bottleneck_drops"] == 0, key
            assert cell["bottleneck_marks"] > 0, key
    report = (out / "report.md").read_text()
    assert "Quick mode" in report and "## Discussion" in report
    assert (out / "runs").is_dir()
