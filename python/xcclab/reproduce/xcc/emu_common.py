"""Seed 002's comparisons on real packets: each protocol simulated and emulated on one scenario.

``xcc reproduce xcc-rtt-fairness --emu`` and ``xcc-dumbbell-3 --emu`` run the simulated
experiment's own scenario (1 Gbit/s bottleneck, 20 000-packet buffer, its timing) with every
protocol of :data:`xcclab.reproduce.common.explicit.PROTOCOLS` that runs over xcclab's UDP
transport, twice: simulated, and emulated through Linux network namespaces and the TUN router
(``docs/emu.md``). Both runs send 1500-byte data packets (:meth:`explicit.Protocol.on_wire`).

Repeats (issues 31 and 34): every protocol runs :func:`~xcclab.reproduce.common.repeats.runs_for`
times (5; 2 at ``--quick``) simulated and on real packets, with seeds 1..n on both. The seed
draws the phase of each link algorithm's control interval (XCP's, RCP's, MaxNet's timers:
``crates/xcc-core/src/algorithms/*/mod.rs``), the scenarios' only random draw; the real runs
vary besides with the machine's own timing (router and host scheduling, the other work on the
machine). Every claim is judged on its mean and 95 % interval over the runs
(:func:`~xcclab.reproduce.common.repeats.claims_over_runs`), on each side, and so is each
agreement of real with simulated (:func:`~xcclab.reproduce.common.repeats.judge_difference`):
holds when the interval of the difference lies within the bound, fails when outside, else
inconclusive.

An experiment describes itself by an :class:`EmuExperiment` (its flows, its measurement, its
claims: the simulated experiment's own); :func:`run` does the rest: the runs with the retry
policy, the claim-by-claim table (the paper's value, the scorer's verdict on the simulated and on
the real-packet value, their difference against a stated bound), the steady rates, the router's
table and the figure (rates simulated dashed, real solid, above the queue), into
``OUT/emu/report.md`` and ``metrics.json``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ...claims import Claim, Estimate, Qualitative, Scored, estimate, score, verdict
from ..common import explicit
from ..common.repeats import (
    claims_over_runs,
    difference_interval,
    judge_difference,
    load_1min,
    runs_for,
)
from ..common.report import (
    Comparison,
    atomic_dir,
    figure_links,
    fmt,
    markdown_table,
    save_figure,
    write_metrics,
)
from ..common.templates import render

RATE = "1Gbps"
BUFFER_PACKETS = 20000
BUFFER = f"{BUFFER_PACKETS}pkt"
#: Emulated runs per protocol at most: a run with a kernel-side drop fails by design
#: (docs/emu.md), and on a shared machine a single dropped packet in millions happens now and
#: then, so a failed run is tried once more (the report names every failed attempt).
ATTEMPTS = 2
#: Quick mode (tests, development): every time multiplied by this.
QUICK_SCALE = 0.25


@dataclass(frozen=True)
class Agreement:
    """The stated bound on real minus simulated: ``|real - sim| <= max(abs_tol, rel_tol |sim|)``."""

    abs_tol: float
    rel_tol: float
    text: str

    def limit(self, sim: float) -> float:
        return max(self.abs_tol, self.rel_tol * abs(sim))

    def holds(self, sim: float | None, real: float | None) -> bool | None:
        """Whether the two values agree; None when either is missing."""
        if sim is None or real is None or not (math.isfinite(sim) and math.isfinite(real)):
            return None
        return abs(real - sim) <= self.limit(sim) * (1 + 1e-9)

    def judge(self, sim: Estimate | None, real: Estimate | None) -> str | None:
        """Whether real agrees with simulated on intervals (the scorer's rule on the interval
        of real - sim against the bound): "holds", "fails", "inconclusive"; None when either is
        missing."""
        if (
            sim is None
            or real is None
            or not (math.isfinite(sim.mean) and math.isfinite(real.mean))
        ):
            return None
        return judge_difference(difference_interval(real, sim), self.limit(sim.mean) * (1 + 1e-9))


#: A time measured on 100 ms averages: one bin, or 10 % of a longer time.
TIME = Agreement(0.1, 0.10, "0.1 s (one 100 ms bin) or 10 %")
#: A difference of two such times (an ordering): a bin on each.
TIME_DIFFERENCE = Agreement(0.2, 0.10, "0.2 s (a 100 ms bin on each time) or 10 %")
#: A ratio of two steady rates, each within 1 %.
RATIO = Agreement(0.02, 0.0, "0.02 (each rate within 1 %)")
#: A steady rate (mean over a window of seconds).
STEADY_RATE = Agreement(0.0, 0.02, "2 %")
#: A count of packets (drops, a peak queue).
PACKETS = Agreement(10.0, 0.10, "10 packets or 10 %")


BOUNDS_TEXT = (
    "Stated agreement of real with simulated, |real - simulated| at most: for a time (100 ms "
    f"averages) {TIME.text}; for a difference of two times {TIME_DIFFERENCE.text}; for a ratio of "
    f"two rates {RATIO.text}; for a count of packets {PACKETS.text}; for a steady rate "
    f"{STEADY_RATE.text}. A claim without a number (qualitative) has no bound."
)


def default_agreement(claim: Claim) -> Agreement | None:
    """The bound for a claim by its unit (None for a claim without a number)."""
    if isinstance(claim, Qualitative):
        return None
    if claim.unit == "s":
        return TIME_DIFFERENCE if claim.kind == "ordering" else TIME
    if claim.unit == "packets":
        return PACKETS
    return RATIO


@dataclass(frozen=True)
class EmuExperiment:
    """What :func:`run` needs of an experiment to run it on real packets."""

    id: str
    title: str  # the report's title after "ID on real packets: "
    setup: str  # the report's set-up paragraph (the scenario, what is measured)
    flows: Callable[[], list[explicit.Flow]]
    t_end: float
    measure: Callable[[Any, explicit.Protocol, float], dict[str, Any]]
    claims: Callable[[dict[str, Any]], list[Claim]]  # the simulated experiment's
    #: columns of the results table: header and cell of one run's measurement
    columns: Sequence[tuple[str, Callable[[dict[str, Any]], str]]]
    #: the steady rates compared run against run: name -> bit/s, from one measurement
    steady: Callable[[dict[str, Any]], dict[str, float]]
    steady_window: tuple[float, float]  # the steady rates' window (s, before quick scaling)
    agreement: Callable[[Claim], Agreement | None] = default_agreement


def protocols(only: Sequence[str] | None = None) -> list[explicit.Protocol]:
    """The seed-002 protocols (``only`` these names, if given) with 1500-byte packets."""
    if only is not None:
        unknown = set(only) - {p.name for p in explicit.PROTOCOLS}
        if unknown:
            known = ", ".join(p.name for p in explicit.PROTOCOLS)
            raise ValueError(f"unknown protocol(s) {sorted(unknown)}; known: {known}")
    return [p.on_wire() for p in explicit.PROTOCOLS if only is None or p.name in only]


def scenario(e: EmuExperiment, p: explicit.Protocol, scale: float):
    """The simulated experiment's scenario for ``p`` (already
    :meth:`~explicit.Protocol.on_wire`)."""
    return explicit.dumbbell(
        p, f"{e.id}-emu", e.flows(), duration_s=e.t_end, rate=RATE, buffer=BUFFER, scale=scale
    )


# --- the claims, simulated beside real ------------------------------------------------------


def _value(s: Scored | None) -> float | None:
    return None if s is None or s.ours is None else s.ours.mean


def _interval(s: Scored | None) -> dict[str, Any] | None:
    return None if s is None or s.ours is None else s.ours.to_json()


def as_runs(real: dict[str, dict[str, Any]] | Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The real-packet measurements as a list of runs (protocol -> measurement each); one dict
    is one run."""
    return [real] if isinstance(real, dict) else list(real)


def _observed(s: Scored | None) -> str:
    return getattr(s.claim, "observed", "") if s is not None else ""


def claim_rows(
    claims: Callable[[dict[str, Any]], list[Claim]],
    sim: dict[str, dict[str, Any]] | Sequence[dict[str, Any]],
    real: dict[str, dict[str, Any]] | Sequence[dict[str, Any]],
    agreement: Callable[[Claim], Agreement | None] = default_agreement,
) -> list[dict[str, Any]]:
    """Every claim the simulated experiment scores, scored on the simulated runs (``sim``:
    protocol -> measurement, or a list of such dicts, one per run) and on the real-packet runs
    (``real``, the same; a protocol whose real run failed is absent from it), each on the mean
    and 95 % interval over its runs, with the difference real - simulated judged against its
    bound on the intervals (``within_bound``: "holds", "fails", "inconclusive", None without a
    number)."""
    s_scored = {c.id: score(c) for c in claims_over_runs(claims, as_runs(sim))}
    r_scored = {c.id: score(c) for c in claims_over_runs(claims, as_runs(real))}
    rows = []
    for cid, s in s_scored.items():
        r = r_scored.get(cid)
        c = s.claim
        a = agreement(c)
        sv, rv = _value(s), _value(r)
        diff = None if sv is None or rv is None else rv - sv
        within = None
        if a is not None and s.ours is not None and r is not None and r.ours is not None:
            within = a.judge(s.ours, r.ours)
        rows.append(
            {
                "id": cid,
                "type": c.kind,
                "counted": s.counted,
                "quote": c.quote.text,
                "where": c.quote.where,
                "expected": c.expected(),
                "unit": c.unit,
                "reconstruction": c.reconstruction,
                "sim": {
                    "ours": sv,
                    "interval": _interval(s),
                    "verdict": s.status,
                    "observed": _observed(s),
                },
                "real": (
                    None
                    if r is None
                    else {
                        "ours": rv,
                        "interval": _interval(r),
                        "verdict": r.status,
                        "observed": _observed(r),
                    }
                ),
                "difference": diff,
                "difference_interval": (
                    None if within is None else difference_interval(r.ours, s.ours).to_json()  # type: ignore[union-attr]
                ),
                "bound": None if a is None or sv is None else a.limit(sv),
                "bound_text": None if a is None else a.text,
                "within_bound": within,
            }
        )
    return rows


def verdicts(
    claims: Callable[[dict[str, Any]], list[Claim]],
    measured: dict[str, dict[str, Any]] | Sequence[dict[str, Any]],
) -> dict[str, Any]:
    """The experiment's verdict on one set of measurements, or on the intervals over a list
    of runs (the scorer's rule)."""
    return verdict(score(c) for c in claims_over_runs(claims, as_runs(measured))).to_json()


def steady_rows(
    e: EmuExperiment,
    names: Sequence[str],
    measured: dict[str, dict[str, Any]],
    real_runs: dict[str, list[dict[str, Any]]] | None = None,
    sim_runs: dict[str, list[dict[str, Any]]] | None = None,
) -> list[dict[str, Any]]:
    """Each protocol's steady rates, simulated and real (mean and 95 % interval over
    ``sim_runs[protocol]`` and ``real_runs[protocol]``; without them, the one run of each in
    ``measured``), with the relative difference of the means and whether the interval of the
    difference is within :data:`STEADY_RATE` ("holds", "fails", "inconclusive")."""

    def runs_of(given: dict[str, list[dict[str, Any]]] | None, key: str) -> list[dict]:
        return (given or {}).get(key.split("/")[0]) or ([measured[key]] if key in measured else [])

    rows = []
    for name in names:
        sims, reals = runs_of(sim_runs, f"{name}/sim"), runs_of(real_runs, f"{name}/emu")
        if not sims or not reals:
            continue
        s_each, r_each = [e.steady(m) for m in sims], [e.steady(m) for m in reals]
        for flow in s_each[0]:
            sv = estimate([x[flow] for x in s_each])
            rv = estimate([x[flow] for x in r_each])
            rows.append(
                {
                    "protocol": name,
                    "flow": flow,
                    "sim_bps": sv.mean,
                    "sim_interval_bps": sv.to_json(),
                    "real_bps": rv.mean,
                    "real_interval_bps": rv.to_json(),
                    "real_runs_bps": [x[flow] for x in r_each],
                    "rel_difference": (rv.mean - sv.mean) / sv.mean if sv.mean else None,
                    "within_bound": STEADY_RATE.judge(sv, rv),
                }
            )
    return rows


def window_evidence(res: Any, p: explicit.Protocol, a: float, b: float) -> dict[str, float]:
    """The bottleneck over the window ``(a, b]``: mean utilisation against the protocol's
    target, the 100 ms bins below 95 % of it, the peak queue (packets), the mean of the link's
    control variable (its series' ``gauge``: RCP's rate R, MaxNet's price ...); and over the
    whole run, the seconds the queue spent at 90 % of the buffer or more."""
    ls = explicit.link_series(res, explicit.BOTTLENECK)
    cap = float(res.links.filter(res.links["name"] == explicit.BOTTLENECK)["rate_bps"][0])
    t, u = explicit.averaged(ls["time_s"], ls["rate_bps"] / cap, 10)
    sel = (t > a + 1e-9) & (t <= b + 1e-9)
    in_window = (ls["time_s"] > a) & (ls["time_s"] <= b)
    queue = ls["queue_bytes"] / p.data_wire_bytes
    q = queue[in_window]
    dt = np.diff(ls["time_s"], prepend=0.0)
    return {
        "utilisation": float(u[sel].mean()) if sel.any() else float("nan"),
        "bins": int(sel.sum()),
        "bins_below_95pct_of_target": int((u[sel] < 0.95 * p.target).sum()),
        "peak_queue_packets": float(q.max()) if len(q) else float("nan"),
        "gauge_mean": float(ls["gauge"][in_window].mean()) if in_window.any() else float("nan"),
        "queue_near_full_s": float(dt[queue >= 0.9 * BUFFER_PACKETS].sum()),
    }


#: The last bucket of the router's delay-error histogram (xcc-emu's fabric.rs): 10 ms or more.
LATENESS_CAP_US = 10_000

KERNEL_DROP_KEYS = (
    "kernel_tun_tx_dropped",
    "kernel_tun_rx_dropped",
    "kernel_udp_rcvbuf_errors",
    "kernel_udp_sndbuf_errors",
)


def router_row(label: str, r: dict[str, Any], load: Sequence[float] | None = None) -> list[Any]:
    """One real-packet run's router and transport figures (``run_info['emu']``) and the
    machine's load average (1 min) before and after it."""

    def num(key: str, digits: int = 0) -> str:
        v = r.get(key)
        return "n/a" if v is None else fmt(float(v), digits)

    def late(key: str) -> str:
        # The router's histogram of delay errors ends at 10 ms: its last bucket is "or more".
        v = r.get(key)
        return f"≥ {LATENESS_CAP_US}" if v is not None and v >= LATENESS_CAP_US else num(key)

    kernel = sum(int(r.get(k, 0) or 0) for k in KERNEL_DROP_KEYS)
    return [
        label,
        num("packets_read"),
        late("lateness_p50_us"),
        late("lateness_p99_us"),
        num("lateness_max_us"),
        num("router_cpu_share", 2),
        kernel,
        num("host_wake_late_max_us"),
        f"{num('transport_data_batched')} in {num('transport_data_batches')}",
        f"{num('transport_acks_batched')} in {num('transport_ack_batches')}",
        "n/a" if not load else f"{load[0]:.1f} / {load[1]:.1f}",
    ]


ROUTER_HEADERS = [
    "protocol",
    "packets read",
    "delay error p50 (µs)",
    "p99 (µs)",
    "max (µs)",
    "router CPU share",
    "kernel-side drops",
    "host wake-up late, max (µs)",
    "data datagrams batched (in sends)",
    "ACKs batched (in sends)",
    "load (1 min) before / after",
]


# --- running ---------------------------------------------------------------------------------


def run(
    e: EmuExperiment,
    out_dir: str | Path,
    quick: bool = False,
    *,
    log: Callable[[str], None] | None = None,
    only: Sequence[str] | None = None,
) -> Path:
    """Simulate every protocol (``only`` those named) once and run it :func:`runs_for` times
    on real packets; write ``out_dir/emu/report.md`` and ``metrics.json``."""
    import xcclab
    from xcclab.emu import emulate, fidelity_warnings, preflight

    log = log or (lambda _m: None)
    protos = protocols(only)
    scale = QUICK_SCALE if quick else 1.0
    n_runs = runs_for(quick)
    # Every scenario's preconditions (root, TUN, MSS against the MTU) before simulating any.
    for p in protos:
        preflight(scenario(e, p, scale))
    out = Path(out_dir) / "emu"
    with atomic_dir(out) as tmp:
        measured: dict[str, dict[str, Any]] = {}  # the first simulated and real runs
        real_runs: dict[str, list[dict[str, Any]]] = {p.name: [] for p in protos}
        sim_runs: dict[str, list[dict[str, Any]]] = {p.name: [] for p in protos}
        by_run: list[dict[str, dict[str, Any]]] = [{} for _ in range(n_runs)]
        sim_by_run: list[dict[str, dict[str, Any]]] = [{} for _ in range(n_runs)]
        runs: dict[str, dict[str, Any]] = {}
        failed: dict[str, str] = {}
        retried: dict[str, str] = {}
        warnings: dict[str, list[str]] = {}
        a, b = (x * scale for x in e.steady_window)
        for p in protos:
            sc = scenario(e, p, scale)
            runs[p.name] = {"sim": None, "emu": None}
            for i in range(1, n_runs + 1):
                log(f"{e.id}: {p.label}, simulated, seed {i}")
                sim = xcclab.run(sc, seed=i, progress=False)
                sim.save(tmp / "runs" / f"{p.name}-sim-{i}")
                ms = e.measure(sim, p, scale) | {
                    "window": window_evidence(sim, p, a, b),
                    "run": i,
                    "run_dir": f"runs/{p.name}-sim-{i}",
                }
                sim_runs[p.name].append(ms)
                sim_by_run[i - 1][p.name] = ms
                if i == 1:
                    runs[p.name]["sim"] = sim
                    measured[f"{p.name}/sim"] = ms
            for i in range(1, n_runs + 1):
                real, label = None, f"{p.name} run {i}"
                run_dir = f"runs/{p.name}-emu-{i}"
                for attempt in range(1, ATTEMPTS + 1):
                    log(
                        f"{e.id}: {p.label}, real packets ({e.t_end * scale:g} s), "
                        f"run {i}/{n_runs}, attempt {attempt}"
                    )
                    load = load_1min()
                    try:
                        real = emulate(sc, seed=i, out=tmp / run_dir)
                        break
                    except RuntimeError as exc:
                        # A failed run (kernel-side drops on a loaded machine, say) is
                        # reported, not hidden, and does not discard the other runs.
                        log(f"{e.id}: {p.label} on real packets failed: {exc}")
                        if attempt < ATTEMPTS:
                            retried[label] = str(exc)
                        else:
                            failed[label] = str(exc)
                if real is None:
                    continue
                stats = real.run_info.get("emu", {})
                m = e.measure(real, p, scale) | {
                    "window": window_evidence(real, p, a, b),
                    "router": stats,
                    "load_1min": (load, load_1min()),
                    "run": i,
                    "run_dir": run_dir,
                }
                real_runs[p.name].append(m)
                by_run[i - 1][p.name] = m
                if fidelity_warnings(stats):
                    warnings[label] = fidelity_warnings(stats)
                if runs[p.name]["emu"] is None:  # the first real run: tables and figure
                    runs[p.name]["emu"] = real
                    measured[f"{p.name}/emu"] = m
        if not any(real_runs.values()):
            raise RuntimeError(f"{e.id} --emu: every emulated run failed: {failed}")
        names = [p.name for p in protos]
        rows = claim_rows(e.claims, sim_by_run, by_run, e.agreement)
        steady = steady_rows(e, names, measured, real_runs, sim_runs)
        figures = figure(tmp, e, protos, runs)
        comparisons = [
            Comparison(f"{r['id']}, real packets", _paper_value(r), r["real"]["ours"], r["unit"])
            for r in rows
            if r["real"] is not None and _paper_value(r) is not None
        ]
        write_metrics(
            tmp,
            e.id,
            quick=quick,
            mode="emu",
            rate=RATE,
            buffer=BUFFER,
            comparisons=comparisons,
            runs_per_cell=n_runs,
            variation=(
                "seeds 1..n on both sides (the phase of the link algorithms' control "
                "intervals), and the machine's timing on real packets"
            ),
            measured=measured,
            sim_runs=sim_runs,
            real_runs=real_runs,
            claims_sim_real=rows,
            verdict_sim=verdicts(e.claims, sim_by_run),
            verdict_real=verdicts(e.claims, by_run),
            steady_rates=steady,
            failed=failed,
            retried=retried,
            fidelity_warnings=warnings,
            figures=figures,
        )
        text = report(
            e, protos, measured, rows, steady, failed, retried, warnings, figures, quick,
            real_runs=real_runs, by_run=by_run, sim_by_run=sim_by_run,
        )  # fmt: skip
        (tmp / "report.md").write_text(text, encoding="utf-8")
    return out / "report.md"


def _paper_value(row: dict[str, Any]) -> float | None:
    """The paper's number of a point claim (the expected text starts with it)."""
    if row["type"] != "point":
        return None
    try:
        return float(row["expected"].split(" ", 1)[0])
    except ValueError:
        return None


def figure(
    tmp: Path, e: EmuExperiment, protos: list[explicit.Protocol], runs: dict[str, dict[str, Any]]
) -> list[str]:
    """One column per protocol: the flows' rates (100 ms averages), simulated dashed and real
    solid, above the bottleneck's queue."""
    from ...figures import pyplot as _pyplot

    plt = _pyplot()
    flows = [f.name for f in e.flows()]
    fig, axes = plt.subplots(
        2, len(protos), figsize=(4.2 * len(protos), 5.5), sharex=True, squeeze=False
    )
    for j, p in enumerate(protos):
        ax, axq = axes[0][j], axes[1][j]
        for mode, style in (("sim", "--"), ("emu", "-")):
            res = runs[p.name][mode]
            if res is None:
                continue
            for k, f in enumerate(flows):
                t, r = explicit.averaged(*explicit.flow_series(res, f), 10)
                ax.plot(t, r / 1e6, ls=style, lw=0.8, color=f"C{k}", label=f"{f} {mode}")
            ls = explicit.link_series(res, explicit.BOTTLENECK)
            axq.plot(
                ls["time_s"], ls["queue_bytes"] / p.data_wire_bytes, ls=style, lw=0.7, label=mode
            )
        ax.set_title(p.label)
        ax.set_ylabel("rate (Mbit/s)")
        ax.grid(True, lw=0.3)
        ax.legend(fontsize=6)
        axq.set_ylabel(f"queue at {explicit.BOTTLENECK} (packets)")
        axq.set_xlabel("time (s)")
        axq.grid(True, lw=0.3)
        axq.legend(fontsize=6)
    fig.suptitle(f"{e.title}, 1 Gbit/s: simulated (dashed) and real packets (solid)")
    fig.tight_layout()
    names = [q.name for q in save_figure(fig, tmp, "rates-sim-emu")]
    plt.close(fig)
    return names


# --- the report ------------------------------------------------------------------------------


def _num(v: float | None, unit: str) -> str:
    if v is None:
        return "n/a"
    digits = 0 if unit == "packets" else 3
    return fmt(v, digits) + (f" {unit}" if unit else "")


def _side(side: dict[str, Any] | None, unit: str) -> tuple[str, str]:
    """A claim's value (mean [95 % CI] over the runs, with n, when it has an interval) and
    verdict on one side of the table."""
    if side is None:
        return "failed", ""
    if side["ours"] is None and side["observed"]:
        return side["observed"], side["verdict"]
    ci = side.get("interval")
    if ci and ci["n"] > 1:
        digits = 4 if unit == "packets" else 3  # significant digits (claims._num)
        e = Estimate(ci["mean"], *(math.nan if x is None else x for x in ci["ci95"]), ci["n"])
        return f"{e.text(digits)}{f' {unit}' if unit else ''} (n = {e.n})", side["verdict"]
    return _num(side["ours"], unit), side["verdict"]


_WITHIN = {"holds": "yes", "fails": "**no**", "inconclusive": "inconclusive"}


def claim_table(rows: list[dict[str, Any]]) -> str:
    """The claim-by-claim table: the paper, simulated, real packets, the difference."""
    out = []
    for r in rows:
        sv, sver = _side(r["sim"], r["unit"])
        rv, rver = _side(r["real"], r["unit"])
        if r["within_bound"] is None:
            within = "n/a" if r["bound_text"] is None or r["real"] is not None else "failed"
        else:
            within = _WITHIN[r["within_bound"]]
        rec = f" (on {r['reconstruction']})" if r["reconstruction"] else ""
        counted = "" if r["counted"] else " (not counted)"
        out.append(
            [
                f"{r['id']}{counted}",
                f'"{r["quote"]}"',
                r["expected"],
                sv,
                f"**{sver}**{rec}" if sver else "",
                rv,
                f"**{rver}**" if rver else "",
                "n/a" if r["difference"] is None else _num(r["difference"], r["unit"]),
                "n/a" if r["bound"] is None else f"{_num(r['bound'], r['unit'])}",
                within,
            ]
        )
    return markdown_table(
        [
            "claim",
            "the paper",
            "expected",
            "simulated",
            "verdict",
            "real packets",
            "verdict",
            "real - simulated",
            "bound",
            "within",
        ],
        out,
    )


def _verdict_line(name: str, v: dict[str, Any]) -> str:
    return f"{name}: {v['verdict']} ({v['holding']} of {v['counted']} counted paper claims hold)"


def report(
    e: EmuExperiment,
    protos: list[explicit.Protocol],
    measured: dict[str, dict[str, Any]],
    rows: list[dict[str, Any]],
    steady: list[dict[str, Any]],
    failed: dict[str, str],
    retried: dict[str, str],
    warnings: dict[str, list[str]],
    figures: list[str],
    quick: bool,
    *,
    real_runs: dict[str, list[dict[str, Any]]] | None = None,
    by_run: Sequence[dict[str, dict[str, Any]]] | None = None,
    sim_by_run: Sequence[dict[str, dict[str, Any]]] | None = None,
) -> str:
    names = [p.name for p in protos]
    sim_m = {n: measured[f"{n}/sim"] for n in names}
    real_m = {n: measured[f"{n}/emu"] for n in names if f"{n}/emu" in measured}
    real_runs = real_runs or {n: [m] for n, m in real_m.items()}
    n_runs = len(by_run) if by_run else 1
    results = []
    for p in protos:
        for mode in ("sim", "emu"):
            m = measured.get(f"{p.name}/{mode}")
            cells = ["failed"] + [""] * (len(e.columns) - 1)
            if m is not None:
                cells = [cell(m) for _, cell in e.columns]
            results.append([f"{p.label} / {mode}", *cells])
    steady_table = markdown_table(
        [
            "protocol",
            "flow",
            "simulated (Mbit/s), mean [95 % CI]",
            "real (Mbit/s), mean [95 % CI]",
            "each real run (Mbit/s)",
            "real - simulated",
            "within",
        ],
        [
            [
                explicit.by_name(s["protocol"]).label,
                s["flow"],
                _mbps(s, "sim"),
                _mbps(s, "real"),
                ", ".join(fmt(x / 1e6, 2) for x in s.get("real_runs_bps", [s["real_bps"]])),
                "n/a" if s["rel_difference"] is None else fmt(100 * s["rel_difference"], 2) + " %",
                _WITHIN.get(s["within_bound"], "n/a"),
            ]
            for s in steady
        ],
    )
    router = markdown_table(
        ["run", *ROUTER_HEADERS[1:]],
        [
            router_row(
                f"[{p.label} #{m.get('run', 1)}]({m['run_dir']}/run.json)"
                if "run_dir" in m
                else p.label,
                m["router"],
                m.get("load_1min"),
            )
            for p in protos
            for m in real_runs.get(p.name, [])
        ],
    )
    left_out = [p.label for p in protocols() if p.name not in set(names)]
    return render(
        "xcc_emu.md.j2",
        id=e.id,
        title=e.title,
        quick=quick,
        quick_scale=f"{QUICK_SCALE:g}",
        setup=e.setup,
        attempts=ATTEMPTS,
        left_out=", ".join(left_out),
        bounds=BOUNDS_TEXT,
        verdict_sim=_verdict_line(
            f"Simulated, on the intervals over {n_runs} seeds",
            verdicts(e.claims, sim_by_run if sim_by_run else sim_m),
        ),
        verdict_real=_verdict_line(
            f"Real packets, on the intervals over {n_runs} runs",
            verdicts(e.claims, by_run if by_run else real_m),
        ),
        runs=n_runs,
        claims=claim_table(rows),
        results=markdown_table(["protocol / run", *[h for h, _ in e.columns]], results),
        window=_window(e, quick),
        steady_bound=STEADY_RATE.text,
        steady=steady_table,
        router=router,
        findings=findings(names, measured, rows, steady, failed, retried, warnings, real_runs),
        figures=figure_links(figures),
    )


def _mbps(s: dict[str, Any], side: str) -> str:
    ci = s.get(f"{side}_interval_bps")
    if not ci or ci["n"] <= 1:
        return fmt(s[f"{side}_bps"] / 1e6, 2)
    lo, hi = ci["ci95"]
    return f"{ci['mean'] / 1e6:.2f} [{lo / 1e6:.2f}, {hi / 1e6:.2f}] (n = {ci['n']})"


def _window(e: EmuExperiment, quick: bool) -> str:
    k = QUICK_SCALE if quick else 1.0
    a, b = e.steady_window
    return f"{a * k:g} to {b * k:g} s"


def findings(
    names: Sequence[str],
    measured: dict[str, dict[str, Any]],
    rows: list[dict[str, Any]],
    steady: list[dict[str, Any]],
    failed: dict[str, str],
    retried: dict[str, str],
    warnings: dict[str, list[str]],
    real_runs: dict[str, list[dict[str, Any]]] | None = None,
) -> list[str]:
    """What the numbers say: agreement, every claim outside its bound, verdicts that differ,
    the runs' own warnings and failures."""
    out = []
    within = [r for r in rows if r["within_bound"] == "holds"]
    outside = [r for r in rows if r["within_bound"] == "fails"]
    unsure = [r for r in rows if r["within_bound"] == "inconclusive"]
    numeric = [r for r in rows if r["bound_text"] is not None]
    out.append(
        f"{len(within)} of {len(numeric)} measured claims agree within their bound, real against "
        "simulated (on the real runs' 95 % intervals)"
        + (f"; outside: {', '.join(r['id'] for r in outside)}" if outside else "")
        + (f"; inconclusive: {', '.join(r['id'] for r in unsure)}" if unsure else "")
        + "."
    )
    for r in outside:
        out.append(
            f"{r['id']}: {_num(r['sim']['ours'], r['unit'])} simulated, "
            f"{_side(r['real'], r['unit'])[0]} real (bound {_num(r['bound'], r['unit'])})."
        )
    flips = [
        f"{r['id']} ({r['sim']['verdict']} simulated, {r['real']['verdict']} real)"
        for r in rows
        if r["real"] is not None and r["sim"]["verdict"] != r["real"]["verdict"]
    ]
    out.append(
        "Verdicts that differ between the two runs: "
        + ("; ".join(flips) + "." if flips else "none: every claim scores the same.")
    )
    if steady:
        worst = max(steady, key=lambda s: abs(s["rel_difference"] or 0))
        ok = [s for s in steady if s["within_bound"] == "holds"]
        out.append(
            f"Steady rates: {len(ok)} of {len(steady)} within {STEADY_RATE.text} on the real "
            "runs' intervals; "
            f"the largest difference {fmt(100 * (worst['rel_difference'] or 0), 2)} % "
            f"({explicit.by_name(worst['protocol']).label}, {worst['flow']})."
        )
    disturbed = disturbance_finding(names, measured, steady)
    if disturbed:
        out.append(disturbed)
    drops = [
        f"{explicit.by_name(n).label} {measured[f'{n}/sim']['drops']} simulated / "
        f"{measured[f'{n}/emu']['drops']} real"
        for n in names
        if f"{n}/emu" in measured
        and (measured[f"{n}/sim"]["drops"] or measured[f"{n}/emu"]["drops"])
    ]
    out.append(
        "Packets dropped by the bottleneck's buffer: "
        + ("; ".join(drops) + "." if drops else "none, simulated or real.")
    )
    # Evidence for every protocol with a claim or a steady rate outside its bound.
    off = {s["protocol"] for s in steady if s["within_bound"] == "fails"}
    off |= {n for n in names for r in outside if _mentions(r["id"], n)}
    for n in names:
        if n in off and f"{n}/emu" in measured:
            out.append(evidence(n, measured[f"{n}/sim"], measured[f"{n}/emu"]))
    stalls = stall_finding(names, measured, real_runs)
    if stalls:
        out.append(stalls)
    for name, ws in warnings.items():
        out.append(f"{_run_label(name)}, the run's own warnings: " + "; ".join(ws) + ".")
    for name, why in retried.items():
        out.append(
            f"{_run_label(name)}: a first real-packet attempt failed and was run again"
            + ("" if name in failed else "; the tables show the second")
            + f". The first: {why}"
        )
    for name, why in failed.items():
        out.append(f"{_run_label(name)}: every attempt ({ATTEMPTS}) failed; the last: {why}")
    out.append(
        "Differences to expect: the emulated hosts pace by the real clock (wake-ups some "
        "microseconds late, made up within 1 ms), the router delivers each packet some "
        "microseconds after its virtual-time instant (delay error in the router table); the "
        "algorithms, the packets' bytes and the links' model are the simulator's."
    )
    return out


def _run_label(key: str) -> str:
    """ "rcp run 3" as "RCP, real run 3"; a bare protocol name as its label."""
    name, _, run = key.partition(" run ")
    return explicit.by_name(name).label + (f", real run {run}" if run else "")


def _mentions(claim_id: str, name: str) -> bool:
    """Whether a claim id names protocol ``name`` (by its label, "RCP" not in "PIQI-RCP")."""
    label = explicit.by_name(name).label
    words = claim_id.replace("'s", "").split()
    return label in words


def _p99(r: dict[str, Any]) -> str:
    v = r.get("lateness_p99_us")
    return "n/a" if v is None else (f"≥ {LATENESS_CAP_US}" if v >= LATENESS_CAP_US else str(v))


def _g(w: dict[str, Any]) -> str:
    v = w.get("gauge_mean")
    return "n/a" if v is None or not math.isfinite(v) else f"{v:.4g}"


def stall_finding(
    names: Sequence[str],
    measured: dict[str, dict[str, Any]],
    real_runs: dict[str, list[dict[str, Any]]] | None = None,
) -> str | None:
    """The real runs' router stalls (a packet delivered over 10 ms late), CPU shares and the
    machine's load, in one sentence, over every run of ``real_runs`` (else the one run of each
    protocol in ``measured``); None without a real run."""
    from xcclab.emu import ROUTER_STALL_LIMIT_US

    real = {n: measured[f"{n}/emu"] for n in names if f"{n}/emu" in measured}
    if real_runs and any(real_runs.get(n) for n in names):
        real = {
            f"{n}#{m.get('run', i)}": m
            for n in names
            for i, m in enumerate(real_runs.get(n, []), 1)
        }
    if not real:
        return None
    late = {n: m["router"].get("lateness_max_us") or 0 for n, m in real.items()}
    shares = [m["router"].get("router_cpu_share") for m in real.values()]
    shares = [x for x in shares if x is not None]
    loads = [x for m in real.values() for x in (m.get("load_1min") or ())]
    stalled = [n for n, v in late.items() if v > ROUTER_STALL_LIMIT_US]
    text = (
        f"Router stalls: {len(stalled)} of {len(real)} real runs delivered a packet more than "
        f"{ROUTER_STALL_LIMIT_US // 1000} ms late"
        + (
            " (" + ", ".join(f"{_stall_label(n)} {late[n] / 1000:.1f} ms" for n in stalled) + ")"
            if stalled
            else ""
        )
    )
    if shares:
        text += f"; the router thread's CPU share was {min(shares):.2f}-{max(shares):.2f}"
    if loads:
        text += f"; load average (1 min) {min(loads):.1f}-{max(loads):.1f}"
    # The runs record whether the emulator lifted the kernel's real-time limit for them
    # (crates/xcc-emu/src/sysctl_lift.rs); only where it did not can a pause come from it.
    lifted = all(m["router"].get("rt_throttling_lifted") for m in real.values())
    rt = None if lifted else rt_throttling()
    if lifted and stalled:
        text += (
            ". Real-time throttling was lifted for these runs, so a stall is time in which the "
            "router had no CPU (interrupts, other work, the hypervisor)"
        )
    if rt and stalled:
        runtime, period = rt
        pause_us = period - runtime
        longest = max(late[n] for n in stalled)
        text += (
            f". The kernel stops a real-time thread that has run {runtime / 1e3:g} ms of a "
            f"{period / 1e3:g} ms period for the rest of it (`sched_rt_runtime_us`, "
            f"`sched_rt_period_us`): pauses of up to {pause_us / 1e3:g} ms; the longest delay "
            f"here, {longest / 1000:.1f} ms, "
            + (
                "is within that"
                if longest <= pause_us
                else "is longer, so a pause met packets already late or the CPU was also "
                "taken by other work"
            )
        )
    return (
        text + ". A stall holds every packet at the router for its length and then delivers "
        "them together: the bottleneck sees a gap in its input and then a burst, which the "
        "simulated link never sees."
    )


def _stall_label(key: str) -> str:
    name, _, run = key.partition("#")
    return explicit.by_name(name).label + (f" #{run}" if run else "")


def disturbance_finding(
    names: Sequence[str], measured: dict[str, dict[str, Any]], steady: list[dict[str, Any]]
) -> str | None:
    """The real runs split by ``xcc emu``'s fidelity limits (router delay error p99, a host's
    latest wake-up), with how many steady rates of each group are within their bound."""
    from xcclab.emu import HOST_STALL_LIMIT_US, LATENESS_P99_LIMIT_US

    real = [n for n in names if f"{n}/emu" in measured]
    if not real or not steady:
        return None

    def why(n: str) -> list[str]:
        r = measured[f"{n}/emu"].get("router", {})
        out = []
        if (r.get("lateness_p99_us") or 0) > LATENESS_P99_LIMIT_US:
            out.append(f"delay error p99 {_p99(r)} µs")
        if (r.get("host_wake_late_max_us") or 0) > HOST_STALL_LIMIT_US:
            out.append(f"a host woke up {r['host_wake_late_max_us'] / 1000:.1f} ms late")
        return out

    def group(members: list[str]) -> str:
        rows = [s for s in steady if s["protocol"] in members]
        ok = sum(1 for s in rows if s["within_bound"] in (True, "holds"))
        return f"steady rates within {STEADY_RATE.text}: {ok} of {len(rows)}"

    clean = [n for n in real if not why(n)]
    bad = [n for n in real if why(n)]
    text = (
        "Real runs within `xcc emu`'s fidelity limits (router delay error p99 at most "
        f"{LATENESS_P99_LIMIT_US / 1000:g} ms, no host wake-up more than "
        f"{HOST_STALL_LIMIT_US / 1000:g} ms late): "
        + (
            ", ".join(explicit.by_name(n).label for n in clean) + f"; {group(clean)}"
            if clean
            else "none"
        )
        + ". Beyond them: "
        + (
            "; ".join(f"{explicit.by_name(n).label} ({', '.join(why(n))})" for n in bad)
            + f"; {group(bad)}"
            if bad
            else "none"
        )
        + "."
    )
    return text


def rt_throttling() -> tuple[int, int] | None:
    """The kernel's real-time throttling (runtime, period in µs); None if off or unknown."""
    try:
        runtime = int(Path("/proc/sys/kernel/sched_rt_runtime_us").read_text())
        period = int(Path("/proc/sys/kernel/sched_rt_period_us").read_text())
    except (OSError, ValueError):
        return None
    return (runtime, period) if 0 <= runtime < period else None


def evidence(name: str, sim: dict[str, Any], real: dict[str, Any]) -> str:
    """One protocol's real run against its simulated one over the steady window: the
    bottleneck's utilisation, the 100 ms bins under 95 % of the target, the peak queue, and
    the router's and hosts' timing and the machine's load."""
    ws, wr, r = sim["window"], real["window"], real.get("router", {})
    load = real.get("load_1min")
    late_max = r.get("lateness_max_us")
    return (
        f"{explicit.by_name(name).label}, over the steady window: the bottleneck carried "
        f"{fmt(100 * wr['utilisation'], 2)} % of its capacity on real packets against "
        f"{fmt(100 * ws['utilisation'], 2)} % simulated; {wr['bins_below_95pct_of_target']} of "
        f"{wr['bins']} 100 ms bins under 95 % of the target ({ws['bins_below_95pct_of_target']} "
        f"simulated); peak queue {fmt(wr['peak_queue_packets'], 0)} packets "
        f"({fmt(ws['peak_queue_packets'], 0)} simulated); the link's control variable (`gauge`) "
        f"averaged {_g(wr)} ({_g(ws)} simulated). Over the whole run the queue held 90 % of the "
        f"buffer or more for {fmt(wr['queue_near_full_s'], 2)} s "
        f"({fmt(ws['queue_near_full_s'], 2)} s simulated) and the buffer dropped {real['drops']} "
        f"packets ({sim['drops']} simulated)"
        + (
            f"; {explicit.LOSS_REASONS[name]}"
            if name in explicit.LOSS_REASONS and real["drops"] > sim["drops"]
            else ""
        )
        + ". In the real run the router delivered a packet up to "
        + ("n/a" if late_max is None else f"{fmt(late_max / 1000, 1)} ms")
        + f" late (p99 {_p99(r)} µs), a host woke up to "
        f"{r.get('host_wake_late_max_us', 'n/a')} µs late, the router used "
        + ("n/a" if r.get("router_cpu_share") is None else f"{100 * r['router_cpu_share']:.0f} %")
        + " of its CPU"
        + ("" if not load else f"; load average {load[0]:.1f} before, {load[1]:.1f} after")
        + "."
    )
