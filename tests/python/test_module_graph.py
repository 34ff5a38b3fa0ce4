"""No import cycle among the Rust modules of a crate, no arrow from one driver to the other, and
none to the fluid session driver (docs/architecture.md, "Layering")."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]


def _tool():
    spec = importlib.util.spec_from_file_location("module_cycles", ROOT / "tools/module_cycles.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_no_import_cycle_among_a_crates_modules():
    tool = _tool()
    found = {}
    for src in sorted((ROOT / "crates").glob("*/src")):
        cycles = tool.cycles(tool.graph(src))
        if cycles:
            found[src.parent.name] = [["::".join(m) for m in c] for c in cycles]
    assert not found, found


def test_a_cycle_is_found_when_there_is_one(tmp_path):
    """The checker itself: two modules naming each other are a cycle."""
    tool = _tool()
    (tmp_path / "lib.rs").write_text("pub mod a;\npub mod b;\n")
    (tmp_path / "a.rs").write_text("use crate::b::B;\npub struct A;\n")
    (tmp_path / "b.rs").write_text("use crate::a::A;\npub struct B;\n")
    assert [sorted(c) for c in tool.cycles(tool.graph(tmp_path))] == [[("a",), ("b",)]]


def test_the_drivers_do_not_depend_on_each_other():
    def deps(crate: str) -> set[str]:
        manifest = tomllib.loads((ROOT / "crates" / crate / "Cargo.toml").read_text())
        return set(manifest.get("dependencies", {}))

    assert "xcc-sim" not in deps("xcc-emu")
    assert "xcc-emu" not in deps("xcc-sim")
    assert not {"xcc-sim", "xcc-emu"} & deps("xcc-build")
    assert not {"xcc-sim", "xcc-emu", "xcc-build"} & deps("xcc-core")


def _sources(crate: str) -> dict[Path, str]:
    return {f: f.read_text() for f in sorted((ROOT / "crates" / crate / "src").rglob("*.rs"))}


def _code(text: str) -> str:
    """Rust source without its comments (docs may name any module)."""
    return re.sub(r"//[^\n]*", "", text)


def test_nothing_of_the_engine_imports_the_fluid_driver():
    """The fluid session driver (`xcc_sim::fluid`) is a labelled approximation and a leaf: no
    module of xcc-sim outside it imports it, and no other crate does except the Python
    binding's entry point to it (`run_sessions`)."""
    tool = _tool()
    edges = tool.graph(ROOT / "crates/xcc-sim/src")
    assert ("fluid",) in edges, "the fluid driver moved: update this test"
    importers = sorted(
        "::".join(m)
        for m, to in edges.items()
        if m[:1] != ("fluid",) and any(t[:1] == ("fluid",) for t in to)
    )
    assert importers == [], importers
    outside = {
        str(f.relative_to(ROOT)): len(re.findall(r"xcc_sim::fluid\b", _code(text)))
        for crate in ("xcc-core", "xcc-build", "xcc-emu", "xcc-py")
        for f, text in _sources(crate).items()
    }
    outside = {f: n for f, n in outside.items() if n}
    assert outside == {"crates/xcc-py/src/lib.rs": 1}, outside


def test_a_fluid_import_is_found_when_there_is_one(tmp_path):
    """The checker itself: a packet-engine module naming the fluid driver is an arrow to it."""
    tool = _tool()
    (tmp_path / "lib.rs").write_text("pub mod fluid;\npub mod sim;\n")
    (tmp_path / "fluid.rs").write_text("pub struct F;\n")
    (tmp_path / "sim.rs").write_text("use crate::fluid::F;\n")
    assert ("fluid",) in tool.graph(tmp_path)[("sim",)]


def test_no_driver_names_the_other_in_its_source():
    """Beyond the manifests: no `xcc_emu::` in the simulator's source, no `xcc_sim::` in the
    emulator's (tests comparing the two drivers live in `tests/`, as dev-dependencies)."""
    pairs = (
        ("xcc-sim", "xcc_emu"),
        ("xcc-emu", "xcc_sim"),
        ("xcc-build", "xcc_sim"),
        ("xcc-build", "xcc_emu"),
    )
    found = [
        f"{f.relative_to(ROOT)} names {other}"
        for crate, other in pairs
        for f, text in _sources(crate).items()
        if re.search(rf"\b{other}::", _code(text))
    ]
    assert not found, found
