"""The four WAN experiments of seed 004 (SLBN): shared set-up, runs, figures and report.

Each experiment runs every protocol the paper compares on the same network and the same
session arrivals (same seeds). All four run on the packet engine (every data
and control packet simulated, ``slbn_packets.py``), which gives the verdicts, and on the
session simulator beside it (control packets one by one through FIFO links, data as fluid
rates; docs/decisions.md, "Session experiments"), whose numbers the report puts next to the
packet engine's as a labelled approximation, validated within the bounds of
``slbn_validation`` (docs/reproduction/session-driver-validation.md). ``Setup.engine = "fluid"``
runs an experiment on the session simulator alone (none does now). Protocols this build cannot
run yet are listed in the report as pending, never invented.

Measured per sample (every ``sample_interval_s``), as in Section IV of the paper:
  - E_s(t) = 100 (lambda_s - lambda*_s) / lambda*_s for every session present with a rate,
    lambda* from the exact max-min oracle over the sessions present at t: mean, 10th, 90th pct;
  - E_e(t) = 100 (sum of assigned rates crossing e - C_e) / C_e over the links that are
    bottlenecks of the oracle's allocation at t: mean, 10th, 90th percentile, maximum;
  - the largest queue of any link since the previous sample (packets of 2000 B, and in
    seconds of the link's capacity);
  - for finite sessions, the completion time (last bit sent) by size.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ... import sessions as S
from ..common.report import (
    Comparison,
    atomic_dir,
    figure_links,
    fmt,
    markdown_table,
    save_figure,
    write_metrics,
)
from . import slbn_packets as P
from .setup import (
    LABEL,
    PACKET_BYTES,
    Setup,
    _nanmax,
    _nanmean,
    _nanmin,
)

# A protocol whose packet-level run stopped at its budget leaves runs/PROTOCOL + this file.
OVER_BUDGET_SUFFIX = "-packets-over-budget.txt"
# The paper's ranking by accuracy (Section IV): lower is better, equal = "similar".
PAPER_RANK = {"slbn": 0, "bfyz": 0, "erica": 1, "rcp": 2, "piqi_rcp": 2, "cobb": 3}
# The two accuracy orderings the reports give (key of the measurement, what it is).
ORDERINGS = (
    ("es_spread_avg", "mean width of the 10th-90th percentile band of E_s"),
    (
        "es_reach_avg",
        "mean reach of the 10th-90th percentile band of E_s from zero, max(|p10|, |p90|), "
        "which also counts a bias",
    ),
)


def run_setup(
    setup: Setup,
    out_dir: str | Path,
    quick: bool = False,
    log: Callable[[str], None] | None = None,
    only: tuple[str, ...] | None = None,
) -> Path:
    """Run the protocols of ``setup`` (those in ``only`` if given; the others are listed as
    not run) and write the report."""
    log = log or (lambda _m: None)
    available = set(S.protocols())
    out_dir = Path(out_dir)
    with atomic_dir(out_dir) as tmp:
        results: dict[str, Any] = {}
        fluid: dict[str, S.SessionResult] = {}
        for proto in setup.protocols:
            if proto not in available or (only is not None and proto not in only):
                log(f"{setup.id}: {proto} skipped")
                continue
            experiment = setup.experiment(proto, quick)
            if setup.engine == "packets":
                log(f"{setup.id}: running {proto} on the packet engine")
                try:
                    r = P.run_packets(experiment, f"{setup.id}-{proto}", PACKET_BYTES)
                    r.save(tmp / "runs" / proto)
                    results[proto] = r
                except P.OverBudget as exc:
                    log(f"{setup.id}: {proto} on packets {exc}")
                    (tmp / "runs").mkdir(parents=True, exist_ok=True)
                    (tmp / "runs" / f"{proto}{OVER_BUDGET_SUFFIX}").write_text(str(exc) + "\n")
                log(f"{setup.id}: running {proto} on the session driver (fluid data)")
                f = S.run_sessions(experiment, f"{setup.id}:{proto}")
                f.save(tmp / "runs" / f"{proto}-fluid")
                fluid[proto] = f
            else:
                log(f"{setup.id}: running {proto}")
                r = S.run_sessions(experiment, f"{setup.id}:{proto}")
                r.save(tmp / "runs" / proto)
                results[proto] = r
        _write_report(setup, tmp, quick, results, fluid, available)
    return out_dir / "report.md"


def _write_report(
    setup: Setup,
    tmp: Path,
    quick: bool,
    results: dict[str, Any],
    fluid: dict[str, S.SessionResult],
    available: set[str],
) -> None:
    """report.md, metrics.json and the figures of ``results`` (and ``fluid`` beside) in tmp."""
    pending = [p for p in setup.protocols if p not in results]
    over_budget = {
        p: (tmp / "runs" / f"{p}{OVER_BUDGET_SUFFIX}").read_text().strip()
        for p in pending
        if (tmp / "runs" / f"{p}{OVER_BUDGET_SUFFIX}").is_file()
    }
    measured = {p: _measure(setup, r) for p, r in results.items()}
    measured_fluid = {p: _measure(setup, r) for p, r in fluid.items()}
    figures = _figures(setup, tmp, results, fluid)
    comparisons = _comparisons(setup, measured)
    write_metrics(
        tmp,
        setup.id,
        title=setup.title,
        quick=quick,
        engine=setup.engine,
        comparisons=comparisons,
        measured=measured,
        measured_fluid=measured_fluid,
        pending=pending,
        over_budget=over_budget,
        figures=figures,
    )
    unavailable = [p for p in pending if p not in available]
    text = _report(
        setup,
        quick,
        results,
        measured,
        pending,
        comparisons,
        figures,
        unavailable,
        measured_fluid,
        over_budget,
    )
    (tmp / "report.md").write_text(text, encoding="utf-8")


def rereport(setup: Setup, out_dir: str | Path, quick: bool = False) -> Path:
    """Rewrite a finished reproduction's report, metrics and figures from the runs it saved
    (``OUT/runs/PROTOCOL`` and ``OUT/runs/PROTOCOL-fluid``), without simulating again: for a
    change to the report's text or measures. The runs are copied, never modified."""
    import shutil

    out_dir = Path(out_dir)
    runs = out_dir / "runs"
    results: dict[str, Any] = {}
    fluid: dict[str, S.SessionResult] = {}
    for proto in setup.protocols:
        if (runs / f"{proto}-fluid").is_dir():
            fluid[proto] = S.load(runs / f"{proto}-fluid")
            if (runs / proto).is_dir():
                results[proto] = P.load(runs / proto)
        elif (runs / proto).is_dir():
            results[proto] = S.load(runs / proto)
    with atomic_dir(out_dir) as tmp:
        shutil.copytree(runs, tmp / "runs")
        _write_report(setup, tmp, quick, results, fluid, set(S.protocols()))
    return out_dir / "report.md"


def _window(r: S.SessionResult, t0: float) -> Any:
    import polars as pl

    return r.samples.filter(pl.col("time_s") > t0 + 1e-9)


def _offered(r: S.SessionResult, s: Any) -> dict[str, float]:
    """The offered load at the bottlenecks, E_e of what *arrives* at each (what an overshoot
    is): the session driver's E_e is of assigned rates, all of which arrives at every link of a
    path (it does not model upstream shaping); the packet engine's E_e is of bits sent, which
    cannot exceed capacity, so it measures the arriving bits apart (``ee_in_*``). Packet runs
    saved before that column existed have none (absent here, never guessed)."""
    if r.stats.get("engine") == "packets":
        if "ee_in_p90" not in s.columns:
            return {}
        cols = ("ee_in_mean", "ee_in_p90", "ee_in_max")
    else:
        cols = ("ee_mean", "ee_p90", "ee_max")
    mean, p90, top = (s[c].to_numpy() for c in cols)
    return {
        "ee_offered_mean_avg": _nanmean(mean),
        "ee_offered_p90_max": _nanmax(p90),
        "ee_offered_max_max": _nanmax(top),
    }


def _assigned(r: S.SessionResult, s: Any) -> dict[str, float]:
    """E_s and E_e as seed 004 defines them, on the rates *assigned* at each sample: the
    session driver's own columns; the packet engine's ``es_asg_*`` / ``ee_asg_*`` (runs saved
    before those columns existed have none: absent here, never guessed)."""
    if r.stats.get("engine") == "packets":
        if "es_asg_p90" not in s.columns:
            return {}
        es = ("es_asg_mean", "es_asg_p10", "es_asg_p90")
        ee = ("ee_asg_mean", "ee_asg_p90", "ee_asg_max")
    else:
        es, ee = ("es_mean", "es_p10", "es_p90"), ("ee_mean", "ee_p90", "ee_max")
    mean, p10, p90 = (s[c].to_numpy().astype(float) for c in es)
    ee_mean, ee_p90, ee_max = (s[c].to_numpy().astype(float) for c in ee)
    return {
        "es_asg_mean_avg": _nanmean(mean),
        "es_asg_p10_avg": _nanmean(p10),
        "es_asg_p90_avg": _nanmean(p90),
        "es_asg_reach_avg": _nanmean(np.maximum(np.abs(p10), np.abs(p90))),
        "es_asg_p10_min": _nanmin(p10),
        "es_asg_p90_max": _nanmax(p90),
        "ee_asg_mean_avg": _nanmean(ee_mean),
        "ee_asg_p90_max": _nanmax(ee_p90),
        "ee_asg_max_max": _nanmax(ee_max),
    }


def _measure(setup: Setup, r: S.SessionResult) -> dict[str, Any]:
    s = _window(r, setup.plot_from_s)
    es_mean = s["es_mean"].to_numpy()
    m: dict[str, Any] = {
        "stats": r.stats,
        "es_mean_avg": _nanmean(es_mean),
        "es_abs_mean_avg": _nanmean(np.abs(es_mean)),
        "es_p10_avg": _nanmean(s["es_p10"].to_numpy()),
        "es_p90_avg": _nanmean(s["es_p90"].to_numpy()),
        "es_spread_avg": _nanmean(s["es_p90"].to_numpy() - s["es_p10"].to_numpy()),
        # How far from zero the 10th-90th percentile band reaches: a bias counts, not only the
        # width (a narrow band at +20 % is not accurate).
        "es_reach_avg": _nanmean(
            np.maximum(np.abs(s["es_p10"].to_numpy()), np.abs(s["es_p90"].to_numpy()))
        ),
        "es_p10_min": _nanmin(s["es_p10"].to_numpy()),
        "es_p90_max": _nanmax(s["es_p90"].to_numpy()),
        "ee_mean_avg": _nanmean(s["ee_mean"].to_numpy()),
        "ee_p90_max": _nanmax(s["ee_p90"].to_numpy()),
        "ee_max_max": _nanmax(s["ee_max"].to_numpy()),
        **_offered(r, s),
        **_assigned(r, s),
        "max_queue_packets": _nanmax(s["max_queue_bits"].to_numpy()) / (8 * PACKET_BYTES),
        "max_queue_delay_s": _nanmax(s["max_queue_delay_s"].to_numpy()),
        # The last sample with rated sessions (finite sessions may all have completed).
        "final_es_p10": _last_finite(s["es_p10"].to_numpy()),
        "final_es_p90": _last_finite(s["es_p90"].to_numpy()),
    }
    # Largest queue per whole second (the paper quotes COBB's for seconds 1, 2, 3).
    t = r.samples["time_s"].to_numpy()
    q = r.samples["max_queue_bits"].to_numpy() / (8 * PACKET_BYTES)
    m["max_queue_packets_by_second"] = [
        float(np.max(q[(t > k) & (t <= k + 1 + 1e-9)])) if np.any((t > k) & (t <= k + 1)) else None
        for k in range(int(math.ceil(t[-1])))
        if t.size
    ]
    if r.completions.height:
        c = r.completions
        pk = c["size_bits"].to_numpy() / (8 * PACKET_BYTES)
        ct = c["finish_s"].to_numpy() - c["start_s"].to_numpy()
        edges = [0, 250, 300, 350, 400, 500, 700, math.inf]
        bins = []
        for lo, hi in zip(edges[:-1], edges[1:]):
            sel = (pk >= lo) & (pk < hi)
            if sel.any():
                bins.append(
                    {
                        "from_pkts": lo,
                        "to_pkts": hi,
                        "sessions": int(sel.sum()),
                        "mean_s": float(ct[sel].mean()),
                    }
                )
        m["completion_by_size"] = bins
        m["completed"] = int(c.height)
        m["completion_mean_s"] = float(ct.mean())
    return m


def _last_finite(v: np.ndarray) -> float:
    v = v.astype(float)
    v = v[np.isfinite(v)]
    return float(v[-1]) if v.size else math.nan


def _comparisons(setup: Setup, measured: dict[str, dict[str, Any]]) -> list[Comparison]:
    out: list[Comparison] = []
    cobb = measured.get("cobb")
    if setup.id == "slbn-1a" and cobb:
        out += [
            Comparison("COBB mean source error", 500.0, cobb["es_mean_avg"], "%"),
            Comparison("COBB 10th percentile of source error", -15.0, cobb["es_p10_avg"], "%"),
            Comparison("COBB 90th percentile of source error", 1600.0, cobb["es_p90_avg"], "%"),
        ]
    if setup.id == "slbn-1b" and cobb:
        by_s = cobb["max_queue_packets_by_second"]
        for k, paper in enumerate((5293, 8265, 4775)):
            ours = by_s[k] if k < len(by_s) else None
            out.append(Comparison(f"COBB max queue in second {k + 1}", paper, ours, "packets"))
    if setup.id == "slbn-2b":
        if "bfyz" in measured:
            out.append(
                Comparison(
                    "BFYZ largest bottleneck overshoot, offered load (below)",
                    5.0,
                    measured["bfyz"].get("ee_offered_max_max"),
                    "%",
                )
            )
        if "slbn" in measured:
            out.append(
                Comparison(
                    "SLBN max queue, % of one second of capacity (at most)",
                    3.0,
                    100 * measured["slbn"]["max_queue_delay_s"],
                    "%",
                )
            )
    return out


def _figures(
    setup: Setup,
    tmp: Path,
    results: dict[str, Any],
    fluid: dict[str, S.SessionResult] | None = None,
) -> list[str]:
    if not results:
        return []
    from ...figures import pyplot as _pyplot

    plt = _pyplot()
    written: list[str] = []
    for key, what in (("es", "sources"), ("ee", "bottlenecks")):
        # One panel per protocol, each on its own scale (their errors span -100 % to over
        # 1000 %): the average as a line, the 10th-90th percentile band shaded around it (the
        # mean may lie outside the band for skewed errors); dotted: the paper's Fig. 3 range.
        n = len(results)
        cols = 2 if n > 1 else 1
        rows = -(-n // cols)
        fig, axes = plt.subplots(rows, cols, figsize=(10, 2.6 * rows + 0.6), sharex=True)
        axes = np.atleast_1d(axes).ravel()
        for i, (ax, (p, r)) in enumerate(zip(axes, results.items())):
            s = _window(r, setup.plot_from_s)
            t = s["time_s"].to_numpy()
            mean = s[f"{key}_mean"].to_numpy()
            lo, hi = s[f"{key}_p10"].to_numpy(), s[f"{key}_p90"].to_numpy()
            color = f"C{i}"
            ax.fill_between(t, lo, hi, color=color, alpha=0.25, lw=0, label="10th-90th percentile")
            ax.plot(t, mean, color=color, lw=1.4, label="average")
            if fluid and p in fluid:
                # The session driver's band, for comparison: its edges dashed.
                f = _window(fluid[p], setup.plot_from_s)
                tf = f["time_s"].to_numpy()
                for col, lab in ((f"{key}_p10", "session driver p10/p90"), (f"{key}_p90", None)):
                    ax.plot(tf, f[col].to_numpy(), color="black", lw=0.7, ls="--", label=lab)
            ax.axhline(0, color="grey", lw=0.5)
            for y in (-100, 150):
                ax.axhline(y, color="grey", lw=0.6, ls=":")
            ax.set_title(LABEL[p], fontsize=10)
            ax.set_ylabel("error (%)")
            ax.grid(True, lw=0.3)
            ax.legend(fontsize=7, loc="upper right")
        for ax in axes[n:]:
            ax.set_visible(False)
        for ax in axes[max(0, n - cols) : n]:
            ax.set_xlabel("time (s)")
            ax.xaxis.set_tick_params(labelbottom=True)
        fig.suptitle(
            f"{setup.id}: rate error at {what} (ours, "
            + ("packet engine; " if setup.engine == "packets" else "session driver; ")
            + "dotted: the paper's Fig. 3 range, -100 % to 150 %)"
        )
        fig.tight_layout()
        written += [p.name for p in save_figure(fig, tmp, f"error-{what}")]
        plt.close(fig)
    fig, ax = plt.subplots(figsize=(9, 4))
    for i, (p, r) in enumerate(results.items()):
        s = _window(r, setup.plot_from_s)
        q = s["max_queue_bits"].to_numpy() / (8 * PACKET_BYTES)
        ax.plot(s["time_s"].to_numpy(), q, color=f"C{i}", lw=1, label=LABEL[p])
    # Queues span six orders of magnitude between protocols: logarithmic above 10 packets.
    ax.set_yscale("symlog", linthresh=10)
    ax.set_xlabel("time (s)")
    ax.set_ylabel(f"max queue (packets of {PACKET_BYTES} B)")
    ax.set_title(f"{setup.id}: largest queue of any link (ours)")
    ax.legend(fontsize=8)
    ax.grid(True, lw=0.3)
    fig.tight_layout()
    written += [p.name for p in save_figure(fig, tmp, "max-queue")]
    plt.close(fig)
    if any(r.completions.height for r in results.values()):
        fig, ax = plt.subplots(figsize=(7, 4))
        for i, (p, r) in enumerate(results.items()):
            m = _measure(setup, r).get("completion_by_size", [])
            if m:
                x = [b["from_pkts"] for b in m]
                # Size bins are categories: markers, no line between them.
                ax.plot(x, [b["mean_s"] for b in m], "o", ls="none", color=f"C{i}", label=LABEL[p])
        ax.set_xlabel("session size bin (packets, lower edge)")
        ax.set_ylabel("mean completion time (s)")
        ax.set_title(f"{setup.id}: completion time by size (ours)")
        ax.legend(fontsize=8)
        ax.grid(True, lw=0.3)
        fig.tight_layout()
        written += [p.name for p in save_figure(fig, tmp, "completion-times")]
        plt.close(fig)
    return written


def _report(
    setup: Setup,
    quick: bool,
    results: dict[str, S.SessionResult],
    measured: dict[str, dict[str, Any]],
    pending: list[str],
    comparisons: list[Comparison],
    figures: list[str],
    unavailable: list[str] | None = None,
    measured_fluid: dict[str, dict[str, Any]] | None = None,
    over_budget: dict[str, str] | None = None,
) -> str:
    lines = [f"# {setup.title}", "", f"Generated by `xcc reproduce {setup.id}`.", ""]
    if quick:
        lines += [
            "> **Quick mode**: a small network and a few thousand sessions; not a reproduction.",
            "",
        ]
    lines += ["## Paper's claim", "", setup.claim, "", "## Set-up", ""]
    w = setup.experiment("slbn", quick)["workload"]
    arr = "; ".join(
        f"{a['count']:,} arrivals in [{a['from_s']}, {a['to_s']}) s" for a in w["arrivals"]
    )
    dep = "; ".join(
        f"{d['count']:,} departures in [{d['from_s']}, {d['to_s']}) s"
        for d in w.get("departures", [])
    )
    lines += [
        (
            "- Network (quick): a small transit-stub network (2 x 4 transit routers, 3 stub "
            "domains of 4 routers per transit router) "
            if quick
            else f"- Network: seed 004's {setup.topology.capitalize()} transit-stub network "
        )
        + "(`crates/xcc-sim/src/session/transit_stub.rs`), 200 hosts per stub router, "
        "hosts 100 Mb/s and 1 us, stub-stub and stub-transit 1 Gb/s, transit-transit 5 Gb/s, "
        "internal delays U[1, 10] ms, shortest paths (hops, then delay).",
        f"- Sessions: {arr}" + (f"; {dep}" if dep else "") + ". Sources and destinations uniform "
        "over the hosts (one session per source host); greedy sessions."
        + (
            f" Sizes Pareto, mean {w['size']['mean_packets']} packets of "
            f"{w['size']['packet_bytes']} B, "
            f"shape {w['size']['shape']}; a session leaves when its data is sent."
            if w.get("size")
            else ""
        ),
        f"- {setup.quick_duration_s if quick else setup.duration_s:g} s simulated, "
        f"samples every {setup.sample_interval_s * 1e3:g} ms"
        + (f", figures and statistics from {setup.plot_from_s:g} s" if setup.plot_from_s else "")
        + ".",
        (
            "- **Packet engine** (the verdicts): every session's source sends data packets of "
            f"{PACKET_BYTES} B paced at 99 % of its assigned rate through the same FIFO queues "
            "as its control packets, "
            if setup.engine == "packets"
            else "- **Session driver** (fluid data; the packet engine does not run this "
            "experiment yet): data are sent at 99 % of the assigned rate as fluid, "
        )
        + "control packets one by one: SLBN's (68 B) and ERICA's and BFYZ's RM cells (53 B) "
        "within 1 % of the session's rate, both directions counted; COBB's one per period T; "
        "RCP's and PIQI-RCP's 40-B feedback packet once per round trip. Unlimited queues "
        "(nothing is dropped).",
        (
            "- Measured on packets: E_s from the data each session *delivered* over the last "
            f"{setup.sample_interval_s * 1e3:g} ms (over the 99 % data share) against the "
            "oracle's rate at the sample; E_e from the bits each oracle bottleneck *sent* over "
            "the same window (data and control) against its capacity, so it cannot exceed 0 by "
            "more than a packet's worth (a link sends at most its capacity): where the assigned "
            "rates overshoot a link, the packets wait, and the overshoot shows as queue, and "
            "as *offered* E_e, from the bits *arriving* at each bottleneck over the window "
            "(runs made before 2026-11-26 10:20 UTC lack it: n/a); the "
            "largest queue of any link in each interval; completion at the last byte "
            "*delivered*. The session "
            "driver's E_s and E_e use the *assigned* rates and its completion the last bit "
            '*sent* (docs/decisions.md, "Session experiments").'
            if setup.engine == "packets"
            else "- E_s and E_e from the assigned rates; completion at the last bit sent."
        ),
    ]
    if setup.engine == "fluid":
        from .slbn_validation import note

        lines.append(f"- {note()}")
    lines += [f"- {n}" for n in setup.notes]
    lines += [""]
    if pending:
        over_budget = over_budget or {}
        missing = [p for p in pending if p in (unavailable or [])]
        chosen = [p for p in pending if p not in (unavailable or []) and p not in over_budget]
        lines += ["## Pending protocols", ""]
        for p, why in over_budget.items():
            budget = (
                f" (`slbn_packets.py`: every run's budget is {P.MEMORY_BUDGET_BYTES / 2**30:g} GiB "
                f"and {P.TIME_BUDGET_S / 60:g} minutes unless set otherwise). Its rates far above "
                "the fair share fill the unlimited queues with packets faster than they drain"
                if why.startswith("stopped")
                else ""
            )
            lines += [
                f"Not run to the end on the packet engine: {LABEL[p]}, {why}{budget}. Its "
                "numbers are the session driver's only (table beside the packet engine), and no "
                "claim is judged on them.",
                "",
            ]
        if missing:
            lines += [
                f"Not run: {', '.join(LABEL[p] for p in missing)} — not available in this build "
                "yet (the experiment runs them as soon as they are registered in "
                "`crates/xcc-sim/src/session/protocols.rs`).",
                "",
            ]
        if chosen:
            lines += [
                f"Not run in this report: {', '.join(LABEL[p] for p in chosen)} (available, "
                "left out of this run; see the notes below).",
                "",
            ]
    if measured:
        lines += ["## Results", ""]
        rows = []
        for p, m in measured.items():
            rows.append(
                [
                    LABEL[p],
                    fmt(m["es_mean_avg"], 2),
                    fmt(m["es_p10_avg"], 2),
                    fmt(m["es_p90_avg"], 2),
                    fmt(m["es_p10_min"], 1) + " / " + fmt(m["es_p90_max"], 1),
                    fmt(m["ee_mean_avg"], 2),
                    fmt(m["ee_p90_max"], 2),
                    fmt(m["ee_max_max"], 2),
                    fmt(m["max_queue_packets"], 1),
                    fmt(1e3 * m["max_queue_delay_s"], 2),
                ]
            )
        lines += [
            "Averages over the samples (time averages of the per-sample statistics):",
            "",
            markdown_table(
                [
                    "protocol",
                    "mean E_s (%)",
                    "p10 E_s (%)",
                    "p90 E_s (%)",
                    "worst p10 / p90 E_s (%)",
                    "mean E_e (%)",
                    "highest p90 E_e (%)",
                    "worst link E_e (%)",
                    "max queue (pkts)",
                    "max queue (ms)",
                ],
                rows,
            ),
            "",
        ]
        for key, what in ORDERINGS:
            order = sorted(measured, key=lambda p, key=key: measured[p][key])
            lines += [
                f"Ordering by accuracy at the sources ({what}, smallest first): "
                + " < ".join(f"{LABEL[p]} ({fmt(measured[p][key], 2)} points)" for p in order)
                + ".",
                "",
            ]
        for p, m in measured.items():
            lines.append(f"- {LABEL[p]}: {_stats_line(m['stats'])}")
            if "completion_by_size" in m:
                cb = ", ".join(
                    f"{b['from_pkts']}-{b['to_pkts']} pkts: {b['mean_s']:.3f} s ({b['sessions']})"
                    for b in m["completion_by_size"]
                )
                lines.append(
                    f"  Completed {m['completed']:,} sessions; mean completion by size: {cb}."
                )
            if m["max_queue_packets_by_second"]:
                qs = ", ".join(fmt(q, 0) for q in m["max_queue_packets_by_second"])
                lines.append(f"  Largest queue per second (packets): {qs}.")
        lines += [""]
    if measured_fluid:
        lines += _beside_fluid(measured, measured_fluid)
    if comparisons:
        rows = [[c.quantity, fmt(c.paper, 2), fmt(c.ours, 2), c.unit] for c in comparisons]
        lines += [
            "## The paper's numbers beside ours",
            "",
            markdown_table(["quantity", "paper", "ours", "unit"], rows),
            "",
        ]
    lines += ["## Discussion", ""]
    lines += _discussion(setup, measured, pending)
    if figures:
        lines += ["", "## Figures", ""]
        lines.append(figure_links(figures))
    return "\n".join(lines) + "\n"


def _stats_line(st: dict[str, Any]) -> str:
    if st.get("engine") == "packets":
        return (
            f"{st['sessions']:,} sessions, {st['packets_transmitted']:,} packet transmissions "
            f"(link hops), {st['data_bytes_delivered'] / 1e9:.2f} GB of data delivered, "
            f"{st['drops']} drops, {st['wall_seconds']:.1f} s wall for this run (on a shared "
            "machine, with the build of its day; the engine's speed is `xcc bench`'s, "
            "docs/performance.md)."
        )
    return (
        f"{st['sessions']:,} sessions, {st['events']:,} events, "
        f"{st['control_packets']:,} control packets, oracle run {st['oracle_runs']} times "
        f"({st['oracle_wall_seconds']:.1f} s), {st['hosts_in_use']:,} hosts with links, "
        f"{st['wall_seconds']:.1f} s wall (session driver)."
    )


#: The measures the packet engine and the session driver are compared on.
_BESIDE = (
    ("es_mean_avg", "mean E_s (%)", 2),
    ("es_p10_avg", "p10 E_s (%)", 2),
    ("es_p90_avg", "p90 E_s (%)", 2),
    ("ee_mean_avg", "mean E_e (%)", 2),
    ("ee_max_max", "worst link E_e (%)", 1),
    ("ee_offered_p90_max", "highest p90 offered E_e (%)", 1),
    ("max_queue_packets", "max queue (pkts)", 0),
    ("completion_mean_s", "mean completion (s)", 3),
)


def _beside_fluid(
    measured: dict[str, dict[str, Any]], fluid: dict[str, dict[str, Any]]
) -> list[str]:
    """The packet engine's measures beside the session driver's, protocol by protocol."""
    keys = [k for k in _BESIDE if any(k[0] in m for m in (*measured.values(), *fluid.values()))]
    rows = []
    for p, f in fluid.items():
        m = measured.get(p, {})
        cells = [f"{fmt(m.get(k), d) if m else '-'} / {fmt(f.get(k), d)}" for k, _, d in keys]
        rows.append([LABEL[p], *cells])
    if not rows:
        return []
    from .slbn_validation import note

    return [
        "## The packet engine beside the session driver",
        "",
        "Each cell: packets / session driver (fluid data), same network, sessions and seed. "
        "The definitions differ as the set-up says (delivered against assigned rates). " + note(),
        "",
        markdown_table(["protocol"] + [label for _, label, _ in keys], rows),
        "",
    ]


def _overshoot(m: dict[str, Any]) -> str:
    """Whether the bottlenecks were offered more than their capacity: the offered E_e where it
    was measured (a link's sent E_e cannot show it on packets), else nothing is said."""
    top = m.get("ee_offered_max_max")
    if top is None or not math.isfinite(top):
        return ""
    arriving = f"{fmt(top, 2)} % above capacity arriving at a bottleneck at most"
    return f" ({'an' if top > 0.5 else 'no'} overshoot: {arriving})"


def _discussion(setup: Setup, measured: dict[str, dict[str, Any]], pending: list[str]) -> list[str]:
    out = []
    s = measured.get("slbn")
    if s:
        out.append(
            f"- SLBN: mean source error {fmt(s['es_mean_avg'], 2)} % (10th/90th percentiles on "
            f"average {fmt(s['es_p10_avg'], 2)} / {fmt(s['es_p90_avg'], 2)} %), at the last sample "
            f"{fmt(s['final_es_p10'], 3)} / {fmt(s['final_es_p90'], 3)} %; mean bottleneck error "
            f"{fmt(s['ee_mean_avg'], 2)} %, its 90th percentile at most "
            f"{fmt(s['ee_p90_max'], 2)} %, "
            f"the worst single bottleneck at any sample {fmt(s['ee_max_max'], 2)} %"
            + _overshoot(s)
            + f"; largest queue {fmt(s['max_queue_packets'], 0)} packets "
            f"({fmt(1e3 * s['max_queue_delay_s'], 2)} ms of its link)."
        )
    for p, m in measured.items():
        if p == "slbn":
            continue
        out.append(
            f"- {LABEL[p]}: mean source error {fmt(m['es_mean_avg'], 2)} % (10th/90th "
            f"percentiles on average {fmt(m['es_p10_avg'], 2)} / {fmt(m['es_p90_avg'], 2)} %, "
            f"at worst {fmt(m['es_p10_min'], 1)} / {fmt(m['es_p90_max'], 1)} %); bottleneck "
            f"90th percentile at most {fmt(m['ee_p90_max'], 2)} %; largest queue "
            f"{fmt(m['max_queue_packets'], 0)} packets ({fmt(1e3 * m['max_queue_delay_s'], 1)} ms)."
        )
    if len(measured) > 1:
        out.append(
            "- The paper's ordering: SLBN and BFYZ best, then ERICA (slightly above the exact "
            "rates), then RCP / PIQI-RCP (erratic), then COBB (non-convergent)."
        )
        for key, what in ORDERINGS:
            order = sorted(measured, key=lambda p, key=key: measured[p][key])
            agree, disagree = [], []
            for a in measured:
                for b in measured:
                    if PAPER_RANK[a] < PAPER_RANK[b]:
                        ok = measured[a][key] < measured[b][key]
                        (agree if ok else disagree).append(f"{LABEL[a]} < {LABEL[b]}")
            n_pairs = len(agree) + len(disagree)
            if not n_pairs:
                continue
            out.append(
                f"- Ordering measured here by the {what}: "
                + ", ".join(LABEL[p] for p in order)
                + f". Of the {n_pairs} pair{'s' if n_pairs != 1 else ''} the paper ranks, "
                + f"{len(agree)} agree"
                + (f"; these do not: {', '.join(disagree)}." if disagree else ".")
            )
        if not any(PAPER_RANK[a] != PAPER_RANK[b] for a in measured for b in measured):
            out.append(
                "- The paper ranks "
                + " and ".join(LABEL[p] for p in measured)
                + " alike (equally accurate): no pair to order; their bands are "
                + " and ".join(f"{fmt(measured[p]['es_spread_avg'], 2)}" for p in measured)
                + " points wide."
            )
    if pending:
        out.append(
            "- The ordering cannot be checked in full yet: "
            + ", ".join(LABEL[p] for p in pending)
            + " were not run (see Pending protocols)."
        )
    return out
