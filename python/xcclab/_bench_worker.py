"""Benchmark child process: ``python -m xcclab._bench_worker FILE``.

Imports nothing but :mod:`xcclab._native` (the package ``__init__`` is lazy), runs the scenario
without metrics (or a session experiment, ``*.session.json``, with its sampled metrics) and
prints the native stats as one JSON line, so the parent's peak-RSS figure
measures the simulator and not polars or matplotlib.
"""

from __future__ import annotations

import json
import sys

SESSION_SUFFIX = ".session.json"


def _session_stats(native, text: str, path: str) -> dict:
    """A session experiment (seed 004): control-packet hops stand for packet-hops."""
    raw = native.run_sessions(text, path)
    st = raw["stats"]
    return {
        "events": st["events"],
        "packet_hops": st["control_hops"],
        "sim_seconds": json.loads(text)["duration_s"],
        "wall_seconds": st["wall_seconds"],
    }


def main(argv: list[str]) -> int:
    if len(argv) not in (1, 2) or (len(argv) == 2 and not argv[1].isdigit()):
        print("usage: python -m xcclab._bench_worker SCENARIO [THREADS]", file=sys.stderr)
        return 2
    path = argv[0]
    threads = int(argv[1]) if len(argv) == 2 else 1
    from xcclab import _native

    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    fmt = "json" if path.endswith(".json") else "toml"
    try:
        if path.endswith(SESSION_SUFFIX):
            stats = _session_stats(_native, text, path)
        else:
            extra = {"threads": threads} if threads != 1 else {}
            stats = _native.run(text, path, fmt, metrics=False, **extra)["stats"]
    except (ValueError, RuntimeError) as exc:
        print(f"xcc: error: {exc}", file=sys.stderr)
        return 2 if isinstance(exc, ValueError) else 1
    print(json.dumps(stats))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
