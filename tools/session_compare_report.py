"""Per-session delivered rates of an ``xcc compare`` run of session flows, simulated and
emulated, against the max-min oracle: the tables of docs/reproduction/slbn-emu/report.md.

    python tools/session_compare_report.py OUT [--from 2] [--share 0.99]

``OUT`` is ``xcc compare``'s output directory (``OUT/sim``, ``OUT/emu``). Each session's rate is
its delivered bytes between ``--from`` seconds and the end of the run (``delivered_bytes`` of
the flow series, so exact, not an average of interval rates); the reference is its max-min fair
rate (``xcclab.references``, the run's own routes) times the share of the rate a source sends
as data (``--share``: 1 - the control budget, 0.99 for SLBN's and BFYZ's default 1 %).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from xcclab.references import max_min_rates
from xcclab.results import RunResult


def window_rates(run: RunResult, since_s: float) -> tuple[list[float], float]:
    """Each flow's delivered rate (bit/s) from ``since_s`` to the end; and the end (s)."""
    fs = run.flow_series
    end = float(fs["time_s"].max())
    out = []
    for fid in run.flows["flow_id"].to_list():
        rows = fs.filter(fs["flow_id"] == fid)
        t = rows["time_s"].to_list()
        b = rows["delivered_bytes"].to_list()
        at = {round(x, 6): y for x, y in zip(t, b)}
        out.append((at[round(end, 6)] - at[round(since_s, 6)]) * 8 / (end - since_s))
    return out, end


def _pct(x: float) -> str:
    return f"{100 * x:+.2f} %"


def report(out_dir: Path, since_s: float, share: float) -> str:
    sim = RunResult.load(out_dir / "sim")
    emu = RunResult.load(out_dir / "emu")
    names = sim.flows["name"].to_list()
    oracle = [r * share for r in max_min_rates(sim.scenario)]
    rs, end = window_rates(sim, since_s)
    re, _ = window_rates(emu, since_s)
    rows = list(zip(names, oracle, rs, re))
    emu_sim = [e / s - 1 for _, _, s, e in rows]
    sim_or = [s / o - 1 for _, o, s, _ in rows]
    emu_or = [e / o - 1 for _, o, _, e in rows]

    def worst(v: list[float]) -> tuple[str, float]:
        i = max(range(len(v)), key=lambda k: abs(v[k]))
        return names[i], v[i]

    def mean_abs(v: list[float]) -> float:
        return sum(abs(x) for x in v) / len(v)

    stats = json.loads((out_dir / "emu" / "run.json").read_text())["emu"]
    lines = [
        f"Window: {since_s:g} s to {end:g} s; reference: max-min rate x {share:g} (data share).",
        "",
        "| measure | emu vs sim | sim vs oracle | emu vs oracle |",
        "|---|---|---|---|",
        "| mean absolute difference | "
        + " | ".join(f"{100 * mean_abs(v):.2f} %" for v in (emu_sim, sim_or, emu_or))
        + " |",
    ]
    w = [worst(v) for v in (emu_sim, sim_or, emu_or)]
    lines.append("| worst (session) | " + " | ".join(f"{_pct(x)} ({n})" for n, x in w) + " |")
    within = [sum(abs(x) < t for x in emu_sim) for t in (0.001, 0.005, 0.01)]
    lines += [
        "",
        f"Sessions with emu within 0.1 % / 0.5 % / 1 % of sim: {within[0]} / {within[1]} / "
        f"{within[2]} of {len(rows)}.",
        "",
        "Emulator counters: "
        + ", ".join(
            f"{k} {stats[k]}"
            for k in (
                "session_control_sent",
                "session_control_read",
                "session_control_back",
                "session_control_absorbed",
                "session_data_read",
                "session_malformed",
                "session_unreadable",
                "lateness_p50_us",
                "lateness_p99_us",
                "lateness_max_us",
                "session_wake_late_max_us",
            )
            if k in stats
        )
        + f", router_cpu_share {stats['router_cpu_share']:.2f}.",
        "",
        "| session | oracle x share (Mbit/s) | sim (Mbit/s) | emu (Mbit/s) | emu vs sim "
        "| sim vs oracle | emu vs oracle |",
        "|---|---|---|---|---|---|---|",
    ]
    for (n, o, s, e), a, b, c in zip(rows, emu_sim, sim_or, emu_or):
        rates = " | ".join(f"{x / 1e6:.4f}" for x in (o, s, e))
        lines.append(f"| {n} | {rates} | {_pct(a)} | {_pct(b)} | {_pct(c)} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", type=Path)
    p.add_argument("--from", dest="since", type=float, default=2.0)
    p.add_argument("--share", type=float, default=0.99)
    a = p.parse_args()
    print(report(a.out, a.since, a.share), end="")


if __name__ == "__main__":
    main()
