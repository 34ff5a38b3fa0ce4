"""Kernel MaxNet (issue 9): the BPF congestion control and TCP option on real sockets.

Two namespaces joined by a TUN forwarder that delays each packet 10 ms each way (this kernel may
lack netem); the receiver's sock_ops program stands in for a router on the path and stamps a
fixed price (test mode). The sender's window must be the one the equations give for that price,
W = tau D(q) = tau x_max exp(-q / T) (bits), within 5 %, with tau the socket's own min RTT.
Root, BTF and clang/bpftool/libbpf are needed; the tests skip with the reason otherwise.
Every test checks that nothing stays loaded afterwards.
"""

from __future__ import annotations

import json
import math
import statistics
import subprocess
import threading
import time
from pathlib import Path

import pytest

from xcclab.kernel import build, loader
from xcclab.kernel.loader import MaxNetParams, MaxNetSession, price_code
from xcclab.kernel.testbed import DelayPath

ONE_WAY_S = 0.010
TOLERANCE = 0.05


def _unavailable() -> str | None:
    reason = build.missing_prerequisites()
    if reason:
        return reason
    try:
        build.build()
    except build.KernelUnavailable as exc:
        return str(exc)
    return None


REASON = _unavailable()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"kernel MaxNet: {REASON}")


def decoded(q_s: float) -> float:
    """The price the option actually carries (18 fraction bits)."""
    return price_code(q_s) / (1 << 18)


def predicted_cwnd(params: MaxNetParams, q_s: float, sample: dict) -> float:
    rate_bytes = params.demand_bps(decoded(q_s)) / 8
    return rate_bytes * sample["min_rtt_us"] / 1e6 / sample["snd_mss"]


def transfer(session: MaxNetSession, net: DelayPath, seconds: float, during=None) -> dict:
    port = "5201"
    server = net.spawn(
        net.ns_b, ["serve", "--port", port, "--seconds", str(seconds)], session.cgroup
    )
    client = net.spawn(
        net.ns_a,
        ["send", "--to", net.addr_b, "--port", port, "--seconds", str(seconds)]
        + ["--cc", "maxnet", "--interval", "0.005"],
        session.cgroup,
    )
    try:
        if during is not None:
            during()
        out, err = client.communicate(timeout=seconds + 30)
        sout, serr = server.communicate(timeout=30)
    finally:
        for p in (client, server):
            if p.poll() is None:
                p.kill()
                p.wait()
    assert client.returncode == 0, err
    assert server.returncode == 0, serr
    result = json.loads(out)
    result["received"] = json.loads(sout)["bytes"]
    return result


def assert_nothing_left(session_cgroup) -> None:
    assert "maxnet" not in loader.registered_struct_ops(), "bpftool struct_ops list shows maxnet"
    assert "maxnet" not in loader.available_congestion_controls()
    assert not session_cgroup.exists(), f"{session_cgroup} was not removed"
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert "xcck" not in netns, netns


def window_error(params: MaxNetParams, q_s: float, samples: list[dict]) -> float:
    errors = [s["cwnd"] / predicted_cwnd(params, q_s, s) - 1 for s in samples]
    return statistics.median(errors)


def test_fixed_price_gives_the_predicted_window_and_nothing_stays_loaded():
    q = 0.4 * math.log(1e15 / 50e6)  # D(q) = 50 Mbit/s: about 87 segments over 20 ms
    params = MaxNetParams(fixed_price_s=q, maxstart=False)
    with MaxNetSession(params) as session, DelayPath(ONE_WAY_S) as net:
        result = transfer(session, net, seconds=3.0)
        counters = session.stats()
        gauges = session.gauges()
    cgroup = session.cgroup
    # The sender received exactly the price the "router" wrote, averaged at the receiver.
    assert gauges["echo_price_code"] == price_code(q), (gauges, price_code(q))
    assert result["cc"] == "maxnet"
    assert result["received"] > 1_000_000, result["received"]
    assert counters["options_parsed"] > 100 and counters["echoed_prices"] > 100, counters
    assert counters["cc_price_law_updates"] > 100, counters
    late = [s for s in result["samples"] if s["t"] > 1.5]
    assert late, "no samples after 1.5 s"
    err = window_error(params, q, late)
    assert abs(err) < TOLERANCE, f"cwnd off the prediction by {err:+.1%}"
    assert_nothing_left(cgroup)


def test_window_follows_a_price_step():
    q1 = 0.4 * math.log(1e15 / 40e6)
    q2 = q1 + 0.4 * math.log(2)  # D halves: 40 -> 20 Mbit/s
    params = MaxNetParams(fixed_price_s=q1, maxstart=False)
    with MaxNetSession(params) as session, DelayPath(ONE_WAY_S) as net:
        timer = threading.Timer(2.0, lambda: session.set_fixed_price(q2))
        result = transfer(session, net, seconds=4.0, during=timer.start)
        timer.join()
    before = [s for s in result["samples"] if 1.0 < s["t"] < 1.9]
    after = [s for s in result["samples"] if s["t"] > 3.0]
    assert before and after
    assert abs(window_error(params, q1, before)) < TOLERANCE
    assert abs(window_error(params, q2, after)) < TOLERANCE
    ratio = statistics.median(s["cwnd"] for s in before) / statistics.median(
        s["cwnd"] for s in after
    )
    assert 1.8 < ratio < 2.2, ratio
    assert_nothing_left(session.cgroup)


def test_maxstart_starts_at_the_spare_capacity_then_reaches_the_price_rate():
    q = 0.4 * math.log(1e15 / 50e6)
    spare = 10e6
    params = MaxNetParams(fixed_price_s=q, maxstart=True, fixed_spare_bps=spare)
    with MaxNetSession(params) as session, DelayPath(ONE_WAY_S) as net:
        result = transfer(session, net, seconds=2.0)
        counters = session.stats()
    assert counters["echoed_spare"] >= 1 and counters["cc_maxstart_updates"] >= 1, counters
    samples = result["samples"]
    first = next(s for s in samples if s["cwnd"] > params.min_cwnd)
    start = spare / 8 * first["min_rtt_us"] / 1e6 / first["snd_mss"]
    assert abs(first["cwnd"] / start - 1) < 0.1, (first, start)
    late = [s for s in samples if s["t"] > 1.0]
    assert abs(window_error(params, q, late)) < TOLERANCE
    assert_nothing_left(session.cgroup)


# -- through the emu router: the price is the MaxNet link's, written into the TCP option --------
EMU_SCENARIO = """
name = "kernel-maxnet-one-link"
duration = "6s"
[metrics]
interval = "100ms"
[[host]]
name = "a"
[[host]]
name = "b"
[[link]]
between = ["a", "b"]
rate = "20Mbps"
delay = "10ms"
buffer = "unlimited"
queue = { kind = "maxnet", mu = 0.94 }
[[flow]]
name = "f"
src = "a"
dst = "b"
cc = "maxnet"
"""


def xcc_emu_binary() -> str:
    """The emu router's binary (debug profile: `cargo test --workspace` has built it already)."""
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run(
        ["cargo", "build", "-q", "-p", "xcc-emu", "--bin", "xcc-emu"],
        cwd=root,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        pytest.fail(f"building xcc-emu failed:\n{proc.stderr[-2000:]}")
    return str(root / "target" / "debug" / "xcc-emu")


def test_through_the_emu_router_the_window_follows_the_routers_price(tmp_path):
    """Linux TCP with `maxnet` through the emu router's MaxNet link (20 Mbit/s, 20 ms RTT,
    mu = 0.94): the link runs at mu C, and the sender's window is tau D(q) for the price q the
    router wrote (as echoed), within 5 %."""
    emu = xcc_emu_binary()
    scenario = tmp_path / "one-link.toml"
    scenario.write_text(EMU_SCENARIO)
    out = tmp_path / "emu.json"
    params = MaxNetParams()
    samples = []
    with MaxNetSession(params) as session:
        proc = subprocess.Popen(
            [emu, "run", str(scenario), "--stack", "kernel", "--json", str(out)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=loader.in_cgroup(session.cgroup),
        )
        start = time.monotonic()
        try:
            # The window and the echoed price, every 100 ms while the flow runs.
            while proc.poll() is None and time.monotonic() - start < 60:
                samples.append((time.monotonic() - start, session.gauges()))
                time.sleep(0.1)
            _, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert proc.returncode == 0, err[-3000:]
        counters = session.stats()
    doc = json.loads(out.read_text())
    flows, links, stats = doc["tables"]["flows"], doc["tables"]["links"], doc["stats"]
    assert flows["cc"] == ["maxnet"]
    assert stats["header_rewrites"] > 1000, stats
    assert counters["cc_price_law_updates"] > 1000 and counters["echoed_spare"] >= 1, counters
    # The link: mu C (the paper's equilibrium), no drops.
    assert abs(links["utilisation"][0] / 0.94 - 1) < 0.05, links["utilisation"]
    assert links["drops"][0] == 0
    # The window: tau D(q) with the price the router wrote (as echoed), over the last 4 s.
    errors = []
    for t, g in samples:
        if t < 2.0 or not g["echo_price_code"] or not g["tau_us"]:
            continue
        q = g["echo_price_code"] / (1 << 18)
        predicted = params.demand_bps(q) / 8 * g["tau_us"] / 1e6 / 1448
        errors.append(g["cwnd"] / predicted - 1)
    assert len(errors) >= 10, samples
    median = statistics.median(errors)
    assert abs(median) < TOLERANCE, f"cwnd off tau D(q) by {median:+.1%} (median of {len(errors)})"
    assert_nothing_left(session.cgroup)
