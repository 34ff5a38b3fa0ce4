"""Measure `xcc view` pages in headless Chromium: size, time to open, time per slider step,
time from a click on a link (or a flow row) to its drawn plots. The numbers in docs/view.md
come from here (a benchmark, not a test: timings depend on the machine).

    python tools/view_measure.py RUN_DIR [RUN_DIR ...]
    python tools/view_measure.py --scale OUT_DIR    build the 1,000-link, 1,000-flow run first

Prints one JSON object per page.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import time
from pathlib import Path

#: The scale run: 100 routers on a ring with 400 random chords (500 router links), 5 hosts per
#: router (500 host links): 1,000 links, 2,000 directions; 1,000 NewReno flows between random
#: hosts, 2 s at 10 ms samples.
ROUTERS, HOSTS_PER_ROUTER, CHORDS, FLOWS = 100, 5, 400, 1000
#: Page opens per measurement (the median is reported; the machine is shared).
OPENS = 5


def scale_scenario() -> str:
    rng = random.Random(1)
    lines = ['name = "view-scale"', 'duration = "2s"', "seed = 1", ""]
    for r in range(ROUTERS):
        lines += ["[[router]]", f'name = "r{r}"', ""]
    hosts = [f"h{r}_{k}" for r in range(ROUTERS) for k in range(HOSTS_PER_ROUTER)]
    for h in hosts:
        lines += ["[[host]]", f'name = "{h}"', ""]
    pairs = {(r, (r + 1) % ROUTERS) for r in range(ROUTERS)}
    while len(pairs) < ROUTERS + CHORDS:
        a, b = rng.sample(range(ROUTERS), 2)
        if (a, b) not in pairs and (b, a) not in pairs:
            pairs.add((a, b))
    for a, b in sorted(pairs):
        lines += ["[[link]]", f'between = ["r{a}", "r{b}"]', 'rate = "100Mbps"']
        lines += ['delay = "2ms"', 'buffer = "100pkt"', ""]
    for h in hosts:
        r = h[1:].split("_")[0]
        lines += ["[[link]]", f'between = ["{h}", "r{r}"]', 'rate = "10Mbps"']
        lines += ['delay = "1ms"', 'buffer = "100pkt"', ""]
    for i in range(FLOWS):
        src, dst = rng.sample(hosts, 2)
        lines += ["[[flow]]", f'name = "f{i}"', f'src = "{src}"', f'dst = "{dst}"']
        lines += [f'start = "{rng.uniform(0, 0.5):.3f}s"', ""]
    lines += ["[metrics]", 'interval = "10ms"', ""]
    return "\n".join(lines)


def measure(page_file: Path, browser) -> dict:
    url = page_file.resolve().as_uri()
    opens = []
    for _ in range(OPENS):
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        errors = []
        page.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
        t0 = time.perf_counter()
        page.goto(url)
        page.wait_for_function("window.xccReady === true", timeout=300_000)
        opens.append(time.perf_counter() - t0)
        if len(opens) < OPENS:
            page.close()
    out = {
        "page": str(page_file),
        "bytes": page_file.stat().st_size,
        "open_s_median": round(statistics.median(opens), 3),
        "open_s": [round(x, 3) for x in opens],
        "errors": errors,
        "load_average_1min": round(os.getloadavg()[0], 2),
    }
    links = page.locator(".runview .link")
    out["drawn_links"] = links.count()
    out["drawn_nodes"] = page.locator(".runview .node").count()
    steps = int(page.locator(".runview .slider").first.get_attribute("max") or 0)
    if steps:
        # In the page, so the driver's round trips are not counted: the slider's handler alone,
        # and the handler plus the next rendered frame (style, layout, paint of every link).
        out["slider_handler_ms"], out["slider_step_ms"] = page.evaluate(
            """async (steps) => {
                const s = document.querySelector('.runview .slider');
                const set = (f) => { s.value = f; s.dispatchEvent(new Event('input')); };
                let t0 = performance.now();
                for (let f = 0; f <= steps; f++) set(f);
                const handler = (performance.now() - t0) / (steps + 1);
                const k = Math.min(40, steps);
                t0 = performance.now();
                for (let i = 0; i < k; i++) {
                    set(Math.floor(i * steps / k));
                    await new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)));
                }
                return [+handler.toFixed(2), +((performance.now() - t0) / k).toFixed(1)];
            }""",
            steps,
        )
        out["frames"] = steps + 1
    clicks = []
    for j in range(min(5, links.count())):
        t0 = time.perf_counter()
        links.nth(j).dispatch_event("click")
        name = links.nth(j).get_attribute("data-link")
        page.locator(f'.runview .link-plot[data-drawn="{name}"]').wait_for(timeout=60_000)
        clicks.append(time.perf_counter() - t0)
    if clicks:
        out["link_click_ms_median"] = round(statistics.median(clicks) * 1e3, 1)
    rows = page.locator('table[data-table="flows"] tr.clickable')
    if rows.count():
        t0 = time.perf_counter()
        rows.first.click()
        page.locator(".runview .flow-plot[data-drawn]").wait_for(timeout=60_000)
        out["flow_click_ms"] = round((time.perf_counter() - t0) * 1e3, 1)
    page.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dirs", nargs="*", type=Path)
    ap.add_argument("--scale", type=Path, metavar="OUT_DIR", help="build the scale run here")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    import xcclab
    from xcclab.view import write_view

    dirs = list(args.dirs)
    if args.scale:
        t0 = time.perf_counter()
        xcclab.run(scale_scenario(), out=args.scale)
        print(f"scale run: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        dirs.append(args.scale)
    chromium = shutil.which("chromium")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        for d in dirs:
            t0 = time.perf_counter()
            _, page = write_view(d)
            written = time.perf_counter() - t0
            result = measure(page, browser)
            result["write_s"] = round(written, 2)
            print(json.dumps(result))
        browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
