"""`xcc view` without a browser: downsampling, the drawing's summaries, which directory is
which, errors, determinism and self-containment of the written page."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from view_support import make_run, page_data
from xcclab.cli import main
from xcclab.errors import ScenarioError
from xcclab.view import downsample, topology, write_view
from xcclab.view.browser import can_open
from xcclab.view.kinds import kind_of


def test_buckets_keep_what_the_eye_looks_for():
    v = np.array([1.0, 3.0, 0.0, 8.0, 2.0])
    assert downsample.bucket_size(5, 2) == 3
    assert downsample.reduce(v, 2, "mean").tolist() == [2.0, 4.0, 2.0]
    assert downsample.reduce(v, 2, "max").tolist() == [3.0, 8.0, 2.0]  # the spike survives
    assert downsample.reduce(v, 2, "sum").tolist() == [4.0, 8.0, 2.0]  # no drop is lost
    assert downsample.reduce(v, 2, "last").tolist() == [3.0, 8.0, 2.0]
    assert downsample.times(np.array([0.1, 0.2, 0.3]), 2).tolist() == [0.2, 0.3]
    both = downsample.reduce(np.array([[1.0, 10.0], [3.0, np.nan]]), 2, "mean")
    assert both.tolist() == [[2.0, 10.0]]  # a missing sample is skipped, not zero
    assert np.isnan(downsample.reduce(np.array([np.nan, np.nan]), 2, "sum")[0])
    assert downsample.reduce(v, 1, "max") is not None and len(downsample.reduce(v, 1, "max")) == 5


def _links(pairs):
    rows = []
    for a, b in pairs:
        rows += [(a, b), (b, a)]
    return pl.DataFrame(
        {
            "link_id": list(range(len(rows))),
            "name": [f"{a}->{b}" for a, b in rows],
            "src": [a for a, _ in rows],
            "dst": [b for _, b in rows],
        }
    )


def test_dumbbell_hosts_are_grouped_per_router():
    n = 100
    pairs = [(f"s{i}", "r1") for i in range(n)] + [("r1", "r2")]
    pairs += [("r2", f"d{i}") for i in range(n)]
    hosts = {f"s{i}" for i in range(n)} | {f"d{i}" for i in range(n)}
    topo = topology.build(_links(pairs), hosts, {})
    kinds = sorted(v["kind"] for v in topo.nodes.values())
    assert kinds == ["group", "group", "router", "router"]
    assert len(topo.links) == 6  # r1->r2, r2->r1 and one group link per direction per side
    group = next(dl for dl in topo.links if dl.src == "hosts:r1")
    assert len(group.members) == n
    assert topo.notes and "200 hosts drawn as 2 group" in topo.notes[0]
    assert all(0 <= v["x"] <= 1 and 0 <= v["y"] <= 1 for v in topo.nodes.values())


def test_a_network_beyond_the_limit_draws_its_busiest_links():
    routers = [f"r{i}" for i in range(400)]
    pairs = [(routers[i], routers[i + 1]) for i in range(399)]
    links = _links(pairs)
    busy = {7: (0.9, 0)}  # the direction r3->r4 ... whichever link_id 7 is
    topo = topology.build(links, set(), {lid: busy.get(lid, (0.1, 0)) for lid in range(798)})
    assert len(topo.nodes) <= topology.MAX_DRAWN_NODES
    assert any(7 in dl.members for dl in topo.links)
    assert "of 400 nodes drawn" in topo.notes[-1]


def test_kinds_and_errors(tmp_path, capsys):
    with pytest.raises(ScenarioError, match="no such file"):
        kind_of(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ScenarioError, match="not a run directory .* a sweep"):
        kind_of(tmp_path / "empty")
    assert main(["view", str(tmp_path / "empty"), "--no-open"]) == 2
    assert "xcc: error:" in capsys.readouterr().err
    assert not (tmp_path / "empty" / "view.html").exists()


def test_no_browser_without_a_display(monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setattr("sys.platform", "linux")
    assert can_open() is False


@pytest.mark.native
def test_page_is_self_contained_and_deterministic(tmp_path):
    run = make_run(tmp_path / "run")
    kind, page = write_view(run)
    assert kind == "run" and page == run / "view.html"
    _, again = write_view(run, tmp_path / "again.html")
    assert page.read_bytes() == again.read_bytes()
    html = page.read_text(encoding="utf-8")
    assert "default-src 'none'" in html  # the browser refuses any load from elsewhere
    assert 'src="http' not in html and "<link " not in html
    assert "plotly.js v" in html and "MIT" in html
    data = page_data(page)
    run_data = data["runs"][0]
    assert {n["kind"] for n in run_data["nodes"]} == {"host", "router"}
    bottleneck = next(x for x in run_data["links"] if x["name"] == "r1->r2")
    assert bottleneck["rate_bps"] == 20e6 and bottleneck["explicit"] is True
    assert run_data["frames"] and len(run_data["frames"]["t"]) == 200


@pytest.mark.native
def test_series_beyond_the_budget_keep_the_busiest_links(tmp_path):
    """A run with more links and flows than the budget's numbers allow at MIN_POINTS each keeps
    the series of its busiest links (the bottleneck among them) and says so, instead of
    shipping every link at the floor (slbn-2a's 720,000 links made a 150 MB page)."""
    from xcclab.results import RunResult
    from xcclab.view.run_data import MIN_POINTS, Budget, run_data

    run = RunResult.load(make_run(tmp_path / "run"))
    tight = Budget(values=2 * 5 * MIN_POINTS * 2)  # two links' series
    data = run_data(run, tight)
    kept = data["link_series"]["names"]
    assert len(kept) == 2 < run.links.height
    assert "r1->r2" in kept.values()
    assert any("the 2 busiest of" in n for n in data["notes"])
