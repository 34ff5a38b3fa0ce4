"""xcc-mice: explicit protocols with mice traffic (seed 002).

One 1 Gbit/s bottleneck, RTT 50 ms (our choice), buffer 20 000 packets; one long flow for the
whole run plus short flows arriving as a Poisson process (mean inter-arrival 0.2 s) with Pareto
sizes (shape 1.4, mean 100 packets = 146 000 B of payload), 60 s (our choice). Seed 002: XCP,
RCP and PIQI-RCP all utilise the link well; JetMax loses utilisation because it gives short
flows an even share they cannot use during their short lives.

Reported per protocol: the bottleneck's mean utilisation from 5 s, packets dropped and the peak
queue, the number of short flows that completed, and their mean flow-completion time by size.
"""

from __future__ import annotations

from pathlib import Path

from ...claims import Claim, Ordering, Qualitative
from ...scenario import already_open
from ..common import explicit
from ..common.paper_claims import quote
from ..common.report import atomic_dir, fmt, markdown_table, write_metrics
from ..experiment import Experiment

ID = "xcc-mice"
TITLE = "Explicit protocols with mice traffic (seed 002)"
CLAIM = "XCP, RCP (and PIQI-RCP) utilise the link well; JetMax loses utilisation"
T_END = 60.0
MEAN_BYTES = 100 * explicit.MSS
BINS = ((0, 50), (50, 200), (200, 1000), (1000, None))  # packets (Pareto minimum: 28.6)


def scenario(p: explicit.Protocol, scale: float):
    sc = explicit.dumbbell(p, ID, [explicit.Flow("long", 0.05)], duration_s=T_END, scale=scale)
    sc.add_host("mice-src").add_host("mice-dst")
    sc.add_link("mice-src", "r1", rate="10Gbps", delay="24ms", buffer="unlimited")
    sc.add_link("r2", "mice-dst", rate="10Gbps", delay=0, buffer="unlimited")
    sc.add_arrivals(
        "mice",
        "mice-src",
        "mice-dst",
        mean_interarrival="200ms",
        size={"dist": "pareto", "mean": f"{MEAN_BYTES}B", "shape": 1.4},
        cc=p.cc,
        transport=already_open(),
    )
    return sc


def measure(res, p: explicit.Protocol, scale: float) -> dict:
    import polars as pl

    s = explicit.link_summary(res, p, explicit.BOTTLENECK)
    ls = explicit.link_series(res, explicit.BOTTLENECK)
    util = explicit.window_mean(
        ls["time_s"], ls["rate_bps"] / s["capacity_bps"], 5 * scale, T_END * scale
    )
    mice = res.flows.filter(pl.col("kind") == "arrival")
    done = mice.filter(pl.col("fct_s").is_not_null())
    bins = []
    for lo, hi in BINS:
        sel = done.filter(pl.col("size_bytes") > lo * explicit.MSS)
        if hi is not None:
            sel = sel.filter(pl.col("size_bytes") <= hi * explicit.MSS)
        bins.append(
            {
                "n": sel.height,
                "mean_fct_s": float(sel["fct_s"].mean()) if sel.height else float("nan"),
            }
        )
    long_rate = explicit.window_mean(*explicit.flow_series(res, "long"), 5 * scale, T_END * scale)
    return {
        **s,
        "utilisation": util,
        "mice_started": mice.height,
        "mice_completed": done.height,
        "bins": bins,
        "long_rate_bps": long_rate,
    }


def run(out_dir, quick=False, *, log=None, progress=True):
    log = log or (lambda _m: None)
    scale = 0.2 if quick else 1.0
    out_dir = Path(out_dir)
    with atomic_dir(out_dir) as tmp:
        log(f"{ID}: {T_END * scale:g} s per protocol")
        results = explicit.run_all(lambda p: scenario(p, scale), tmp, log, progress)
        m = {p.name: measure(results[p.name], p, scale) for p in explicit.PROTOCOLS}
        figs = explicit.figure_rates(
            tmp, results, ["long"], explicit.BOTTLENECK, "One long flow with mice"
        )
        write_metrics(tmp, ID, quick=quick, comparisons=[], measured=m, figures=figs)
        (tmp / "report.md").write_text(_report(m, figs, quick), encoding="utf-8")
    return out_dir / "report.md"


def _jetmax_sentence(m: dict) -> str:
    j = m["jetmax"]
    others = [p for p in explicit.PROTOCOLS if p.name != "jetmax"]
    best = max(m[p.name]["utilisation"] for p in others)
    lower = j["utilisation"] < best - 0.02
    return (
        f"JetMax (our reconstruction) uses {fmt(100 * j['utilisation'], 1)} % of the link against "
        f"up to {fmt(100 * best, 1)} % for the others: "
        + (
            "lower, as the paper found (an even share goes to flows too short to use it)."
            if lower
            else "not noticeably lower, unlike the paper."
        )
    )


def _bin_label(lo: int, hi: int | None) -> str:
    return f"({lo}, {hi}] packets" if hi is not None else f"> {lo} packets"


def _report(m: dict, figs: list[str], quick: bool) -> str:
    protos = explicit.PROTOCOLS
    rows = [
        [
            "bottleneck utilisation from 5 s",
            *[fmt(100 * m[p.name]["utilisation"], 1) + " %" for p in protos],
        ],
        [
            "long flow's mean rate (Mbit/s)",
            *[fmt(m[p.name]["long_rate_bps"] / 1e6, 0) for p in protos],
        ],
        ["packets dropped", *[str(m[p.name]["drops"]) for p in protos]],
        ["peak queue (packets)", *[fmt(m[p.name]["peak_queue_packets"], 0) for p in protos]],
        [
            "short flows completed / started",
            *[f"{m[p.name]['mice_completed']} / {m[p.name]['mice_started']}" for p in protos],
        ],
    ]
    for k, (lo, hi) in enumerate(BINS):
        rows.append(
            [f"mean FCT, {_bin_label(lo, hi)} (s)"]
            + [
                f"{fmt(m[p.name]['bins'][k]['mean_fct_s'], 3)} (n={m[p.name]['bins'][k]['n']})"
                for p in protos
            ]
        )
    good = [p.label for p in protos if m[p.name]["utilisation"] >= 0.9 * p.target]
    poor = [
        f"{p.label} ({fmt(100 * m[p.name]['utilisation'], 1)} %)"
        for p in protos
        if m[p.name]["utilisation"] < 0.9 * p.target
    ]
    return explicit.report(
        ID,
        TITLE,
        quick,
        __doc__,
        [
            (
                "Results",
                [
                    markdown_table(["", *[p.label for p in protos]], rows),
                    "Utilisation at least 90 % of the target: "
                    + (", ".join(good) or "none")
                    + (f"; below: {', '.join(poor)}" if poor else "")
                    + ". "
                    + explicit.loss_sentence(m)
                    + " "
                    + _jetmax_sentence(m)
                    + " Flow-completion times differ by "
                    "start-up: an RCP flow sends at the link's offered rate from its first ACK "
                    "on, an XCP flow starts with one segment and grows by the routers' positive "
                    "feedback (one control interval per step), a MaxNet flow starts at "
                    "MaxStart's measured spare capacity.",
                ],
            ),
        ],
        figs,
    )


_WHERE = "slide 'Performance with Mice Traffic'"


def claims(metrics: dict) -> list[Claim]:
    m = metrics["measured"]
    util = {k: 100 * v["utilisation"] for k, v in m.items()}
    out: list[Claim] = []
    for key, label in (("xcp", "XCP"), ("rcp", "RCP"), ("piqi-rcp", "PIQI-RCP")):
        out.append(
            Ordering(
                id=f"JetMax below {label} in utilisation",
                quote=quote(
                    "002",
                    _WHERE,
                    "XCP, RCP, and PIQI-RCP all perform reasonably well; "
                    "JetMax suffers low utilization since it allocates an even rate to "
                    "both long and short flows",
                ),
                measure=f"bottleneck utilisation of {label} minus JetMax's, whole run",
                ours=util[key] - util["jetmax"],
                unit="points",
                reconstruction="JetMax",
                first=label,
                second="JetMax",
            )
        )
    out.append(
        Qualitative(
            id="XCP, RCP, PIQI-RCP perform reasonably well",
            quote=quote("002", _WHERE, "XCP, RCP, and PIQI-RCP all perform reasonably well"),
            measure="bottleneck utilisation",
            ours=None,
            observed=", ".join(f"{k} {v:.1f} %" for k, v in util.items()),
        )
    )
    return out


EXPERIMENT = Experiment(id=ID, seed="002", title=TITLE, summary=CLAIM, run=run, claims=claims)
