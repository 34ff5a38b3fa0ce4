"""Read scenario quantities (``"5ms"``, ``"10Mbps"``, ``"1500B"``, ``"30pkt"``) as numbers.

Sweep parameters are written as the scenario writes them: strings with units. To sort, group
and plot them, the catalog and ``xcc plot-sweep`` need the number behind the string, in SI base
units: seconds, bit/s, bytes (packets stay a count). The string is read by the scenario parser's
own units code (``crates/xcc-build/src/scenario/units.rs``, through ``_native``), so a value
means here exactly what it means to the simulator.
"""

from __future__ import annotations

from typing import Any


def quantity_value(value: Any) -> float | None:
    """The number in SI base units: ``"5ms"`` -> 0.005, ``"10Mbps"`` -> 1e7, ``3`` -> 3.0.

    None for anything that is not a number or a quantity the scenario parser accepts
    (``"unlimited"``, booleans, tables).
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if not isinstance(value, str):
        return None
    from ._native import quantity_si

    return quantity_si(value)


def time_value(value: Any) -> float | None:
    """A time (``"200ms"``) in seconds; None for anything else (other units included)."""
    if not isinstance(value, str):
        return None
    from ._native import time_s

    return time_s(value)
