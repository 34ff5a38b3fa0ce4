"""The scenario builder and the committed scenario files (no native module needed)."""

from __future__ import annotations

import json

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

import pytest

import xcclab
from conftest import ROOT
from xcclab import Scenario
from xcclab.errors import ScenarioError
from xcclab.reproduce.markmax import markmax_s1_dt
from xcclab.scenario import fmt_rate, fmt_size, fmt_time


def build() -> Scenario:
    sc = Scenario("two", duration=fmt_time(10), description="d", seed=7)
    sc.add_host("s{i}", count=2).add_host("d{i}", count=2).add_router("r1").add_router("r2")
    sc.add_link("s{i}", "r1", rate=fmt_rate(1e9), delay=fmt_time(0.001), count=2)
    sc.add_link(
        "r1",
        "r2",
        rate="100Mbps",
        delay="10ms",
        buffer=100,
        queue={"kind": "red", "min_th": "30pkt", "max_th": "90pkt", "max_p": 0.1},
        reverse={"rate": fmt_rate(10e6), "buffer": "unlimited"},
    )
    sc.add_link("r2", "d{i}", rate="1Gbps", delay="1ms", count=2, loss=0.01)
    sc.add_flow(
        "f{i}",
        src="s{i}",
        dst="d{i}",
        count=2,
        stop=fmt_time(9.5),
        size=fmt_size(10_000_000),
        cc={"kind": "newreno", "initial_window": 2},
        transport={
            "mss": fmt_size(1460),
            "ecn": True,
            "delayed_ack": False,
            "min_rto": fmt_time(0.2),
        },
    )
    sc.add_flow(
        "u",
        src="s1",
        dst="d1",
        kind="cbr",
        rate=fmt_rate(4e8),
        packet_size=fmt_size(1500),
        start="1s",
    )
    sc.add_arrivals(
        "mice",
        src="s1",
        dst="d1",
        mean_interarrival=fmt_time(0.2),
        size={"dist": "pareto", "mean": "150KB", "shape": 1.4},
        stop="9s",
    )
    sc.add_transactions(
        "http",
        client="d2",
        server="s2",
        count=20,
        request="62B",
        response="4KB",
        start="2s",
        stop="4s",
    )
    sc.metrics(interval="100ms")
    return sc


def test_units_are_written_exactly():
    assert fmt_time(0.0025) == "2500us"
    assert fmt_time(0.0205) == "20500us"
    assert fmt_time(12) == "12s"
    assert fmt_time(0) == "0s"
    assert fmt_time(1e-9) == "1ns"
    assert fmt_time("3ms") == "3ms"
    assert fmt_rate(70e6) == "70Mbps"
    assert fmt_rate(1_500_000) == "1500kbps"
    assert fmt_rate(10**10) == "10Gbps"
    assert fmt_size(540) == "540B"
    assert fmt_size(1_000_000) == "1MB"
    with pytest.raises(TypeError):
        fmt_time(True)
    with pytest.raises(ValueError):
        fmt_time(float("nan"))


def test_builder_produces_the_toml_structure():
    d = build().to_dict()
    assert d["name"] == "two" and d["duration"] == "10s" and d["seed"] == 7
    assert [h["name"] for h in d["host"]] == ["s{i}", "d{i}"]
    assert d["link"][0] == {
        "between": ["s{i}", "r1"],
        "count": 2,
        "rate": "1Gbps",
        "delay": "1ms",
    }
    assert d["link"][1]["buffer"] == "100pkt"
    assert d["link"][1]["reverse"] == {"rate": "10Mbps", "buffer": "unlimited"}
    flow = d["flow"][0]
    assert flow["stop"] == "9500ms" and flow["size"] == "10MB"
    assert flow["transport"] == {
        "mss": "1460B",
        "ecn": True,
        "delayed_ack": False,
        "min_rto": "200ms",
    }
    assert d["flow"][1]["kind"] == "cbr" and d["flow"][1]["rate"] == "400Mbps"
    assert d["arrivals"][0]["mean_interarrival"] == "200ms"
    assert d["transactions"][0]["request"] == "62B"
    assert d["metrics"] == {"interval": "100ms"}
    assert json.loads(build().to_json()) == d


@pytest.mark.parametrize(
    "call",
    [
        lambda sc: sc.add_link("a", "b", rate="1Gbps", delay=10),
        lambda sc: sc.add_link("a", "b", rate=1e9, delay="1ms"),
        lambda sc: sc.add_link("a", "b", rate="1Gbps", delay="1ms", jitter=0.001),
        lambda sc: sc.add_link("a", "b", rate="1Gbps", delay="1ms", reverse={"delay": 5}),
        lambda sc: sc.add_flow("f", src="a", dst="b", start=1),
        lambda sc: sc.add_flow("f", src="a", dst="b", size=1500),
        lambda sc: sc.add_flow("f", src="a", dst="b", kind="cbr", rate=1e6),
        lambda sc: sc.add_flow("f", src="a", dst="b", transport={"min_rto": 0.2}),
        lambda sc: sc.add_flow("f", src="a", dst="b", transport={"mss": 1460}),
        lambda sc: sc.metrics(interval=0.1),
        lambda sc: Scenario("x", duration=10),
    ],
)
def test_bare_numbers_are_refused_as_in_toml(call):
    """``delay=10`` could be 10 ms or 10 s: the builder refuses it (a TOML file refuses "10"),
    naming the field and both ways to write it."""
    with pytest.raises(ScenarioError, match="bare number has no unit") as exc:
        call(Scenario("x", duration="1s"))
    assert "fmt_" in str(exc.value)


def test_zero_and_explicit_conversions_need_no_unit():
    sc = Scenario("x", duration=fmt_time(2))
    sc.add_link("a", "b", rate=fmt_rate(1e9), delay=0, buffer=100)
    sc.add_flow("f", src="a", dst="b", start=0)
    d = sc.to_dict()
    assert d["duration"] == "2s"
    assert d["link"][0]["delay"] == "0s" and d["link"][0]["rate"] == "1Gbps"
    assert d["flow"][0]["start"] == "0s"


def test_to_dict_is_a_copy():
    sc = build()
    sc.to_dict()["host"].clear()
    assert len(sc.to_dict()["host"]) == 2


def test_toml_round_trip(tmp_path):
    sc = build()
    text = sc.to_toml(header="a comment\nover two lines")
    assert text.startswith("# a comment\n# over two lines\n")
    assert tomllib.loads(text) == sc.to_dict()
    path = sc.save(tmp_path / "x.toml")
    assert Scenario.load(path) == sc
    path = sc.save(tmp_path / "x.json")
    assert Scenario.load(path) == sc


def test_load_errors_name_the_file(tmp_path):
    with pytest.raises(ScenarioError, match="missing.toml: no such scenario file"):
        Scenario.load(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("name = \n")
    with pytest.raises(ScenarioError, match="bad.toml: not a valid scenario file"):
        Scenario.load(bad)


@pytest.mark.parametrize("ratio", markmax_s1_dt.RATIOS)
def test_committed_markmax_scenarios_match_the_generator(ratio):
    path = ROOT / "scenarios" / f"markmax-s1-dt-r{ratio}.toml"
    expected = markmax_s1_dt.scenario(ratio).to_toml(header=markmax_s1_dt.scenario_header(ratio))
    assert path.read_text() == expected, "regenerate with --write-scenarios scenarios/"


def test_markmax_delays_follow_delta_equation():
    # delta_i = 4 a_i + 2 a_btl with a_btl = 1 ms and delta_1 = 12 ms
    d = markmax_s1_dt.scenario(20).to_dict()
    delays = {tuple(link["between"]): link["delay"] for link in d["link"]}
    assert delays[("s1", "S")] == "2500us" and delays[("D", "d1")] == "2500us"
    assert delays[("s2", "S")] == "59500us"  # (240 ms - 2 ms) / 4
    assert delays[("S", "D")] == "1ms"
    btl = next(link for link in d["link"] if link["between"] == ["S", "D"])
    assert btl["rate"] == "70Mbps" and btl["buffer"] == "240pkt"
    assert d["flow"][0]["transport"]["mss"] == "500B"
    assert d["flow"][0]["transport"]["header"] == "40B"


@pytest.mark.parametrize(
    ("path", "n", "duration", "interval"),
    [
        ("benchmarks/dumbbell-10.toml", 10, "60s", "0s"),
        ("benchmarks/dumbbell-100.toml", 100, "60s", "0s"),
        ("scenarios/dumbbell-10.toml", 10, "20s", "100ms"),
    ],
)
def test_dumbbell_files(path, n, duration, interval):
    d = tomllib.loads((ROOT / path).read_text())
    assert d["duration"] == duration and d["metrics"]["interval"] == interval
    assert d["flow"][0]["count"] == n and d["flow"][0]["cc"] == "newreno"
    assert d["flow"][0]["transport"] == {
        "mss": "1460B",
        "header": "40B",
        "ecn": False,
        "sack": False,
        "delayed_ack": False,
        "connection": "open",
    }
    btl = next(link for link in d["link"] if link["between"] == ["r1", "r2"])
    assert (btl["rate"], btl["delay"], btl["buffer"]) == ("1Gbps", "10ms", "1667pkt")
    access = [link for link in d["link"] if link is not btl]
    assert all(a["rate"] == "10Gbps" and a["delay"] == "0s" and a["count"] == n for a in access)


def test_already_open_keeps_the_transport_and_opens_the_connection():
    from xcclab.scenario import already_open

    t = {"mss": "500B"}
    assert already_open(t) == {"mss": "500B", "connection": "open"}
    assert t == {"mss": "500B"}, "the caller's table is not changed"
    assert already_open() == {"connection": "open"}


def test_connection_and_linux_delayed_acks_resolve_and_bad_values_name_the_field():
    sc = Scenario("c", duration="1s")
    sc.add_host("a").add_host("b")
    sc.add_link("a", "b", rate="10Mbps", delay="5ms", buffer=100)
    sc.add_flow("f", "a", "b", transport={"delayed_ack": "linux"})
    sc.add_flow("g", "a", "b", transport={"connection": "open"})
    sc.add_transactions("t", "a", "b", count=2, request="62B", response="4KB", persistent=True)
    flows = xcclab.validate(sc)["flows"]
    f, g = (fl["kind"]["transport"] for fl in flows)
    assert f["handshake"] is True and f["quick_acks"] == 16 and f["delayed_ack_ns"] == 40_000_000
    assert "handshake" not in g and "quick_acks" not in g
    data = sc.to_dict()
    data["flow"][1]["transport"]["connection"] = "closed"
    with pytest.raises(ValueError, match=r"flow\[1\]\.transport\.connection.*'closed'"):
        xcclab.validate(Scenario.from_dict(data))


def test_linux_rto_resolves_and_a_bad_value_names_the_field():
    sc = Scenario("r", duration="1s")
    sc.add_host("a").add_host("b")
    sc.add_link("a", "b", rate="10Mbps", delay="5ms", buffer=100)
    sc.add_flow("f", "a", "b", transport={"rto": "linux"})
    sc.add_flow("g", "a", "b", transport={"rto": "rfc6298"})
    sc.add_flow("h", "a", "b")
    f, g, h = (fl["kind"]["transport"] for fl in xcclab.validate(sc)["flows"])
    # Left out of the resolved scenario when false: files written before the option read the same.
    assert f["linux_rto"] is True and "linux_rto" not in g and "linux_rto" not in h
    data = sc.to_dict()
    data["flow"][0]["transport"]["rto"] = "bsd"
    with pytest.raises(ValueError, match=r"flow\[0\]\.transport\.rto.*'bsd'.*rfc6298.*linux"):
        xcclab.validate(Scenario.from_dict(data))


def test_rack_loss_detection_resolves_and_bad_values_name_the_field():
    sc = Scenario("r", duration="1s")
    sc.add_host("a").add_host("b")
    sc.add_link("a", "b", rate="10Mbps", delay="5ms", buffer=100)
    sc.add_flow("f", "a", "b", transport={"loss_detection": "rack"})
    sc.add_flow("g", "a", "b", transport={"loss_detection": "rfc6675"})
    sc.add_flow("h", "a", "b")
    f, g, h = (fl["kind"]["transport"] for fl in xcclab.validate(sc)["flows"])
    # Left out of the resolved scenario when false: files written before the option read the same.
    assert f["rack"] is True and "rack" not in g and "rack" not in h
    data = sc.to_dict()
    data["flow"][0]["transport"]["loss_detection"] = "fack"
    with pytest.raises(
        ValueError, match=r"flow\[0\]\.transport\.loss_detection.*'fack'.*rfc6675.*rack"
    ):
        xcclab.validate(Scenario.from_dict(data))
    data["flow"][0]["transport"] = {"loss_detection": "rack", "sack": False}
    with pytest.raises(ValueError, match=r"flow\[0\]\.transport\.loss_detection.*needs SACK"):
        xcclab.validate(Scenario.from_dict(data))
