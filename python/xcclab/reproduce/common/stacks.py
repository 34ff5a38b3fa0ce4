"""One experiment on several stacks (real packets beside the simulator): the paper's claims
judged per stack by the one scorer, and the real runs' distance from the simulated one.

An experiment's ``claims(metrics)`` (the simulated report's claims) is applied to each stack's
measurements in turn, so every stack is judged on the same claims, by :func:`xcclab.claims.score`
and :func:`xcclab.claims.verdict`; nothing here sets a tolerance for a paper's claim. The
real-versus-simulated rows (:class:`SimGap`) are a second, separate comparison: how far a real
stack's number is from the simulator's on the same scenario, against a bound we state.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...claims import Claim, Estimate, Scored, Verdict, estimate, score, verdict
from . import explicit
from .repeats import claims_over_runs, difference_interval, judge_difference

#: xcclab's UDP transport's MSS on the stacks' MaxNet runs (1432 B): 1500-byte datagrams with
#: its headers and MaxNet's shim (read from the registry), the size of the kernel stack's Linux
#: TCP packets (the namespaces' TUN devices carry up to 2000 B since issue 34; these experiments
#: keep the packets they were measured with).
UDP_MSS = f"{explicit.by_name('maxnet').on_wire().mss}B"
#: The router's counters kept from ``run_info["emu"]`` (docs/emu.md), under these names.
EMU_STATS = {
    "router_lateness_p99_us": "lateness_p99_us",
    "router_lateness_max_us": "lateness_max_us",
    "router_cpu_share": "router_cpu_share",
    "host_wake_late_max_us": "host_wake_late_max_us",
    "kernel_tun_tx_dropped": "kernel_tun_tx_dropped",
    "kernel_tun_rx_dropped": "kernel_tun_rx_dropped",
    "loadavg": "loadavg_1min_after",
}


def emu_stats(result: Any) -> dict[str, Any]:
    """A run's router counters (:data:`EMU_STATS`, NaN on the simulator) and, for a real run,
    its fidelity warnings."""
    emu = result.run_info.get("emu", {})
    m: dict[str, Any] = {key: emu.get(src, float("nan")) for key, src in EMU_STATS.items()}
    if emu:
        from ...emu import fidelity_warnings

        m["fidelity_warnings"] = fidelity_warnings(emu)
    return m


__all__ = [
    "SimGap",
    "claim_rows",
    "gap_rows",
    "score_stacks",
]


def score_stacks(
    claims: Callable[[dict[str, Any]], list[Claim]],
    measured: Mapping[str, dict[str, Any]],
    runs: Mapping[str, Sequence[dict[str, Any]]] | None = None,
) -> dict[str, tuple[list[Scored], Verdict]]:
    """Each stack's claims (``claims({"measured": measured[stack]})``) scored, and its
    verdict; a stack with several ``runs`` (its measurements, one per run) is judged on each
    claim's mean and 95 % interval over them (:func:`~.repeats.claims_over_runs`)."""
    out = {}
    for stack, m in measured.items():
        many = (runs or {}).get(stack)
        scored = [
            score(c) for c in (claims_over_runs(claims, many) if many else claims({"measured": m}))
        ]
        ids = [s.claim.id for s in scored]
        if len(set(ids)) != len(ids):
            raise ValueError(f"claim ids are not unique: {ids}")
        out[stack] = (scored, verdict(scored))
    return out


def _ours(s: Scored | None) -> str:
    if s is not None and getattr(s.claim, "observed", ""):
        return s.claim.observed  # a qualitative claim: our reading
    if s is None or s.ours is None:
        return "n/a"
    unit = f" {s.claim.unit}" if s.claim.unit else ""
    n = f" (n = {s.ours.n})" if s.ours.n > 1 else ""
    return s.ours.text() + unit + n


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def claim_rows(
    judged: Mapping[str, tuple[list[Scored], Verdict]],
    stacks: Sequence[str],
    *,
    kinds: Sequence[str] | None = None,
) -> tuple[list[str], list[list[str]]]:
    """The claims table: one row per claim (in the order of the first stack's claims), the
    paper's words and expected value, then each stack's value and verdict. ``kinds``: only
    claims of these types (``"reference"`` for the oracle's rows)."""
    by_stack = {s: {x.claim.id: x for x in judged[s][0]} for s in stacks}
    first = judged[stacks[0]][0]
    header = ["claim", "type", "the paper", "expected"]
    header += [f"{s}" for s in stacks] + [f"verdict {s}" for s in stacks]
    rows = []
    for x in first:
        c = x.claim
        if kinds is not None and c.kind not in kinds:
            continue
        words = f'"{_cell(c.quote.text)}" ({_cell(c.quote.where)})'
        if c.kind == "reference":
            words = "(not the paper's: " + _cell(getattr(c, "source", "reference")) + ")"
        row = [_cell(c.id), c.kind, words, _cell(c.expected())]
        row += [_cell(_ours(by_stack[s].get(c.id))) for s in stacks]
        row += [f"**{by_stack[s][c.id].status}**" if c.id in by_stack[s] else "n/a" for s in stacks]
        rows.append(row)
    return header, rows


@dataclass(frozen=True)
class SimGap:
    """A real stack's number against the simulator's on the same scenario: ``bound`` is the
    largest difference (real - simulated) we accept, in ``unit``, or as a share of the
    simulated value when ``relative``."""

    quantity: str
    unit: str
    sim: float | None
    real: dict[str, float | None]
    bound: float
    relative: bool = False
    #: each real stack's value in every run (the interval's data); a stack without runs here
    #: is its one value in ``real``
    runs: Mapping[str, Sequence[float | None]] = field(default_factory=dict)
    #: the simulator's value in every run (seeds 1..n); empty: its one value ``sim``
    sim_runs: Sequence[float | None] = ()

    def interval(self, stack: str) -> Estimate | None:
        """The stack's mean and 95 % interval over its runs (one run: a point)."""
        return _over(self.runs.get(stack) or [self.real.get(stack)])

    def sim_interval(self) -> Estimate | None:
        """The simulator's mean and 95 % interval over its runs (one run: a point)."""
        return _over(self.sim_runs or [self.sim])

    def _difference(self, stack: str) -> Estimate | None:
        e, s = self.interval(stack), self.sim_interval()
        return None if e is None or s is None else difference_interval(e, s)

    def status(self, stack: str) -> str | None:
        """real - simulated against the bound on the intervals (the scorer's rule):
        "holds", "fails", "inconclusive"; None when either side is missing."""
        d = self._difference(stack)
        if d is None or self.sim is None:
            return None
        if self.relative:
            if not self.sim:
                return None
            d = d.scaled(1 / abs(self.sim))
        return judge_difference(d, self.bound + 1e-12)

    def diff(self, stack: str) -> float | None:
        r = self.real.get(stack)
        if r is None or self.sim is None or not (math.isfinite(r) and math.isfinite(self.sim)):
            return None
        if self.relative:
            return (r - self.sim) / abs(self.sim) if self.sim else None
        return r - self.sim

    def within(self, stack: str) -> bool | None:
        d = self.diff(stack)
        return None if d is None else abs(d) <= self.bound + 1e-12

    def bound_text(self) -> str:
        if self.relative:
            return f"±{100 * self.bound:g} %"
        if self.unit == "%":
            return f"±{self.bound:g} points"
        return f"±{self.bound:g} {self.unit}".rstrip()

    def diff_text(self, stack: str, digits: int = 2) -> str:
        """The difference of the means and, over several runs, its interval, with the
        verdict of :meth:`status` (within, outside, inconclusive)."""
        d = self._difference(stack)
        if d is None or self.sim is None:
            return "n/a"
        if self.relative:
            if not self.sim:
                return "n/a"
            d = d.scaled(100 / abs(self.sim))
        text = f"{d.mean:+.1f} %" if self.relative else f"{d.mean:+.{digits}f}"
        if d.n > 1:
            ends = (f"{x:+.1f}" if self.relative else f"{x:+.{digits}f}" for x in (d.lo, d.hi))
            text += " [{}, {}]".format(*ends)
        word = {"holds": "within", "fails": "outside", "inconclusive": "inconclusive"}
        return f"{text} ({word[self.status(stack) or 'fails']})"

    def to_json(self) -> dict[str, Any]:
        return {
            "quantity": self.quantity,
            "unit": self.unit,
            "sim": self.sim,
            "real": self.real,
            "bound": self.bound,
            "relative": self.relative,
            "diff": {s: self.diff(s) for s in self.real},
            "within": {s: self.within(s) for s in self.real},
            "runs": {s: list(v) for s, v in self.runs.items()},
            "sim_runs": list(self.sim_runs),
            "sim_interval": (
                None if self.sim_interval() is None else self.sim_interval().to_json()  # type: ignore[union-attr]
            ),
            "interval": {
                s: (None if self.interval(s) is None else self.interval(s).to_json())  # type: ignore[union-attr]
                for s in self.real
            },
            "status": {s: self.status(s) for s in self.real},
        }


def gap_rows(
    gaps: Sequence[SimGap], stacks: Sequence[str], digits: int = 2
) -> tuple[list[str], list[list[str]]]:
    """The real-versus-simulated table: the simulated value, each real stack's, the bound and
    each difference with whether it is within the bound."""
    header = ["quantity", "sim", *stacks, "bound", *(f"{s} - sim" for s in stacks)]
    rows = []
    for g in gaps:
        rows.append(
            [
                _cell(f"{g.quantity} ({g.unit})" if g.unit else g.quantity),
                _interval_text(g.sim_interval(), digits),
                *(_interval_text(g.interval(s), digits) for s in stacks),
                g.bound_text(),
                *(g.diff_text(s, digits) for s in stacks),
            ]
        )
    return header, rows


def gap_summary(gaps: Sequence[SimGap], stack: str) -> tuple[int, int]:
    """(within the bound on the runs' interval, measured) over ``gaps`` for ``stack``."""
    judged = [g.status(stack) for g in gaps]
    return sum(1 for w in judged if w == "holds"), sum(1 for w in judged if w is not None)


def _over(values: Sequence[float | None]) -> Estimate | None:
    e = estimate([v for v in values if v is not None and math.isfinite(v)])
    return e if e.n else None


def _interval_text(e: Estimate | None, digits: int) -> str:
    """A mean, with its 95 % interval and n over several runs."""
    if e is None:
        return "n/a"
    if e.n <= 1:
        return _num(e.mean, digits)
    return f"{e.mean:.{digits}f} [{e.lo:.{digits}f}, {e.hi:.{digits}f}] (n = {e.n})"


def _num(x: float | None, digits: int) -> str:
    if x is None or not math.isfinite(x):
        return "n/a"
    return f"{x:.{digits}f}"


def run_real(
    run: Callable[[], Any], attempts: int = 2, log: Callable[[str], None] | None = None
) -> tuple[Any | None, list[str]]:
    """A real-packet run, tried up to ``attempts`` times: a run that the emu fails (kernel-side
    drops, which it refuses to report as results) is a finding, recorded, not a crash. Returns
    the first result (or None) and each failed attempt's message."""
    failures: list[str] = []
    for _ in range(attempts):
        try:
            return run(), failures
        except RuntimeError as exc:
            failures.append(str(exc))
            if log:
                log(f"failed: {exc}")
    return None, failures


def failure_text(failures: Mapping[str, Sequence[str]], hosts: Sequence[str] = ()) -> str:
    """The failed attempts of the real stacks, quoted, for the report (empty if none); with
    the scenario's ``hosts``, where each lost its packets."""
    lines = []
    for stack, msgs in failures.items():
        for i, msg in enumerate(msgs, 1):
            where = drop_summary(msg, hosts) if hosts else ""
            lines.append(
                f"- `{stack}`, attempt {i}: `{_cell(msg)}`" + (f"; {where}" if where else "")
            )
    return "\n".join(lines)


_COUNTER_FIELDS = ("rx_dropped", "tx_dropped", "udp_rcvbuf_errors", "udp_sndbuf_errors")


def kernel_drops(message: str, hosts: Sequence[str]) -> list[dict[str, Any]]:
    """The per-host counters (``DevCounters {...}``, one per host namespace in the scenario's
    host order) that the emu's failure message lists; empty if it lists none."""
    import re

    out = []
    blocks = re.findall(r"DevCounters \{([^}]*)\}", message)
    for i, block in enumerate(blocks):
        fields = {k: int(v) for k, v in re.findall(r"(\w+): (\d+)", block)}
        fields["host"] = hosts[i] if i < len(hosts) else f"host {i}"
        out.append(fields)
    return out


def drop_summary(message: str, hosts: Sequence[str]) -> str:
    """Where a failed run lost its packets, in words: each host with a non-zero drop counter,
    and how many packets each host's TUN device carried."""
    counters = kernel_drops(message, hosts)
    if not counters:
        return ""
    lost = [
        f"{c['host']} {', '.join(f'{k} {c[k]}' for k in _COUNTER_FIELDS if c.get(k))}"
        for c in counters
        if any(c.get(k) for k in _COUNTER_FIELDS)
    ]
    carried = ", ".join(
        f"{c['host']} {c.get('tx_packets', 0)} / {c.get('rx_packets', 0)}" for c in counters
    )
    return f"lost at: {'; '.join(lost) or 'none'} (packets sent / received per host: {carried})"
