"""xcc reproduce --all: the index over every implemented experiment, and its verdicts."""

from __future__ import annotations

import pytest

from xcclab.cli import main
from xcclab.reproduce import experiments, get
from xcclab.reproduce.index import Row, render_html, render_markdown, verdict_counts


def comparisons(*pairs: tuple[float, float]) -> list[dict]:
    names = ("integer bits B_i", "fraction bits B_f", "total bits")
    return [
        {"quantity": q, "paper": paper, "ours": ours, "unit": "bits", "cell": {}}
        for q, (paper, ours) in zip(names, pairs)
    ]


def test_verdicts_come_from_the_claims():
    from xcclab.reproduce.verdicts import judge

    e = get("maxnet-encoding")
    scored, v = judge(e, {"comparisons": comparisons((4, 4), (18, 18))})
    assert v.verdict == "reproduced" and [s.status for s in scored] == ["holds", "holds"]
    _, v = judge(e, {"comparisons": comparisons((4, 4), (18, 19))})  # exact: 19 is not 18
    assert v.verdict == "partly"
    _, v = judge(e, {"comparisons": comparisons((4, 5), (18, 19), (22, 24))})
    assert v.verdict == "not reproduced"
    _, v = judge(e, {"comparisons": []})
    assert v.verdict == "qualitative"


def test_counts_per_paper():
    rows = [
        Row(get("maxnet-encoding"), "c", "-", "reproduced", None, [], None),
        Row(get("markmax-s1-dt"), "c", "-", "partly", None, [], None),
        Row(get("markmax-s2"), "c", "-", "partly", None, [], None),
    ]
    counts = verdict_counts(rows)
    assert counts["000"] == {"reproduced": 1} and counts["003"] == {"partly": 2}
    assert counts["all"] == {"reproduced": 1, "partly": 2}
    assert "seed 003: 2 partly" in render_markdown(rows, quick=False)


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
    implemented = list(experiments())
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
    metrics = {"comparisons": comparisons((4, 4), (18, 18)), "figures": []}
    (d / "metrics.json").write_text(json.dumps(metrics))
    assert main(["reproduce", "--index", "--out", str(out)]) == 0
    md = (out / "index.md").read_text()
    assert "`xcc reproduce --index`" in md
    assert "| [maxnet-encoding](maxnet-encoding/report.md) |" in md
    assert "| [2 of 2 paper claims hold](maxnet-encoding/report.md#claims) | reproduced |" in md
    judged = json.loads((d / "metrics.json").read_text())  # the claims are written back
    assert [c["type"] for c in judged["claims"]] == ["point", "point"]
    assert judged["verdict"]["verdict"] == "reproduced"
    assert "| markmax-s1-dt |" in md and "| not run |" in md
    assert (out / "index.html").is_file()
    assert main(["reproduce", "--index", "--out", str(tmp_path / "missing")]) == 2
    assert "no such directory" in capsys.readouterr().err
    assert main(["reproduce", "--index", "--all", "--out", str(out)]) == 2
