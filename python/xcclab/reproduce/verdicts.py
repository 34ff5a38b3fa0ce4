"""Scoring a reproduction's directory: its claims into ``metrics.json``, its claim table into
``report.md``.

:func:`judge_directory` runs after an experiment (``xcc reproduce ID``, ``--all``) and again on
``xcc reproduce --index``, so a report is re-judged without re-running when the claims or the
scorer change. The claims come from the experiment's ``claims(metrics)``; the scorer and the
tolerance policy are :mod:`xcclab.claims`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .._fsutil import write_text_atomic
from ..claims import VERDICT_RULE, Scored, Verdict, score, verdict
from .experiment import Experiment

BEGIN, END = "<!-- claims:begin -->", "<!-- claims:end -->"


def judge(e: Experiment, metrics: dict[str, Any]) -> tuple[list[Scored], Verdict]:
    scored = [score(c) for c in e.claims(metrics)]
    ids = [s.claim.id for s in scored]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{e.id}: claim ids are not unique: {ids}")
    return scored, verdict(scored)


def judge_directory(e: Experiment, out_dir: Path) -> Verdict:
    """Score ``out_dir/metrics.json``'s claims, write them back and into ``report.md``."""
    path = out_dir / "metrics.json"
    metrics = json.loads(path.read_text(encoding="utf-8"))
    scored, v = judge(e, metrics)
    metrics["claims"] = [s.to_json() for s in scored]
    metrics["verdict"] = v.to_json()
    write_text_atomic(path, json.dumps(metrics, indent=2, allow_nan=False) + "\n")
    report = out_dir / "report.md"
    if report.is_file():
        text = report.read_text(encoding="utf-8")
        quick = bool(metrics.get("quick"))
        write_text_atomic(report, insert_section(text, claim_section(scored, v, quick)))
    return v


def insert_section(report: str, section: str) -> str:
    """``report`` with ``section`` between the markers, replacing an earlier one, else after the
    title and the paragraph that follows it."""
    block = f"{BEGIN}\n{section.rstrip()}\n{END}"
    if BEGIN in report and END in report:
        head, rest = report.split(BEGIN, 1)
        return head + block + rest.split(END, 1)[1]
    parts = report.split("\n\n", 2)
    if len(parts) < 3:
        return report.rstrip() + "\n\n" + block + "\n"
    return f"{parts[0]}\n\n{parts[1]}\n\n{block}\n\n{parts[2]}"


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _ours(s: Scored) -> str:
    if s.ours is None:
        return "not measured"
    unit = f" {s.claim.unit}" if s.claim.unit else ""
    ci = f" (mean [95 % CI], n = {s.ours.n})" if s.ours.n > 1 else ""
    return s.ours.text() + unit + ci


def claim_section(scored: list[Scored], v: Verdict, quick: bool = False) -> str:
    """The report's "Claims" section: verdict, one table per group, the cause of each failure."""
    head = (
        "not judged (quick run)"
        if quick
        else f"{v.verdict} ({v.holding} of {v.counted} counted paper claims hold)"
    )
    lines = [f"## Verdict: {head}", "", VERDICT_RULE, ""]
    groups = [
        ("Paper claims", lambda s: s.counted),
        (
            "Claims that depend on a reconstruction (counted apart)",
            lambda s: (
                s.claim.reconstruction is not None
                and s.claim.kind not in ("reference", "qualitative")
                and s.claim.setting is None
            ),
        ),
        (
            "Sensitivity: the same claims under other settings the paper leaves open (not counted)",
            lambda s: s.claim.setting is not None and s.claim.kind != "qualitative",
        ),
        ("Qualitative claims (our reading, not counted)", lambda s: s.claim.kind == "qualitative"),
        (
            "References (max-min oracle, a protocol's own equilibrium: not the paper's numbers)",
            lambda s: s.claim.kind == "reference",
        ),
    ]
    seen: set[str] = set()
    for title, pick in groups:
        rows = [s for s in scored if s.claim.id not in seen and pick(s)]
        if not rows:
            continue
        seen.update(s.claim.id for s in rows)
        lines += [f"### {title}", ""]
        if title.startswith("Qualitative"):
            lines += ["| claim | the paper | where | ours |", "|:---|:---|:---|:---|"]
            for s in rows:
                c = s.claim
                lines.append(
                    f'| {c.id} | "{_cell(c.quote.text)}" | {_cell(c.quote.where)} | '
                    f"{_cell(getattr(c, 'observed', ''))} |"
                )
        else:
            lines += [
                "| claim | type | the paper | where | measured as | expected | ours | verdict |",
                "|:---|:---|:---|:---|:---|:---|:---|:---|",
            ]
            for s in rows:
                c = s.claim
                rec = f" (depends on {c.reconstruction})" if c.reconstruction else ""
                rec += f" (setting: {c.setting})" if c.setting else ""
                lines.append(
                    f'| {c.id} | {c.kind} | "{_cell(c.quote.text)}" | {_cell(c.quote.where)} '
                    f"| {_cell(c.measure)} | {_cell(c.expected())} | {_cell(_ours(s))} | "
                    f"**{s.status}**{rec} |"
                )
        lines.append("")
    causes = [s for s in scored if s.status in ("fails", "inconclusive") and s.claim.note]
    if causes:
        lines += ["Why:", ""]
        lines += [f"- **{s.claim.id}** ({s.status}): {s.claim.note}" for s in causes]
        lines.append("")
    return "\n".join(lines)
