"""The mice experiments (seed 001) with MaxNet on three stacks: ``xcc reproduce mice-http-200
--stack kernel|udp`` (and ``mice-http-50``).

The dumbbell, traffic and measurements of :mod:`.mice` with MaxNet only, run three times:
through the emu router with Linux TCP and the BPF ``maxnet`` congestion control (``kernel``,
docs/kernel.md; each transaction opens its own connection at its start time, HTTP/1.0, as the
emu's NewReno transactions do), through the emu router on xcclab's UDP transport (``udp``, with
the same SYN / SYN-ACK), and in the simulator (``sim``). The sim and UDP runs use MSS 1432 B
(IP/UDP, shim and segment headers fit 1500 B, as :mod:`.mice_emu`); Linux TCP sends 1448 B per
segment.

Repeats (issues 31 and 34): every stack runs :func:`~..common.repeats.runs_for` times (5; 2 at
``--quick``) with seeds 1..n, and its figures are given as mean and 95 % interval over the runs
(:func:`xcclab.claims.estimate`). The transactions are evenly spaced and MaxNet's router drops
nothing at random; the seed draws the phase of its price update
(``crates/xcc-core/src/algorithms/maxnet/mod.rs``), and the real runs vary besides with the
machine's own timing.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from ...claims import estimate
from ..common.repeats import load_1min, runs_for
from ..common.report import atomic_dir, figure_links, fmt, markdown_table, write_metrics
from ..common.templates import render
from ..experiment import Variant
from .mice import (
    CASES,
    MAXNET_TRANSPORT,
    SUMMARY_HEADER,
    T_F_S,
    measure,
    response_cdf_figure,
    scenario,
    summary_cells,
    without_response_times,
)

STACKS = ("kernel", "udp", "sim")
#: The experiments with a ``--stack`` version: (K transactions, bottleneck rate) by id.
EXPERIMENTS = {e: CASES[e] for e in ("mice-http-200", "mice-http-50")}


def run_stack(stack: str, k: int, rate: str, scale: float, seed: int = 1) -> Any:
    """One run of MaxNet's mice scenario on ``stack`` with ``seed``."""
    import xcclab

    sc = scenario("maxnet", k, rate, scale, maxnet_transport=MAXNET_TRANSPORT)
    sc.seed = seed
    if stack == "sim":
        return xcclab.run(sc, progress=False)
    from ...kernel.emu import run_emu

    return run_emu(sc, stack)


def price_and_rtt(result: Any, rate: str, scale: float) -> dict[str, float]:
    """The bottleneck's utilisation and mean MaxNet price 5-60 s, the price's lower clip
    p_min = T ln(x_max / C), and the elephant's smoothed over minimum RTT."""
    import math

    import polars as pl

    from ...units import quantity_value

    link = result.link("r1->r2")
    ls = result.link_series.filter(
        (pl.col("link_id") == link["link_id"]) & (pl.col("time_s") > 5 * scale)
    )
    ftp = result.flows.filter(pl.col("name") == "ftp").to_dicts()[0]
    srtt, min_rtt = ftp.get("srtt_s"), ftp.get("min_rtt_s")
    return {
        "utilisation": float(link["utilisation"]),
        "price_mean_s": float(ls["gauge"].mean()),
        "price_min_clip_s": 0.4 * math.log(1e15 / (quantity_value(rate) or 1.0)),
        "srtt_over_min_rtt": float(srtt / min_rtt) if srtt and min_rtt else float("nan"),
    }


def run_mice_stacks(
    experiment: str,
    out_dir: str | Path,
    quick: bool = False,
    *,
    stack: str = "kernel",
    log: Callable[[str], None] | None = None,
) -> Path:
    if stack not in STACKS:
        raise ValueError(f"stack {stack!r}: expected one of {', '.join(STACKS)}")
    k, rate = EXPERIMENTS[experiment]
    log = log or (lambda _m: None)
    scale = 0.5 if quick else 1.0
    out_dir = Path(out_dir)
    n_runs = runs_for(quick)
    with atomic_dir(out_dir) as tmp:
        measured: dict[str, dict[str, Any]] = {}  # the simulated run, each real stack's first
        every: dict[str, list[dict[str, Any]]] = {}
        for s in STACKS:
            for i in range(1, n_runs + 1):
                log(f"{experiment} --stack {s}: MaxNet, K = {k}, {T_F_S * scale:g} s, seed {i}")
                load = load_1min()
                result = run_stack(s, k, rate, scale, i)
                run_dir = f"runs/{s}-{i}"
                result.save(tmp / run_dir)
                m = measure(result, scale)
                m.update(price_and_rtt(result, rate, scale))
                m["router"] = result.run_info.get("emu", {})
                m.update(run=i, run_dir=run_dir)
                if s != "sim":
                    m["load_1min"] = [load, load_1min()]
                every.setdefault(s, []).append(m)
                measured.setdefault(s, m)
        repeated = {s: over_runs(ms) for s, ms in every.items()}
        figures = _figures(tmp, experiment, measured)
        write_metrics(
            tmp,
            f"{experiment}-{stack}",
            quick=quick,
            comparisons=[],
            runs_per_cell=n_runs,
            variation="seeds 1..n (the phase of MaxNet's price update), and the machine's timing",
            measured=without_response_times(measured),
            repeated={s: {q: e.to_json() for q, e in v.items()} for s, v in repeated.items()},
            every_run={s: without_response_times(dict(enumerate(v))) for s, v in every.items()},
            figures=figures,
        )
        text = _report(experiment, k, rate, measured, figures, quick, stack, every)
        (tmp / "report.md").write_text(text, encoding="utf-8")
    return out_dir / "report.md"


#: The figures given over the runs (mean [95 % CI]).
REPEATED = ("share_within_135ms", "median_response_s", "p95_response_s", "utilisation")


def over_runs(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Each :data:`REPEATED` figure's mean and 95 % interval over ``runs``."""
    return {key: estimate([m[key] for m in runs]) for key in REPEATED}


def _figures(tmp: Path, experiment: str, measured: dict[str, dict[str, Any]]) -> list[str]:
    colors = {"kernel": "C3", "udp": "C0", "sim": "k"}
    return response_cdf_figure(
        tmp,
        "response-cdf-stacks",
        f"{experiment}: MaxNet on the kernel, the UDP transport, the simulator",
        measured,
        lambda s: {"color": colors[s]},
    )


def _report(
    experiment: str,
    k: int,
    rate: str,
    measured: dict[str, dict[str, Any]],
    figures: list[str],
    quick: bool,
    stack: str,
    every: dict[str, list[dict[str, Any]]] | None = None,
) -> str:
    every = every or {s: [m] for s, m in measured.items()}
    repeated = {s: over_runs(ms) for s, ms in every.items()}
    rep_table = markdown_table(
        ["stack (runs)", "within 135 ms (%)", "median (ms)", "p95 (ms)", "bottleneck utilisation"],
        [
            [
                f"{s} ({len(every[s])})",
                r["share_within_135ms"].scaled(100).text(3),
                r["median_response_s"].scaled(1e3).text(3),
                r["p95_response_s"].scaled(1e3).text(3),
                r["utilisation"].text(3),
            ]
            for s, r in repeated.items()
        ],
    )
    per_run = markdown_table(
        ["run", "within 135 ms (%)", "median (ms)", "p95 (ms)", "utilisation",
         "router lateness p99 (µs)", "load (1 min) before / after"],
        [
            [
                f"[{s} #{m.get('run', 1)}]({m['run_dir']}/run.json)" if "run_dir" in m else s,
                fmt(100 * m["share_within_135ms"], 1),
                fmt(1e3 * m["median_response_s"], 1),
                fmt(1e3 * m["p95_response_s"], 1),
                fmt(m["utilisation"], 3),
                str(m["router"].get("lateness_p99_us", "n/a")),
                " / ".join(fmt(x, 1) for x in m["load_1min"]) if "load_1min" in m else "-",
            ]
            for s, ms in every.items()
            for m in ms
        ],
    )  # fmt: skip
    rows = [
        [
            s,
            *summary_cells(m),
            str(m["max_queue_bytes"]),
            str(m["router"].get("lateness_p99_us", "n/a")),
            fmt(m["utilisation"], 3),
            fmt(m["price_mean_s"] - m["price_min_clip_s"], 4),
        ]
        for s, m in measured.items()
    ]
    header = [
        "stack",
        *SUMMARY_HEADER,
        "max queue (B)",
        "router lateness p99 (µs)",
        "bottleneck utilisation",
        "mean price above p_min (s)",
    ]
    m = measured[stack]
    chosen = repeated[stack]
    return render(
        "mice_stacks.md.j2",
        experiment=experiment,
        stack=stack,
        k=k,
        rate=rate,
        quick=quick,
        table=markdown_table(header, rows),
        repeated=rep_table,
        per_run=per_run,
        runs=len(every[stack]),
        within_135ms=chosen["share_within_135ms"].scaled(100).text(3),
        median_ms=chosen["median_response_s"].scaled(1e3).text(3),
        queue_pkts=fmt(m["queue_during_pkts"], 1),
        figures=figure_links(figures),
        utilisation=_utilisation_text(measured),
    )


def _utilisation_text(measured: dict[str, dict[str, Any]]) -> str:
    """Whether the kernel stack reaches mu C, and if not whether the price clip explains it."""
    mu = 0.95
    k, u = measured["kernel"], measured["udp"]
    margin = k["price_mean_s"] - k["price_min_clip_s"]
    margin_udp = u["price_mean_s"] - u["price_min_clip_s"]
    text = (
        f"Utilisation: kernel {fmt(k['utilisation'], 3)}, UDP {fmt(u['utilisation'], 3)}, "
        f"simulator {fmt(measured['sim']['utilisation'], 3)} (mu = {mu}). "
    )
    if k["utilisation"] >= 0.99 * mu or margin >= 0.25 * margin_udp:
        return text + (
            f"The kernel stack's mean price is {fmt(margin, 4)} s above its lower clip "
            f"p_min = T ln(x_max / C) (the UDP transport's {fmt(margin_udp, 4)} s): the price "
            "law, not the clip, sets its rate (the elephant's smoothed RTT is "
            f"{fmt(k['srtt_over_min_rtt'], 3)} times its minimum)."
        )
    return text + (
        "The kernel stack stays below mu: the router's price sits at its lower clip "
        f"p_min = T ln(x_max / C) (mean {fmt(margin, 4)} s above it, the UDP transport's "
        f"{fmt(margin_udp, 4)} s): the price asks for the whole link, D(p_min) = C, so the "
        "window is at most tau C, and the rate that window gives is tau C / RTT with the RTT "
        "of the ACK clock, not the minimum tau. Delayed ACKs, TSO bursts and late wake-ups "
        "of the machine make that RTT larger (the elephant's smoothed RTT is "
        f"{fmt(k['srtt_over_min_rtt'], 3)} times its minimum here), and once tau / RTT < mu "
        "the link cannot reach mu C at any price. The clip is the paper's (Section VI); its "
        f"margin is 1 - mu = {fmt(100 * (1 - mu), 0)} % here."
    )


def run(
    out_dir: str | Path,
    quick: bool = False,
    *,
    stack: str = "kernel",
    experiment: str = "mice-http-200",
    log: Callable[[str], None] | None = None,
) -> Path:
    return run_mice_stacks(experiment, out_dir, quick, stack=stack, log=log)


HTTP_50 = Variant("mice-http-50", "stack", partial(run, experiment="mice-http-50"))
HTTP_200 = Variant("mice-http-200", "stack", partial(run, experiment="mice-http-200"))
