"""xcc plot-sweep: statistics over seeds match the files; figures and CSV are written."""

from __future__ import annotations

import math
from pathlib import Path

import polars as pl
import pytest

from xcclab.cli import main
from xcclab.errors import ScenarioError
from xcclab.plot_sweep import metric_sql, sweep_stats, t975

DATA = Path(__file__).parent / "data"
SPEC = f"""
scenario = "{DATA / "tiny.toml"}"
seeds = [1, 2, 3, 4]
series = false
[grid]
"link[1].delay" = ["1ms", "20ms"]
"link[2].buffer" = ["10pkt", "30pkt"]
"""


def test_t_quantiles():
    assert t975(1) == pytest.approx(12.706)
    assert t975(3) == pytest.approx(3.182)
    assert t975(100) == 1.96
    assert math.isnan(t975(0))


def test_metric_errors_name_what_is_expected():
    with pytest.raises(ScenarioError, match="expected one of jain, .* or TABLE.COLUMN"):
        metric_sql("goodput")
    with pytest.raises(ScenarioError, match="flows has .*goodput_bps"):
        metric_sql("flows.goodput")
    with pytest.raises(ScenarioError, match="--agg"):
        metric_sql("flows.goodput_bps", agg="median")


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory):
    import xcclab

    root = tmp_path_factory.mktemp("plot_sweep")
    (root / "spec.toml").write_text(SPEC)
    assert not xcclab.sweep(root / "spec.toml", root / "sweep", jobs=2, progress=False).failed
    return root / "sweep"


@pytest.mark.native
def test_stats_over_seeds_match_the_parquet_files(sweep_dir):
    stats, _, paths = sweep_stats(sweep_dir, "flows.goodput_bps", ["link[1].delay"], agg="sum")
    assert paths == {"link_1_delay": "link[1].delay"}
    manifest = pl.read_parquet(sweep_dir / "manifest.parquet")
    for row in stats.iter_rows(named=True):
        runs = manifest.filter(pl.col("link_1_delay") == row["link_1_delay"])
        values = pl.Series(
            [
                pl.read_parquet(sweep_dir / d / "flows.parquet")["goodput_bps"].sum()
                for d in runs["run_dir"]
            ]
        )
        assert row["n"] == 8  # 4 seeds x 2 buffers, averaged over
        assert row["mean"] == pytest.approx(values.mean(), rel=1e-12)
        assert row["ci95"] == pytest.approx(t975(7) * values.std() / math.sqrt(8), rel=1e-9)
    assert stats["link_1_delay"].to_list() == ["1ms", "20ms"]


@pytest.mark.native
def test_cli_writes_line_plot_and_heatmap(sweep_dir, tmp_path, capsys):
    out = tmp_path / "plots"
    assert (
        main(
            [
                "plot-sweep",
                str(sweep_dir),
                "--metric",
                "jain",
                "--x",
                "link_1_delay",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "plot-sweep",
                str(sweep_dir),
                "--metric",
                "links.drops",
                "--where",
                "name = 'r1->r2'",
                "--x",
                "link[1].delay",
                "--y",
                "link[2].buffer",
                "--out",
                str(out),
                "--format",
                "png",
            ]
        )
        == 0
    )
    for name in (
        "jain-vs-link_1_delay.png",
        "jain-vs-link_1_delay.svg",
        "links-drops-vs-link_1_delay-link_2_buffer.png",
        "links-drops-vs-link_1_delay-link_2_buffer.csv",
    ):
        assert (out / name).stat().st_size > 0, name
    capsys.readouterr()
    assert main(["plot-sweep", str(sweep_dir), "--metric", "jain", "--x", "link[7].rate"]) == 2
    assert "no swept parameter 'link[7].rate'; swept: link_1_delay" in capsys.readouterr().err
