"""What ``link_series.gauge`` holds for each queue discipline (the ``gauge()`` of its
algorithm in crates/xcc-core/src/link/), as the page labels it.

The explicit protocols' gauge is the signal the link advertises: a rate, a price or the
feedback; for the others it is internal state (RED's average queue) or nothing (DropTail).
"""

from __future__ import annotations

#: queue kind -> (label, unit, scale to the shown unit, explicit protocol?)
GAUGES = {
    "xcp": ("aggregate feedback phi", "Mbit/s", 1e-6, True),
    "rcp": ("advertised rate R", "Mbit/s", 1e-6, True),
    "piqi-rcp": ("advertised rate", "Mbit/s", 1e-6, True),
    "jetmax": ("advertised fair rate", "Mbit/s", 1e-6, True),
    "maxnet": ("price", "", 1.0, True),
    "markmax": ("congestion signals sent (cumulative)", "", 1.0, True),
    "red": ("average queue (RED)", "", 1.0, False),
}


def gauge_of(algorithm: str) -> dict[str, object] | None:
    """The gauge's label, unit and scale for a link of ``algorithm``; None when it has none
    worth plotting (DropTail's is always 0)."""
    g = GAUGES.get(algorithm)
    if g is None:
        return None
    label, unit, scale, explicit = g
    return {"label": label, "unit": unit, "scale": scale, "explicit": explicit}
