"""XCP's equilibrium in a network, from the fluid form of the router law as implemented
(crates/xcc-core/src/link/xcp.rs, ns-2.35 form), for comparison with max-min fairness.

Per control interval a link ``l`` with ``N_l`` flows, aggregate ``y_l`` and no standing queue
hands out ``phi_l = alpha (C_l - y_l)`` plus the shuffled ``h_l = max(0, gamma y_l - |phi_l|)``:
positive feedback ``(max(phi_l, 0) + h_l) / N_l`` to every flow (equal per flow, since each
packet gets ``Cp x`` and a flow's ``x`` sum to one interval), negative feedback ``(max(-phi_l,
0) + h_l) x_i / y_l`` (proportional to rate, since each packet gets ``Cn s``). A packet keeps the
smallest feedback of its path, and a flow's packets all carry the same ``x`` and size, so flow
``i``'s rate changes per interval by

    min over l in path(i) of
        f_l(i) = (max(phi_l, 0) + h_l) / N_l - (max(-phi_l, 0) + h_l) x_i / y_l

The equilibrium is where every flow's change is zero. Unlike max-min, a link that carries flows
bottlenecked elsewhere keeps giving them their share of positive feedback, which the downstream
link throws away; the flows it does control must balance their negative feedback against that
share, which caps the link below capacity (Low, Andrew and Wydrowski, "Understanding XCP:
equilibrium and fairness", INFOCOM 2005: XCP solves a *constrained* max-min problem and can
leave a flow an arbitrarily small fraction of its max-min rate). Not modelled: the queue term
(zero at equilibrium), residue exhaustion within an interval, and RTT differences (each flow is
updated once per interval).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def xcp_equilibrium(
    capacity: Sequence[float],
    paths: Sequence[Sequence[int]],
    *,
    alpha: float = 0.4,
    gamma: float = 0.1,
    steps: int = 200_000,
    damping: float = 0.05,
    tol: float = 1e-9,
) -> np.ndarray:
    """Rates (same unit as ``capacity``) at which every flow's feedback is zero.

    Iterates the per-interval map ``x_i += damping * min_l f_l(i)`` from a small equal start
    until the largest change is below ``tol`` times the largest capacity.
    """
    cap = np.asarray(capacity, dtype=float)
    n_links, n_flows = len(cap), len(paths)
    a = np.zeros((n_links, n_flows))
    for i, path in enumerate(paths):
        for link in path:
            a[link, i] = 1.0
    counts = a.sum(axis=1)
    x = np.full(n_flows, 1e-3 * cap.min())
    scale = tol * cap.max()
    for _ in range(steps):
        y = a @ x
        phi = alpha * (cap - y)
        h = np.maximum(0.0, gamma * y - np.abs(phi))
        pos = np.where(counts > 0, (np.maximum(phi, 0) + h) / np.maximum(counts, 1), 0.0)
        neg_per_rate = np.where(y > 0, (np.maximum(-phi, 0) + h) / np.maximum(y, 1e-300), 0.0)
        f = pos[:, None] - neg_per_rate[:, None] * x[None, :]
        f = np.where(a > 0, f, np.inf).min(axis=0)
        x = np.maximum(x + damping * f, 1e-12 * cap.min())
        if np.abs(f).max() * damping < scale:
            break
    return x
