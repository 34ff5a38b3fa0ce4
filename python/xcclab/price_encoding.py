"""MaxNet's price-encoding calculator (seed 000, Section V).

With the demand function ``D(q) = x_max exp(-q/T)`` a fixed-point price has uniform relative
rate precision, so the bits follow from the rate range and the precision wanted:

- integer bits ``B_i = ceil(log2(T ln(x_max / x_min)))`` cover prices up to ``D^-1(x_min)``;
- fraction bits ``B_f = ceil(-log2(T ln(1 + eps)))`` make one step change the rate by at most
  a factor ``1 + eps``.

Seed 000: ``x_max = 1e15``, ``x_min = 32`` bit/s, ``T = 0.4`` s, ``eps = 1e-5`` give
``B_i = 4``, ``B_f = 18``. xcclab's wire field (``xcc_core::wire::maxnet``) has 23 bits after
the MaxStart flag: 5 integer and 18 fraction bits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

WIRE_INTEGER_BITS = 5
WIRE_FRACTION_BITS = 18


@dataclass(frozen=True)
class Encoding:
    integer_bits: int
    fraction_bits: int
    max_price_s: float
    """The largest price the encoding must carry, D^-1(x_min)."""
    relative_step: float
    """Relative rate change of one step of the price, exp(2^-B_f / T) - 1."""

    @property
    def total_bits(self) -> int:
        return self.integer_bits + self.fraction_bits


def price_encoding(x_max: float, x_min: float, t: float, epsilon: float) -> Encoding:
    """Bits needed for rates in [x_min, x_max] (bit/s) with relative precision ``epsilon``."""
    for name, value in (("x_max", x_max), ("x_min", x_min), ("t", t), ("epsilon", epsilon)):
        if not (value > 0 and math.isfinite(value)):
            raise ValueError(f"{name} = {value}: expected a positive finite number")
    if x_min >= x_max:
        raise ValueError(f"x_min = {x_min} must be below x_max = {x_max}")
    max_price = t * math.log(x_max / x_min)
    bi = max(0, math.ceil(math.log2(max_price)))
    bf = max(0, math.ceil(-math.log2(t * math.log1p(epsilon))))
    return Encoding(bi, bf, max_price, math.expm1(2.0**-bf / t))


def format_encoding(e: Encoding) -> str:
    return (
        f"integer bits B_i = {e.integer_bits} (prices up to {e.max_price_s:.4f} s)\n"
        f"fraction bits B_f = {e.fraction_bits} (one step changes the rate by "
        f"{100 * e.relative_step:.5f} %)\n"
        f"total {e.total_bits} bits; xcclab's wire field has {WIRE_INTEGER_BITS} + "
        f"{WIRE_FRACTION_BITS} bits after the MaxStart flag"
    )
