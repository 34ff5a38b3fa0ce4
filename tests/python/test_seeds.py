"""Seeded cells: every case once per seed on the process pool, summarised as mean and 95 % CI;
and the Experiment registry that finds them."""

from __future__ import annotations

import pytest

from xcclab.reproduce import experiments, get
from xcclab.reproduce.common.seeds import (
    SEEDS,
    cell_estimate,
    from_summary,
    over_seeds,
    seeded_cells,
    summarise,
)


def square_of_seed(*, seed: int, scale: float) -> dict[str, float]:
    return {"x": scale * seed * seed}


def test_over_seeds_runs_each_case_once_per_seed_in_seed_order():
    runs = over_seeds(
        f"{__name__}:square_of_seed", {"a": {"scale": 1.0}, "b": {"scale": 2.0}}, (1, 2, 3), jobs=2
    )
    assert [r["x"] for r in runs["a"]] == [1.0, 4.0, 9.0]
    assert [r["x"] for r in runs["b"]] == [2.0, 8.0, 18.0]
    s = summarise(runs["a"], "x")
    assert s["values"] == [1.0, 4.0, 9.0] and s["n"] == 3
    e = from_summary(s, 10.0)
    assert e.mean == pytest.approx(140 / 3) and e.lo < e.mean < e.hi


def test_seeded_cells_summarise_each_key_and_feed_the_table_cells():
    logged: list[str] = []
    seeded = seeded_cells(
        f"{__name__}:square_of_seed", {"dt-r3": {"scale": 1.0}}, ("x",), logged.append, "exp", "!"
    )
    assert logged == [f"exp: 1 cells x {len(SEEDS)} seeds!"]
    assert seeded["dt-r3"]["x"]["values"] == [float(s * s) for s in SEEDS]
    metrics = {"seeded": seeded}
    cell = {"quantity": "J", "cell": {"queue": "DT", "delta_ratio": 3}, "ours": 0.5}
    other = {"quantity": "J", "cell": {"queue": "DT", "delta_ratio": 7}, "ours": 0.5}
    key, quantity = {("DT", 3): "dt-r3"}, {"J": "x"}
    assert cell_estimate(metrics, cell, key, quantity).mean == pytest.approx(38.5)
    assert cell_estimate(metrics, other, key, quantity) == 0.5


def test_a_failing_seed_is_named():
    with pytest.raises(RuntimeError, match="a, seed 1"):
        over_seeds(f"{__name__}:square_of_seed", {"a": {"wrong": 1}}, (1,), jobs=1)


def test_registry_holds_each_experiment_once_with_its_claims():
    ids = [e.id for e in experiments()]
    # 25 of the seed papers, and the experiments of today's protocols as they arrive.
    assert len(ids) == len(set(ids)) >= 25
    assert "baselines" in ids
    assert {"rcp-instability-1", "rcp-instability-9", "rcp-instability-49"} <= set(ids)
    assert get("mice-http-200").emu is not None and get("mice-http-200").stack is not None
    assert get("markmax-s1").scenarios is not None and get("maxnet-cbr").scenarios is None
    with pytest.raises(KeyError, match="unknown experiment 'nope'"):
        get("nope")
