"""The algorithm registry is the one list of algorithms (docs/architecture.md, "Adding an
algorithm"): no list of algorithm names is kept by hand anywhere else, and removing a registry
line removes the algorithm from `xcc list`, errors, the docs' tables, the dissector, the session
protocols and Python."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
REGISTRY = ROOT / "crates/xcc-core/src/algorithms/mod.rs"


def registry_lines() -> dict[str, str]:
    """Each registered algorithm's name and its registry entry, read from the macro's text."""
    text = REGISTRY.read_text()
    body = text.split("macro_rules! for_each_algorithm", 1)[1].split("$callback! {", 1)[1]
    entries = {}
    for m in re.finditer(r'^\s*"([a-z0-9-]+)" (\w+) \{.*?\}\n', body, re.S | re.M):
        entries[m.group(1)] = m.group(0)
    return entries


def test_the_registry_text_is_what_the_build_registers():
    """The parsed registry lines are the build's algorithms, in order (so the tests below read
    the registry the build uses)."""
    from xcclab.algorithms import registry_names

    names = registry_names()
    lines = registry_lines()
    # a line with a header only (INT, read by HPCC and PowerTCP) is no scenario kind
    parsed = [n for n, line in lines.items() if re.search(r"\b(link|host|session):", line)]
    registered = {n for role in names.values() for n in role}
    assert set(parsed) == registered
    assert all("header:" in lines[n] for n in set(lines) - set(parsed))
    assert names["session"] == [n for n in parsed if n in names["session"]]


def _rust_sources():
    for path in (ROOT / "crates").rglob("*.rs"):
        rel = path.relative_to(ROOT).as_posix()
        if "/tests/" in rel or rel.endswith("/algorithms/mod.rs"):
            continue
        yield rel, path.read_text()


def _without_test_modules(text: str) -> str:
    return text.split("#[cfg(test)]\nmod tests", 1)[0]


def test_no_hand_kept_list_of_names_in_rust():
    """Outside the registry and an algorithm's own folder, no Rust line names two registered
    algorithms as string literals (a list kept by hand), and none names another algorithm's
    folder's types through a match on protocols."""
    names = list(registry_lines())
    offenders = []
    for rel, text in _rust_sources():
        for n, line in enumerate(_without_test_modules(text).splitlines(), 1):
            if line.lstrip().startswith("//"):
                continue
            hits = {a for a in names if f'"{a}"' in line}
            if len(hits) >= 2:
                offenders.append(f"{rel}:{n}: {line.strip()}")
    assert not offenders, "hand-kept lists of algorithm names:\n" + "\n".join(offenders)


def test_no_hand_kept_list_of_names_in_python():
    """The package reads the registry (`_native.algorithm_names()`); a literal tuple, list or set
    of three or more registered names outside the reproductions (which choose a paper's
    protocols) is a hand-kept copy."""
    names = set(registry_lines()) | {n.replace("-", "_") for n in registry_lines()}
    offenders = []
    for path in (ROOT / "python/xcclab").rglob("*.py"):
        if "reproduce" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
                literals = {
                    e.value
                    for e in node.elts
                    if isinstance(e, ast.Constant) and isinstance(e.value, str)
                }
                if len(literals & names) >= 3:
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}: {sorted(literals)}")
    assert not offenders, "hand-kept lists of algorithm names:\n" + "\n".join(offenders)


def _copy_tree(dst: Path) -> None:
    files = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    for rel in files:
        src = ROOT / rel
        if not src.is_file() or rel.endswith((".so", ".pyd")):
            continue
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst / rel)


@pytest.mark.slow
def test_removing_a_registry_line_removes_the_algorithm_everywhere(tmp_path):
    """On a copy of the tree without JetMax's registry line (its folder left in place) the build
    still compiles, and JetMax is gone from `xcc list`, from the known names in errors, from
    the generated docs tables and the dissector, and from Python; a session protocol's line
    (COBB) likewise leaves the session protocols."""
    lines = registry_lines()
    copy = tmp_path / "tree"
    _copy_tree(copy)
    registry = copy / "crates/xcc-core/src/algorithms/mod.rs"
    text = registry.read_text()
    for name in ("jetmax", "cobb"):
        text = text.replace(lines[name], "", 1)
    registry.write_text(text)
    env = dict(os.environ, CARGO_TARGET_DIR=str(tmp_path / "target"))
    subprocess.run(
        ["cargo", "build", "--release", "-p", "xcc-py"],
        cwd=copy,
        env=env,
        check=True,
        capture_output=True,
    )
    release = tmp_path / "target/release"
    lib = next(
        p
        for pat in ("lib_native.*", "libxcc_py.*")
        for p in release.glob(pat)
        if p.suffix in (".so", ".dylib")
    )
    shutil.copy2(lib, copy / "python/xcclab/_native.abi3.so")
    py = {**os.environ, "PYTHONPATH": str(copy / "python")}

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, *args], cwd=copy, env=py, capture_output=True, text=True
        )

    listing = run("-m", "xcclab.cli", "list")
    assert listing.returncode == 0, listing.stderr
    assert "jetmax" not in listing.stdout and "cobb" not in listing.stdout
    assert "xcp" in listing.stdout and "slbn" in listing.stdout
    names = run("-c", "from xcclab.algorithms import registry_names as r; print(r())")
    assert "jetmax" not in names.stdout and "cobb" not in names.stdout, names.stdout
    bad = copy / "bad.toml"
    bad.write_text(
        'name = "x"\nduration = "1s"\n[[host]]\nname = "a"\n[[host]]\nname = "b"\n'
        '[[link]]\nbetween = ["a", "b"]\nrate = "1Mbps"\ndelay = "1ms"\nbuffer = "10pkt"\n'
        'queue = "jetmax"\n'
    )
    err = run("-m", "xcclab.cli", "validate", str(bad))
    assert (
        err.returncode == 2
        and "unknown queue 'jetmax'" in err.stderr
        and "jetmax," not in err.stderr
    ), err.stderr
    session = copy / "session.toml"
    session.write_text(
        'name = "x"\nduration = "1s"\n[[host]]\nname = "a"\n[[host]]\nname = "b"\n'
        '[[link]]\nbetween = ["a", "b"]\nrate = "1Mbps"\ndelay = "1ms"\nbuffer = "10pkt"\n'
        '[[flow]]\nname = "f"\nkind = "session"\nsrc = "a"\ndst = "b"\nprotocol = "cobb"\n'
    )
    err = run("-m", "xcclab.cli", "validate", str(session))
    assert (
        err.returncode == 2
        and "unknown session protocol 'cobb'" in err.stderr
        and "slbn" in err.stderr
    ), err.stderr
    regen = run("-m", "xcclab.generated")
    assert regen.returncode == 0, regen.stderr
    for doc in (
        "README.md",
        "docs/scenario-format.md",
        "docs/output-schema.md",
        "tools/wireshark/xcclab.lua",
    ):
        generated = (copy / doc).read_text()
        region = re.findall(r"BEGIN GENERATED.*?END GENERATED", generated, re.S)
        assert region, doc
        assert not any("jetmax" in r.lower() or "`cobb`" in r for r in region), doc


def test_seed_004_reproductions_find_every_protocol_they_compare():
    """The slbn reports key runs by file-safe names ("piqi_rcp"); each must be found among the
    registry's session protocols ("piqi-rcp"), or it is silently reported as pending."""
    from xcclab.reproduce.slbn.setup import PAPER_PROTOCOLS
    from xcclab.reproduce.slbn.slbn_common import available_protocols

    assert [p for p in PAPER_PROTOCOLS if p not in available_protocols()] == []
