"""What xcclab implements: algorithms with their status and provenance (``xcc list``).

The names come from the registries of the Rust code (``_native.algorithm_names()``: the link
algorithms a link's ``queue`` may name, the host algorithms a flow's ``cc`` may name, the session
protocols), so nothing here decides what a scenario accepts. ``NOTES`` adds what a registry does
not know: whether an algorithm's laws are the paper's ("implemented") or our reconstruction from
what is known ("reconstructed"; docs/algorithms/<name>.md says what and from where), and where
its behaviour comes from (``/work/shared/specs/protocols.md`` tags: RFCs, the seed papers,
reference code). An algorithm without a note is listed with its doc page.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Algorithm:
    name: str
    role: str  # "host" | "link" | "host+link"
    status: str  # "implemented" | "reconstructed"
    provenance: str


#: name -> (status, provenance), for the names the registries give.
NOTES: dict[str, tuple[str, str]] = {
    "newreno": ("implemented", "RFC 6582/3168 (NewReno + ECN, on RFC 5681/6298)"),
    "droptail": ("implemented", "FIFO tail drop, ns-2 DropTail (packet mode)"),
    "red": ("implemented", "Floyd & Jacobson 1993, classic or gentle (ns-2)"),
    "maxnet": (
        "implemented",
        "seed 000 (router Fig. 3, source Fig. 2, MaxStart, 24-bit price; pace = true paces)",
    ),
    "xcp": (
        "implemented",
        "Katabi et al. SIGCOMM 2002 in the ns-2.35 (USC/ISI) form: bytes/s feedback, x = rtt s / "
        "cwnd, residues; alpha 0.4, beta 0.226, gamma 0.1",
    ),
    "rcp": (
        "implemented",
        "Dukkipati et al., Stanford ns-2 RCP v4 law with presets stanford (0.4/1), fct (0.1/1), "
        "ns2 (0.4/0.4); paced sources with probes; session protocol with fct (seed 004)",
    ),
    "piqi-rcp": (
        "reconstructed",
        "Jain & Loguinov IWQoS 2007 (abstract only), seeds 002/004: T = 5 ms, kappa* bound; law "
        "reconstructed",
    ),
    "jetmax": (
        "reconstructed",
        "Zhang, Leonard & Loguinov INFOCOM 2006 (abstracts only), seeds 000/002; laws and header "
        "reconstructed",
    ),
    "slbn": (
        "implemented",
        "seed 004 (StateLess B-Neck, Figs. 1-2; session simulator, xcc reproduce slbn-*)",
    ),
    "erica": (
        "implemented",
        "Kalyanaraman et al. ToN 2000 / ATM Forum 96-1172: ERICA+ eqs. (1)-(12) (OSU page) with "
        "constant Fraction, one ER per VC per interval; TM 4.0 source (session protocol)",
    ),
    "bfyz": (
        "reconstructed",
        "Bartal et al. Algorithmica 2002, abstract only: frugal consistent marking (O(1) per RM "
        "cell, per-session state, both passes of each cell as Charny's) rebuilt; see "
        "docs/algorithms/bfyz.md",
    ),
    "cobb": (
        "reconstructed",
        "Cobb & Gouda SSS 2008 / TCS 2011, abstracts + seed 004 only: constant link state rebuilt "
        "every period T; see docs/algorithms/cobb.md",
    ),
    "markmax": ("implemented", "seed 003 (MarkMax-B on the whole backlog, MarkMax-T on the tail)"),
    "cubic": (
        "implemented",
        "RFC 9438 as Linux tcp_cubic.c runs it: C = 0.4, beta = 717/1024, fast convergence, "
        "TCP-friendly region, HyStart (ACK train + delay), kernel fixed point; emulator: "
        "kernel cubic",
    ),
    "bbr": (
        "implemented",
        "BBR v1 as Linux tcp_bbr.c runs it (Cardwell et al. ACM Queue 2016): 10-round max bw, 10 s "
        "min RTT, STARTUP/DRAIN/PROBE_BW/PROBE_RTT, tcp_rate.c samples; emulator: kernel bbr",
    ),
}


def registry_names() -> dict[str, list[str]]:
    """The registry's names by role: "host", "link", "session" (one spelling per algorithm, as
    scenarios, `xcc list` and run.json write it)."""
    from .errors import load_native

    return {role: list(names) for role, names in load_native().algorithm_names()}


def algorithms() -> tuple[Algorithm, ...]:
    """Every algorithm of the registries, host ones first, with its role, status and provenance."""
    by_role = registry_names()
    order: list[str] = []
    for role in ("host", "link", "session"):
        order += [n for n in by_role[role] if n not in order]
    out = []
    for name in order:
        if name in by_role["session"] or (name in by_role["host"] and name in by_role["link"]):
            role = "host+link"
        else:
            role = "host" if name in by_role["host"] else "link"
        status, provenance = NOTES.get(name, ("implemented", f"docs/algorithms/{name}.md"))
        out.append(Algorithm(name, role, status, provenance))
    return tuple(out)
