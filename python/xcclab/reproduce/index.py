"""``xcc reproduce --all``: every implemented experiment, in parallel, and one index over them.

Each experiment runs in its own worker (:mod:`xcclab.executor`: the process pool, or Dask) and
writes its usual report directory ``OUT/<id>/`` (``report.md``, ``metrics.json``, figures,
``runs/``). An experiment that fails is listed with its error; the others are unaffected. Then
``OUT/index.md`` and ``OUT/index.html`` summarise them in one table:

- **paper's claim**: the experiment's ``CLAIM`` if its module states one, else its title;
- **ours**: computed from ``metrics.json``'s comparisons (how many of the paper's numbers we
  match within the tolerance, and the largest gap), never written by hand;
- **verdict**: ``reproduced`` (every compared number within tolerance), ``partly`` (at least
  half), ``not reproduced`` (fewer), ``qualitative`` (the paper states no number for this
  case), ``failed`` (the experiment raised), or ``not judged`` (``--quick`` runs are too short
  to compare with a paper).

The tolerance is the module's ``TOLERANCE`` (relative) if it has one, else 5%, the default of
:func:`~xcclab.reproduce.report.gap_summary` that the reports themselves use.
"""

from __future__ import annotations

import datetime as _dt
import html
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._fsutil import write_text_atomic
from ..executor import run_tasks
from . import EXPERIMENTS, Experiment
from .report import Comparison, fmt_pct

DEFAULT_TOLERANCE = 0.05


@dataclass
class ExperimentTask:
    id: str
    out: str
    quick: bool


def run_experiment(task: ExperimentTask) -> dict[str, Any]:
    """Run one experiment in a worker; failures become data (``{"error": ...}``)."""
    import inspect

    from . import get

    try:
        run = get(task.id).load().run
        # Workers share the terminal: no per-run progress bars if the experiment draws them.
        extra = {"progress": False} if "progress" in inspect.signature(run).parameters else {}
        report = run(Path(task.out), quick=task.quick, **extra)
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
    implemented = [e for e in EXPERIMENTS if e.status == "implemented"]
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
    for e in (e for e in EXPERIMENTS if e.status == "implemented"):
        if (out / e.id / "metrics.json").is_file():
            rows.append(_row(out, e, None, False))
        else:
            log(f"{e.id}: no {out / e.id / 'metrics.json'}; listed as not run")
            claim = getattr(e.load(), "CLAIM", None) or e.title
            rows.append(Row(e, claim, "-", "not run", None, [], None))
    note = "`xcc reproduce --index` (over the reports already there)"
    write_text_atomic(out / "index.md", render_markdown(rows, False, note))
    write_text_atomic(out / "index.html", render_html(rows, False, note))
    return Reproduction(out / "index.md", out / "index.html", rows)


def _row(out: Path, e: Experiment, error: str | None, quick: bool) -> Row:
    module = e.load()
    claim = getattr(module, "CLAIM", None) or e.title
    if error is not None:
        return Row(e, claim, "-", "failed", None, [], error)
    metrics = json.loads((out / e.id / "metrics.json").read_text(encoding="utf-8"))
    tolerance = getattr(module, "TOLERANCE", DEFAULT_TOLERANCE)
    ours, verdict = judge(metrics.get("comparisons", []), tolerance)
    if quick or metrics.get("quick"):
        verdict = "not judged (quick run)"
    figures = [f"{e.id}/{f}" for f in metrics.get("figures", [])]
    return Row(e, claim, ours, verdict, f"{e.id}/report.md", figures, None)


def judge(comparisons: list[dict[str, Any]], tolerance: float) -> tuple[str, str]:
    """("ours" text, verdict) from metrics.json comparisons; see the module doc."""
    cs = [
        Comparison(c["quantity"], c["paper"], c.get("ours"), c.get("unit", ""), c.get("cell", {}))
        for c in comparisons
    ]
    if not cs:
        # The paper states no number for this case (its claims are qualitative): the report
        # discusses them, the index does not pretend to judge.
        return "the paper states no number here; see the report", "qualitative"
    measured = [c for c in cs if c.rel_diff is not None]
    if not measured:
        return "no number could be compared", "not reproduced"
    inside = sum(1 for c in measured if c.within(tolerance))
    worst = max(measured, key=lambda c: abs(c.rel_diff or 0))
    cell = ", ".join(f"{k}={v}" for k, v in worst.cell.items())
    ours = (
        f"{inside} of {len(measured)} numbers within {tolerance * 100:g}% of the paper; "
        f"largest gap {fmt_pct(worst.rel_diff)} ({worst.quantity}{', ' + cell if cell else ''})"
    )
    if inside == len(measured):
        verdict = "reproduced"
    elif inside * 2 >= len(measured):
        verdict = "partly"
    else:
        verdict = "not reproduced"
    return ours, verdict


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
    when = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# xcclab: reproduction report",
        "",
        f"Generated by {_how(quick, note)} on {when}: every "
        "implemented experiment of the catalog, each with its own report.",
        "",
    ]
    table = []
    for r in rows:
        link = f"[{r.experiment.id}]({r.report})" if r.report else r.experiment.id
        figs = ", ".join(f"[{label}]({path})" for label, path in _figure_links(r)) or "-"
        ours = r.ours if r.error is None else f"error: {r.error}"
        table.append([link, _md(r.claim), _md(ours), r.verdict, figs])
    lines.append("| experiment | paper's claim | ours | verdict | figures |")
    lines.append("|:---|:---|:---|:---|:---|")
    lines += ["| " + " | ".join(row) + " |" for row in table]
    lines += ["", _footer(rows), ""]
    return "\n".join(lines)


def render_html(rows: list[Row], quick: bool, note: str | None = None) -> str:
    when = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    e = html.escape
    body = []
    for r in rows:
        link = (
            f'<a href="{e(r.report)}">{e(r.experiment.id)}</a>' if r.report else e(r.experiment.id)
        )
        figs = " ".join(
            f'<a href="{e(p)}"><img src="{e(p)}" alt="{e(label)}" height="90"></a>'
            if p.endswith(".png")
            else f'<a href="{e(p)}">{e(label)}</a>'
            for label, p in _figure_links(r)
        )
        ours = e(r.ours) if r.error is None else f"<b>error:</b> {e(r.error)}"
        verdict_class = r.verdict.split(" ")[0]
        body.append(
            f"<tr><td>{link}</td><td>{e(r.claim)}</td><td>{ours}</td>"
            f'<td class="{e(verdict_class)}">{e(r.verdict)}</td><td>{figs}</td></tr>'
        )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>xcclab: reproduction report</title>
<style>
body {{ font-family: sans-serif; margin: 2em; }}
table {{ border-collapse: collapse; }}
td, th {{ border: 1px solid #ccc; padding: 0.4em; vertical-align: top; }}
.reproduced {{ background: #dfd; }} .partly {{ background: #ffd; }}
.not, .failed {{ background: #fdd; }}
</style></head><body>
<h1>xcclab: reproduction report</h1>
<p>Generated by {e(_how(quick, note)).replace("`", "")} on {e(when)}.</p>
<table>
<tr><th>experiment</th><th>paper's claim</th><th>ours</th><th>verdict</th><th>figures</th></tr>
{chr(10).join(body)}
</table>
<p>{e(_footer(rows))}</p>
</body></html>
"""


def _footer(rows: list[Row]) -> str:
    counts: dict[str, int] = {}
    for r in rows:
        counts[r.verdict] = counts.get(r.verdict, 0) + 1
    summary = ", ".join(f"{n} {v}" for v, n in counts.items())
    planned = sum(1 for e in EXPERIMENTS if e.status != "implemented")
    noun = "experiment" if len(rows) == 1 else "experiments"
    return (
        f"{len(rows)} {noun}: {summary}. {planned} more are planned "
        "(`xcc reproduce --list`). Regenerate with `xcc reproduce --all --out DIR`."
    )


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
