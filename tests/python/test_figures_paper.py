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
    from xcclab.results import RunResult
    from xcclab.sweep_runner import load_manifest

    point = next(p for p in load_manifest(sweep)["points"] if p["params"]["protocol"] == "xcp")
    plot_run(RunResult.load(sweep / point["run_dir"]), out=sweep / "unused")
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


def _bursty_run(rtt_s: float = 0.03, interval_s: float = 0.01, seconds: float = 3.0):
    """A constructed run: a window-based flow delivering one 15 kB burst per RTT (a constant
    4 Mbit/s, in bursts) and a rate-based flow delivering evenly."""
    import polars as pl

    from xcclab.results import RunResult

    n = round(seconds / interval_s)
    per = round(rtt_s / interval_s)
    t = [(i + 1) * interval_s for i in range(n)]
    burst = [15_000 * ((i + 1) // per) for i in range(n)]
    even = [5_000 * (i + 1) for i in range(n)]
    fs = pl.DataFrame(
        {
            "time_s": t + t,
            "flow_id": [0] * n + [1] * n,
            "rate_bps": [0.0] * (2 * n),
            "cwnd_bytes": [15_000] * n + [None] * n,
            "delivered_bytes": burst + even,
        }
    )
    ls = pl.DataFrame({"time_s": t, "link_id": [0] * n, "queue_bytes": [0] * n})
    flows = pl.DataFrame(
        {
            "flow_id": [0, 1],
            "name": ["window", "paced"],
            "cc": ["newreno", "rcp"],
            "srtt_s": [rtt_s, rtt_s],
            "maxmin_bps": [None, None],
        }
    )
    links = pl.DataFrame({"link_id": [0], "name": ["a->b"], "algorithm": ["droptail"]})
    info = {"scenario": {"name": "bursty", "metrics": {"interval_ns": round(interval_s * 1e9)}}}
    tables = {"flows": flows, "links": links, "flow_series": fs, "link_series": ls}
    return RunResult(run_info={**info, "seed": 1}, timing={}, tables=tables)


def test_smoothing_does_not_invent_structure_in_a_window_flow(tmp_path, figures):
    """--smooth 20ms over a flow that delivers once per 30 ms RTT: a 20 ms window holds one
    burst or none, and the naive smoothed rate swings between 0 and 1.5 times the real rate; the
    window is widened to 4 RTTs for window-based flows, and the rate is the flat 4 Mbit/s."""
    from xcclab.plot import plot_run
    from xcclab.references import window_rates

    run = _bursty_run()
    fs = run.flow_series.filter(run.flow_series["flow_id"] == 0)
    naive = window_rates(fs["time_s"].to_numpy(), fs["delivered_bytes"].to_numpy(), 2)[10:]
    assert np.nanmin(naive) == 0 and np.nanmax(naive) > 1.4 * 4e6  # the invented oscillation

    plot_run(run, out=tmp_path, smooth=0.02)
    ax = figures[0].axes[0]
    lines = {ln.get_label(): ln for ln in ax.get_lines()}
    window = np.asarray(lines["window"].get_ydata(), dtype=float)
    steady = window[~np.isnan(window)][5:]
    assert np.allclose(steady, 4.0, rtol=1e-9), steady[:12]  # 15 kB per 30 ms = 4 Mbit/s
    paced = np.asarray(lines["paced"].get_ydata(), dtype=float)
    assert np.isnan(paced[:2]).all() and not np.isnan(paced[2:]).any()  # 2 samples: not widened
    assert "20-120 ms windows (window-based flows: at least 4 RTTs)" in ax.get_title()
