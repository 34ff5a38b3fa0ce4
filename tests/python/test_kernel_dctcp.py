"""Kernel DCTCP (issue 29, item 6): Linux TCP with the BPF struct_ops ``xcc_dctcp``
(python/xcclab/kernel/src/dctcp.bpf.c) through the emu router's DCTCP marker, on real packets.

One flow, 100 Mbit/s, RTT 1 ms (C·RTT = 8.3 packets), K = 20 packets, a 400-packet buffer, 3 s
(``xcclab.emu.emulate(..., stack="kernel")``, as ``xcc compare --stack kernel``). DCTCP holds
the queue near K: Alizadeh et al. section 3.3 has it between K + 1 - A and K + 1 with
A = ½·sqrt(2(C·RTT + K)) = 3.8 packets for one flow. Linux's TSO bursts and delayed ACKs move
that band; the assertion is that the time-average queue is within K ± 8 packets and the queue
sampled every 10 ms after the first 0.5 s has its median within the same band and its 95th
percentile below 2K (measured in docs/kernel.md "DCTCP"). The router marked the packets, the
receiver saw them CE and echoed them (the program's counters), no socket ran without ECN, and
nothing was dropped. With the marker's K above the buffer (no mark ever) the same kernel
DCTCP is Reno and fills the buffer: the time-average queue is more than five times as long,
so the test fails if marking or the echo stops working. Afterwards no ``xcc_dctcp`` stays
registered. Needs root, BTF, clang, bpftool and libbpf (skipped with the reason otherwise).
"""

from __future__ import annotations

import os
import statistics

import pytest

from xcclab.kernel import build, dctcp, loader

K = 20
BAND = 8


def _unavailable() -> str | None:
    if os.geteuid() != 0:
        return "needs root (network namespaces, TUN devices, BPF)"
    reason = build.missing_prerequisites()
    if reason:
        return reason
    try:
        build.build()
    except build.KernelUnavailable as exc:
        return str(exc)
    from xcclab import emu

    return emu.check()


REASON = _unavailable()
pytestmark = [
    pytest.mark.native,
    pytest.mark.skipif(REASON is not None, reason=f"kernel DCTCP: {REASON}"),
]


def scenario(k_packets: int) -> dict:
    access = {"rate": "1Gbps", "delay": "250us", "buffer": "unlimited"}
    return {
        "name": f"kernel-dctcp-k{k_packets}",
        "duration": "3s",
        "seed": 1,
        "host": [{"name": "s"}, {"name": "d"}],
        "router": [{"name": "r"}],
        "link": [
            {"between": ["s", "r"], **access},
            {
                "between": ["r", "d"],
                "rate": "100Mbps",
                "delay": "250us",
                "buffer": "400pkt",
                "queue": {"kind": "dctcp", "k": f"{k_packets}pkt"},
            },
        ],
        "flow": [
            {
                "name": "f",
                "src": "s",
                "dst": "d",
                "cc": "dctcp",
                "transport": {"mss": "1448B", "header": "52B", "delayed_ack": "linux"},
            }
        ],
        "metrics": {"interval": "10ms"},
    }


def emulate(k_packets: int):
    from xcclab.emu import emulate

    result = emulate(scenario(k_packets), stack="kernel")
    links = result.links
    row = links.row(links["name"].to_list().index("r->d"), named=True)
    series = result.link_series
    queue = series.filter((series["link_id"] == row["link_id"]) & (series["time_s"] > 0.5))[
        "queue_packets"
    ].to_list()
    return result, row, queue


def assert_nothing_left() -> None:
    assert dctcp.wait_unregistered(15.0), "bpftool struct_ops list still shows xcc_dctcp"
    assert dctcp.NAME not in loader.available_congestion_controls()
    assert not (loader.bpffs() / "xcc-dctcp").exists(), "the counters' pin was left"


def test_kernel_dctcp_holds_the_queue_near_k_through_the_routers_marker():
    result, link, queue = emulate(K)
    stats = result.run_info["kernel_dctcp"]["whole_run"]
    flow = result.flows.row(0, named=True)
    # The flow ran on Linux TCP with xcc_dctcp, ECN negotiated, and filled the link.
    assert flow["cc"] == "dctcp"
    assert stats["sockets"] >= 2 and stats["sockets_without_ecn"] == 0, stats
    assert link["utilisation"] > 0.8, link
    # The router marked CE; the receiver saw each mark and the sender counted the echoes.
    assert link["marks"] > 100, link
    assert link["drops"] == 0 or stats["ssthresh_repairs"], link
    assert stats["ce_received"] > 100 and stats["delivered_ce"] > 100, stats
    assert stats["delivered_ce"] <= 1.1 * link["marks"], (stats, link["marks"])
    assert 0 < stats["mean_alpha"] < 1, stats
    assert stats["cuts"] > 10, stats
    # The queue: near K, in a run where the sender's ssthresh was never found corrupted. On
    # Linux 6.18 some runs have it (docs/kernel.md "DCTCP": cause not established); the
    # program repairs it, but the burst the kernel sent meanwhile fills the buffer.
    if stats["ssthresh_repairs"]:
        pytest.xfail(
            f"kernel anomaly: ssthresh corrupted {stats['ssthresh_repairs']} time(s) "
            f"(mean queue {link['mean_queue_packets']:.1f} packets)"
        )
    assert abs(link["mean_queue_packets"] - K) <= BAND, link["mean_queue_packets"]
    assert len(queue) > 100, len(queue)
    assert abs(statistics.median(queue) - K) <= BAND, statistics.median(queue)
    p95 = sorted(queue)[int(0.95 * len(queue))]
    assert p95 < 2 * K, p95
    assert_nothing_left()


def test_without_marks_kernel_dctcp_fills_the_buffer():
    """K above the 400-packet buffer: no mark, so DCTCP grows as Reno until the buffer drops."""
    result, link, _ = emulate(1000)
    stats = result.run_info["kernel_dctcp"]["whole_run"]
    assert link["marks"] == 0 and stats["ce_received"] == 0, (link, stats)
    assert link["mean_queue_packets"] > 5 * K, link["mean_queue_packets"]
    assert_nothing_left()
