"""DCTCP in the simulator against the paper (Alizadeh et al., SIGCOMM 2010).

The paper's section 4 setting, as its Figure 1: two long flows from distinct 1 Gbit/s ports into
one common 1 Gbit/s port, K = 20 packets; here with 25 us links (RTT 100 us, C·RTT = 8.3
packets of 1,500 B) and a 400-packet buffer. Section 3.3's analysis of N = 2 synchronised
flows: W* = (C·RTT + K)/N = 14.2 packets, the queue swings between Qmin = K + N − A = 16.7
and Qmax = K + N = 22 packets (A = ½·sqrt(2N(C·RTT + K)) = 5.3), and K is far above the
C·RTT/7 = 1.2 packets the link needs to stay busy.

Measured (seed 1, 1 s): after the first 100 ms (slow start overshoots to 53 packets before
the first cut) the bottleneck's queue sampled every 10 ms stays between 17 and 22 packets,
mean 19.6; the whole run's time-average 19.5 packets; utilisation 0.99997; no drop; the two
flows' goodputs equal (486.6 Mbit/s each). The switch marked 30 % of the packets against the
analysis' sqrt(2/W*) = 0.376 (not asserted: the analysis approximates the sawtooth). NewReno
with ECN off on the same drop-tail ports fills the buffer (time-average 331 of 400 packets):
Figure 1's contrast. Asserted: the
samples after 100 ms within [Qmin − 1, Qmax + 1], the time-average within the same band,
utilisation at least 0.99, no drop, goodputs within 5 % of each other, NewReno's mean queue at
least five times DCTCP's. The same holds with delayed ACKs (every second segment, 100 us;
RFC 8257 section 3.2's state machine at the receiver): time-average 19.9 packets, largest 38,
utilisation 0.99997, no drop.
"""

from __future__ import annotations

import pytest

pytest.importorskip("xcclab._native")

K = 20
C_RTT_PACKETS = 1e9 / 8 * 100e-6 / 1500
N = 2
AMPLITUDE = 0.5 * (2 * N * (C_RTT_PACKETS + K)) ** 0.5
Q_MAX = K + N
Q_MIN = Q_MAX - AMPLITUDE


def scenario(cc: str, queue, delayed_ack=False) -> dict:
    port = {"rate": "1Gbps", "delay": "25us", "buffer": "400pkt", "queue": queue}
    return {
        "name": f"dctcp-fig1-{cc}",
        "duration": "1s",
        "seed": 1,
        "host": [{"name": "s{i}", "count": 2}, {"name": "d"}],
        "router": [{"name": "r"}],
        "link": [
            {"between": ["s{i}", "r"], "count": 2, **port},
            {"between": ["r", "d"], **port},
        ],
        "flow": [
            {
                "name": "f{i}",
                "count": 2,
                "kind": "bulk",
                "src": "s{i}",
                "dst": "d",
                "start": "0s",
                "cc": cc,
                "transport": {"connection": "open", "delayed_ack": delayed_ack},
            }
        ],
        "metrics": {"interval": "10ms"},
    }


def bottleneck(result):
    links = result.links
    return links.row(links["name"].to_list().index("r->d"), named=True)


@pytest.mark.native
@pytest.mark.parametrize("delayed_ack", [False, "100us"], ids=["ack-per-packet", "delayed-ack"])
def test_two_flows_hold_the_queue_near_k_at_full_throughput(delayed_ack):
    import polars as pl

    import xcclab

    dctcp = scenario("dctcp", {"kind": "dctcp", "k": f"{K}pkt"}, delayed_ack)
    result = xcclab.run(dctcp, series=True)
    link = bottleneck(result)
    series = result.link_series
    samples = series.filter((pl.col("link_id") == link["link_id"]) & (pl.col("time_s") > 0.1))
    lo, hi = samples["queue_packets"].min(), samples["queue_packets"].max()
    assert len(samples) >= 80 and lo >= Q_MIN - 1 and hi <= Q_MAX + 1, (lo, hi)
    mean_q = link["mean_queue_packets"]
    assert Q_MIN - 1 <= mean_q <= Q_MAX + 1, mean_q
    assert link["utilisation"] >= 0.99, link["utilisation"]
    assert link["drops"] == 0 and link["marks"] > 0
    a, b = result.flows["goodput_bps"].to_list()
    assert abs(a / b - 1) <= 0.05, (a, b)
    assert all(n > 0 for n in result.flows["ce_received"].to_list())

    reno = bottleneck(xcclab.run(scenario("newreno", "droptail", delayed_ack)))
    assert reno["mean_queue_packets"] >= 5 * mean_q, (reno["mean_queue_packets"], mean_q)
