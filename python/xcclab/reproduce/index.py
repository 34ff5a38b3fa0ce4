"""``xcc reproduce --all``: every implemented experiment, in parallel, and one index over them.

Each experiment runs in its own worker (:mod:`xcclab.executor`: the process pool, or Dask) and
writes its usual report directory ``OUT/<id>/`` (``report.md``, ``metrics.json``, figures,
``runs/``). An experiment that fails is listed with its error; the others are unaffected. Then
``OUT/index.md`` and ``OUT/index.html`` summarise them in one table:

- **paper's claim**: the experiment's one-line summary;
- **claims**: how many of the paper's typed claims hold, computed by :mod:`xcclab.claims` from
  ``metrics.json`` (:mod:`xcclab.reproduce.verdicts` re-judges every report here), with the
  claims that depend on a reconstruction and the references (max-min oracle, a protocol's own
  equilibrium) tallied apart;
- **verdict**: by :data:`xcclab.claims.VERDICT_RULE`; or ``failed`` (the experiment raised),
  ``not judged`` (``--quick`` runs are too short to compare with a paper), ``not run``.

The counts per verdict are given per paper (seed) and overall.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._fsutil import write_text_atomic
from ..claims import VERDICT_RULE
from ..executor import run_tasks
from . import experiments
from .common.templates import render
from .experiment import Experiment
from .verdicts import CLAIMS_ANCHOR, judge_directory


@dataclass
class ExperimentTask:
    id: str
    out: str
    quick: bool


def run_experiment(task: ExperimentTask) -> dict[str, Any]:
    """Run one experiment in a worker; failures become data (``{"error": ...}``)."""
    from . import run

    try:
        # Workers share the terminal: no per-run progress bars.
        report = run(task.id, Path(task.out), quick=task.quick, progress=False)
    except Exception as exc:
        return {"id": task.id, "report": None, "error": f"{type(exc).__name__}: {exc}"}
    return {"id": task.id, "report": str(report), "error": None}


@dataclass
class Row:
    experiment: Experiment
    claim: str
    ours: str
    verdict: str
    report: str | None  # relative to the index
    figures: list[str]
    error: str | None
    tallies: dict[str, dict[str, int]] | None = None


@dataclass
class Reproduction:
    """What :func:`reproduce_all` wrote."""

    index_md: Path
    index_html: Path
    rows: list[Row]

    @property
    def failed(self) -> list[Row]:
        return [r for r in self.rows if r.error is not None]


def reproduce_all(
    out: str | os.PathLike[str],
    *,
    quick: bool = False,
    jobs: int | None = None,
    scheduler: str | None = None,
    local_cluster: bool = False,
    log: Callable[[str], None] | None = None,
) -> Reproduction:
    """Run every implemented experiment into ``out/<id>`` and write the index."""
    log = log or (lambda _m: None)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    implemented = list(experiments())
    tasks = [ExperimentTask(e.id, str(out / e.id), quick) for e in implemented]
    log(f"reproduce --all: {len(tasks)} experiments: {', '.join(t.id for t in tasks)}")
    outcomes = run_tasks(
        run_experiment,
        tasks,
        [t.id for t in tasks],
        jobs=jobs,
        scheduler=scheduler,
        local_cluster=local_cluster,
    )
    errors: dict[str, str | None] = {}
    for task_id, result, crash in outcomes:
        errors[task_id] = crash if crash is not None else result["error"]
        log(f"{task_id}: {'failed: ' + str(errors[task_id]) if errors[task_id] else 'done'}")
    rows = [_row(out, e, errors.get(e.id), quick) for e in implemented]
    write_text_atomic(out / "index.md", render_markdown(rows, quick))
    write_text_atomic(out / "index.html", render_html(rows, quick))
    return Reproduction(out / "index.md", out / "index.html", rows)


def index_existing(
    out: str | os.PathLike[str], log: Callable[[str], None] | None = None
) -> Reproduction:
    """Write ``out/index.{md,html}`` over the reports already in ``out/<id>/``, running nothing.

    For a snapshot refreshed one experiment at a time (``xcc reproduce ID --out OUT/ID``). An
    implemented experiment without ``metrics.json`` is listed as not run.
    """
    log = log or (lambda _m: None)
    out = Path(out)
    if not out.is_dir():
        raise FileNotFoundError(f"{out}: no such directory (expected reports in {out}/<id>/)")
    rows = []
    for e in experiments():
        if (out / e.id / "metrics.json").is_file():
            rows.append(_row(out, e, None, False))
        else:
            log(f"{e.id}: no {out / e.id / 'metrics.json'}; listed as not run")
            rows.append(Row(e, e.summary, "-", "not run", None, [], None))
    note = "`xcc reproduce --index` (over the reports already there)"
    write_text_atomic(out / "index.md", render_markdown(rows, False, note))
    write_text_atomic(out / "index.html", render_html(rows, False, note))
    readme = out / "README.md"
    if readme.is_file():
        text = readme.read_text(encoding="utf-8")
        write_text_atomic(readme, insert_counts(text, counts_block(rows)))
    return Reproduction(out / "index.md", out / "index.html", rows)


COUNTS_BEGIN, COUNTS_END = "<!-- counts:begin (generated) -->", "<!-- counts:end -->"


def insert_counts(text: str, block: str) -> str:
    """``text`` (a README) with the generated counts between the markers (which must be
    there: a README without them is not one this function may write)."""
    if COUNTS_BEGIN not in text or COUNTS_END not in text:
        raise ValueError(f"no {COUNTS_BEGIN} ... {COUNTS_END} markers to put the counts between")
    head, rest = text.split(COUNTS_BEGIN, 1)
    return f"{head}{COUNTS_BEGIN}\n{block.rstrip()}\n{COUNTS_END}{rest.split(COUNTS_END, 1)[1]}"


_TALLY_LABELS = (
    ("paper", "counted paper claims"),
    ("reconstruction", "claims on a reconstruction (counted apart)"),
    ("second definition", "on a second definition (shown apart, never deciding)"),
    ("elsewhere", "shown again, counted in another experiment"),
    ("sensitivity", "sensitivity rows (settings the paper leaves open)"),
    ("reference", "references (max-min oracle, a protocol's equilibrium; never counted)"),
    ("qualitative", "qualitative claims (described, not scored)"),
)


def claim_totals(rows: list[Row]) -> dict[str, dict[str, int]]:
    """Claims per group and status over every judged experiment."""
    out: dict[str, dict[str, int]] = {}
    for r in rows:
        for g, t in (r.tallies or {}).items():
            acc = out.setdefault(g, {})
            for status, n in t.items():
                acc[status] = acc.get(status, 0) + n
    return out


def counts_block(rows: list[Row]) -> str:
    """The counts the index and the README both show, from the judged reports (never typed);
    ``templates/counts.md.j2``."""
    counts = verdict_counts(rows).get("all", {})
    verdicts = ", ".join(f"{counts.get(v, 0)} {v}" for v in VERDICT_ORDER)
    others = sorted(set(counts) - set(VERDICT_ORDER))
    if others:
        verdicts += ", " + ", ".join(f"{counts[v]} {v}" for v in others)
    totals = claim_totals(rows)
    table = []
    for g, label in _TALLY_LABELS:
        t = totals.get(g, {})
        cells = [
            t.get(k, 0) for k in ("holds", "fails", "inconclusive", "not measured", "described")
        ]
        table.append((label, cells, sum(t.values())))
    return render(
        "counts.md.j2",
        experiments=len(rows),
        verdicts=verdicts,
        judged=sum(1 for r in rows if r.tallies is not None),
        rows=table,
    ).removesuffix("\n")


def _row(out: Path, e: Experiment, error: str | None, quick: bool) -> Row:
    if error is not None:
        return Row(e, e.summary, "-", "failed", None, [], error)
    directory = out / e.id
    try:
        v = judge_directory(e, directory)
    except Exception as exc:  # a report the claims cannot read: listed, not fatal
        return Row(e, e.summary, "-", "failed", None, [], f"judging: {type(exc).__name__}: {exc}")
    metrics = json.loads((directory / "metrics.json").read_text(encoding="utf-8"))
    verdict = v.verdict
    if quick or metrics.get("quick"):
        verdict = "not judged (quick run)"
    figures = [f"{e.id}/{f}" for f in metrics.get("figures", [])]
    return Row(
        e, e.summary, tally(v.tallies), verdict, f"{e.id}/report.md", figures, None, v.tallies
    )


def tally(tallies: dict[str, dict[str, int]]) -> str:
    """ "3 of 5 paper claims hold; reconstruction 1 of 2; references 4 of 4" from the tallies."""
    names = {
        "paper": "paper claims",
        "reconstruction": "on a reconstruction",
        "second definition": "on a second definition (not counted)",
        "elsewhere": "counted in another experiment",
        "sensitivity": "in sensitivity runs",
        "reference": "references (not counted)",
    }
    parts = []
    for group, label in names.items():
        t = tallies.get(group)
        if t:
            n = sum(t.values())
            parts.append(f"{t.get('holds', 0)} of {n} {label} hold")
    q = sum(tallies.get("qualitative", {}).values())
    if q:
        parts.append(f"{q} qualitative (described)")
    return "; ".join(parts) or "no claim"


def _figure_links(row: Row) -> list[tuple[str, str]]:
    """(label, path) of each figure, one per name (PNG preferred over SVG and PDF)."""
    by_stem: dict[str, str] = {}
    for f in row.figures:
        stem, ext = os.path.splitext(f)
        if stem not in by_stem or ext == ".png":
            by_stem[stem] = f
    return [(os.path.basename(s), p) for s, p in by_stem.items()]


def _how(quick: bool, note: str | None) -> str:
    return note or f"`xcc reproduce --all{' --quick' if quick else ''}`"


def render_markdown(rows: list[Row], quick: bool, note: str | None = None) -> str:
    """``index.md`` (``templates/index.md.j2``)."""
    when = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    table = []
    for r in rows:
        link = f"[{r.experiment.id}]({r.report})" if r.report else r.experiment.id
        figs = ", ".join(f"[{label}]({path})" for label, path in _figure_links(r)) or "-"
        ours = _md(r.ours) if r.error is None else _md(f"error: {r.error}")
        if r.report and r.error is None:
            ours = f"[{ours}]({r.report}#{CLAIMS_ANCHOR})"
        table.append([link, _md(r.claim), ours, r.verdict, figs])
    columns, counts_table = _counts_table(rows)
    return render(
        "index.md.j2",
        how=_how(quick, note),
        when=when,
        table=table,
        columns=columns,
        counts_table=counts_table,
        counts_begin=COUNTS_BEGIN,
        counts=counts_block(rows),
        counts_end=COUNTS_END,
        footer=_footer(rows),
    )


VERDICT_ORDER = ("reproduced", "partly", "not reproduced", "qualitative")


def _counts_table(rows: list[Row]) -> tuple[list[str], list[tuple[str, list[int]]]]:
    """Experiments per verdict, per paper and overall: the columns and the rows."""
    counts = verdict_counts(rows)
    others = sorted({v for c in counts.values() for v in c} - set(VERDICT_ORDER))
    cols = [*VERDICT_ORDER, *others]
    table = [
        ("all" if key == "all" else f"seed {key}", [c.get(v, 0) for v in cols])
        for key, c in counts.items()
    ]
    return cols, table


def render_html(rows: list[Row], quick: bool, note: str | None = None) -> str:
    """``index.html`` (``templates/index.html.j2``, every value escaped)."""
    when = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    view = [
        {
            "id": r.experiment.id,
            "report": r.report,
            "claim": r.claim,
            "ours": r.ours,
            "error": r.error,
            "verdict": r.verdict,
            "verdict_class": r.verdict.split(" ")[0],
            "figures": _figure_links(r),
        }
        for r in rows
    ]
    return render(
        "index.html.j2",
        how=_how(quick, note).replace("`", ""),
        when=when,
        rows=view,
        anchor=CLAIMS_ANCHOR,
        footer=_footer(rows),
    )


def verdict_counts(rows: list[Row]) -> dict[str, dict[str, int]]:
    """Verdict counts per paper (seed id) and "all"."""
    counts: dict[str, dict[str, int]] = {}
    for r in rows:
        for key in (r.experiment.seed, "all"):
            c = counts.setdefault(key, {})
            c[r.verdict] = c.get(r.verdict, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: (kv[0] == "all", kv[0])))


def _footer(rows: list[Row]) -> str:
    per = verdict_counts(rows)
    parts = []
    for key, c in per.items():
        label = "all" if key == "all" else f"seed {key}"
        parts.append(f"{label}: " + ", ".join(f"{n} {v}" for v, n in sorted(c.items())))
    noun = "experiment" if len(rows) == 1 else "experiments"
    return (
        f"{len(rows)} {noun}. Verdicts by paper: "
        + "; ".join(parts)
        + ". Rule: "
        + VERDICT_RULE
        + " Regenerate with `xcc reproduce --all --out DIR`."
    )


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
