"""HPCC, PowerTCP and theta-PowerTCP on a 16-to-1 incast (issue #29's "Done when").

16 senders, each on its own 100 Gbit/s, 1 us link to one switch, whose 100 Gbit/s, 1 us port to
the receiver is the bottleneck; every port INT-capable (`int = true`), drop-tail buffers
unlimited (lossless: PFC had not landed when this was written). 1,000-byte payloads (the HPCC
authors' `PACKET_PAYLOAD_SIZE`), 1,124-byte packets with the 84-byte INT shim, one ACK per
packet, no handshake (RDMA has none). Base RTT from the path: 4 us of propagation plus two
1,124-byte serialisations (90 ns each). Every sender starts at line rate (W_init = B·T), so
the first RTTs build a queue of about 15 BDPs that the laws must drain.

Measured (seed 1, 1 ms simulated, the bottleneck sampled every 2 us; docs/algorithms/hpcc.md
and powertcp.md, "Measured"), from the time in the second column on:

| cc | from | wire utilisation | mean queue | largest queue |
|---|---|---|---|---|
| hpcc | 200 us | 0.942 | 1,189 B (1.1 packets) | 4,496 B (4 packets) |
| powertcp | 400 us | 0.952 | 1,776 B (1.6 packets) | 10,116 B (9 packets) |
| theta-powertcp | 200 us | 0.982 | 3,783 B (3.6 packets) | 8,320 B (8 packets) |

HPCC drains the incast's queue (883 KB at its peak) by 120 us and holds about one packet after;
PowerTCP drains it by 120 us too but then bursts every 14-16 us (up to 83 KB at 344 us) until
about 380 us (the cause is not established; docs/algorithms/powertcp.md).

Asserted, from those times on: HPCC's and PowerTCP's utilisation within 0.03 of eta = 0.95 (the
utilisation counts the INT bytes, as U does); theta-PowerTCP's at least 0.95 (it aims at an
RTT 5 % above the base, not at a utilisation); every mean queue at most 5 packets and every
sampled queue at most 16 packets ("a few packets"); no drop; each run's first 50 us held a
queue above 100 KB (the incast was real).
"""

from __future__ import annotations

import pytest

pytest.importorskip("xcclab._native")

N = 16
PACKET = 1124  # 1,000 B payload + 40 B headers + 84 B INT shim


def scenario(cc) -> dict:
    port = {"rate": "100Gbps", "delay": "1us", "buffer": "unlimited", "int": True}
    return {
        "name": "incast-16",
        "duration": "1ms",
        "seed": 1,
        "host": [{"name": "s{i}", "count": N}, {"name": "d"}],
        "router": [{"name": "sw"}],
        "link": [{"between": ["s{i}", "sw"], "count": N, **port}, {"between": ["sw", "d"], **port}],
        "flow": [
            {
                "name": "f{i}",
                "count": N,
                "kind": "bulk",
                "src": "s{i}",
                "dst": "d",
                "start": "0s",
                "cc": cc,
                "transport": {"connection": "open", "delayed_ack": False, "mss": "1000B"},
            }
        ],
        "metrics": {"interval": "2us"},
    }


def bottleneck_series(cc):
    import polars as pl

    import xcclab

    result = xcclab.run(scenario(cc), series=True)
    links = result.links
    link = links.row(links["name"].to_list().index("sw->d"), named=True)
    series = result.link_series.filter(pl.col("link_id") == link["link_id"])
    return link, series


# id, cc, settled after (s), utilisation band
CASES = [
    ("hpcc", "hpcc", 200e-6, (0.92, 0.98)),
    ("powertcp", "powertcp", 400e-6, (0.92, 0.98)),
    ("theta-powertcp", {"kind": "powertcp", "variant": "theta"}, 200e-6, (0.95, 1.0)),
]


@pytest.mark.native
@pytest.mark.parametrize(
    "cc, settled_s, utilisation", [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_incast_settles_near_eta_with_a_queue_of_a_few_packets(cc, settled_s, utilisation):
    import polars as pl

    link, series = bottleneck_series(cc)
    assert link["drops"] == 0
    early = series.filter(pl.col("time_s") <= 50e-6)["queue_bytes"].max()
    assert early > 100_000, early
    settled = series.filter(pl.col("time_s") > settled_s)
    assert len(settled) >= 290
    lo, hi = utilisation
    u = settled["utilisation"].mean()
    assert lo <= u <= hi, u
    mean_q, max_q = settled["queue_bytes"].mean(), settled["queue_bytes"].max()
    assert mean_q <= 5 * PACKET, mean_q
    assert max_q <= 16 * PACKET, max_q
