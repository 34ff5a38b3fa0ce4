"""pcap export: the capture is a valid pcap of IPv4/UDP datagrams carrying xcclab's headers,
and tshark with tools/wireshark/xcclab.lua decodes the fields (when tshark is installed)."""

from __future__ import annotations

import ipaddress
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT
from xcclab import _native
from xcclab.cli import main
from xcclab.pcap import LINKTYPE_RAW, pcap_bytes, read_pcap

DATA = Path(__file__).parent / "data"
DISSECTOR = ROOT / "tools" / "wireshark" / "xcclab.lua"
XCC_UDP_PORT = 9870


def test_pcap_framing_round_trips(tmp_path):
    records = [(1_500_000_123, b"\x45" + bytes(19), 1500), (2_000_000_000, b"\x45" * 20, 20)]
    path = tmp_path / "x.pcap"
    path.write_bytes(pcap_bytes(records))
    assert read_pcap(path) == records
    header = path.read_bytes()[:24]
    assert struct.unpack("<I", header[:4])[0] == 0xA1B23C4D  # nanosecond pcap
    assert struct.unpack("<I", header[20:24])[0] == LINKTYPE_RAW


@pytest.fixture(scope="module")
def captured(tmp_path_factory):
    out = tmp_path_factory.mktemp("pcap") / "run"
    assert main(["run", str(DATA / "tiny.toml"), "--out", str(out), "--pcap", "r1->r2"]) == 0
    return out


@pytest.mark.native
def test_capture_matches_the_links_table(captured):
    import xcclab

    records = read_pcap(captured / "capture.pcap")
    res = xcclab.RunResult.load(captured)
    link = res.link("r1->r2")
    assert len(records) == link["packets_out"] > 100
    times = [t for t, _, _ in records]
    assert times == sorted(times)
    flows = {row["name"]: row for row in res.flows.iter_rows(named=True)}
    nodes = [n["name"] for n in res.scenario["nodes"]]
    data = 0
    for _, raw, orig in records:
        assert raw[0] == 0x45 and raw[9] == 17  # IPv4, UDP
        assert struct.unpack(">H", raw[2:4])[0] == orig
        src = int(ipaddress.IPv4Address(raw[12:16])) - int(ipaddress.IPv4Address("10.0.0.1"))
        sport, dport = struct.unpack(">HH", raw[20:24])
        # Right after UDP, the shim: proto 0 (none), len 0; then the segment.
        assert raw[28:30] == b"\x00\x00"
        kind = raw[30]
        if kind == 0:  # data goes from the flow's source to the xcclab port
            data += 1
            assert dport == XCC_UDP_PORT
            assert nodes[src] in {f["src"] for f in flows.values()}
            payload = struct.unpack(">I", raw[42:46])[0]
            assert orig == 20 + 8 + 2 + 32 + payload
        assert len(raw) == 30 + 32 + 8 * raw[33]  # the segment and its SACK blocks; no payload
    assert data > 0


@pytest.mark.native
def test_unknown_pcap_link_is_a_clear_error(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", str(DATA / "tiny.toml"), "--out", str(out), "--pcap", "r2->r9"]) == 2
    err = capsys.readouterr().err
    assert 'pcap: no link direction "r2->r9"; expected one of' in err and "r1->r2" in err
    assert not out.exists()


@pytest.mark.native
@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed")
def test_tshark_decodes_the_fields_with_the_dissector(captured):
    fields = [
        "ip.src",
        "udp.dstport",
        "xcclab.kind",
        "xcclab.seq",
        "xcclab.ack",
        "xcclab.payload",
        "xcclab.ts_val",
        "xcclab.cc.proto",
        "xcclab.cc.len",
    ]
    cmd = [
        "tshark",
        "-n",
        "-X",
        f"lua_script:{DISSECTOR}",
        "-r",
        str(captured / "capture.pcap"),
        "-T",
        "fields",
        "-E",
        "separator=,",
    ]
    for name in fields:
        cmd += ["-e", name]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    rows = [line.split(",") for line in proc.stdout.splitlines()]
    records = read_pcap(captured / "capture.pcap")
    assert len(rows) == len(records)
    for row, (_, raw, _) in zip(rows, records):
        got = dict(zip(fields, row))
        kind, _flags, _ecn, _sacks, seq, ack, payload, ts_val, _ = struct.unpack(
            ">BBBBIIIQQ", raw[30:62]
        )
        assert got["xcclab.kind"] == str(kind)
        assert got["xcclab.seq"] == str(seq) and got["xcclab.ack"] == str(ack)
        assert got["xcclab.payload"] == str(payload) and got["xcclab.ts_val"] == str(ts_val)
        assert (got["xcclab.cc.proto"], got["xcclab.cc.len"]) == ("0", "0")
    assert {r[0] for r in rows} >= {"10.0.0.1", "10.0.0.2"}  # both senders cross r1->r2


@pytest.mark.native
@pytest.mark.parametrize("queue", ["droptail", "red"])
def test_capturing_does_not_change_the_run(queue):
    """The capture only observes: same tables with and without it, for a passive discipline
    (DropTail) and one whose dequeue hook shares the departure branch with the capture (RED)."""
    import xcclab
    from xcclab.scenario import _toml_loads

    data = _toml_loads((DATA / "tiny.toml").read_text())
    if queue == "red":
        data["link"][2]["queue"] = {"kind": "red", "min_th": "5pkt", "max_th": "15pkt"}
    plain = xcclab.run(data)
    captured = xcclab.run(data, pcap="r1->r2")
    for name, table in plain.tables.items():
        assert table.equals(captured.tables[name]), name
    assert len(captured.pcap) == captured.link("r1->r2")["packets_out"]
    assert plain.pcap is None


@pytest.mark.native
def test_tshark_decodes_maxnet_prices(tmp_path):
    """A MaxNet run's capture: every packet carries the 8-byte shim (42, 6, echo, price); the
    dissector's decoded prices equal the fixed-point value of the raw words."""
    if shutil.which("tshark") is None:
        pytest.skip("tshark is not installed")
    out = tmp_path / "run"
    assert main(["run", str(DATA / "maxnet-tiny.toml"), "--out", str(out), "--pcap", "r1->r2"]) == 0
    fields = [
        "xcclab.kind",
        "xcclab.cc.proto",
        "xcclab.cc.len",
        "xcclab.maxnet.price",
        "xcclab.maxnet.price_s",
    ]
    cmd = ["tshark", "-n", "-X", f"lua_script:{DISSECTOR}", "-r", str(out / "capture.pcap")]
    cmd += ["-T", "fields", "-E", "separator=,"]
    for name in fields:
        cmd += ["-e", name]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    rows = [dict(zip(fields, line.split(","))) for line in proc.stdout.splitlines()]
    data = [r for r in rows if r["xcclab.kind"] == "0"]
    assert data and all((r["xcclab.cc.proto"], r["xcclab.cc.len"]) == ("42", "6") for r in data)
    stamped = 0
    for r in data:
        raw = int(r["xcclab.maxnet.price"], 16)
        seconds = (raw & 0x7FFFFF) / 2**18
        assert abs(float(r["xcclab.maxnet.price_s"]) - seconds) < 1e-9
        stamped += seconds > 0
    # r1->r2 is the first MaxNet router on the path: it has stamped its price on every data
    # packet that is not the MaxStart probe (the probe carries a spare capacity instead).
    assert stamped >= len(data) - 1


@pytest.mark.native
def test_tshark_decodes_rcp_headers(tmp_path):
    """An RCP run's capture: the 10-byte shim (44, 8, rate, rtt) leads every datagram; the
    dissector's rate and RTT equal the raw big-endian f32 and u32 right after the UDP header, and
    the router r1->r2 has lowered the rate from "no request" (+infinity) on the data it sent."""
    if shutil.which("tshark") is None:
        pytest.skip("tshark is not installed")
    out = tmp_path / "run"
    assert main(["run", str(DATA / "rcp-tiny.toml"), "--out", str(out), "--pcap", "r1->r2"]) == 0
    fields = ["xcclab.kind", "xcclab.cc.proto", "xcclab.rcp.rate", "xcclab.rcp.rtt_us"]
    cmd = ["tshark", "-n", "-X", f"lua_script:{DISSECTOR}", "-r", str(out / "capture.pcap")]
    cmd += ["-T", "fields", "-E", "separator=,"]
    for name in fields:
        cmd += ["-e", name]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    rows = [dict(zip(fields, line.split(","))) for line in proc.stdout.splitlines()]
    records = read_pcap(out / "capture.pcap")
    assert len(rows) == len(records) > 100
    data = 0
    for row, (_, raw, _) in zip(rows, records):
        assert raw[28:30] == b"\x2c\x08"  # proto 44, 8 bytes of body
        rate, rtt = struct.unpack(">fI", raw[30:38])
        assert row["xcclab.cc.proto"] == "44" and row["xcclab.rcp.rtt_us"] == str(rtt)
        # tshark prints six significant figures
        assert float(row["xcclab.rcp.rate"]) == pytest.approx(rate, rel=1e-5)
        if row["xcclab.kind"] == "0":
            data += 1
            assert 0 < rate <= 20e6 / 8  # stamped by r1->r2: at most its capacity
    assert data > 0


def test_dissector_table_is_generated_from_the_registry():
    """tools/wireshark/xcclab.lua's congestion-header table is what `python -m xcclab.generated`
    writes from the Rust registry (tests/python/test_docs.py checks it is not stale)."""
    text = DISSECTOR.read_text()
    for proto, name, length, *_ in _native.congestion_headers():
        assert f'[{proto}] = {{ name = "{name}", len = {length},' in text


def _datagram(shim: bytes) -> bytes:
    """IPv4 | UDP to port 9870 | shim | a 32-byte data segment (seq 7, 100 payload bytes)."""
    segment = struct.pack(">BBBBIIIQQ", 0, 0, 0, 0, 7, 0, 100, 0, 0)
    udp_len = 8 + len(shim) + len(segment)
    udp = struct.pack(">HHHH", 9870, 9870, udp_len, 0)
    ip = struct.pack(
        ">BBHHHBBH4s4s",
        0x45,
        0,
        20 + udp_len,
        0,
        0,
        64,
        17,
        0,
        bytes([10, 0, 0, 1]),
        bytes([10, 0, 0, 2]),
    )
    return ip + udp + shim + segment


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed")
def test_tshark_decodes_every_registered_header(tmp_path):
    """One datagram per registered congestion header, its body bytes 1, 2, 3, ...: tshark with the
    dissector shows every field of every header at its offset with its big-endian value (floats to
    tshark's six significant figures), and flags nothing as malformed."""
    headers = _native.congestion_headers()
    records = []
    for i, (proto, _, length, *_) in enumerate(headers):
        body = bytes(range(1, length + 1))
        records.append((i * 1000, _datagram(bytes([proto, length]) + body), 0))
    records = [(t, d, len(d)) for t, d, _ in records]
    cap = tmp_path / "headers.pcap"
    cap.write_bytes(pcap_bytes(records))
    names = []
    for _, name, _, fields, _ in headers:
        p = name.replace("-", "_")
        for fname, *_ in fields:
            names.append(f"xcclab.{p}.{fname}")
    cmd = [
        "tshark",
        "-n",
        "-X",
        f"lua_script:{DISSECTOR}",
        "-r",
        str(cap),
        "-T",
        "fields",
        "-E",
        "separator=;",
    ]
    cmd += ["-e", "xcclab.cc.proto", "-e", "_ws.expert.message"]
    for n in names:
        cmd += ["-e", n]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    rows = [line.split(";") for line in proc.stdout.splitlines()]
    assert len(rows) == len(headers)
    for row, (proto, name, length, fields, _) in zip(rows, headers):
        got = dict(zip(["proto", "expert", *names], row))
        assert got["proto"] == str(proto) and got["expert"] == "", (name, got)
        body = bytes(range(1, length + 1))
        p = name.replace("-", "_")
        for fname, _, offset, kind, width, *_ in fields:
            raw = body[offset : offset + width]
            value = got[f"xcclab.{p}.{fname}"]
            if kind == "f32":
                assert float(value) == pytest.approx(struct.unpack(">f", raw)[0], rel=1e-5), (
                    name,
                    fname,
                )
            elif kind == "flagged_fixed24":
                assert int(value, 16) == int.from_bytes(raw, "big"), (name, fname)
            else:
                assert int(value) == int.from_bytes(raw, "big"), (name, fname)
