"""No import cycle among the Rust modules of a crate, and no arrow from one driver to the other
(docs/architecture.md, "Layering"); no import cycle among the modules of the Python package,
imports inside functions included, and no reproduction importing its own variants."""

from __future__ import annotations

import ast
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


# --- Python: the package's import graph, from the source (every import statement, wherever it
# sits: module level, inside functions, under ``if TYPE_CHECKING``). ---

PACKAGE = ROOT / "python" / "xcclab"
#: Compiled modules of the package (no .py file): leaves of the graph.
EXTENSIONS = ("xcclab._native",)


def python_modules(root: Path, package: str) -> dict[str, tuple[Path | None, bool]]:
    """Dotted name -> (file, is a package) of every module under ``root``."""
    out: dict[str, tuple[Path | None, bool]] = {name: (None, False) for name in EXTENSIONS}
    for f in sorted(root.rglob("*.py")):
        parts = [package, *f.relative_to(root).with_suffix("").parts]
        is_package = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_package else parts)] = (f, is_package)
    return out


def import_graph(root: Path, package: str = "xcclab") -> dict[str, set[str]]:
    """An arrow from each module to every module of the package it imports. ``from P import
    N`` goes to ``P.N`` when that is a module, else to ``P``; importing a parent package only
    to reach a child (which Python does anyway) is not an arrow."""
    modules = python_modules(root, package)
    edges: dict[str, set[str]] = {m: set() for m in modules}
    for name, (path, is_package) in modules.items():
        if path is None:
            continue
        here = name if is_package else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = here
                    for _ in range(node.level - 1):
                        anchor = anchor.rpartition(".")[0]
                    base = f"{anchor}.{base}" if node.module else anchor
                targets = [
                    f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                    for a in node.names
                ]
            for t in targets:
                while t and t not in modules:  # `import xcclab.x.y` names xcclab.x.y's module
                    t = t.rpartition(".")[0]
                if t and t != name:
                    edges[name].add(t)
    return edges


def python_cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle_in_the_python_package():
    edges = import_graph(PACKAGE)
    assert len(edges) > 100, "the graph should hold every module of python/xcclab"
    cycles = python_cycles(edges)
    described = [{m: sorted(edges[m] & set(c)) for m in c} for c in cycles]
    assert not cycles, f"import cycles (module -> the modules of its cycle it imports): {described}"


def test_a_python_import_cycle_is_found_at_any_depth(tmp_path):
    """The checker itself: a cycle closed by an import inside a function, through ``from . import``
    and a relative import from a subpackage, is found; a module importing its parent package's
    sibling without a way back is not a cycle."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .sub import b\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from .. import c\n    return c\n")
    (pkg / "c.py").write_text("import os\n\n\ndef g():\n    from .a import x\n    return x\n")
    (pkg / "d.py").write_text("from . import a\n")
    edges = import_graph(pkg, "pkg")
    assert python_cycles(edges) == [["pkg.a", "pkg.c", "pkg.sub.b"]]
    (pkg / "c.py").write_text("import os\n")
    assert python_cycles(import_graph(pkg, "pkg")) == []


def test_no_reproduction_imports_its_variants():
    """An experiment's real-packet and stack variants register themselves (a ``Variant``); the
    experiment modules never import them, and the variants of one experiment not each other."""
    from xcclab.reproduce import Experiment, Variant, experiments

    experiments()  # imports every module of the reproductions
    import sys

    def defines(kind: type) -> set[str]:
        return {
            name
            for name, module in list(sys.modules.items())
            if name.startswith("xcclab.reproduce.")
            and any(isinstance(v, kind) for v in vars(module).values())
        }

    variants, defining = defines(Variant), defines(Experiment)
    assert variants, "the reproductions should define variants"
    edges = import_graph(PACKAGE)
    wrong = {m: sorted(edges[m] & variants) for m in defining | variants if edges[m] & variants}
    assert not wrong, f"modules importing a variant module: {wrong}"
