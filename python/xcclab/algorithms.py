"""What xcclab implements: algorithms with their status and provenance (``xcc list``).

Provenance cites where the behaviour comes from (``/work/shared/specs/protocols.md`` tags:
RFCs, the seed papers, reference code). "planned" algorithms are specified but not yet in
the simulator; scenarios that name them are rejected by the scenario parser. "reconstructed"
algorithms run in the simulator, but their papers' equations could not be read: the laws are
our reconstruction from what is known (docs/algorithms/<name>.md says what and from where).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Algorithm:
    name: str
    role: str  # "host" | "link" | "host+link"
    status: str  # "implemented" | "reconstructed" | "planned"
    provenance: str


ALGORITHMS: tuple[Algorithm, ...] = (
    Algorithm("newreno", "host", "implemented", "RFC 6582/3168 (NewReno + ECN, on RFC 5681/6298)"),
    Algorithm("droptail", "link", "implemented", "FIFO tail drop, ns-2 DropTail (packet mode)"),
    Algorithm("red", "link", "implemented", "Floyd & Jacobson 1993, classic or gentle (ns-2)"),
    Algorithm(
        "maxnet",
        "host+link",
        "implemented",
        "seed 000 (router Fig. 3, source Fig. 2, MaxStart, 24-bit price; pace = true paces)",
    ),
    Algorithm(
        "xcp",
        "host+link",
        "implemented",
        "Katabi et al. SIGCOMM 2002 in the ns-2.35 (USC/ISI) form: bytes/s feedback, x = rtt s / "
        "cwnd, residues; alpha 0.4, beta 0.226, gamma 0.1",
    ),
    Algorithm(
        "rcp",
        "host+link",
        "implemented",
        "Dukkipati et al., Stanford ns-2 RCP v4 law with presets stanford (0.4/1), fct (0.1/1), "
        "ns2 (0.4/0.4); paced sources with probes; session protocol with fct (seed 004)",
    ),
    Algorithm(
        "piqi-rcp",
        "host+link",
        "reconstructed",
        "Jain & Loguinov IWQoS 2007 (abstract only), seeds 002/004: T = 5 ms, kappa* bound; "
        "law reconstructed",
    ),
    Algorithm(
        "jetmax",
        "host+link",
        "reconstructed",
        "Zhang, Leonard & Loguinov INFOCOM 2006 (abstracts only), seeds 000/002; "
        "laws and header reconstructed",
    ),
    Algorithm(
        "slbn",
        "host+link",
        "implemented",
        "seed 004 (StateLess B-Neck, Figs. 1-2; session simulator, xcc reproduce slbn-*)",
    ),
    Algorithm(
        "erica",
        "host+link",
        "implemented",
        "Kalyanaraman et al. ToN 2000 / ATM Forum 96-1172: ERICA+ eqs. (1)-(12) (OSU page)"
        " with constant Fraction, one ER per VC per interval; TM 4.0 source (session protocol)",
    ),
    Algorithm(
        "bfyz",
        "host+link",
        "reconstructed",
        "Bartal et al. Algorithmica 2002, abstract only: frugal consistent marking"
        " (O(1) per RM cell, per-session state, both passes of each cell as Charny's) rebuilt;"
        " see docs/algorithms/bfyz.md",
    ),
    Algorithm(
        "cobb",
        "host+link",
        "reconstructed",
        "Cobb & Gouda SSS 2008 / TCS 2011, abstracts + seed 004 only: constant link state"
        " rebuilt every period T; see docs/algorithms/cobb.md",
    ),
    Algorithm("markmax-b", "link", "implemented", "seed 003 (MarkMax, backlog variant)"),
    Algorithm("markmax-t", "link", "implemented", "seed 003 (MarkMax, tail variant)"),
)
