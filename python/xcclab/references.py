"""References for a run's flows, computed from the run's own resolved scenario.

- :func:`max_min_rates`: the max-min fair rates of the flows of ``[[flow]]`` that are still
  active at the end of the run, over the links they cross, each link's capacity scaled by the
  utilisation its queue discipline aims at (MaxNet's ``mu``, RCP's, PIQI-RCP's and JetMax's
  ``gamma``; 1 for XCP and the AQMs) or by ``utilisation``; reported as **payload** rates, since
  the flows table reports payload: a data packet is ``mss + header + shim`` bytes on the wire,
  the shim being the congestion header of the flow's ``cc`` (:func:`shim_bytes`: 1518, 1510,
  1508 B data packets for XCP, RCP and MaxNet with the default 1460 B MSS and 40 B headers).
- :func:`window_rates`: delivery rates over a sliding window of whole metrics intervals, by
  default four RTTs long (``delivered_bytes`` differences, so exact, not an average of averages).
- :func:`convergence_time`: the first time after which a flow's windowed rate stays within
  ``tolerance`` of its reference until the end of the run.

Routes follow the simulator's rule (``crates/xcc-sim/src/topology.rs``): an explicit ``route``,
else the fewest hops, then the lowest propagation delay, then the lowest link ids, never through
a host. Flows started by ``[[arrivals]]`` or ``[[transactions]]``, sized flows and flows that
stopped before the end get no reference (null): the reference is the steady state of the flows
that run to the end.
"""

from __future__ import annotations

import functools
import heapq
import math
from collections.abc import Sequence
from typing import Any

#: Tolerance of :func:`convergence_time` (relative to the reference).
DEFAULT_TOLERANCE = 0.1
#: Default rate window in RTTs: delivery of a window protocol comes in bursts once per RTT, so
#: a one-RTT window still shows the burst phase (+-10 % on a 25 Mbit/s XCP flow sampled every
#: 10 ms); four RTTs bring it to +-5 %.
WINDOW_RTTS = 4


@functools.cache
def _kinds() -> dict[str, dict[str, tuple[str, int | None, str | None]]]:
    """The registries' algorithms by role ("host", "link"): kind tag in run.json -> (name, shim
    bytes, target-utilisation parameter)."""
    from .errors import load_native

    return {
        role: {tag: (name, shim, target) for name, tag, shim, target in rows}
        for role, rows in load_native().algorithm_kinds()
    }


def shim_bytes() -> dict[str, int]:
    """Bytes the congestion header (2 shim bytes + the body) adds to every data packet, per
    ``cc`` name, with the algorithm's default parameters (from the cc registry)."""
    return {name: shim for name, shim, _ in _kinds()["host"].values()}


def cc_name(kind: str) -> str:
    """The scenario's name of a resolved ``cc`` or ``queue`` kind (run.json writes ``new_reno``,
    ``drop_tail``), from the registries."""
    for role in ("host", "link"):
        if kind in _kinds()[role]:
            return _kinds()[role][kind][0]
    return kind


def target_utilisation(queue: dict[str, Any]) -> float:
    """The fraction of capacity a resolved ``queue`` aims to fill (1 when it has no target): the
    parameter its registry entry names (MaxNet's ``mu``, RCP's ``gamma``)."""
    entry = _kinds()["link"].get(queue.get("kind", ""))
    target = entry[2] if entry else None
    return float(queue[target]) if target else 1.0


def flow_routes(scenario: dict[str, Any]) -> list[list[int]]:
    """Link ids (directions, in order) crossed by each entry of the resolved ``flows``.

    One shortest-path tree per *root*, computed once and dropped once its flows are traced, so
    time is O(roots x network) and memory O(network + routes). The root of a flow from a host
    with a single outgoing link is the router at that link's far end: hosts are never crossed,
    so the host's tree is that link followed by the router's, with the same tie-breaks (every
    key shifted by the same hop and delay). A dumbbell of N flows thus needs one tree, not N.
    """
    nodes, links = scenario["nodes"], scenario["links"]
    is_host = [n["kind"] == "host" for n in nodes]
    out: list[list[int]] = [[] for _ in nodes]
    for lid, link in enumerate(links):
        out[link["from"]].append(lid)

    def tree(src: int) -> list[int]:
        best = [(math.inf, math.inf)] * len(nodes)
        parent = [-1] * len(nodes)
        best[src] = (0, 0)
        heap = [(0, 0, src)]
        while heap:
            h, d, u = heapq.heappop(heap)
            if (h, d) > best[u]:
                continue
            for lid in out[u]:
                v = links[lid]["to"]
                cand = (h + 1, d + links[lid]["delay_ns"])
                if cand < best[v]:
                    best[v] = cand
                    parent[v] = lid
                    if not is_host[v]:
                        heapq.heappush(heap, (cand[0], cand[1], v))
        return parent

    flows = scenario["flows"]
    routes: list[list[int] | None] = [None] * len(flows)
    by_root: dict[int, list[tuple[int, list[int]]]] = {}
    for i, flow in enumerate(flows):
        if flow.get("route"):
            hops = flow["route"]
            routes[i] = [
                next(lid for lid in out[a] if links[lid]["to"] == b) for a, b in zip(hops, hops[1:])
            ]
            continue
        src, first = flow["src"], []
        if is_host[src] and len(out[src]) == 1 and not is_host[links[out[src][0]]["to"]]:
            first = [out[src][0]]
            src = links[first[0]]["to"]
        by_root.setdefault(src, []).append((i, first))
    for root in sorted(by_root):
        parent = tree(root)
        for i, first in by_root.pop(root):
            flow = flows[i]
            path, v = [], flow["dst"]
            while v != root:
                lid = parent[v]
                if lid < 0:
                    raise ValueError(f"flow {flow['name']!r}: no route")
                path.append(lid)
                v = links[lid]["from"]
            path.reverse()
            routes[i] = first + path
    return [r if r is not None else [] for r in routes]


def payload_share(flow: dict[str, Any]) -> float:
    """Payload bytes per wire byte of the flow's full data packets (1 for cbr)."""
    kind = flow["kind"]
    if kind["kind"] != "bulk":
        return 1.0
    t = kind["transport"]
    entry = _kinds()["host"].get(kind["cc"]["kind"])
    shim = entry[1] if entry else None
    if shim is None:
        raise ValueError(f"flow {flow['name']!r}: no header size known for cc {kind['cc']!r}")
    return t["mss_bytes"] / (t["mss_bytes"] + t["header_bytes"] + shim)


def _in_reference(flow: dict[str, Any], duration_ns: int) -> bool:
    kind = flow["kind"]
    if kind["kind"] == "bulk" and kind.get("size_bytes") is not None:
        return False
    stop = flow.get("stop_ns")
    return flow["start_ns"] < duration_ns and (stop is None or stop >= duration_ns)


def max_min_rates(
    scenario: dict[str, Any], utilisation: float | Sequence[float] | None = None
) -> list[float | None]:
    """Max-min fair payload rates (bit/s) of the resolved scenario's ``flows`` (see module doc).

    ``utilisation``: None for each link's own target, a number for every link, or one per link
    direction. Entries of flows outside the reference are None.
    """
    from .maxmin import max_min_fair

    links, flows = scenario["links"], scenario["flows"]
    if utilisation is None:
        util = [target_utilisation(link["queue"]) for link in links]
    elif isinstance(utilisation, (int, float)):
        util = [float(utilisation)] * len(links)
    else:
        util = [float(u) for u in utilisation]
        if len(util) != len(links):
            raise ValueError(f"utilisation: expected {len(links)} values (one per link direction)")
    chosen = [i for i, f in enumerate(flows) if _in_reference(f, scenario["duration_ns"])]
    out: list[float | None] = [None] * len(flows)
    # A fabric's ECMP routes are hashed per flow in Rust (crates/xcc-build/src/topology.rs);
    # this module's routes are the single shortest path, so it gives no reference there.
    if not chosen or (scenario.get("fabric") or {}).get("ecmp"):
        return out
    routes = flow_routes(scenario)
    # The oracle shares wire capacity: a flow's wire rate is its payload rate / payload share.
    demand = [
        float(flows[i]["kind"]["rate_bps"]) if flows[i]["kind"]["kind"] == "cbr" else math.inf
        for i in chosen
    ]
    alloc = max_min_fair(
        [float(link["rate_bps"]) for link in links],
        [routes[i] for i in chosen],
        demand=demand,
        utilisation=util,
    )
    for k, i in enumerate(chosen):
        out[i] = float(alloc.rate[k]) * payload_share(flows[i])
    return out


def window_length(interval_s: float, rtt_s: float | None, window_s: float | None = None) -> int:
    """Samples per rate window: the smallest whole number of metrics intervals covering
    ``window_s`` (default: :data:`WINDOW_RTTS` times ``rtt_s``), at least one."""
    want = window_s if window_s is not None else WINDOW_RTTS * (rtt_s or 0.0)
    return max(1, math.ceil(want / interval_s - 1e-9))


def window_rates(time_s: Sequence[float], delivered: Sequence[float], samples: int) -> Any:
    """Delivery rate (bit/s) over the last ``samples`` intervals at each sample (NaN before)."""
    import numpy as np

    t = np.asarray(time_s, dtype=float)
    b = np.asarray(delivered, dtype=float)
    rate = np.full(len(t), np.nan)
    if len(t) > samples:
        rate[samples:] = 8 * (b[samples:] - b[:-samples]) / (t[samples:] - t[:-samples])
    return rate


def convergence_time(
    time_s: Sequence[float],
    rate: Sequence[float],
    reference: float,
    tolerance: float,
    min_samples: int = 1,
) -> float | None:
    """The first sample time after which ``rate`` stays within ``tolerance`` of ``reference``
    to the last sample; None if that last stretch is shorter than ``min_samples`` samples (a
    rate that merely passes through the band at the end has not converged)."""
    import numpy as np

    r = np.asarray(rate, dtype=float)
    ok = np.abs(r - reference) <= tolerance * reference
    ok &= ~np.isnan(r)
    if not len(r) or not ok[-1]:
        return None
    bad = np.flatnonzero(~ok)
    first = 0 if not len(bad) else bad[-1] + 1
    if len(r) - first < min_samples:
        return None
    return float(time_s[first])


#: Columns of ``flows`` derived here (declared in :mod:`xcclab.schema`).
DERIVED_FLOW_COLUMNS = (
    "late_rate_bps",
    "maxmin_bps",
    "maxmin_error",
    "rate_window_s",
    "convergence_s",
)


def late_rates(scenario: dict[str, Any], flows: Any, flow_series: Any) -> list[float | None]:
    """Each flow's delivery rate over the second half of the run: from its first sample at or
    after half the duration (or its start, if later) to its last; None with fewer than two
    such samples."""
    import polars as pl

    half = scenario["duration_ns"] * 0.5e-9
    starts = flows.select("flow_id", pl.col("start_s").fill_null(0.0))
    ends = (
        flow_series.join(starts, on="flow_id")
        .filter(pl.col("time_s") >= pl.max_horizontal(pl.lit(half), pl.col("start_s")) - 1e-9)
        .group_by("flow_id")
        .agg(  # delivered_bytes is cumulative: smallest at the first sample, largest at the last
            pl.len().alias("n"),
            pl.col("time_s").min().alias("t0"),
            pl.col("time_s").max().alias("t1"),
            pl.col("delivered_bytes").min().alias("b0"),
            pl.col("delivered_bytes").max().alias("b1"),
        )
    )
    rate = {
        fid: 8 * (b1 - b0) / (t1 - t0)
        for fid, n, t0, t1, b0, b1 in ends.select("flow_id", "n", "t0", "t1", "b0", "b1").rows()
        if n >= 2 and t1 > t0
    }
    return [rate.get(fid) for fid in flows["flow_id"].to_list()]


def derived_flow_columns(
    scenario: dict[str, Any], flows: Any, flow_series: Any, tolerance: float = DEFAULT_TOLERANCE
) -> dict[str, list[Any]]:
    """The values of :data:`DERIVED_FLOW_COLUMNS` for every row of ``flows``."""
    import polars as pl

    by_id = max_min_rates(scenario, None) if scenario.get("flows") else []
    # flow_id indexes the resolved [[flow]] entries; later ids are arrivals and transactions.
    ref = [by_id[i] if i < len(by_id) else None for i in flows["flow_id"].to_list()]
    late = late_rates(scenario, flows, flow_series)
    interval = scenario.get("metrics", {}).get("interval_ns", 0) * 1e-9
    window: list[float | None] = []
    conv: list[float | None] = []
    wanted = [fid for fid, r in zip(flows["flow_id"].to_list(), ref) if r is not None and r > 0]
    series = flow_series.filter(pl.col("flow_id").is_in(wanted)).partition_by(
        "flow_id", as_dict=True, maintain_order=True
    )
    empty = flow_series.clear()
    for row, r in zip(flows.iter_rows(named=True), ref):
        if not interval or r is None or r <= 0:
            window.append(None)
            conv.append(None)
            continue
        k = window_length(interval, row["srtt_s"])
        window.append(k * interval)
        fs = series.get((row["flow_id"],), empty)
        if not fs["time_s"].is_sorted():
            fs = fs.sort("time_s")
        t_s = fs["time_s"].to_numpy()
        rate = window_rates(t_s, fs["delivered_bytes"].to_numpy(), k)
        t = convergence_time(t_s, rate, r, tolerance, min_samples=k)
        conv.append(None if t is None else max(0.0, t - (row["start_s"] or 0.0)))
    error = [None if (a is None or r is None or r <= 0) else a / r - 1.0 for a, r in zip(late, ref)]
    return {
        "late_rate_bps": late,
        "maxmin_bps": ref,
        "maxmin_error": error,
        "rate_window_s": window,
        "convergence_s": conv,
    }
