"""xcc-abrupt: abrupt change in demand (seed 002).

One flow from 0 to 120 s; ten more join at 30 s and leave at 113 s. 1 Gbit/s, RTT 50 ms (our
choice: seed 002's single-bottleneck RTT), unlimited bottleneck buffer (our choice: the
paper's buffer is not given; a finite one would clip the queue we want to measure, and a
20 000-packet buffer overflows for RCP and MaxNet here). Seed 002: when the ten flows join,
RCP overshoots the link capacity by 300 % and its queue jumps to 11 000 packets; PIQI-RCP
does much better.

Overshoot is measured as the peak input rate at the bottleneck over its capacity, minus one, from
100 ms averages and from 10 ms samples (input = transmitted + queue growth), in the 5 s after the
surge; the peak queue likewise. Also reported: packets dropped, and how long the queue takes to
drain below 100 packets after the surge.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...claims import Claim, Estimate, Ordering, Point, Shape
from ..common import explicit
from ..common.paper_claims import difference, quote
from ..common.report import (
    Comparison,
    atomic_dir,
    fmt,
    markdown_table,
    save_figure,
    write_metrics,
)
from ..common.seeds import SEEDS, from_summary, over_seeds, summarise
from ..experiment import Experiment

ID = "xcc-abrupt"
TITLE = "Abrupt change in demand: 1 flow, then 10 more (seed 002)"
CLAIM = "RCP overshoots capacity by ~300 % with an ~11000-packet queue; PIQI-RCP much better"
T_END, T_JOIN, T_LEAVE = 120.0, 30.0, 113.0
PAPER_RCP_QUEUE = 11000
PAPER_RCP_OVERSHOOT = 3.0


#: The slide does not say how the ten flows join: the main runs start all ten at 30 s; the
#: sensitivity runs draw each start uniformly in [30 s, 30 s + X] (numpy), over ten seeds.
JOIN_SPREADS_S = (0.5, 2.0, 5.0)
SPREAD_PROTOCOLS = ("rcp", "piqi-rcp")


SPREAD_KEYS = ("surge_overshoot_sliding", "surge_peak_queue_packets")

#: The averaging window of "overshoots the link capacity by 300%", which the slide does not
#: give: ours is 100 ms (the plots' averaging), slid over every 10 ms alignment; the others are
#: sensitivity rows (10 ms: the raw samples; 50 ms: one RTT; up to 1 s: the whole burst and its
#: drain). Fixed 100 ms bins, one alignment, are kept as a second definition: where their edges
#: fall can split one burst in two.
OVERSHOOT_WINDOW_MS = 100
OVERSHOOT_WINDOWS_MS = (10, 50, 100, 200, 500, 1000)


def sliding_peak(t: np.ndarray, x: np.ndarray, width_s: float, a: float, b: float) -> float:
    """The largest mean of ``x`` over any ``width_s`` window (every alignment on the sample
    grid) that ends in (a, b]: a peak that does not depend on where bin edges fall."""
    dt = float(np.median(np.diff(t))) if len(t) > 1 else 0.0
    if dt <= 0:
        return float("nan")
    k = max(1, int(round(width_s / dt)))
    if len(x) < k:
        return float("nan")
    c = np.concatenate(([0.0], np.cumsum(x, dtype=float)))
    means = (c[k:] - c[:-k]) / k
    ends = t[k - 1 :]
    sel = (ends > a) & (ends <= b)
    return float(means[sel].max()) if sel.any() else float("nan")


def flows(spread_s: float = 0.0, seed: int = 1) -> list[explicit.Flow]:
    starts = [T_JOIN] * 10
    if spread_s > 0:
        rng = np.random.default_rng(seed)
        starts = [T_JOIN + float(x) for x in rng.uniform(0.0, spread_s, 10)]
    return [explicit.Flow("long", 0.05)] + [
        explicit.Flow(f"burst{k}", 0.05, start_s=starts[k - 1], stop_s=T_LEAVE)
        for k in range(1, 11)
    ]


def spread_run(*, seed: int, protocol: str, spread_s: float) -> dict[str, float]:
    """One run with the ten starts drawn from ``seed`` (a worker of ``over_seeds``)."""
    import xcclab

    p = explicit.by_name(protocol)
    sc = explicit.dumbbell(p, ID, flows(spread_s, seed), duration_s=T_END, buffer="unlimited")
    m = measure(xcclab.run(sc, progress=False), p, 1.0)
    return {k: m[k] for k in SPREAD_KEYS}


def measure(res, p: explicit.Protocol, scale: float) -> dict:
    s = explicit.link_summary(res, p, explicit.BOTTLENECK)
    ls = explicit.link_series(res, explicit.BOTTLENECK)
    t = ls["time_s"]
    cap = s["capacity_bps"]
    q = ls["queue_bytes"] / p.data_wire_bytes
    t100, in100 = explicit.averaged(t, explicit.input_rate(ls), 10)
    a, b = T_JOIN * scale, (T_JOIN + 5) * scale
    sel100 = (t100 > a) & (t100 <= b)
    sel = (t > a) & (t <= b)
    peak_q = float(q[sel].max()) if sel.any() else float("nan")
    in10 = explicit.input_rate(ls)
    overshoot10 = float(in10[sel].max() / cap - 1) if sel.any() else float("nan")
    sliding = {
        str(w): sliding_peak(t, in10, w / 1e3 * scale, a, b) / cap - 1 for w in OVERSHOOT_WINDOWS_MS
    }
    # Drain: first sample after the peak with fewer than 100 packets queued.
    after = np.nonzero((t > a) & (q >= peak_q - 0.5))[0]
    drain = float("nan")
    if len(after):
        k0 = after[0]
        low = np.nonzero(q[k0:] < 100)[0]
        if len(low):
            drain = float(t[k0 + low[0]] - a)
    util = explicit.window_mean(t, ls["rate_bps"] / cap, (T_JOIN + 10) * scale, T_LEAVE * scale)
    # Under-use after the surge: the last 100 ms average below 90 % of the target before the
    # ten flows leave, counted from the surge.
    _, u100 = explicit.averaged(t, ls["rate_bps"] / cap, 10)
    low = np.nonzero((t100 > a) & (t100 < T_LEAVE * scale) & (u100 < 0.9 * p.target))[0]
    underused = float(t100[low[-1]] - a) if len(low) else 0.0
    return {
        **s,
        "surge_peak_queue_packets": peak_q,
        "surge_overshoot": float(in100[sel100].max() / cap - 1) if sel100.any() else float("nan"),
        "surge_overshoot_10ms": overshoot10,
        "surge_overshoot_windows": sliding,
        "surge_overshoot_sliding": sliding[str(OVERSHOOT_WINDOW_MS)],
        "drain_s": drain,
        "utilisation_with_11": util,
        "underused_until_s": underused,
    }


def run(out_dir, quick=False, *, log=None, progress=True):
    log = log or (lambda _m: None)
    scale = 0.2 if quick else 1.0
    out_dir = Path(out_dir)
    with atomic_dir(out_dir) as tmp:
        log(f"{ID}: {T_END * scale:g} s per protocol")
        results = explicit.run_all(
            lambda p: explicit.dumbbell(
                p, ID, flows(), duration_s=T_END, scale=scale, buffer="unlimited"
            ),
            tmp,
            log,
            progress,
        )
        m = {p.name: measure(results[p.name], p, scale) for p in explicit.PROTOCOLS}
        comparisons = [
            Comparison(
                "RCP queue at the surge",
                PAPER_RCP_QUEUE,
                m["rcp"]["surge_peak_queue_packets"],
                "packets",
            ),
            Comparison(
                "RCP overshoot at the surge",
                PAPER_RCP_OVERSHOOT,
                m["rcp"]["surge_overshoot_sliding"],
                "",
            ),
        ]
        spread: dict[str, dict] = {}
        law: dict[str, dict] = {}
        if not quick:
            cases = {
                f"{name}@{x:g}": {"protocol": name, "spread_s": x}
                for x in JOIN_SPREADS_S
                for name in SPREAD_PROTOCOLS
            }
            log(f"{ID}: join spreads {JOIN_SPREADS_S} s x {len(SEEDS)} seeds")
            runs = over_seeds("xcclab.reproduce.xcc.xcc_abrupt:spread_run", cases)
            for x in JOIN_SPREADS_S:
                spread[f"{x:g}"] = {
                    name: {k: summarise(runs[f"{name}@{x:g}"], k) for k in SPREAD_KEYS}
                    for name in SPREAD_PROTOCOLS
                }
            alt = explicit.PIQI_MULTIPLICATIVE
            res = explicit.run_all(
                lambda p: explicit.dumbbell(
                    p, ID, flows(), duration_s=T_END, scale=scale, buffer="unlimited"
                ),
                tmp,
                log,
                False,
                [alt],
            )
            law[alt.name] = measure(res[alt.name], alt, scale)
        figs = explicit.figure_rates(
            tmp,
            results,
            ["long", "burst1"],
            explicit.BOTTLENECK,
            "1 flow, +10 at 30 s, -10 at 113 s",
        )
        figs += _input_figure(tmp, results, scale)
        if spread:
            figs += _spread_figure(tmp, m, spread)
        write_metrics(
            tmp,
            ID,
            quick=quick,
            comparisons=comparisons,
            measured=m,
            join_spread_sensitivity=spread,
            piqi_law_sensitivity=law,
            figures=figs,
        )
        (tmp / "report.md").write_text(_report(m, figs, quick), encoding="utf-8")
    return out_dir / "report.md"


def _spread_figure(tmp: Path, m: dict, spread: dict) -> list[str]:
    """RCP's and PIQI-RCP's overshoot and peak queue at the surge against the join spread X:
    the main run (X = 0, one run) and each X's mean over seeds with its 95 % interval; the
    slide's RCP values as lines (the slide gives no spread)."""
    from ...figures import paper_vs_ours
    from ...figures import pyplot as _pyplot

    plt = _pyplot()
    cats = ["0 (one run)", *spread]
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    panels = (
        (
            "surge_overshoot_sliding",
            100.0,
            "input overshoot at the surge, 100 ms sliding (%)",
            100 * PAPER_RCP_OVERSHOOT,
        ),
        ("surge_peak_queue_packets", 1.0, "peak queue at the surge (packets)", PAPER_RCP_QUEUE),
    )
    for ax, (key, scale, ylabel, slide) in zip(axes, panels):
        for n, name in enumerate(SPREAD_PROTOCOLS):
            label = explicit.by_name(name).label
            ours = [m[name][key] * scale] + [spread[x][name][key]["mean"] * scale for x in spread]
            ci = [None] + [tuple(v * scale for v in spread[x][name][key]["ci95"]) for x in spread]
            paper_vs_ours(ax, cats, None, ours, ci, offset=(n - 0.5) * 0.2, color=f"C{n}",
                          label=f"{label},")  # fmt: skip
        ax.axhline(slide, color="black", lw=0.8, ls="--", label="slide: RCP")
        ax.set_xlabel("join spread X (s): starts uniform in [30 s, 30 s + X], 10 seeds")
        ax.set_ylabel(ylabel)
        ax.grid(True, axis="y", lw=0.3)
    axes[0].legend(fontsize=7)
    fig.suptitle("xcc-abrupt: the surge against how the ten flows join (dots: mean, 95 % CI)")
    fig.tight_layout()
    names = [q.name for q in save_figure(fig, tmp, "join-spread")]
    plt.close(fig)
    return names


def _input_figure(tmp: Path, results: dict, scale: float) -> list[str]:
    """The aggregate input rate at the bottleneck over its capacity around the surge, every
    protocol on one axis (100 ms averages): the slide's "overshoots the link capacity by 300%"
    is the height of these curves above 1."""
    from ...figures import pyplot

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9, 3.6))
    for n, p in enumerate(explicit.PROTOCOLS):
        ls = explicit.link_series(results[p.name], explicit.BOTTLENECK)
        cap = float(results[p.name].link(explicit.BOTTLENECK)["rate_bps"])
        t, x = explicit.averaged(ls["time_s"], explicit.input_rate(ls), 10)
        sel = (t > (T_JOIN - 2) * scale) & (t < (T_JOIN + 8) * scale)
        ax.plot(t[sel], x[sel] / cap, lw=0.9, color=f"C{n}", label=p.label)
    ax.axhline(1.0, color="black", lw=0.8, ls="--", label="capacity")
    ax.axhline(4.0, color="grey", lw=0.8, ls=":", label="slide: RCP at +300 %")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("input rate / capacity C (C = 1 Gbit/s)")
    ax.grid(True, lw=0.3)
    ax.legend(fontsize=7, ncol=3)
    ax.set_title("Bottleneck input (100 ms averages) against capacity when ten flows join")
    fig.tight_layout()
    names = [q.name for q in save_figure(fig, tmp, "input-vs-capacity")]
    plt.close(fig)
    return names


def _report(m: dict, figs: list[str], quick: bool) -> str:
    protos = explicit.PROTOCOLS
    rows = [
        ["packets dropped", *[str(m[p.name]["drops"]) for p in protos]],
        [
            "peak queue, whole run (packets)",
            *[fmt(m[p.name]["peak_queue_packets"], 0) for p in protos],
        ],
        [
            "peak queue, 5 s after the surge (packets)",
            *[fmt(m[p.name]["surge_peak_queue_packets"], 0) for p in protos],
        ],
        [
            "overshoot at the surge, 10 ms samples",
            *[fmt(100 * m[p.name]["surge_overshoot_10ms"], 0) + " %" for p in protos],
        ],
        *[
            [
                f"overshoot at the surge, {w} ms window, every alignment",
                *[
                    fmt(100 * m[p.name]["surge_overshoot_windows"][str(w)], 0) + " %"
                    for p in protos
                ],
            ]
            for w in OVERSHOOT_WINDOWS_MS
        ],
        [
            "overshoot at the surge, fixed 100 ms bins (one alignment)",
            *[fmt(100 * m[p.name]["surge_overshoot"], 0) + " %" for p in protos],
        ],
        ["queue below 100 packets after (s)", *[fmt(m[p.name]["drain_s"], 2) for p in protos]],
        [
            "utilisation below 90 % of target until (s after the surge)",
            *[fmt(m[p.name]["underused_until_s"], 2) for p in protos],
        ],
        [
            "utilisation 40-113 s",
            *[fmt(100 * m[p.name]["utilisation_with_11"], 1) + " %" for p in protos],
        ],
    ]
    rcp = m["rcp"]
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
                ],
            ),
            (
                "Against the paper",
                [
                    markdown_table(
                        ["quantity", "paper (RCP, Linux)", "ours (RCP)"],
                        [
                            [
                                f"overshoot when 10 flows join ({OVERSHOOT_WINDOW_MS} ms, "
                                "every alignment)",
                                "300 %",
                                fmt(100 * rcp["surge_overshoot_sliding"], 0) + " %",
                            ],
                            [
                                "queue when 10 flows join",
                                f"{PAPER_RCP_QUEUE} packets",
                                fmt(rcp["surge_peak_queue_packets"], 0) + " packets",
                            ],
                            [
                                "PIQI-RCP: overshoot / queue at the surge",
                                "much better than RCP",
                                fmt(100 * m["piqi-rcp"]["surge_overshoot_sliding"], 0)
                                + " % / "
                                + fmt(m["piqi-rcp"]["surge_peak_queue_packets"], 0)
                                + " packets",
                            ],
                        ],
                    ),
                    explicit.loss_sentence(m) + " " + _discussion(m),
                ],
            ),
            (
                "Join spread",
                [
                    "The slide does not say how the ten flows join. The sensitivity runs "
                    "(claims section) draw "
                    f"each start uniformly in [30 s, 30 s + X] for X in {_spreads()} s, "
                    f"over {len(SEEDS)} seeds, for RCP and PIQI-RCP only: the slide's claims "
                    "on this experiment (RCP's 300 % and 11 000 packets, \"Compared to RCP, "
                    'PIQI RCP performs much better") and its summary (RCP\'s "significant '
                    'overshoot under abrupt traffic changes", PIQI-RCP "more robust to abrupt '
                    'surge") name those two; XCP, MaxNet and JetMax run beside them for '
                    "comparison, and no claim of seed 002 on this experiment rests on them.",
                ],
            ),
        ],
        figs,
    )


def _spreads() -> str:
    return ", ".join(f"{x:g}" for x in JOIN_SPREADS_S)


def _discussion(m: dict) -> str:
    rcp = m["rcp"]
    q = rcp["surge_peak_queue_packets"]
    # Excess that one RTT (50 ms) of ten flows at R = C would queue: 10 C x 50 ms.
    one_rtt = 10 * 1e9 * 0.05 / 8 / explicit.by_name("rcp").data_wire_bytes
    return (
        f"RCP's input at the surge reached {fmt(1 + rcp['surge_overshoot_10ms'], 1)} times the "
        f"capacity over 10 ms and {fmt(1 + rcp['surge_overshoot_sliding'], 2)} times over the "
        f"worst 100 ms (every alignment; {fmt(1 + rcp['surge_overshoot'], 2)} on fixed bins), "
        "and its "
        f"queue {fmt(q, 0)} packets. The mechanism: before the surge the single flow had the link "
        "to itself, so the rate R the router offered was C; each joining flow's first packet "
        "brings back R = C one RTT later, and all ten start at that rate at once (no slow "
        "start), an input of 11 C. The router cuts R within a control interval, but the sources "
        "hear of it one RTT (50 ms) later: ten flows at C for one RTT queue "
        f"{fmt(one_rtt, 0)} packets, the order of what we measure. The paper's 300 % and "
        "11 000 packets are smaller; our ten joins are simultaneous to the nanosecond and "
        "each source reaches its rate on its first ACK, while the paper's Linux hosts pace in "
        "software and start their flows from a script, which spreads the joins (seed 002 does "
        "not say how far), so fewer flows run at the stale R at the same time. MaxNet's MaxStart "
        "has the same weakness with simultaneous joins (all probes see the same spare capacity; "
        "seed 000 Section IV-B leaves that case open); XCP grows each new flow from one segment "
        "by the routers' feedback and barely queues. "
        + (
            f"After the surge RCP's link is under-used until {fmt(rcp['underused_until_s'], 1)} s "
            "later: the queue term beta Q / d of a queue that large drives R down to its floor, "
            "and R then regrows by at most 1 + alpha T/d per interval (protocols.md 3.7 "
            "pitfall 3). "
            if rcp["underused_until_s"] > 1
            else ""
        )
        + _piqi_sentence(m)
    )


def _piqi_sentence(m: dict) -> str:
    p, r = m["piqi-rcp"], m["rcp"]
    better = p["surge_peak_queue_packets"] < r["surge_peak_queue_packets"]
    return (
        f"PIQI-RCP (our reconstruction) queues {fmt(p['surge_peak_queue_packets'], 0)} packets "
        f"at the surge against RCP's {fmt(r['surge_peak_queue_packets'], 0)}: "
        + (
            "less, as the paper found."
            if better
            else "not less, unlike the paper; its joining flows also start at the offered rate, "
            "and the reconstructed law has no queue term to drain what they queue faster than "
            "(1 - gamma) C (docs/algorithms/piqi-rcp.md)."
        )
    )


_WHERE = "slide 'Abrupt Change in Traffic Demand'"


def claims(metrics: dict) -> list[Claim]:
    out = _surge_claims(metrics["measured"], None) + _window_claims(metrics["measured"])
    for x, by in metrics.get("join_spread_sensitivity", {}).items():
        est = {name: {k: from_summary(x) for k, x in v.items()} for name, v in by.items()}
        out += _surge_claims(est, f"starts uniform in [30 s, 30 s + {x} s], 10 seeds")
    m = metrics["measured"]
    alt = metrics.get("piqi_law_sensitivity", {}).get(explicit.PIQI_MULTIPLICATIVE.name)
    if alt:
        out.append(
            Ordering(
                id="PIQI-RCP better than RCP at the surge (multiplicative law)",
                quote=quote("002", _WHERE, "Compared to RCP, PIQI RCP performs much better"),
                measure="RCP's peak queue minus PIQI-RCP's, in the 5 s after the ten flows join",
                ours=m["rcp"]["surge_peak_queue_packets"] - alt["surge_peak_queue_packets"],
                unit="packets",
                reconstruction="PIQI-RCP",
                setting="PIQI-RCP's alternative law R (1 + kappa (gamma C - y) / C)",
                first="RCP's peak queue",
                second="PIQI-RCP's",
            )
        )
    return out


def _scaled(x, k: float):
    return x.scaled(k) if isinstance(x, Estimate) else x * k


_OVERSHOOT = quote(
    "002",
    "slide 'Abrupt Change in Traffic Demand'",
    "When 10 flows join, RCP overshoots the link capacity by 300% and its queue size jumps to "
    "11000 packets",
)


def _overshoot(
    ours, width_ms: int, setting: str | None, note: str = "", evidence=(), fixed: bool = False
) -> Shape:
    surge = "in the 5 s after the ten flows join at 30 s"
    where = " on fixed bins from 0 s (one alignment: a run from before the sliding windows)"
    return Shape(
        id="RCP overshoot at the surge" + (f" ({setting})" if setting else ""),
        setting=setting,
        quote=_OVERSHOOT,
        measure="bottleneck input rate (transmitted + queue growth) from the 10 ms samples, "
        f"averaged over {width_ms} ms"
        + (where if fixed else " at every 10 ms alignment")
        + f", {surge}",
        ours=ours,
        unit="%",
        definition=f"largest {width_ms} ms mean of the input rate over capacity, minus 1, in %",
        window=f"open: the slide gives no averaging window; ours {OVERSHOOT_WINDOW_MS} ms, "
        "sliding over every 10 ms alignment, swept from 10 ms to 1 s",
        value=300.0,
        precision="about",
        points=True,
        note=note,
        evidence=evidence,
    )


def _window_claims(m: dict) -> list[Claim]:
    """The overshoot under each swept window (sensitivity rows) and on fixed bins (a second
    definition, one alignment)."""
    rcp = m["rcp"]
    out: list[Claim] = []
    for w, v in (rcp.get("surge_overshoot_windows") or {}).items():
        if int(w) != OVERSHOOT_WINDOW_MS:
            out.append(_overshoot(100 * v, int(w), f"{w} ms window, every alignment"))
    if "surge_overshoot" in rcp:
        out.append(
            Shape(
                id="RCP overshoot at the surge (fixed 100 ms bins)",
                quote=_OVERSHOOT,
                measure="bottleneck input rate, 100 ms averages on fixed bins from 0 s (one "
                "alignment: the bin edges can split one burst in two), in the 5 s after the ten "
                "flows join",
                ours=100 * rcp["surge_overshoot"],
                unit="%",
                definition="peak of the fixed-bin 100 ms input rate over capacity, minus 1, in %",
                window="open: fixed bins (one alignment; shown apart)",
                second_definition="fixed 100 ms bins",
                value=300.0,
                precision="about",
                points=True,
            )
        )
    return out


def _surge_claims(m: dict, setting: str | None) -> list[Claim]:
    rcp, piqi = m["rcp"], m["piqi-rcp"]
    tag = f" ({setting})" if setting else ""
    surge = "in the 5 s after the ten flows join at 30 s"
    if "surge_overshoot_sliding" in rcp:
        main = _overshoot(
            _scaled(rcp["surge_overshoot_sliding"], 100),
            OVERSHOOT_WINDOW_MS,
            setting,
            note="cause not established: the slide gives neither its averaging window nor how "
            "the ten flows join; the sensitivity rows give the value under each window (10 ms "
            "to 1 s) and each join spread",
        )
    else:  # runs from before the sliding windows: the fixed bins, said so
        main = _overshoot(
            _scaled(rcp["surge_overshoot"], 100),
            OVERSHOOT_WINDOW_MS,
            setting,
            note="cause not established; the slide gives neither its averaging window nor how "
            "the ten flows join",
            fixed=True,
        )
    claims: list[Claim] = [
        main,
        Point(
            id="RCP queue at the surge" + tag,
            setting=setting,
            quote=quote("002", _WHERE, "its queue size jumps to 11000 packets"),
            measure=f"peak bottleneck queue {surge}",
            ours=rcp["surge_peak_queue_packets"],
            unit="packets",
            value=11000.0,
            precision="about",
            note="all ten flows start in the same instant at RCP's full rate (the join spread "
            "is ours; see the sensitivity section of the report)",
        ),
        Ordering(
            id="PIQI-RCP better than RCP at the surge" + tag,
            setting=setting,
            quote=quote("002", _WHERE, "Compared to RCP, PIQI RCP performs much better"),
            measure=f"RCP's peak queue minus PIQI-RCP's, {surge}",
            ours=difference(rcp["surge_peak_queue_packets"], piqi["surge_peak_queue_packets"]),
            unit="packets",
            reconstruction="PIQI-RCP",
            first="RCP's peak queue",
            second="PIQI-RCP's",
            note="cause not established: our PIQI-RCP reconstruction (docs/algorithms/"
            "piqi-rcp.md) follows the surge with a larger queue; its law is not the paper's",
        ),
    ]
    return claims


EXPERIMENT = Experiment(id=ID, seed="002", title=TITLE, summary=CLAIM, run=run, claims=claims)
