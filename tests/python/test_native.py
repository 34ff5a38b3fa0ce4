"""End-to-end tests against the compiled simulator (skipped until ``make build``)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import xcclab
from conftest import ROOT, TINY_TOML
from xcclab import cli

pytestmark = pytest.mark.native

ISLANDS = """
[[host]]
name = "c"

[[host]]
name = "e"

[[router]]
name = "r9"

[[link]]
between = ["c", "r9"]
rate = "10Mbps"
delay = "1ms"
buffer = "10pkt"

[[link]]
between = ["r9", "e"]
rate = "10Mbps"
delay = "1ms"
buffer = "10pkt"
"""


def mutate(old: str, new: str, count: int = 1):
    def apply(text: str) -> str:
        assert old in text, old
        return text.replace(old, new, count)

    return apply


#: (case id, mutation of TINY_TOML, phrases of which the error message must contain one:
#: the field path and what went wrong)
BAD = [
    (
        "unknown-key",
        mutate('delay = "5ms"', 'delay = "5ms"\ncolour = "red"'),
        ["link[1].colour: unknown field"],
    ),
    ("bad-unit", mutate('rate = "10Mbps"', 'rate = "10Mbs"'), ["link[1].rate: '10Mbs'"]),
    ("negative-delay", mutate('delay = "5ms"', 'delay = "-5ms"'), ["link[1].delay: "]),
    (
        "unknown-node-link",
        mutate('between = ["r", "b"]', 'between = ["r", "zz"]'),
        ["link[1].between[1]: "],
    ),
    ("unknown-node-flow", mutate('dst = "b"', 'dst = "zz"'), ["flow[0].dst: "]),
    ("missing-duration", mutate('duration = "2s"\n', ""), ["missing field `duration`"]),
    (
        "disconnected",
        lambda t: t.replace('dst = "b"', 'dst = "e"') + ISLANDS,
        ["flow[0]: no route"],
    ),
    ("count-without-i", mutate('name = "a"', 'name = "a"\ncount = 3'), ["host[0]: count = 3"]),
    ("zero-rate", mutate('rate = "10Mbps"', 'rate = "0Mbps"'), ["link[1].rate: "]),
    ("duplicate-node", mutate('name = "r"', 'name = "a"'), ["router[0].name: "]),
    ("negative-buffer", mutate('buffer = "50pkt"', 'buffer = "-3pkt"'), ["link[1].buffer: "]),
    (
        "unknown-queue",
        mutate('buffer = "50pkt"', 'buffer = "50pkt"\nqueue = "fifo9"'),
        ["link[1].queue"],
    ),
    (
        "red-thresholds",
        mutate(
            'buffer = "50pkt"',
            'buffer = "50pkt"\nqueue = { kind = "red", min_th = "30pkt", max_th = "20pkt" }',
        ),
        ["link[1].queue.max_th: "],
    ),
    (
        "markmax-thresholds",
        mutate(
            'buffer = "50pkt"',
            'buffer = "50pkt"\nqueue = { kind = "markmax", theta = "24pkt", theta_l = "30pkt" }',
        ),
        ["link[1].queue.theta_l: "],
    ),
    (
        "markmax-theta-h",
        mutate(
            'buffer = "50pkt"',
            'buffer = "50pkt"\nqueue = { kind = "markmax", theta = "24pkt", theta_h = "24pkt" }',
        ),
        ["link[1].queue.theta_h: "],
    ),
    (
        "markmax-mixed-units",
        mutate(
            'buffer = "50pkt"',
            'buffer = "50pkt"\nqueue = { kind = "markmax", theta = "24pkt", theta_h = "20KB" }',
        ),
        ["link[1].queue.theta_h: "],
    ),
    (
        "markmax-tail",
        mutate(
            'buffer = "50pkt"',
            'buffer = "50pkt"\n'
            'queue = { kind = "markmax", variant = "t", theta = "24pkt", tail = 0 }',
        ),
        ["link[1].queue.tail: "],
    ),
    (
        "markmax-tail-on-b",
        mutate(
            'buffer = "50pkt"',
            'buffer = "50pkt"\n'
            'queue = { kind = "markmax", variant = "b", theta = "24pkt", tail = 0.1 }',
        ),
        ["link[1].queue.tail: "],
    ),
    (
        "markmax-variant",
        mutate(
            'buffer = "50pkt"',
            'buffer = "50pkt"\nqueue = { kind = "markmax", variant = "x", theta = "24pkt" }',
        ),
        ["link[1].queue.variant: "],
    ),
    ("src-equals-dst", mutate('dst = "b"', 'dst = "a"'), ["flow[0].dst: "]),
]


def test_tiny_scenario_is_valid():
    assert xcclab.validate(TINY_TOML)["name"] == "tiny"


@pytest.mark.parametrize(("case", "change", "words"), BAD, ids=[b[0] for b in BAD])
def test_bad_scenarios_are_rejected_with_file_and_field(tmp_path, capsys, case, change, words):
    path = tmp_path / f"{case}.toml"
    path.write_text(change(TINY_TOML))
    out = tmp_path / "out"
    code = cli.main(["run", str(path), "--out", str(out)])
    stdout, err = capsys.readouterr()
    assert code == 2, err
    assert err.startswith(f"xcc: error: {path}: "), err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert any(w in err for w in words), err
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]
    assert cli.main(["validate", str(path)]) == 2
    assert capsys.readouterr().err == err


def test_cli_process_reports_errors_without_traceback(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(TINY_TOML.replace('rate = "10Mbps"', 'rate = "10Mbs"'))
    proc = subprocess.run(
        [sys.executable, "-m", "xcclab.cli", "run", str(path), "--out", str(tmp_path / "o")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"xcc: error: {path}: ")
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    "path",
    ["scenarios/dumbbell-10.toml", "benchmarks/dumbbell-10.toml", "benchmarks/dumbbell-100.toml"]
    + [f"scenarios/markmax-s1-dt-r{r}.toml" for r in (3, 7, 10, 20)],
)
def test_committed_scenarios_validate(path):
    resolved = xcclab.validate(ROOT / path)
    assert resolved["name"] == (ROOT / path).stem


def test_runs_are_byte_identical(scenario_file, tmp_path):
    xcclab.run(scenario_file, seed=3, out=tmp_path / "a")
    xcclab.run(scenario_file, seed=3, out=tmp_path / "b")
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert "run.json" in names and "flows.parquet" in names
    for name in names:
        if name == "timing.json":
            continue
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


def test_run_result_contents(scenario_file, tmp_path):
    seen = []
    res = xcclab.run(scenario_file, seed=9, out=tmp_path / "r", progress=seen.append)
    info = json.loads((tmp_path / "r" / "run.json").read_text())
    assert info["seed"] == 9 and res.seed == 9
    assert info["native_version"] == xcclab._native.version()
    assert info["scenario"]["name"] == "tiny"
    assert info["stats"]["sim_seconds"] == pytest.approx(2.0)
    assert info["stats"]["events"] > 0 and info["stats"]["packet_hops"] > 0
    flows = res.flows
    assert flows["name"].to_list() == ["f"]
    row = flows.row(0, named=True)
    assert 0 < row["goodput_bps"] <= 10e6
    assert row["bytes_delivered"] > 0 and row["size_bytes"] is None
    assert sorted(res.links["name"].to_list()) == ["a->r", "b->r", "r->a", "r->b"]
    btl = res.link("r->b")
    assert 0.5 < btl["utilisation"] <= 1.0
    assert btl["data_bytes_out"] <= btl["bytes_out"]
    assert res.flow_series.height == 40  # 2 s / 50 ms, one flow
    assert res.link_series.height == 160
    assert all(0.0 <= f <= 1.0 for f in seen)
    back = xcclab.RunResult.load(tmp_path / "r")
    assert back.flows.equals(res.flows)


def test_no_series_and_plot(scenario_file, tmp_path, capsys):
    out = tmp_path / "r"
    assert cli.main(["run", str(scenario_file), "--out", str(out), "--no-series"]) == 0
    res = xcclab.RunResult.load(out)
    assert res.flow_series.height == 0 and res.flows.height == 1
    assert cli.main(["plot", str(out)]) == 2
    assert "no time series" in capsys.readouterr().err
    assert cli.main(["run", str(scenario_file), "--out", str(out)]) == 0
    assert cli.main(["plot", str(out)]) == 0
    assert (out / "plots" / "timeseries.svg").is_file()


def test_builder_scenario_runs():
    sc = xcclab.Scenario.load(ROOT / "scenarios" / "markmax-s1-dt-r3.toml")
    sc.duration = "1s"
    res = xcclab.run(sc)
    assert res.flows.height == 2
    assert res.link("S->D")["rate_bps"] == 70e6
