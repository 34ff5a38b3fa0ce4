"""Runs ``xcc compare SCENARIO --stack kernel`` N times and prints, as markdown, the simulator
beside kernel DCTCP (docs/kernel.md "DCTCP"): the bottleneck's queue (time-average, and the
median and 95th percentile of the 10 ms samples after the first second), utilisation, each
flow's share of the goodput, the marked fraction, and kernel DCTCP's alpha, echoed CE fraction
and ssthresh repairs; the real runs as mean and 95 % t-interval over the runs, and each run.

    sudo .venv/bin/python tools/dctcp_kernel_compare.py scenarios/dctcp-kernel-dumbbell.toml \\
        --runs 5 --out results/dctcp-kernel
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
from pathlib import Path

import polars as pl

BOTTLENECK = "r->d"
WARMUP_S = 1.0
# Student's t, 97.5 % quantile, by degrees of freedom.
T975 = {1: 12.71, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262}


def measure(run_dir: Path) -> dict:
    links = pl.read_parquet(run_dir / "links.parquet")
    link = links.row(links["name"].to_list().index(BOTTLENECK), named=True)
    series = pl.read_parquet(run_dir / "link_series.parquet")
    q = (
        series.filter((pl.col("link_id") == link["link_id"]) & (pl.col("time_s") > WARMUP_S))[
            "queue_packets"
        ]
        .sort()
        .to_list()
    )
    flows = pl.read_parquet(run_dir / "flows.parquet")
    goodput = flows["goodput_bps"].to_list()
    run = json.loads((run_dir / "run.json").read_text())
    kernel = (run.get("kernel_dctcp") or {}).get("second_half") or {}
    whole = (run.get("kernel_dctcp") or {}).get("whole_run") or {}
    return {
        "mean_queue": link["mean_queue_packets"],
        "median_queue": q[len(q) // 2],
        "p95_queue": q[int(0.95 * len(q))],
        "utilisation": link["utilisation"],
        "share_f1": goodput[0] / sum(goodput),
        "marked_fraction": link["marks"] / max(1, link["packets_in"]),
        "drops": link["drops"],
        "alpha": kernel.get("mean_alpha"),
        "echoed_ce": kernel.get("echoed_ce_fraction"),
        "repairs": whole.get("ssthresh_repairs"),
    }


def interval(xs: list[float]) -> str:
    xs = [x for x in xs if x is not None]
    if len(xs) < 2:
        return f"{xs[0]:.3g}" if xs else "-"
    m, s = statistics.mean(xs), statistics.stdev(xs)
    half = T975.get(len(xs) - 1, 1.96) * s / len(xs) ** 0.5
    return f"{m:.3g} ± {half:.2g}"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("scenario")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out", required=True)
    ap.add_argument("--timeout", type=float, default=240, help="seconds per compare")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    xcc = Path(sys.executable).with_name("xcc")
    real, load = [], []
    for i in range(args.runs):
        d = out / f"run{i + 1}"
        if not (d / "compare.json").exists():
            load.append(os.getloadavg()[0])
            cmd = [str(xcc), "compare", args.scenario, "--stack", "kernel", "--out", str(d)]
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
            try:
                proc.wait(timeout=args.timeout)
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGTERM)  # it stops its router and loaders
                proc.wait()
            load.append(os.getloadavg()[0])
        if not (d / "compare.json").exists():
            print(f"run {i + 1}: no result (timed out after {args.timeout} s or failed)")
            continue
        real.append(measure(d / "emu"))
    done = [out / f"run{i + 1}" for i in range(args.runs) if (out / f"run{i + 1}" / "sim").exists()]
    if not done:
        return 1
    sim = measure(done[0] / "sim")
    keys = list(sim)
    print(f"load average (1 min) around the runs: {min(load or [0]):.1f} to {max(load or [0]):.1f}")
    print()
    print("| quantity | simulator | kernel, mean ± 95 % CI | kernel, each run |")
    print("|---|---|---|---|")
    for k in keys:
        each = " / ".join("-" if r[k] is None else f"{r[k]:.3g}" for r in real)
        s = "-" if sim[k] is None else f"{sim[k]:.3g}"
        print(f"| {k} | {s} | {interval([r[k] for r in real])} | {each} |")
    (out / "summary.json").write_text(json.dumps({"sim": sim, "kernel": real}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
