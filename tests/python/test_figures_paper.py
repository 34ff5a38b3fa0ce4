"""Static figures fit for a paper (issue 33, item 6), each point on a constructed run or sweep:
the title names the protocol and the swept values; legends sit off the data; a categorical x
(protocol) is points with error bars, not a line with a band; the queue panel stays readable
at 10 ms samples (each bucket's largest value drawn, its range shaded)."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.collections import PolyCollection
from matplotlib.container import ErrorbarContainer

import xcclab
from view_support import DATA

pytestmark = pytest.mark.native

TINY = (DATA / "tiny.toml").read_text()
#: tiny.toml with its bottleneck marked explicit, so a sweep's protocols switch it.
EXPLICIT = TINY.replace("loss = 0.01", 'loss = 0.01\nqueue = "droptail"')
SPEC = """
scenario = "base.toml"
seeds = [1, 2]
protocols = ["xcp", "maxnet"]
[grid]
"link[1].delay" = ["1ms", "20ms"]
"""


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    root = tmp_path_factory.mktemp("paper")
    (root / "base.toml").write_text(EXPLICIT)
    (root / "spec.toml").write_text(SPEC)
    assert not xcclab.sweep(root / "spec.toml", root / "out", jobs=1, progress=False).failed
    return root / "out"


@pytest.fixture
def figures(monkeypatch):
    """The figures plot_run and plot_sweep would save, kept open for inspection."""
    import xcclab.plot

    kept = []

    def keep(fig, out, stem, formats):
        kept.append(fig)
        return []

    monkeypatch.setattr(xcclab.plot, "save_figure", keep)
    monkeypatch.setattr("matplotlib.pyplot.close", lambda fig=None: None)
    return kept


def _legends_off_the_data(fig) -> None:
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    checked = 0
    for ax in fig.axes:
        legend = ax.get_legend()
        if legend is None:
            continue
        box, area = legend.get_window_extent(renderer), ax.get_window_extent(renderer)
        assert box.x0 >= area.x1 - 1 or not box.overlaps(area), "legend over the data"
        assert box.x1 <= fig.bbox.x1 + 1, "legend cut off by the figure's edge"
        checked += 1
    assert checked


def test_run_title_names_protocol_and_swept_values(sweep, figures):
    from xcclab.plot import plot_run
    from xcclab.sweep_runner import load_manifest

    point = next(p for p in load_manifest(sweep)["points"] if p["params"]["protocol"] == "xcp")
    plot_run(sweep / point["run_dir"], out=sweep / "unused")
    title = figures[0]._suptitle.get_text()
    delay = point["params"]["link[1].delay"]
    assert title.startswith("tiny · xcp · queues: xcp")
    assert f"link[1].delay={delay}" in title and f"seed {point['seed']}" in title
    _legends_off_the_data(figures[0])


def test_categorical_x_is_points_with_error_bars(sweep, figures, tmp_path):
    from xcclab.plot_sweep import plot_sweep

    plot_sweep(sweep, "flows.goodput_bps", "protocol", hue="link[1].delay", out=tmp_path)
    (fig,) = figures
    (ax,) = fig.axes
    bars = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert len(bars) == 2  # one per delay
    assert not [c for c in ax.collections if isinstance(c, PolyCollection)], "a band was drawn"
    for c in bars:
        assert c.lines[0].get_linestyle() == "None", "the means are joined by a line"
    xs = sorted(x for c in bars for x in c.lines[0].get_xdata())
    assert len(set(xs)) == 4  # the two delays side by side, not on top of each other
    _legends_off_the_data(fig)


def test_numeric_x_keeps_its_line_and_band(sweep, figures, tmp_path):
    from xcclab.plot_sweep import plot_sweep

    plot_sweep(sweep, "flows.goodput_bps", "link[1].delay", hue="protocol", out=tmp_path)
    (ax,) = figures[0].axes
    assert len([c for c in ax.collections if isinstance(c, PolyCollection)]) == 2
    _legends_off_the_data(figures[0])


def test_queue_panel_at_10ms_samples(tmp_path, figures):
    from xcclab.plot import QUEUE_POINTS, plot_run

    text = TINY.replace('duration = "500ms"', 'duration = "20s"').replace(
        'interval = "50ms"', 'interval = "10ms"'
    )
    run = xcclab.run(text, out=tmp_path / "run")
    plot_run(run, out=tmp_path / "plots")
    ax = figures[0].axes[-1]
    assert "largest of each" in ax.get_title()
    (line,) = [ln for ln in ax.get_lines() if ln.get_label() == "r1->r2"]
    import polars as pl

    q = run.link_series.filter(pl.col("link_id") == run.link("r1->r2")["link_id"])
    assert q.height == 2000
    assert len(line.get_xdata()) <= QUEUE_POINTS
    assert np.max(line.get_ydata()) == pytest.approx(q["queue_bytes"].max() / 1e3)
    assert [c for c in ax.collections if isinstance(c, PolyCollection)], "no range shaded"


def test_plot_sweep_puts_a_per_flow_quantity_on_x(sweep, figures, tmp_path):
    """`--x flows.min_rtt_s`: each flow at its mean RTT over the seeds, its goodput's mean and
    95 % CI on y, one series per protocol; `--x flow`: the flows by name."""
    import polars as pl

    from xcclab.plot_sweep import flow_stats, plot_sweep
    from xcclab.sweep_runner import load_manifest

    paths = plot_sweep(sweep, "flows.goodput_bps", "flows.min_rtt_s", hue="protocol", out=tmp_path)
    assert paths[-1].name == "flows-goodput_bps-vs-flows-min_rtt_s.csv"
    (ax,) = figures[0].axes
    assert ax.get_xlabel() == "min_rtt_s per flow, mean over seeds (ms)"
    bars = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert len(bars) == 2  # xcp, maxnet
    # the x positions are each flow's mean min RTT over the runs of that protocol
    points = [p for p in load_manifest(sweep)["points"] if p["params"]["protocol"] == "xcp"]
    rtts = [
        pl.read_parquet(sweep / p["run_dir"] / "flows.parquet")
        .filter(pl.col("name") == "f1")["min_rtt_s"]
        .item()
        for p in points
    ]
    stats, _ = flow_stats(sweep, "flows.goodput_bps", "flows.min_rtt_s", ["protocol"])
    row = stats.filter((pl.col("flow") == "f1") & (pl.col("protocol") == "xcp")).row(0, named=True)
    assert row["n"] == len(points) == 4
    assert row["x_value"] == pytest.approx(sum(rtts) / len(rtts))
    xs = {round(x, 6) for c in bars for x in c.lines[0].get_xdata()}
    assert round(row["x_value"] * 1e3, 6) in xs
    for c in bars:
        assert c.lines[0].get_linestyle() == "None"
    _legends_off_the_data(figures[0])

    plot_sweep(sweep, "flows.goodput_bps", "flow", out=tmp_path)
    ax = figures[1].axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["f1", "f2"]


def test_a_per_flow_x_needs_a_per_flow_metric(sweep):
    from xcclab.errors import ScenarioError
    from xcclab.plot_sweep import plot_sweep

    with pytest.raises(ScenarioError, match="needs a flows.COLUMN metric"):
        plot_sweep(sweep, "jain", "flows.min_rtt_s")
