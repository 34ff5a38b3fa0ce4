"""A fluid model of MaxNet on one link (seed 000, eqs. (3), (6a) and (10)).

N identical flows with round-trip time tau share one link of capacity C with exogenous cross
traffic c(t) (a CBR flow, say). Half the RTT lies on each side of the link:

    price       dp/dt = (y(t) - mu C) / C, clipped below at 0          (3)
    arrivals    y(t)  = N x(t - tau/2) + c(t)
    source      q(t)  = p(t - tau/2)
                x(t)  = x_max exp(xi(t) - alpha q(t) / tau)              (6a)
                dxi/dt = alpha eta / tau^2 ((T alpha / tau - 1) q - T xi) (10)

The model ignores what packets add (the ACK clock, queues, the virtual-queue term Q / T0, window
quantisation): it shows what the paper's equations alone predict, which is the yardstick for the
packet simulation. Forward Euler with ring buffers for the two delays; ``dt`` well below tau.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class MaxNetFluidParams:
    """Seed 000's defaults (Section VI)."""

    x_max: float = 1e15  # bit/s
    t: float = 0.4  # s, demand scale T
    alpha: float = 0.66
    eta: float = 0.06


@dataclass(frozen=True)
class MaxNetFluidResult:
    time_s: np.ndarray
    rate_per_flow_bps: np.ndarray
    price: np.ndarray


def equilibrium(rate_bps: float, tau: float, params: MaxNetFluidParams) -> tuple[float, float]:
    """(price, xi) at which a source with RTT ``tau`` sends ``rate_bps`` and xi stands still."""
    q = -params.t * math.log(rate_bps / params.x_max)
    xi = math.log(rate_bps / params.x_max) + params.alpha * q / tau
    return q, xi


def single_link(
    capacity_bps: float,
    mu: float,
    tau: float,
    n_flows: int,
    cross_traffic: Callable[[float], float],
    t_end: float,
    *,
    params: MaxNetFluidParams | None = None,
    dt: float | None = None,
) -> MaxNetFluidResult:
    """Integrates the model from the equilibrium for the cross traffic at time 0."""
    params = params or MaxNetFluidParams()
    for name, v in (("capacity_bps", capacity_bps), ("tau", tau), ("t_end", t_end)):
        if not (v > 0 and math.isfinite(v)):
            raise ValueError(f"{name} = {v}: expected a positive number")
    if not 0 < mu <= 1:
        raise ValueError(f"mu = {mu}: expected 0 < mu <= 1")
    if n_flows < 1:
        raise ValueError(f"n_flows = {n_flows}: expected at least one flow")
    x0 = (mu * capacity_bps - cross_traffic(0.0)) / n_flows
    if x0 <= 0:
        raise ValueError("the cross traffic at time 0 leaves no capacity for MaxNet")
    dt = dt or tau / 1000
    half = max(1, round(tau / 2 / dt))
    p, xi = equilibrium(x0, tau, params)
    price_ring = np.full(half, p)  # p(t - tau/2) .. p(t - dt)
    rate_ring = np.full(half, x0)
    steps = int(round(t_end / dt))
    a, eta, t_cap = params.alpha, params.eta, params.t
    gain = a * eta / tau**2
    times = np.empty(steps)
    rates = np.empty(steps)
    prices = np.empty(steps)
    for k in range(steps):
        i = k % half
        q = price_ring[i]
        x = params.x_max * math.exp(xi - a * q / tau)
        y = n_flows * rate_ring[i] + cross_traffic(k * dt)
        xi += gain * ((t_cap * a / tau - 1) * q - t_cap * xi) * dt
        price_ring[i] = p
        rate_ring[i] = x
        p = max(p + dt * (y - mu * capacity_bps) / capacity_bps, 0.0)
        times[k], rates[k], prices[k] = k * dt, x, p
    return MaxNetFluidResult(times, rates, prices)
