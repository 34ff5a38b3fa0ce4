"""Benchmark child process: ``python -m xcclab._bench_worker FILE``.

Imports nothing but :mod:`xcclab._native` (the package ``__init__`` is lazy), runs the scenario
without metrics and prints the native stats as one JSON line, so the parent's peak-RSS figure
measures the simulator and not polars or matplotlib.
"""

from __future__ import annotations

import json
import sys


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m xcclab._bench_worker SCENARIO", file=sys.stderr)
        return 2
    path = argv[0]
    from xcclab import _native

    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    fmt = "json" if path.endswith(".json") else "toml"
    try:
        raw = _native.run(text, path, fmt, metrics=False)
    except (ValueError, RuntimeError) as exc:
        print(f"xcc: error: {exc}", file=sys.stderr)
        return 2 if isinstance(exc, ValueError) else 1
    print(json.dumps(raw["stats"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
