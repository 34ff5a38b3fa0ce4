"""xcp-maxmin-gap: XCP is not max-min fair (seed 002, after Low, Andrew and Wydrowski).

Two links in a row, l1 (C1 = 155 Mbit/s) then l2 (C2 = C1 / (n (n + 1))), and n^2 flows, n in
{2, 3, 5}. The flow layout is *reconstructed*: the original example (Low, Andrew and Wydrowski,
"Understanding XCP: equilibrium and fairness", INFOCOM 2005 / IEEE/ACM ToN 2009) could not be
read; its abstract and seed 002 give only "n^2 flows and two links" and the capacities. We use
n "long" flows over l1 and l2 and n^2 - n "short" flows over l1 alone, which is the simplest
layout where XCP's shuffling makes the difference the paper describes (l1 keeps handing positive
feedback to the long flows that l2 throws away). RTT 40 ms for every flow, links 5 ms each
(our choices), 30 s, rates averaged over the last 10 s.

Compared: XCP's measured rates against XCP's own equilibrium (the fluid fixed point of the
implemented law, `xcclab.xcp_equilibrium`) and against max-min; every other protocol against the
max-min rates of its target-scaled capacities (the oracle). Seed 002: XCP's measured rates match
its theoretical (non-max-min) equilibrium.
"""

from __future__ import annotations

from pathlib import Path

from ...claims import Claim, Ordering, Reference
from ..common import explicit
from ..common.paper_claims import quote
from ..common.report import Comparison, atomic_dir, fmt, markdown_table, write_metrics
from ..experiment import Experiment
from . import chain

ID = "xcp-maxmin-gap"
TITLE = "XCP is not max-min fair (reconstructed layout, n in {2, 3, 5})"
CLAIM = "XCP matches its own equilibrium, not max-min; the others reach max-min"
C1 = 155.0
NS = (2, 3, 5)
T_END = 30.0


def layout(n: int) -> tuple[list[float], list[chain.ChainFlow]]:
    flows = [chain.ChainFlow(f"long{k}", 0, 1) for k in range(1, n + 1)]
    flows += [chain.ChainFlow(f"short{k}", 0, 0) for k in range(1, n * n - n + 1)]
    return [C1, C1 / (n * (n + 1))], flows


def run(out_dir, quick=False, *, log=None, progress=True):
    log = log or (lambda _m: None)
    scale = 0.2 if quick else 1.0
    out_dir = Path(out_dir)
    with atomic_dir(out_dir) as tmp:
        m: dict = {}
        comparisons = []
        figs: list[str] = []
        for n in NS:
            rates, flows = layout(n)
            log(f"{ID}: n = {n}, {len(flows)} flows, {T_END * scale:g} s per protocol")
            results = explicit.run_all(
                lambda p, rates=rates, flows=flows, n=n: chain.chain(
                    p,
                    f"{ID}-{n}",
                    rates,
                    flows,
                    rtt_s=0.04,
                    link_delay_s=0.005,
                    duration_s=T_END,
                    scale=scale,
                ),
                tmp,
                log,
                progress,
                tag=f"n{n}-",
            )
            a, b = (T_END - 10) * scale, T_END * scale
            cell = {}
            for p in explicit.PROTOCOLS:
                res = results[p.name]
                got = chain.measured_rates(res, flows, a, b)
                ref = chain.references(p, rates, flows)
                drops = int(res.links["drops"].sum())
                peak = max(
                    explicit.link_summary(res, p, name)["peak_queue_packets"]
                    for name in ("r0->r1", "r1->r2")
                )
                # One long and one short flow represent their groups (all flows of a group are
                # alike); the group means are reported.
                long_got = sum(got[:n]) / n
                short_got = sum(got[n:]) / (len(flows) - n)
                entry = {
                    "long_bps": long_got,
                    "short_bps": short_got,
                    "maxmin_long_bps": ref["maxmin"][0],
                    "maxmin_short_bps": ref["maxmin"][-1],
                    "drops": drops,
                    "peak_queue_packets": peak,
                }
                if "xcp_equilibrium" in ref:
                    entry["eq_long_bps"] = ref["xcp_equilibrium"][0]
                    entry["eq_short_bps"] = ref["xcp_equilibrium"][-1]
                    comparisons.append(
                        Comparison(
                            "XCP short-flow rate vs its equilibrium",
                            entry["eq_short_bps"] / 1e6,
                            short_got / 1e6,
                            "Mbit/s",
                            {"n": n},
                        )
                    )
                    comparisons.append(
                        Comparison(
                            "XCP short-flow rate vs max-min",
                            entry["maxmin_short_bps"] / 1e6,
                            short_got / 1e6,
                            "Mbit/s",
                            {"n": n},
                        )
                    )
                else:
                    comparisons.append(
                        Comparison(
                            f"{p.label} short-flow rate vs max-min",
                            entry["maxmin_short_bps"] / 1e6,
                            short_got / 1e6,
                            "Mbit/s",
                            {"n": n},
                        )
                    )
                cell[p.name] = entry
            m[f"n{n}"] = cell
            figs += explicit.figure_rates(
                tmp,
                results,
                ["long1", "short1"],
                "r0->r1",
                f"n = {n}: C1 = 155 Mbit/s, C2 = C1/{n * (n + 1)}",
                name=f"rates-n{n}",
            )
        # The max-min rates and XCP's equilibrium are references, not the paper's numbers:
        # they are claims of type "reference" (metrics.json "claims"), not comparisons.
        write_metrics(tmp, ID, quick=quick, measured=m, figures=figs)
        (tmp / "report.md").write_text(_report(m, figs, quick), encoding="utf-8")
    return out_dir / "report.md"


def _err(got: float, want: float) -> str:
    return fmt(100 * (got / want - 1), 1) + " %"


def _report(m: dict, figs: list[str], quick: bool) -> str:
    protos = explicit.PROTOCOLS
    rows = []
    for n in NS:
        c = m[f"n{n}"]
        x = c["xcp"]
        rows.append(
            [
                f"n = {n}",
                f"{fmt(x['short_bps'] / 1e6, 2)} / {fmt(x['long_bps'] / 1e6, 3)}",
                f"{fmt(x['eq_short_bps'] / 1e6, 2)} / {fmt(x['eq_long_bps'] / 1e6, 3)}",
                f"{fmt(x['maxmin_short_bps'] / 1e6, 2)} / {fmt(x['maxmin_long_bps'] / 1e6, 3)}",
                _err(x["short_bps"], x["eq_short_bps"]),
                _err(x["short_bps"], x["maxmin_short_bps"]),
            ]
        )
    xcp_table = markdown_table(
        [
            "",
            "measured",
            "XCP equilibrium",
            "max-min",
            "short vs equilibrium",
            "short vs max-min",
        ],
        rows,
    )
    rows = []
    for n in NS:
        c = m[f"n{n}"]
        rows.append(
            [f"n = {n}"]
            + [
                f"{_err(c[p.name]['short_bps'], c[p.name]['maxmin_short_bps'])} "
                f"({_err(c[p.name]['long_bps'], c[p.name]['maxmin_long_bps'])}); "
                f"{c[p.name]['drops']} drops; {fmt(c[p.name]['peak_queue_packets'], 0)} pkts"
                for p in protos
            ]
        )
    sections = [
        (
            "Results (Mbit/s of payload, last 10 s)",
            [
                "XCP, short / long flows:",
                xcp_table,
                "Every protocol, short-flow rate against max-min of its target-scaled "
                "capacities (long-flow rates in brackets), packets dropped and the peak queue "
                "on either link:",
                markdown_table(["", *[p.label for p in protos]], rows),
                _discussion(m),
            ],
        )
    ]
    return explicit.report(ID, TITLE, quick, __doc__, sections, figs, figures_heading="Figures")


def _discussion(m: dict) -> str:
    xs = [m[f"n{n}"]["xcp"] for n in NS]
    eq_err = max(abs(x["short_bps"] / x["eq_short_bps"] - 1) for x in xs)
    mm_err = min(abs(x["short_bps"] / x["maxmin_short_bps"] - 1) for x in xs)
    eq_gap = [1 - x["eq_short_bps"] / x["maxmin_short_bps"] for x in xs]
    s = (
        f"XCP's short flows are within {fmt(100 * eq_err, 1)} % of XCP's equilibrium in every "
        f"case and at least {fmt(100 * mm_err, 1)} % from max-min. The equilibrium itself lies "
        + ", ".join(f"{fmt(100 * g, 1)} %" for g in eq_gap)
        + " below max-min for n = "
        + ", ".join(str(n) for n in NS)
        + ": l1 gives every one of its flows the same positive feedback, the long flows' share is "
        "discarded at l2, so the short flows only stop growing when their negative feedback "
        "(proportional to rate) matches a positive share that does not grow with the spare "
        "capacity; l1 stays below capacity."
    )
    if eq_err < mm_err:
        s += (
            " The measured rates are closer to XCP's own equilibrium than to max-min, "
            "as the paper says."
        )
    else:
        s += (
            " The measured rates are not closer to XCP's equilibrium than to max-min: "
            "see the figures."
        )
    others = [p for p in explicit.PROTOCOLS if p.name != "xcp"]
    worst = {
        p.label: max(
            abs(m[f"n{n}"][p.name]["short_bps"] / m[f"n{n}"][p.name]["maxmin_short_bps"] - 1)
            for n in NS
        )
        for p in others
    }
    s += (
        " Largest short-flow error against max-min for the other protocols: "
        + ", ".join(f"{k} {fmt(100 * v, 1)} %" for k, v in worst.items())
        + "."
    )
    return s


_WHERE = "slide 'Max-Min Fairness in XCP'"
_NAMES = {"xcp": "XCP", "rcp": "RCP", "maxnet": "MaxNet", "piqi-rcp": "PIQI-RCP",
          "jetmax": "JetMax"}  # fmt: skip


def claims(metrics: dict) -> list[Claim]:
    m = metrics["measured"]
    q = quote("002", _WHERE, "We next verify the unfairness problem identified by Steven Low "
              "[...] Experimental results aligns perfectly with theoretical analysis")  # fmt: skip
    out: list[Claim] = []
    for cell, by in m.items():
        n = cell.lstrip("n")
        x = by["xcp"]
        out.append(
            Ordering(
                id=f"XCP at its equilibrium, not at max-min (n = {n})",
                quote=q,
                measure="short flows' mean rate, last 10 s: its distance from the max-min rate "
                "minus its distance from XCP's equilibrium (the theory's prediction)",
                ours=(
                    abs(x["short_bps"] - x["maxmin_short_bps"])
                    - abs(x["short_bps"] - x["eq_short_bps"])
                )
                / 1e6,  # fmt: skip
                unit="Mbit/s",
                first="distance from max-min",
                second="distance from XCP's equilibrium",
            )
        )
        out.append(
            Reference(
                id=f"XCP vs its equilibrium (n = {n})",
                quote=q,
                measure="short flows' mean rate, last 10 s",
                ours=x["short_bps"] / 1e6,
                unit="Mbit/s",
                value=x["eq_short_bps"] / 1e6,
                source="XCP's own equilibrium (the theory the slide cites)",
            )
        )
        for key, label in _NAMES.items():
            if key == "xcp" or key not in by:
                continue
            out.append(
                Reference(
                    id=f"{label} vs max-min (n = {n})",
                    quote=q,
                    measure="short flows' mean rate, last 10 s",
                    ours=by[key]["short_bps"] / 1e6,
                    unit="Mbit/s",
                    reconstruction={"piqi-rcp": "PIQI-RCP", "jetmax": "JetMax"}.get(key),
                    value=by[key]["maxmin_short_bps"] / 1e6,
                    source="max-min oracle, target-scaled",
                )
            )
    return out


EXPERIMENT = Experiment(id=ID, seed="002", title=TITLE, summary=CLAIM, run=run, claims=claims)
