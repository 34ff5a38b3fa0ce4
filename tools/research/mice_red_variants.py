"""Issue 31, item 5: why does simulated Reno/RED answer ~94 % of seed 001's 200 mice within
135 ms where the paper's testbed answered ~30 %? mice-http-200's Reno/RED run (10 Mbit/s,
200 transactions over 20 s from 20 s) with the bottleneck's queue changed one way at a time:

- ``red-packets``: ours (RED in packets: min_th 30, max_th 90, w_q 0.002, max_p 0.1; 300 pkt);
- ``red-bytes``: RED in byte mode (FJ93 section 4): the same thresholds in bytes of full
  packets (45 000 / 135 000 B), drop probability scaled by packet size, queue in bytes;
- ``red-bytes-kb``: byte mode with the thresholds read as kilobytes (30 KB / 90 KB), as Linux
  tc's RED takes its thresholds in bytes;
- ``droptail-N``: no RED, a FIFO of N packets (50: Dummynet's default pipe queue): the
  testbed's 10 Mbit/s shaping done by a queue RED does not manage;
- ``red-limit-90``: RED with the buffer cut to max_th (90 packets).

Seeds 1-5 each (the seed draws RED's coin; the 200 arrivals are evenly spaced whatever the
seed: ``[[transactions]]`` spreads them uniformly, and a DropTail run is the same for every
seed). Usage: python tools/research/mice_red_variants.py OUT.json
"""

import json
import sys

import xcclab
from xcclab.claims import estimate
from xcclab.reproduce.mice import mice

RED = dict(mice.RED)
VARIANTS = {
    "red-packets": (dict(RED), 300),
    "red-bytes": ({**RED, "min_th": "45000B", "max_th": "135000B", "mean_packet": "1500B"}, 300),
    "red-bytes-kb": ({**RED, "min_th": "30KB", "max_th": "90KB", "mean_packet": "1500B"}, 300),
    "droptail-50": ("droptail", 50),
    "droptail-60": ("droptail", 60),
    "droptail-70": ("droptail", 70),
    "droptail-80": ("droptail", 80),
    "droptail-100": ("droptail", 100),
    "red-limit-90": (dict(RED), 90),
}
SEEDS = (1, 2, 3, 4, 5)
KEYS = (
    "share_within_135ms",
    "median_response_s",
    "p95_response_s",
    "queue_before_pkts",
    "queue_during_pkts",
    "elephant_before_bps",
    "elephant_during_bps",
    "requests_timed_out",
)


def run(variant: str, seed: int) -> dict:
    queue, buffer = VARIANTS[variant]
    sc = mice.scenario("reno-red", 200, "10Mbps")
    sc.seed = seed
    data = sc.to_dict()
    for link in data["link"]:
        if link["between"] == ["r1", "r2"]:
            link["queue"] = queue
            link["buffer"] = f"{buffer}pkt"
    m = mice.measure(xcclab.run(type(sc).from_dict(data), progress=False), 1.0)
    return {"variant": variant, "seed": seed, **{k: m[k] for k in KEYS}}


if __name__ == "__main__":
    only = sys.argv[2].split(",") if len(sys.argv) > 2 else list(VARIANTS)
    rows = []
    for v in only:
        for s in SEEDS:
            rows.append(run(v, s))
            print(json.dumps(rows[-1]), flush=True)
    summary = {
        v: {k: (lambda e: {"mean": e.mean, "ci95": [e.lo, e.hi], "n": e.n})(
            estimate([r[k] for r in rows if r["variant"] == v])) for k in KEYS}
        for v in only
    }  # fmt: skip
    print(json.dumps(summary, indent=1))
    with open(sys.argv[1], "w") as f:
        json.dump({"runs": rows, "summary": summary}, f, indent=1)
