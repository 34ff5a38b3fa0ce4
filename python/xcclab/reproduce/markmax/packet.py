"""What the packet-level MarkMax reproductions (``markmax-s1``, ``-s2``, ``-s3``) share: the
topology of seed 003's Fig. 2, the three bottleneck queues compared (DT, MM-B, MM-T), the
paper's metrics (Section IV), and the per-cell run loop.

Topology (Fig. 2): sources s_i -- S -- D -- d_i, access links 300 Mbit/s with delay a_i on both
sides, bottleneck S -> D of mu = 70 Mbit/s and delay a_btl, so delta_i = 4 a_i + 2 a_btl.
Scenario 2's reverse connection runs s_3 -- D -> S -- d_3. Every constant that Scenario 1's
DropTail reproduction (``markmax_s1_dt``) already fixed is reused from it (except t_f, see
:data:`T_F_S`), so the DT columns of all four experiments are the same simulation set-up.

Only S -> D runs MarkMax; every other link direction is DropTail (the paper's Section IV). The
MarkMax buffer is unlimited, DropTail's is theta_DT = 240 packets (protocols.md §13.7-7); the
reverse direction D -> S keeps its 240-packet DropTail buffer in every run.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ...scenario import Scenario, fmt_rate, fmt_time
from ..common.report import jain_index
from ..common.seeds import seeded_cells
from . import markmax_s1_dt as dt

MU_BPS = dt.MU_BPS
ACCESS_BPS = dt.ACCESS_BPS
DELTA1_NS = dt.DELTA1_NS
A_BTL_NS = dt.A_BTL_NS
MSS_B, HEADER_B = dt.MSS_B, dt.HEADER_B
PKT_B = MSS_B + HEADER_B  # 540 B: the paper's MSS, the unit of its thresholds
BUFFER_PKT = dt.BUFFER_PKT
#: Our choice of t_f (the paper does not give it): 1000 s. With it our MarkMax cells of Tables
#: II and III come within a few tenths of a percent of the paper's J, rho and mean queue, while
#: with markmax-s1-dt's 100 s connection 2's slow additive increase after the start still
#: weighs on J (delta_2 = 240 ms: one MSS per 250 ms). Each report also shows the 100 s runs.
T_F_S = 1000
ALT_T_F_S = dt.T_F_S
QUICK_T_F_S = dt.QUICK_T_F_S

#: Seed 003, Section IV-B: theta = 240, theta_l = 200, theta_h = 280 MSS; MM-T's tail 10 %.
THETA_PKT, THETA_L_PKT, THETA_H_PKT = 240, 200, 280
TAIL = 0.1

#: Queue kinds compared, with the paper's column names.
LABELS = {"dt": "DT", "mmb": "MM-B", "mmt": "MM-T"}

TRANSPORT = {
    "mss": f"{MSS_B}B",
    "header": f"{HEADER_B}B",
    "ecn": True,
    "sack": False,
    "delayed_ack": False,
    "min_rto": "200ms",
    "pace": False,
    "connection": "open",
}

_RUN_LENGTH = "- run length t_f = 100 s;"
if _RUN_LENGTH not in dt.CHOICES:  # keep in step with markmax_s1_dt
    raise ImportError("markmax_s1_dt.CHOICES no longer states t_f = 100 s")
CHOICES = dt.CHOICES.replace(
    _RUN_LENGTH,
    f"- run length t_f = {T_F_S} s (markmax-s1-dt uses 100 s; the reports show both);",
) + (
    "\n- MarkMax (MM-B, MM-T) marks CE on the selected connection's first packet from the head;"
    "\n  its thresholds count packets (every data packet is one 540 B MSS), its buffer is"
    "\n  unlimited; MM-T's tail is the last 10 % of the queue in packets, taken at signal time."
)


def access_delay_ns(delta_ns: int) -> int:
    """a_i from delta_i = 4 a_i + 2 a_btl, rounded to the nanosecond."""
    a = round((delta_ns - 2 * A_BTL_NS) / 4)
    if a <= 0:
        raise ValueError(f"delta {delta_ns} ns is shorter than 2 a_btl")
    return a


def queue(kind: str) -> tuple[str | int, str | dict[str, Any]]:
    """(buffer, queue) of the S -> D direction for ``kind`` in ``LABELS``."""
    if kind == "dt":
        return BUFFER_PKT, "droptail"
    spec: dict[str, Any] = {
        "kind": "markmax",
        "variant": "b" if kind == "mmb" else "t",
        "theta": f"{THETA_PKT}pkt",
        "theta_l": f"{THETA_L_PKT}pkt",
        "theta_h": f"{THETA_H_PKT}pkt",
    }
    if kind == "mmt":
        spec["tail"] = TAIL
    return "unlimited", spec


def scenario(
    name: str,
    deltas_ns: Sequence[int],
    kind: str,
    t_f_s: int,
    *,
    reverse_delta_ns: int | None = None,
    description: str = "",
    seed: int = 1,
    jitter_ns: int = 0,
) -> Scenario:
    """N forward connections s_i -> d_i with propagation RTTs ``deltas_ns`` over S -> D running
    ``kind``; with ``reverse_delta_ns`` one more connection s_{N+1} -> d_{N+1} from D to S."""
    n = len(deltas_ns)
    sc = Scenario(name, duration=f"{t_f_s}s", description=description, seed=seed)
    sc.add_host("s{i}", count=n).add_host("d{i}", count=n)
    jitter = fmt_time(jitter_ns * 1e-9) if jitter_ns else None
    if reverse_delta_ns is not None:
        sc.add_host(f"s{n + 1}").add_host(f"d{n + 1}")
    sc.add_router("S").add_router("D")
    delays = [access_delay_ns(d) for d in deltas_ns]
    for i, a in enumerate(delays, 1):
        sc.add_link(
            f"s{i}",
            "S",
            rate=fmt_rate(ACCESS_BPS),
            delay=f"{a}ns",
            buffer="unlimited",
            jitter=jitter,
        )
    buffer, q = queue(kind)
    reverse = None if kind == "dt" else {"buffer": BUFFER_PKT, "queue": "droptail"}
    sc.add_link(
        "S",
        "D",
        rate=fmt_rate(MU_BPS),
        delay=fmt_time(A_BTL_NS * 1e-9),
        buffer=buffer,
        queue=q,
        reverse=reverse,
    )
    for i, a in enumerate(delays, 1):
        sc.add_link("D", f"d{i}", rate=fmt_rate(ACCESS_BPS), delay=f"{a}ns", buffer="unlimited")
    if reverse_delta_ns is not None:
        a = access_delay_ns(reverse_delta_ns)
        sc.add_link(f"s{n + 1}", "D", rate=fmt_rate(ACCESS_BPS), delay=f"{a}ns", buffer="unlimited")
        sc.add_link("S", f"d{n + 1}", rate=fmt_rate(ACCESS_BPS), delay=f"{a}ns", buffer="unlimited")
    cc = {"kind": "newreno", "initial_window": 2}
    sc.add_flow("f{i}", src="s{i}", dst="d{i}", count=n, start="0s", cc=cc, transport=TRANSPORT)
    if reverse_delta_ns is not None:
        sc.add_flow(
            f"f{n + 1}", src=f"s{n + 1}", dst=f"d{n + 1}", start="0s", cc=cc, transport=TRANSPORT
        )
    sc.metrics(interval=dt.SERIES_INTERVAL)
    return sc


def measure(result: Any, t_f_s: float, n_forward: int) -> dict[str, Any]:
    """Seed 003's metrics of one run: J over the ``n_forward`` connections crossing S -> D,
    rho = D(t_f) / (mu t_f) with D the data bytes sent over S -> D, mean queue of S -> D and
    T = q / mu; plus what explains them (cuts per connection, marks, drops)."""
    flows = result.flows.sort("flow_id")
    delivered = [int(b or 0) for b in flows["bytes_delivered"].to_list()]
    goodputs = [b * 8 / t_f_s for b in delivered]
    btl = result.link("S->D")
    q = btl["mean_queue_bytes"]
    return {
        "J": jain_index(goodputs[:n_forward]),
        "J_all": jain_index(goodputs),
        "rho": btl["data_bytes_out"] * 8 / (MU_BPS * t_f_s),
        "queue_bytes": q,
        "delay_ms": q * 8 / MU_BPS * 1e3,
        "goodput_bps": goodputs,
        "ecn_reductions": flows["ecn_reductions"].to_list(),
        "fast_recoveries": flows["fast_recoveries"].to_list(),
        "timeouts": flows["timeouts"].to_list(),
        "retransmits": flows["retransmits"].to_list(),
        "bottleneck_marks": btl["marks"],
        "bottleneck_drops": btl["drops"],
        "bottleneck_max_queue_bytes": btl["max_queue_bytes"],
        "reverse_drops": result.link("D->S")["drops"],
    }


#: The seeded cells' randomisation: per-packet jitter on the forward access links, uniform in
#: [0, one bottleneck packet time] (540 B at 70 Mbit/s = 62 us), drawn from the run's seed.
SEED_JITTER_NS = 62_000
#: What :func:`seeded_cell` returns, summarised over the seeds.
SEEDED_KEYS = ("J", "rho", "queue_bytes", "delay_ms")


def run_seeded_cells(
    cases: dict[str, dict[str, Any]],
    log: Callable[[str], None] | None,
    experiment: str,
    keys: Sequence[str] = SEEDED_KEYS,
) -> dict:
    """Runs :func:`seeded_cell` for each case over the seeds (access jitter: DropTail's J is
    phase-sensitive) and summarises ``keys``."""
    return seeded_cells(
        f"{__name__}:seeded_cell", cases, keys, log, experiment, " with access jitter"
    )


def seeded_cell(
    *,
    seed: int,
    deltas_ns: Sequence[int],
    kind: str,
    t_f_s: float,
    reverse_delta_ns: int | None = None,
) -> dict[str, Any]:
    """One run of a cell with seed ``seed`` and :data:`SEED_JITTER_NS` of access jitter: its
    J, rho, mean queue and delay (a worker of :func:`xcclab.reproduce.common.seeds.over_seeds`)."""
    import xcclab

    sc = scenario(
        f"seeded-{kind}-{seed}",
        deltas_ns,
        kind,
        int(t_f_s),
        reverse_delta_ns=reverse_delta_ns,
        seed=seed,
        jitter_ns=SEED_JITTER_NS,
    )
    m = measure(xcclab.run(sc, progress=False), t_f_s, len(deltas_ns))
    return {k: m[k] for k in SEEDED_KEYS}


def run_cells(
    tmp: Path,
    cells: Sequence[tuple[str, Scenario, str, int]],
    t_f_s: float,
    *,
    log: Callable[[str], None],
    progress: bool,
) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """Runs ``(key, scenario, header, n_forward)`` cells into ``tmp/runs/<key>``; returns the
    measurements by key and the results (for figures)."""
    import xcclab

    measured: dict[str, dict[str, Any]] = {}
    results: dict[str, Any] = {}
    for key, sc, header, n_forward in cells:
        log(f"{sc.name} ({t_f_s:g} s simulated)")
        run_dir = tmp / "runs" / key
        result = xcclab.run(sc, progress=progress)
        result.save(run_dir)
        (run_dir / "scenario.toml").write_text(sc.to_toml(header=header), encoding="utf-8")
        measured[key] = measure(result, t_f_s, n_forward)
        measured[key]["run_dir"] = f"runs/{key}"
        results[key] = result
    return measured, results


def run_main_and_alt(
    tmp: Path,
    make_cells: Callable[[float, str], Sequence[tuple[str, Scenario, str, int]]],
    quick: bool,
    *,
    log: Callable[[str], None],
    progress: bool,
) -> tuple[float, dict[str, dict[str, Any]], dict[str, Any], dict[str, dict[str, Any]]]:
    """Runs ``make_cells(t_f, key_prefix)`` at the experiment's run length (the short one when
    ``quick``) and, unless ``quick``, again at ``ALT_T_F_S`` under ``alt-`` keys. Returns the
    run length, the measurements and results of the main runs, and the alternative ones."""
    t_f_s = QUICK_T_F_S if quick else T_F_S
    measured, results = run_cells(tmp, make_cells(t_f_s, ""), t_f_s, log=log, progress=progress)
    alt: dict[str, dict[str, Any]] = {}
    if not quick:
        alt, _ = run_cells(
            tmp, make_cells(ALT_T_F_S, "alt-"), ALT_T_F_S, log=log, progress=progress
        )
    return t_f_s, measured, results, alt


def write_grid_scenarios(
    directory: str | Path,
    experiment: str,
    kinds: Sequence[str],
    ratios: Sequence[int],
    scenario: Callable[[int, str], Scenario],
    header: Callable[[int, str], str],
) -> list[Path]:
    """``<experiment>-<kind>-r<ratio>.toml`` into ``directory`` for every cell of the grid."""
    paths = []
    for kind in kinds:
        for ratio in ratios:
            path = Path(directory) / f"{experiment}-{kind}-r{ratio}.toml"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(scenario(ratio, kind).to_toml(header=header(ratio, kind)), "utf-8")
            paths.append(path)
    return paths


def run_grid(
    tmp: Path,
    kinds: Sequence[str],
    ratios: Sequence[int],
    scenario: Callable[[int, str, float], Scenario],
    header: Callable[[int, str], str],
    paper: dict[str, dict[int, dict[str, float]]],
    quantities: Sequence[tuple[str, str, str, int]],
    quick: bool,
    *,
    log: Callable[[str], None],
    progress: bool,
) -> tuple[float, dict[str, dict[str, Any]], dict[str, Any], dict[str, dict[str, Any]], list]:
    """Runs every (kind, delta_2/delta_1) cell with :func:`run_main_and_alt` (cells keyed
    ``<kind>-r<ratio>``, two forward connections) and compares each quantity with ``paper``.
    Returns the run length, measurements, results, the alternative runs and the comparisons."""
    from ..common.report import Comparison

    def cells(t_f_s: float, prefix: str) -> list[tuple[str, Scenario, str, int]]:
        return [
            (f"{prefix}{kind}-r{r}", scenario(r, kind, t_f_s), header(r, kind), 2)
            for kind in kinds
            for r in ratios
        ]

    t_f_s, measured, results, alt = run_main_and_alt(tmp, cells, quick, log=log, progress=progress)
    comparisons = [
        Comparison(
            label,
            paper[kind][r][key],
            measured[f"{kind}-r{r}"][key],
            unit,
            {"delta_ratio": r, "queue": LABELS[kind]},
        )
        for key, label, unit, _ in quantities
        for kind in kinds
        for r in ratios
    ]
    return t_f_s, measured, results, alt, comparisons


#: Axis labels of the tables' quantities, with their units.
AXIS_LABELS = dt.AXIS_LABELS


def comparison_figure(
    tmp: Path,
    columns: Sequence[Any],
    kinds: Sequence[str],
    keys: Sequence[str],
    paper: Callable[[str, Any, str], float],
    measured: Callable[[str, Any], dict[str, Any]],
    seeded: Callable[[str, Any], dict[str, Any] | None],
    title: str,
    xlabel: str,
    name: str = "comparison",
) -> list[str]:
    """One panel per quantity of ``keys``: each table cell (column x kind) as the paper's bar
    (``paper(kind, column, key)``) beside our dot, the mean over seeds with its 95 % interval
    where the cell was seeded (``seeded(kind, column)``, else ``measured(kind, column)``'s
    single run); no line joins separate cells. Returns the files written."""
    from ...figures import paper_vs_ours
    from ...figures import pyplot as _pyplot
    from ..common.report import save_figure

    plt = _pyplot()
    width = 4.4 if len(columns) > 1 else 3.2
    fig, axes = plt.subplots(1, len(keys), figsize=(width * len(keys), 3.8))
    for ax, key in zip(axes, keys):
        for n, kind in enumerate(kinds):
            ours, ci = [], []
            for col in columns:
                s = (seeded(kind, col) or {}).get(key)
                ours.append(s["mean"] if s else measured(kind, col)[key])
                ci.append(tuple(s["ci95"]) if s else None)
            paper_vs_ours(
                ax,
                columns,
                [paper(kind, col, key) for col in columns],
                ours,
                ci,
                offset=(n - (len(kinds) - 1) / 2) * 0.22,
                color=f"C{n}",
                label=LABELS[kind],
            )
        ax.set_xlim(-0.6, len(columns) - 0.4)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(AXIS_LABELS.get(key, key))
        ax.grid(True, axis="y", lw=0.3)
    axes[0].legend(fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    names = [p.name for p in save_figure(fig, tmp, name)]
    plt.close(fig)
    return names


def queue_trace_figure(
    tmp: Path, results: dict[str, Any], keys: Sequence[str], title: str, stem: str
) -> list[str]:
    """S -> D queue (packets) over time for the runs ``keys``, one panel each."""
    import polars as pl

    from ...figures import pyplot as _pyplot
    from ..common.report import save_figure

    plt = _pyplot()
    fig, axes = plt.subplots(len(keys), 1, figsize=(10, 2.2 * len(keys)), sharex=True)
    axes = list(axes) if len(keys) > 1 else [axes]
    for ax, key in zip(axes, keys):
        res = results[key]
        btl_id = res.link("S->D")["link_id"]
        q = res.link_series.filter(pl.col("link_id") == btl_id).sort("time_s")
        ax.plot(q["time_s"].to_numpy(), q["queue_packets"].to_numpy(), lw=0.5)
        for y, style in ((THETA_L_PKT, ":"), (THETA_PKT, "--"), (THETA_H_PKT, ":")):
            ax.axhline(y, color="grey", ls=style, lw=0.7)
        ax.set_ylabel(f"{key}\nqueue (pkt)")
        ax.grid(True, lw=0.3)
    axes[-1].set_xlabel("time (s)")
    fig.suptitle(title)
    fig.tight_layout()
    names = [p.name for p in save_figure(fig, tmp, stem)]
    plt.close(fig)
    return names


def cut_shares(cell: dict[str, Any], n_forward: int) -> str:
    """``a/b/...``: congestion responses (ECN reductions + fast recoveries + timeouts) per
    forward connection."""
    return "/".join(
        str(cell["ecn_reductions"][i] + cell["fast_recoveries"][i] + cell["timeouts"][i])
        for i in range(n_forward)
    )


def short_rtt_share(cell: dict[str, Any], n_forward: int) -> float:
    """Share of the forward goodput taken by connection 1 (the shortest delta)."""
    g = cell["goodput_bps"][:n_forward]
    return g[0] / sum(g) if sum(g) else math.nan


def quantity_table(
    comparisons: Sequence[Any],
    quantity: str,
    rows: Sequence[Any],
    row_key: str,
    kinds: Sequence[str],
    digits: int,
    row_header: str,
) -> str:
    """One Markdown table for ``quantity``: a row per cell value of ``row_key``, the paper's and
    our number (and the relative difference) for every queue kind."""
    from ..common.report import fmt, fmt_pct, markdown_table

    by = {(c.quantity, c.cell.get(row_key), c.cell["queue"]): c for c in comparisons}
    headers = [row_header]
    for k in kinds:
        headers += [f"{LABELS[k]} paper", f"{LABELS[k]} ours", "diff"]
    body = []
    for r in rows:
        line = [str(r)]
        for k in kinds:
            c = by.get((quantity, r, LABELS[k]))
            if c is None:
                line += ["–", "–", "–"]
            else:
                line += [fmt(c.paper, digits), fmt(c.ours, digits), fmt_pct(c.rel_diff)]
        body.append(line)
    return markdown_table(headers, body)
