"""The ``xcc`` command line: exit codes, messages, listings (fake native module)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import ROOT
from xcclab import cli


def run_cli(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_run_and_plot(fake_native, scenario_file, tmp_path, capsys):
    out = tmp_path / "run"
    code, stdout, err = run_cli(capsys, "run", str(scenario_file), "--out", str(out), "--seed", "4")
    assert code == 0, err
    assert f"wrote {out}" in stdout
    assert json.loads((out / "run.json").read_text())["seed"] == 4
    code, stdout, err = run_cli(capsys, "plot", str(out))
    assert code == 0, err
    assert stdout.split() == [
        str(out / "plots" / "timeseries.png"),
        str(out / "plots" / "timeseries.svg"),
    ]


@pytest.mark.parametrize(
    ("exc", "code"),
    [
        (ValueError('tiny.toml: link[1].rate: expected a rate like "10Mbps"'), 2),
        (RuntimeError("invariant violated: negative queue"), 1),
    ],
)
def test_run_errors_map_to_exit_codes(fake_native, scenario_file, tmp_path, capsys, exc, code):
    fake_native.fail = exc
    out = tmp_path / "out"
    got, stdout, err = run_cli(capsys, "run", str(scenario_file), "--out", str(out))
    assert got == code
    assert err == f"xcc: error: {exc}\n"
    assert not out.exists()


def test_missing_file_is_bad_input(tmp_path, capsys):
    code, _, err = run_cli(capsys, "run", str(tmp_path / "nope.toml"), "--out", str(tmp_path / "o"))
    assert code == 2
    assert err.startswith("xcc: error: ") and "nope.toml: no such scenario file" in err
    assert not (tmp_path / "o").exists()


def test_validate(fake_native, scenario_file, capsys):
    code, stdout, _ = run_cli(capsys, "validate", str(scenario_file))
    assert code == 0
    assert stdout.strip() == f"{scenario_file}: ok: scenario 'fake' (2 host)"


def test_missing_native_module_is_reported(monkeypatch, scenario_file, tmp_path, capsys):
    import xcclab.results
    from xcclab.errors import NativeModuleMissing

    def missing():
        raise NativeModuleMissing("the simulator module xcclab._native is not built")

    monkeypatch.setattr(xcclab.results, "load_native", missing)
    code, _, err = run_cli(capsys, "run", str(scenario_file), "--out", str(tmp_path / "o"))
    assert code == 1 and "not built" in err


def test_usage_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["run"])
    assert info.value.code == 2
    assert "xcc: error:" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        cli.main(["frobnicate"])
    assert info.value.code == 2


def test_list_shows_algorithms_and_experiments(capsys):
    code, stdout, _ = run_cli(capsys, "list")
    assert code == 0
    assert "newreno" in stdout and "implemented" in stdout and "RFC 6582/3168" in stdout
    for name in ("droptail", "red", "maxnet", "xcp", "rcp", "piqi-rcp", "jetmax", "slbn"):
        assert f"  {name} " in stdout
    for name in ("erica", "bfyz", "cobb", "markmax"):
        assert f"  {name} " in stdout
    assert "markmax-s1-dt" in stdout and "rcp-instability-49" in stdout
    assert "  piqi-rcp    host+link  reconstructed" in stdout
    assert "  jetmax      host+link  reconstructed" in stdout
    # Every seed-004 experiment now takes its results from the packet engine: none is labelled.
    assert not any("[" in ln for ln in stdout.splitlines() if ln.startswith("  slbn-"))


def test_list_labels_an_approximation(capsys):
    """An experiment whose results come from a labelled approximation says so after its title."""
    from dataclasses import replace

    from xcclab.reproduce.slbn.slbn_2b import EXPERIMENT

    labelled = replace(EXPERIMENT, approximation="session driver (fluid data): validated on Medium")
    cli._print_experiments([labelled, replace(EXPERIMENT, id="plain")])
    lines = capsys.readouterr().out.splitlines()
    assert lines[2].startswith("  slbn-2b ")
    assert lines[2].endswith("[session driver (fluid data): validated on Medium]")
    assert lines[3].startswith("  plain ") and "[" not in lines[3]


def test_reproduce_write_scenarios(capsys, tmp_path):
    code, stdout, _ = run_cli(capsys, "reproduce", "markmax-s3", "--write-scenarios", str(tmp_path))
    assert code == 0
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == ["markmax-s3-dt.toml", "markmax-s3-mmb.toml"]
    assert "xcc reproduce markmax-s3 --write-scenarios" in (tmp_path / written[0]).read_text()
    code, _, err = run_cli(capsys, "reproduce", "maxnet-cbr", "--write-scenarios", str(tmp_path))
    assert code == 2 and "writes no scenario files" in err


def test_reproduce_list_and_unknown(capsys, tmp_path):
    code, stdout, _ = run_cli(capsys, "reproduce", "--list")
    assert code == 0 and "markmax-s1-dt" in stdout and "slbn-2b" in stdout
    code, _, err = run_cli(capsys, "reproduce", "nope", "--out", str(tmp_path / "x"))
    assert code == 2 and "unknown experiment 'nope'" in err
    assert not (tmp_path / "x").exists()
    from xcclab.reproduce import experiments

    # Every experiment is one Experiment object: id, paper, title, run and claims.
    assert all(callable(e.run) and callable(e.claims) for e in experiments())


def test_experiment_ids_cover_the_catalog():
    """Every id of experiments.md's seed sections (``### id``) is in the registry. The section
    "Beyond the seeds" lists the experiments of the datacenter and baseline issues, which come
    with their protocols."""
    from xcclab.reproduce import experiments

    catalog = ROOT.parent / "shared" / "experiments.md"
    if not catalog.is_file():
        pytest.skip("shared/experiments.md not beside the repository")
    ids = set()
    for line in catalog.read_text().splitlines():
        if line.startswith("## Beyond the seeds"):
            break
        if line.startswith("### "):
            ident = line[4:].split(" ")[0].rstrip(",")
            ids.add(ident)
    expanded = {e.id for e in experiments()}
    for ident in ids:
        if ident.endswith("-N") or ident.endswith("-K"):
            assert any(e.startswith(ident[:-1]) for e in expanded), ident
        else:
            assert ident in expanded, ident


QUANTITY_BASE = """
name = "bad"
duration = "DURATION"
[[host]]
name = "a"
[[host]]
name = "b"
[[link]]
between = ["a", "b"]
rate = "10Mbps"
delay = "DELAY"
buffer = "100pkt"
"""


@pytest.mark.parametrize(
    ("duration", "delay", "extra", "field"),
    [
        ("1s", "1e300s", "", "link[0].delay"),
        ("1e30s", "1ms", "", "duration"),
        ("1s", "1ms", '[[router]]\nname = "r{i}"\ncount = 100000000000\n', "router[0].count"),
    ],
)
def test_overflowing_quantities_exit_2_with_no_output(
    tmp_path, capsys, duration, delay, extra, field
):
    path = tmp_path / "bad.toml"
    text = QUANTITY_BASE.replace("DURATION", duration).replace("DELAY", delay) + extra
    path.write_text(text)
    out = tmp_path / "out"
    code, _, err = run_cli(capsys, "run", str(path), "--out", str(out))
    assert code == cli.EXIT_BAD_INPUT
    assert f": {field}: " in err
    assert not out.exists() and list(tmp_path.iterdir()) == [path]


@pytest.mark.parametrize("cc", ["maxnet", "xcp", "rcp", "piqi-rcp", "jetmax"])
def test_an_explicit_protocol_without_its_routers_is_refused(tmp_path, capsys, cc):
    """With no router of its kind on the path a source gets no feedback and grows without
    bound (MaxNet once tried to allocate gigabytes): refused naming the flow, no output."""
    path = tmp_path / "no-router.toml"
    text = QUANTITY_BASE.replace("DURATION", "1s").replace("DELAY", "1ms")
    path.write_text(text + f'[[flow]]\nname = "f"\nsrc = "a"\ndst = "b"\ncc = "{cc}"\n')
    out = tmp_path / "out"
    code, _, err = run_cli(capsys, "run", str(path), "--out", str(out))
    assert code == cli.EXIT_BAD_INPUT, err
    assert f': flow[0]: cc = "{cc}" needs a link with queue = "{cc}"' in err
    assert not out.exists()


def test_a_closed_pipe_ends_quietly():
    """`xcc list | head`: the reader goes away; xcc stops without a traceback or an error."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "xcclab.cli", "list"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={"PYTHONPATH": str(ROOT / "python"), "PATH": ""},
    )
    proc.stdout.close()  # nothing reads: the first flush meets a closed pipe
    err = proc.stderr.read().decode()
    assert proc.wait() == cli.EXIT_BROKEN_PIPE
    assert err == ""


def test_bench_worker_imports_only_the_native_module():
    code = (
        "import sys, xcclab._bench_worker; "
        "print(sorted(m for m in ('polars', 'matplotlib', 'numpy', 'tqdm') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(ROOT / "python"), "PATH": ""},
    )
    assert out.stdout.strip() == "[]"


def test_bench_rejects_unknown_scenarios(tmp_path, capsys):
    (tmp_path / "one.toml").write_text("")
    code, _, err = run_cli(capsys, "bench", "--dir", str(tmp_path), "--scenario", "two")
    assert code == 2 and "unknown benchmark two; available: one" in err
    code, _, err = run_cli(capsys, "bench", "--dir", str(tmp_path / "none"))
    assert code == 2 and "no benchmark directory" in err


def test_bench_runs_scale_scenarios_only_when_named(tmp_path):
    from xcclab.bench import find_scenarios

    (tmp_path / "one.toml").write_text("")
    (tmp_path / "big.scale.toml").write_text("")
    (tmp_path / "fluid.session.json").write_text("")
    assert [f.name for f in find_scenarios(tmp_path, None)] == ["one.toml"]
    named = find_scenarios(tmp_path, ["big", "fluid", "one"])
    assert [f.name for f in named] == ["big.scale.toml", "fluid.session.json", "one.toml"]


class PanicException(BaseException):
    """Stands for ``pyo3_runtime.PanicException`` (a Rust panic), matched by name."""


def test_a_rust_panic_is_one_error_line_with_the_log(fake_native, scenario_file, tmp_path, capsys):
    fake_native.fail = PanicException("index out of bounds")
    fake_native.panic_log_path = lambda: "/tmp/xcc-panic-1.log"
    got, _, err = run_cli(capsys, "run", str(scenario_file), "--out", str(tmp_path / "o"))
    assert got == cli.EXIT_INTERNAL
    assert err == (
        "xcc: error: internal error (a bug in xcclab, please report it): index out of bounds; "
        "the backtrace is in /tmp/xcc-panic-1.log\n"
    )


def test_run_reports_each_stage_with_its_time_unless_quiet(
    fake_native, scenario_file, tmp_path, capsys
):
    code, _, err = run_cli(capsys, "run", str(scenario_file), "--out", str(tmp_path / "a"))
    assert code == 0
    stages = [line.split(":")[1].strip() for line in err.splitlines() if line.startswith("xcc: ")]
    assert stages == ["simulate", "tables and max-min references", f"write {tmp_path / 'a'}"]
    assert all(line.endswith(" s") for line in err.splitlines() if line.startswith("xcc: "))
    code, _, err = run_cli(capsys, "run", str(scenario_file), "--out", str(tmp_path / "b"), "-q")
    assert code == 0 and err == ""


@pytest.mark.native
def test_the_native_module_logs_panics_to_a_file():
    from xcclab import _native

    assert _native.panic_log_path().endswith(f"xcc-panic-{__import__('os').getpid()}.log")


@pytest.mark.native
def test_a_flow_that_delivers_nothing_is_warned_about(tmp_path, capsys):
    path = tmp_path / "slow.toml"
    path.write_text(
        'name = "slow"\nduration = "2s"\n[[host]]\nname = "a"\n[[host]]\nname = "b"\n'
        '[[link]]\nbetween = ["a", "b"]\nrate = "10Mbps"\ndelay = "10s"\nbuffer = "100pkt"\n'
        '[[flow]]\nname = "f"\nsrc = "a"\ndst = "b"\n'
    )
    code, out, _ = run_cli(capsys, "run", str(path), "--out", str(tmp_path / "o"), "-q")
    assert code == 0
    assert "warning: flow 'f' delivered nothing in its 2 s (sent 0 B" in out
