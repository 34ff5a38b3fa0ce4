"""Sweeps over protocols: the protocols dimension, named variants (linked parameters), [*]
paths, and what the manifest and the catalog make of them."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from conftest import ROOT
from xcclab.errors import ScenarioError
from xcclab.sweep_spec import load_spec, set_path

PARKING_LOT = ROOT / "scenarios" / "parking-lot.toml"
DATA = Path(__file__).parent / "data"

SPEC = f"""
name = "protocols"
scenario = "{PARKING_LOT}"
seeds = [1, 2]
protocols = [
    "xcp",
    {{ name = "maxnet-95", cc = "maxnet", queue = {{ kind = "maxnet", mu = 0.95 }} }},
]

[variants.short]
duration = "2s"
"link[*].buffer" = "500pkt"

[variants.longer]
duration = "4s"

[grid]
"link[1].delay" = ["100ms", "5ms"]
"""


def write(tmp_path: Path, text: str, name: str = "spec.toml") -> Path:
    (tmp_path / name).write_text(text)
    return tmp_path / name


def test_protocols_set_every_flow_cc_and_every_explicit_queue(tmp_path):
    spec = load_spec(write(tmp_path, SPEC))
    points = spec.points()
    assert len(points) == 2 * 2 * 2 * 2
    assert list(spec.dimensions()) == ["protocol", "variant", "link[1].delay"]
    first = points[0]
    assert first.params == (("protocol", "xcp"), ("variant", "short"), ("link[1].delay", "100ms"))
    sc = spec.scenario_for(points[-1])  # maxnet-95, longer, 5ms, seed 2
    assert [f["cc"] for f in sc["flow"]] == ["maxnet"] * 2
    chain = sc["link"][:3]
    assert all(link["queue"] == {"kind": "maxnet", "mu": 0.95} for link in chain)
    assert all("queue" not in link for link in sc["link"][3:])  # access links keep DropTail
    assert sc["duration"] == "4s" and sc["link"][1]["delay"] == "5ms"
    # the variant "short" sets fields of every link at once
    sc = spec.scenario_for(points[0])
    assert {link["buffer"] for link in sc["link"]} == {"500pkt"} and sc["duration"] == "2s"
    # what a name stands for is part of the point id
    edited = load_spec(write(tmp_path, SPEC.replace("mu = 0.95", "mu = 0.9"), "b.toml"))
    ids = {(p.params, p.seed): p.id for p in points}
    for p in edited.points():
        assert (ids[p.params, p.seed] == p.id) == (p.params[0] == ("protocol", "xcp"))


def test_star_paths_and_spec_errors(tmp_path):
    data = {"link": [{"rate": "1Mbps"}, {"rate": "2Mbps"}], "flow": []}
    set_path(data, "link[*].reverse.buffer", "5pkt")
    assert [link["reverse"] for link in data["link"]] == [{"buffer": "5pkt"}] * 2
    cases = {
        'protocols = "xcp"': "protocols: expected a non-empty list",
        "protocols = [{ cc = 'xcp' }]": r"protocols\[0\].name: expected a non-empty string",
        "protocols = [{ name = 'a', kind = 'x' }]": r"protocols\[0\].kind: unknown field",
        "protocols = ['xcp', 'xcp']": "appears twice",
        "[variants.a]\n'link[9].rate' = '1Mbps'": "variants.a.'link\\[9\\].rate': index 9",
        "[variants.a]": "variants.a: expected a non-empty table",
        "[grid]\nprotocol = ['xcp']": "reserved parameter name; use protocols",
    }
    for text, message in cases.items():
        spec = f'scenario = "{PARKING_LOT}"\n{text}\n'
        with pytest.raises(ScenarioError, match=message):
            load_spec(write(tmp_path, spec))
    with pytest.raises(ScenarioError, match="has no link with an explicit queue"):
        load_spec(write(tmp_path, f'scenario = "{DATA / "tiny.toml"}"\nprotocols = ["xcp"]\n'))


@pytest.mark.native
def test_protocol_sweep_manifest_catalog_and_plot(tmp_path):
    import xcclab
    from xcclab.plot_sweep import plot_sweep, sweep_stats

    spec = write(tmp_path, SPEC.replace("seeds = [1, 2]", "seeds = [1]"))
    result = xcclab.sweep(spec, tmp_path / "out", jobs=2, progress=False)
    assert not result.failed
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["columns"] == {
        "protocol": "protocol",
        "variant": "variant",
        "link[1].delay": "link_1_delay",
    }
    assert manifest["protocols"]["maxnet-95"]["cc"] == "maxnet"
    frame = pl.read_parquet(tmp_path / "out" / "manifest.parquet")
    assert frame["protocol"].to_list()[:2] == ["xcp", "xcp"]
    with xcclab.catalog(tmp_path / "out") as cat:
        runs = cat.sql(
            "SELECT protocol, variant, link_1_delay, sweep FROM runs "
            "ORDER BY protocol, variant, link_1_delay"
        )
        assert runs["link_1_delay"].to_list()[:2] == ["5ms", "100ms"]  # numeric order
        assert set(runs["sweep"]) == {"protocols"}
        cc = cat.sql("SELECT DISTINCT protocol, cc FROM flows ORDER BY protocol").rows()
        assert cc == [("maxnet-95", "maxnet"), ("xcp", "xcp")]
        metrics = cat.sql(
            "SELECT jain_maxmin FROM run_metrics "
            "WHERE protocol = 'maxnet-95' AND variant = 'longer'"
        )
        assert metrics.height == 2 and all(v > 0.99 for v in metrics["jain_maxmin"])
    stats, m, _ = sweep_stats(
        tmp_path / "out",
        "flows.late_rate_bps",
        ["link_1_delay", "protocol"],
        where="name = 'short2' AND variant = 'longer'",
        reference="flows.maxmin_bps",
    )
    assert m.label == "late_rate_bps (Mbit/s)" and "SELECT" not in m.label
    assert stats.height == 4 and stats["n"].to_list() == [1] * 4
    for row in stats.filter(pl.col("protocol") == "maxnet-95").iter_rows(named=True):
        assert row["mean"] == pytest.approx(row["reference"], rel=0.05), row
    files = plot_sweep(
        [tmp_path / "out", tmp_path / "out"],
        "jain_maxmin",
        "link_1_delay",
        hue="sweep",
        out=tmp_path / "plots",
        formats=("png",),
    )
    assert [f.name for f in files] == [
        "jain_maxmin-vs-link_1_delay.png",
        "jain_maxmin-vs-link_1_delay.csv",
    ]


@pytest.mark.native
def test_plot_sweep_over_a_directory_of_sweeps_with_hue_sweep(tmp_path):
    import xcclab
    from xcclab.cli import main

    root = tmp_path / "results"
    for name, buffer in (("small-buffer", "10pkt"), ("large-buffer", "60pkt")):
        spec = write(
            tmp_path,
            f'name = "{name}"\nscenario = "{DATA / "tiny.toml"}"\nseeds = [1, 2]\n'
            f'series = false\n[variants.v]\n"link[2].buffer" = "{buffer}"\n'
            '[grid]\n"link[1].delay" = ["1ms", "20ms"]\n',
            f"{name}.toml",
        )
        assert not xcclab.sweep(spec, root / name, jobs=2, progress=False).failed
    out = tmp_path / "plots"
    args = ["plot-sweep", str(root), "--metric", "jain", "--x", "link_1_delay"]
    assert main([*args, "--hue", "sweep", "--out", str(out), "--format", "png"]) == 0
    stats = pl.read_csv(out / "jain-vs-link_1_delay.csv")
    assert sorted(set(stats["sweep"])) == ["large-buffer", "small-buffer"]
    assert stats["n"].to_list() == [2] * 4


def test_manifest_frame_has_si_values_beside_the_text(tmp_path):
    from xcclab.sweep_runner import manifest_frame

    spec = load_spec(write(tmp_path, SPEC))
    records = [
        {
            "point_id": p.id,
            "index": p.index,
            "params": p.params_dict(),
            "seed": p.seed,
            "status": "ok",
            "error": None,
            "run_dir": f"points/{p.id}",
        }
        for p in spec.points()
    ]
    frame = manifest_frame(spec, records)
    assert frame["link_1_delay"].to_list()[:3] == ["100ms", "100ms", "5ms"]
    assert frame["link_1_delay_si"].to_list()[:3] == pytest.approx([0.1, 0.1, 0.005])
    assert "protocol_si" not in frame.columns
