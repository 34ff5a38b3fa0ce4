"""xcc reproduce --all: the index over every implemented experiment, and its verdicts."""

from __future__ import annotations

import pytest

from xcclab.cli import main
from xcclab.reproduce import EXPERIMENTS, get
from xcclab.reproduce.index import Row, judge, render_html, render_markdown


def comparisons(*rel: float) -> list[dict]:
    return [
        {"quantity": "J", "paper": 1.0, "ours": 1.0 + r, "cell": {"ratio": i}}
        for i, r in enumerate(rel)
    ]


def test_verdicts_follow_the_numbers():
    assert judge(comparisons(0.01, -0.02), 0.05)[1] == "reproduced"
    assert judge(comparisons(0.01, 0.30), 0.05)[1] == "partly"
    ours, verdict = judge(comparisons(0.2, 0.3, 0.01), 0.05)
    assert verdict == "not reproduced"
    assert ours.startswith("1 of 3 numbers within 5%") and "+30.0% (J, ratio=1)" in ours
    assert judge([], 0.05)[1] == "qualitative"  # the paper states no number
    no_ours = [{"quantity": "J", "paper": 0.9, "ours": None}]
    assert judge(no_ours, 0.05)[1] == "not reproduced"


def test_a_failed_experiment_is_listed_with_its_error():
    row = Row(get("markmax-s1-dt"), "claim | with pipe", "-", "failed", None, [], "boom")
    md = render_markdown([row], quick=False)
    assert "| markmax-s1-dt | claim \\| with pipe | error: boom | failed | - |" in md
    assert "<b>error:</b> boom" in render_html([row], quick=False)


@pytest.mark.native
def test_reproduce_all_quick_writes_linked_index(tmp_path, capsys):
    out = tmp_path / "all"
    assert main(["reproduce", "--all", "--quick", "--out", str(out), "--jobs", "2"]) == 0
    md = (out / "index.md").read_text()
    html = (out / "index.html").read_text()
    implemented = [e for e in EXPERIMENTS if e.status == "implemented"]
    assert implemented
    for e in implemented:
        assert f"[{e.id}]({e.id}/report.md)" in md
        assert (out / e.id / "report.md").is_file()
        assert f'href="{e.id}/report.md"' in html
    assert "not judged (quick run)" in md
    # Every linked figure exists.
    import re

    for target in re.findall(r"\]\(([^)]+\.(?:png|svg))\)", md):
        assert (out / target).is_file(), target
    assert main(["reproduce", "markmax-s1-dt", "--all"]) == 2


def test_index_over_existing_reports(tmp_path, capsys):
    """--index runs nothing: reports present are judged, missing ones are listed as not run."""
    import json

    out = tmp_path / "snap"
    d = out / "maxnet-encoding"
    d.mkdir(parents=True)
    metrics = {"comparisons": comparisons(0.0, 0.01), "figures": []}
    (d / "metrics.json").write_text(json.dumps(metrics))
    assert main(["reproduce", "--index", "--out", str(out)]) == 0
    md = (out / "index.md").read_text()
    assert "`xcc reproduce --index`" in md
    assert "| [maxnet-encoding](maxnet-encoding/report.md) |" in md
    assert "| reproduced |" in md
    assert "| markmax-s1-dt |" in md and "| not run |" in md
    assert (out / "index.html").is_file()
    assert main(["reproduce", "--index", "--out", str(tmp_path / "missing")]) == 2
    assert "no such directory" in capsys.readouterr().err
    assert main(["reproduce", "--index", "--all", "--out", str(out)]) == 2
