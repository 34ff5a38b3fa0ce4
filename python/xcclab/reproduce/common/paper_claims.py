"""Helpers for writing an experiment's claims: quotes, table cells as point claims, lookups.

The claim types and the scorer are :mod:`xcclab.claims`; this module only saves repetition in
the experiments' ``claims(metrics)`` functions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...claims import Estimate, Point, Quote

SEEDS = {
    "000": "seed 000 (MaxNet, Suchara et al.)",
    "001": "seed 001 (MaxNet vs Reno/RED with mice)",
    "002": "seed 002 (XCP, JetMax, RCP, PIQI-RCP compared; slides)",
    "003": "seed 003 (MarkMax)",
    "004": "seed 004 (SLBN)",
}


def quote(seed: str, where: str, text: str) -> Quote:
    return Quote(text, f"{SEEDS[seed]}, {where}")


def cell_text(cell: dict[str, Any]) -> str:
    return ", ".join(f"{k} {v}" for k, v in cell.items())


def table_points(
    metrics: dict[str, Any],
    seed: str,
    where: Callable[[dict[str, Any]], str],
    *,
    measure: str,
    quantities: tuple[str, ...] | None = None,
    reconstruction: str | None = None,
    ours: Callable[[dict[str, Any]], float | Estimate | None] | None = None,
    note: Callable[[dict[str, Any]], str] | None = None,
    evidence: Callable[[dict[str, Any]], tuple[str, ...]] | None = None,
    counted_in: str | None = None,
) -> list[Point]:
    """One "table" point claim per comparison of ``metrics`` (a paper's table cell beside
    ours), quoting the cell: ``where(comparison)`` names the table and column; ``note``, the
    cause shown when a cell fails."""
    out = []
    for c in metrics.get("comparisons", []):
        if quantities is not None and c["quantity"] not in quantities:
            continue
        cell = c.get("cell", {})
        label = f"{c['quantity']} ({cell_text(cell)})" if cell else c["quantity"]
        out.append(
            Point(
                id=label,
                quote=quote(seed, where(c), f"{c['quantity']} = {c['paper']:g}"),
                measure=measure,
                ours=ours(c) if ours else c.get("ours"),
                unit=c.get("unit", ""),
                reconstruction=reconstruction,
                value=float(c["paper"]),
                precision="table",
                printed=c.get("printed", f"{c['paper']:g}"),
                note=note(c) if note else "",
                evidence=evidence(c) if evidence else (),
                counted_in=counted_in,
            )
        )
    return out


def _num(v: float) -> str:
    return f"{v:.0f}" if abs(v) >= 1000 else f"{v:.4g}"


def cell_gap_note(
    single: float,
    seeded: dict[str, Any] | None = None,
    alt: float | None = None,
    *,
    t_f_s: float | None = None,
    alt_t_f_s: float | None = None,
    run_lengths: dict[float, dict[str, Any]] | None = None,
    jitter: str = "62 us access jitter",
) -> str:
    """The cause line of a packet-level table cell that misses the paper: what the cell does
    when the settings seed 003 leaves open (the phase of the flows, the run length) move.
    ``single`` is our deterministic run, ``seeded`` its summary over seeds (:func:`summarise`),
    ``alt`` the same cell at ``alt_t_f_s``, ``run_lengths`` seeded summaries at other t_f."""
    facts = []
    if seeded:
        lo, hi = seeded["ci95"]
        facts.append(
            f"{seeded['n']} seeds with {jitter} give {_num(seeded['mean'])} [{_num(lo)}, "
            f"{_num(hi)}] where one deterministic run gives {_num(single)}"
        )
    for t, s in sorted((run_lengths or {}).items()):
        facts.append(f"over the seeds it is {_num(s['mean'])} at t_f = {t:g} s")
    if alt is not None and alt_t_f_s is not None:
        now = f" instead of {t_f_s:g} s" if t_f_s else ""
        facts.append(f"one run of t_f = {alt_t_f_s:g} s{now} gives {_num(alt)}")
    if not facts:
        return (
            "cause not established: one deterministic run; our choices where seed 003 is "
            "silent are listed in the report's set-up"
        )
    return (
        "cause not established; evidence on the settings seed 003 leaves open: "
        + "; ".join(facts)
        + " (the paper reports one NS-2 run and gives neither its seed nor its length)"
    )


def difference(a: float | Estimate | None, b: float | Estimate | None) -> float | Estimate | None:
    """a - b for an ordering claim; an interval when either is one (the ends of the two
    intervals, conservatively)."""
    if a is None or b is None:
        return None
    ea = a if isinstance(a, Estimate) else Estimate(a, a, a, 1)
    eb = b if isinstance(b, Estimate) else Estimate(b, b, b, 1)
    if ea.n == 1 and eb.n == 1:
        return ea.mean - eb.mean
    return Estimate(ea.mean - eb.mean, ea.lo - eb.hi, ea.hi - eb.lo, max(ea.n, eb.n))
