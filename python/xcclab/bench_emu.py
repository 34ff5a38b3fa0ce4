"""``xcc bench --emu``: the real-packet router's forwarding capacity and accuracy.

Runs ``xcc-emu bench`` (root, namespaces, TUN; ``crates/xcc-emu/src/bench.rs``): per link rate,
``--runs`` measurements of one link offered 1500-byte packets at 1.05 times its rate. Reported
per run and as medians: achieved Mbit/s and packets/s, rate error (achieved / configured - 1),
the router's delay error (how late each packet left behind its virtual-time delivery instant)
at p50/p90/p99/p99.9, and kernel-side TUN drops. The targets of docs/emu.md are checked and
the verdict printed: rate error under 1 %, p99 delay error under 0.2 ms, no kernel drop.
"""

from __future__ import annotations

import json
import statistics
import subprocess
from typing import Any

from .emu import router_command

RATE_ERROR_TARGET = 0.01
P99_TARGET_US = 200.0


def measure(rates_mbps: list[int], seconds: float, runs: int) -> list[dict[str, Any]]:
    """Every run's measurement (the binary's JSON), in order of rate then repetition."""
    args = [
        *router_command(),
        "bench",
        "--seconds",
        f"{seconds:g}",
        "--rates",
        ",".join(str(r) for r in rates_mbps),
        "--repeat",
        str(runs),
    ]
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(
            done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "failed"
        )
    return json.loads(done.stdout)


def summarise(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Medians per link rate, with the targets' verdicts."""
    out = []
    for rate in sorted({r["rate_mbps"] for r in runs}):
        rs = [r for r in runs if r["rate_mbps"] == rate]
        med = {
            "rate_mbps": rate,
            "runs": len(rs),
            "achieved_mbps": statistics.median(r["achieved_mbps"] for r in rs),
            "packets_per_s": statistics.median(r["packets_per_s"] for r in rs),
            "rate_error": statistics.median(r["rate_error"] for r in rs),
            "p99_delay_error_us": statistics.median(r["delay_error_us"]["p99"] for r in rs),
            "kernel_drops": sum(r["kernel_tx_dropped"] + r["kernel_rx_dropped"] for r in rs),
        }
        med["meets_rate_target"] = abs(med["rate_error"]) < RATE_ERROR_TARGET
        med["meets_delay_target"] = med["p99_delay_error_us"] < P99_TARGET_US
        med["meets_drop_target"] = med["kernel_drops"] == 0
        out.append(med)
    return out


def format_table(runs: list[dict[str, Any]], medians: list[dict[str, Any]]) -> str:
    head = (
        f"{'link':>10} {'run':>6} {'Mbit/s':>9} {'rate err':>9} {'pkt/s':>8} "
        f"{'delay err p50/p90/p99/p99.9 (us)':>34} {'kernel drops':>13}"
    )
    lines = [head, "-" * len(head)]
    for rate in sorted({r["rate_mbps"] for r in runs}):
        for i, r in enumerate(x for x in runs if x["rate_mbps"] == rate):
            d = r["delay_error_us"]
            delays = f"{d['p50']}/{d['p90']}/{d['p99']}/{d['p999']}"
            drops = f"{r['kernel_tx_dropped']}/{r['kernel_rx_dropped']}"
            lines.append(
                f"{rate:>6} Mb/s {i + 1:>6} {r['achieved_mbps']:>9.2f} "
                f"{100 * r['rate_error']:>+8.3f}% {r['packets_per_s']:>8.0f} "
                f"{delays:>34} {drops:>13}"
            )
        m = next(m for m in medians if m["rate_mbps"] == rate)
        lines.append(
            f"{rate:>6} Mb/s {'median':>6} {m['achieved_mbps']:>9.2f} "
            f"{100 * m['rate_error']:>+8.3f}% {m['packets_per_s']:>8.0f} "
            f"{'p99 ' + format(m['p99_delay_error_us'], 'g'):>34} {m['kernel_drops']:>13}"
        )
    lines.append("")
    for m in medians:
        verdict = [
            f"rate error {'<' if m['meets_rate_target'] else '>='} 1 %",
            f"p99 delay error {'<' if m['meets_delay_target'] else '>='} 0.2 ms",
            "no kernel drop" if m["meets_drop_target"] else f"{m['kernel_drops']} kernel drops",
        ]
        lines.append(f"{m['rate_mbps']} Mbit/s (medians of {m['runs']}): " + ", ".join(verdict))
    return "\n".join(lines)
