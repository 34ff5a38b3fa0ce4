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
from ..claims import Qualitative, Scored, Verdict, cause_line, check_claims, score, verdict
from ..claims import group as claim_group
from .experiment import Experiment

BEGIN, END = "<!-- claims:begin -->", "<!-- claims:end -->"


def judge(e: Experiment, metrics: dict[str, Any]) -> tuple[list[Scored], Verdict]:
    """Score ``e``'s claims on ``metrics`` after checking the rules (:func:`check_claims`) and
    that every cause's evidence is in ``metrics``."""
    claims = e.claims(metrics)
    check_claims(e.id, claims)
    scored = [score(c) for c in claims]
    for s in scored:
        try:
            cause_line(s, metrics)
        except KeyError as exc:
            raise ValueError(
                f"{e.id}: claim {s.claim.id!r}: its evidence {exc.args[0]!r} is not in metrics.json"
            ) from None
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
        section = claim_section(scored, v, quick, metrics)
        write_text_atomic(report, insert_section(text, section))
    return v


#: The anchor of the claims section in a report: the index links each claim table by it.
CLAIMS_ANCHOR = "claims"


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


def _base_id(c) -> str:
    tag = f" ({c.setting})"
    return c.id[: -len(tag)] if c.setting and c.id.endswith(tag) else c.id


def _claim_table(rows: list[Scored], extra=None) -> list[str]:
    head = "| claim | type | the paper | measured as | expected | ours | verdict |"
    rule = "|:---|:---|:---|:---|:---|:---|:---|"
    if extra:
        head, rule = head + " why apart |", rule + ":---|"
    lines = [head, rule]
    for s in rows:
        c = s.claim
        rec = f" (on {c.reconstruction})" if c.reconstruction else ""
        window = f"; window: {c.window}" if getattr(c, "window", "") else ""
        lines.append(
            f'| {_cell(c.id)} | {c.kind} | "{_cell(c.quote.text)}" ({_cell(c.quote.where)}) '
            f"| {_cell(c.measure + window)} | {_cell(c.expected())} | {_cell(_ours(s))} | "
            f"**{s.status}**{rec} |" + (f" {_cell(extra(c))} |" if extra else "")
        )
    return lines


def _sensitivity_table(rows: list[Scored]) -> list[str]:
    """One line per claim: the settings under which it holds and those under which it does
    not, with our value under each."""
    by: dict[str, list[Scored]] = {}
    for s in rows:
        by.setdefault(_base_id(s.claim), []).append(s)
    lines = [
        "| claim | expected | holds with | does not hold with |",
        "|:---|:---|:---|:---|",
    ]
    for base, group in by.items():
        cells = [
            "; ".join(
                f"{s.claim.setting}: {_ours(s)}"
                + ("" if s.status in ("holds", "fails") else f" ({s.status})")
                for s in group
                if s.holds == ok
            )
            or "none"
            for ok in (True, False)
        ]
        lines.append(
            f"| {_cell(base)} | {_cell(group[0].claim.expected())} | {_cell(cells[0])} | "
            f"{_cell(cells[1])} |"
        )
    return lines


def claim_section(
    scored: list[Scored], v: Verdict, quick: bool = False, metrics: dict[str, Any] | None = None
) -> str:
    """The report's claims section: the verdict, one table per group of claims (the paper's,
    those on a reconstruction, the sensitivity runs, the qualitative ones, the references) and
    the cause of each failure."""
    head = (
        "not judged (quick run)"
        if quick
        else f"{v.verdict} ({v.holding} of {v.counted} counted paper claims hold)"
    )
    lines = [
        f'<a id="{CLAIMS_ANCHOR}"></a>',
        "",
        f"## Verdict: {head}",
        "",
        "Claims typed and scored by `xcclab.claims` under the tolerance policy and verdict rule of "
        "[docs/reproduction/verdicts.md](../verdicts.md): references, qualitative claims, "
        "claims on a reconstruction, sensitivity runs, measures on a second definition and "
        "claims counted in another experiment are shown apart and not counted.",
        "",
    ]
    paper = [s for s in scored if s.counted]
    recon = [s for s in scored if claim_group(s) == "reconstruction"]
    second = [s for s in scored if claim_group(s) == "second definition"]
    elsewhere = [s for s in scored if claim_group(s) == "elsewhere"]
    sens = [s for s in scored if s.claim.setting and s.claim.kind != "qualitative"]
    qual = [s for s in scored if s.claim.kind == "qualitative"]
    refs = [s for s in scored if s.claim.kind == "reference"]
    if paper:
        lines += ["### The paper's claims", "", *_claim_table(paper), ""]
    if recon:
        lines += ["### Claims on a reconstructed algorithm (counted apart)", ""]
        lines += [*_claim_table(recon), ""]
    causes = [s for s in paper + recon if s.status not in ("holds", "described")]
    if causes:
        lines += ["Why they fail:", ""]
        lines += [
            f"- **{_cell(s.claim.id)}** ({s.status}): {_cell(cause_line(s, metrics))}"
            for s in causes
        ]
        lines.append("")
    if second:
        lines += [
            "### On a second definition (not the paper's; shown apart, never deciding)",
            "",
            *_claim_table(
                second,
                extra=lambda c: (
                    c.second_definition
                    or "one side of a contrast the paper states (scored as one ordering above)"
                ),
            ),
            "",
        ]
    if elsewhere:
        lines += [
            "### Also shown here, counted in another experiment (each paper claim is counted once)",
            "",
            *_claim_table(
                elsewhere,
                extra=lambda c: (
                    f"counted in [{c.counted_in}](../{c.counted_in}/report.md#{CLAIMS_ANCHOR})"
                ),
            ),
            "",
        ]
    if sens:
        lines += [
            "### Sensitivity: settings the paper leaves open (not counted)",
            "",
            *_sensitivity_table(sens),
            "",
        ]
    if qual:
        lines += [
            "### Qualitative claims (our reading, not counted)",
            "",
            "| claim | the paper | ours |",
            "|:---|:---|:---|",
        ]
        for s in qual:
            c = s.claim
            lines.append(
                f'| {_cell(c.id)} | "{_cell(c.quote.text)}" ({_cell(c.quote.where)}) | '
                f"{_cell(c.observed if isinstance(c, Qualitative) else '')} |"
            )
        lines.append("")
    if refs:
        lines += [
            "### References: the max-min oracle, a protocol's own equilibrium (never the paper's)",
            "",
            "| quantity | reference | ours | within 5 % |",
            "|:---|:---|:---|:---|",
        ]
        for s in refs:
            c = s.claim
            rec = f" (on {c.reconstruction})" if c.reconstruction else ""
            lines.append(
                f"| {_cell(c.id)} | {_cell(c.expected())} | {_cell(_ours(s))} | {s.status}{rec} |"
            )
        lines.append("")
    return "\n".join(lines)
