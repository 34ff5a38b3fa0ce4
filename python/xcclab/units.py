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

_TIME = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
#: Rates are case-insensitive (``10mbps``) and may be written ``kbit/s``.
_RATE = {"bps": 1.0, "kbps": 1e3, "mbps": 1e6, "gbps": 1e9, "tbps": 1e12}
_SIZE = {
    "B": 1.0,
    "KB": 1e3,
    "kB": 1e3,
    "MB": 1e6,
    "GB": 1e9,
    "KiB": 1024.0,
    "MiB": 1024.0**2,
    "GiB": 1024.0**3,
}
_PACKETS = {"pkt": 1.0, "pkts": 1.0, "packets": 1.0}
_QUANTITY = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-zµ/]+)\s*$")


def _scale(unit: str) -> float | None:
    for table in (_TIME, _SIZE, _PACKETS):
        if unit in table:
            return table[unit]
    rate = unit.lower().replace("bit/s", "bps")
    return _RATE.get(rate)


def quantity_value(value: Any) -> float | None:
    """The number in SI base units: ``"5ms"`` -> 0.005, ``"10Mbps"`` -> 1e7, ``3`` -> 3.0.

    None for anything that is not a number or a number with a known unit (``"unlimited"``,
    booleans, tables). Units as in docs/scenario-format.md.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if not isinstance(value, str):
        return None
    m = _QUANTITY.match(value)
    scale = None if m is None else _scale(m.group(2))
    if scale is None:
        return None
    return float(m.group(1)) * scale


def time_value(value: str) -> float | None:
    """A time (``"200ms"``) in seconds; None for anything else (other units included)."""
    m = _QUANTITY.match(value) if isinstance(value, str) else None
    if m is None or m.group(2) not in _TIME:
        return None
    return float(m.group(1)) * _TIME[m.group(2)]
