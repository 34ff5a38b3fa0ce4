"""Multi-link scenarios of the explicit-protocol comparisons: a chain of routers with flows
entering and leaving at given hops, every flow's RTT set by its access links, and the analysis
against the max-min oracle (scaled by each protocol's target) and XCP's own equilibrium."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...scenario import Scenario, already_open
from ..common import explicit


@dataclass(frozen=True)
class ChainFlow:
    name: str
    first: int  # index of the first chain link crossed
    last: int  # index of the last chain link crossed (inclusive)


def chain(
    p: explicit.Protocol,
    name: str,
    rates_mbps: Sequence[float],
    flows: Sequence[ChainFlow],
    *,
    rtt_s: float,
    link_delay_s: float,
    duration_s: float,
    scale: float = 1.0,
    buffer: str = "20000pkt",
    metrics: str = "10ms",
) -> Scenario:
    """Routers r0 .. rL joined by links of ``rates_mbps`` (``link_delay_s`` each); each flow has
    its own source and destination hosts, with access delays that make its RTT ``rtt_s``."""
    sc = Scenario(f"{name}-{p.name}", duration=f"{duration_s * scale:g}s", seed=1)
    n_links = len(rates_mbps)
    for k in range(n_links + 1):
        sc.add_router(f"r{k}")
    for k, rate in enumerate(rates_mbps):
        sc.add_link(
            f"r{k}",
            f"r{k + 1}",
            rate=f"{rate:g}Mbps",
            delay=f"{link_delay_s * 1e3:g}ms",
            buffer=buffer,
            queue=p.queue,
        )
    for f in flows:
        hops = f.last - f.first + 1
        access = max(rtt_s / 2 - hops * link_delay_s, 0.0) / 2
        sc.add_host(f"src-{f.name}").add_host(f"dst-{f.name}")
        sc.add_link(
            f"src-{f.name}",
            f"r{f.first}",
            rate="10Gbps",
            delay=f"{access * 1e3:g}ms",
            buffer="unlimited",
        )
        sc.add_link(
            f"r{f.last + 1}",
            f"dst-{f.name}",
            rate="10Gbps",
            delay=f"{access * 1e3:g}ms",
            buffer="unlimited",
        )
        sc.add_flow(f.name, f"src-{f.name}", f"dst-{f.name}", cc=p.cc, transport=already_open())
    sc.metrics(interval=metrics)
    return sc


def paths(flows: Sequence[ChainFlow]) -> list[list[int]]:
    return [list(range(f.first, f.last + 1)) for f in flows]


def references(
    p: explicit.Protocol, rates_mbps: Sequence[float], flows: Sequence[ChainFlow]
) -> dict[str, list[float]]:
    """Payload rates (bit/s): max-min of the target-scaled capacities, and for XCP also its
    fluid equilibrium."""
    from ...maxmin import max_min_fair
    from ...xcp_equilibrium import xcp_equilibrium

    caps = [r * 1e6 for r in rates_mbps]
    mm = max_min_fair(caps, paths(flows), utilisation=p.target).rate
    out = {"maxmin": [float(v) * p.payload_share for v in mm]}
    if p.name == "xcp":
        eq = xcp_equilibrium(caps, paths(flows))
        out["xcp_equilibrium"] = [float(v) * p.payload_share for v in eq]
    return out


def measured_rates(res: Any, flows: Sequence[ChainFlow], a: float, b: float) -> list[float]:
    return [explicit.window_mean(*explicit.flow_series(res, f.name), a, b) for f in flows]
