"""The set-up the SLBN experiments share: the protocols the paper compares and their labels, the
parameters its footnote states, the packet size, the quick-mode network, and :class:`Setup`
(one experiment's network, workload and length). Both the runs (``slbn_common``) and the
driver's validation (``slbn_validation``) read it here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

PACKET_BYTES = 2000
PAPER_PROTOCOLS = ("slbn", "rcp", "piqi_rcp", "erica", "bfyz", "cobb")
LABEL = {
    "slbn": "SLBN",
    "rcp": "RCP",
    "piqi_rcp": "PIQI-RCP",
    "erica": "ERICA",
    "bfyz": "BFYZ",
    "cobb": "COBB",
}
# Parameters stated in the paper's footnote 1 that differ from the protocols' defaults. RCP
# (alpha 0.1, beta 1) and PIQI-RCP (T = 5 ms, kappa* = T / (2 (T + RTT))) are run with their
# defaults, which are those values (xcc-core's session::rcp and link::piqi_rcp tests check them).
PAPER_PARAMS: dict[str, dict[str, Any]] = {
    "cobb": {"period_ms": 70.0},
}
# Quick mode: a small transit-stub network and a few thousand sessions (tests only).
QUICK_TOPOLOGY = {
    "transit_stub": {
        "transit_domains": 2,
        "transit_routers_per_domain": 4,
        "stubs_per_transit_router": 3,
        "routers_per_stub": 4,
        "hosts_per_stub_router": 200,
    }
}


@dataclass
class Setup:
    id: str
    title: str
    claim: str
    topology: str  # "medium" | "large"
    protocols: tuple[str, ...]
    workload: dict[str, Any]
    duration_s: float
    sample_interval_s: float
    plot_from_s: float = 0.0
    quick_scale: float = 0.04  # session counts in quick mode
    quick_duration_s: float = 1.5
    notes: list[str] = field(default_factory=list)
    # Parameters of this experiment over PAPER_PARAMS (the report's notes must say why).
    params: dict[str, dict[str, Any]] = field(default_factory=dict)
    # "packets": the verdicts come from the packet engine (every data and control packet
    # simulated) and the session driver runs beside it as the labelled fluid approximation;
    # "fluid": the session driver alone (the Large experiments: the packet engine's cost, see
    # docs/performance.md, keeps them out of a reproduction's budget for now).
    engine: str = "packets"

    def experiment(self, protocol: str, quick: bool) -> dict[str, Any]:
        workload = _scale_workload(self.workload, self.quick_scale) if quick else self.workload
        params = {**PAPER_PARAMS.get(protocol, {}), **self.params.get(protocol, {})}
        return {
            "protocol": protocol,
            "protocol_params": params or None,
            "seed": 1,
            "topology": QUICK_TOPOLOGY if quick else self.topology,
            "workload": workload,
            "duration_s": self.quick_duration_s if quick else self.duration_s,
            "sample_interval_s": self.sample_interval_s,
        }


def _scale_workload(w: dict[str, Any], k: float) -> dict[str, Any]:
    out = dict(w)
    for key in ("arrivals", "departures"):
        out[key] = [{**win, "count": max(1, int(win["count"] * k))} for win in w.get(key, [])]
    return out


def _nanmean(v: np.ndarray) -> float:
    v = v[np.isfinite(v)]
    return float(v.mean()) if v.size else math.nan


def _nanmax(v: np.ndarray) -> float:
    v = v[np.isfinite(v)]
    return float(v.max()) if v.size else math.nan


def _nanmin(v: np.ndarray) -> float:
    v = v[np.isfinite(v)]
    return float(v.min()) if v.size else math.nan
