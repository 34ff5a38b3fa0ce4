"""compare.md (issue 33, item 6): a verdict against stated bounds, the router's health, the
simulated and real series overlaid on the same axes, and no empty section; on constructed
runs (the "real" half is a simulated run with the emulator's health figures attached)."""

from __future__ import annotations

import pytest

import xcclab
from view_support import XCP_RUN
from xcclab.compare import BOUNDS, differences, overlay_figure, render

pytestmark = pytest.mark.native

HEALTH = {
    "lateness_p50_us": 11,
    "lateness_p99_us": 1800,
    "lateness_max_us": 23000,
    "host_wake_late_max_us": 400,
    "kernel_tun_tx_dropped": 0,
    "kernel_tun_rx_dropped": 0,
    "kernel_udp_rcvbuf_errors": 0,
    "kernel_udp_sndbuf_errors": 0,
    "router_realtime": True,
    "hosts_realtime": True,
    "rt_throttling_lifted": True,
}


@pytest.fixture(scope="module")
def runs():
    sim = xcclab.run(XCP_RUN)
    emu = xcclab.run(XCP_RUN.replace('delay = "18ms"', 'delay = "18ms"\nloss = 0.002', 1), seed=2)
    emu.run_info["emu"] = dict(HEALTH)
    return sim, emu


def test_identical_runs_agree(runs):
    sim, _ = runs
    d = differences(sim, sim)
    assert d["verdict"]["agrees"] is True
    text = render(d)
    assert "**agrees with the simulator within the stated bounds**" in text
    assert "| utilisation: real / simulated - 1 | ±2% | 10 of 10 |" in text


def test_a_lossy_real_run_differs_and_says_where(runs):
    sim, emu = runs
    d = differences(sim, emu)
    v = d["verdict"]
    assert v["agrees"] is False
    goodput = next(c for c in v["checks"] if c["what"] == "goodput")
    assert goodput["within"] < goodput["judged"] == 2
    assert abs(goodput["worst"][1]) > BOUNDS["goodput"]
    text = render(d)
    assert "**differs from the simulator beyond the stated bounds**" in text
    assert "## Router health (real run)" in text
    assert "| router lateness, 99th percentile (µs) | 1800 |" in text
    assert "| kernel drops at the TUN devices, TX | 0 |" in text
    # the fidelity warnings for a 1.8 ms p99 and a 23 ms stall
    assert text.count("- warning: ") == 2 and "23.0 ms late" in text


def test_no_empty_section(runs):
    sim, emu = runs
    text = render(differences(sim, emu))
    # bulk flows that never complete and no transactions: no quantile tables of dashes
    assert "## Flow completion times" not in text and "## Response times" not in text
    sections = text.split("\n## ")[1:]
    for section in sections:
        body = [ln for ln in section.splitlines()[1:] if ln.strip()]
        assert body, f"empty section {section.splitlines()[0]!r}"


def test_series_overlaid_on_the_same_axes(runs, tmp_path, monkeypatch):
    sim, emu = runs
    kept = []
    import xcclab.figures

    real_save = xcclab.figures.save_figure

    def keep(fig, out, stem, formats):
        kept.append(fig)
        return real_save(fig, out, stem, formats)

    monkeypatch.setattr(xcclab.figures, "save_figure", keep)
    path = overlay_figure(sim, emu, tmp_path)
    assert path == tmp_path / "series.png" and path.stat().st_size > 10_000
    rates, queue, util = kept[0].axes
    for ax in (queue, util):
        styles = sorted(ln.get_linestyle() for ln in ax.get_lines())
        assert styles == ["-", "--"], styles  # both runs on one axis
    assert "r1->r2" in queue.get_ylabel()
    assert len(rates.get_lines()) == 4  # two flows, each simulated and real
    text = render(differences(sim, emu), path.name)
    assert "![simulated (solid) and real packets (dashed), same axes](series.png)" in text
