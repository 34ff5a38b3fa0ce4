"""The parts of tools/tutorial_check.py that need no build (the whole check runs in CI, `.ci/run`,
about 3 minutes): the tutorial holds what the check applies, and the registry line lands as the
registry's last entry where the registry's readers find it."""

from __future__ import annotations

import importlib.util
import shutil

from conftest import ROOT

spec = importlib.util.spec_from_file_location("tutorial_check", ROOT / "tools/tutorial_check.py")
tutorial_check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tutorial_check)


def marked():
    return tutorial_check.blocks((ROOT / tutorial_check.TUTORIAL).read_text())


def test_the_tutorial_writes_five_new_algorithm_files_and_one_registry_line():
    files = [m.split(":", 1)[1].strip() for m, _ in marked() if m.startswith("file:")]
    algorithm = [f for f in files if f.startswith(("crates/", "docs/algorithms/"))]
    assert len(algorithm) == tutorial_check.ALGORITHM_FILES == 5, algorithm
    assert not [f for f in files if (ROOT / f).exists()], "the tutorial must write new files"
    registry = [body for m, body in marked() if m.startswith("registry-line:")]
    assert len(registry) == 1 and registry[0].strip().startswith('"fairshare" fairshare {')
    runs = [body for m, body in marked() if m == "run"]
    assert any("xcc run" in r for r in runs) and any("xcc sweep" in r for r in runs)


def test_blocks_keep_nested_fences_and_whole_files():
    """The docs page holds a ```toml block: its own fence is four backticks, and the block
    read is the whole page."""
    page = dict(marked())["file: docs/algorithms/fairshare.md"]
    assert page.startswith("# Fairshare") and '### cc = "fairshare"' in page
    assert "```toml" in page and page.endswith("|\n")


def test_the_registry_line_becomes_the_last_entry(tmp_path, monkeypatch):
    import test_registry

    before = list(test_registry.registry_lines())
    registry = tmp_path / "mod.rs"
    shutil.copy2(ROOT / tutorial_check.REGISTRY, registry)
    line = next(body for m, body in marked() if m.startswith("registry-line:"))
    tutorial_check.add_registry_line(registry, line)
    monkeypatch.setattr(test_registry, "REGISTRY", registry)
    assert list(test_registry.registry_lines()) == [*before, "fairshare"]
    text = registry.read_text()
    assert text.count("fairshare") == (ROOT / tutorial_check.REGISTRY).read_text().count(
        "fairshare"
    ) + line.count("fairshare")
