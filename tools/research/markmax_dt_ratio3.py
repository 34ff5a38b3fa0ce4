"""Issue 31, item 5: can seed 003's DropTail J = 0.9893 at delta_2/delta_1 = 3 (Table II) be
reached by any DropTail buffer? The ratio-3 cell of markmax-s1-dt's scenario with theta_DT in
{60, 120, 240, 480, 960} MSS, t_f = 100 s, 5 seeds of the 62 us access jitter each; prints one
JSON line per (buffer, seed) and a summary. Usage:
    python tools/research/markmax_dt_ratio3.py OUT.json [BUFFERS [T_F_S [SEEDS]]]
e.g. ``OUT.json 360,480,600 100`` or ``OUT.json 480 1000 1,2,3``.
"""

import json
import os
import sys

import xcclab
from xcclab.claims import estimate
from xcclab.reproduce.markmax import markmax_s1_dt as dt

BUFFERS = (60, 120, 240, 480, 960)
SEEDS = (1, 2, 3, 4, 5)


RATIO = int(os.environ.get("RATIO", "3"))  # another cell of Table II: RATIO=7 ...


def cell(buffer_pkt: int, seed: int, ratio: int = RATIO, t_f_s: int = 100) -> dict:
    sc = dt.scenario(ratio, t_f_s, dt.JITTER_NS)
    sc.seed = seed
    data = sc.to_dict()
    for link in data["link"]:
        if link["between"] == ["S", "D"]:
            link["buffer"] = f"{buffer_pkt}pkt"
    m = dt.measure(xcclab.run(type(sc).from_dict(data), progress=False), t_f_s)
    return {"ratio": ratio, "buffer_pkt": buffer_pkt, "seed": seed, "J": m["J"], "rho": m["rho"]}


if __name__ == "__main__":
    if len(sys.argv) > 2:
        BUFFERS = tuple(int(x) for x in sys.argv[2].split(","))
    t_f = int(sys.argv[3]) if len(sys.argv) > 3 else 100
    if len(sys.argv) > 4:
        SEEDS = tuple(int(x) for x in sys.argv[4].split(","))
    rows = []
    for b in BUFFERS:
        for s in SEEDS:
            rows.append({**cell(b, s, t_f_s=t_f), "t_f_s": t_f})
            print(json.dumps(rows[-1]), flush=True)
    summary = {}
    for b in BUFFERS:
        for key in ("J", "rho"):
            e = estimate([r[key] for r in rows if r["buffer_pkt"] == b])
            summary[f"{b}pkt {key}"] = {"mean": e.mean, "ci95": [e.lo, e.hi], "n": e.n}
    print(json.dumps(summary, indent=1))
    with open(sys.argv[1], "w") as f:
        json.dump({"runs": rows, "summary": summary}, f, indent=1)
