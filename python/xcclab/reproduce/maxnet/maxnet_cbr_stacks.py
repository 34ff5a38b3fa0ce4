"""maxnet-cbr on real packets: ``xcc reproduce maxnet-cbr --stack kernel|udp``.

The experiment of :mod:`.maxnet_cbr` (seed 000 Fig. 9) at the paper's rates through the emu
router (one userspace process on this 2-core machine, docs/emu.md): a 1 Gbit/s bottleneck,
RTT 29 ms, mu = 0.94, one MaxNet flow from 0 to 30 s and a 400 Mbit/s CBR from 10 to 20 s. It
runs three times, and the report sets them side by side:

- ``kernel``: Linux TCP with the BPF ``maxnet`` congestion control and the TCP option
  (docs/kernel.md), the router's MaxNet link stamping the option;
- ``udp``: xcclab's MaxNet transport over UDP (the simulator's host code, real clock), MSS
  1432 B so that a datagram with its headers fits the namespaces' 1500-byte MTU;
- ``sim``: the simulator on the same scenario (``maxnet_cbr.scenario``).

The paper's claims are those of the simulated report (``maxnet_cbr.claims``), judged on each
stack by the one scorer; each real stack is also compared with the simulator, number by number,
against a bound stated here (:data:`SIM_BOUNDS`). ``--stack`` names the stack the report leads
with; all three run either way.

Repeats (issues 31 and 34): every stack runs :func:`~..common.repeats.runs_for` times (5; 2 at
``--quick``) with seeds 1..n, and its claims and the agreements of the real stacks with the
simulator are judged on the mean and 95 % interval over those runs, by the scorer's rule (holds
inside, fails outside, inconclusive across an edge). The seed draws the phase of the MaxNet
router's price update (``crates/xcc-core/src/algorithms/maxnet/mod.rs``), the scenario's only
random draw; the real runs vary besides with the machine's own timing.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..common.repeats import load_1min, runs_for
from ..common.report import (
    atomic_dir,
    figure_links,
    fmt,
    markdown_table,
    save_figure,
    write_metrics,
)
from ..common.stacks import (
    UDP_MSS,
    SimGap,
    claim_rows,
    emu_stats,
    failure_text,
    gap_rows,
    gap_summary,
    kernel_drops,
    run_real,
    score_stacks,
)
from ..common.templates import render
from ..experiment import Variant
from . import maxnet_cbr as base

ID = "maxnet-cbr"
TITLE = "MaxNet with CBR cross traffic on real packets: kernel, UDP transport, simulator"
STACKS = ("kernel", "udp", "sim")
REAL = ("kernel", "udp")
SMOOTH_S = 0.1
#: Real against simulated: (quantity, key of the measurements, factor, unit, bound, relative).
#: Our bounds, fixed before the runs: utilisation within 1 point (a sixth of the 6 % that
#: 1 - mu leaves); the reclaimed share within 10 points; the times within 0.5 s (the 10 ms
#: samples of a real clock cross a level earlier or later by a burst); goodput within 3 %
#: (the stacks' payload per 1500 B packet differs by up to 2 %: 1460, 1432 B and Linux TCP's
#: MSS less its options); the peak queue within 50 %.
SIM_BOUNDS = (
    ("utilisation before the CBR", "util_before", 100, "%", 1.0, False),
    ("utilisation with the CBR", "util_during", 100, "%", 1.0, False),
    ("utilisation after the CBR", "util_after", 100, "%", 1.0, False),
    ("freed capacity back within 0.3 s", "reclaimed_0_3s", 100, "%", 10.0, False),
    ("freed capacity back within 1 s", "reclaimed_1s", 100, "%", 10.0, False),
    ("95 % of the freed capacity back after", "time_to_95pct_s", 1, "s", 0.5, False),
    ("time from the start to 95 % of mu", "time_to_mu_s", 1, "s", 0.5, False),
    ("MaxNet goodput with the CBR", "maxnet_rate_during_bps", 1e-6, "Mbit/s", 0.03, True),
    ("MaxNet goodput after the CBR", "maxnet_rate_after_bps", 1e-6, "Mbit/s", 0.03, True),
    ("peak queue after the CBR starts", "peak_queue_bytes", 1e-6, "MB", 0.5, True),
)


def scenario_dict(scale: float, stack: str) -> dict[str, Any]:
    """``maxnet_cbr.scenario(scale)`` as the emu reads it; the UDP transport's flow gets the MSS
    that fits the MTU."""
    d = json.loads(base.scenario(scale).to_json())
    for flow in d["flow"]:
        if flow["kind"] != "cbr" and stack == "udp":
            flow["transport"] = {**(flow.get("transport") or {}), "mss": UDP_MSS}
    d["name"] = f"maxnet-cbr-{stack}"
    return d


def run_stack(stack: str, scale: float, seed: int = 1) -> Any:
    import xcclab

    data = scenario_dict(scale, stack)
    data["seed"] = seed
    if stack == "sim":
        return xcclab.run(data, progress=False)
    from ...kernel.emu import run_emu

    return run_emu(data, stack)


def time_to_mu(result: Any) -> float:
    """Seconds from the start until the bottleneck's 100 ms mean utilisation first reaches
    95 % of mu."""

    t, util = _smoothed_util(result)
    hit = t[util >= 0.95 * base.MU]
    return float(hit.min()) if hit.size else float("nan")


def dip_seconds(result: Any, scale: float) -> float:
    """Seconds the 100 ms mean utilisation spends below 0.8 outside the transients (the first
    second, and 3 s after the CBR stops): stalls of the real stacks."""
    import numpy as np

    t, util = _smoothed_util(result)
    stop, end = base.CBR_STOP_S * scale, base.T_F_S * scale
    steady = (t > 1.0) & ~((t > stop) & (t < stop + 3.0)) & (t < end - 0.2)
    step = float(np.median(np.diff(t))) if t.size > 1 else 0.0
    return float(np.count_nonzero(steady & (util < 0.8)) * step)


def saturated_after_start(t: Any, util: Any, start: float, stop: float) -> float:
    """Seconds from the CBR's start to the last moment before its stop at which the (100 ms
    mean) utilisation is above mu + 2 %: how long MaxNet takes to give way. 0 if never."""
    over = t[(t > start) & (t < stop) & (util > base.MU + 0.02)]
    return float(over.max() - start) if over.size else 0.0


def _smoothed_util(result: Any) -> tuple[Any, Any]:
    import numpy as np
    import polars as pl

    link = result.link("r1->r2")
    ls = result.link_series.filter(pl.col("link_id") == link["link_id"]).sort("time_s")
    t = ls["time_s"].to_numpy()
    util = ls["utilisation"].to_numpy()
    step = float(np.median(np.diff(t))) if t.size > 1 else SMOOTH_S
    k = max(1, round(SMOOTH_S / step))
    smooth = np.convolve(util, np.ones(k) / k, mode="same")
    return t, smooth


def measure_stack(result: Any, scale: float, fluid: dict[str, float]) -> dict[str, Any]:
    """``maxnet_cbr.measure`` of one stack's run, plus what the real stacks need: 100 ms means,
    dips, drops and the router's counters."""
    m = base.measure(result, scale)
    m.update(fluid)
    t, util = _smoothed_util(result)
    # The 10 ms samples of a real clock swing above mu + 2 % all along; the 100 ms means
    # say when the link stops being over-full (the same definition on every stack).
    m["saturated_after_cbr_start_s"] = saturated_after_start(
        t, util, base.CBR_START_S * scale, base.CBR_STOP_S * scale
    )
    m["time_to_mu_s"] = time_to_mu(result)
    m["utilisation"] = float(result.link("r1->r2")["utilisation"])
    m["drops"] = int(result.link("r1->r2")["drops"])
    m["dip_s"] = dip_seconds(result, scale)
    m.update(emu_stats(result))
    return m


def sim_gaps(
    measured: dict[str, dict[str, Any]],
    runs: dict[str, list[dict[str, Any]]] | None = None,
) -> list[SimGap]:
    """Each real stack's numbers against the simulator's, with :data:`SIM_BOUNDS`, on the
    intervals over each real stack's ``runs`` where given."""
    out = []
    for quantity, key, k, unit, bound, relative in SIM_BOUNDS:

        def val(s: str, key: str = key, k: float = k) -> float | None:
            v = measured.get(s, {}).get(key)
            return None if v is None else float(v) * k

        out.append(
            SimGap(
                quantity,
                unit,
                val("sim"),
                {s: val(s) for s in REAL if s in measured},
                bound,
                relative,
                {
                    s: [None if m.get(key) is None else float(m[key]) * k for m in rs]
                    for s, rs in (runs or {}).items()
                    if s in REAL
                },
                [
                    None if m.get(key) is None else float(m[key]) * k
                    for m in (runs or {}).get("sim", [])
                ],
            )
        )
    return out


def run(
    out_dir: str | Path,
    quick: bool = False,
    *,
    stack: str = "kernel",
    experiment: str = ID,
    log: Callable[[str], None] | None = None,
    progress: bool = True,
) -> Path:
    """Runs the three stacks and writes report.md, metrics.json and figures into ``out_dir``."""
    if experiment != ID:
        raise ValueError(f"{__name__} runs {ID}, not {experiment}")
    if stack not in STACKS:
        raise ValueError(f"stack {stack!r}: expected one of {', '.join(STACKS)}")
    log = log or (lambda _msg: None)
    scale = base.QUICK_SCALE if quick else 1.0
    out_dir = Path(out_dir)
    fluid = base.fluid_reclaim()
    n_runs = runs_for(quick)
    with atomic_dir(out_dir) as tmp:
        results: dict[str, Any] = {}  # the simulated run and each real stack's first
        failures: dict[str, list[str]] = {}
        runs: dict[str, list[dict[str, Any]]] = {}  # each real stack's measurements, per run
        for s in STACKS:
            for i in range(1, n_runs + 1):
                log(f"{ID} --stack {s}: {base.T_F_S * scale:g} s, run {i}/{n_runs} (seed {i})")
                load = load_1min()
                if s == "sim":
                    result = run_stack(s, scale, i)
                else:
                    result, failed = run_real(lambda s=s, i=i: run_stack(s, scale, i), log=log)
                    if failed:
                        failures[f"{s} run {i}"] = failed
                if result is None:
                    continue
                result.save(tmp / "runs" / f"{s}-{i}")
                m = measure_stack(result, scale, fluid)
                m.update(run=i, run_dir=f"runs/{s}-{i}")
                if s != "sim":
                    m["load_1min"] = [load, load_1min()]
                runs.setdefault(s, []).append(m)
                results.setdefault(s, result)
        measured = {s: runs[s][0] for s in results}
        judged = score_stacks(base.claims, measured, runs)
        gaps = sim_gaps(measured, runs)
        figures = _figures(tmp, results, scale, stack)
        write_metrics(
            tmp,
            f"{ID}-{stack}",
            title=TITLE,
            quick=quick,
            runs_per_cell=n_runs,
            variation="seeds 1..n (the phase of MaxNet's price update), and the machine's timing",
            measured=measured,
            runs=runs,
            claims={s: [x.to_json() for x in judged[s][0]] for s in measured},
            verdict={s: judged[s][1].to_json() for s in measured},
            real_vs_sim=[g.to_json() for g in gaps],
            failures=failures,
            figures=figures,
        )
        text = _report(measured, judged, gaps, figures, quick, stack, failures, runs)
        (tmp / "report.md").write_text(text, encoding="utf-8")
    return out_dir / "report.md"


def _figures(tmp: Path, results: dict[str, Any], scale: float, stack: str) -> list[str]:
    import numpy as np
    import polars as pl

    from ...figures import pyplot as _pyplot

    plt = _pyplot()
    fig, (ax_u, ax_r, ax_q) = plt.subplots(3, 1, figsize=(10, 8), sharex=True)
    styles = {"kernel": ("C3", 1.0), "udp": ("C0", 0.8), "sim": ("k", 0.7)}
    for s, r in results.items():
        color, lw = styles[s]
        t, util = _smoothed_util(r)
        ax_u.plot(t, util, color=color, lw=lw, label=s)
        fs = r.flow_series.filter(pl.col("flow_id") == 0).sort("time_s")
        ft, rate = fs["time_s"].to_numpy(), fs["rate_bps"].to_numpy()
        step = float(np.median(np.diff(ft))) if ft.size > 1 else SMOOTH_S
        k = max(1, round(SMOOTH_S / step))
        ax_r.plot(ft, np.convolve(rate, np.ones(k) / k, mode="same") / 1e6, color=color, lw=lw)
        link = r.link("r1->r2")
        ls = r.link_series.filter(pl.col("link_id") == link["link_id"]).sort("time_s")
        ax_q.plot(ls["time_s"].to_numpy(), ls["queue_bytes"].to_numpy() / 1e6, color=color, lw=lw)
    ax_u.axhline(base.MU, color="grey", ls=":", lw=0.8, label="mu")
    ax_u.set_ylabel("bottleneck utilisation\n(100 ms mean)")
    ax_u.set_ylim(0, 1.05)
    ax_u.legend(fontsize=8, loc="lower left")
    ax_r.set_ylabel("MaxNet goodput\n(Mbit/s, 100 ms)")
    ax_q.set_ylabel("queue (MB)")
    ax_q.set_xlabel("time (s)")
    for ax in (ax_u, ax_r, ax_q):
        ax.grid(True, lw=0.3)
        for x in (base.CBR_START_S * scale, base.CBR_STOP_S * scale):
            ax.axvline(x, color="grey", lw=0.5)
    fig.suptitle(
        "maxnet-cbr on real packets: 1 Gbit/s, RTT 29 ms, mu = 0.94, 400 Mbit/s CBR "
        f"(report led by: {stack})"
    )
    fig.tight_layout()
    written = [p.name for p in save_figure(fig, tmp, "stacks")]
    plt.close(fig)
    return written


def _num(v: Any, digits: int) -> str:
    return fmt(v if isinstance(v, (int, float)) else None, digits)


HOSTS = ("src", "cbr", "dst")


def cbr_sink_losses(failures: dict[str, list[str]]) -> list[float]:
    """For each failed kernel-stack attempt whose receiving host lost UDP datagrams: the share
    of the CBR's datagrams lost (the CBR's sink is the only UDP socket of that run)."""
    out = []
    msgs = [m for key, ms in failures.items() if key.split(" ")[0] == "kernel" for m in ms]
    for msg in msgs:
        c = {x["host"]: x for x in kernel_drops(msg, HOSTS)}
        sent = c.get("cbr", {}).get("tx_packets", 0)
        lost = c.get("dst", {}).get("udp_rcvbuf_errors", 0)
        if sent and lost:
            out.append(lost / sent)
    return out


def _sink_text(failures: dict[str, list[str]], kernel_failed: bool) -> str:
    shares = cbr_sink_losses(failures)
    if not shares:
        return ""
    pct = " and ".join(f"{100 * x:.0f} %" for x in shares)
    attempts = f" (in its {len(shares)} attempts)" if len(shares) > 1 else ""
    return (
        "Where: the receiving host `dst`'s UDP sockets (`udp_rcvbuf_errors`). On the kernel "
        "stack the only UDP socket there is the CBR's sink, so the sink fell behind the "
        f"400 Mbit/s CBR (33,333 datagrams of 1500 B a second): it lost {pct} of the CBR's "
        f"datagrams{attempts}. The emu's CBR sink (`crates/xcc-emu/src/cbr.rs`) is one "
        "thread reading one datagram per system call from a socket with the system's "
        "default receive buffer (`net.core.rmem_default`), where xcclab's transport asks "
        "for 8 MB; at the earlier 100 Mbit/s scaling (a 40 Mbit/s CBR) it kept up. On `udp` "
        "the same host also holds "
        "the MaxNet receiver, so its count mixes both."
        + (
            " Until the sink keeps up at 400 Mbit/s (a larger buffer, batched reads) no "
            "kernel-stack run of this scenario passes the emu's check."
            if kernel_failed
            else ""
        )
    )


def _report(
    measured: dict[str, dict[str, Any]],
    judged: dict[str, Any],
    gaps: list[SimGap],
    figures: list[str],
    quick: bool,
    stack: str,
    failures: dict[str, list[str]] | None = None,
    runs: dict[str, list[dict[str, Any]]] | None = None,
) -> str:
    failures = failures or {}
    runs = runs or {}
    order = tuple(s for s in ("sim", *REAL) if s in measured)
    real = tuple(s for s in REAL if s in measured)
    header, rows = claim_rows(judged, order)
    verdicts = ", ".join(
        f"`{s}` {judged[s][1].verdict} ({judged[s][1].holding} of {judged[s][1].counted})"
        for s in order
    )
    g_header, g_rows = gap_rows(gaps, real)
    within = (
        "; ".join("`{}` {} of {}".format(s, *gap_summary(gaps, s)) for s in real)
        or "no real run to compare"
    )
    keys = [
        ("time to 95 % of mu (s)", "time_to_mu_s", 1, 2),
        ("utilisation before the CBR", "util_before", 1, 3),
        ("utilisation with the CBR", "util_during", 1, 3),
        ("utilisation after the CBR", "util_after", 1, 3),
        ("MaxNet goodput with the CBR (Mbit/s)", "maxnet_rate_during_bps", 1e-6, 1),
        ("MaxNet goodput after the CBR (Mbit/s)", "maxnet_rate_after_bps", 1e-6, 1),
        ("freed capacity back after 0.3 s", "reclaimed_0_3s", 1, 2),
        ("freed capacity back after 1 s", "reclaimed_1s", 1, 2),
        ("95 % of it back after (s)", "time_to_95pct_s", 1, 2),
        ("peak queue after the CBR starts (MB)", "peak_queue_bytes", 1e-6, 2),
        (
            "over mu + 2 % after the CBR starts, 100 ms means (s)",
            "saturated_after_cbr_start_s",
            1,
            2,
        ),
        ("drops at the bottleneck", "drops", 1, 0),
        ("retransmissions", "retransmits", 1, 0),
        ("time below 80 % utilisation, steady parts (s)", "dip_s", 1, 2),
        ("router lateness p99 (µs)", "router_lateness_p99_us", 1, 0),
        ("router lateness max (µs)", "router_lateness_max_us", 1, 0),
        ("router CPU share", "router_cpu_share", 1, 2),
        ("hosts' transport woke late, max (µs)", "host_wake_late_max_us", 1, 0),
        ("kernel TUN drops (tx / rx)", None, 1, 0),
        ("machine load average after the run", "loadavg", 1, 1),
    ]

    def cell(s: str, key: str | None, mult: float, digits: int) -> str:
        m = measured[s]
        if key is None:
            tx, rx = m.get("kernel_tun_tx_dropped"), m.get("kernel_tun_rx_dropped")
            return f"{_num(tx, 0)} / {_num(rx, 0)}"
        v = m.get(key)
        return _num(None if v is None else v * mult, digits)

    stack_rows = [[label] + [cell(s, key, mult, d) for s in order] for label, key, mult, d in keys]
    per_run = markdown_table(
        [
            "run",
            "time to 95 % of mu (s)",
            "utilisation with the CBR",
            "freed capacity back after 0.3 s",
            "MaxNet goodput with the CBR (Mbit/s)",
            "peak queue (MB)",
            "router lateness p99 / max (µs)",
            "load (1 min) before / after",
        ],
        [
            [
                f"[{s} #{m['run']}]({m['run_dir']}/run.json)",
                _num(m.get("time_to_mu_s"), 2),
                _num(m.get("util_during"), 3),
                _num(m.get("reclaimed_0_3s"), 2),
                _num(m["maxnet_rate_during_bps"] / 1e6, 1),
                _num(m["peak_queue_bytes"] / 1e6, 2),
                f"{_num(m.get('router_lateness_p99_us'), 0)} / "
                f"{_num(m.get('router_lateness_max_us'), 0)}",
                " / ".join(_num(x, 1) for x in m["load_1min"]) if "load_1min" in m else "-",
            ]
            for s in ("sim", *REAL)
            for m in runs.get(s, [])
        ],
    )
    n_runs = max((len(v) for v in runs.values()), default=1)
    failed = [s for s in REAL if s not in measured]
    warnings = "; ".join(
        f"`{s}`: " + ("; ".join(measured[s].get("fidelity_warnings") or []) or "nothing")
        for s in real
    )
    return render(
        "maxnet_cbr_stacks.md.j2",
        title=TITLE,
        id=ID,
        stack=stack,
        quick=quick,
        udp_mss=UDP_MSS,
        failed_runs=bool(failures),
        failed=" or ".join(f"`{s}`" for s in failed),
        failures=failure_text(failures, HOSTS) if failures else "",
        sink=_sink_text(failures, "kernel" in failed) if failures else "",
        verdicts=verdicts,
        claims=markdown_table(header, rows),
        within=within,
        gaps=markdown_table(g_header, g_rows),
        stacks=markdown_table(["quantity", *order], stack_rows),
        per_run=per_run,
        runs=n_runs,
        warnings=warnings or "no real run",
        figures=figure_links(figures),
        times=", ".join(f"{s} {fmt(measured[s]['time_to_mu_s'], 2)} s" for s in order),
        fluid_reclaimed_pct=fmt(100 * measured["sim"]["fluid_reclaimed_0_3s"], 0),
        dips=", ".join(f"{s} {fmt(measured[s]['dip_s'], 2)} s" for s in real) or "no real run",
    )


#: ``xcc reproduce maxnet-cbr --stack kernel|udp``.
VARIANT = Variant(base.ID, "stack", run)
