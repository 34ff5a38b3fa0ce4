"""Documentation stays in step with the code."""

from __future__ import annotations

import re

import xcclab
from conftest import ROOT
from xcclab.algorithms import NOTES, algorithms, registry_names
from xcclab.schema import TABLES


def test_output_schema_lists_every_column():
    text = (ROOT / "docs" / "output-schema.md").read_text()
    for table, cols in TABLES.items():
        section = text.split(f"### `{table}.parquet`", 1)[1].split("\n### ", 1)[0]
        for col in cols:
            assert f"| `{col.name}` |" in section, (table, col.name)


def test_generated_regions_are_current():
    """README's status table, the scenario reference's table by name and the dissector's header
    table are what `python -m xcclab.generated` writes from the registries now."""
    from xcclab import generated

    assert generated.main(["--root", str(ROOT), "--check"]) == 0
    for region in generated.REGIONS:
        text = (ROOT / region.path).read_text()
        assert generated.regenerate(region, text) == text, region.path


def test_generated_check_fails_on_a_stale_region(tmp_path, capsys):
    """A region edited by hand (or an algorithm added without regenerating) is reported."""
    from xcclab import generated

    for region in generated.REGIONS:
        (tmp_path / region.path).parent.mkdir(parents=True, exist_ok=True)
        text = (ROOT / region.path).read_text()
        (tmp_path / region.path).write_text(
            text.replace(region.end, "| stale | row |\n" + region.end)
        )
    assert generated.main(["--root", str(tmp_path), "--check"]) == 1
    assert "stale generated regions" in capsys.readouterr().err
    assert generated.main(["--root", str(tmp_path)]) == 0
    assert generated.main(["--root", str(tmp_path), "--check"]) == 0


def test_readme_status_table_names_every_algorithm():
    text = (ROOT / "README.md").read_text()
    for algo in algorithms():
        assert f"| {algo.name} | {algo.role} | {algo.status} |" in text, algo.name


def test_every_algorithm_note_is_for_a_registry_name():
    names = {n for role in registry_names().values() for n in role}
    assert set(NOTES) <= names, set(NOTES) - names


def test_every_algorithm_has_a_doc_page():
    for algo in algorithms():
        assert (ROOT / "docs" / "algorithms" / f"{algo.name}.md").exists(), algo.name


def test_python_version_matches_cargo_workspace():
    cargo = (ROOT / "Cargo.toml").read_text()
    version = re.search(r'^version = "([^"]+)"', cargo, re.M).group(1)
    assert xcclab.__version__ == version


def test_readme_links_the_workflow_docs_and_the_reproduction_index():
    text = (ROOT / "README.md").read_text()
    for target in (
        "docs/sweeps.md",
        "docs/catalog.md",
        "docs/pcap.md",
        "docs/reproduction/index.md",
    ):
        assert f"]({target})" in text, target
        assert (ROOT / target).is_file(), target
    index = (ROOT / "docs" / "reproduction" / "index.md").read_text()
    for link in re.findall(r"\]\(([^)]+)\)", index):
        path, _, anchor = link.partition("#")
        assert (ROOT / "docs" / "reproduction" / path).is_file(), link
        if anchor:  # a claim table: the report carries the anchor
            text = (ROOT / "docs" / "reproduction" / path).read_text()
            assert f'<a id="{anchor}"></a>' in text, link
