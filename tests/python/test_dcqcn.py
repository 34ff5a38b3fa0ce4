"""DCQCN in the simulator (docs/algorithms/dcqcn.md): the switch's RED-ECN ramp, the
receiver's CNPs (ECN-Echo on an ACK, at most one per 50 us per flow), the sender's rate law,
with the paper's constants.

A dumbbell scaled to run in about a second: two senders on 10 Gbit/s, 1 us links into one
router and one 10 Gbit/s, 1 us link to the receiver (1 MB buffers, no drop). Flow 1 starts at 0
at line rate, flow 1 at 10 ms and flow 2 at 20 ms, each at line rate; 150 ms simulated; the
paper's constants (Kmin 5 KB, Kmax 200 KB, Pmax 1 %, g 1/256, 55 us timers, R_AI 40 Mbit/s,
R_HAI 200 Mbit/s, B 10 MB, F 5).

Measured (seed 1): flow 1 alone paces at 10 Gbit/s (goodput 9.73 Gbit/s, the payload share of
1,500 B packets); when flow 2 joins the first CNPs cut both to about 3 Gbit/s (at 25 ms) and
they climb together (4.2 Gbit/s each at 50 ms). Over [100, 150] ms their mean goodputs are
4.42 and 4.29 Gbit/s (each within 1.5 % of the equal share of their sum), 8.71 Gbit/s together
(0.895 of the 9.73 Gbit/s of payload the link can carry): the rates still swing around the
share (pacing rates 6.07 and 4.99 Gbit/s at 150 ms) and the queue empties between cuts. The
bottleneck marked 8,761 packets, mean queue 41.6 KB, largest 298.5 KB, no drop. Asserted: each
within 10 % of the equal share, together at least 0.85 of the payload capacity, marks, no drop.
"""

from __future__ import annotations

import pytest

pytest.importorskip("xcclab._native")

CAPACITY = 10e9
#: Each flow's mean goodput over [100, 150] ms within this fraction of an equal share of their
#: sum (measured 1.5 %), and the sum at least this fraction of the payload capacity (0.895).
FAIR_TOLERANCE = 0.10
MIN_UTILISATION = 0.85


def dumbbell(pfc: bool = False, duration: str = "150ms") -> dict:
    port = {"rate": "10Gbps", "delay": "1us", "buffer": "1MB"}
    s = {
        "name": "dcqcn-dumbbell",
        "duration": duration,
        "seed": 1,
        "host": [{"name": "s{i}", "count": 2}, {"name": "d"}],
        "router": [{"name": "r"}],
        "link": [
            {"between": ["s{i}", "r"], "count": 2, **port},
            {"between": ["r", "d"], **port, "queue": "dcqcn"},
        ],
        "flow": [
            {
                "name": "f{i}",
                "count": 2,
                "kind": "bulk",
                "src": "s{i}",
                "dst": "d",
                "start": "{i}0ms",
                "cc": "dcqcn",
                "transport": {"connection": "open"},
            }
        ],
        "metrics": {"interval": "1ms"},
    }
    # f1 starts at 10 ms, f2 at 20 ms ("{i}0ms"); both share from 20 ms on.
    if pfc:
        s["pfc"] = {}
    return s


def window_rates(result, start_s: float, end_s: float) -> dict[str, float]:
    series = result.flow_series
    flows = result.flows
    out = {}
    for fid, name in zip(flows["flow_id"], flows["name"]):
        t = series["time_s"]
        rows = series.filter(
            (series["flow_id"] == fid) & (t > start_s + 1e-9) & (t <= end_s + 1e-9)
        )
        out[name] = rows["rate_bps"].mean()
    return out


@pytest.mark.native
def test_two_flows_converge_to_a_fair_share():
    import xcclab

    result = xcclab.run(dumbbell())
    rates = window_rates(result, 0.100, 0.150)
    total = sum(rates.values())
    links = result.links
    bottleneck = links.row(links["name"].to_list().index("r->d"), named=True)
    print("MEASURED", rates, total, bottleneck["marks"], bottleneck["mean_queue_bytes"])
    assert total >= MIN_UTILISATION * CAPACITY * 1460 / 1500, rates
    for name, r in rates.items():
        assert abs(r - total / 2) <= FAIR_TOLERANCE * total / 2, (name, rates)
    assert bottleneck["marks"] > 0
    assert links["drops"].sum() == 0
