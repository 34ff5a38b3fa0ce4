"""``xcc bench``: simulator speed on the standard scenarios in ``benchmarks/*.toml``.

Each run happens in a fresh child process (``python -m xcclab._bench_worker FILE``) that imports
only the native module and runs without metrics. After ``--warmup`` unmeasured runs, each
scenario runs ``--runs`` times; we report the medians of

- wall seconds of the simulation (measured by the simulator itself, so interpreter start-up
  and scenario parsing are excluded; the child's whole lifetime is reported as ``process_s``),
- simulated seconds per wall second,
- packet-hops per wall second (one packet crossing one link),
- events per wall second,
- peak resident memory of the child (``ru_maxrss`` from ``os.wait4``), in MB,

plus the minimum and maximum wall time. ``--json`` prints the same as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from . import __version__
from .errors import RunFailure, ScenarioError

METRICS = ("wall_s", "process_s", "sim_per_wall", "hops_per_s", "events_per_s", "peak_rss_mb")


SESSION_SUFFIX = ".session.json"
# Scale runs of the packet engine (minutes each), run only when named like session experiments.
SCALE_SUFFIX = ".scale.toml"


def default_benchmark_dir() -> Path:
    """``./benchmarks`` if it exists, else the repository's (for an editable install)."""
    here = Path.cwd() / "benchmarks"
    if here.is_dir():
        return here
    return Path(__file__).resolve().parents[2] / "benchmarks"


def find_scenarios(directory: Path, names: list[str] | None) -> list[Path]:
    if not directory.is_dir():
        raise ScenarioError(f"{directory}: no benchmark directory (use --dir)")
    every = sorted(directory.glob("*.toml"))
    files = [f for f in every if not f.name.endswith(SCALE_SUFFIX)]
    if names:
        # Session experiments and scale runs (minutes each) run only when named:
        # `--scenario slbn-2a` (packets), `--scenario slbn-2a-fluid` (session driver).
        sessions = sorted(directory.glob(f"*{SESSION_SUFFIX}"))
        by_name = {f.stem: f for f in files}
        by_name.update({f.name[: -len(SESSION_SUFFIX)]: f for f in sessions})
        by_name.update(
            {f.name[: -len(SCALE_SUFFIX)]: f for f in every if f.name.endswith(SCALE_SUFFIX)}
        )
        missing = [n for n in names if n not in by_name and not Path(n).is_file()]
        if missing:
            known = ", ".join(by_name) or "none"
            raise ScenarioError(f"unknown benchmark {', '.join(missing)}; available: {known}")
        files = [by_name[n] if n in by_name else Path(n) for n in names]
    if not files:
        raise ScenarioError(f"{directory}: no *.toml benchmark scenarios")
    return files


def _maxrss_mb(ru_maxrss: int) -> float:
    # Linux reports KiB, macOS bytes.
    return ru_maxrss / (1024 * 1024) if sys.platform == "darwin" else ru_maxrss / 1024


def measure_once(path: Path, threads: int = 1) -> dict[str, float]:
    """Run ``path`` once in a fresh child on ``threads`` threads; return its figures."""
    cmd = [sys.executable, "-m", "xcclab._bench_worker", str(path)]
    if threads != 1:
        cmd.append(str(threads))
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        child = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err)
        assert child.stdout is not None
        out = child.stdout.read()
        child.stdout.close()
        _, status, rusage = os.wait4(child.pid, 0)
        process_s = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode != 0:
            err.seek(0)
            message = err.read().decode(errors="replace").strip()
            raise RunFailure(f"{path}: benchmark run failed: {message or child.returncode}")
    stats = json.loads(out)
    wall = stats["wall_seconds"]
    return {
        "wall_s": wall,
        "process_s": process_s,
        "sim_per_wall": stats["sim_seconds"] / wall,
        "hops_per_s": stats["packet_hops"] / wall,
        "events_per_s": stats["events"] / wall,
        "peak_rss_mb": _maxrss_mb(rusage.ru_maxrss),
        "events": stats["events"],
        "packet_hops": stats["packet_hops"],
        "sim_seconds": stats["sim_seconds"],
        "domains": stats.get("domains", 1),
    }


def bench_scenario(
    path: Path, runs: int, warmup: int, log: Any = None, threads: int = 1
) -> dict[str, Any]:
    for i in range(warmup):
        if log:
            log(f"{path.stem}: warm-up {i + 1}/{warmup}")
        measure_once(path, threads)
    samples = []
    for i in range(runs):
        if log:
            log(f"{path.stem}: run {i + 1}/{runs}")
        samples.append(measure_once(path, threads))
    walls = [s["wall_s"] for s in samples]
    return {
        "scenario": path.name.removesuffix(SESSION_SUFFIX)
        .removesuffix(SCALE_SUFFIX)
        .removesuffix(".toml"),
        "file": str(path),
        "runs": runs,
        "median": {m: statistics.median(s[m] for s in samples) for m in METRICS},
        "wall_min_s": min(walls),
        "wall_max_s": max(walls),
        "events": samples[0]["events"],
        "packet_hops": samples[0]["packet_hops"],
        "sim_seconds": samples[0]["sim_seconds"],
        "threads": threads,
        "domains": samples[0]["domains"],
        "samples": samples,
    }


def format_table(results: list[dict[str, Any]]) -> str:
    head = (
        f"{'scenario':<16} {'runs':>4} {'wall s':>8} {'(min-max)':>15} {'sim s/wall s':>12} "
        f"{'Mhops/s':>8} {'Mevents/s':>9} {'RSS MB':>7}"
    )
    lines = [head]
    for r in results:
        m = r["median"]
        spread = f"({r['wall_min_s']:.2f}-{r['wall_max_s']:.2f})"
        lines.append(
            f"{r['scenario']:<16} {r['runs']:>4} {m['wall_s']:>8.3f} {spread:>15} "
            f"{m['sim_per_wall']:>12.2f} {m['hops_per_s'] / 1e6:>8.2f} "
            f"{m['events_per_s'] / 1e6:>9.2f} {m['peak_rss_mb']:>7.1f}"
        )
    lines.append("medians over the measured runs; wall s excludes process start-up")
    return "\n".join(lines)


def bench_main(args: argparse.Namespace) -> int:
    if args.runs < 1:
        raise ScenarioError("--runs must be at least 1")
    threads = getattr(args, "threads", 1)
    if threads < 1:
        raise ScenarioError("--threads must be at least 1")
    directory = Path(args.dir) if args.dir else default_benchmark_dir()
    files = find_scenarios(directory, args.scenario)
    from .errors import load_native

    native_version = load_native().version()

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    results = [bench_scenario(f, args.runs, max(0, args.warmup), log, threads) for f in files]
    if args.json:
        doc = {
            "xcclab_version": __version__,
            "native_version": native_version,
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpu_count": os.cpu_count(),
            "results": results,
        }
        print(json.dumps(doc, indent=2))
    else:
        print(format_table(results))
    return 0
