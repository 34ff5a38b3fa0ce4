"""``xcc reproduce``: the markmax-s1-dt report (quick mode by default; full length is slow)."""

from __future__ import annotations

import json

import pytest

from xcclab import cli
from xcclab.reproduce.markmax import markmax_s1_dt

pytestmark = pytest.mark.native


def check_report(out, quick):
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["experiment"] == "markmax-s1-dt"
    assert metrics["quick"] is quick
    comps = metrics["comparisons"]
    assert len(comps) == 16  # J, rho, mean queue, mean delay for 4 ratios
    for c in comps:
        assert {"quantity", "paper", "ours", "unit"} <= set(c)
        assert isinstance(c["ours"], float)
    quantities = {c["quantity"] for c in comps}
    assert quantities == {"J", "rho", "mean queue", "mean delay"}
    by = {(c["quantity"], c["cell"]["delta_ratio"]): c for c in comps}
    assert by[("J", 7)]["paper"] == 0.7540
    assert by[("mean queue", 3)]["paper"] == 78373
    for r in markmax_s1_dt.RATIOS:
        j = by[("J", r)]["ours"]
        assert 0.5 <= j <= 1.0  # Jain's index of two flows
        assert 0.5 < by[("rho", r)]["ours"] <= 1.0
        q = by[("mean queue", r)]["ours"]
        assert 0 < q <= 240 * 540
        assert by[("mean delay", r)]["ours"] == pytest.approx(q * 8 / 70e6 * 1e3)
        run = json.loads((out / "runs" / f"r{r}" / "run.json").read_text())
        assert run["scenario"]["name"] == f"markmax-s1-dt-r{r}"
        assert (out / "runs" / f"r{r}" / "scenario.toml").is_file()
    report = (out / "report.md").read_text()
    assert "## Discussion of the gap" in report
    assert "0.7540" in report and "78373" in report
    for fig in ("comparison.png", "comparison.svg", "queue-trace-r7.png"):
        assert (out / fig).is_file(), fig
    return metrics


def test_quick_reproduction_writes_report_and_metrics(tmp_path, capsys):
    out = tmp_path / "mm"
    assert cli.main(["reproduce", "markmax-s1-dt", "--out", str(out), "--quick"]) == 0
    stdout = capsys.readouterr().out
    assert f"report: {out / 'report.md'}" in stdout
    metrics = check_report(out, quick=True)
    assert metrics["t_f_s"] == markmax_s1_dt.QUICK_T_F_S
    assert "Quick mode" in (out / "report.md").read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mm"]


def test_reproduction_failure_leaves_nothing(tmp_path, monkeypatch, capsys):
    import xcclab

    def boom(*args, **kwargs):
        raise RuntimeError("invariant violated: test")

    monkeypatch.setattr(xcclab, "run", boom)
    code = cli.main(["reproduce", "markmax-s1-dt", "--out", str(tmp_path / "mm"), "--quick"])
    assert code == 1
    assert "invariant violated: test" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_full_reproduction(tmp_path):
    out = tmp_path / "mm"
    markmax_s1_dt.run(out)
    metrics = check_report(out, quick=False)
    assert metrics["t_f_s"] == 100


@pytest.mark.slow
def test_bench_runs_in_child_processes(tmp_path, capsys):
    from conftest import TINY_TOML

    (tmp_path / "tiny.toml").write_text(TINY_TOML)
    code = cli.main(["bench", "--dir", str(tmp_path), "--runs", "2", "--warmup", "0", "--json"])
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    (result,) = doc["results"]
    assert result["scenario"] == "tiny" and result["runs"] == 2
    med = result["median"]
    assert med["wall_s"] > 0 and med["hops_per_s"] > 0 and med["peak_rss_mb"] > 1
    assert result["wall_min_s"] <= med["wall_s"] <= result["wall_max_s"]
