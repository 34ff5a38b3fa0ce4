"""Read scenario quantities (``"5ms"``, ``"10Mbps"``, ``"1500B"``, ``"30pkt"``) as numbers.

Sweep parameters are written as the scenario writes them: strings with units. To sort, group
and plot them, the catalog and ``xcc plot-sweep`` need the number behind the string, in SI base
units: seconds, bit/s, bytes (packets stay a count). The simulator's parser
(``crates/xcc-sim/src/scenario/units.rs``) remains the authority on what a scenario accepts;
this is only a reader for values that already are in a scenario.
"""

from __future__ import annotations

import re
from typing import Any

_SCALE = {
    "s": 1.0,
    "ms": 1e-3,
    "us": 1e-6,
    "ns": 1e-9,
    "Tbps": 1e12,
    "Gbps": 1e9,
    "Mbps": 1e6,
    "kbps": 1e3,
    "bps": 1.0,
    "GB": 1e9,
    "MB": 1e6,
    "KB": 1e3,
    "B": 1.0,
    "pkt": 1.0,
}
_QUANTITY = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-z]+)\s*$")


def quantity_value(value: Any) -> float | None:
    """The number in SI base units: ``"5ms"`` -> 0.005, ``"10Mbps"`` -> 1e7, ``3`` -> 3.0.

    None for anything that is not a number or a number with a known unit (``"unlimited"``,
    booleans, tables).
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if not isinstance(value, str):
        return None
    m = _QUANTITY.match(value)
    if m is None or m.group(2) not in _SCALE:
        return None
    return float(m.group(1)) * _SCALE[m.group(2)]
