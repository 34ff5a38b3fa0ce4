"""`xcc view` pages in a real headless Chromium (Debian's package, driven by Playwright over the
DevTools protocol): each of a run, a compare, a sweep and the index loads with no console error
and no request beyond the page's own file; moving the slider changes a link's colour to the
one its utilisation gives; clicking a link plots its queue; each screenshot has content.

Skipped, with the reason, only when chromium or playwright is missing (.ci/run installs both).
"""

from __future__ import annotations

import math

import pytest

from view_support import (
    SESSIONS_RUN,
    Opened,
    assert_not_blank,
    browser_or_skip,
    make_compare,
    make_index,
    make_run,
    make_sweep,
    page_data,
    saturated_fraction,
)
from xcclab.cli import main

pytestmark = pytest.mark.native


@pytest.fixture(scope="module")
def browser():
    pw, b = browser_or_skip()
    yield b
    b.close()
    pw.stop()


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """kind -> the written page, each made by `xcc view DIR --out FILE --no-open`."""
    root = tmp_path_factory.mktemp("view")
    dirs = {
        "run": make_run(root / "run"),
        "compare": make_compare(root / "compare"),
        "sweep": make_sweep(root / "sweepdir"),
        "index": make_index(root),
    }
    out = {}
    for kind, d in dirs.items():
        page = root / f"{kind}.html"
        assert main(["view", str(d), "--out", str(page), "--no-open"]) == 0
        out[kind] = page
    return out


def expected_colour(util: float) -> str:
    """The page's colour for a utilisation (view.js: hue 210 at 0 to 0 at 1)."""
    x = max(0.0, min(1.0, util))
    return f"hsl({round(210 * (1 - x))},75%,45%)"


def y_titles(page, selector: str) -> list[str]:
    """The y-axis titles drawn in the plot at ``selector``, top to bottom."""
    return page.evaluate(
        """(s) => Array.from(document.querySelector(s).querySelectorAll('text'))
            .filter(t => /^y[0-9]*title$/.test(t.getAttribute('class') || ''))
            .map(t => t.textContent)""",
        selector,
    )


def _check_slider_and_click(opened: Opened, data: dict, scope: str = "") -> None:
    """Slider: every frame gives the bottleneck the colour of its utilisation in the page's
    data, and two frames differ. Click: the link's queue plot appears."""
    page = opened.page
    run = data["runs"][0] if "runs" in data else data
    j = next(i for i, x in enumerate(run["links"]) if x["name"] == "r1->r2")
    n = len(run["links"])
    import base64

    util = base64.b64decode(run["frames"]["util"])
    scale = run["frames"]["util_scale"]
    line = page.locator(f'{scope} .runview .link[data-link="r1->r2"]').first
    slider = page.locator(f"{scope} .runview .slider").first
    seen = set()
    frames = len(run["frames"]["t"])
    for f in (0, frames // 4, frames // 2, frames - 1):
        slider.fill(str(f))
        colour = line.get_attribute("stroke")
        assert colour == expected_colour(util[f * n + j] / scale), f"frame {f}"
        seen.add(colour)
    assert len(seen) > 1, "moving the slider did not change the link's colour"

    line.click()
    page.locator(f'{scope} .runview .link-plot[data-drawn="r1->r2"]'.strip()).wait_for()
    titles = y_titles(page, f"{scope} .runview .link-plot".strip())
    assert titles[:3] == ["queue (kB)", "utilisation (%)", "drops, marks (dotted)"], titles
    assert any("feedback" in t for t in titles), titles  # XCP's gauge: what the link feeds back
    n_traces = page.evaluate(
        "(s) => document.querySelector(s).data.length", f"{scope} .runview .link-plot".strip()
    )
    assert n_traces >= 4


def _loaded_cleanly(opened: Opened) -> None:
    assert opened.errors == [], opened.errors
    assert opened.others() == [], f"the page made requests: {opened.others()}"


def test_run_page(browser, pages, tmp_path):
    opened = Opened(browser, pages["run"])
    try:
        _loaded_cleanly(opened)
        data = page_data(pages["run"])
        page = opened.page
        run = data["runs"][0]
        assert page.locator(".runview .link").count() == len(run["links"]) == 10
        assert page.locator(".runview .node").count() == len(run["nodes"]) == 6
        assert page.locator(".linklabel").first.text_content() != ""
        assert "20 Mbit/s, 18 ms" in page.locator(".topology").text_content()
        _check_slider_and_click(opened, data)
        # a flow: rate with its max-min reference, cwnd, RTT
        page.locator('table[data-table="flows"] tr.clickable').first.click()
        page.locator(".flow-plot[data-drawn]").wait_for()
        titles = y_titles(page, ".flow-plot")
        assert titles == ["rate (Mbit/s)", "cwnd (kB)", "RTT (ms)"], titles
        names = page.evaluate("document.querySelector('.flow-plot').data.map(t => t.name)")
        assert "max-min" in names
        shot = page.screenshot(full_page=True)
        assert_not_blank(shot)
        topo = page.locator(".topology").screenshot()
        assert saturated_fraction(topo) > 0.002, "no coloured link in the topology"
        (tmp_path / "run.png").write_bytes(shot)
        _loaded_cleanly(opened)
    finally:
        opened.close()


def test_compare_page(browser, pages):
    opened = Opened(browser, pages["compare"])
    try:
        _loaded_cleanly(opened)
        data = page_data(pages["compare"])
        page = opened.page
        assert [r["label"] for r in data["runs"]] == ["simulated", "real packets"]
        _check_slider_and_click(opened, {"runs": data["runs"]})
        # both halves overlaid on the same axes: one queue trace per half
        names = page.evaluate(
            "document.querySelector('.link-plot').data.filter(t => t.yaxis === 'y')"
            ".map(t => t.name)"
        )
        assert names == ["simulated", "real packets"]
        # colouring by the other half uses its own frames
        page.locator(".colour-by").select_option("1")
        assert "real packets" in page.locator(".clock").text_content()
        assert page.locator('table[data-table^="links: simulated"]').count() == 1
        shot = page.screenshot(full_page=True)
        assert_not_blank(shot)
        _loaded_cleanly(opened)
    finally:
        opened.close()


def test_sweep_page_matches_plot_sweep(browser, pages):
    from xcclab.plot_sweep import sweep_stats

    opened = Opened(browser, pages["sweep"])
    try:
        _loaded_cleanly(opened)
        page = opened.page
        metric_keys = [o for o in page.locator(".sweep-metric option").all_text_contents()]
        page.locator(".sweep-metric").select_option(
            str(metric_keys.index("sum(flows.goodput_bps)"))
        )
        page.locator(".sweep-x").select_option("link_1_delay")
        page.locator(".sweep-hue").select_option("")
        rows = page.evaluate(
            "Array.from(document.querySelectorAll('.sweep-table tr')).slice(1)"
            ".map(tr => Array.from(tr.children).map(td => td.textContent))"
        )
        sweep_dir = pages["sweep"].parent / "sweepdir" / "sweep"
        stats, _, _ = sweep_stats(sweep_dir, "flows.goodput_bps", ["link[1].delay"], agg="sum")
        want = {r["link_1_delay"]: r for r in stats.iter_rows(named=True)}
        assert len(rows) == len(want) == 2
        for _facet, _hue, x, n, mean, _sd, ci in rows:
            assert int(n) == want[x]["n"] == 6
            assert float(mean) == pytest.approx(want[x]["mean"], rel=1e-3)
            assert float(ci) == pytest.approx(want[x]["ci95"], rel=1e-3)
        # numeric x: a line through the means with error bars
        mode = page.evaluate("document.querySelector('.sweep-plot').data[0].mode")
        assert mode == "lines+markers"
        errs = page.evaluate("document.querySelector('.sweep-plot').data[0].error_y.array")
        assert all(e > 0 and math.isfinite(e) for e in errs)
        # a facet per buffer: two x axes
        page.locator(".sweep-facet").select_option("link_2_buffer")
        assert page.locator(".sweep-plot .xtick").count() > 0
        assert page.evaluate("document.querySelector('.sweep-plot').data.length") == 2
        shot = page.screenshot(full_page=True)
        assert_not_blank(shot)
        assert saturated_fraction(page.locator(".sweep-plot").screenshot()) > 0.001
        _loaded_cleanly(opened)
    finally:
        opened.close()


def test_index_page(browser, pages):
    opened = Opened(browser, pages["index"])
    try:
        _loaded_cleanly(opened)
        page = opened.page
        assert page.locator("section.report").count() == 2
        claims = page.locator('section[data-report="xcp-demo"] table[data-table="claims"]')
        text = claims.text_content()
        assert "utilisation" in text and "queue" in text and "holds" in text
        data = page_data(pages["index"])
        report = next(r for r in data["reports"] if r["id"] == "xcp-demo")
        _check_slider_and_click(opened, report["runs"][0], scope='section[data-report="xcp-demo"]')
        assert (
            "no run with time series"
            in page.locator('section[data-report="other-demo"]').text_content()
        )
        shot = page.screenshot(full_page=True)
        assert_not_blank(shot)
        _loaded_cleanly(opened)
    finally:
        opened.close()


def test_sessions_run_page(browser, tmp_path):
    """A [sessions] run: its error metrics over time and the per-session errors summarised as
    quantiles, with the flows table cut to its limit and saying so."""
    from xcclab.view import write_view

    _, page_file = write_view(make_run(tmp_path / "sessions", SESSIONS_RUN), tmp_path / "s.html")
    opened = Opened(browser, page_file)
    try:
        _loaded_cleanly(opened)
        page = opened.page
        plot = page.locator(".sessions-plot")
        plot.locator(".main-svg").first.wait_for()
        names = page.evaluate("document.querySelector('.sessions-plot').data.map(t => t.name)")
        assert "E_s mean (%)" in names and "sessions present" in names
        quantiles = page.locator('table[data-table="session errors"] tr')
        assert quantiles.count() == 6  # header and 1, 10, 50, 90, 99 %
        assert "E_s of the 40 sessions rated" in page.locator(".runview").text_content()
        assert_not_blank(page.screenshot(full_page=True))
    finally:
        opened.close()
