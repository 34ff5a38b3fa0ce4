"""No import cycle among the Rust modules of a crate, and no arrow from one driver to the other
(docs/architecture.md, "Layering")."""

from __future__ import annotations

import importlib.util
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
