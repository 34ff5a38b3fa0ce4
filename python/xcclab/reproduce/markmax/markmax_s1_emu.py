"""markmax-s1 on real packets: ``xcc reproduce markmax-s1 --emu`` (issue 34).

Seed 003's Scenario 1 (two NewReno + ECN connections, delta_2 / delta_1 in {3, 7, 10, 20},
S -> D at 70 Mbit/s with DropTail, MM-B or MM-T) with **Linux NewReno and ECN** through the
emulator's router, which runs the very same MarkMax link algorithm as the simulator on every
packet (docs/emu.md). Each cell runs :data:`RUNS` times on real packets and :data:`RUNS` times
simulated (seeds 1..RUNS with the seeded cells' 62 us access jitter, as ``markmax-s1``'s
seeded cells), and every quantity is a mean with its 95 % Student-t interval
(:func:`xcclab.claims.estimate`); the paper's orderings are judged on those intervals by the
same scorer as the simulated report, separately for the simulated and the real runs.

What Linux does of the scenario (docs/emu.md, "Linux TCP"): the 500-byte MSS is the sockets'
``TCP_MAXSEG`` (540-byte packets; Linux's timestamps take 12 of the 500 bytes), SACK off
(``tcp_sack``), NewReno's initial window of 2 is the senders' route ``initcwnd``, and every
segment is acknowledged at once (the receivers' route ``quickack``), ns-2's sink. What differs
and is not set: Linux's NewReno is ``reno`` with its own RTO and recovery (RACK, PRR), and an
ECN echo halves once per window, as in the simulator.

Run length: the simulated report runs t_f = 1000 s, which on real packets would take 200 min
per repetition of the grid; the real-packet cells run :data:`T_F_S` (quick: one ratio,
:data:`QUICK_T_F_S`), and their simulated twins the same, so the two columns compare like with
like (the 1000 s numbers are in ``markmax-s1``'s own report).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ...claims import Claim, Estimate, Ordering, estimate
from ..common.paper_claims import difference, quote
from ..common.report import atomic_dir, fmt, markdown_table, write_metrics
from ..common.stacks import claim_rows, emu_stats, failure_text, run_real, score_stacks
from ..common.templates import render
from ..experiment import Variant
from . import markmax_s1
from . import packet as mp

ID = "markmax-s1"
KINDS = ("dt", "mmb", "mmt")
RATIOS = (3, 7, 10, 20)
QUICK_RATIOS = (7,)
#: Repetitions of every cell, real and simulated (issue 34: at least 5, judged on intervals).
RUNS = 5
#: Run length on real packets (s): long enough for connection 2 (delta_2 up to 240 ms) to
#: leave slow start and share the link for most of the run, short enough for 12 cells x 5
#: runs in an hour.
T_F_S = 60
QUICK_T_F_S = 8
QUANTITIES = ("J", "rho", "queue_bytes", "delay_ms")
STACKS = ("sim", "real")
SETUP = (
    "Seed 003's Scenario 1 (two NewReno + ECN connections s_i -> d_i, delta_1 = 12 ms, "
    "S -> D at 70 Mbit/s with a 240-packet DropTail, or MarkMax B or T with theta = 240, "
    "theta_l = 200, theta_h = 280 packets and an unlimited buffer) with Linux NewReno + ECN "
    "(`reno`) through the emulator's router, which runs the simulator's MarkMax on every packet. "
    "Linux follows the scenario's transport where it has a knob (docs/emu.md): the 500-byte MSS "
    "(`TCP_MAXSEG`: 540-byte packets, 12 bytes of it Linux's timestamps), SACK off, an initial "
    "window of 2 (route `initcwnd`), one ACK per segment (route `quickack`, ns-2's sink). Not "
    "the same: Linux's loss recovery and RTO (RACK, PRR, its RTO estimator) are not ns-2's. "
    "The simulated column runs the same cells with the seeded cells' 62 µs access jitter, one "
    "seed per run. The simulated report's t_f = 1000 s would take 200 minutes per repetition "
    "of the grid on real packets, so both columns here run the shorter t_f below (the 1000 s "
    "numbers are in markmax-s1's own report)."
)


def cell_scenario(kind: str, ratio: int, t_f_s: int, *, seed: int = 1, jitter: bool = False):
    """The cell as :mod:`markmax_s1` builds it, at run length ``t_f_s``."""
    return mp.scenario(
        f"{ID}-{kind}-r{ratio}-emu",
        [mp.DELTA1_NS, ratio * mp.DELTA1_NS],
        kind,
        t_f_s,
        seed=seed,
        jitter_ns=mp.SEED_JITTER_NS if jitter else 0,
        description=f"markmax-s1 {mp.LABELS[kind]}, delta_2/delta_1 = {ratio}, on real packets",
    )


def run_markmax_s1_emu(
    out_dir: str | Path,
    quick: bool = False,
    *,
    log: Callable[[str], None] | None = None,
) -> Path:
    """Every cell :data:`RUNS` times simulated and on real packets; ``out_dir/emu/report.md``."""
    import xcclab
    from xcclab.emu import emulate, preflight

    log = log or (lambda _m: None)
    ratios = QUICK_RATIOS if quick else RATIOS
    t_f_s = QUICK_T_F_S if quick else T_F_S
    cells = [(kind, r) for r in ratios for kind in KINDS]
    # Every precondition (root, TUN, what the emulator carries) before any run.
    for kind, r in cells:
        preflight(cell_scenario(kind, r, t_f_s))
    out = Path(out_dir) / "emu"
    with atomic_dir(out) as tmp:
        runs: dict[str, dict[str, list[dict[str, Any]]]] = {s: {} for s in STACKS}
        failures: dict[str, list[str]] = {}
        for kind, r in cells:
            key = f"{kind}-r{r}"
            sim_runs, real_runs = [], []
            for i in range(1, RUNS + 1):
                log(f"{ID} --emu: {key}, run {i}/{RUNS}: simulated, then real ({t_f_s} s)")
                sim = xcclab.run(cell_scenario(kind, r, t_f_s, seed=i, jitter=True), progress=False)
                sim_runs.append(_measure(sim, t_f_s))
                run_dir = tmp / "runs" / f"{key}-{i}"
                sc = cell_scenario(kind, r, t_f_s, seed=i)
                real, failed = run_real(lambda sc=sc, d=run_dir: emulate(sc, out=d), log=log)
                if failed:
                    failures[f"{key} run {i}"] = failed
                if real is not None:
                    m = _measure(real, t_f_s)
                    m["run_dir"] = f"runs/{key}-{i}"
                    real_runs.append(m)
            runs["sim"][key] = sim_runs
            runs["real"][key] = real_runs
        measured = {s: {key: _estimates(rs) for key, rs in runs[s].items()} for s in STACKS}
        judged = score_stacks(lambda m: claims(m["measured"], ratios), measured)
        write_metrics(
            tmp,
            f"{ID}-emu",
            quick=quick,
            mode="emu",
            comparisons=[],
            t_f_s=t_f_s,
            runs_per_cell=RUNS,
            measured={
                s: {k: {q: e.to_json() for q, e in v.items()} for k, v in m.items()}
                for s, m in measured.items()
            },  # fmt: skip
            runs=runs,
            verdicts={s: v.to_json() for s, (_, v) in judged.items()},
        )
        (tmp / "report.md").write_text(
            _report(measured, runs, judged, failures, ratios, t_f_s, quick), encoding="utf-8"
        )
    return out / "report.md"


def _measure(result: Any, t_f_s: float) -> dict[str, Any]:
    m = mp.measure(result, t_f_s, 2)
    keep = {q: m[q] for q in QUANTITIES}
    keep["goodput_bps"] = m["goodput_bps"]
    keep["marks"] = m["bottleneck_marks"]
    keep["drops"] = m["bottleneck_drops"]
    keep["retransmits"] = m["retransmits"]
    keep.update(emu_stats(result))
    if result.run_info.get("mode") == "emu":
        keep["loadavg"] = os.getloadavg()[0]  # the machine's load right after the run
    return keep


def _estimates(rs: Sequence[dict[str, Any]]) -> dict[str, Estimate]:
    out = {q: estimate([r[q] for r in rs]) for q in QUANTITIES}
    shares = [r["goodput_bps"][0] / max(sum(r["goodput_bps"]), 1e-9) for r in rs]
    out["f1_share"] = estimate(shares)
    return out


def claims(measured: dict[str, dict[str, Estimate]], ratios: Sequence[int]) -> list[Claim]:
    """The paper's orderings of Tables II and III (the simulated report's), on intervals."""
    text_j = (
        "Both MM variants outperform DT except in the first case when delta_2/delta_1 = 3. "
        "In this case Jain's index for DT is bigger but the utilization is somewhat lower."
    )
    text_q = (
        "Table III shows that the average queue size for the MM algorithms is somewhat larger "
        "than for DT."
    )
    out: list[Claim] = []
    for mm, label in (("mmb", "MM-B"), ("mmt", "MM-T")):
        for r in ratios:
            first, second = (mm, "dt") if r != 3 else ("dt", mm)
            names = {"dt": "DT", mm: label}
            out.append(
                Ordering(
                    id=f"J {names[first]} above {names[second]} (ratio {r})",
                    quote=quote("003", "Section IV-B, Table II", text_j),
                    measure=f"Jain's index of the two goodputs, mean and 95 % CI over {RUNS} runs",
                    ours=difference(
                        measured[f"{first}-r{r}"]["J"], measured[f"{second}-r{r}"]["J"]
                    ),
                    first=f"J {names[first]}",
                    second=f"J {names[second]}",
                )
            )
            out.append(
                Ordering(
                    id=f"mean queue {label} above DT (ratio {r})",
                    quote=quote("003", "Section IV-B, Table III", text_q),
                    measure=f"mean queue of S -> D, mean and 95 % CI over {RUNS} runs",
                    ours=difference(
                        measured[f"{mm}-r{r}"]["queue_bytes"], measured[f"dt-r{r}"]["queue_bytes"]
                    ),
                    unit="B",
                    first=label,
                    second="DT",
                )
            )
    return out


def _report(
    measured: dict[str, dict[str, dict[str, Estimate]]],
    runs: dict[str, dict[str, list[dict[str, Any]]]],
    judged: dict[str, Any],
    failures: dict[str, list[str]],
    ratios: Sequence[int],
    t_f_s: int,
    quick: bool,
) -> str:
    rows = []
    for r in ratios:
        for kind in KINDS:
            key = f"{kind}-r{r}"
            s, e = measured["sim"][key], measured["real"][key]
            rows.append(
                [
                    f"{mp.LABELS[kind]} δ2/δ1 = {r}",
                    s["J"].text(3),
                    e["J"].text(3),
                    s["rho"].text(3),
                    e["rho"].text(3),
                    s["queue_bytes"].text(0),
                    e["queue_bytes"].text(0),
                    s["f1_share"].text(2),
                    e["f1_share"].text(2),
                    f"{len(runs['real'][key])}/{RUNS}",
                ]
            )
    table = markdown_table(
        [
            "cell",
            "J sim",
            "J real",
            "ρ sim",
            "ρ real",
            "q̄ sim (B)",
            "q̄ real (B)",
            "f1 share sim",
            "f1 share real",
            "real runs",
        ],
        rows,
    )
    router_rows = []
    for key, rs in runs["real"].items():
        for i, m in enumerate(rs, 1):
            router_rows.append(
                [
                    f"[{key} #{i}]({m['run_dir']}/run.json)",
                    fmt(m["marks"], 0),
                    fmt(m["drops"], 0),
                    "/".join(str(x) for x in m["retransmits"]),
                    fmt(m["router_lateness_p99_us"], 0),
                    fmt(m["router_lateness_max_us"], 0),
                    fmt(m["loadavg"], 1),
                    "; ".join(m.get("fidelity_warnings", [])) or "-",
                ]
            )
    router = markdown_table(
        [
            "real run",
            "marks",
            "drops",
            "retransmits f1/f2",
            "delay error p99 (µs)",
            "max (µs)",
            "load",
            "warnings",
        ],
        router_rows,
    )
    header, claim_table = claim_rows(judged, STACKS)
    verdicts = []
    for stack in STACKS:
        v = judged[stack][1].to_json()
        label = "simulated" if stack == "sim" else "real packets"
        verdicts.append((label, v["verdict"], v["holding"], v["counted"]))
    return render(
        "markmax_s1_emu.md.j2",
        id=ID,
        runs=RUNS,
        t_f_s=t_f_s,
        quick=quick,
        setup=SETUP,
        table=table,
        claims=markdown_table(header, claim_table),
        verdicts=verdicts,
        router=router,
        failures=failure_text(failures),
        findings=_findings(measured, ratios),
    )


def _findings(measured: dict[str, dict[str, dict[str, Estimate]]], ratios: Sequence[int]) -> str:
    """Sentences computed from the numbers."""
    out = ["These sentences are generated from the numbers above."]
    for r in ratios:
        parts = []
        for kind in KINDS:
            s, e = measured["sim"][f"{kind}-r{r}"]["J"], measured["real"][f"{kind}-r{r}"]["J"]
            overlap = (
                math.isfinite(e.mean) and not (e.hi < s.lo or e.lo > s.hi) if e.n > 1 else False
            )
            parts.append(
                f"{mp.LABELS[kind]} real J {e.text(3)} against simulated {s.text(3)} "
                f"({'intervals overlap' if overlap else 'intervals apart'})"
            )
        out.append(f"δ2/δ1 = {r}: " + "; ".join(parts) + ".")
    return "\n\n".join(out)


#: ``xcc reproduce markmax-s1 --emu``: the cells with Linux NewReno + ECN on real packets beside
#: simulated ones (root); report in ``out_dir/emu/``.
VARIANT = Variant(markmax_s1.ID, "emu", run_markmax_s1_emu)
