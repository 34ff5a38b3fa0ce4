"""Issue 31's second reading: do rcp-instability-N's counted RCP claims move with the length of
the averaging window, which seed 000 does not give for Figs 13-15?

Runs each N's main RCP configuration (ns-2 filter, alpha 0.4, beta 1: the reports' counted
runs) and reads flow 1's statistics with 10 ms samples, 100 ms means (the reports') and 1 s
means, every window at every 10 ms alignment and wholly inside the interval it is read over.
Usage: ``python tools/research/rcp_instability_windows.py OUT.json``; the result is in
docs/reproduction/research/rcp-instability-windows.json.
"""

import json
import sys

import numpy as np

import xcclab
from xcclab.reproduce.common import explicit as _xcc
from xcclab.reproduce.maxnet import rcp_instability as ri

WINDOWS = (1, 10, 100)  # samples of 10 ms


def statistics(t0: np.ndarray, r0: np.ndarray, k: int) -> dict[str, float]:
    t, r = _xcc.sliding(t0, r0, k) if k > 1 else (np.asarray(t0), np.asarray(r0, dtype=float))
    w = 0.01 * k  # a window ending at t covers (t - w, t]
    settled = r[t - w >= 20]
    over, settle = ri._settle(t, r, 0.0, float(settled.mean()))
    early = r[(t - w >= 1) & (t <= 10)]
    late = r[t - w >= 10]
    c = 155e6
    return {
        "overshoot_%": 100 * over,
        "settle_s": settle,
        "min_1_10_Mbps": float(early.min()) / 1e6,
        "max_1_10_Mbps": float(early.max()) / 1e6,
        "range_from_10s_%C": 100 * float(late.max() - late.min()) / c,
        "min_from_20s_%C": 100 * float(settled.min()) / c,
        "max_from_20s_%C": 100 * float(settled.max()) / c,
    }


def main(path: str) -> None:
    out = {}
    for n in (1, 9, 49):
        res = xcclab.run(ri.scenario(n, 1.0, ri.PROTOCOLS[0]), progress=False)
        t0, r0 = _xcc.flow_series(res, "flow1")
        out[str(n)] = {f"{10 * k} ms": statistics(t0, r0, k) for k in WINDOWS}
        print(n, json.dumps(out[str(n)]), flush=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"about": __doc__.split("\n\n")[0], "N": out}, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1])
