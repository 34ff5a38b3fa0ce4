"""maxnet-encoding: MaxNet's price encoding (seed 000, Section V).

The calculator (:mod:`xcclab.price_encoding`) on the paper's inputs, and the 24-bit wire field
that the simulator and the real-network mode carry: every 23-bit code round-trips (a Rust unit
test, ``xcc_core::wire::maxnet``); here we also check the rates it can express over the
paper's range [x_min, x_max].
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from pathlib import Path

from ...claims import Claim, Point
from ...price_encoding import WIRE_FRACTION_BITS, WIRE_INTEGER_BITS, price_encoding
from ..common.paper_claims import table_points
from ..common.report import Comparison, atomic_dir, fmt, markdown_table, write_metrics
from ..common.templates import report
from ..experiment import Experiment

ID = "maxnet-encoding"
TITLE = "MaxNet price encoding (seed 000, Section V)"
CLAIM = "x_max 1e15, x_min 32 bit/s, T 0.4 s, eps 1e-5 need B_i = 4, B_f = 18"
X_MAX, X_MIN, T, EPS = 1e15, 32.0, 0.4, 1e-5


def wire_rate_error(x_max: float, t: float, samples: int = 2001) -> tuple[float, float]:
    """Largest relative rate error of the wire field over log-spaced rates in [X_MIN, x_max],
    and the smallest rate it can express (its largest price)."""
    step = 2.0**-WIRE_FRACTION_BITS
    code_max = 2 ** (WIRE_INTEGER_BITS + WIRE_FRACTION_BITS) - 1
    worst = 0.0
    for k in range(samples):
        rate = X_MIN * (x_max / X_MIN) ** (k / (samples - 1))
        q = t * math.log(x_max / rate)
        code = min(code_max, round(q / step))
        back = x_max * math.exp(-code * step / t)
        worst = max(worst, abs(back / rate - 1.0))
    return worst, x_max * math.exp(-code_max * step / t)


def run(
    out_dir: str | Path,
    quick: bool = False,
    *,
    log: Callable[[str], None] | None = None,
    progress: bool = True,
) -> Path:
    """Compute the encoding and write report.md and metrics.json into ``out_dir``."""
    (log or (lambda _m: None))(f"{ID}: price encoding for x_max={X_MAX:g}, x_min={X_MIN:g}")
    enc = price_encoding(X_MAX, X_MIN, T, EPS)
    worst, floor_rate = wire_rate_error(X_MAX, T)
    comparisons = [
        Comparison("integer bits B_i", 4, enc.integer_bits, "bits"),
        Comparison("fraction bits B_f", 18, enc.fraction_bits, "bits"),
        Comparison("total bits", 22, enc.total_bits, "bits"),
    ]
    out_dir = Path(out_dir)
    with atomic_dir(out_dir) as tmp:
        write_metrics(
            tmp,
            ID,
            title=TITLE,
            quick=quick,
            comparisons=comparisons,
            wire={
                "integer_bits": WIRE_INTEGER_BITS,
                "fraction_bits": WIRE_FRACTION_BITS,
                "worst_relative_rate_error": worst,
                "smallest_rate_bps": floor_rate,
            },
        )
        rows = [[c.quantity, str(c.paper), str(c.ours)] for c in comparisons]
        same = all(c.paper == c.ours for c in comparisons)
        text = report(
            TITLE,
            f"xcc reproduce {ID}",
            options=" (also `xcc analyze price-encoding`)",
            intro=[
                f"Inputs (the paper's): x_max = {X_MAX:g} bit/s, x_min = {X_MIN:g} bit/s, T = {T} "
                f"s, relative precision eps = {EPS:g}.",
                markdown_table(["quantity", "paper", "ours"], rows),
                f"Largest price needed: {fmt(enc.max_price_s, 4)} s; one step of the fraction "
                f"changes the rate by {100 * enc.relative_step:.5f} %.",
            ],
            sections=[
                (
                    "The wire field",
                    [
                        "xcclab carries the price in the 23 bits after the MaxStart flag: "
                        f"{WIRE_INTEGER_BITS} integer and {WIRE_FRACTION_BITS} fraction bits (one "
                        "more integer bit than needed; prices up to 32 s). Over log-spaced rates "
                        f"from {X_MIN:g} bit/s to {X_MAX:g} bit/s the largest relative error of "
                        f"the encoded rate is {worst:.2e} (bound: eps = {EPS:g}, half a step: "
                        f"{enc.relative_step / 2:.2e}); the smallest expressible rate is "
                        f"{floor_rate:.3g} bit/s. Every one of the 2^23 codes round-trips through "
                        "emit and parse (Rust unit test `wire::maxnet::every_code_round_trips`).",
                    ],
                ),
                (
                    "Discussion",
                    [
                        "The calculator gives the paper's numbers exactly."
                        if same
                        else "The calculator differs from the paper; see the table.",
                    ],
                ),
            ],
        )
        (tmp / "report.md").write_text(text, encoding="utf-8")
    return out_dir / "report.md"


def claims(metrics: dict) -> list[Claim]:
    return [
        Point(
            id=c.id,
            quote=c.quote,
            measure=c.measure,
            ours=c.ours,
            unit=c.unit,
            value=c.value,
            precision="exact",
        )
        for c in table_points(
            metrics,
            "000",
            lambda c: "Section V (x_max 1e15, x_min 32 bit/s, T 0.4, epsilon 1e-5)",
            measure="the price-encoding calculator",
        )
    ]


EXPERIMENT = Experiment(id=ID, seed="000", title=TITLE, summary=CLAIM, run=run, claims=claims)


if __name__ == "__main__":
    print(run(sys.argv[1] if len(sys.argv) > 1 else "maxnet-encoding"))
