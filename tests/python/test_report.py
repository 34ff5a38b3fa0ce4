"""Reproduction helpers: Jain's index, comparisons, generated discussion, metrics.json."""

from __future__ import annotations

import json
import math

import pytest

from xcclab.reproduce.common.report import (
    Comparison,
    gap_summary,
    jain_index,
    markdown_table,
    write_metrics,
)


def test_jain_index():
    assert jain_index([5, 5]) == pytest.approx(1.0)
    assert jain_index([1, 0]) == pytest.approx(0.5)
    assert jain_index([3, 1]) == pytest.approx(16 / 20)
    assert math.isnan(jain_index([]))


def test_comparison_differences():
    c = Comparison("J", 0.5, 0.55)
    assert c.diff == pytest.approx(0.05)
    assert c.rel_diff == pytest.approx(0.1)
    assert not c.within(0.05) and c.within(0.1)
    assert Comparison("J", 0.5, None).rel_diff is None


def test_gap_summary_is_computed_from_numbers():
    cs = [
        Comparison("J", 1.0, 1.01, cell={"r": 3}),
        Comparison("J", 1.0, 0.80, cell={"r": 7}),
        Comparison("rho", 1.0, 0.99, cell={"r": 3}),
        Comparison("rho", 1.0, 0.98, cell={"r": 7}),
    ]
    j, rho = gap_summary(cs, tolerance=0.05)
    assert j.startswith("J: 1 of 2 cells within 5% (r=3); outside: r=7 (-20.0%)")
    assert "ours are higher in 1 and lower in 1" in j
    assert rho.startswith("rho: all 2 cells are within 5% of the paper")
    assert "ours are lower in every cell" in rho


def test_markdown_table():
    text = markdown_table(["a", "b"], [[1, 2]])
    assert text == "| a | b |\n|:---|---:|\n| 1 | 2 |"


def test_write_metrics(tmp_path):
    path = write_metrics(
        tmp_path, "x", comparisons=[Comparison("J", 1.0, float("nan"))], extra={"v": math.inf}
    )
    data = json.loads(path.read_text())
    assert data["experiment"] == "x"
    assert data["comparisons"][0]["quantity"] == "J"
    assert data["comparisons"][0]["ours"] is None
    assert set(data["comparisons"][0]) >= {"quantity", "paper", "ours", "unit"}
    assert data["extra"] == {"v": None}
