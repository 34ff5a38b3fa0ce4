"""XCP's equilibrium in a network, from the fluid form of the router law as implemented
(crates/xcc-core/src/link/xcp.rs, ns-2.35 form), for comparison with max-min fairness.

Per control interval a link ``l`` with ``N_l`` flows, aggregate ``y_l`` and no standing queue
hands out ``phi_l = alpha (C_l - y_l)`` plus the shuffled ``h_l = max(0, gamma y_l - |phi_l|)``:
positive feedback ``pos_l = (max(phi_l, 0) + h_l) / N_l`` to every flow (equal per flow, since
each packet gets ``Cp x`` and a flow's ``x`` sum to one interval), negative feedback
``neg_l(i) = (max(-phi_l, 0) + h_l) x_i / y_l`` (proportional to rate, since each packet gets
``Cn s``). A packet keeps the smallest feedback of its path.

**Hop order.** The implemented law has a second branch (docs/algorithms/xcp.md): when a packet
arrives carrying less feedback ``c`` than the link would give it (an upstream link gave less),
the link spends ``pos_l - c`` of its *negative* residue on it instead of ``neg_l(i)``, so that
what it hands out stays consistent with what the packet carries. Downstream of a flow's
bottleneck the link's negative residue then runs out before the end of the interval, after a
fraction ``s_l = R_neg / sum_i demand_i`` of it, and the flows it controls receive only that
fraction of their negative feedback:

    f_l(i) = pos_l - s_l neg_l(i),    s_l = min(1, R_neg / sum_i want_l(i)),
    want_l(i) = pos_l - c_l(i) if pos_l - neg_l(i) >= c_l(i) else neg_l(i)

with ``c_l(i)`` the smallest feedback of the links before ``l`` on flow ``i``'s path. Flow
``i``'s rate changes per interval by ``min over l of f_l(i)``, and the equilibrium is where
every flow's change is zero. So a flow on a link *after* other flows' bottleneck gets more than
one on a link before it: on the 100/50/100 Mbit/s parking lot (scenarios/parking-lot.toml) the
short flow on the first link 65.11 Mbit/s of payload, on the third 69.37 (the simulator: 65.11
and 69.37; reversing every flow swaps both; tests/python/test_xcp_equilibrium.py).

Unlike max-min, a link that carries flows bottlenecked elsewhere keeps giving them their share
of positive feedback, which the downstream link throws away; the flows it does control must
balance their negative feedback against that share, which caps the link below capacity (Low,
Andrew and Wydrowski, "Understanding XCP: equilibrium and fairness", INFOCOM 2005: XCP solves a
*constrained* max-min problem and can leave a flow an arbitrarily small fraction of its max-min
rate). Not modelled: the queue term (zero at equilibrium), the per-packet spread of the
carried feedback, and how the flows' packets interleave within an interval (uniformly, here).
The last one matters when the long flow and the downstream short flow have the *same* RTT:
their window bursts then keep a fixed phase, and the simulated downstream flow gets 71.09
Mbit/s against the model's 69.37 (all RTTs 60 ms); with its RTT 2 ms longer 69.65, 5 ms longer
69.48, 24, 40 or 100 ms 69.33 to 69.37, twice as long 69.53 (a phase effect of a deterministic
run, like Floyd and Jacobson's; seeds do not change it).
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

    ``paths`` list each flow's links **in the order the flow crosses them** (the order matters:
    see the module doc). Iterates the per-interval map ``x_i += damping * min_l f_l(i)`` from
    a small equal start until the largest change is below ``tol`` times the largest capacity;
    the feedback a flow carries into each link is the previous iteration's minimum over the
    links before it.
    """
    cap = np.asarray(capacity, dtype=float)
    n_links, n_flows = len(cap), len(paths)
    a = np.zeros((n_links, n_flows))
    for i, path in enumerate(paths):
        for link in path:
            a[link, i] = 1.0
    on_path = a > 0
    counts = a.sum(axis=1)
    x = np.full(n_flows, 1e-3 * cap.min())
    scale = tol * cap.max()
    given = np.zeros((n_links, n_flows))  # each link's feedback to each flow, last iteration
    for _ in range(steps):
        y = a @ x
        phi = alpha * (cap - y)
        h = np.maximum(0.0, gamma * y - np.abs(phi))
        residue_neg = np.maximum(-phi, 0) + h
        pos = np.where(counts > 0, (np.maximum(phi, 0) + h) / np.maximum(counts, 1), 0.0)
        neg_per_rate = np.where(y > 0, residue_neg / np.maximum(y, 1e-300), 0.0)
        neg = neg_per_rate[:, None] * x[None, :]
        # What each flow carries into each link: the smallest feedback of the links before it.
        carried = np.full((n_links, n_flows), np.inf)
        for i, path in enumerate(paths):
            c = np.inf
            for link in path:
                carried[link, i] = c
                c = min(c, given[link, i])
        # The else branch: a flow given less upstream takes pos - carried from the negative
        # residue (not its own share); the residue runs out after a fraction s of the interval.
        wants = np.where(pos[:, None] - neg >= carried, pos[:, None] - carried, neg)
        demand = np.where(on_path, wants, 0.0).sum(axis=1)
        s = np.where(demand > residue_neg, residue_neg / np.maximum(demand, 1e-300), 1.0)
        given = pos[:, None] - s[:, None] * neg
        f = np.where(on_path, np.minimum(given, carried), np.inf).min(axis=0)
        x = np.maximum(x + damping * f, 1e-12 * cap.min())
        if np.abs(f).max() * damping < scale:
            break
    return x
