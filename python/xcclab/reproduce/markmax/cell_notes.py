"""The cause line of a MarkMax table cell: why our number differs from the paper's, from the
runs a packet-level MarkMax experiment (S1, S1 DropTail, S2, S3) saved in its ``metrics.json``.
"""

from __future__ import annotations

from typing import Any

from ..common.paper_claims import cell_gap_note

#: The tables' quantities (a comparison's "quantity") by their key in a cell's measures.
QUANTITY_KEYS = {"J": "J", "rho": "rho", "mean queue": "queue_bytes", "mean delay": "delay_ms"}


def cell_note(metrics: dict[str, Any], c: dict[str, Any], name: str) -> str:
    """The cause line of table cell ``c`` (run as ``name`` in ``metrics["cells"]``, and under
    the same name in ``metrics["seeded"]`` where it was seeded): see
    :func:`xcclab.reproduce.common.paper_claims.cell_gap_note`."""
    key = QUANTITY_KEYS[c["quantity"]]
    seeded = metrics.get("seeded", {})
    alt_runs = metrics.get("alt_runs", {})
    alt = alt_runs.get("cells", {}).get(f"alt-{name}", {}).get(key)
    prefix = f"{name}-t"
    lengths = {
        float(k.removeprefix(prefix)): v[key]
        for k, v in seeded.items()
        if k.startswith(prefix) and key in v
    }
    return cell_gap_note(
        metrics["cells"][name][key],
        seeded.get(name, {}).get(key),
        alt,
        t_f_s=metrics.get("t_f_s"),
        alt_t_f_s=alt_runs.get("t_f_s"),
        run_lengths=lengths,
    )
