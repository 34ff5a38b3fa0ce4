"""docs/tutorial-compare.md runs: every code block, in order, in a scratch directory holding the
repository's scenarios and sweeps; where a block is followed by a plain ``` block, that is its
output, and the output must match (the simulator is deterministic)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

pytest.importorskip("xcclab._native")

DOC = ROOT / "docs" / "tutorial-compare.md"
BLOCK = re.compile(r"^```([a-z]*)\n(.*?)^```$", re.M | re.S)


def blocks(text: str) -> list[tuple[str, str, str | None]]:
    """(language, code, expected output or None) for each runnable block."""
    found = [(m.group(1), m.group(2)) for m in BLOCK.finditer(text)]
    out = []
    for k, (lang, code) in enumerate(found):
        if lang in ("sh", "python", "toml"):
            nxt = found[k + 1] if k + 1 < len(found) else None
            out.append((lang, code, nxt[1] if nxt and nxt[0] == "" else None))
    return out


def test_the_tutorial_has_code_and_outputs():
    found = blocks(DOC.read_text())
    assert {lang for lang, _, _ in found} == {"sh", "python", "toml"}
    assert sum(expected is not None for _, _, expected in found) >= 3


@pytest.mark.native
def test_every_block_of_the_tutorial_runs(tmp_path):
    shutil.copytree(ROOT / "scenarios", tmp_path / "scenarios")
    shutil.copytree(ROOT / "sweeps", tmp_path / "sweeps")
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["COLUMNS"] = "200"
    for lang, code, expected in blocks(DOC.read_text()):
        if lang == "toml":
            target = re.match(r"# file: (\S+)\n", code)
            assert target, f"a toml block needs '# file: PATH' as its first line:\n{code}"
            (tmp_path / target.group(1)).write_text(code)
            continue
        command = ["bash", "-euo", "pipefail", "-c", code]
        if lang == "python":
            command = [sys.executable, "-c", code]
        done = subprocess.run(
            command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 0, f"{code}\n--- stderr:\n{done.stderr}"
        if expected is not None:
            got = [line.rstrip() for line in done.stdout.strip().splitlines()]
            assert got == [line.rstrip() for line in expected.strip().splitlines()], code
    assert (tmp_path / "results" / "parking-lot-xcp" / "plots" / "timeseries.png").is_file()
    plots = tmp_path / "results" / "compare" / "plots"
    assert (plots / "flows-late_rate_bps-vs-link_1_delay.png").is_file()
