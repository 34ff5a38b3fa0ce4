"""PFC (``[pfc]``): a lossless fabric in the simulator (docs/algorithms/pfc.md).

An incast scaled to run in a fraction of a second: 16 senders, each on its own 10 Gbit/s,
1 us link into one router, one 10 Gbit/s, 1 us link to the receiver; each sender pushes a
200 KB message at once (NewReno with an initial window of 200 segments, so the whole message
leaves at line rate: 16 x 10 Gbit/s into 10 Gbit/s). With the default thresholds (pause
22.5 KB, resume 18 KB) and the automatic headroom (2 x 1.25e9 x 1e-6 + 2 x 1,500 = 5,500 B per
port) the router's 17 ports admit at most 17 x 28,000 = 476,000 B, so a 600 KB buffer on its
link to the receiver holds everything.

Measured (seed 1, 5 ms): with PFC no packet is dropped anywhere; every flow completes (the
last at 2.58 ms, as 3.2 MB at 10 Gbit/s takes 2.56 ms); each sender's port sent 21 XOFF and 21
XON and its link was paused 2.17-2.28 ms; the receiver's link peaked at 427,500 B. Without
``[pfc]`` and with a 100 KB buffer the same incast loses packets at that link (1,000s of drops;
the exact count is not asserted). Asserted: no drop on any link and every flow complete with
PFC; every sender's port paused (at least one XOFF, the same number of XON, 1 to 3 ms paused,
the switch's view and the transmitter's equal within 1 us); the queue under the admission
bound; with no PFC and the small buffer, at least 100 drops.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("xcclab._native")

SENDERS = 16
ADMITTED = (SENDERS + 1) * (22_500 + 5_500)


def incast(pfc: bool, buffer: str = "600KB", pfc_table: dict | None = None) -> dict:
    port = {"rate": "10Gbps", "delay": "1us"}
    s = {
        "name": "incast-pfc" if pfc else "incast",
        "duration": "5ms",
        "seed": 1,
        "host": [{"name": "s{i}", "count": SENDERS}, {"name": "d"}],
        "router": [{"name": "r"}],
        "link": [
            {"between": ["s{i}", "r"], "count": SENDERS, "buffer": "unlimited", **port},
            {"between": ["r", "d"], "buffer": buffer, **port},
        ],
        "flow": [
            {
                "name": "f{i}",
                "count": SENDERS,
                "kind": "bulk",
                "src": "s{i}",
                "dst": "d",
                "start": "0s",
                "size": "200KB",
                "cc": {"kind": "newreno", "initial_window": 200},
                "transport": {"connection": "open"},
            }
        ],
    }
    if pfc:
        s["pfc"] = pfc_table or {}
    return s


@pytest.mark.native
def test_an_incast_with_pfc_loses_nothing_and_reports_pause_time():
    import xcclab

    result = xcclab.run(incast(pfc=True))
    links = result.links
    assert links["drops"].sum() == 0
    assert result.flows["fct_s"].is_nan().sum() == 0, "every message delivered"
    assert result.flows["packets_dropped"].sum() == 0
    bottleneck = links.row(links["name"].to_list().index("r->d"), named=True)
    assert 0 < bottleneck["max_queue_bytes"] <= ADMITTED
    ports = result.tables["pfc_ports"]
    senders = ports.filter(ports["name"].str.starts_with("s"))
    assert senders.height == SENDERS
    for row in senders.iter_rows(named=True):
        assert row["pause_frames"] >= 1 and row["resume_frames"] == row["pause_frames"], row
        assert 1e-3 <= row["paused_s"] <= 3e-3, row
        assert abs(row["paused_s"] - row["switch_paused_s"]) < 1e-6, row
        assert row["headroom_bytes"] == 5_500
    receiver = ports.row(ports["name"].to_list().index("d->r"), named=True)
    assert receiver["pause_frames"] == 0 and receiver["paused_s"] == 0.0
    assert result.scenario["pfc"]["pause_bytes"] == 22_500


@pytest.mark.native
def test_the_same_incast_without_pfc_and_a_small_buffer_drops():
    import xcclab

    result = xcclab.run(incast(pfc=False, buffer="100KB"))
    links = result.links
    drops = links.row(links["name"].to_list().index("r->d"), named=True)["drops"]
    assert drops >= 100
    assert "pfc_ports" not in result.tables
    assert "pfc" not in result.scenario


@pytest.mark.native
@pytest.mark.parametrize(
    "pfc, buffer, field, words",
    [
        ({"pause": "10KB", "resume": "12KB"}, "600KB", "pfc.resume", "must be below"),
        ({"headroom": "1000B"}, "600KB", "pfc.headroom", "at least one packet"),
        ({"headroom": "4KB"}, "600KB", "pfc.headroom", "the link can deliver after a pause"),
        ({}, "400KB", "pfc.pause", "above link r->d's buffer"),
    ],
    ids=["resume-above-pause", "headroom-below-a-packet", "headroom-below-in-flight", "buffer"],
)
def test_thresholds_that_cannot_hold_exit_2_naming_file_and_field(
    tmp_path, pfc, buffer, field, words
):
    import tomli_w

    path = tmp_path / "incast.toml"
    path.write_text(tomli_w.dumps(incast(pfc=True, buffer=buffer, pfc_table=pfc)))
    out = tmp_path / "out"
    err = subprocess.run(
        [sys.executable, "-m", "xcclab.cli", "run", str(path), "--out", str(out)],
        capture_output=True,
        text=True,
    )
    assert err.returncode == 2, err.stderr
    assert str(path) in err.stderr and field in err.stderr and words in err.stderr, err.stderr
    assert not out.exists(), "nothing written"
