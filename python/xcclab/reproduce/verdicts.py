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
from .common.templates import render
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


def _sensitivity_rows(rows: list[Scored]) -> list[tuple[str, str, str, str]]:
    """One row per claim: its base id, what is expected, the settings under which it holds and
    those under which it does not, with our value under each."""
    by: dict[str, list[Scored]] = {}
    for s in rows:
        by.setdefault(_base_id(s.claim), []).append(s)
    out = []
    for base, group in by.items():
        holding, failing = (
            "; ".join(
                f"{s.claim.setting}: {_ours(s)}"
                + ("" if s.status in ("holds", "fails") else f" ({s.status})")
                for s in group
                if s.holds == ok
            )
            or "none"
            for ok in (True, False)
        )
        out.append((base, group[0].claim.expected(), holding, failing))
    return out


def claim_section(
    scored: list[Scored], v: Verdict, quick: bool = False, metrics: dict[str, Any] | None = None
) -> str:
    """The report's claims section (``templates/claims.md.j2``): the verdict, one table per
    group of claims (the paper's, those on a reconstruction, the sensitivity runs, the
    qualitative ones, the references) and the cause of each failure."""
    head = (
        "not judged (quick run)"
        if quick
        else f"{v.verdict} ({v.holding} of {v.counted} counted paper claims hold)"
    )
    paper = [s for s in scored if s.counted]
    recon = [s for s in scored if claim_group(s) == "reconstruction"]
    causes = [s for s in paper + recon if s.status not in ("holds", "described")]
    return render(
        "claims.md.j2",
        anchor=CLAIMS_ANCHOR,
        head=head,
        paper=paper,
        recon=recon,
        causes=[(s, cause_line(s, metrics)) for s in causes],
        second=[s for s in scored if claim_group(s) == "second definition"],
        elsewhere=[s for s in scored if claim_group(s) == "elsewhere"],
        sensitivity=_sensitivity_rows(
            [s for s in scored if s.claim.setting and s.claim.kind != "qualitative"]
        ),
        qualitative=[s for s in scored if s.claim.kind == "qualitative"],
        references=[s for s in scored if s.claim.kind == "reference"],
        ours=_ours,
        window=lambda c: f"; window: {c.window}" if getattr(c, "window", "") else "",
        reconstruction=lambda c: f" (on {c.reconstruction})" if c.reconstruction else "",
        observed=lambda c: c.observed if isinstance(c, Qualitative) else "",
        apart_second=lambda c: (
            c.second_definition
            or "one side of a contrast the paper states (scored as one ordering above)"
        ),
        apart_elsewhere=lambda c: (
            f"counted in [{c.counted_in}](../{c.counted_in}/report.md#{CLAIMS_ANCHOR})"
        ),
    )
