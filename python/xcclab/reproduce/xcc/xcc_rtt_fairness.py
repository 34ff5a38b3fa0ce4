"""xcc-rtt-fairness: two flows with RTTs 30 ms and 200 ms on 1 Gbit/s (seed 002).

The 30 ms flow starts at 0 s, the 200 ms flow joins at 10 s (our choice), 40 s in all; bottleneck
buffer 20 000 packets. Seed 002: RCP needs nearly 10 s to saturate the link at first and 5 s when
a flow joins; XCP and JetMax reach full utilisation almost at once; all are RTT-fair in steady
state; PIQI-RCP's transient is better than RCP's.

Reported per protocol: time until the link's utilisation (100 ms averages) first reaches 95 % of
the protocol's target at the start, the time the joining flow needs to reach 90 % of its fair
share, the rate ratio of the two flows over the last 10 s, packets dropped and the peak queue.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...claims import Claim, Ordering, Point
from ..common import explicit
from ..common.paper_claims import quote
from ..common.report import Comparison, atomic_dir, fmt, markdown_table, write_metrics
from ..experiment import Experiment

ID = "xcc-rtt-fairness"
TITLE = "RTT unfairness: 30 ms and 200 ms on 1 Gbit/s (seed 002)"
CLAIM = "RCP ~10 s to saturate, ~5 s after a join; XCP fills at once; all RTT-fair"
T_END, T_JOIN = 40.0, 10.0


#: The slide gives no RCP parameters; the main runs use seed 000's alpha 0.4 (the `stanford`
#: preset) with ns-2's control interval T = min(d, 10 ms); seed 004's alpha 0.1 and 0.2 are run
#: as a sensitivity of the timing claims, and T = d (the RCP papers' statement of the law) with
#: alpha 0.1 and 0.4.
RCP_SETTINGS = ((0.1, None), (0.2, None), (0.1, "rtt"), (0.4, "rtt"))
RCP_ALPHAS = tuple(
    explicit.Protocol(
        f"rcp-alpha{a:g}" + (f"-T{t}" if t else ""),
        f"RCP, alpha {a:g}" + (", T = d" if t == "rtt" else ""),
        {"kind": "rcp", "preset": "stanford", "alpha": a} | ({"max_interval": t} if t else {}),
        "rcp",
    )
    for a, t in RCP_SETTINGS
)


def _setting_label(key: str) -> str:
    """ "rcp-alpha0.1-Trtt" -> "RCP alpha 0.1, T = d" (the key of a sensitivity run)."""
    alpha, _, interval = key.removeprefix("rcp-alpha").partition("-T")
    return f"RCP alpha {alpha}" + (", T = d" if interval == "rtt" else "")


def flows() -> list[explicit.Flow]:
    return [explicit.Flow("rtt30", 0.03), explicit.Flow("rtt200", 0.2, start_s=T_JOIN)]


def first_time(t: np.ndarray, x: np.ndarray, after: float, level: float) -> float:
    k = np.nonzero((t > after) & (x >= level))[0]
    return float(t[k[0]] - after) if len(k) else float("nan")


def measure(res, p: explicit.Protocol, scale: float, t_end: float = T_END) -> dict:
    s = explicit.link_summary(res, p, explicit.BOTTLENECK)
    ls = explicit.link_series(res, explicit.BOTTLENECK)
    cap = s["capacity_bps"]
    t100, u100 = explicit.averaged(ls["time_s"], ls["rate_bps"] / cap, 10)
    fill = first_time(t100, u100, 0.0, 0.95 * p.target)
    share = p.target * cap * p.payload_share / 2
    tj, rj = explicit.averaged(*explicit.flow_series(res, "rtt200"), 10)
    join = first_time(tj, rj, T_JOIN * scale, 0.9 * share)
    a, b = (t_end - 10) * scale, t_end * scale
    r30 = explicit.window_mean(*explicit.flow_series(res, "rtt30"), a, b)
    r200 = explicit.window_mean(*explicit.flow_series(res, "rtt200"), a, b)
    return {
        **s,
        "fill_s": fill,
        "join_s": join,
        "rate30_bps": r30,
        "rate200_bps": r200,
        "ratio": r30 / r200,
    }


def run(out_dir, quick=False, *, log=None, progress=True):
    log = log or (lambda _m: None)
    scale = 0.2 if quick else 1.0
    out_dir = Path(out_dir)
    with atomic_dir(out_dir) as tmp:
        log(f"{ID}: {T_END * scale:g} s per protocol")
        results = explicit.run_all(
            lambda p: explicit.dumbbell(p, ID, flows(), duration_s=T_END, scale=scale),
            tmp,
            log,
            progress,
        )
        m = {p.name: measure(results[p.name], p, scale) for p in explicit.PROTOCOLS}
        comparisons = [
            Comparison("RCP time to saturate at start", 10.0, m["rcp"]["fill_s"], "s"),
            Comparison("RCP time to settle after the join", 5.0, m["rcp"]["join_s"], "s"),
            *[
                Comparison(f"{p.label} rate ratio 30 ms / 200 ms", 1.0, m[p.name]["ratio"], "")
                for p in explicit.PROTOCOLS
            ],
        ]
        figs = explicit.figure_rates(
            tmp, results, ["rtt30", "rtt200"], explicit.BOTTLENECK, "RTT 30 ms and 200 ms, 1 Gbit/s"
        )
        alpha: dict[str, dict] = {}
        law: dict[str, dict] = {}
        if not quick:
            res = explicit.run_all(
                lambda p: explicit.dumbbell(p, ID, flows(), duration_s=T_END, scale=scale),
                tmp,
                log,
                False,
                RCP_ALPHAS,
            )
            alpha = {p.name: measure(res[p.name], p, scale) for p in RCP_ALPHAS}
            alt = explicit.PIQI_MULTIPLICATIVE
            res = explicit.run_all(
                lambda p: explicit.dumbbell(p, ID, flows(), duration_s=T_END, scale=scale),
                tmp,
                log,
                False,
                [alt],
            )
            law[alt.name] = measure(res[alt.name], alt, scale)
        write_metrics(
            tmp,
            ID,
            quick=quick,
            comparisons=comparisons,
            measured=m,
            alpha_sensitivity=alpha,
            piqi_law_sensitivity=law,
            figures=figs,
        )
        (tmp / "report.md").write_text(_report(m, alpha, figs, quick), encoding="utf-8")
    return out_dir / "report.md"


def _rcp_growth_time(alpha: float, d0: float = 0.2, t: float = 0.01, r0: float = 0.05) -> float:
    """Seconds for R to grow from r0 C to C on an idle link while d stays at d0 (ns-2's filter
    lowers d only slowly): each interval T multiplies R by 1 + (T / d0) alpha."""
    import math

    return t * math.log(1 / r0) / math.log(1 + t / d0 * alpha)


def _rcp_sentence(m: dict) -> str:
    rcp = m["rcp"]
    return (
        f"RCP needs {fmt(rcp['fill_s'], 2)} s to fill the link here, not nearly 10 s: the router "
        "offers R = 5 % of C at first and multiplies it by at most 1 + (T/d) alpha per "
        "interval T = 10 ms; with d near its initial 200 ms (ns-2's filter lowers d slowly) "
        f"that is {fmt(_rcp_growth_time(0.4), 1)} s for alpha = 0.4 (our `stanford` preset) and "
        f"{fmt(_rcp_growth_time(0.1), 1)} s for alpha = 0.1 (the `fct` preset of seed 004); "
        "seed 002 does not give its alpha, and a Linux host adds its own ramp. When the 200 ms "
        f"flow joins it gets the offered rate at once ({fmt(rcp['join_s'], 2)} s to 90 % of its "
        "share), while the paper saw 5 s. XCP opens its window by the router's positive "
        "feedback, alpha times the spare bandwidth every average RTT."
    )


def _rcp_sensitivity_sentence(alpha: dict) -> str:
    """What the swept gains and control intervals change (nothing when the runs are absent)."""
    if not alpha:
        return ""
    runs = "; ".join(
        f"{_setting_label(k)}: {fmt(r['fill_s'], 2)} s to fill, {fmt(r['join_s'], 2)} s after "
        "the join"
        for k, r in alpha.items()
    )
    return (
        f" Swept (the slide gives neither alpha nor T): {runs}. T = d instead of ns-2's "
        "min(d, 10 ms) changes the fill time little, as the growth per second, about "
        "alpha / d, does not depend on T; none of the settings gives the slide's 5 s after the "
        "join, which a rate offered at once to a new flow cannot take."
    )


def _report(m: dict, alpha: dict, figs: list[str], quick: bool) -> str:
    protos = explicit.PROTOCOLS
    rows = [
        ["time to 95 % of target utilisation (s)", *[fmt(m[p.name]["fill_s"], 2) for p in protos]],
        ["joining flow to 90 % of its share (s)", *[fmt(m[p.name]["join_s"], 2) for p in protos]],
        [
            "rates last 10 s, 30 ms / 200 ms (Mbit/s)",
            *[
                fmt(m[p.name]["rate30_bps"] / 1e6, 0)
                + " / "
                + fmt(m[p.name]["rate200_bps"] / 1e6, 0)
                for p in protos
            ],
        ],
        ["ratio 30 ms / 200 ms", *[fmt(m[p.name]["ratio"], 3) for p in protos]],
        ["packets dropped", *[str(m[p.name]["drops"]) for p in protos]],
        ["peak queue (packets)", *[fmt(m[p.name]["peak_queue_packets"], 0) for p in protos]],
    ]
    rcp, xcp = m["rcp"], m["xcp"]
    fair = [p.label for p in protos if abs(m[p.name]["ratio"] - 1) < 0.05]
    unfair = [
        f"{p.label} ({fmt(m[p.name]['ratio'], 2)})"
        for p in protos
        if abs(m[p.name]["ratio"] - 1) >= 0.05
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
                ],
            ),
            (
                "Against the paper",
                [
                    markdown_table(
                        ["quantity", "paper", "ours"],
                        [
                            [
                                "RCP: time to saturate at first",
                                "nearly 10 s",
                                fmt(rcp["fill_s"], 2) + " s",
                            ],
                            ["RCP: after a flow joins", "5 s", fmt(rcp["join_s"], 2) + " s"],
                            [
                                "XCP: time to saturate",
                                "almost instantaneous",
                                fmt(xcp["fill_s"], 2) + " s",
                            ],
                            [
                                "JetMax: time to saturate",
                                "almost instantaneous",
                                fmt(m["jetmax"]["fill_s"], 2) + " s",
                            ],
                            [
                                "PIQI-RCP: saturate / after the join",
                                "better than RCP",
                                fmt(m["piqi-rcp"]["fill_s"], 2)
                                + " s / "
                                + fmt(m["piqi-rcp"]["join_s"], 2)
                                + " s",
                            ],
                            [
                                "RTT-fair in steady state",
                                "all",
                                (
                                    "all within 5 %"
                                    if not unfair
                                    else f"within 5 %: {', '.join(fair) or 'none'}; "
                                    f"not: {', '.join(unfair)}"
                                ),
                            ],
                        ],
                    ),
                    explicit.loss_sentence(m)
                    + " "
                    + _rcp_sentence(m)
                    + _rcp_sensitivity_sentence(alpha),
                ],
            ),
        ],
        figs,
    )


_WHERE = "slide 'RTT Unfairness' (30 ms and 200 ms on 1 Gb/s)"
_NAMES = {"xcp": "XCP", "rcp": "RCP", "maxnet": "MaxNet", "piqi-rcp": "PIQI-RCP",
          "jetmax": "JetMax"}  # fmt: skip
_RECONSTRUCTED = {"piqi-rcp": "PIQI-RCP", "jetmax": "JetMax"}


def claims(metrics: dict) -> list[Claim]:
    m = metrics["measured"]
    sat = quote("002", _WHERE, "To saturate the link, it takes RCP nearly 10 sec initially and "
                "5 sec when a flow joins")  # fmt: skip
    # A run of some protocols only (the real-packet version's ``only``) scores their claims.
    out: list[Claim] = _timing_claims(m["rcp"], sat, None) if "rcp" in m else []
    for key, r in metrics.get("alpha_sensitivity", {}).items():
        out += _timing_claims(r, sat, _setting_label(key))
    out += _the_rest(m, metrics.get("piqi_law_sensitivity", {}))
    return out


def _timing_claims(r: dict, sat, setting: str | None) -> list[Claim]:
    tag = f" ({setting})" if setting else ""
    return [
        Point(
            id="RCP time to saturate at start" + tag,
            setting=setting,
            quote=sat,
            measure="time from 0 s until the link's 100 ms utilisation first reaches 95 % of "
            "RCP's target",
            ours=r["fill_s"],
            unit="s",
            value=10.0,
            precision="about",
            note="RCP with alpha 0.4 fills the idle link in a few control intervals; the slide's "
            "RCP parameters are not given (see the alpha sensitivity)",
        ),
        Point(
            id="RCP time to saturate after the join" + tag,
            setting=setting,
            quote=sat,
            measure="time from the second flow's join until it first reaches 90 % of its fair "
            "share (100 ms averages)",
            ours=r["join_s"],
            unit="s",
            value=5.0,
            precision="about",
            note="as above: the join is absorbed within a few RTTs at alpha 0.4",
        ),
    ]


def _the_rest(m: dict, law: dict) -> list[Claim]:
    out: list[Claim] = []
    for key in ("xcp", "jetmax"):
        if "rcp" not in m or key not in m:
            continue
        out.append(
            Ordering(
                id=f"{_NAMES[key]} fills faster than RCP",
                quote=quote(
                    "002",
                    _WHERE,
                    "XCP and JetMax achieve full link utilization almost instantaneously",
                ),
                measure="RCP's time to saturate at start minus this protocol's",
                ours=m["rcp"]["fill_s"] - m[key]["fill_s"],
                unit="s",
                reconstruction=_RECONSTRUCTED.get(key),
                first="RCP's fill time",
                second=f"{_NAMES[key]}'s",
            )
        )
    for key, label in _NAMES.items():
        if key not in m:
            continue
        out.append(
            Point(
                id=f"{label} RTT fairness",
                quote=quote("002", _WHERE, "All methods achieve RTT fairness in the steady state"),
                measure="mean rate of the 30 ms flow over the 200 ms flow's, last 10 s",
                ours=m[key]["ratio"],
                reconstruction=_RECONSTRUCTED.get(key),
                value=1.0,
                precision="table",
            )
        )
    if "rcp" not in m or "piqi-rcp" not in m:
        return out
    out.append(
        Ordering(
            id="PIQI-RCP transient better than RCP's",
            quote=quote(
                "002", _WHERE, "Compared to RCP, PIQI-RCP has better performance in transient phase"
            ),
            measure="RCP's time to saturate at start minus PIQI-RCP's",
            ours=m["rcp"]["fill_s"] - m["piqi-rcp"]["fill_s"],
            unit="s",
            reconstruction="PIQI-RCP",
            first="RCP's fill time",
            second="PIQI-RCP's",
        )
    )
    alt = law.get(explicit.PIQI_MULTIPLICATIVE.name)
    if alt:
        setting = "PIQI-RCP's alternative law R (1 + kappa (gamma C - y) / C)"
        out.append(
            Ordering(
                id="PIQI-RCP transient better than RCP's (multiplicative law)",
                quote=quote(
                    "002",
                    _WHERE,
                    "Compared to RCP, PIQI-RCP has better performance in transient phase",
                ),  # fmt: skip
                measure="RCP's time to saturate at start minus PIQI-RCP's",
                ours=m["rcp"]["fill_s"] - alt["fill_s"],
                unit="s",
                reconstruction="PIQI-RCP",
                setting=setting,
                first="RCP's fill time",
                second="PIQI-RCP's",
            )
        )
        out.append(
            Point(
                id="PIQI-RCP RTT fairness (multiplicative law)",
                quote=quote("002", _WHERE, "All methods achieve RTT fairness in the steady state"),
                measure="mean rate of the 30 ms flow over the 200 ms flow's, last 10 s",
                ours=alt["ratio"],
                reconstruction="PIQI-RCP",
                setting=setting,
                value=1.0,
                precision="table",
            )
        )
    return out


#: ``--emu`` (simulated and on real packets) is :mod:`xcclab.reproduce.xcc.xcc_rtt_fairness_emu`.
EXPERIMENT = Experiment(id=ID, seed="002", title=TITLE, summary=CLAIM, run=run, claims=claims)
