"""The figures of the seeded cells (drawn only in full runs, so not by the quick-mode tests):
each is written from constructed summaries, one file per format."""

import pytest

pytest.importorskip("matplotlib")


def _cell(mean: float) -> dict:
    return {"values": [mean] * 10, "mean": mean, "ci95": [mean * 0.9, mean * 1.1], "n": 10}


def test_mice_seeded_figure(tmp_path):
    from xcclab.reproduce.mice import mice

    seeded = {
        f"{stack}@{w:g}s": {key: _cell(0.5) for key, *_ in mice._SEEDED_PANELS}
        for stack in mice.SENSITIVITY_STACKS
        for w in mice.SEEDED_WINDOWS_S
    }
    names = mice._seeded_figure(tmp_path, "mice-http-200", seeded, 200, "10Mbps")
    assert names == ["seeded.png", "seeded.svg"]
    assert all((tmp_path / n).stat().st_size > 0 for n in names)


def test_join_spread_figure(tmp_path):
    from xcclab.reproduce.xcc import xcc_abrupt

    keys = xcc_abrupt.SPREAD_KEYS
    measured = {p: {k: 1.0 for k in keys} for p in xcc_abrupt.SPREAD_PROTOCOLS}
    spread = {
        f"{x:g}": {p: {k: _cell(1.0) for k in keys} for p in xcc_abrupt.SPREAD_PROTOCOLS}
        for x in xcc_abrupt.JOIN_SPREADS_S
    }
    names = xcc_abrupt._spread_figure(tmp_path, measured, spread)
    assert names == ["join-spread.png", "join-spread.svg"]
    assert all((tmp_path / n).stat().st_size > 0 for n in names)
