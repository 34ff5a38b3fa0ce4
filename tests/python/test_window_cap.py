"""The transport's window cap (issue #35): a scenario whose path needs a larger window than
TCP's largest is refused before the run, naming the flow and the cap; a run where the cap
binds anyway says so in its flows table (``window_capped``) and in its summary's warnings."""

from __future__ import annotations

import pytest

from xcclab import cli
from xcclab.results import window_cap_packets

TWO_HOSTS = '[[host]]\nname = "a"\n[[host]]\nname = "b"\n'


def run_cli(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_cap_in_packets_follows_the_mss():
    assert window_cap_packets(1460) == (1 << 30) // 1460 == 735_439
    assert window_cap_packets(65_000) == 16_519
    assert window_cap_packets(100) == 1 << 20  # the segment cap binds first


@pytest.mark.native
def test_a_path_that_needs_more_than_the_cap_is_refused_before_the_run(tmp_path, capsys):
    # 100 Gbit/s x 100 ms round trip = 833,334 packets of 1500 B > 735,439.
    path = tmp_path / "far.toml"
    path.write_text(
        f'name = "far"\nduration = "1s"\n{TWO_HOSTS}'
        '[[link]]\nbetween = ["a", "b"]\nrate = "100Gbps"\ndelay = "50ms"\nbuffer = "1000pkt"\n'
        '[[flow]]\nname = "f3"\nsrc = "a"\ndst = "b"\n'
    )
    code, out, err = run_cli(capsys, "run", str(path), "--out", str(tmp_path / "o"), "-q")
    assert code == 2
    assert "xcc: error:" in err and "flow 'f3': its path needs a window of 833334 packets" in err
    assert "cap of 735439 packets of 1460 B" in err
    assert not (tmp_path / "o").exists()
    # 40 ms each way needs 666,667 packets: accepted.
    path.write_text(path.read_text().replace('"50ms"', '"40ms"').replace('"1s"', '"1ms"'))
    code, out, err = run_cli(capsys, "run", str(path), "--out", str(tmp_path / "o"), "-q")
    assert code == 0, err


@pytest.mark.native
def test_a_run_where_the_cap_binds_says_so(tmp_path, capsys):
    # Slow start into an unlimited buffer never stops: with 65,000 B segments the window
    # reaches its cap of 16,519 packets within a second at 10 Gbit/s (a cheap run). The link
    # stays busy: the cap only bounds the standing queue, so this is a warning, not an error.
    path = tmp_path / "jumbo.toml"
    path.write_text(
        f'name = "jumbo"\nduration = "2s"\n{TWO_HOSTS}'
        '[[link]]\nbetween = ["a", "b"]\nrate = "10Gbps"\ndelay = "1ms"\nbuffer = "unlimited"\n'
        '[[flow]]\nname = "f"\nsrc = "a"\ndst = "b"\ntransport = { mss = "65000B" }\n'
    )
    code, out, err = run_cli(capsys, "run", str(path), "--out", str(tmp_path / "o"), "-q")
    assert code == 0, err
    assert "warning: flow 'f': the transport's window reached its cap of 16,519 packets" in out
    from xcclab.results import RunResult

    run = RunResult.load(tmp_path / "o")
    row = run.flows.row(0, named=True)
    assert row["window_capped"] > 0 and row["rto_overdue"] == 0
    assert run.links.filter(run.links["name"] == "a->b")["utilisation"][0] > 0.99
    assert len(run.warnings()) == 1
