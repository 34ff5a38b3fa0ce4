"""The max-min fair oracle: exact water-filling over any topology (Rust, ``xcc_core::analysis``).

Every explicit protocol that aims at max-min fairness (MaxNet, RCP, JetMax, SLBN, ERICA,
BFYZ, COBB) is checked against it; XCP's deviation from it is measured with it.

>>> a = max_min_fair([10.0, 20.0], [[0, 1], [0], [1]])   # parking lot
>>> a.rate, a.bottleneck
([5.0, 5.0, 15.0], [0, 0, 1])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

DEMAND = -1
"""Bottleneck code of a flow limited by its own demand cap."""
UNCONSTRAINED = -2
"""Bottleneck code of a flow that crosses no link and has no cap (infinite rate)."""


@dataclass(frozen=True)
class Allocation:
    """Rates per flow, the limiting link per flow (or DEMAND / UNCONSTRAINED), load per link.

    Plain Python floats and ints (not numpy scalars), so an allocation prints as numbers and
    goes into JSON as is; ``numpy.asarray(a.rate)`` for array arithmetic.
    """

    rate: list[float]
    bottleneck: list[int]
    load: list[float]


def max_min_fair(
    capacity: Sequence[float],
    paths: Sequence[Sequence[int]],
    demand: Sequence[float] | None = None,
    utilisation: float | Sequence[float] = 1.0,
) -> Allocation:
    """Max-min fair rates of flows crossing ``paths`` (link indices) over links of ``capacity``.

    ``utilisation`` scales capacities (one factor, or one per link): the rates a protocol that
    targets a fraction of capacity (MaxNet's mu, RCP's gamma) should converge to. ``demand``
    caps flows (``inf`` for none). Raises ValueError on negative capacities or unknown links.
    """
    from . import _native

    caps = np.asarray(capacity, dtype=float) * np.asarray(utilisation, dtype=float)
    caps = np.broadcast_to(caps, (len(capacity),))
    result = _native.max_min_fair(
        caps.tolist(),
        [[int(link) for link in path] for path in paths],
        None if demand is None else [float(d) for d in demand],
    )
    return Allocation(
        rate=[float(v) for v in result["rate"]],
        bottleneck=[int(v) for v in result["bottleneck"]],
        load=[float(v) for v in result["load"]],
    )
