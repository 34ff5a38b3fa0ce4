"""``xcc compare SCENARIO``: the same scenario simulated and emulated, side by side.

Reports per-flow goodput and completion time, per-link utilisation and queue (mean, max),
and the distribution (quantiles) of flow completion times, with the relative difference
emulated / simulated - 1. Large differences are findings, not failures: the report says
what each column measures so they can be read (see ``docs/emu.md``).
"""

from __future__ import annotations

import math
from typing import Any

from .results import RunResult

QUANTILES = (0.1, 0.5, 0.9, 0.99)


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
    return {
        "flows": flows,
        "links": links,
        "fct_quantiles_s": fct,
        "response_time_quantiles_s": resp,
    }


def _fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def render(d: dict[str, Any]) -> str:
    """Markdown tables of :func:`differences`."""
    lines = [
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
