"""``xcc compare SCENARIO``: the same scenario simulated and emulated, side by side.

Reports a verdict against stated bounds (:data:`BOUNDS`: every link's utilisation and every
flow's goodput within 2 % of the simulator's, the agreement docs/emu.md states and
tests/python/test_emu.py checks), the router's health in the real run (lateness percentiles,
stalls, kernel-side drops, the fidelity warnings), a figure with the simulated and real series
overlaid, then per-flow goodput and completion time, per-link utilisation and queue (mean,
max), and the distribution (quantiles) of completion and response times when the run has
any, with the relative difference emulated / simulated - 1. Large differences are findings,
not failures: the report says what each column measures so they can be read (``docs/emu.md``).
"""

from __future__ import annotations

import math
from typing import Any

from .results import RunResult

QUANTILES = (0.1, 0.5, 0.9, 0.99)
#: Largest |real / simulated - 1| for the verdict: every link's utilisation (reverse links
#: too) and every flow's goodput (docs/emu.md: the UDP transport bills packets at the
#: simulator's sizes, so they agree within 2 %).
BOUNDS = {"utilisation": 0.02, "goodput": 0.02}
#: The router's and hosts' health figures of a real run (run.json's ``emu``), as reported.
HEALTH = (
    ("lateness_p50_us", "router lateness, median (µs)"),
    ("lateness_p99_us", "router lateness, 99th percentile (µs)"),
    ("lateness_max_us", "router lateness, largest (µs; a stall above 10 ms)"),
    ("host_wake_late_max_us", "hosts' transport woke late, largest (µs)"),
    ("router_cpu_share", "router CPU share"),
    ("kernel_tun_tx_dropped", "kernel drops at the TUN devices, TX"),
    ("kernel_tun_rx_dropped", "kernel drops at the TUN devices, RX"),
    ("kernel_udp_rcvbuf_errors", "hosts' UDP receive-buffer drops"),
    ("kernel_udp_sndbuf_errors", "hosts' UDP send-buffer drops"),
    ("router_realtime", "router ran with real-time priority"),
    ("hosts_realtime", "hosts' transport ran with real-time priority"),
)


def _rel(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or not math.isfinite(a) or not math.isfinite(b) or a == 0:
        return None
    return b / a - 1.0


def _quantiles(values: list[float]) -> dict[str, float | None]:
    xs = sorted(v for v in values if v is not None and math.isfinite(v))
    if not xs:
        return {f"p{int(q * 100)}": None for q in QUANTILES}
    return {f"p{int(q * 100)}": xs[min(len(xs) - 1, int(q * len(xs)))] for q in QUANTILES}


def differences(sim: RunResult, emu: RunResult) -> dict[str, Any]:
    """Per-flow, per-link and distribution differences between two runs of one scenario."""
    flows = []
    for s, e in zip(sim.flows.iter_rows(named=True), emu.flows.iter_rows(named=True)):
        flows.append(
            {
                "flow": s["name"],
                "goodput_sim_bps": s["goodput_bps"],
                "goodput_emu_bps": e["goodput_bps"],
                "goodput_diff": _rel(s["goodput_bps"], e["goodput_bps"]),
                "fct_sim_s": s["fct_s"],
                "fct_emu_s": e["fct_s"],
            }
        )
    links = []
    for s, e in zip(sim.links.iter_rows(named=True), emu.links.iter_rows(named=True)):
        links.append(
            {
                "link": s["name"],
                "utilisation_sim": s["utilisation"],
                "utilisation_emu": e["utilisation"],
                "utilisation_diff": _rel(s["utilisation"], e["utilisation"]),
                "mean_queue_sim_packets": s["mean_queue_packets"],
                "mean_queue_emu_packets": e["mean_queue_packets"],
                "max_queue_sim_bytes": s["max_queue_bytes"],
                "max_queue_emu_bytes": e["max_queue_bytes"],
                "drops_sim": s["drops"],
                "drops_emu": e["drops"],
                "marks_sim": s["marks"],
                "marks_emu": e["marks"],
            }
        )
    fct = {
        "sim": _quantiles(sim.flows["fct_s"].to_list()),
        "emu": _quantiles(emu.flows["fct_s"].to_list()),
    }
    resp = {
        "sim": _quantiles(sim.transactions["response_time_s"].to_list()),
        "emu": _quantiles(emu.transactions["response_time_s"].to_list()),
    }
    out = {
        "flows": flows,
        "links": links,
        "fct_quantiles_s": fct,
        "response_time_quantiles_s": resp,
    }
    out["verdict"] = verdict(out)
    out["router"] = router_health(emu.run_info.get("emu") or {})
    return out


def verdict(d: dict[str, Any]) -> dict[str, Any]:
    """Each bound of :data:`BOUNDS` checked on every link and flow that carried traffic: how
    many are within it, the worst, and whether all are."""
    checks = []
    for what, rows, name_key, key in (
        ("utilisation", d["links"], "link", "utilisation_diff"),
        ("goodput", d["flows"], "flow", "goodput_diff"),
    ):
        judged = [r for r in rows if r[key] is not None]
        bound = BOUNDS[what]
        within = [r for r in judged if abs(r[key]) <= bound]
        worst = max(judged, key=lambda r: abs(r[key]), default=None)
        checks.append(
            {
                "what": what,
                "bound": bound,
                "judged": len(judged),
                "within": len(within),
                "worst": None if worst is None else [worst[name_key], worst[key]],
                "holds": len(within) == len(judged) and bool(judged),
            }
        )
    judged = [c for c in checks if c["judged"]]
    return {"checks": checks, "agrees": bool(judged) and all(c["holds"] for c in judged)}


def router_health(stats: dict[str, Any]) -> dict[str, Any] | None:
    """The real run's health figures and fidelity warnings; None for a run without them."""
    if not stats:
        return None
    from .emu import fidelity_warnings

    figures = {key: stats[key] for key, _ in HEALTH if key in stats}
    return {"figures": figures, "warnings": fidelity_warnings(stats)}


def _fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def render(d: dict[str, Any], figure: str | None = None) -> str:
    """Markdown of :func:`differences`: verdict, router health, the overlay ``figure`` (a
    path relative to the report) when given, then the tables; a section with nothing to
    show is left out."""
    lines = _verdict_lines(d.get("verdict") or verdict(d))
    health = d.get("router")
    if health:
        lines += ["", "## Router health (real run)", "", "| figure | value |", "|---|---|"]
        labels = dict(HEALTH)
        for key, value in health["figures"].items():
            lines.append(f"| {labels[key]} | {_fmt(value)} |")
        lines += [""] + (
            [f"- warning: {w}" for w in health["warnings"]]
            or [
                "No fidelity warning: nothing in the router's or hosts' timing made this run "
                "less faithful to the modelled network."
            ]
        )
    if figure:
        lines += [
            "",
            "## Series",
            "",
            f"![simulated (solid) and real packets (dashed), same axes]({figure})",
        ]
    lines += [
        "",
        "## Flows",
        "",
        "| flow | goodput sim (bit/s) | goodput emu (bit/s) | diff | FCT sim (s) | FCT emu (s) |",
    ]
    lines.append("|---|---|---|---|---|---|")
    for f in d["flows"]:
        diff = "-" if f["goodput_diff"] is None else f"{f['goodput_diff']:+.1%}"
        lines.append(
            f"| {f['flow']} | {_fmt(f['goodput_sim_bps'])} | {_fmt(f['goodput_emu_bps'])} | {diff} "
            f"| {_fmt(f['fct_sim_s'])} | {_fmt(f['fct_emu_s'])} |"
        )
    lines += ["", "## Links", ""]
    lines.append(
        "| link | util sim | util emu | diff | mean queue sim (pkt) | mean queue emu (pkt) "
        "| max queue sim (B) | max queue emu (B) | drops sim/emu | marks sim/emu |"
    )
    lines.append("|---|---|---|---|---|---|---|---|---|---|")
    for x in d["links"]:
        diff = "-" if x["utilisation_diff"] is None else f"{x['utilisation_diff']:+.1%}"
        lines.append(
            f"| {x['link']} | {_fmt(x['utilisation_sim'])} | {_fmt(x['utilisation_emu'])} | {diff} "
            f"| {_fmt(x['mean_queue_sim_packets'])} | {_fmt(x['mean_queue_emu_packets'])} "
            f"| {x['max_queue_sim_bytes']} | {x['max_queue_emu_bytes']} "
            f"| {x['drops_sim']}/{x['drops_emu']} | {x['marks_sim']}/{x['marks_emu']} |"
        )
    for key, title in (
        ("fct_quantiles_s", "Flow completion times (s)"),
        ("response_time_quantiles_s", "Response times (s)"),
    ):
        if all(v is None for run in d[key].values() for v in run.values()):
            continue  # no flow completed, no transaction: nothing to show
        lines += [
            "",
            f"## {title}",
            "",
            "| run | " + " | ".join(f"p{int(q * 100)}" for q in QUANTILES) + " |",
        ]
        lines.append("|---" * (len(QUANTILES) + 1) + "|")
        for run in ("sim", "emu"):
            lines.append(f"| {run} | " + " | ".join(_fmt(v) for v in d[key][run].values()) + " |")
    return "\n".join(lines) + "\n"


def _verdict_lines(v: dict[str, Any]) -> list[str]:
    head = (
        "agrees with the simulator within the stated bounds"
        if v["agrees"]
        else "differs from the simulator beyond the stated bounds"
    )
    lines = ["## Verdict", "", f"The real-packet run **{head}**:", ""]
    lines += ["| check | bound | within | worst | holds |", "|---|---|---|---|---|"]
    for c in v["checks"]:
        worst = "-" if c["worst"] is None else f"{c['worst'][0]} ({c['worst'][1]:+.2%})"
        lines.append(
            f"| {c['what']}: real / simulated - 1 | ±{c['bound']:.0%} "
            f"| {c['within']} of {c['judged']} | {worst} | {'yes' if c['holds'] else 'no'} |"
        )
    return lines


def overlay_figure(sim: RunResult, emu: RunResult, out_dir: Any) -> Any:
    """``series.png``: flow rates, and the busiest link's queue and utilisation, simulated
    (solid) and real (dashed) on the same axes; None when the runs have no series."""
    import polars as pl

    from .figures import pyplot, save_figure

    if sim.link_series.height == 0 and sim.flow_series.height == 0:
        return None
    busiest = max(sim.links.iter_rows(named=True), key=lambda r: r["utilisation"] or 0)
    plt = pyplot()
    fig, axes = plt.subplots(3, 1, figsize=(9.5, 8), sharex=True, layout="constrained")
    names = dict(zip(sim.flows["flow_id"].to_list(), sim.flows["name"].to_list()))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for run, style, label in ((sim, "-", "simulated"), (emu, "--", "real packets")):
        for k, fid in enumerate(sorted(names)[:8]):
            sub = run.flow_series.filter(pl.col("flow_id") == fid).sort("time_s")
            if sub.height:
                axes[0].plot(
                    sub["time_s"],
                    sub["rate_bps"] / 1e6,
                    style,
                    lw=1,
                    color=colours[k % len(colours)],
                    label=f"{names[fid]} ({label})",
                )
        sub = run.link_series.filter(pl.col("link_id") == busiest["link_id"]).sort("time_s")
        if sub.height:
            axes[1].plot(
                sub["time_s"], sub["queue_bytes"] / 1e3, style, lw=1, color="C0", label=label
            )
            axes[2].plot(
                sub["time_s"], sub["utilisation"] * 100, style, lw=1, color="C0", label=label
            )
    axes[0].set_ylabel("rate (Mbit/s)")
    axes[1].set_ylabel(f"{busiest['name']} queue (kB)")
    axes[2].set_ylabel(f"{busiest['name']} utilisation (%)")
    axes[2].set_xlabel("time (s)")
    for ax in axes:
        ax.grid(True, lw=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)
    fig.suptitle("simulated (solid) and real packets (dashed)")
    try:
        return save_figure(fig, out_dir, "series", ("png",))[0]
    finally:
        plt.close(fig)
