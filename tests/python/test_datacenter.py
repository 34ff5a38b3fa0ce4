"""Datacenter runs end to end: a k = 4 fat-tree with Poisson WebSearch flows at 30 % load,
through the simulator, to the FCT slowdown tables, the run directory and the figures; and the
workload's bad input refused before the run, exit 2, naming the file and the field."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import xcclab
from xcclab.cli import main

#: k = 4: 16 hosts at 10 Gbit/s, 20 switches, 1 us links; DCTCP marking at 30 packets.
FAT_TREE = """
name = "fat-tree-k4-websearch-30"
duration = "30ms"
seed = 7
[metrics]
interval = "0s"
[fabric]
topology = {{ fat_tree = {{ k = 4 }} }}
host_rate = "10Gbps"
delay = "1us"
buffer = "500KB"
queue = {{ kind = "dctcp", k = "30pkt" }}
[workload]
cdf = "{cdf}"
load = {load}
stop = "15ms"
cc = "dctcp"
transport = {{ min_rto = "1ms" }}
"""


@pytest.fixture(scope="module")
def fat_tree_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("dc") / "run"
    text = FAT_TREE.format(cdf="websearch", load=0.3)
    return xcclab.run(text, out=out, progress=False)


def test_fat_tree_websearch_slowdowns(fat_tree_run):
    res = fat_tree_run
    fct, bins = res.tables["fct"], res.tables["slowdown"]
    # 16 hosts x 0.3 x 10 Gbit/s / 8 / 1,711,250 B (WebSearch's mean) x 15 ms: 53 expected.
    assert 25 <= fct.height <= 90
    done = fct.filter(pl.col("slowdown").is_not_null())
    assert done.height >= fct.height // 2
    assert (done["slowdown"] >= 1.0).all()
    assert (done["fct_s"] >= 0.0).all() and (fct["ideal_fct_s"] > 0).all()
    # Slowdown = FCT / ideal, at least 1 (the ideal may overestimate a tiny flow's FCT).
    ratio = (done["fct_s"] / done["ideal_fct_s"]).clip(lower_bound=1.0)
    assert (ratio - done["slowdown"]).abs().max() < 1e-9
    assert bins.height >= 5 and (bins["p50"] >= 1.0).all()
    assert (bins["p50"] <= bins["p95"]).all() and (bins["p95"] <= bins["p99"]).all()
    # Some flows wait behind others: the tail is above the median in some bin, and overall.
    assert (bins["p50"] < bins["p99"]).any()
    assert done["slowdown"].quantile(0.5) < done["slowdown"].quantile(0.99)
    assert bins["flows"].sum() == done.height


def test_run_directory_and_figures(fat_tree_run, tmp_path):
    d = fat_tree_run.path
    for t in ("fct", "slowdown", "queue_cdf"):
        assert (d / f"{t}.parquet").is_file()
    back = xcclab.RunResult.load(d)
    assert back.tables["slowdown"].equals(fat_tree_run.tables["slowdown"])
    q = back.tables["queue_cdf"]
    last = q.group_by("link_id").agg(pl.col("fraction").last())
    assert (last["fraction"] - 1.0).abs().max() < 1e-12
    # Links leave switches only; the links table's utilisation is a fraction.
    assert not q["link"].str.starts_with("h").any()
    assert back.links["utilisation"].max() <= 1.0
    assert main(["plot", str(d), "--out", str(tmp_path / "plots"), "--format", "png"]) == 0
    assert (tmp_path / "plots" / "slowdown.png").is_file()
    assert (tmp_path / "plots" / "queue_cdf.png").is_file()


@pytest.mark.parametrize(
    ("cdf", "load", "field", "words"),
    [
        ("websearch", 1.5, "workload.load", "(0, 1]"),
        ("websearch", 0.0, "workload.load", "(0, 1]"),
        ("BAD", 0.3, "workload.cdf", "line 3"),
        ("SHORT", 0.3, "workload.cdf", "100 percent"),
    ],
)
def test_bad_workloads_exit_2_naming_file_and_field(tmp_path, capsys, cdf, load, field, words):
    (tmp_path / "bad.cdf").write_text("0 0\n100 50\n50 60\n200 100\n")
    (tmp_path / "short.cdf").write_text("0 0\n100 50\n200 90\n")
    cdf = {"BAD": "bad.cdf", "SHORT": "short.cdf"}.get(cdf, cdf)
    scenario = tmp_path / "dc.toml"
    scenario.write_text(FAT_TREE.format(cdf=cdf, load=load))
    out = tmp_path / "out"
    assert main(["run", str(scenario), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert str(scenario) in err and field in err and words in err, err
    if cdf.endswith(".cdf"):
        assert cdf in err
    assert not out.exists()


def test_shipped_cdfs_cite_their_source():
    root = Path(xcclab.__file__).resolve().parents[2]
    for name, source in (("websearch", "DCTCP"), ("fb_hadoop", "Roy et al.")):
        text = (root / "crates/xcc-core/src/workload/cdfs" / f"{name}.cdf").read_text()
        assert source in text and "High-Precision-Congestion-Control" in text
