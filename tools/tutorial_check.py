#!/usr/bin/env python3
"""Follows docs/tutorial-new-algorithm.md on a scratch copy of the tree, so the recipe cannot
drift from the code.

Copies the tracked tree to a temporary directory, writes every block marked
``<!-- file: PATH -->`` to its path, appends the ``<!-- registry-line: ... -->`` block as the
last entry of ``for_each_algorithm!``, runs every ``<!-- run -->`` block with bash in the copy
(``make build`` there builds the native module into the copy's own CARGO_TARGET_DIR; ``xcc``
and ``python`` are this interpreter with the copy's ``python/`` first), then asserts what the
tutorial claims: 5 algorithm files and 1 registry line, the two flows' split, the sweep's
points, and the docs-page and generated-table tests on the copy. ``--emu`` also runs the
tutorial's ``xcc compare`` on real packets (root and /dev/net/tun) and asserts its verdict.

Usage: python tools/tutorial_check.py [--keep DIR] [--emu]. Exit 0 when every step held; 1
with the failing step and its output otherwise. About 3 minutes on two cores (two builds).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TUTORIAL = "docs/tutorial-new-algorithm.md"
REGISTRY = "crates/xcc-core/src/algorithms/mod.rs"
#: The tutorial's claims, checked below.
ALGORITHM_FILES = 5
SHARE_TOLERANCE = 0.03  # each flow's goodput against its max-min share
SPLIT_TOLERANCE = 0.01  # the two flows against each other
GAMMA = 0.95


class StepFailed(Exception):
    pass


def blocks(markdown: str) -> list[tuple[str, str]]:
    """The tutorial's marked blocks in order: (marker, fenced content). A marker is the HTML
    comment on the line before a fence (of three or more backticks, closed by the same)."""
    found = []
    pattern = re.compile(r"^<!-- (.+?) -->\n(`{3,})[a-z]*\n(.*?)^\2$", re.M | re.S)
    for m in pattern.finditer(markdown):
        found.append((m.group(1).strip(), m.group(3)))
    return found


def copy_tree(dst: Path) -> None:
    """The tracked and untracked-but-not-ignored files (what a commit would hold), without
    built native modules."""
    files = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\0")
    for rel in filter(None, files):
        src = ROOT / rel
        if not src.is_file() or rel.endswith((".so", ".pyd")):
            continue
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst / rel)


def add_registry_line(registry: Path, line: str) -> None:
    """Appends `line` as the last entry of `for_each_algorithm!`'s `$callback! { ... }`."""
    text = registry.read_text()
    start = text.index("macro_rules! for_each_algorithm")
    body = text.index("$callback! {", start) + len("$callback! {")
    depth, i = 1, body
    while depth:
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
    close = text.rindex("\n", body, i - 1) + 1  # the line of the closing brace
    indent = " " * 12
    registry.write_text(text[:close] + indent + line.strip() + "\n" + text[close:])


def tool_dir(tmp: Path, copy: Path, target: Path, emu: bool) -> Path:
    """`xcc`, `python`, `make` and `sudo` as the tutorial's commands mean them, in the copy."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir(exist_ok=True)
    py = sys.executable
    scripts = {
        "python": f'exec "{py}" "$@"\n',
        "xcc": f'exec "{py}" -m xcclab.cli "$@"\n',
        # `make build`: the native module into the copy's own target directory, as
        # tests/python/test_registry.py's slow test builds it.
        "make": (
            'if [ "$*" != build ]; then echo "tutorial_check: only make build" >&2; exit 2; fi\n'
            "cargo build --release -p xcc-py\n"
            # The library is named after the crate's `[lib] name` (`_native`).
            f'for lib in "{target}"/release/lib_native.so "{target}"/release/libxcc_py.so; do\n'
            f'  if [ -f "$lib" ]; then cp "$lib" "{copy}/python/xcclab/_native.abi3.so"; fi\n'
            "done\n"
        ),
        # The emulator may run only with --emu (root and /dev/net/tun).
        "sudo": 'exec "$@"\n' if emu else 'echo "tutorial_check: skipped: sudo $*"\n',
    }
    for name, body in scripts.items():
        path = bin_dir / name
        path.write_text("#!/usr/bin/env bash\nset -euo pipefail\n" + body)
        path.chmod(0o755)
    return bin_dir


def run_block(script: str, copy: Path, env: dict, log: list[str]) -> None:
    # `.venv/bin/xcc` in a command is the reader's venv: here the wrapper on PATH.
    script = script.replace(".venv/bin/", "")
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
    )
    log.append(f"$ {script.strip()}\n{proc.stdout}{proc.stderr}")
    if proc.returncode != 0:
        raise StepFailed(f"exit {proc.returncode}:\n{script}\n{proc.stdout}\n{proc.stderr}")


def check_results(copy: Path, env: dict) -> list[str]:
    """The tutorial's claims on the copy's results (independently of its own check block)."""
    probe = r"""
import json, sys
import polars as pl
import xcclab
run = xcclab.RunResult.load("results/fairshare-dumbbell")
flows = run.flows.select("name", "goodput_bps", "maxmin_bps").rows()
link = run.links.filter(pl.col("name") == "r1->r2").row(0, named=True)
sweep = json.load(open("results/sweeps/fairshare-vs-xcp-rcp/manifest.json"))
print(json.dumps({
    "flows": flows,
    "bottleneck": [link["algorithm"], link["utilisation"]],
    "points": [[p["params"]["protocol"], p["status"]] for p in sweep["points"]],
}))
"""
    proc = subprocess.run(
        [sys.executable, "-c", probe], cwd=copy, env=env, capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise StepFailed(proc.stderr)
    got = json.loads(proc.stdout)
    problems = []
    flows = got["flows"]
    if len(flows) != 2:
        problems.append(f"expected 2 flows, got {flows}")
    for name, goodput, fair in flows:
        if not abs(goodput / fair - 1) < SHARE_TOLERANCE:
            problems.append(f"{name}: goodput {goodput:.0f} b/s, max-min share {fair:.0f}")
    if len(flows) == 2 and not abs(flows[0][1] / flows[1][1] - 1) < SPLIT_TOLERANCE:
        problems.append(f"uneven split: {flows}")
    algorithm, util = got["bottleneck"]
    if algorithm != "fairshare" or not abs(util - GAMMA) < 0.01:
        problems.append(f"bottleneck: {algorithm}, utilisation {util} (expected ~{GAMMA})")
    points = got["points"]
    if len(points) != 18 or {p for p, _ in points} != {"fairshare", "xcp", "rcp"}:
        problems.append(f"sweep points: {points}")
    if any(status != "ok" for _, status in points):
        problems.append(f"sweep points not ok: {points}")
    summary = [f"{n}: {g / 1e6:.3f} Mbit/s (max-min {f / 1e6:.3f})" for n, g, f in flows]
    summary.append(f"bottleneck utilisation {util:.4f}; sweep {len(points)} points ok")
    if problems:
        raise StepFailed("\n".join(problems))
    return summary


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--keep", type=Path, help="work in DIR (kept) instead of a temporary one")
    ap.add_argument("--emu", action="store_true", help="also run the tutorial's xcc compare")
    args = ap.parse_args(argv)
    start = time.monotonic()
    markdown = (ROOT / TUTORIAL).read_text()
    marked = blocks(markdown)
    files = [(m.split(":", 1)[1].strip(), body) for m, body in marked if m.startswith("file:")]
    registry = [body for m, body in marked if m.startswith("registry-line:")]
    runs = [body for m, body in marked if m == "run"]
    algorithm = [p for p, _ in files if p.startswith(("crates/", "docs/algorithms/"))]
    if len(algorithm) != ALGORITHM_FILES or len(registry) != 1 or not runs:
        print(
            f"{TUTORIAL}: expected {ALGORITHM_FILES} algorithm files, 1 registry line and run "
            f"blocks; found {algorithm}, {len(registry)} registry lines, {len(runs)} run blocks",
            file=sys.stderr,
        )
        return 1
    tmp = Path(tempfile.mkdtemp(prefix="tutorial-check-")) if args.keep is None else args.keep
    tmp.mkdir(parents=True, exist_ok=True)
    copy, target = tmp / "tree", tmp / "target"
    log: list[str] = []
    step = "copy the tree"
    try:
        if copy.exists():
            shutil.rmtree(copy)
        copy_tree(copy)
        step = "apply the tutorial's files"
        for rel, body in files:
            path = copy / rel
            if path.exists():
                raise StepFailed(f"{rel} already exists: the tutorial must write new files")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(body)
        add_registry_line(copy / REGISTRY, registry[0])
        env = dict(os.environ)
        env.pop("VIRTUAL_ENV", None)
        env.update(
            CARGO_TARGET_DIR=str(target),
            PYTHONPATH=str(copy / "python"),
            PATH=f"{tool_dir(tmp, copy, target, args.emu)}{os.pathsep}{env['PATH']}",
        )
        for i, script in enumerate(runs, 1):
            step = f"run block {i}/{len(runs)}"
            run_block(script, copy, env, log)
        if args.emu:
            step = "xcc compare on real packets"
            compare = re.search(r"^sudo .*xcc compare .*$", markdown, re.M)
            if compare is None:
                raise StepFailed("no `sudo ... xcc compare` command in the tutorial")
            run_block(compare.group(0), copy, env, log)
            out = re.search(r"--out (\S+)", compare.group(0)).group(1)
            verdict = json.loads((copy / out / "compare.json").read_text())["verdict"]
            if not verdict["agrees"]:
                raise StepFailed(f"xcc compare: the real packets disagree: {verdict}")
        step = "cargo fmt --check on the copy (the tutorial's Rust is formatted)"
        run_block("cargo fmt --all --check", copy, env, log)
        step = "check the results"
        summary = check_results(copy, env)
        step = "docs-page and generated-table tests on the copy"
        tests = ["tests/python/test_scenario_reference.py", "tests/python/test_docs.py"]
        run_block(f"python -m pytest -q -p no:cacheprovider {' '.join(tests)}", copy, env, log)
    except (StepFailed, subprocess.CalledProcessError, OSError, ValueError) as exc:
        print(f"tutorial_check: FAILED at '{step}' (work dir {tmp}):\n{exc}", file=sys.stderr)
        return 1
    if args.keep is None:
        shutil.rmtree(tmp, ignore_errors=True)
    print("".join(entry for entry in log if "share the bottleneck" in entry), end="")
    for line in summary:
        print(f"tutorial_check: {line}")
    print(f"tutorial_check: ok in {time.monotonic() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
