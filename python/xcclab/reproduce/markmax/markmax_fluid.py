"""markmax-fluid: the MarkMax fluid model (seed 003, Section III and Table I).

Two sources on a 70 Mbit/s fluid link, RTT_1 = 12 ms, RTT_2 / RTT_1 in {3, 7, 10, 20, 50},
linear increase alpha_i = MSS / RTT_i^2 (MSS = 540 B; the paper writes 540e-6 / RTT_i^2 MB/s),
MarkMax-B cuts by beta = 1/2 each time the backlog reaches theta in {60, 240, 960} MSS. The
simulator is :mod:`xcclab.fluid.markmax` (event-driven, exact per-source backlogs).

Choices the paper leaves open (ours): both sources start at rate 0 with an empty buffer; the
source with the smallest alpha needs ``T_ramp = mu / alpha_min`` seconds to reach mu alone, so
we discard a warm-up of ``max(100 s, 4 T_ramp)`` and measure J and rho over the following
``max(1000 s, 10 T_ramp)`` (for RTT_2 = 600 ms: T_ramp = 5833 s). The guideline bounds of
Lemmas 1-4 are reported for each RTT ratio, and MarkMax-T (not in Table I) beside MarkMax-B.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...claims import Claim
from ...fluid import markmax as fm
from ..common.paper_claims import table_points
from ..common.report import (
    Comparison,
    atomic_dir,
    figure_links,
    fmt,
    gap_summary,
    markdown_table,
    save_figure,
    write_metrics,
)
from ..experiment import Experiment

ID = "markmax-fluid"
TITLE = "MarkMax fluid model: Jain's index and utilisation (seed 003, Table I)"
CLAIM = (
    "Fluid MarkMax-B keeps J near 1 (0.966-0.991) for RTT2/RTT1 = 3..50 while rho grows with "
    "theta (about 0.89, 0.94, 0.99+ for 60, 240, 960 MSS)"
)

MU = 70e6 / 8  # bytes/s
MSS = 540.0  # bytes
RTT1 = 0.012  # s
BETA = 0.5
RATIOS = (3, 7, 10, 20, 50)
THETAS_MSS = (60, 240, 960)
THETA_H_MSS, THETA_PKT = 280, 240  # Scenario 1's theta_h, for Lemma 4
#: Seed 003, Table I: (J, rho) per (RTT_2/RTT_1, theta in MSS).
PAPER: dict[tuple[int, int], tuple[float, float]] = {
    (3, 60): (0.9893, 0.890),
    (3, 240): (0.9906, 0.9500),
    (3, 960): (0.9815, 0.9964),
    (7, 60): (0.9874, 0.892),
    (7, 240): (0.9874, 0.9401),
    (7, 960): (0.9788, 0.9990),
    (10, 60): (0.9861, 0.890),
    (10, 240): (0.9869, 0.9400),
    (10, 960): (0.9760, 0.9990),
    (20, 60): (0.9846, 0.889),
    (20, 240): (0.9863, 0.9440),
    (20, 960): (0.9754, 0.9990),
    (50, 60): (0.9836, 0.899),
    (50, 240): (0.9821, 0.9433),
    (50, 960): (0.9664, 0.9925),
}


def alphas(ratio: int) -> list[float]:
    """alpha_i = MSS / RTT_i^2 in bytes/s^2."""
    return [MSS / RTT1**2, MSS / (ratio * RTT1) ** 2]


def window(ratio: int, quick: bool) -> tuple[float, float]:
    """(warm-up end, run end) in seconds."""
    t_ramp = MU / min(alphas(ratio))
    warm, span = max(100.0, 4 * t_ramp), max(1000.0, 10 * t_ramp)
    if quick:
        span /= 20
    return warm, warm + span


def run_cell(ratio: int, theta_mss: int, variant: str, quick: bool) -> dict[str, Any]:
    warm, end = window(ratio, quick)
    res = fm.MarkMaxFluid(MU, alphas(ratio), theta_mss * MSS, beta=BETA, variant=variant).run(
        end, t_start=warm
    )
    return {
        "J": res.jain,
        "rho": res.utilisation,
        "goodput_share_1": res.goodputs[0] / sum(res.goodputs),
        "mean_backlog_bytes": res.mean_backlog,
        "theta_events": res.theta_events,
        "max_cuts_per_event": max(res.cuts_per_event, default=0),
        "cuts": res.cuts,
        "cap_fallbacks": res.cap_fallbacks,
        "t_start_s": warm,
        "t_end_s": end,
        "events": res.events,
    }


def bounds(ratio: int) -> dict[str, float]:
    """Lemmas 2-4 for the two sources of this ratio (in MSS where a threshold)."""
    a = sum(alphas(ratio))
    theta = THETA_PKT * MSS
    return {
        "lemma2_theta_max_mss": fm.lemma2_theta_max(MU, a, BETA, 2) / MSS,
        "lemma3_theta_min_mss": fm.lemma3_theta_min(MU, a, BETA) / MSS,
        "lemma4_queue_after_rtt_max_mss": fm.lemma4_queue_bound(theta, a, ratio * RTT1) / MSS,
        "lambda_minus_max_over_mu": fm.lambda_minus_bounds(MU, a, theta)[1] / MU,
        "beta_tilde_min": fm.beta_tilde_bounds(MU, a, theta, BETA, 2)[0],
    }


def run(
    out_dir: str | Path,
    quick: bool = False,
    *,
    log: Callable[[str], None] | None = None,
    progress: bool = True,
) -> Path:
    """Compute Table I (MM-B, plus MM-T for reference) and write the report."""
    del progress  # the fluid runs take seconds
    log = log or (lambda _msg: None)
    out_dir = Path(out_dir)
    with atomic_dir(out_dir) as tmp:
        cells: dict[str, dict[str, Any]] = {}
        for r in RATIOS:
            for th in THETAS_MSS:
                for v in ("b", "t"):
                    log(f"{ID}: RTT2/RTT1 = {r}, theta = {th} MSS, MarkMax-{v.upper()}")
                    cells[f"{v}-r{r}-th{th}"] = run_cell(r, th, v, quick)
        lemmas = {str(r): bounds(r) for r in RATIOS}
        comparisons = [
            Comparison(
                q,
                PAPER[(r, th)][k],
                cells[f"b-r{r}-th{th}"][q],
                "",
                {"rtt_ratio": r, "theta_mss": th},
            )
            for k, q in enumerate(("J", "rho"))
            for r in RATIOS
            for th in THETAS_MSS
        ]
        figures = _figures(tmp, cells)
        write_metrics(
            tmp,
            ID,
            title=TITLE,
            quick=quick,
            comparisons=comparisons,
            cells=cells,
            lemmas=lemmas,
            figures=figures,
        )
        (tmp / "report.md").write_text(
            _report(cells, lemmas, comparisons, figures, quick), encoding="utf-8"
        )
    return out_dir / "report.md"


def _figures(tmp: Path, cells: dict[str, dict[str, Any]]) -> list[str]:
    import numpy as np

    from ...figures import pyplot as _pyplot

    plt = _pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    # The table's columns are categories: one slot per ratio, the paper as a bar, ours as a
    # dot beside it, one colour per theta; no line joins them.
    x = np.arange(len(RATIOS))
    width = 0.8 / len(THETAS_MSS)
    for n, th in enumerate(THETAS_MSS):
        off = x + (n - (len(THETAS_MSS) - 1) / 2) * width
        for ax, (k, q) in zip(axes, enumerate(("J", "rho"))):
            ax.hlines(
                [PAPER[(r, th)][k] for r in RATIOS],
                off - 0.4 * width,
                off + 0.4 * width,
                color=f"C{n}",
                lw=2.2,
                label=f"θ = {th} MSS, paper",
            )
            ax.plot(
                off,
                [cells[f"b-r{r}-th{th}"][q] for r in RATIOS],
                "o",
                ls="none",
                ms=4,
                color=f"C{n}",
                markeredgecolor="black",
                markeredgewidth=0.4,
                label=f"θ = {th} MSS, ours",
            )
    for ax, q in zip(axes, ("Jain's index J (dimensionless)", "utilisation ρ (fraction of C)")):
        ax.set_xticks(x, [str(r) for r in RATIOS])
        ax.set_xlabel("RTT2 / RTT1 (Table I column)")
        ax.set_ylabel(q)
        ax.grid(True, axis="y", lw=0.3)
    axes[1].legend(fontsize=7)
    fig.suptitle("MarkMax-B fluid model: Table I (bars) vs xcclab (dots)")
    fig.tight_layout()
    names = [p.name for p in save_figure(fig, tmp, "comparison")]
    plt.close(fig)
    return names


def _report(
    cells: dict[str, dict[str, Any]],
    lemmas: dict[str, dict[str, float]],
    comparisons: list[Comparison],
    figures: list[str],
    quick: bool,
) -> str:
    by = {(c.quantity, c.cell["rtt_ratio"], c.cell["theta_mss"]): c for c in comparisons}
    headers = ["RTT2/RTT1"]
    for th in THETAS_MSS:
        headers += [f"θ={th} J paper", "J ours", "ρ paper", "ρ ours"]
    rows = []
    for r in RATIOS:
        line = [str(r)]
        for th in THETAS_MSS:
            j, rho = by[("J", r, th)], by[("rho", r, th)]
            line += [fmt(j.paper, 4), fmt(j.ours, 4), fmt(rho.paper, 4), fmt(rho.ours, 4)]
        rows.append(line)
    table = markdown_table(headers, rows)
    extra = markdown_table(
        [
            "cell",
            "share of source 1",
            "mean backlog (MSS)",
            "θ events",
            "max cuts/event",
            "cuts 1/2",
            "MM-T J",
            "MM-T ρ",
            "window (s)",
        ],
        [
            [
                f"RTT2/RTT1 = {r}, θ = {th}",
                fmt(cells[f"b-r{r}-th{th}"]["goodput_share_1"], 3),
                fmt(cells[f"b-r{r}-th{th}"]["mean_backlog_bytes"] / MSS, 1),
                str(cells[f"b-r{r}-th{th}"]["theta_events"]),
                str(cells[f"b-r{r}-th{th}"]["max_cuts_per_event"]),
                "/".join(map(str, cells[f"b-r{r}-th{th}"]["cuts"])),
                fmt(cells[f"t-r{r}-th{th}"]["J"], 4),
                fmt(cells[f"t-r{r}-th{th}"]["rho"], 4),
                f"{cells[f'b-r{r}-th{th}']['t_start_s']:.0f}–{cells[f'b-r{r}-th{th}']['t_end_s']:.0f}",
            ]
            for r in RATIOS
            for th in THETAS_MSS
        ],
    )
    lem = markdown_table(
        [
            "RTT2/RTT1",
            "Lemma 2 θ_max (MSS)",
            "Lemma 3 θ_min (MSS)",
            "Lemma 4 x(t_θ + RTT_max) ≤ (MSS, θ = 240)",
            "λ⁻ ≤ (× μ)",
            "β̃ ≥",
        ],
        [
            [
                str(r),
                fmt(b["lemma2_theta_max_mss"], 0),
                fmt(b["lemma3_theta_min_mss"], 0),
                fmt(b["lemma4_queue_after_rtt_max_mss"], 0),
                fmt(b["lambda_minus_max_over_mu"], 4),
                fmt(b["beta_tilde_min"], 4),
            ]
            for r, b in ((int(k), v) for k, v in lemmas.items())
        ],
    )
    disc = ["These sentences are generated from the numbers above."]
    if quick:
        disc.append("Quick mode: the measurement windows are 20 times shorter.")
    rising = [
        r
        for r in RATIOS
        if all(
            cells[f"b-r{r}-th{a}"]["rho"] < cells[f"b-r{r}-th{b}"]["rho"]
            for a, b in zip(THETAS_MSS, THETAS_MSS[1:])
        )
    ]
    disc.append(
        "The paper's observation that ρ grows with θ holds for RTT2/RTT1 = "
        f"{', '.join(map(str, rising)) or 'none'} of {', '.join(map(str, RATIOS))}."
    )
    multi = [k for k, c in cells.items() if c["max_cuts_per_event"] > 1]
    disc.append(
        "A single cut always sufficed (every θ event had one cut)"
        if not multi
        else f"More than one cut was needed at some θ event in {len(multi)} runs "
        f"({', '.join(multi)})"
    )
    top = max(THETAS_MSS)
    disc[-1] += "; Lemma 2's sufficient θ (table above, stated for MarkMax-T) is " + (
        f"above every θ used (up to {top} MSS), so one cut is guaranteed there."
        if all(b["lemma2_theta_max_mss"] >= top for b in lemmas.values())
        else f"below {top} MSS for some ratio, where it guarantees nothing."
    )
    falls = [
        th
        for th in THETAS_MSS
        if cells[f"b-r{RATIOS[-1]}-th{th}"]["J"] < cells[f"b-r{RATIOS[0]}-th{th}"]["J"]
    ]
    disc.append(
        f"J is lower at RTT2/RTT1 = {RATIOS[-1]} than at {RATIOS[0]} for θ = "
        f"{', '.join(map(str, falls)) or 'none'} MSS; the smallest J of all cells is "
        f"{fmt(min(cells[f'b-r{r}-th{th}']['J'] for r in RATIOS for th in THETAS_MSS), 4)}."
    )
    disc += gap_summary(
        comparisons,
        describe_cell=lambda c: f"({c.cell['rtt_ratio']}, θ={c.cell['theta_mss']})",
    )
    figs = figure_links(figures)
    return "\n".join(
        [
            f"# {TITLE}",
            "",
            f"Generated by `xcc reproduce {ID}`{' --quick' if quick else ''}.",
            "",
            "## Set-up",
            "",
            __doc__.split("\n\n", 1)[1].strip(),
            "",
            "## Table I: MarkMax-B, J and ρ",
            "",
            table,
            "",
            "## Per-cell details (and MarkMax-T, not in the paper)",
            "",
            extra,
            "",
            "## Guideline bounds (Lemmas 1–4) for the two sources",
            "",
            lem,
            "",
            "## Figures",
            "",
            figs,
            "",
            "## Discussion",
            "",
            "\n\n".join(disc),
            "",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m xcclab.reproduce.markmax.markmax_fluid")
    parser.add_argument("--out", metavar="DIR", required=True, help="run the experiment into DIR")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    print(run(args.out, quick=args.quick, log=lambda m: print(m, file=sys.stderr)))
    return 0


def claims(metrics: dict) -> list[Claim]:
    return table_points(
        metrics,
        "003",
        lambda c: (
            f"Section III, Table I (RTT_2/RTT_1 = {c['cell']['rtt_ratio']}, "
            f"theta = {c['cell']['theta_mss']} MSS)"
        ),
        measure="our fluid model, exact per-connection backlog (network calculus)",
    )


EXPERIMENT = Experiment(id=ID, seed="003", title=TITLE, summary=CLAIM, run=run, claims=claims)


if __name__ == "__main__":
    raise SystemExit(main())
