"""The fluid model of MarkMax (seed 003, Section III), event-driven and exact between events.

N sources share a fluid FIFO of capacity ``mu``. Between congestion signals source i increases
its rate linearly, ``lambda_i(t) = lambda_{i,k} + alpha_i (t - t_k)`` (alpha_i = MSS / RTT_i^2),
so the total backlog follows the parabolas of eq. (1) (busy buffer) and eq. (2) (an empty
period, then a new busy period). Every time the backlog *reaches* theta from below one source is
cut, ``lambda_j <- beta lambda_j``, and the cut is repeated until the total rate is below mu
(no feedback delay, so the backlog does not move meanwhile):

- MarkMax-B cuts the source with the largest backlog ``x_i(t)``;
- MarkMax-T cuts the source with the largest instantaneous rate ``lambda_i(t)``.

Per-source backlogs come from the network-calculus construction of Section III:
``R_{i,in}(t)`` is piecewise quadratic (eq. (4)); the FIFO serves at mu from the start u of the
busy period, ``R_out(t) = R_in(u) + mu (t - u)``; the bits leaving at t entered at v with
``R_in(v) = R_out(t)`` (solved in closed form on the segment that contains it) and
``x_i(t) = R_{i,in}(t) - R_{i,in}(v)``.

The simulation jumps from event to event (theta reached, buffer empties, buffer starts filling
again, end of run), each time solving the quadratic of eq. (1)/(2) for the next one: there is
no time step. Everything is in bytes and seconds.

Choices the paper leaves open (see docs/algorithms/markmax.md): sources start at rate 0 with an
empty buffer unless told otherwise; if MarkMax-B's repeated cuts of one source cannot bring the
rate below mu (the non-termination the paper mentions for huge theta, protocols.md §13.7-6),
after ``max_cuts`` cuts the remaining ones go to the largest rate (MarkMax-T's rule, which
always terminates) and the occurrence is counted in :attr:`FluidResult.cap_fallbacks`.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = [
    "FluidResult",
    "MarkMaxFluid",
    "backlog_closed_form",
    "beta_tilde_bounds",
    "jain",
    "lambda_minus_bounds",
    "lambda_plus_bounds",
    "lemma2_theta_max",
    "lemma3_holds",
    "lemma3_theta_min",
    "lemma4_queue_bound",
    "single_cut_suffices",
]


# -- closed forms and the guideline bounds of Section III-A ---------------------------------
def backlog_closed_form(t: float, x0: float, lam0: float, mu: float, alpha: float) -> float:
    """Total backlog at ``t`` from ``(x0, lam0)`` with no cut: eq. (1), or eq. (2) when the
    buffer empties first (``x0 < (lam0 - mu)^2 / (2 alpha)`` and ``lam0 < mu``)."""
    if x0 >= (lam0 - mu) ** 2 / (2 * alpha) or lam0 >= mu:
        return x0 + (lam0 - mu) * t + alpha / 2 * t * t  # eq. (1)
    t1 = (mu - lam0 - math.sqrt((mu - lam0) ** 2 - 2 * alpha * x0)) / alpha
    t2 = (mu - lam0) / alpha
    if t <= t1:
        return x0 + (lam0 - mu) * t + alpha * t * t / 2
    if t <= t2:
        return 0.0
    return alpha / 2 * (t - t2) ** 2  # eq. (2), third piece


def lambda_minus_bounds(mu: float, alpha: float, theta: float) -> tuple[float, float]:
    """Eq. (5): the total rate just before the cut(s),
    ``mu <= lambda^- <= mu + sqrt(2 alpha theta)``."""
    return mu, mu + math.sqrt(2 * alpha * theta)


def lambda_plus_bounds(mu: float, beta: float) -> tuple[float, float]:
    """Eq. (6): the total rate just after the cut(s), ``beta mu <= lambda^+ <= mu``."""
    return beta * mu, mu


def beta_tilde_bounds(
    mu: float, alpha: float, theta: float, beta: float, n: int
) -> tuple[float, float]:
    """Lemma 1, eq. (7) (MarkMax-T): bounds on the effective cut ``lambda^+ / lambda^-``."""
    return beta / (1 + math.sqrt(2 * alpha * theta) / mu), (n + beta - 1) / n


def lemma2_theta_max(mu: float, alpha: float, beta: float, n: int) -> float:
    """Lemma 2, eq. (9): for ``theta`` at most this, one cut of the largest rate suffices."""
    return mu * mu * (1 - beta) ** 2 / (2 * alpha * (n - 1 + beta) ** 2)


def single_cut_suffices(rates: Sequence[float], mu: float, beta: float) -> bool:
    """Whether cutting only the largest rate brings the total to at most mu (Lemma 2's claim)."""
    j = max(range(len(rates)), key=lambda i: rates[i])
    return sum(rates) - (1 - beta) * rates[j] <= mu


def lemma3_holds(mu: float, alpha: float, theta: float, beta: float) -> bool:
    """Lemma 3, eq. (10): ``theta > mu^2 (1 - zeta)^2 / (2 alpha)`` with
    ``zeta = beta / (1 + sqrt(2 alpha theta) / mu)`` guarantees a positive backlog (MarkMax-T)."""
    zeta = beta / (1 + math.sqrt(2 * alpha * theta) / mu)
    return theta > mu * mu * (1 - zeta) ** 2 / (2 * alpha)


def lemma3_theta_min(mu: float, alpha: float, beta: float) -> float:
    """The smallest theta satisfying Lemma 3 (the condition is monotone in theta; bisection)."""
    lo, hi = 0.0, mu * mu / (2 * alpha)  # zeta >= 0 so hi always satisfies it
    for _ in range(200):
        mid = (lo + hi) / 2
        if lemma3_holds(mu, alpha, mid, beta):
            hi = mid
        else:
            lo = mid
    return hi


def lemma4_queue_bound(theta: float, alpha: float, rtt_max: float) -> float:
    """Lemma 4, eq. (11): backlog one largest RTT after reaching theta (a guide for theta_h)."""
    return theta + math.sqrt(2 * alpha * theta) * rtt_max + alpha / 2 * rtt_max**2


def jain(values: Sequence[float]) -> float:
    """Jain's fairness index (sum g)^2 / (N sum g^2)."""
    s2 = sum(v * v for v in values)
    return sum(values) ** 2 / (len(values) * s2) if s2 > 0 else float("nan")


# -- the simulator --------------------------------------------------------------------------
@dataclass
class FluidResult:
    """What a run measured over the window ``[t_start, t_end]``."""

    t_start: float
    t_end: float
    mu: float
    delivered: list[float]  # bytes of each source served in the window
    mean_backlog: float  # time average of the total backlog over the window (bytes)
    theta_events: int = 0  # times the backlog reached theta (in the window)
    cuts: list[int] = field(default_factory=list)  # cuts per source (in the window)
    cuts_per_event: list[int] = field(default_factory=list)  # cuts at each theta event
    cap_fallbacks: int = 0
    events: int = 0
    samples: list[tuple[float, float, list[float], list[float]]] = field(default_factory=list)

    @property
    def goodputs(self) -> list[float]:
        """Bytes/s of each source over the window."""
        return [d / (self.t_end - self.t_start) for d in self.delivered]

    @property
    def jain(self) -> float:
        return jain(self.goodputs)

    @property
    def utilisation(self) -> float:
        """rho = D / (mu (t_end - t_start))."""
        return sum(self.delivered) / (self.mu * (self.t_end - self.t_start))


class MarkMaxFluid:
    """MarkMax-B (``variant="b"``) or MarkMax-T (``"t"``) on the fluid model of Section III.

    ``mu`` bytes/s, ``alphas`` bytes/s^2, ``theta`` bytes. ``rates0`` and ``backlog0`` (per
    source, bytes) set the state at time 0; the initial backlog is taken as interleaved in
    proportion to ``backlog0`` in the FIFO.
    """

    def __init__(
        self,
        mu: float,
        alphas: Sequence[float],
        theta: float,
        *,
        beta: float = 0.5,
        variant: str = "b",
        rates0: Sequence[float] | None = None,
        backlog0: Sequence[float] | None = None,
        max_cuts: int = 64,
    ) -> None:
        if variant not in ("b", "t"):
            raise ValueError(f"variant must be 'b' or 't', got {variant!r}")
        if not (mu > 0 and theta > 0 and 0 < beta < 1) or any(a <= 0 for a in alphas):
            raise ValueError("need mu > 0, theta > 0, 0 < beta < 1 and every alpha_i > 0")
        self.mu, self.theta, self.beta, self.variant = mu, theta, beta, variant
        self.alphas = list(alphas)
        self.n = len(self.alphas)
        self.alpha = sum(self.alphas)
        self.rates0 = list(rates0) if rates0 is not None else [0.0] * self.n
        self.backlog0 = list(backlog0) if backlog0 is not None else [0.0] * self.n
        self.max_cuts = max_cuts

    # The state between events: time, total backlog, per-source rate and cumulative input
    # S_i = R_{i,in}(t), total output R_out(t), and the busy period's input history.
    def _reset(self) -> None:
        self.t = 0.0
        self.lam = list(self.rates0)
        self.s_in = list(self.backlog0)
        self.x = sum(self.backlog0)
        self.r_out = 0.0
        self.busy = self.x > 0 or sum(self.lam) >= self.mu
        self.cuts_total = [0] * self.n
        self.cap_fallbacks = 0
        # History of the current busy period: one entry per segment start, eq. (4).
        self._h_t: list[float] = []
        self._h_s: list[float] = []  # total R_in at the segment start
        self._h_lam: list[float] = []  # total rate at the segment start
        self._h_si: list[list[float]] = []
        self._h_lami: list[list[float]] = []
        self._h_first = 0
        # The initial backlog: a jump of R_in at time 0 (served before anything else).
        self._jump = sum(self.backlog0)
        self._push_segment()

    def _push_segment(self) -> None:
        self._h_t.append(self.t)
        self._h_s.append(sum(self.s_in))
        self._h_lam.append(sum(self.lam))
        self._h_si.append(list(self.s_in))
        self._h_lami.append(list(self.lam))

    def _restart_history(self) -> None:
        """The buffer is empty: earlier input is all served, forget it."""
        self._h_t.clear()
        self._h_s.clear()
        self._h_lam.clear()
        self._h_si.clear()
        self._h_lami.clear()
        self._h_first = 0
        self._jump = 0.0
        self._push_segment()

    def _r_in_at_level(self, target: float) -> list[float]:
        """Per-source ``R_{i,in}(v)`` where ``R_in(v) = target`` (the FIFO's exit point)."""
        if target < self._jump:
            # Inside the initial backlog: proportional interleaving.
            return [b * target / self._jump for b in self.backlog0]
        k = bisect.bisect_right(self._h_s, target, lo=self._h_first) - 1
        k = max(k, self._h_first)
        self._h_first = k  # v never moves back: earlier segments are not needed again
        if k > 4096 and k > len(self._h_s) // 2:
            for h in (self._h_t, self._h_s, self._h_lam, self._h_si, self._h_lami):
                del h[:k]
            self._h_first = k = 0
        d = max(target - self._h_s[k], 0.0)
        lam = self._h_lam[k]
        # Solve alpha/2 s^2 + lam s = d for s >= 0 (eq. (4)), in the cancellation-free form.
        s = 2 * d / (lam + math.sqrt(lam * lam + 2 * self.alpha * d)) if d > 0 else 0.0
        return [
            si + li * s + ai / 2 * s * s
            for si, li, ai in zip(self._h_si[k], self._h_lami[k], self.alphas)
        ]

    def backlogs(self) -> list[float]:
        """Per-source backlog ``x_i(t) = R_{i,in}(t) - R_{i,in}(v)`` now."""
        if self.x <= 0:
            return [0.0] * self.n
        out = self._r_in_at_level(self.r_out)
        return [max(a - b, 0.0) for a, b in zip(self.s_in, out)]

    def delivered(self) -> list[float]:
        """Per-source ``R_{i,out}(t)`` now."""
        if self.x <= 0:
            return list(self.s_in)
        return self._r_in_at_level(self.r_out)

    def _advance(self, s: float) -> float:
        """Moves the state ``s`` seconds along the current parabola; returns the integral of the
        backlog over the step."""
        if s <= 0:
            return 0.0
        lam_tot = sum(self.lam)
        area = 0.0
        if self.busy:
            area = self.x * s + (lam_tot - self.mu) * s * s / 2 + self.alpha * s**3 / 6
            self.x = max(self.x + (lam_tot - self.mu) * s + self.alpha / 2 * s * s, 0.0)  # eq. (1)
            self.r_out += self.mu * s
        for i, a in enumerate(self.alphas):
            self.s_in[i] += self.lam[i] * s + a / 2 * s * s
            self.lam[i] += a * s
        if not self.busy:
            self.r_out = sum(self.s_in)
        self.t += s
        return area

    def _cut(self) -> int:
        """The cut(s) at theta; returns how many."""
        order = self.backlogs() if self.variant == "b" else None
        n = 0
        while True:
            if self.variant == "t" or n >= self.max_cuts:
                if n == self.max_cuts and self.variant == "b":
                    self.cap_fallbacks += 1
                j = max(range(self.n), key=lambda i: (self.lam[i], -i))
            else:
                j = max(range(self.n), key=lambda i: (order[i], -i))
            self.lam[j] *= self.beta
            self.cuts_total[j] += 1
            n += 1
            if sum(self.lam) < self.mu:
                return n

    def _next_event(self) -> tuple[float, str]:
        """Seconds to the next event and its kind, from eq. (1)/(2)."""
        lam_tot = sum(self.lam)
        g = lam_tot - self.mu
        a = self.alpha
        if not self.busy:
            return (self.mu - lam_tot) / a, "fill"
        best = (math.inf, "")
        # Backlog reaches theta from below: the larger root of a/2 s^2 + g s + (x - theta) = 0.
        disc = g * g - 2 * a * (self.x - self.theta)
        if disc >= 0:
            s = (-g + math.sqrt(disc)) / a
            if s > 0 or (s == 0 and self.x >= self.theta and g >= 0):
                best = (max(s, 0.0), "theta")
        # Buffer empties (eq. (2)'s t_1): the smaller root of a/2 s^2 + g s + x = 0, if g < 0.
        if g < 0 and self.x > 0:
            disc0 = g * g - 2 * a * self.x
            if disc0 >= 0:
                s0 = 2 * self.x / (-g + math.sqrt(disc0))
                if s0 < best[0]:
                    best = (s0, "empty")
        return best

    def run(
        self,
        t_end: float,
        *,
        t_start: float = 0.0,
        sample_times: Sequence[float] = (),
    ) -> FluidResult:
        """Simulates ``[0, t_end]``; metrics over ``[t_start, t_end]``. ``sample_times`` (sorted)
        record ``(t, x, rates, per-source backlogs)`` in :attr:`FluidResult.samples`."""
        if not 0 <= t_start < t_end:
            raise ValueError("need 0 <= t_start < t_end")
        self._reset()
        samples = sorted(sample_times)
        si = 0
        out0: list[float] | None = [0.0] * self.n if t_start == 0 else None
        cuts0 = [0] * self.n
        area = 0.0
        events = 0
        theta_events = 0
        cuts_per_event: list[int] = []
        result_samples = []
        while True:
            s_ev, kind = self._next_event()
            stops = [(s_ev, kind), (t_end - self.t, "end")]
            if out0 is None:
                stops.append((t_start - self.t, "window"))
            if si < len(samples):
                stops.append((samples[si] - self.t, "sample"))
            s, kind = min(stops, key=lambda p: p[0])
            s = max(s, 0.0)
            da = self._advance(s)
            if out0 is not None:
                area += da
            events += 1
            if kind == "end":
                break
            if kind == "window":
                out0 = self.delivered()
                cuts0 = list(self.cuts_total)
                continue
            if kind == "sample":
                result_samples.append((self.t, self.x, list(self.lam), self.backlogs()))
                si += 1
                continue
            if kind == "theta":
                self.x = max(self.x, self.theta)  # exactly theta (floating point aside)
                n = self._cut()
                if out0 is not None:
                    theta_events += 1
                    cuts_per_event.append(n)
                self._push_segment()
            elif kind == "empty":
                self.x = 0.0
                self.busy = False
                self.r_out = sum(self.s_in)
                self._restart_history()
            elif kind == "fill":
                self.busy = True
                self._restart_history()
        delivered = [b - a for a, b in zip(out0 or [0.0] * self.n, self.delivered())]
        return FluidResult(
            t_start=t_start,
            t_end=t_end,
            mu=self.mu,
            delivered=delivered,
            mean_backlog=area / (t_end - t_start),
            theta_events=theta_events,
            cuts=[b - a for a, b in zip(cuts0, self.cuts_total)],
            cuts_per_event=cuts_per_event,
            cap_fallbacks=self.cap_fallbacks,
            events=events,
            samples=result_samples,
        )
