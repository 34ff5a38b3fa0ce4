"""Small directories for the `xcc view` tests: a run, a compare, a sweep and an index, all made
with the simulator on short scenarios (the compare's "real" half is a second simulated run with
another seed and loss, so the test needs no root or namespaces), and a headless Chromium."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).parent / "data"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

#: Two XCP flows on a 20 Mbit/s bottleneck, starting 1 s apart (the links' utilisation changes
#: over the run), 4 s at 20 ms samples.
XCP_RUN = (
    (ROOT / "scenarios" / "xcp-dumbbell-2.toml")
    .read_text()
    .replace('duration = "30s"', 'duration = "4s"')
    .replace('interval = "100ms"', 'interval = "20ms"')
    .replace('start = "0s"', 'start = "{i}s"')
)

#: A [sessions] run (seed 004's protocols) with its error metrics sampled: 40 SLBN sessions on
#: a small transit-stub network.
SESSIONS_RUN = """name = "sessions-view"
duration = "0.6s"
seed = 2

[sessions]
protocol = "slbn"
packet_size = "1000B"
sample_interval = "0.1s"
workload = { arrivals = [{ count = 40, from_s = 0.0, to_s = 0.05 }] }

[sessions.topology.transit_stub]
transit_domains = 1
transit_routers_per_domain = 2
stubs_per_transit_router = 1
routers_per_stub = 2
hosts_per_stub_router = 10
transit_capacity_bps = 1e9
transit_stub_capacity_bps = 200e6
stub_capacity_bps = 200e6
host_capacity_bps = 100e6
"""

SWEEP_SPEC = f"""
scenario = "{DATA / "tiny.toml"}"
seeds = [1, 2, 3]
series = false
[grid]
"link[1].delay" = ["1ms", "20ms"]
"link[2].buffer" = ["10pkt", "30pkt"]
"""


def make_run(out: Path, text: str = XCP_RUN, seed: int | None = None) -> Path:
    import xcclab

    xcclab.run(text, seed=seed, out=out)
    return out


def make_compare(out: Path) -> Path:
    """sim/ and emu/ of one scenario, and compare.json, as `xcc compare --out` writes them."""
    from xcclab.compare import differences, render
    from xcclab.results import RunResult

    out.mkdir(parents=True)
    make_run(out / "sim")
    lossy = XCP_RUN.replace(
        'queue = "xcp"\n\n[[link]]\nbetween = ["r2"',
        'queue = "xcp"\nloss = 0.002\n\n[[link]]\nbetween = ["r2"',
        1,
    )
    make_run(out / "emu", lossy, seed=2)
    d = differences(RunResult.load(out / "sim"), RunResult.load(out / "emu"))
    (out / "compare.json").write_text(json.dumps(d), encoding="utf-8")
    (out / "compare.md").write_text(render(d), encoding="utf-8")
    return out


def make_sweep(root: Path) -> Path:
    import xcclab

    root.mkdir(parents=True, exist_ok=True)
    (root / "spec.toml").write_text(SWEEP_SPEC)
    assert not xcclab.sweep(root / "spec.toml", root / "sweep", jobs=1, progress=False).failed
    return root / "sweep"


def make_index(root: Path) -> Path:
    """Two reports as `xcc reproduce --all` lays them out: metrics.json with judged claims
    (the real scorer) and a run under runs/ for one of them."""
    from xcclab.claims import Bound, Point, Quote, score

    out = root / "index"
    for exp, with_run in (("xcp-demo", True), ("other-demo", False)):
        d = out / exp
        d.mkdir(parents=True)
        claims = [
            Point(
                id="utilisation",
                quote=Quote("the link is fully used", "Sec. 4"),
                measure="bottleneck utilisation",
                ours=0.97,
                value=1.0,
                precision="about",
            ),
            Bound(
                id="queue",
                quote=Quote("queues stay small", "Fig. 5"),
                measure="mean queue (packets)",
                ours=3.0,
                op="<",
                limit=1.0,
            ),
        ]
        metrics = {
            "experiment": exp,
            "claims": [score(c).to_json() for c in claims],
            "verdict": {"verdict": "partly", "counted": 2, "holding": 1},
        }
        (d / "metrics.json").write_text(json.dumps(metrics), encoding="utf-8")
        (d / "report.md").write_text(f"# {exp}\n", encoding="utf-8")
        if with_run:
            make_run(d / "runs" / "xcp")
    return out


# -- the browser --------------------------------------------------------------------------------
def browser_or_skip():
    """A Playwright Chromium on the system's browser, or a skip saying what is missing."""
    if CHROMIUM is None:
        pytest.skip("no chromium on PATH (Debian: apt-get install chromium); .ci/run installs it")
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
    pw = sync_api.sync_playwright().start()
    browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
    return pw, browser


class Opened:
    """A page loaded from a file, with what it logged and requested."""

    def __init__(self, browser, path: Path, width: int = 1400, height: int = 1000):
        self.page = browser.new_page(viewport={"width": width, "height": height})
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.page.on(
            "console",
            lambda m: self.errors.append(f"{m.type}: {m.text}") if m.type == "error" else None,
        )
        self.page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))
        self.page.on("requestfailed", lambda r: self.errors.append(f"request failed: {r.url}"))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.url = path.resolve().as_uri()
        self.page.goto(self.url)
        self.page.wait_for_function("window.xccReady === true", timeout=60_000)

    def others(self) -> list[str]:
        """Requests other than the page itself."""
        return [u for u in self.requests if u != self.url]

    def close(self) -> None:
        self.page.close()


def png_pixels(png: bytes) -> np.ndarray:
    import matplotlib.image as mpimg

    return mpimg.imread(io.BytesIO(png), format="png")


def assert_not_blank(png: bytes, min_colours: int = 50) -> None:
    """The screenshot has content: many distinct colours and real contrast."""
    px = png_pixels(png)[..., :3]
    colours = np.unique((px * 255).astype(np.uint8).reshape(-1, 3), axis=0)
    assert len(colours) >= min_colours, f"screenshot looks blank: {len(colours)} colours"
    assert px.std() > 0.05, "screenshot has almost no contrast"


def saturated_fraction(png: bytes) -> float:
    """Share of strongly coloured pixels (link colours, plot lines), not greys."""
    px = png_pixels(png)[..., :3]
    return float(((px.max(axis=2) - px.min(axis=2)) > 0.3).mean())


def page_data(html_file: Path) -> dict:
    """The JSON a page carries."""
    text = html_file.read_text(encoding="utf-8")
    start = text.index('<script type="application/json" id="xcc-data">') + len(
        '<script type="application/json" id="xcc-data">'
    )
    end = text.index("</script>", start)
    return json.loads(text[start:end].replace("<\\/", "</"))
