"""Run directories, atomic writes, typed tables and determinism, against the fake native module."""

from __future__ import annotations

import json
import os

import polars as pl
import pytest

import xcclab
from conftest import fake_raw
from xcclab import RunResult
from xcclab._fsutil import atomic_dir, write_text_atomic
from xcclab.schema import TABLE_NAMES, TABLES

FILES = {
    "run.json",
    "timing.json",
    "flows.parquet",
    "links.parquet",
    "flow_series.parquet",
    "link_series.parquet",
    "transactions.parquet",
}


def listing(path):
    return sorted(p.name for p in path.iterdir())


def test_run_writes_the_run_directory(fake_native, scenario_file, tmp_path):
    out = tmp_path / "out" / "run1"
    res = xcclab.run(scenario_file, seed=5, out=out)
    assert set(listing(out)) == FILES
    assert res.path == out
    info = json.loads((out / "run.json").read_text())
    assert info["seed"] == 5
    assert info["native_version"] == "fake-0"
    assert info["xcclab_version"] == xcclab.__version__
    assert info["scenario"]["name"] == "fake"
    assert info["stats"] == {"events": 1234, "packet_hops": 999, "sim_seconds": 1.0}
    assert info["tables"]["flows"] == {"rows": 2}
    # run.json holds nothing that changes between identical runs
    text = (out / "run.json").read_text()
    assert "wall" not in text and "utc" not in text and "host" not in info
    timing = json.loads((out / "timing.json").read_text())
    assert timing["wall_seconds"] == 0.01 and "finished_utc" in timing
    # the native module got the file's text and name
    call = fake_native.calls[0]
    assert call["source"] == str(scenario_file) and call["format"] == "toml"
    assert call["seed"] == 5


def test_tables_are_typed_and_nulls_replace_nan_and_minus_one(fake_native, scenario_file):
    res = xcclab.run(scenario_file)
    # Every per-run table (the optional session tables only come with a [sessions] run).
    for name in TABLE_NAMES:
        cols = TABLES[name]
        df = res.tables[name]
        assert df.columns == [c.name for c in cols], name
        for c in cols:
            expected = {"i64": pl.Int64, "f64": pl.Float64, "str": pl.String}[c.dtype]
            assert df.schema[c.name] == expected, (name, c.name)
    flows = res.flows
    assert flows["size_bytes"].to_list() == [None, 10000]
    assert flows["fct_s"].to_list() == [None, 0.5]
    assert flows["stop_s"].to_list() == [None, 1.0]
    assert res.links["buffer_packets"].to_list() == [100, None]
    assert res.flow_series["ssthresh_bytes"].to_list() == [None, 2250, None, None]
    assert res.flow_series["cwnd_bytes"].to_list() == [3000, 4500, None, None]
    assert res.transactions.height == 0
    assert res.link("a->b")["drops"] == 1
    with pytest.raises(KeyError, match="no link"):
        res.link("x->y")


def test_load_round_trip(fake_native, scenario_file, tmp_path):
    res = xcclab.run(scenario_file, out=tmp_path / "r")
    back = RunResult.load(tmp_path / "r")
    assert back.run_info == res.run_info
    assert back.timing == res.timing
    for name in TABLE_NAMES:
        assert back.tables[name].equals(res.tables[name]), name
    assert not set(back.tables) - set(TABLE_NAMES)  # no optional table without its run


def test_load_rejects_non_run_dirs(tmp_path):
    with pytest.raises(ValueError, match="not a run directory"):
        RunResult.load(tmp_path)


def test_same_input_gives_byte_identical_files(fake_native, scenario_file, tmp_path):
    xcclab.run(scenario_file, out=tmp_path / "a")
    xcclab.run(scenario_file, out=tmp_path / "b")
    for name in FILES - {"timing.json"}:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


def test_failed_run_leaves_no_output(fake_native, scenario_file, tmp_path):
    fake_native.fail = RuntimeError("invariant violated: bytes sent != delivered + dropped")
    out = tmp_path / "out"
    with pytest.raises(RuntimeError, match="invariant violated"):
        xcclab.run(scenario_file, out=out)
    assert not out.exists()
    assert listing(tmp_path) == ["tiny.toml"]


def test_failed_run_keeps_previous_output(fake_native, scenario_file, tmp_path):
    out = tmp_path / "out"
    xcclab.run(scenario_file, seed=1, out=out)
    fake_native.fail = ValueError("tiny.toml: link[0].rate: expected a rate")
    with pytest.raises(ValueError):
        xcclab.run(scenario_file, seed=2, out=out)
    assert json.loads((out / "run.json").read_text())["seed"] == 1
    assert listing(tmp_path) == ["out", "tiny.toml"]


def test_success_replaces_previous_output(fake_native, scenario_file, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "stale.txt").write_text("old")
    xcclab.run(scenario_file, seed=3, out=out)
    assert set(listing(out)) == FILES
    assert json.loads((out / "run.json").read_text())["seed"] == 3
    assert listing(tmp_path) == ["out", "tiny.toml"]


def test_error_while_writing_leaves_no_output(fake_native, scenario_file, tmp_path, monkeypatch):
    def broken(self, directory):
        (directory / "run.json").write_text("{}")
        raise OSError("disk full")

    monkeypatch.setattr(RunResult, "write_into", broken)
    with pytest.raises(OSError, match="disk full"):
        xcclab.run(scenario_file, out=tmp_path / "out")
    assert listing(tmp_path) == ["tiny.toml"]


def test_atomic_dir_and_file(tmp_path):
    with atomic_dir(tmp_path / "d") as tmp:
        assert tmp.parent == tmp_path and tmp.name.startswith(".d.tmp-")
        (tmp / "x").write_text("1")
        assert not (tmp_path / "d").exists()
    assert (tmp_path / "d" / "x").read_text() == "1"
    assert oct(os.stat(tmp_path / "d").st_mode & 0o777) != "0o700"
    with pytest.raises(ZeroDivisionError), atomic_dir(tmp_path / "d") as tmp:
        (tmp / "y").write_text("2")
        1 / 0  # noqa: B018
    assert listing(tmp_path / "d") == ["x"]
    assert listing(tmp_path) == ["d"]
    write_text_atomic(tmp_path / "f.txt", "hello")
    assert (tmp_path / "f.txt").read_text() == "hello"
    assert listing(tmp_path) == ["d", "f.txt"]


def test_scenario_forms(fake_native, tmp_path):
    sc = xcclab.Scenario("built", duration="1s").add_host("a")
    xcclab.run(sc)
    xcclab.run(sc.to_dict())
    xcclab.run('name = "inline"\nduration = "1s"\n')
    forms = [(c["format"], c["source"]) for c in fake_native.calls]
    assert forms == [
        ("json", "<scenario built>"),
        ("json", "<scenario built>"),
        ("toml", "<string>"),
    ]
    assert json.loads(fake_native.calls[0]["text"]) == sc.to_dict()
    with pytest.raises(ValueError, match="no such scenario file"):
        xcclab.run(tmp_path / "missing.toml")
    with pytest.raises(TypeError):
        xcclab.run(42)


def test_no_series_sets_interval_zero(fake_native, scenario_file):
    xcclab.run(scenario_file, series=False)
    call = fake_native.calls[0]
    assert call["format"] == "json"
    assert json.loads(call["text"])["metrics"] == {"interval": "0s"}
    assert call["source"] == str(scenario_file)


def test_progress_callable_receives_fractions(fake_native, scenario_file):
    seen = []
    xcclab.run(scenario_file, progress=seen.append)
    assert seen == [0.25, 0.5, 1.0]
    xcclab.run(scenario_file, progress=True)  # the tqdm bar must accept the same calls


def test_summary_mentions_flows_and_links(fake_native, scenario_file):
    text = xcclab.run(scenario_file).summary()
    assert "f1" in text and "a->b" in text and "999 packet-hops" in text


def test_plot_is_deterministic(fake_native, scenario_file, tmp_path):
    res = xcclab.run(scenario_file, out=tmp_path / "r")
    first = res.plot()
    assert [p.name for p in first] == ["timeseries.png", "timeseries.svg"]
    assert all(p.parent == tmp_path / "r" / "plots" for p in first)
    svg = first[1].read_bytes()
    assert b"<dc:date>" not in svg
    second = res.plot(tmp_path / "again")
    assert second[1].read_bytes() == svg
    assert second[0].read_bytes() == first[0].read_bytes()


def test_plot_without_series_is_a_user_error(fake_native, scenario_file, monkeypatch):
    raw = fake_raw()
    for name in ("flow_series", "link_series"):
        raw["tables"][name] = {k: [] for k in raw["tables"][name]}
    monkeypatch.setattr(fake_native, "run", lambda *a, **k: raw)
    res = xcclab.run(scenario_file)
    with pytest.raises(ValueError, match="no time series"):
        res.plot("unused")


def test_progress_bar_waits_before_showing():
    import io
    import time

    from xcclab._progress import ProgressBar

    quiet = io.StringIO()
    bar = ProgressBar("run", delay=5.0, file=quiet, disable=False)
    bar(0.5)
    bar(1.0)
    bar.close()
    assert quiet.getvalue() == ""  # a short run shows nothing

    shown = io.StringIO()
    bar = ProgressBar("run", delay=0.05, file=shown, disable=False)
    bar(0.1)
    time.sleep(0.2)
    bar(0.6)
    bar.close()
    assert "run:  60%" in shown.getvalue()
