"""markmax-s2: MarkMax Scenario 2 (seed 003, Table IV): Scenario 1 plus reverse traffic.

As ``markmax-s1`` with one more TCP NewReno+ECN connection s_3 -> d_3 sending in the opposite
direction over D -> S (its data shares the 240-packet DropTail queue D -> S with the ACKs of
connections 1 and 2; its ACKs cross the MarkMax queue S -> D), delta_3 = delta_2,
delta_2 / delta_1 in {7, 10, 20, 50}. DT vs MM-B.

J is Jain's index of the two forward connections (the paper studies how connection 3 disturbs
their ACK clock; ``J_all`` in metrics.json includes connection 3). rho and the mean queue are
those of S -> D.

``xcc reproduce markmax-s2 --write-scenarios scenarios/`` regenerates the
committed ``scenarios/markmax-s2-{dt,mmb}-r*.toml``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...claims import Claim, Ordering
from ..common.paper_claims import difference, quote, table_points
from ..common.report import (
    Comparison,
    atomic_dir,
    figure_links,
    fmt,
    gap_summary,
    markdown_table,
    write_metrics,
)
from ..common.seeds import from_summary
from ..common.templates import report
from ..experiment import Experiment
from . import packet as mp
from .cell_notes import cell_note

ID = "markmax-s2"
TITLE = "MarkMax Scenario 2: reverse traffic, DT vs MM-B (seed 003, Table IV)"
CLAIM = "With reverse-direction traffic MM-B stays fairer than DropTail in every cell"

RATIOS = (7, 10, 20, 50)
KINDS = ("dt", "mmb")
#: Seed 003, Table IV: J, rho, mean queue (bytes).
PAPER: dict[str, dict[int, dict[str, float]]] = {
    "dt": {
        7: {"J": 0.8561, "rho": 0.9338, "queue_bytes": 34443},
        10: {"J": 0.7769, "rho": 0.9497, "queue_bytes": 32174},
        20: {"J": 0.6910, "rho": 0.9146, "queue_bytes": 28699},
        50: {"J": 0.5244, "rho": 0.9262, "queue_bytes": 29021},
    },
    "mmb": {
        7: {"J": 0.9637, "rho": 0.9600, "queue_bytes": 41966},
        10: {"J": 0.9632, "rho": 0.9510, "queue_bytes": 39486},
        20: {"J": 0.9228, "rho": 0.9702, "queue_bytes": 41350},
        50: {"J": 0.8572, "rho": 0.9937, "queue_bytes": 50408},
    },
}
QUANTITIES = (  # key, label, unit, digits
    ("J", "J", "", 4),
    ("rho", "rho", "", 4),
    ("queue_bytes", "mean queue", "B", 0),
)


def scenario(ratio: int, kind: str, t_f_s: int = mp.T_F_S):
    """The cell delta_2 / delta_1 = ``ratio`` (delta_3 = delta_2) with S -> D running ``kind``."""
    d2 = ratio * mp.DELTA1_NS
    return mp.scenario(
        f"{ID}-{kind}-r{ratio}",
        [mp.DELTA1_NS, d2],
        kind,
        t_f_s,
        reverse_delta_ns=d2,
        description=(
            f"MarkMax Scenario 2 with {mp.LABELS[kind]} (seed 003, Table IV): delta_1 = 12 ms, "
            f"delta_2 = delta_3 = {ratio} x delta_1, connection 3 from D to S"
        ),
    )


def scenario_header(ratio: int, kind: str) -> str:
    return (
        f"{ID}, {mp.LABELS[kind]}, delta_2/delta_1 = {ratio}, delta_3 = delta_2. Generated "
        "by\n`xcc reproduce markmax-s2 --write-scenarios scenarios/`:\nedit the generator "
        "(python/xcclab/reproduce/markmax/markmax_s2.py), not this file.\n"
        + mp.CHOICES
        + "\n- connection 3 (s3 -> d3) starts at 0 s like the others; s3 hangs off D, d3 off S."
    )


def write_scenarios(directory: str | Path) -> list[Path]:
    return mp.write_grid_scenarios(directory, ID, KINDS, RATIOS, scenario, scenario_header)


def run(
    out_dir: str | Path,
    quick: bool = False,
    *,
    log: Callable[[str], None] | None = None,
    progress: bool = True,
) -> Path:
    """Run the eight cells (and the same at 100 s unless ``quick``); return ``report.md``."""
    log = log or (lambda _msg: None)
    out_dir = Path(out_dir)
    with atomic_dir(out_dir) as tmp:
        t_f_s, measured, results, alt, comparisons = mp.run_grid(
            tmp,
            KINDS,
            RATIOS,
            scenario,
            scenario_header,
            PAPER,
            QUANTITIES,
            quick,
            log=log,
            progress=progress,
        )
        figures = mp.queue_trace_figure(
            tmp,
            results,
            [f"{k}-r20" for k in KINDS],
            "S->D queue, delta_2/delta_1 = 20",
            "queue-r20",
        )
        seeded = {} if quick else run_seeded(log)
        figures = _comparison_figure(tmp, measured, seeded) + figures
        write_metrics(
            tmp,
            ID,
            seeded=seeded,
            title=TITLE,
            quick=quick,
            t_f_s=t_f_s,
            comparisons=comparisons,
            cells=measured,
            alt_runs={"t_f_s": mp.ALT_T_F_S, "cells": alt},
            checks=checks(measured),
            figures=figures,
        )
        (tmp / "report.md").write_text(
            _report(measured, comparisons, figures, t_f_s, quick, alt), encoding="utf-8"
        )
    return out_dir / "report.md"


def _comparison_figure(tmp: Path, measured: dict, seeded: dict) -> list[str]:
    return mp.comparison_figure(
        tmp,
        RATIOS,
        KINDS,
        [key for key, *_ in QUANTITIES],
        lambda kind, r, key: PAPER[kind][r][key],
        lambda kind, r: measured[f"{kind}-r{r}"],
        lambda kind, r: seeded.get(f"{kind}-r{r}"),
        "MarkMax Scenario 2: paper (NS-2, bars) vs xcclab (dots; error bars: 95 % CI over 10 "
        "seeds where seeded)",
        "delta_2 / delta_1 (table column)",
    )


def checks(measured: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Table IV's claim: MM-B is fairer than DT in every cell."""
    return {
        "mmb_beats_dt_J": {
            r: measured[f"mmb-r{r}"]["J"] > measured[f"dt-r{r}"]["J"] for r in RATIOS
        },
        "mmb_rho_above_dt": {
            r: measured[f"mmb-r{r}"]["rho"] > measured[f"dt-r{r}"]["rho"] for r in RATIOS
        },
    }


def _report(
    measured: dict[str, dict[str, Any]],
    comparisons: list[Comparison],
    figures: list[str],
    t_f_s: int,
    quick: bool,
    alt: dict[str, dict[str, Any]],
) -> str:
    tables = {
        label: mp.quantity_table(comparisons, label, RATIOS, "delta_ratio", KINDS, d, "δ2/δ1")
        for _, label, _, d in QUANTITIES
    }
    details = markdown_table(
        [
            "cell",
            "g1",
            "g2",
            "g3 (Mb/s)",
            "J(1,2,3)",
            "cuts f1/f2/f3",
            "marks",
            "drops S→D",
            "drops D→S",
            "run",
        ],
        [
            [
                key,
                *(fmt(g / 1e6, 2) for g in c["goodput_bps"]),
                fmt(c["J_all"], 3),
                mp.cut_shares(c, 3),
                str(c["bottleneck_marks"]),
                str(c["bottleneck_drops"]),
                str(c["reverse_drops"]),
                f"[{c['run_dir']}]({c['run_dir']}/run.json)",
            ]
            for key, c in measured.items()
        ],
    )
    long_rows = (
        [
            [
                f"{mp.LABELS[k]} δ2/δ1 = {r}",
                fmt(PAPER[k][r]["J"], 4),
                fmt(alt[f"alt-{k}-r{r}"]["J"], 4),
                fmt(PAPER[k][r]["rho"], 4),
                fmt(alt[f"alt-{k}-r{r}"]["rho"], 4),
                fmt(PAPER[k][r]["queue_bytes"], 0),
                fmt(alt[f"alt-{k}-r{r}"]["queue_bytes"], 0),
            ]
            for r in RATIOS
            for k in KINDS
        ]
        if alt
        else []
    )
    long_text = (
        f"Every cell again with t_f = {mp.ALT_T_F_S} s (not in the comparison above):\n\n"
        + markdown_table(
            ["cell", "J paper", "J ours", "ρ paper", "ρ ours", "q̄ paper", "q̄ ours"], long_rows
        )
        if alt
        else "Skipped in quick mode."
    )
    quick_note = f"t_f = {t_f_s} s instead of {mp.T_F_S} s; not a reproduction." if quick else ""
    figs = figure_links(figures)
    c = checks(measured)
    disc = ["These sentences are generated from the numbers above."]
    wins = [r for r, ok in c["mmb_beats_dt_J"].items() if ok]
    disc.append(
        "MM-B is fairer than DT (J of connections 1 and 2) at δ2/δ1 = "
        f"{', '.join(map(str, wins)) or 'none'} of {', '.join(map(str, RATIOS))}; the paper has "
        "MM-B ahead in every cell."
    )
    rho_up = [r for r, ok in c["mmb_rho_above_dt"].items() if ok]
    disc.append(
        f"MM-B's utilisation is above DT's at δ2/δ1 = {', '.join(map(str, rho_up)) or 'none'}."
    )
    rev = sum(measured[f"{k}-r{r}"]["reverse_drops"] for k in KINDS for r in RATIOS)
    disc.append(
        f"The reverse DropTail queue D → S dropped {rev} packets in all runs together (data of "
        "connection 3 and ACKs of connections 1 and 2 compete there)."
    )
    if alt:
        parts = [
            f"{mp.LABELS[k]} δ2/δ1 = {r}: J {fmt(measured[f'{k}-r{r}']['J'], 3)} at {mp.T_F_S} s, "
            f"{fmt(alt[f'alt-{k}-r{r}']['J'], 3)} at {mp.ALT_T_F_S} s (paper "
            f"{fmt(PAPER[k][r]['J'], 3)})"
            for r in RATIOS
            for k in KINDS
        ]
        disc.append("Run length: " + "; ".join(parts) + ".")
    disc += gap_summary(
        comparisons,
        describe_cell=lambda cc: f"{cc.cell['queue']} δ2/δ1 = {cc.cell['delta_ratio']}",
    )
    return report(
        TITLE,
        f"xcc reproduce {ID}",
        options=" --quick" if quick else "",
        quick_note=quick_note,
        sections=[
            (
                "Set-up",
                [
                    "Scenario 1 (two forward connections, δ1 = 12 ms, S → D at 70 Mbit/s running "
                    "DT with a 240-packet buffer or MM-B with θ = 240/200/280 packets and no "
                    "buffer limit) plus connection 3 from s3 (behind D) to d3 (behind S), δ3 = "
                    "δ2, whose data shares the 240-packet DropTail queue D → S with the forward "
                    f"ACKs. t_f = {t_f_s} s. J over connections 1 and 2.",
                    mp.CHOICES,
                ],
            ),
            (
                "Table IV: Jain's index",
                [
                    tables["J"],
                ],
            ),
            (
                "Table IV: utilisation ρ",
                [
                    tables["rho"],
                ],
            ),
            (
                "Table IV: mean queue (bytes)",
                [
                    tables["mean queue"],
                ],
            ),
            (
                "Per-cell details",
                [
                    details,
                ],
            ),
            (
                "Run-length sensitivity",
                [
                    long_text,
                ],
            ),
            (
                "Figures",
                [
                    figs,
                ],
            ),
            (
                "Discussion",
                [
                    "\n\n".join(disc),
                ],
            ),
        ],
    )


TABLES = {"J": "Table IV", "rho": "Table IV", "mean queue": "Table IV"}


def _table_where(c: dict) -> str:
    cell = c["cell"]
    return (
        f"Section IV-C, Table IV, {cell['queue']} column, delta_2/delta_1 = {cell['delta_ratio']}"
    )


#: The cells furthest from the paper in the deterministic runs, run over seeds with jitter.
#: Cells run over seeds: DropTail's at every ratio (issue 31: with reverse traffic one run of
#: DT moves J, rho and the queue outside the seeds' interval, so no single run decides a DT
#: cell); MM-B's at 50 (MM-B moves by 3e-4 with the phase).
SEEDED_CELLS = (("dt", 7), ("dt", 10), ("dt", 20), ("dt", 50), ("mmb", 50))
QUANTITY_KEY = {"J": "J", "rho": "rho", "mean queue": "queue_bytes"}


def run_seeded(log: Callable[[str], None]) -> dict[str, Any]:
    d1 = mp.DELTA1_NS
    cases = {
        f"{k}-r{r}": {
            "deltas_ns": [d1, r * d1],
            "kind": k,
            "t_f_s": mp.T_F_S,
            "reverse_delta_ns": r * d1,
        }
        for k, r in SEEDED_CELLS
    }
    return mp.run_seeded_cells(cases, log, ID, tuple(QUANTITY_KEY.values()))


_KIND = {v: k for k, v in mp.LABELS.items()}


def _ours(metrics: dict, c: dict):
    kind = {v: k for k, v in mp.LABELS.items()}[c["cell"]["queue"]]
    s = metrics.get("seeded", {}).get(f"{kind}-r{c['cell']['delta_ratio']}")
    return from_summary(s[QUANTITY_KEY[c["quantity"]]]) if s else c.get("ours")


def _seeded_text(metrics: dict) -> str:
    """The cells of this report run over seeds ("DT at 20, MM-B at 50")."""
    names = []
    for k, r in SEEDED_CELLS:
        if f"{k}-r{r}" in metrics.get("seeded", {}):
            names.append(f"{mp.LABELS[k]} at {r}")
    return ", ".join(names) or "none"


def claims(metrics: dict) -> list[Claim]:
    out: list[Claim] = table_points(
        metrics,
        "003",
        _table_where,
        measure="t_f = 1000 s, one run per cell; mean and 95 % CI over 10 seeds with 62 us "
        f"access jitter where seeded ({_seeded_text(metrics)})",
        ours=lambda c: _ours(metrics, c),
        note=lambda c: cell_note(
            metrics,
            c,
            f"{_KIND[c['cell']['queue']]}-r{c['cell']['delta_ratio']}",
        ),
    )
    j = {
        (c["cell"]["queue"], c["cell"]["delta_ratio"]): _ours(metrics, c)
        for c in metrics["comparisons"]
        if c["quantity"] == "J"
    }
    rho = {
        (c["cell"]["queue"], c["cell"]["delta_ratio"]): _ours(metrics, c)
        for c in metrics["comparisons"]
        if c["quantity"] == "rho"
    }
    for r in RATIOS:
        # "outperforms" on both of Table IV's columns, as in Scenario 1 (issue 31).
        out.append(
            Ordering(
                id=f"rho MM-B above DT (ratio {r})",
                quote=quote(
                    "003",
                    "Section IV-C, Table IV",
                    "Table IV shows that as in the previous scenario MM-B outperforms DT.",
                ),
                measure="utilisation rho = D(t_f) / (mu t_f): MM-B's minus DT's",
                ours=difference(rho["MM-B", r], rho["DT", r]),
                first="rho MM-B",
                second="rho DT",
            )
        )
    for r in RATIOS:
        out.append(
            Ordering(
                id=f"J MM-B above DT (ratio {r})",
                quote=quote(
                    "003",
                    "Section IV-C, Table IV",
                    "Table IV shows that as in the previous scenario MM-B outperforms DT.",
                ),
                measure="Jain's index of the two forward goodputs",
                ours=difference(j["MM-B", r], j["DT", r]),
                first="J MM-B",
                second="J DT",
            )
        )
    return out


EXPERIMENT = Experiment(
    id=ID,
    seed="003",
    title=TITLE,
    summary=CLAIM,
    run=run,
    claims=claims,
    scenarios=write_scenarios,
)
