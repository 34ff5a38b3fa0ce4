"""A paper's claims as data, and the one scorer that judges them (docs/reproduction/verdicts.md).

A claim is what a paper says, quoted (:class:`Quote`), with its type and how we measure it:

- :class:`Point`: a number with the precision the paper states it at (:data:`PRECISION`);
- :class:`Bound`: "below 5 %", "over two thirds";
- :class:`Ordering`: A above B by a named statistic;
- :class:`Shape`: a point, bound or range on a statistic of a time series (overshoot, range of
  an oscillation over a window, settling time), with its definition;
- :class:`Qualitative`: a statement we can only describe; our reading is shown, not counted;
- :class:`Reference`: a value from the max-min oracle or a protocol's own equilibrium. Never the
  paper's: shown in its own column, never counted in a verdict.

Our measurement is a number or an :class:`Estimate` (mean and 95 % confidence interval over
seeds). :func:`score` judges a claim on the interval; :func:`verdict` gives an experiment's
verdict from its claims by the rule in :data:`VERDICT_RULE`. Nothing else sets a tolerance.

The rules a claim must follow (issue 31; :func:`check_claims` enforces them, so an experiment
that breaks one fails to judge):

- **one owner**: a paper claim (:meth:`Claim.paper_key`: where it is and its words) is counted
  in one experiment; another that shows it sets ``counted_in`` to the owner's id and the claim
  is shown "also shown in", never counted there (:func:`duplicate_counted` finds breaches
  across experiments);
- **the paper's definition**: a measure on another definition than the paper's (delivered
  against assigned rates, another window) sets ``second_definition``: shown apart, never
  deciding, and there must be a claim on the paper's definition beside it (same base id);
- **windows**: a :class:`Shape` (a statistic of a time series) declares its ``window``: one of
  :data:`WINDOWS` (no fixed-bin alignment: sliding windows, every alignment, the raw samples,
  the whole run) or ``"open: ..."``, a window the paper leaves open, which must then be swept
  (sensitivity rows of the same base id);
- **contrasts**: a quote that states a contrast (``Quote.contrast``) is counted only as an
  :class:`Ordering`; points on either side of it are shown apart;
- **rounding**: a number printed rounded is accepted within at least half its last printed
  digit (:meth:`Point.band`, ``printed``);
- **causes**: a failing claim's cause line names the measurement that shows it (``evidence``:
  keys of the report's ``metrics.json``, which must exist) or says "cause not established";
  :func:`cause_line` renders both the same way every time.
"""

from __future__ import annotations

import math
import statistics
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

__all__ = [
    "PRECISION",
    "VERDICT_RULE",
    "Bound",
    "Claim",
    "Estimate",
    "Ordering",
    "Point",
    "Qualitative",
    "Quote",
    "Reference",
    "Scored",
    "Shape",
    "WINDOWS",
    "cause_line",
    "check_claims",
    "duplicate_counted",
    "estimate",
    "score",
    "verdict",
]

#: The tolerance policy: how far from a paper's number ours may be, by how the paper states
#: it. "table": a printed value (a table cell, a number with its digits): 5 % of it. "about":
#: "~", "about", "roughly", a number read off a figure: 25 %. "order": "of the order of": within
#: a factor of 3. "exact": a count or an identity (0 drops, 18 bits): equal. Values in points
#: (percentages, percentiles, shares in %) are compared in points: 5 points for "table", 10 for
#: "about", or the relative band if that is wider (large percentages: an overshoot of 300 %). A
#: paper value of 0 (not in points) is compared in absolute terms, in the claim's own
#: unit ("zero"): a printed or exact 0 must be 0; "about 0" ("a queue of zero") allows one unit
#: (one packet, one drop).
PRECISION: dict[str, dict[str, float]] = {
    "table": {"rel": 0.05, "points": 5.0, "zero": 0.0},
    "about": {"rel": 0.25, "points": 10.0, "zero": 1.0},
    "order": {"factor": 3.0, "points": 10.0, "zero": 1.0},
    "exact": {"rel": 0.0, "points": 0.0, "zero": 0.0},
}

VERDICT_RULE = (
    "An experiment's verdict counts its paper claims of type point, bound, ordering and shape "
    "that do not depend on a reconstruction: reproduced if every one holds; partly if at least "
    "half hold; not reproduced if fewer; inconclusive or unmeasured claims count as not holding. "
    "With no such claim the verdict is qualitative. References, qualitative claims and claims "
    "that depend on a reconstruction are shown and tallied apart, never in the verdict; so are "
    "sensitivity runs (a setting the paper leaves open, other than our default), measures on a "
    "second definition (not the paper's) and claims counted in another experiment (each paper "
    "claim is counted once; an experiment whose every such claim is counted elsewhere is "
    "'counted elsewhere')."
)

#: How a :class:`Shape`'s window is placed, when it is not a parameter left open ("open: ..."):
#: never fixed bins whose alignment could split an event.
WINDOWS = ("samples", "sliding", "all alignments", "whole run", "none")

#: The words that open every cause line whose cause is not measured.
NOT_ESTABLISHED = "cause not established"

HOLDS, FAILS, INCONCLUSIVE, UNMEASURED, DESCRIBED = (
    "holds",
    "fails",
    "inconclusive",
    "not measured",
    "described",
)


@dataclass(frozen=True)
class Quote:
    """The paper's own words and where they are (seed id, section, figure or table);
    ``contrast``: the words state a contrast (A, in contrast B), scored as one ordering."""

    text: str
    where: str
    contrast: bool = False


@dataclass(frozen=True)
class Estimate:
    """A measurement: mean and 95 % confidence interval over ``n`` runs (lo = hi = mean for one
    deterministic run). A censored measurement is bounded on one side only: ``hi = inf`` (at
    least ``lo``: sessions still running when the run ended) or ``lo = -inf``."""

    mean: float
    lo: float
    hi: float
    n: int = 1

    @classmethod
    def at_least(cls, lo: float) -> Estimate:
        """A value known only from below (censored): judged on [lo, inf)."""
        return cls(lo, lo, math.inf, 1)

    def to_json(self) -> dict[str, Any]:
        bound = [b if math.isfinite(b) else None for b in (self.lo, self.hi)]
        return {"mean": self.mean, "ci95": bound, "n": self.n}

    def scaled(self, k: float) -> Estimate:
        """The same estimate in another unit (``k`` > 0)."""
        return Estimate(self.mean * k, self.lo * k, self.hi * k, self.n)

    def text(self, digits: int = 3) -> str:
        if math.isfinite(self.lo) and not math.isfinite(self.hi):
            return f"at least {_num(self.lo, digits)}"
        if self.n <= 1:
            return _num(self.mean, digits)
        return f"{_num(self.mean, digits)} [{_num(self.lo, digits)}, {_num(self.hi, digits)}]"


# Two-sided 97.5 % Student t quantiles by degrees of freedom (scipy is not a dependency).
_T975 = {
    1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
    10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110,
    18: 2.101, 19: 2.093, 20: 2.086, 25: 2.060, 30: 2.042, 40: 2.021, 60: 2.000,
}  # fmt: skip


def t975(df: int) -> float:
    """The 97.5 % quantile of Student's t with ``df`` degrees of freedom (1.96 beyond 60)."""
    if df < 1:
        raise ValueError("a confidence interval needs at least two values")
    if df in _T975:
        return _T975[df]
    larger = [k for k in _T975 if k > df]
    return _T975[min(larger)] if larger else 1.96


def estimate(values: Sequence[float]) -> Estimate:
    """Mean and Student-t 95 % confidence interval of ``values`` (one value: a point)."""
    xs = [float(v) for v in values if v is not None and math.isfinite(v)]
    if not xs:
        return Estimate(math.nan, math.nan, math.nan, 0)
    mean = statistics.fmean(xs)
    if len(xs) == 1:
        return Estimate(mean, mean, mean, 1)
    half = t975(len(xs) - 1) * statistics.stdev(xs) / math.sqrt(len(xs))
    return Estimate(mean, mean - half, mean + half, len(xs))


def as_estimate(value: float | Estimate | None) -> Estimate | None:
    if value is None:
        return None
    if isinstance(value, Estimate):
        return value if math.isfinite(value.mean) else None
    v = float(value)
    return Estimate(v, v, v, 1) if math.isfinite(v) else None


@dataclass(frozen=True)
class Claim(ABC):
    """What every claim has: an id, the paper's words, what we measure and our value."""

    id: str
    quote: Quote
    measure: str  # how we measure it: the statistic, the window, the runs
    ours: float | Estimate | None
    unit: str = ""
    reconstruction: str | None = None  # the reconstructed algorithm the claim depends on
    setting: str | None = None  # a setting of ours other than the default: a sensitivity run
    note: str = ""  # when it fails: the cause in one sentence, with the evidence
    #: keys of the report's metrics.json ("measured.cobb.max_queue_packets") that show the
    #: cause in ``note``; without them the cause is rendered as not established
    evidence: tuple[str, ...] = ()
    #: the experiment that counts this paper claim, when this one only shows it
    counted_in: str | None = None
    #: a definition other than the paper's (shown apart, never deciding)
    second_definition: str | None = None

    kind = "claim"

    def paper_key(self) -> tuple[str, str]:
        """What identifies the paper's claim across experiments: where it is, its words."""
        return (" ".join(self.quote.where.split()), " ".join(self.quote.text.split()))

    @abstractmethod
    def expected(self) -> str:
        """The paper's value or range as the report prints it."""

    @abstractmethod
    def judge(self, ours: Estimate) -> str:
        """The verdict of ``ours`` against the paper's value under the tolerance policy."""


def _band(value: float, precision: str, points: bool) -> tuple[float, float]:
    """The interval around ``value`` that the tolerance policy accepts."""
    if precision not in PRECISION:
        raise ValueError(f"precision {precision!r}: expected one of {', '.join(PRECISION)}")
    p = PRECISION[precision]
    if points:
        # Points near zero (a signed percentile), the relative band for large percentages
        # (an overshoot of 300 %): whichever is wider.
        lo, hi = value - p["points"], value + p["points"]
        if "factor" in p and value != 0:
            a, b = sorted((value / p["factor"], value * p["factor"]))
            return min(lo, a), max(hi, b)
        rel = abs(value) * p.get("rel", 0.0)
        return min(lo, value - rel), max(hi, value + rel)
    if value == 0:
        return -p["zero"], p["zero"]
    if "factor" in p:
        lo, hi = value / p["factor"], value * p["factor"]
        return min(lo, hi), max(lo, hi)
    half = abs(value) * p["rel"]
    return value - half, value + half


def half_last_digit(printed: str) -> float:
    """Half a unit of the last digit of a number as printed ("0.99": 0.005, "300": 0.5,
    "1.2e3": 50)."""
    text = printed.strip().lstrip("~+-").rstrip("%").strip()
    mantissa, _, exp = text.lower().partition("e")
    decimals = len(mantissa.split(".", 1)[1]) if "." in mantissa else 0
    return 0.5 * 10.0 ** (-decimals + (int(exp) if exp else 0))


def _rounded_band(
    value: float, precision: str, points: bool, printed: str | None
) -> tuple[float, float]:
    """The policy's band, widened to half the last printed digit (a number printed rounded
    cannot be held tighter than it was printed); "exact" values are counts, not rounded."""
    lo, hi = _band(value, precision, points)
    if printed is None or precision == "exact" or not math.isfinite(value):
        return lo, hi
    half = half_last_digit(printed)
    return min(lo, value - half), max(hi, value + half)


def _inside(ours: Estimate, lo: float, hi: float) -> str:
    eps = 1e-12 * max(1.0, abs(lo), abs(hi))
    if ours.lo >= lo - eps and ours.hi <= hi + eps:
        return HOLDS
    if ours.hi < lo - eps or ours.lo > hi + eps:
        return FAILS
    return INCONCLUSIVE


@dataclass(frozen=True)
class Point(Claim):
    """The paper's number ``value``, stated at ``precision`` (a key of :data:`PRECISION`);
    ``points``: the value is a percentage (or a percentile in %) and is compared in points."""

    value: float = math.nan
    precision: str = "table"
    points: bool = False
    #: the paper's number as printed ("0.99", "7"): it is accepted within at least half its
    #: last digit (None: a value that is not a printed number, e.g. "not impacted" as 1.0)
    printed: str | None = None

    kind = "point"

    def band(self) -> tuple[float, float]:
        return _rounded_band(self.value, self.precision, self.points, self.printed)

    def expected(self) -> str:
        lo, hi = self.band()
        return f"{_num(self.value)} ({self.precision}: {_num(lo)} to {_num(hi)})"

    def judge(self, ours: Estimate) -> str:
        return _inside(ours, *self.band())


_OPS = {"<": "below", "<=": "at most", ">": "above", ">=": "at least"}


@dataclass(frozen=True)
class Bound(Claim):
    """Ours ``op`` ``limit``, the paper's own bound: no tolerance is added."""

    op: str = "<"
    limit: float = math.nan

    kind = "bound"

    def expected(self) -> str:
        if self.op not in _OPS:
            raise ValueError(f"bound op {self.op!r}: expected one of {', '.join(_OPS)}")
        return f"{_OPS[self.op]} {_num(self.limit)}"

    def judge(self, ours: Estimate) -> str:
        self.expected()
        ok = {
            "<": lambda v: v < self.limit,
            "<=": lambda v: v <= self.limit,
            ">": lambda v: v > self.limit,
            ">=": lambda v: v >= self.limit,
        }[self.op]
        if ok(ours.lo) and ok(ours.hi):
            return HOLDS
        if not ok(ours.lo) and not ok(ours.hi):
            return FAILS
        return INCONCLUSIVE


@dataclass(frozen=True)
class Ordering(Claim):
    """``first`` above ``second`` by the statistic in ``measure``; ``ours`` is the difference
    first - second (positive when the ordering holds)."""

    first: str = ""
    second: str = ""

    kind = "ordering"

    def expected(self) -> str:
        return f"{self.first} > {self.second} (difference > 0)"

    def judge(self, ours: Estimate) -> str:
        if ours.lo > 0:
            return HOLDS
        if ours.hi <= 0:
            return FAILS
        return INCONCLUSIVE


@dataclass(frozen=True)
class Shape(Claim):
    """A statistic of a time series (``definition``: overshoot, oscillation range over a window,
    settling time ...) against the paper's value (``value`` at ``precision``) or bound (``op``,
    ``limit``)."""

    definition: str = ""
    value: float | None = None
    precision: str = "about"
    points: bool = False
    op: str | None = None
    limit: float | None = None
    printed: str | None = None
    #: how the window of the statistic is placed: one of :data:`WINDOWS`, or "open: ..." (a
    #: window the paper leaves open, swept in sensitivity rows)
    window: str = ""

    kind = "shape"

    def _inner(self) -> Claim:
        if self.value is not None:
            return Point(self.id, self.quote, "", None, value=self.value,
                         precision=self.precision, points=self.points,
                         printed=self.printed)  # fmt: skip
        if self.op is None or self.limit is None:
            raise ValueError(f"shape claim {self.id!r} needs a value or a bound (op, limit)")
        return Bound(self.id, self.quote, "", None, op=self.op, limit=self.limit)

    def expected(self) -> str:
        return self._inner().expected()

    def judge(self, ours: Estimate) -> str:
        return self._inner().judge(ours)


@dataclass(frozen=True)
class Qualitative(Claim):
    """A statement the paper makes without a number; ``observed`` says what we see (our reading,
    shown, never counted)."""

    observed: str = ""

    kind = "qualitative"

    def expected(self) -> str:
        return "(no number)"

    def judge(self, ours: Estimate) -> str:
        return DESCRIBED


@dataclass(frozen=True)
class Reference(Claim):
    """A value that is not the paper's (``source``: "max-min oracle", "XCP's equilibrium"),
    compared at the "table" precision and shown apart."""

    value: float = math.nan
    source: str = "max-min oracle"

    kind = "reference"

    def expected(self) -> str:
        return f"{_num(self.value)} ({self.source})"

    def judge(self, ours: Estimate) -> str:
        return _inside(ours, *_band(self.value, "table", False))


@dataclass
class Scored:
    """A claim with its verdict, as written into metrics.json."""

    claim: Claim
    status: str
    ours: Estimate | None = None

    @property
    def holds(self) -> bool:
        return self.status == HOLDS

    @property
    def counted(self) -> bool:
        """Whether the claim enters the experiment's verdict (see :data:`VERDICT_RULE`)."""
        c = self.claim
        return (
            c.kind in ("point", "bound", "ordering", "shape")
            and c.reconstruction is None
            and c.setting is None
            and c.counted_in is None
            and c.second_definition is None
            and not (c.quote.contrast and c.kind != "ordering")
        )

    def to_json(self) -> dict[str, Any]:
        c = self.claim
        out: dict[str, Any] = {
            "id": c.id,
            "type": c.kind,
            "quote": c.quote.text,
            "where": c.quote.where,
            "measure": c.measure,
            "expected": c.expected(),
            "ours": None if self.ours is None else self.ours.to_json(),
            "unit": c.unit,
            "verdict": self.status,
            "counted": self.counted,
        }
        # The type's own fields (value, precision, bound, ordering names, definition ...).
        common = {f.name for f in fields(Claim)}
        for f in fields(c):
            v = getattr(c, f.name)
            if f.name not in common and v is not None and v != "":
                out[f.name] = v
        for name in ("reconstruction", "setting", "note", "counted_in", "second_definition"):
            if getattr(c, name):
                out[name] = getattr(c, name)
        if c.evidence:
            out["evidence"] = list(c.evidence)
        if c.quote.contrast:
            out["contrast"] = True
        return out


def score(claim: Claim) -> Scored:
    """Judge one claim on our value (its interval, if it has one)."""
    ours = as_estimate(claim.ours)
    if isinstance(claim, Qualitative):
        return Scored(claim, DESCRIBED, ours)
    if ours is None:
        return Scored(claim, UNMEASURED, None)
    return Scored(claim, claim.judge(ours), ours)


@dataclass
class Verdict:
    verdict: str
    counted: int
    holding: int
    tallies: dict[str, dict[str, int]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "counted": self.counted,
            "holding": self.holding,
            "tallies": self.tallies,
            "rule": VERDICT_RULE,
        }


def group(s: Scored) -> str:
    """Which table of the report a scored claim belongs to (and which tally)."""
    c = s.claim
    if c.kind == "reference":
        return "reference"
    if c.setting:
        return "sensitivity"
    if c.kind == "qualitative":
        return "qualitative"
    if c.counted_in:
        return "elsewhere"
    if c.second_definition or (c.quote.contrast and c.kind != "ordering"):
        return "second definition"
    if c.reconstruction:
        return "reconstruction"
    return "paper"


_group = group


def _base(c: Claim) -> str:
    """A claim's id without its setting's tag (the sensitivity rows of one claim share it)."""
    if c.setting and c.id.endswith(f" ({c.setting})"):
        return c.id[: -len(c.setting) - 3]
    if c.second_definition and c.id.endswith(")") and " (" in c.id:
        return c.id.rsplit(" (", 1)[0]  # "ERICA above (delivered)": "ERICA above"
    return c.id


def check_claims(experiment: str, claims: Sequence[Claim]) -> None:
    """The rules of the module's doc comment on one experiment's claims: raises
    ``ValueError`` naming the experiment and the claim that breaks one."""
    ids = [c.id for c in claims]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{experiment}: claim ids are not unique: {ids}")
    bases = {_base(c) for c in claims if not c.setting and not c.second_definition}
    swept = {_base(c) for c in claims if c.setting}
    for c in claims:
        where = f"{experiment}: claim {c.id!r}"
        if c.counted_in == experiment:
            raise ValueError(f"{where}: counted_in names its own experiment")
        if c.quote.contrast and not any(
            isinstance(o, Ordering) and o.quote == c.quote and not o.second_definition
            for o in claims
        ):
            raise ValueError(f"{where}: a contrast is scored as one ordering, and there is none")
        if c.second_definition and not c.quote.contrast and _base(c) not in bases:
            raise ValueError(
                f"{where}: a second definition ({c.second_definition}) needs a claim on the "
                f"paper's definition beside it (id {_base(c)!r})"
            )
        if isinstance(c, Shape):
            w = c.window
            if w.startswith("open"):
                if not c.setting and _base(c) not in swept:
                    raise ValueError(
                        f"{where}: its window is open ({w}) but no sensitivity row sweeps it"
                    )
            elif not any(w.startswith(k) for k in WINDOWS):
                raise ValueError(
                    f"{where}: a shape claim must declare its window: one of "
                    f"{', '.join(WINDOWS)}, or 'open: ...' swept in sensitivity rows "
                    f"(got {w!r})"
                )
        if c.note.strip().lower().startswith(NOT_ESTABLISHED) and c.evidence:
            raise ValueError(f"{where}: a cause 'not established' cannot list evidence")


def resolve(metrics: dict[str, Any], path: str) -> Any:
    """The value at a dotted key of ``metrics`` ("measured.cobb.max_queue_packets"; a list is
    indexed by number); ``KeyError`` if there is none."""
    node: Any = metrics
    for part in path.split("."):
        if isinstance(node, list):
            try:
                node = node[int(part)]
            except (ValueError, IndexError) as exc:
                raise KeyError(path) from exc
        elif isinstance(node, dict) and part in node:
            node = node[part]
        else:
            raise KeyError(path)
    return node


def cause_line(s: Scored, metrics: dict[str, Any] | None = None) -> str:
    """A failing claim's cause, rendered one way every time: "cause: ... (measured: key =
    value; ...)" when its evidence names measurements of the report, else "cause not
    established" (with the candidate, if the claim gives one, marked as not measured)."""
    c = s.claim
    note = " ".join(c.note.split())
    if note.lower().startswith(NOT_ESTABLISHED):
        rest = note[len(NOT_ESTABLISHED) :].lstrip(" :;,.")
        return NOT_ESTABLISHED + (f"; {rest}" if rest else "")
    if c.evidence and metrics is not None:
        shown = []
        for key in c.evidence:
            v = resolve(metrics, key)
            shown.append(f"`{key}` = {_show(v)}")
        return f"cause: {note} (measured: {'; '.join(shown)})"
    if note:
        return f"{NOT_ESTABLISHED}; a candidate, not measured in this report: {note}"
    return NOT_ESTABLISHED


def _show(v: Any) -> str:
    if isinstance(v, bool) or v is None:
        return str(v)
    if isinstance(v, (int, float)):
        return _num(float(v))
    if isinstance(v, dict) and "mean" in v:
        ci = v.get("ci95")
        return f"{_num(v['mean'])}" + (f" [{_num(ci[0])}, {_num(ci[1])}]" if ci else "")
    if isinstance(v, list) and all(isinstance(x, (int, float)) or x is None for x in v):
        return "[" + ", ".join("n/a" if x is None else _num(float(x)) for x in v) + "]"
    text = str(v)
    return text if len(text) <= 80 else text[:77] + "..."


def duplicate_counted(
    claims_by_experiment: dict[str, Iterable[Claim]],
) -> dict[tuple[str, str], list[str]]:
    """Paper claims counted in more than one experiment: their key and the experiments."""
    seen: dict[tuple[str, str], list[str]] = {}
    for e, claims in claims_by_experiment.items():
        for c in claims:
            if Scored(c, "").counted:
                seen.setdefault(c.paper_key(), [])
                if e not in seen[c.paper_key()]:
                    seen[c.paper_key()].append(e)
    return {k: v for k, v in seen.items() if len(v) > 1}


def verdict(scored: Iterable[Scored]) -> Verdict:
    """The experiment's verdict from its scored claims, by :data:`VERDICT_RULE`."""
    scored = list(scored)
    tallies: dict[str, dict[str, int]] = {}
    for s in scored:
        g = tallies.setdefault(_group(s), {})
        g[s.status] = g.get(s.status, 0) + 1
    counted = [s for s in scored if s.counted]
    holding = sum(1 for s in counted if s.status == HOLDS)
    if not counted and any(_group(s) == "elsewhere" for s in scored):
        v = "counted elsewhere"
    elif not counted:
        v = "qualitative"
    elif holding == len(counted):
        v = "reproduced"
    elif 2 * holding >= len(counted):
        v = "partly"
    else:
        v = "not reproduced"
    return Verdict(v, len(counted), holding, tallies)


def _num(x: float | None, digits: int = 4) -> str:
    if x is None or not math.isfinite(x):
        return "n/a"
    if x == 0:
        return "0"
    if abs(x) >= 1e5 or abs(x) < 1e-3:
        return f"{x:.{max(digits - 1, 0)}e}"
    return f"{x:.{digits}g}"
