"""Shared machinery of the explicit-protocol comparisons (seed 002 and RCP's unstable network).

Every experiment runs the same scenario once per entry of :data:`PROTOCOLS` and reports the
protocols side by side, so adding a protocol to every report is one entry in that list (its
router kind and its source kind). The utilisation it aims at and the shim bytes it adds to a
data packet are the registry's: read from the native module (the queue's resolved target
parameter, the cc's default shim), never restated here.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from ...scenario import Scenario, already_open
from .report import save_figure
from .templates import report as report_skeleton


@cache
def transport_defaults() -> tuple[int, int]:
    """The transport's default MSS and header bytes besides the shim, as the scenario parser
    resolves a flow that names neither (the build layer holds the defaults)."""
    from ...results import validate

    sc = Scenario("transport-defaults", duration="1s", seed=1)
    sc.add_host("a").add_router("r").add_host("b")
    sc.add_link("a", "r", rate="1Gbps", delay="1ms", buffer="100pkt")
    sc.add_link("r", "b", rate="1Gbps", delay="1ms", buffer="100pkt")
    sc.add_flow("f", "a", "b")
    transport = validate(sc)["flows"][0]["kind"]["transport"]
    return transport["mss_bytes"], transport["header_bytes"]


#: The transport's defaults (1460 B of payload, 40 B of headers), read from the scenario parser.
MSS, HEADERS = transport_defaults()
#: Real packets (``docs/emu.md``): 1500-byte datagrams carrying 28 B of IP/UDP and a 32 B
#: segment header besides the protocol's shim.
WIRE_PACKET_BYTES = 1500
WIRE_HEADERS = 60


@dataclass(frozen=True)
class Protocol:
    """One explicit protocol as the experiments run it."""

    name: str  # run directory and metrics key
    label: str  # in tables and figures
    queue: Any  # router: the scenario's `queue`
    cc: Any  # source: the scenario's `cc`
    mss: int = MSS  # payload bytes of a full data packet
    headers: int = HEADERS  # header bytes besides the shim (the scenario's transport.header)

    @property
    def target(self) -> float:
        """The utilisation the router aims at (max-min rates are scaled by it): the parameter
        the queue's registry entry names (MaxNet's ``mu``, RCP's ``gamma``), as the scenario
        resolves it (given here or the algorithm's default); 1 for a queue with none."""
        return _target(json.dumps(self.queue, sort_keys=True))

    @property
    def shim_bytes(self) -> int:
        """The congestion header's bytes on a data packet (2 shim bytes and the body), from the
        cc registry (the algorithm's header with its default parameters)."""
        from ...references import shim_bytes

        kind = self.cc["kind"] if isinstance(self.cc, dict) else self.cc
        return shim_bytes()[kind]

    @property
    def data_wire_bytes(self) -> int:
        return self.mss + self.headers + self.shim_bytes

    @property
    def payload_share(self) -> float:
        """Payload rate / wire rate of full data packets (flows report payload rates)."""
        return self.mss / self.data_wire_bytes

    def on_wire(
        self, packet_bytes: int = WIRE_PACKET_BYTES, headers: int = WIRE_HEADERS
    ) -> Protocol:
        """The same protocol with ``packet_bytes`` data packets of ``headers`` header bytes
        besides the shim: on real packets, 1500-byte packets of 28 B IP/UDP and a 32 B segment
        (``docs/emu.md``), so the MSS is what is left after the shim."""
        return replace(self, mss=packet_bytes - headers - self.shim_bytes, headers=headers)

    @property
    def transport(self) -> dict[str, Any]:
        """The flows' ``transport`` table: connections already open (seed 002's ns-2 agents),
        the MSS and headers when they are not the defaults (1460 B, 40 B)."""
        if (self.mss, self.headers) == (MSS, HEADERS):
            return already_open()
        return already_open({"mss": f"{self.mss}B", "header": f"{self.headers}B"})


@cache
def _target(queue_json: str) -> float:
    """The target utilisation of the queue ``queue_json`` (a scenario's ``queue``, as JSON):
    the scenario parser resolves it with its defaults on a one-link network, and the registry
    names the parameter that holds the target."""
    from ...references import target_utilisation
    from ...results import validate

    sc = Scenario("target", duration="1s", seed=1)
    sc.add_host("a").add_router("r").add_host("b")
    sc.add_link("a", "r", rate="1Gbps", delay="1ms", buffer="100pkt")
    sc.add_link("r", "b", rate="1Gbps", delay="1ms", buffer="100pkt", queue=json.loads(queue_json))
    sc.add_flow("f", "a", "b")
    link = next(x for x in validate(sc)["links"] if x["name"] == "r->b")
    return target_utilisation(link["queue"])


PROTOCOLS: tuple[Protocol, ...] = (
    Protocol("xcp", "XCP", "xcp", "xcp"),
    Protocol("rcp", "RCP", {"kind": "rcp", "preset": "stanford"}, "rcp"),
    Protocol("maxnet", "MaxNet", {"kind": "maxnet", "mu": 0.95}, "maxnet"),
    # Reconstructed laws (docs/algorithms/piqi-rcp.md, jetmax.md), their default targets.
    Protocol("piqi-rcp", "PIQI-RCP", "piqi-rcp", "piqi-rcp"),
    Protocol("jetmax", "JetMax", "jetmax", "jetmax"),
)


#: PIQI-RCP with the alternative law protocols.md 4.1 recalls, R (1 + kappa (gamma C - y) / C):
#: a sensitivity of the reconstruction (docs/algorithms/piqi-rcp.md).
PIQI_MULTIPLICATIVE = Protocol(
    "piqi-rcp-multiplicative",
    "PIQI-RCP, multiplicative law",
    {"kind": "piqi-rcp", "law": "multiplicative"},
    "piqi-rcp",
)


def by_name(name: str) -> Protocol:
    return next(p for p in PROTOCOLS if p.name == name)


def run_all(
    build: Callable[[Protocol], Scenario],
    tmp: Path,
    log: Callable[[str], None],
    progress: Any,
    protocols: Sequence[Protocol] = PROTOCOLS,
    tag: str = "",
) -> dict[str, Any]:
    """Runs ``build(p)`` for every protocol, saving each run under ``tmp/runs/<tag><name>``."""
    import xcclab

    out = {}
    for p in protocols:
        log(f"  {p.label} {tag}".rstrip())
        res = xcclab.run(build(p), progress=progress)
        res.save(tmp / "runs" / f"{tag}{p.name}")
        out[p.name] = res
    return out


def link_id(res: Any, name: str) -> int:
    import polars as pl

    return int(res.links.filter(pl.col("name") == name)["link_id"][0])


def flow_ids(res: Any) -> dict[str, int]:
    return dict(zip(res.flows["name"].to_list(), res.flows["flow_id"].to_list()))


def link_series(res: Any, link: str) -> dict[str, np.ndarray]:
    import polars as pl

    ls = res.link_series.filter(pl.col("link_id") == link_id(res, link)).sort("time_s")
    return {c: ls[c].to_numpy() for c in ("time_s", "rate_bps", "queue_bytes", "gauge", "drops")}


def flow_series(res: Any, flow: str) -> tuple[np.ndarray, np.ndarray]:
    import polars as pl

    fid = flow_ids(res)[flow]
    fs = res.flow_series.filter(pl.col("flow_id") == fid).sort("time_s")
    return fs["time_s"].to_numpy(), fs["rate_bps"].to_numpy()


def window_mean(t: np.ndarray, x: np.ndarray, a: float, b: float) -> float:
    sel = (t > a) & (t <= b)
    return float(x[sel].mean()) if sel.any() else float("nan")


def averaged(t: np.ndarray, x: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Averages of ``k`` consecutive samples (time at the end of each block)."""
    n = len(x) // k
    return t[: n * k].reshape(n, k)[:, -1], x[: n * k].reshape(n, k).mean(axis=1)


def sliding(t: np.ndarray, x: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Means of ``k`` consecutive samples at every alignment (time at the end of each window):
    the peaks and troughs of :func:`averaged` without the dependence on where its block edges
    fall (issue 31)."""
    if len(x) < k:
        return t[:0], x[:0].astype(float)
    c = np.concatenate(([0.0], np.cumsum(x, dtype=float)))
    return t[k - 1 :], (c[k:] - c[:-k]) / k


def input_rate(ls: dict[str, np.ndarray]) -> np.ndarray:
    """Rate arriving at a link per sample: transmitted plus queue growth (bit/s).

    The queue is sampled at the end of each interval, so over an interval the arrivals are what
    left plus what the queue grew by (drops are counted separately in every report).
    """
    t, q = ls["time_s"], ls["queue_bytes"].astype(float)
    dt = np.diff(t, prepend=0.0)
    dq = np.diff(q, prepend=0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(dt > 0, ls["rate_bps"] + 8 * dq / dt, 0.0)


def link_summary(res: Any, p: Protocol, link: str) -> dict[str, float]:
    """Drops (whole network), peak queue of ``link`` (packets of a full data packet), and its
    peak input rate over capacity (100 ms averages)."""
    import polars as pl

    row = res.links.filter(pl.col("name") == link)
    cap = float(row["rate_bps"][0])
    ls = link_series(res, link)
    t100, in100 = averaged(ls["time_s"], input_rate(ls), 10)
    return {
        "drops": int(res.links["drops"].sum()),
        "peak_queue_packets": float(row["max_queue_bytes"][0]) / p.data_wire_bytes,
        "peak_input_over_capacity": float(in100.max() / cap) if len(in100) else float("nan"),
        "capacity_bps": cap,
    }


def figure_rates(
    tmp: Path,
    results: dict[str, Any],
    flows: Sequence[str],
    link: str,
    title: str,
    name: str = "rates",
    block: int = 10,
    ylim: float | None = None,
) -> list[str]:
    """One column per protocol: flow rates (``block`` samples averaged) above the queue."""
    from ...figures import pyplot as _pyplot

    plt = _pyplot()
    protos = [p for p in PROTOCOLS if p.name in results]
    fig, axes = plt.subplots(
        2, len(protos), figsize=(4.2 * len(protos), 5.5), sharex=True, squeeze=False
    )
    for j, p in enumerate(protos):
        res = results[p.name]
        ax = axes[0][j]
        for f in flows:
            t, r = averaged(*flow_series(res, f), block)
            ax.plot(t, r / 1e6, lw=0.7, label=f)
        ax.set_title(p.label)
        ax.set_ylabel("rate (Mbit/s)")
        if ylim:
            ax.set_ylim(0, ylim)
        ax.grid(True, lw=0.3)
        if len(flows) <= 6:
            ax.legend(fontsize=7)
        ls = link_series(res, link)
        axq = axes[1][j]
        axq.plot(ls["time_s"], ls["queue_bytes"] / p.data_wire_bytes, lw=0.7, color="C3")
        axq.set_ylabel(f"queue at {link} (packets)")
        axq.set_xlabel("time (s)")
        axq.grid(True, lw=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    names = [q.name for q in save_figure(fig, tmp, name)]
    plt.close(fig)
    return names


# Why a protocol can lose packets with a large buffer, where the reason is known.
LOSS_REASONS = {
    "rcp": "RCP's joining flows start at the rate R the link offered before they joined, "
    "so the input exceeds C for about one RTT before the new R reaches them",
    "maxnet": "MaxNet's MaxStart lets simultaneous joiners all take the same spare capacity "
    "(seed 000 Section IV-B leaves that case open)",
    "piqi-rcp": "the reconstructed PIQI-RCP law has no queue term, so a queue built at a join "
    "drains only at (1 - gamma) C (docs/algorithms/piqi-rcp.md)",
}


def loss_sentence(rows: dict[str, dict[str, float]], what: str = "run") -> str:
    """States, from the numbers, which protocols lost packets, and why where known."""
    lossless = [by_name(k).label for k, v in rows.items() if v["drops"] == 0]
    lossy = [f"{by_name(k).label} ({v['drops']})" for k, v in rows.items() if v["drops"] > 0]
    if not lossy:
        return f"No protocol lost a packet in this {what}."
    reasons = [
        f"{by_name(k).label}: {LOSS_REASONS[k]}"
        for k, v in rows.items()
        if v["drops"] > 0 and k in LOSS_REASONS
    ]
    return (
        f"Packets dropped: {', '.join(lossy)}"
        + (f"; no loss for {', '.join(lossless)}" if lossless else "")
        + ". "
        + ("Why: " + "; ".join(reasons) + "." if reasons else "")
    ).strip()


@dataclass(frozen=True)
class Flow:
    name: str
    rtt_s: float
    start_s: float = 0.0
    stop_s: float | None = None


BOTTLENECK = "r1->r2"


def dumbbell(
    p: Protocol,
    name: str,
    flows: Sequence[Flow],
    *,
    duration_s: float,
    rate: str = "1Gbps",
    buffer: str = "20000pkt",
    scale: float = 1.0,
    metrics: str = "10ms",
) -> Scenario:
    """Flows from ``s<k>`` to ``d<k>`` through ``r1 -> r2`` (``rate``, 1 ms, ``buffer``), the
    rest of each flow's RTT on its access link (10 Gbit/s, unlimited buffer). Times are
    multiplied by ``scale`` (quick mode)."""
    sc = Scenario(f"{name}-{p.name}", duration=f"{duration_s * scale:g}s", seed=1)
    n = len(flows)
    sc.add_host("s{i}", count=n).add_host("d{i}", count=n)
    sc.add_router("r1").add_router("r2")
    for k, f in enumerate(flows, 1):
        access = max(f.rtt_s / 2 - 0.001, 0.0)
        sc.add_link(f"s{k}", "r1", rate="10Gbps", delay=f"{access * 1e3:g}ms", buffer="unlimited")
        sc.add_link("r2", f"d{k}", rate="10Gbps", delay=0, buffer="unlimited")
    sc.add_link("r1", "r2", rate=rate, delay="1ms", buffer=buffer, queue=p.queue)
    for k, f in enumerate(flows, 1):
        stop = None if f.stop_s is None else f"{f.stop_s * scale:g}s"
        sc.add_flow(
            f.name,
            f"s{k}",
            f"d{k}",
            cc=p.cc,
            start=f"{f.start_s * scale:g}s",
            stop=stop,
            transport=p.transport,
        )
    sc.metrics(interval=metrics)
    return sc


def report(
    experiment: str,
    title: str,
    quick: bool,
    doc: str | None,
    sections: Sequence[tuple[str, Sequence[str]]],
    figures: Sequence[str],
    figures_heading: str = "Figure",
) -> str:
    """The report of a comparison (``templates/explicit.md.j2``): title, the set-up (``doc``
    after its first paragraph), the protocols compared, ``sections`` (heading, paragraphs) and
    the figures."""
    return report_skeleton(
        f"{experiment}: {title}",
        f"xcc reproduce {experiment}",
        quick_note="times divided by 5; numbers not comparable." if quick else "",
        intro=[(doc or "").split("\n\n", 1)[1].strip()],
        sections=sections,
        figures=figures,
        figures_heading=figures_heading,
        template="explicit.md.j2",
        protocols=PROTOCOLS,
    )
