"""maxnet-two-link on real packets: ``xcc reproduce maxnet-two-link --stack kernel|udp``.

The scenario of :mod:`.maxnet_two_link` (seed 000, Figs 5-8) at the paper's rates, unchanged:
L1 622 Mbit/s (29 ms of RTT), L2 400 Mbit/s (150 ms), mu = 0.9, six MaxNet flows over 120 s,
unlimited buffers (the emu router accepts them as the simulator does). It runs through the emu
router with MaxNet on the chosen stack (``kernel``: Linux TCP with the BPF ``maxnet``
congestion control and the TCP option, docs/kernel.md; ``udp``: xcclab's transport over UDP,
MSS 1432 B to fit the 1500-byte MTU) and in the simulator, and the report sets the two side by
side: per interval the active flows' rates over its last 10 s against each other and against
the max-min oracle (a reference, not the paper's), and the paper's claims of the simulated
report (``maxnet_two_link.claims``) judged on each by the one scorer.

Repeats (issues 31 and 34): the real stack and the simulator each run
:func:`~..common.repeats.runs_for` times (5; 2 at ``--quick``) with seeds 1..n, and the claims,
references and agreements of real with simulated are judged on the mean and 95 % interval over
those runs, by the scorer's rule (holds inside, fails outside, inconclusive across an edge). The
seed draws the phase of each MaxNet router's price update
(``crates/xcc-core/src/algorithms/maxnet/mod.rs``), the scenario's only random draw; the real
runs vary besides with the machine's own timing.
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
    EMU_STATS,
    UDP_MSS,
    SimGap,
    claim_rows,
    emu_stats,
    failure_text,
    gap_rows,
    gap_summary,
    run_real,
    score_stacks,
)
from ..common.templates import render
from ..experiment import Variant
from . import maxnet_two_link as base

ID = base.ID
TITLE = "MaxNet, multiple flows over two links, on real packets beside the simulator"
STACKS = ("kernel", "udp")
QUICK_SCALE = 0.25
#: Our bounds on real - simulated, fixed before the runs: each rate within 5 % (the oracle's
#: own "table" band), each rise within one RTT of the flow, the steady queue within one
#: packet, the peak queue within 50 %.
RATE_BOUND, RISE_BOUND_RTTS, STEADY_QUEUE_BOUND_PKTS, PEAK_QUEUE_BOUND = 0.05, 1.0, 1.0, 0.5


def scenario_dict(scale: float, stack: str) -> dict[str, Any]:
    """``maxnet_two_link.scenario(scale)`` as the emu reads it; on ``udp`` the flows get the
    MSS that fits the MTU."""
    d = json.loads(base.scenario(scale).to_json())
    if stack == "udp":
        for flow in d["flow"]:
            flow["transport"] = {**(flow.get("transport") or {}), "mss": UDP_MSS}
    d["name"] = f"{ID}-{stack}"
    return d


def run_stack(stack: str, scale: float, seed: int = 1) -> Any:
    """One run of the scenario on ``stack`` with ``seed``."""
    import xcclab

    if stack == "sim":
        return xcclab.run(base.scenario(scale), seed=seed, progress=False)
    from ...kernel.emu import run_emu

    data = scenario_dict(scale, stack)
    data["seed"] = seed
    return run_emu(data, stack)


def measure_stack(result: Any, scale: float) -> dict[str, Any]:
    """``maxnet_two_link.measure`` and the router's counters (real stacks)."""
    m = base.measure(result, scale)
    m.update(emu_stats(result))
    m["drops"] = {link: int(result.link(link)["drops"]) for link in ("A->B", "B->C")}
    m["interval_queues"] = interval_queues(result, scale)
    return m


def interval_queues(result: Any, scale: float) -> list[dict[str, Any]]:
    """Per interval and link: the mean and the largest queue over the interval's last 10 s,
    in 1500 B packets."""
    import polars as pl

    out = []
    for link in ("A->B", "B->C"):
        row = result.link(link)
        ls = result.link_series.filter(pl.col("link_id") == row["link_id"])
        for a, b in base.INTERVALS:
            q = ls.filter((pl.col("time_s") > (b - 10) * scale) & (pl.col("time_s") <= b * scale))
            q = q["queue_bytes"]
            out.append(
                {
                    "link": link,
                    "interval": [a, b],
                    "mean_packets": float(q.mean()) / 1500 if q.len() else float("nan"),
                    "max_packets": float(q.max()) / 1500 if q.len() else float("nan"),
                }
            )
    return out


def discussion(measured: dict[str, dict[str, Any]], real: str) -> list[str]:
    """What the tables say, computed from them: per interval, whether every active flow of
    each stack is within 5 % of its max-min rate, and the queues."""
    if real not in measured:
        return []
    lines = []
    for s in ("sim", real):
        good, bad = [], []
        for a, b in base.INTERVALS:
            cells = [c for c in measured[s]["cells"] if list(c["interval"]) == [a, b]]
            if not cells:
                continue
            worst = max(cells, key=lambda c: abs(c["ours_bps"] / c["maxmin_bps"] - 1))
            gap = worst["ours_bps"] / worst["maxmin_bps"] - 1
            if abs(gap) <= 0.05:
                good.append(f"{a}-{b} s")
            else:
                bad.append(f"{a}-{b} s ({worst['flow']} {100 * gap:+.0f} %)")
        lines.append(
            f"`{s}`: every active flow within 5 % of its max-min rate in "
            f"{', '.join(good) or 'no interval'}"
            + (f"; not in {', '.join(bad)} (the flow furthest from it)" if bad else "")
            + "."
        )
    q = {
        s: {(x["link"], tuple(x["interval"])): x for x in measured[s].get("interval_queues", [])}
        for s in ("sim", real)
    }
    rows = []
    for key in q[real]:
        r, sm = q[real][key], q["sim"].get(key)
        if sm is None:
            continue
        (a, b) = key[1]
        rows.append(
            f"{key[0]} {a}-{b} s: {r['mean_packets']:.0f} (max {r['max_packets']:.0f}) "
            f"against {sm['mean_packets']:.1f} (max {sm['max_packets']:.0f})"
        )
    if rows:
        lines.append(
            f"Queues over each interval's last 10 s, mean (largest) in 1500 B packets, `{real}` "
            "against `sim`: " + "; ".join(rows) + "."
        )
    return lines


def sim_gaps(
    measured: dict[str, dict[str, Any]],
    real: str,
    runs: dict[str, list[dict[str, Any]]] | None = None,
) -> list[SimGap]:
    """The real stack's rates, rises and queues against the simulator's (none if every real
    run failed), on the interval over the real stack's ``runs`` where given."""
    if real not in measured:
        return []
    sim = measured["sim"]
    reals = (runs or {}).get(real) or [measured[real]]

    sims = (runs or {}).get("sim") or []

    def gap(quantity, unit, sim_value, of, bound, relative=False) -> SimGap:
        values = [of(m) for m in reals]
        return SimGap(quantity, unit, sim_value, {real: values[0]}, bound, relative,
                      {real: values}, [of(m) for m in sims])  # fmt: skip

    def cell_rate(m: dict[str, Any], c: dict[str, Any]) -> float | None:
        key = (tuple(c["interval"]), c["flow"])
        rc = {(tuple(x["interval"]), x["flow"]): x for x in m["cells"]}.get(key)
        return None if rc is None else rc["ours_bps"] / 1e6

    def rise(m: dict[str, Any], name: str) -> float | None:
        rr = m["rises"].get(name)
        return None if rr is None else rr["rise_s"] / rr["rtt_s"]

    def queue(m: dict[str, Any], link: str, key: str, unit: float) -> float:
        return m["queues"].get(link, {}).get(key, float("nan")) / unit

    out = []
    for c in sim["cells"]:
        out.append(gap(f"rate of {c['flow']} in {c['interval'][0]}-{c['interval'][1]} s",
                       "Mbit/s", c["ours_bps"] / 1e6, lambda m, c=c: cell_rate(m, c),
                       RATE_BOUND, True))  # fmt: skip
    for name, sr in sim["rises"].items():
        out.append(gap(f"rise of {name}", "RTTs", sr["rise_s"] / sr["rtt_s"],
                       lambda m, name=name: rise(m, name), RISE_BOUND_RTTS))  # fmt: skip
    for link, q in sim["queues"].items():
        out.append(gap(f"mean queue of {link}, last 10 s of the intervals", "packets",
                       q["mean_steady_bytes"] / 1500,
                       lambda m, link=link: queue(m, link, "mean_steady_bytes", 1500),
                       STEADY_QUEUE_BOUND_PKTS))  # fmt: skip
        out.append(gap(f"peak queue of {link}", "MB", q["max_bytes"] / 1e6,
                       lambda m, link=link: queue(m, link, "max_bytes", 1e6),
                       PEAK_QUEUE_BOUND, True))  # fmt: skip
    return out


def interval_rows(
    measured: dict[str, dict[str, Any]],
    real: str,
    judged: dict[str, Any],
    runs: dict[str, list[dict[str, Any]]] | None = None,
) -> list[list[str]]:
    """Per interval and active flow: the oracle's rate, the simulated and the real one (Mbit/s,
    last 10 s of the interval; the mean over each side's ``runs`` where given), each as a share
    of the oracle's with the reference's verdict (on the runs' interval)."""
    verdicts = {
        s: {x.claim.id: x.status for x in judged[s][0] if x.claim.kind == "reference"}
        for s in ("sim", real)
        if s in judged
    }

    def mean_cells(stack: str) -> dict[Any, dict[str, float]]:
        many = (runs or {}).get(stack) or [measured.get(stack, {})]
        by_key: dict[Any, list[float]] = {}
        for m in many:
            for c in m.get("cells", []):
                by_key.setdefault((tuple(c["interval"]), c["flow"]), []).append(c["ours_bps"])
        return {k: {"ours_bps": sum(v) / len(v)} for k, v in by_key.items()}

    cells, sim_cells = mean_cells(real), mean_cells("sim")
    rows = []
    for c in measured["sim"]["cells"]:
        a, b = c["interval"]
        cid = f"rate of {c['flow']} in {a}-{b} s"
        rc = cells.get((tuple(c["interval"]), c["flow"]))
        want = c["maxmin_bps"]
        row = [f"{a}-{b} s", c["flow"], fmt(want / 1e6, 1)]
        sc = sim_cells.get((tuple(c["interval"]), c["flow"]), c)
        for s, cell in (("sim", sc), (real, rc)):
            if cell is None:
                row += ["n/a", "n/a"]
                continue
            row += [
                f"{fmt(cell['ours_bps'] / 1e6, 1)} ({100 * (cell['ours_bps'] / want - 1):+.1f} %)",
                verdicts.get(s, {}).get(cid, "n/a"),
            ]
        rows.append(row)
    return rows


def run(
    out_dir: str | Path,
    quick: bool = False,
    *,
    stack: str = "kernel",
    log: Callable[[str], None] | None = None,
    progress: bool = True,
) -> Path:
    """Runs the scenario on ``stack`` and in the simulator; writes report.md, metrics.json and
    figures into ``out_dir``."""
    if stack not in STACKS:
        raise ValueError(f"stack {stack!r}: expected one of {', '.join(STACKS)}")
    log = log or (lambda _msg: None)
    scale = QUICK_SCALE if quick else 1.0
    out_dir = Path(out_dir)
    n_runs = runs_for(quick)
    with atomic_dir(out_dir) as tmp:
        results: dict[str, Any] = {}  # the simulated run and the real stack's first
        failures: dict[str, list[str]] = {}
        runs: dict[str, list[dict[str, Any]]] = {}
        for i in range(1, n_runs + 1):
            log(f"{ID} --stack {stack}: {120 * scale:g} s, run {i}/{n_runs}")
            load = load_1min()
            result, failed = run_real(lambda i=i: run_stack(stack, scale, i), log=log)
            if failed:
                failures[f"{stack} run {i}"] = failed
            if result is None:
                continue
            result.save(tmp / "runs" / f"{stack}-{i}")
            m = measure_stack(result, scale)
            m.update(run=i, run_dir=f"runs/{stack}-{i}", load_1min=[load, load_1min()])
            runs.setdefault(stack, []).append(m)
            results.setdefault(stack, result)
        for i in range(1, n_runs + 1):
            log(f"{ID} simulated: {120 * scale:g} s, seed {i}")
            result = run_stack("sim", scale, i)
            result.save(tmp / "runs" / f"sim-{i}")
            m = measure_stack(result, scale)
            m.update(run=i, run_dir=f"runs/sim-{i}")
            runs.setdefault("sim", []).append(m)
            results.setdefault("sim", result)
        order = tuple(s for s in ("sim", stack) if s in results)
        measured = {"sim": runs["sim"][0]}
        if stack in runs:
            measured[stack] = runs[stack][0]
        judged = score_stacks(base.claims, measured, runs)
        gaps = sim_gaps(measured, stack, runs)
        figures = _figures(tmp, results, stack, scale)
        write_metrics(
            tmp,
            f"{ID}-{stack}",
            title=TITLE,
            quick=quick,
            runs_per_cell=n_runs,
            variation="seeds 1..n (the phase of MaxNet's price updates), and the machine's timing",
            measured={s: measured[s] for s in order},
            runs=runs,
            claims={s: [x.to_json() for x in judged[s][0]] for s in order},
            verdict={s: judged[s][1].to_json() for s in order},
            real_vs_sim=[g.to_json() for g in gaps],
            failures=failures,
            figures=figures,
        )
        text = _report(measured, judged, gaps, figures, quick, stack, failures, runs)
        (tmp / "report.md").write_text(text, encoding="utf-8")
    return out_dir / "report.md"


def _figures(tmp: Path, results: dict[str, Any], stack: str, scale: float) -> list[str]:
    import polars as pl

    from ...figures import pyplot as _pyplot

    plt = _pyplot()
    fig, (ax_r, ax_q) = plt.subplots(2, 1, figsize=(10, 7), sharex=True)
    colors = {name: f"C{i}" for i, (name, *_rest) in enumerate(base.FLOWS)}
    for s, ls_style in ((stack, "-"), ("sim", "--")):
        if s not in results:
            continue
        r = results[s]
        fs = r.flow_series.sort("time_s")
        for fid, name in zip(r.flows["flow_id"].to_list(), r.flows["name"].to_list()):
            sub = fs.filter(pl.col("flow_id") == fid)
            sec = (
                sub.with_columns((pl.col("time_s") - 0.001).floor().alias("s"))
                .group_by("s")
                .agg(pl.col("rate_bps").mean())
                .sort("s")
            )
            ax_r.plot(
                sec["s"].to_numpy() + 0.5,
                sec["rate_bps"].to_numpy() / 1e6,
                ls=ls_style,
                lw=0.9 if ls_style == "-" else 0.8,
                color=colors.get(name),
                label=f"{name} ({s})",
            )
        for link, color in (("A->B", "C7"), ("B->C", "C9")):
            row = r.link(link)
            ls = r.link_series.filter(pl.col("link_id") == row["link_id"]).sort("time_s")
            ax_q.plot(
                ls["time_s"].to_numpy(),
                ls["queue_bytes"].to_numpy() / 1e6,
                ls=ls_style,
                lw=0.7,
                color=color,
                label=f"{link} ({s})",
            )
    for a, _b in base.INTERVALS[1:]:
        for ax in (ax_r, ax_q):
            ax.axvline(a * scale, color="grey", lw=0.4)
    ax_r.set_ylabel("rate, 1 s mean (Mbit/s)")
    ax_r.legend(fontsize=7, ncol=6, loc="upper center")
    ax_q.set_ylabel("queue (MB)")
    ax_q.set_xlabel("time (s)")
    ax_q.legend(fontsize=7, ncol=4)
    for ax in (ax_r, ax_q):
        ax.grid(True, lw=0.3)
    fig.suptitle(
        f"maxnet-two-link: {stack} (solid) and simulator (dashed); L1 622 Mbit/s (29 ms), "
        "L2 400 Mbit/s (150 ms), mu = 0.9"
    )
    fig.tight_layout()
    written = [p.name for p in save_figure(fig, tmp, "rates-queues-stacks")]
    plt.close(fig)
    return written


def _num(v: Any, digits: int) -> str:
    return fmt(v if isinstance(v, (int, float)) else None, digits)


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
    order = tuple(s for s in ("sim", stack) if s in measured)
    header, rows = claim_rows(
        judged, order, kinds=("point", "bound", "ordering", "shape", "qualitative")
    )
    verdicts = ", ".join(
        f"`{s}` {judged[s][1].verdict} ({judged[s][1].holding} of {judged[s][1].counted})"
        for s in order
    )
    g_header, g_rows = gap_rows(gaps, (stack,))
    ok, n = gap_summary(gaps, stack)
    iv_rows = interval_rows(measured, stack, judged, runs)
    each = (runs or {}).get(stack) or [
        measured.get(stack) or {k: None for k in EMU_STATS} | {"drops": {}}
    ]
    m = each[0]

    def stat(label: str, of: Callable[[dict[str, Any]], str]) -> list[str]:
        return [label, *(of(x) for x in each)]

    stat_rows = [
        stat("router lateness p99 / max (µs)", lambda x:
             f"{_num(x['router_lateness_p99_us'], 0)} / {_num(x['router_lateness_max_us'], 0)}"),
        stat("router CPU share", lambda x: _num(x["router_cpu_share"], 2)),
        stat("hosts' transport woke late, max (µs)",
             lambda x: _num(x["host_wake_late_max_us"], 0)),
        stat("kernel TUN drops (tx / rx)", lambda x:
             f"{_num(x['kernel_tun_tx_dropped'], 0)} / {_num(x['kernel_tun_rx_dropped'], 0)}"),
        stat("drops at L1 / L2", lambda x: f"{x['drops'].get('A->B')} / {x['drops'].get('B->C')}"),
        stat("machine load average (1 min) before / after the run", lambda x:
             " / ".join(_num(v, 1) for v in x["load_1min"]) if "load_1min" in x
             else _num(x["loadavg"], 1)),
    ]  # fmt: skip
    stat_header = [
        "quantity",
        *(f"[{stack} #{x['run']}]({x['run_dir']}/run.json)" if "run" in x else stack
          for x in each),
    ]  # fmt: skip
    transport = (
        "Linux TCP with the BPF `maxnet` congestion control and the router stamping its TCP "
        "option (`docs/kernel.md`)"
        if stack == "kernel"
        else f"xcclab's MaxNet transport over UDP (MSS {UDP_MSS}, to fit the 1500-byte MTU)"
    )
    hosts = [h["name"] for h in scenario_dict(1.0, stack)["host"]] if failures else []
    return render(
        "maxnet_two_link_stacks.md.j2",
        title=TITLE,
        id=ID,
        stack=stack,
        quick=quick,
        quick_scale=f"{QUICK_SCALE:g}",
        setup=base.__doc__.split("\n\n", 1)[1].split("\n\nPer interval")[0].strip(),
        transport=transport,
        failures=failure_text(failures, hosts) if failures else "",
        measured_real=stack in measured,
        verdicts=verdicts,
        claims=markdown_table(header, rows),
        intervals=markdown_table(
            [
                "interval",
                "flow",
                "max-min (Mbit/s)",
                "sim (vs max-min)",
                "sim: reference",
                f"{stack} (vs max-min)",
                f"{stack}: reference",
            ],
            iv_rows,
        ),
        gaps_within=ok,
        gaps_count=n,
        gaps=markdown_table(g_header, g_rows),
        stats=markdown_table(stat_header, stat_rows),
        runs=len(each),
        warnings="; ".join(m.get("fidelity_warnings") or []) or "nothing",
        figures=figure_links(figures),
        discussion=discussion(measured, stack),
    )


#: ``xcc reproduce maxnet-two-link --stack kernel|udp``.
VARIANT = Variant(base.ID, "stack", run)
