"""Sweeps: spec parsing; pool and Dask LocalCluster agree; resume; a bad point fails alone."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from xcclab.cli import main
from xcclab.errors import ScenarioError
from xcclab.schema import TABLE_NAMES
from xcclab.sweep_spec import get_path, load_spec, parse_path

DATA = Path(__file__).parent / "data"

# 3 parameters x 3 values x 3 seeds = 81 points of a 0.5 s scenario.
GRID_SPEC = f"""
scenario = "{DATA / "tiny.toml"}"
seeds = [1, 2, 3]
series = false

[grid]
"link[2].delay" = ["2ms", "5ms", "10ms"]
"link[2].buffer" = ["10pkt", "30pkt", "60pkt"]
"flow[0].transport.mss" = ["500B", "1000B", "1460B"]
"""


def write_spec(tmp_path: Path, text: str, name: str = "spec.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# -- spec -----------------------------------------------------------------------------------
def test_parse_path_steps():
    assert parse_path("flow[0].transport.ecn") == [("flow", 0), ("transport", None), ("ecn", None)]
    with pytest.raises(KeyError, match="bad path step"):
        parse_path("flow[x].rate")


def test_get_path_creates_missing_sub_tables_but_not_entries():
    data = {"flow": [{"name": "f"}]}
    table, key = get_path(data, "flow[0].transport.ecn", create=True)
    table[key] = True
    assert data["flow"][0]["transport"] == {"ecn": True}
    with pytest.raises(KeyError, match="has 1 \\[\\[flow\\]\\] entries"):
        get_path(data, "flow[3].start", create=True)


def test_points_expand_grid_times_seeds_with_stable_ids(tmp_path):
    spec = load_spec(write_spec(tmp_path, GRID_SPEC))
    points = spec.points()
    assert len(points) == 81
    assert len({p.id for p in points}) == 81
    again = load_spec(write_spec(tmp_path, GRID_SPEC, "again.toml")).points()
    assert [p.id for p in again] == [p.id for p in points]
    data = spec.scenario_for(points[-1])
    assert data["link"][2]["delay"] == "10ms"
    assert data["flow"][0]["transport"]["mss"] == "1460B"
    assert "transport" not in spec.base["flow"][0]  # the base is left alone


def test_bad_specs_name_file_and_field(tmp_path):
    cases = {
        'scenario = "nope.toml"': "nope.toml",
        f'scenario = "{DATA / "tiny.toml"}"\nbogus = 1': "bogus: unknown field",
        f'scenario = "{DATA / "tiny.toml"}"\n[grid]\n"link[9].rate" = ["1Mbps"]': "out of range",
        f'scenario = "{DATA / "tiny.toml"}"\n[grid]\n"link[0].rate" = []': "non-empty list",
        f'scenario = "{DATA / "tiny.toml"}"\nseeds = [1, 1]': "distinct",
    }
    for text, expected in cases.items():
        with pytest.raises(ScenarioError, match=expected):
            load_spec(write_spec(tmp_path, text))


# -- running --------------------------------------------------------------------------------
def tables_of(out: Path) -> dict[str, pl.DataFrame]:
    """Every point's tables, concatenated and tagged with the point id."""
    manifest = pl.read_parquet(out / "manifest.parquet")
    tables = {"manifest": manifest}
    for name in TABLE_NAMES:
        frames = [
            pl.read_parquet(out / row["run_dir"] / f"{name}.parquet").with_columns(
                pl.lit(row["point_id"]).alias("point_id")
            )
            for row in manifest.filter(pl.col("status") == "ok").iter_rows(named=True)
        ]
        tables[name] = pl.concat(frames) if frames else pl.DataFrame()
    return tables


@pytest.mark.native
def test_pool_and_local_cluster_give_identical_tables_and_resume_skips(tmp_path):
    import xcclab

    spec = write_spec(tmp_path, GRID_SPEC)
    pool = xcclab.sweep(spec, tmp_path / "pool", jobs=2, progress=False)
    assert pool.ran == 81 and not pool.failed, pool.summary()
    dask = xcclab.sweep(spec, tmp_path / "dask", jobs=2, local_cluster=True, progress=False)
    assert dask.ran == 81 and not dask.failed, dask.summary()

    a, b = tables_of(tmp_path / "pool"), tables_of(tmp_path / "dask")
    for name in a:
        assert a[name].equals(b[name]), name
    assert a["flows"].height == 81 * 2
    # The parameters and seeds reach the simulator: results differ across the grid.
    goodput = a["flows"].group_by("point_id").agg(pl.col("goodput_bps").sum())
    assert goodput["goodput_bps"].n_unique() > 40
    manifest = json.loads((tmp_path / "pool" / "manifest.json").read_text())
    assert (tmp_path / "dask" / "manifest.json").read_text() == json.dumps(
        manifest, indent=2
    ) + "\n"

    # Rerun: nothing to do, finished points are skipped.
    before = (tmp_path / "pool" / "points" / pool.records[0]["point_id"] / "run.json").stat()
    again = xcclab.sweep(spec, tmp_path / "pool", jobs=2, progress=False)
    assert (again.ran, again.skipped) == (0, 81)
    after = (tmp_path / "pool" / "points" / pool.records[0]["point_id"] / "run.json").stat()
    assert before.st_mtime_ns == after.st_mtime_ns


@pytest.mark.native
def test_one_bad_value_fails_the_whole_sweep_before_anything_runs(tmp_path, capsys):
    spec = write_spec(
        tmp_path,
        f"""
scenario = "{DATA / "tiny.toml"}"
seeds = [1, 2]
series = false
[grid]
"link[2].rate" = ["5Mbps", "fast", "20Mbps"]
""",
    )
    out = tmp_path / "sub" / "out"
    status = main(["sweep", str(spec), "--out", str(out), "--jobs", "2"])
    assert status == 2
    err = capsys.readouterr().err
    assert "2 of 6 sweep points are invalid; nothing was run or written" in err
    # The simulator's message names the point, the field and what it expected.
    assert "link[2].rate='fast'" in err and "does not start with a number" in err, err
    assert not (tmp_path / "sub").exists()  # nothing written, not even the parent


@pytest.mark.native
def test_one_bad_protocol_fails_the_whole_sweep_before_anything_runs(tmp_path, capsys):
    from conftest import ROOT

    spec = write_spec(
        tmp_path,
        f"""
scenario = "{ROOT / "scenarios" / "parking-lot.toml"}"
seeds = [1]
protocols = ["xcp", "rpc", "maxnet"]
""",
    )
    out = tmp_path / "out"
    assert main(["sweep", str(spec), "--out", str(out), "--jobs", "1"]) == 2
    err = capsys.readouterr().err
    assert "1 of 3 sweep points are invalid" in err and "rpc" in err, err
    assert not out.exists()


@pytest.mark.native
def test_a_point_failing_at_run_time_is_recorded_and_resume_retries_it(tmp_path, capsys):
    spec = write_spec(
        tmp_path,
        f"""
scenario = "{DATA / "tiny.toml"}"
seeds = [1, 2]
series = false
[grid]
"link[2].rate" = ["5Mbps", "20Mbps"]
""",
    )
    out = tmp_path / "out"
    points = load_spec(spec).points()
    # A file where one point's run directory goes: that point valid, its write fails.
    blocked = out / "points" / points[1].id
    blocked.parent.mkdir(parents=True)
    blocked.write_text("in the way")
    status = main(["sweep", str(spec), "--out", str(out), "--jobs", "2"])
    assert status == 1
    printed = capsys.readouterr().out
    assert "4 points (4 run, 0 already done), 1 failed" in printed
    manifest = pl.read_parquet(out / "manifest.parquet")
    failed = manifest.filter(pl.col("status") == "failed")
    assert failed["point_id"].to_list() == [points[1].id]
    for row in manifest.filter(pl.col("status") == "ok").iter_rows(named=True):
        assert (out / row["run_dir"] / "run.json").is_file()

    # Resuming retries the failure and redoes a lost point, nothing else.
    import shutil

    import xcclab

    blocked.unlink()
    shutil.rmtree(out / "points" / points[0].id)
    again = xcclab.sweep(spec, out, jobs=2, progress=False)
    assert (again.ran, again.skipped, len(again.failed)) == (2, 2, 0)


@pytest.mark.native
def test_scheduler_address_runs_on_an_existing_dask_cluster(tmp_path):
    from dask.distributed import LocalCluster

    import xcclab

    spec = write_spec(
        tmp_path,
        f'scenario = "{DATA / "tiny.toml"}"\nseeds = [1, 2]\nseries = false\n'
        '[grid]\n"link[2].delay" = ["2ms", "8ms"]\n',
    )
    with LocalCluster(n_workers=1, threads_per_worker=1, dashboard_address=None) as cluster:
        result = xcclab.sweep(
            spec, tmp_path / "out", scheduler=cluster.scheduler_address, progress=False
        )
    assert (result.ran, len(result.failed)) == (4, 0)
    assert not xcclab.sweep(spec, tmp_path / "local", jobs=1, progress=False).failed
    assert tables_of(tmp_path / "out")["flows"].equals(tables_of(tmp_path / "local")["flows"])
