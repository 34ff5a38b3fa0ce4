"""`xcc emu` and `xcc compare`: real packets through namespaces and the TUN router.

The emulated runs need root, /dev/net/tun and the `xcc-emu` binary (`make build`); they are
skipped with the reason otherwise. The comparison logic is tested on simulated runs alone.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from xcclab.cli import main

SCENARIO = """
name = "emu-maxnet-short"
duration = "4s"
[[host]]
name = "a"
[[host]]
name = "b"
[[link]]
between = ["a", "b"]
rate = "20Mbps"
delay = "20ms"
buffer = "unlimited"
queue = { kind = "maxnet", mu = 0.9 }
[[flow]]
name = "f"
src = "a"
dst = "b"
cc = "maxnet"
transport = { mss = "1432B", header = "68B" }
[metrics]
interval = "500ms"
"""


def _emu_unavailable() -> str | None:
    from xcclab import emu

    try:
        emu.find_binary()
    except RuntimeError as exc:
        return str(exc)
    return emu.check()


def _xccemu_namespaces() -> set[str]:
    """Namespaces left behind by runs that have ended (those of live runs, such as another
    user's on a shared machine, are not leftovers)."""
    import re

    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    names = {line.split()[0] for line in out.splitlines() if line.startswith("xccemu")}
    owner = re.compile(r"xccemu(\d+)x")
    return {n for n in names if not Path("/proc", owner.match(n)[1]).exists()}


@pytest.fixture
def scenario_path(tmp_path):
    p = tmp_path / "emu.toml"
    p.write_text(SCENARIO, encoding="utf-8")
    return p


@pytest.mark.native
def test_compare_reports_zero_difference_between_identical_runs(scenario_path):
    from xcclab.compare import differences, render
    from xcclab.results import run

    a = run(scenario_path)
    d = differences(a, a)
    assert d["flows"][0]["goodput_diff"] == 0.0
    assert d["links"][0]["utilisation_diff"] == 0.0
    text = render(d)
    assert "| f |" in text and "| a->b |" in text


def test_emu_without_scenario_is_bad_input(capsys):
    assert main(["emu"]) == 2
    assert "SCENARIO" in capsys.readouterr().err


def _steady_rates(result) -> list[float]:
    """The flow's delivery rate (bit/s) in each metrics interval that ends after 1 s."""
    fs = result.flow_series.sort("time_s")
    t, b = fs["time_s"].to_list(), fs["delivered_bytes"].to_list()
    return [8 * (b[i] - b[i - 1]) / (t[i] - t[i - 1]) for i in range(1, len(t)) if t[i] > 1.1]


@pytest.mark.native
def test_emulated_run_matches_the_simulated_one(scenario_path, tmp_path):
    """The run directory has the simulator's tables and ``mode: emu``; the MaxNet flow's
    steady rate is within 3 % of the simulated one (both at mu C = 18 Mbit/s of wire bits).

    The steady rate is the median over the 500 ms intervals after the first second, so that one
    interval in which this shared machine stalled a host does not decide the test. The path's
    RTT is 40 ms: window MaxNet sends tau D(q) per RTT with tau the minimum RTT, so every
    millisecond the machine adds to the RTT costs rate until the price falls, and at its floor
    (D = C) more than (1/mu - 1) tau of delay leaves the link below mu C; a 10 ms path has only
    1.1 ms of margin. The failure message prints the intervals and the emulator's timing
    figures (lateness, late wake-ups, real-time priority)."""
    why = _emu_unavailable()
    if why:
        pytest.skip(f"cannot emulate here: {why}")
    from statistics import median

    from xcclab.emu import emulate
    from xcclab.results import RunResult, run

    before = _xccemu_namespaces()
    out = tmp_path / "emu-run"
    emu = emulate(scenario_path, out=out)
    assert _xccemu_namespaces() <= before, "the run left namespaces behind"
    back = RunResult.load(out)
    assert back.run_info["mode"] == "emu"
    assert back.flows.height == 1 and back.links.height == 2
    assert back.link_series.height > 0 and back.flow_series.height > 0
    stats = back.run_info["emu"]
    assert {"lateness_max_us", "host_wake_late_max_us", "router_realtime"} <= stats.keys()
    assert stats["keep_awake"] in ("cpu_dma_latency", "spinners")
    sim = run(scenario_path)
    r_emu, r_sim = _steady_rates(emu), _steady_rates(sim)
    assert len(r_emu) == len(r_sim) == 6
    why = f"emu {r_emu} sim {r_sim} (bit/s per 500 ms), emu stats {stats}"
    assert abs(median(r_emu) / median(r_sim) - 1) < 0.03, why


def test_reproduce_emu_needs_a_real_packet_version(tmp_path, capsys):
    assert main(["reproduce", "markmax-s1-dt", "--emu", "--out", str(tmp_path / "x")]) == 2
    assert "no real-packet version" in capsys.readouterr().err


@pytest.mark.native
def test_rtt_fairness_emu_sends_1500_byte_data_packets():
    """xcc-rtt-fairness --emu runs every protocol with the MSS that fills a 1500-byte packet
    (the namespaces' MTU) with its own shim: the simulator's capture of the same scenario (the
    emulator's encoding) has 1500-byte data packets, and the report's payload share agrees."""
    import xcclab
    from xcclab.reproduce.xcc import xcc_rtt_fairness_emu as rf

    protos = rf.protocols()
    assert [p.name for p in protos] == ["xcp", "rcp", "maxnet", "piqi-rcp", "jetmax"]
    for p in protos:
        res = xcclab.run(rf.scenario(p, 0.01), pcap="r1->r2")
        data = [orig for _, raw, orig in res.pcap if raw[30 + raw[29]] == 0]  # kind 0 after shim
        assert data and max(data) == 1500 == p.data_wire_bytes, (p.name, max(data))
        assert p.payload_share == p.mss / 1500
    with pytest.raises(ValueError, match="unknown protocol"):
        rf.protocols(["tcp"])


@pytest.mark.slow
def test_reproduce_rtt_fairness_emu_quick_rcp(tmp_path):
    """The real-packet report of xcc-rtt-fairness (quick, RCP only, 1 Gbit/s): written beside
    where the simulated one goes, with both runs and RCP's claims scored on each; on real
    packets RCP is RTT-fair, and its rates are the simulator's within 5 % when the run stayed
    within xcc emu's fidelity limits (delay error p99, host wake-ups), else the report says it
    did not (a stalled router costs RCP rate: docs/emu.md)."""
    why = _emu_unavailable()
    if why:
        pytest.skip(f"cannot emulate here: {why}")
    import json

    from xcclab.emu import HOST_STALL_LIMIT_US, LATENESS_P99_LIMIT_US
    from xcclab.reproduce.xcc.xcc_rtt_fairness_emu import run_rtt_fairness_emu

    report = run_rtt_fairness_emu(tmp_path, quick=True, only=["rcp"])
    assert report == tmp_path / "emu" / "report.md"
    text = report.read_text()
    assert "| RCP / sim |" in text and "| RCP / emu |" in text
    assert "Left out of this run" in text and "XCP" in text
    metrics = json.loads((tmp_path / "emu" / "metrics.json").read_text())
    assert metrics["mode"] == "emu" and metrics["rate"] == "1Gbps"
    rows = {r["id"]: r for r in metrics["claims_sim_real"]}
    assert set(rows) == {
        "RCP time to saturate at start",
        "RCP time to saturate after the join",
        "RCP RTT fairness",
    }
    assert "| RCP RTT fairness |" in text
    m = metrics["measured"]
    sim, emu = m["rcp/sim"], m["rcp/emu"]
    assert abs(emu["ratio"] - 1) < 0.05, emu["ratio"]
    r = emu["router"]
    clean = (
        r["lateness_p99_us"] <= LATENESS_P99_LIMIT_US
        and r["host_wake_late_max_us"] <= HOST_STALL_LIMIT_US
    )
    if clean:
        for key in ("rate30_bps", "rate200_bps"):
            assert abs(emu[key] / sim[key] - 1) < 0.05, (key, emu[key], sim[key], r)
    else:
        assert "Beyond them: RCP (" in text
    assert (tmp_path / "emu" / "runs" / "rcp-emu-1" / "run.json").is_file()
    assert metrics["runs_per_cell"] == 2 and len(metrics["real_runs"]["rcp"]) == 2


def test_bench_emu_measures_the_router(capsys):
    """`xcc bench --emu`: one short run per load at 100 Mbit/s; the router forwards at the
    configured rate (loose bound: rate error under 5 %, kept far from the 0.5 % target so a
    loaded CI machine does not fail it), the TCP load's goodput is measured, the targets are
    checked on TCP and the report names them; nothing is left behind."""
    import json

    why = _emu_unavailable()
    if why:
        pytest.skip(why)
    args = ["bench", "--emu", "--rates", "100", "--runs", "1", "--seconds", "1.5"]
    assert main([*args, "--modes", "tcp,udp", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    tcp, udp = doc["runs"]
    assert (tcp["mode"], udp["mode"]) == ("tcp", "udp")
    for run in (tcp, udp):
        assert run["rate_mbps"] == 100 and run["forwarded_packets"] > 0
        assert abs(run["rate_error"]) < 0.05, run
        assert run["load_average_before"] and run["cpu_busy"], run
    # Goodput counts what the receivers read in the window, in bursts of up to 256 KiB: over
    # a second it can exceed the link's rate by a little.
    assert 0.5 * 100 < tcp["goodput_mbps"] < 1.05 * 100, tcp
    med_tcp, med_udp = doc["medians"]
    assert med_tcp["targets_checked"] and not med_udp["targets_checked"]
    assert med_tcp["meets_rate_target"] in (True, False) and med_udp["meets_rate_target"] is None
    assert main([*args, "--modes", "tcp"]) == 0
    assert "p99 delay error" in capsys.readouterr().out
    assert not _xccemu_namespaces()
    assert main(["bench", "--emu", "--rates", "fast"]) == 2
    assert main(["bench", "--emu", "--modes", "quic"]) == 2


def test_bench_emu_measures_the_transports_pacing(capsys):
    """`xcc bench --emu --modes xcc`: two RCP flows over xcclab's transport at 100 Mbit/s,
    the second joining at the link's rate; every flow is paced within 2 % of the router's
    advertised rate (loose, for a loaded CI machine; the target, 0.5 %, is checked and
    reported) and the simulator on the same scenario is within 5 %."""
    import json

    why = _emu_unavailable()
    if why:
        pytest.skip(why)
    args = ["bench", "--emu", "--rates", "100", "--runs", "1", "--seconds", "2", "--modes", "xcc"]
    assert main([*args, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (run,) = doc["runs"]
    assert run["mode"] == "xcc" and "failed" not in run, run
    assert len(run["pacing_error"]) == 2 and all(abs(e) < 0.02 for e in run["pacing_error"]), run
    assert abs(run["sim_error"]) < 0.05, run
    assert run["transport_data_batched"] > 0 and run["transport_acks_batched"] > 0, run
    (med,) = doc["medians"]
    assert med["targets_checked"] and med["meets_rate_target"] in (True, False)
    assert not _xccemu_namespaces()


def test_bench_summary_judges_the_transport_on_its_pacing():
    """The xcc load is judged on its worst flow's pacing error, TCP on the link's rate error; a
    failed run counts its kernel drops and fails the drop target."""
    from xcclab.bench_emu import format_table, summarise
    from xcclab.bench_transport import pacing_errors

    assert pacing_errors([95e6, 97e6], 100e6, 0.96) == pytest.approx([95 / 96 - 1, 97 / 96 - 1])
    delays = {"p50": 10, "p90": None, "p99": 80, "p999": None}
    base = {"kernel_tx_dropped": 0, "kernel_rx_dropped": 0, "delay_error_us": delays}
    ok = {**base, "mode": "xcc", "rate_mbps": 1000, "achieved_mbps": 990.0, "rate_error": None}
    runs = [
        {**ok, "worst_pacing_error": -0.003, "sim_error": -0.01},
        {**ok, "worst_pacing_error": 0.009, "sim_error": -0.02},
        {**ok, "worst_pacing_error": -0.004, "sim_error": -0.01},
        {**base, "mode": "tcp", "rate_mbps": 1000, "achieved_mbps": 999.0, "rate_error": -0.001},
    ]
    tcp, xcc = summarise(runs)
    assert (tcp["mode"], xcc["mode"]) == ("tcp", "xcc")
    assert xcc["pacing_error"] == -0.003 and xcc["meets_rate_target"] is True
    assert tcp["meets_rate_target"] is True and tcp["pacing_error"] is None
    failed = {**base, "mode": "xcc", "rate_mbps": 1000, "failed": "dropped 12 packet(s)"}
    (x,) = summarise([{**failed, "kernel_tx_dropped": 12}])
    assert x["failed_runs"] == 1 and x["meets_drop_target"] is False
    assert x["meets_rate_target"] is False  # no measurement is no pass
    text = format_table([{**failed, "kernel_tx_dropped": 12}], [x])
    assert "failed: dropped 12" in text and "12 kernel drops" in text


def test_fidelity_warnings_name_what_made_a_run_less_faithful():
    """A quiet run gives no warning; refused real-time priority, a late router, a stalled host,
    idle CPUs, a stalled router and a router near the real-time limit each give one, naming
    the figure."""
    from xcclab.emu import fidelity_warnings

    quiet = {
        "router_realtime": True,
        "hosts_realtime": True,
        "lateness_p99_us": 40,
        "host_wake_late_max_us": 50,
        "keep_awake": "cpu_dma_latency",
        "lateness_max_us": 900,
        "router_cpu_share": 0.6,
    }
    assert fidelity_warnings(quiet) == []
    assert fidelity_warnings({**quiet, "hosts_realtime": None}) == []  # no UDP flows
    noisy = {
        "router_realtime": False,
        "hosts_realtime": False,
        "lateness_p99_us": 2246,
        "host_wake_late_max_us": 35_000,
        "keep_awake": "off",
        "lateness_max_us": 52_285,
        "router_cpu_share": 0.93,
    }
    w = fidelity_warnings(noisy)
    assert len(w) == 7, w
    assert "router ran without real-time priority" in w[0] and "CAP_SYS_NICE" in w[0]
    assert "2246 µs" in w[2] and "35.0 ms late" in w[3] and "XCC_EMU_KEEP_AWAKE=0" in w[4]
    assert "52.3 ms late" in w[5] and "93 %" in w[6] and "throttling" in w[5]
    # With real-time throttling lifted for the run, a busy router is no longer a warning and
    # a stall is not blamed on throttling.
    lifted = fidelity_warnings({**noisy, "rt_throttling_lifted": True})
    assert len(lifted) == 6 and not any("95 % limit" in x for x in lifted), lifted
    assert "52.3 ms late (a stall: no CPU)" in lifted[5]
    # A stall of xcclab's transport seen at its paced departures (issue 34: 50 ms ones).
    assert fidelity_warnings({**quiet, "transport_pacing_late_max_us": 9_000}) == []
    w = fidelity_warnings({**quiet, "transport_pacing_late_max_us": 51_344})
    assert len(w) == 1 and "paced departure 51.3 ms late" in w[0], w
    # Seed 004's sessions: a source that lost sending time, a driver without priority.
    sessions = {**quiet, "session_hosts_realtime": True, "session_pacing_lost_max_us": 9_000}
    assert fidelity_warnings(sessions) == []
    w = fidelity_warnings({**sessions, "session_pacing_lost_max_us": 390_110})
    assert len(w) == 1 and "lost 390.1 ms of sending" in w[0], w
    w = fidelity_warnings({**sessions, "session_hosts_realtime": False})
    assert len(w) == 1 and "session driver ran without real-time priority" in w[0], w


# Every link's utilisation, reverse links too, within 2 % (issue 19): the UDP transport's
# packets are billed at the simulator's sizes (docs/emu.md, "Sizes").
UTILISATION_AGREEMENT = 0.02


@pytest.mark.native
def test_compare_of_an_xcp_dumbbell_agrees_on_every_link(tmp_path):
    reason = _emu_unavailable()
    if reason:
        pytest.skip(reason)
    scenario = Path(__file__).resolve().parents[2] / "scenarios" / "xcp-dumbbell-2.toml"
    out = tmp_path / "cmp"
    assert main(["compare", str(scenario), "--out", str(out)]) == 0
    links = json.loads((out / "compare.json").read_text())["links"]
    assert len(links) == 10
    worst = max(links, key=lambda x: abs(x["utilisation_diff"]))
    assert abs(worst["utilisation_diff"]) < UTILISATION_AGREEMENT, links


@pytest.mark.native
def test_compare_refuses_an_mss_too_large_for_the_mtu_before_simulating(tmp_path, capsys):
    reason = _emu_unavailable()
    if reason:
        pytest.skip(reason)
    text = (Path(__file__).resolve().parents[2] / "scenarios" / "xcp-dumbbell-2.toml").read_text()
    bad = tmp_path / "bad.toml"
    # The default 1460 B fits the namespaces' 2000-byte TUN MTU (issue 34); 1960 B does not.
    bad.write_text(text.replace('mss = "1422B"', 'mss = "1960B"'))
    out = tmp_path / "cmp"
    assert main(["compare", str(bad), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert 'transport.mss = "1922B"' in err and "2038-byte" in err
    assert list(tmp_path.iterdir()) == [bad]  # nothing written, not even the simulated half


LINUX_TCP = """
name = "emu-linux-tcp-transport"
duration = "2s"
host = [{ name = "a" }, { name = "b" }, { name = "c" }, { name = "d" }]
[[link]]
between = ["a", "b"]
rate = "20Mbps"
delay = "5ms"
buffer = "200pkt"
[[link]]
between = ["c", "d"]
rate = "20Mbps"
delay = "5ms"
buffer = "200pkt"
[[flow]]
name = "small"
src = "a"
dst = "b"
cc = { kind = "newreno", initial_window = 2 }
transport = { mss = "500B", sack = false, ecn = true }
[[flow]]
name = "default"
src = "c"
dst = "d"
cc = "newreno"
[metrics]
interval = "500ms"
"""


@pytest.mark.native
def test_linux_tcp_sends_the_scenarios_mss_and_ethernet_sized_packets(tmp_path):
    """Linux TCP flows take the scenario's MSS (``TCP_MAXSEG``: 500 B is the simulator's
    540-byte packet, timestamps inside the MSS) and otherwise the route's 1500-byte MTU, though
    the TUN devices carry 2000 B (issue 34)."""
    why = _emu_unavailable()
    if why:
        pytest.skip(why)
    from xcclab.emu import emulate

    path = tmp_path / "linux.toml"
    path.write_text(LINUX_TCP, encoding="utf-8")
    res = emulate(path)
    links = {r["name"]: r for r in res.links.iter_rows(named=True)}
    small, default = links["a->b"], links["c->d"]
    # Full segments are 540 B; the last segment of each super-packet the sender hands over
    # (TSO) is shorter, so the mean is a little less. Without the MSS it would be ~1500 B.
    size = small["bytes_out"] / small["packets_out"]
    assert 500 <= size <= 540, small
    size = default["bytes_out"] / default["packets_out"]
    assert 1400 <= size <= 1500, default
    # delayed_ack = false (the default): the receivers' routes say quickack, one ACK a segment.
    for data, acks in (("a->b", "b->a"), ("c->d", "d->c")):
        assert links[acks]["packets_out"] >= 0.9 * links[data]["packets_out"], links
    # (NewReno without SACK after slow start's burst of losses recovers one loss per round
    # trip, so the small flow's utilisation over 2 s varies from run to run.)
    assert small["packets_out"] > 1000 and default["utilisation"] > 0.8, links


@pytest.mark.slow
def test_reproduce_markmax_s1_emu_quick(tmp_path):
    """MarkMax on real packets (issue 34): DT, MM-B and MM-T with Linux NewReno + ECN, each
    cell 5 times real and 5 times simulated, judged on intervals; about 3 minutes."""
    why = _emu_unavailable()
    if why:
        pytest.skip(why)
    out = tmp_path / "mm"
    assert main(["reproduce", "markmax-s1", "--emu", "--quick", "--out", str(out)]) == 0
    metrics = json.loads((out / "emu" / "metrics.json").read_text())
    assert metrics["runs_per_cell"] == 5
    for kind in ("dt", "mmb", "mmt"):
        real = metrics["runs"]["real"][f"{kind}-r7"]
        assert len(real) == 5, kind
        for r in real:
            assert r["rho"] > 0.05, r  # the link carried the flows
        if kind != "dt":
            # MarkMax marks (the flows are ECN-capable) and its buffer is unlimited: no drop,
            # and the link stays nearly full (DT's 8 s runs spend much of it in recovery).
            assert all(r["marks"] > 0 and r["drops"] == 0 and r["rho"] > 0.9 for r in real), real
        j = metrics["measured"]["real"][f"{kind}-r7"]["J"]
        assert j["n"] == 5 and j["ci95"][0] <= j["mean"] <= j["ci95"][1]
    report = (out / "emu" / "report.md").read_text()
    assert "judged on the intervals" in report and "MM-B δ2/δ1 = 7" in report
