"""maxnet-cbr on real packets: ``xcc reproduce maxnet-cbr --stack kernel|udp``.

The experiment of :mod:`.maxnet_cbr` (seed 000 Fig. 9) through the emu router (one userspace
process on this 2-core machine), scaled to a 100 Mbit/s bottleneck and a 40 Mbit/s CBR (the
paper's 1 Gbit/s and 400 Mbit/s: the same ratio), RTT 29 ms, mu = 0.94. It runs three times,
and the report overlays them:

- ``kernel``: Linux TCP with the BPF ``maxnet`` congestion control and the TCP option
  (docs/kernel.md), the router's MaxNet link stamping the option;
- ``udp``: xcclab's MaxNet transport over UDP (the simulator's host code, real clock);
- ``sim``: the simulator on the same scaled scenario.

``--stack`` names the stack the claims are judged on; the other two are shown beside it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import maxnet_cbr as base
from .report import (
    Comparison,
    atomic_dir,
    figure_links,
    fmt,
    markdown_table,
    save_figure,
    write_metrics,
)

ID = "maxnet-cbr"
TITLE = "MaxNet with CBR cross traffic on real packets: kernel, UDP transport, simulator"
C_BPS = 100_000_000
CBR_BPS = 40_000_000
STACKS = ("kernel", "udp", "sim")
#: The UDP transport's datagrams must fit the namespaces' 1500-byte MTU with its headers.
UDP_MSS = "1432B"
SMOOTH_S = 0.1


def scenario_dict(scale: float, stack: str) -> dict[str, Any]:
    d = json.loads(base.scenario(scale).to_json())
    for link in d["link"]:
        if link["between"] == ["r1", "r2"]:
            link["rate"] = f"{C_BPS // 1_000_000}Mbps"
    for flow in d["flow"]:
        if flow["kind"] == "cbr":
            flow["rate"] = f"{CBR_BPS // 1_000_000}Mbps"
        elif stack == "udp":
            flow["transport"] = {"mss": UDP_MSS}
    d["name"] = f"maxnet-cbr-{stack}"
    return d


class _Json:
    def __init__(self, data: dict[str, Any]):
        self.data = data

    def to_json(self) -> str:
        return json.dumps(self.data)


def run_stack(stack: str, scale: float) -> Any:
    import xcclab

    data = scenario_dict(scale, stack)
    if stack == "sim":
        return xcclab.run(data)
    from ..kernel.emu import run_emu

    return run_emu(_Json(data), stack)


def time_to_mu(result: Any) -> float:
    """Seconds from the start until the bottleneck's 100 ms mean utilisation first reaches
    95 % of mu."""

    t, util = _smoothed_util(result)
    hit = t[util >= 0.95 * base.MU]
    return float(hit.min()) if hit.size else float("nan")


def dip_seconds(result: Any, scale: float) -> float:
    """Seconds the 100 ms mean utilisation spends below 0.8 outside the transients (the first
    second, and 3 s after the CBR stops): stalls of the real stacks."""
    import numpy as np

    t, util = _smoothed_util(result)
    stop, end = base.CBR_STOP_S * scale, base.T_F_S * scale
    steady = (t > 1.0) & ~((t > stop) & (t < stop + 3.0)) & (t < end - 0.2)
    step = float(np.median(np.diff(t))) if t.size > 1 else 0.0
    return float(np.count_nonzero(steady & (util < 0.8)) * step)


def _smoothed_util(result: Any) -> tuple[Any, Any]:
    import numpy as np
    import polars as pl

    link = result.link("r1->r2")
    ls = result.link_series.filter(pl.col("link_id") == link["link_id"]).sort("time_s")
    t = ls["time_s"].to_numpy()
    util = ls["utilisation"].to_numpy()
    step = float(np.median(np.diff(t))) if t.size > 1 else SMOOTH_S
    k = max(1, round(SMOOTH_S / step))
    smooth = np.convolve(util, np.ones(k) / k, mode="same")
    return t, smooth


def run(
    out_dir: str | Path,
    quick: bool = False,
    *,
    stack: str = "kernel",
    experiment: str = ID,
    log: Callable[[str], None] | None = None,
    progress: bool = True,
) -> Path:
    """Runs the three stacks and writes report.md, metrics.json and figures into ``out_dir``."""
    if experiment != ID:
        raise ValueError(f"{__name__} runs {ID}, not {experiment}")
    if stack not in STACKS:
        raise ValueError(f"stack {stack!r}: expected one of {', '.join(STACKS)}")
    log = log or (lambda _msg: None)
    scale = base.QUICK_SCALE if quick else 1.0
    out_dir = Path(out_dir)
    with atomic_dir(out_dir) as tmp:
        results: dict[str, Any] = {}
        measured: dict[str, dict[str, Any]] = {}
        for s in STACKS:
            log(f"{ID} --stack {s}: {base.T_F_S * scale:g} s")
            results[s] = run_stack(s, scale)
            results[s].save(tmp / "runs" / s)
            m = base.measure(results[s], scale)
            m["time_to_mu_s"] = time_to_mu(results[s])
            m["utilisation"] = float(results[s].link("r1->r2")["utilisation"])
            m["drops"] = int(results[s].link("r1->r2")["drops"])
            m["dip_s"] = dip_seconds(results[s], scale)
            emu = results[s].run_info.get("emu", {})
            m["router_lateness_p99_us"] = emu.get("lateness_p99_us", float("nan"))
            m["loadavg"] = emu.get("loadavg_1min_after", float("nan"))
            measured[s] = m
        m = measured[stack]
        comparisons = [
            Comparison("utilisation before the CBR", base.MU, m["util_before"], ""),
            Comparison("utilisation with the CBR", base.MU, m["util_during"], ""),
            Comparison("utilisation after the CBR", base.MU, m["util_after"], ""),
            Comparison(
                "freed capacity reclaimed 0.3 s after the CBR stops", 2 / 3, m["reclaimed_0_3s"], ""
            ),
        ]
        figures = _figures(tmp, results, scale, stack)
        write_metrics(
            tmp,
            f"{ID}-{stack}",
            title=TITLE,
            quick=quick,
            comparisons=comparisons,
            measured={s: measured[s] for s in STACKS},
            figures=figures,
        )
        text = _report(measured, comparisons, figures, quick, stack)
        (tmp / "report.md").write_text(text, encoding="utf-8")
    return out_dir / "report.md"


def _figures(tmp: Path, results: dict[str, Any], scale: float, stack: str) -> list[str]:
    import numpy as np
    import polars as pl

    from ..figures import pyplot as _pyplot

    plt = _pyplot()
    fig, (ax_u, ax_r, ax_q) = plt.subplots(3, 1, figsize=(10, 8), sharex=True)
    styles = {"kernel": ("C3", 1.0), "udp": ("C0", 0.8), "sim": ("k", 0.7)}
    for s, r in results.items():
        color, lw = styles[s]
        t, util = _smoothed_util(r)
        ax_u.plot(t, util, color=color, lw=lw, label=s)
        fs = r.flow_series.filter(pl.col("flow_id") == 0).sort("time_s")
        ft, rate = fs["time_s"].to_numpy(), fs["rate_bps"].to_numpy()
        step = float(np.median(np.diff(ft))) if ft.size > 1 else SMOOTH_S
        k = max(1, round(SMOOTH_S / step))
        ax_r.plot(ft, np.convolve(rate, np.ones(k) / k, mode="same") / 1e6, color=color, lw=lw)
        link = r.link("r1->r2")
        ls = r.link_series.filter(pl.col("link_id") == link["link_id"]).sort("time_s")
        ax_q.plot(ls["time_s"].to_numpy(), ls["queue_bytes"].to_numpy() / 1e3, color=color, lw=lw)
    ax_u.axhline(base.MU, color="grey", ls=":", lw=0.8, label="mu")
    ax_u.set_ylabel("bottleneck utilisation\n(100 ms mean)")
    ax_u.set_ylim(0, 1.05)
    ax_u.legend(fontsize=8, loc="lower left")
    ax_r.set_ylabel("MaxNet goodput\n(Mbit/s, 100 ms)")
    ax_q.set_ylabel("queue (kB)")
    ax_q.set_xlabel("time (s)")
    for ax in (ax_u, ax_r, ax_q):
        ax.grid(True, lw=0.3)
        for x in (base.CBR_START_S * scale, base.CBR_STOP_S * scale):
            ax.axvline(x, color="grey", lw=0.5)
    fig.suptitle(
        "maxnet-cbr on real packets: 100 Mbit/s, RTT 29 ms, mu = 0.94, 40 Mbit/s CBR "
        f"(judged: {stack})"
    )
    fig.tight_layout()
    written = [p.name for p in save_figure(fig, tmp, "stacks")]
    plt.close(fig)
    return written


def _holds(c: Comparison) -> bool:
    if c.quantity.startswith("utilisation"):
        return abs(c.ours / c.paper - 1) <= 0.015
    return c.ours > c.paper


def _report(
    measured: dict[str, dict[str, Any]],
    comparisons: list[Comparison],
    figures: list[str],
    quick: bool,
    stack: str,
) -> str:
    claim_rows = [
        [c.quantity, fmt(c.paper, 3), fmt(c.ours, 3), "yes" if _holds(c) else "no"]
        for c in comparisons
    ]
    keys = [
        ("time to 95 % of mu (s)", "time_to_mu_s", 1, 2),
        ("utilisation before the CBR", "util_before", 1, 3),
        ("utilisation with the CBR", "util_during", 1, 3),
        ("utilisation after the CBR", "util_after", 1, 3),
        ("MaxNet goodput with the CBR (Mbit/s)", "maxnet_rate_during_bps", 1e-6, 1),
        ("MaxNet goodput after the CBR (Mbit/s)", "maxnet_rate_after_bps", 1e-6, 1),
        ("freed capacity back after 0.3 s", "reclaimed_0_3s", 1, 2),
        ("freed capacity back after 1 s", "reclaimed_1s", 1, 2),
        ("95 % of it back after (s)", "time_to_95pct_s", 1, 2),
        ("peak queue after the CBR starts (kB)", "peak_queue_bytes", 1e-3, 0),
        ("drops at the bottleneck", "drops", 1, 0),
        ("retransmissions", "retransmits", 1, 0),
        ("time below 80 % utilisation, steady parts (s)", "dip_s", 1, 2),
        ("router lateness p99 (µs)", "router_lateness_p99_us", 1, 0),
        ("machine load average after the run", "loadavg", 1, 1),
    ]
    stack_rows = [
        [label] + [fmt(measured[s][key] * mult, digits) for s in STACKS]
        for label, key, mult, digits in keys
    ]
    figs = figure_links(figures)
    quick_note = "\n> **Quick mode**: every time halved; not a reproduction.\n" if quick else ""
    holds = sum(_holds(c) for c in comparisons)
    k = measured["kernel"]
    return "\n".join(
        [
            f"# {TITLE}",
            "",
            f"Generated by `xcc reproduce {ID} --stack {stack}`.",
            quick_note,
            "## Set-up",
            "",
            "Seed 000's Fig. 9 experiment scaled by 1/10 in rate: one 100 Mbit/s link with 14.5 ms "
            "one-way delay (RTT 29 ms), MaxNet router with mu = 0.94 (dt_p 1 ms, T0 130 ms), "
            "unlimited buffers; one MaxNet flow (MaxStart on) from 0 to 30 s and a 40 Mbit/s CBR "
            "of 1500 B datagrams from 10 to 20 s. Through the emu router (network namespaces, one "
            "userspace router; `docs/emu.md`), MaxNet runs on Linux TCP with the BPF congestion "
            "control (`kernel`, `docs/kernel.md`) or on xcclab's transport over UDP (`udp`, MSS "
            f"{UDP_MSS} to fit the MTU); `sim` is the simulator on the same scenario. The paper's "
            "1 Gbit/s is beyond what this 2-core machine's userspace router forwards.",
            "",
            f"## Claims (judged on `{stack}`)",
            "",
            markdown_table(["quantity", "paper", "ours", "claim holds"], claim_rows),
            "",
            "Utilisation counts wire bytes at the bottleneck; 'holds' means within 1.5 % of mu. "
            "The reclaimed fraction's paper value is the lower bound of its claim.",
            "",
            "## The three stacks",
            "",
            markdown_table(["quantity", *STACKS], stack_rows),
            "",
            "## Figures",
            "",
            figs,
            "",
            "## Discussion",
            "",
            f"{holds} of {len(comparisons)} claims hold on `{stack}`. Kernel MaxNet reaches "
            f"95 % of mu C {fmt(k['time_to_mu_s'], 2)} s after the start (MaxStart: the spare "
            "capacity echoed on the first ACK, then the linear ramp) and holds the link at mu "
            "before, with and after the CBR, like the UDP transport and the simulator: the "
            "router, its price and the source law are the same; only the transport differs "
            "(Linux TCP with delayed ACKs, TSO and its own RTT estimate against xcclab's). The "
            "reclaim after the CBR stops is the equations' own slow part (see `maxnet-cbr`'s "
            "report: the fluid model of eqs. (3), (6a) and (10) gives the same fraction), so it "
            "falls short of the paper's two thirds on every stack. The real stacks' 10 ms "
            "series are noisier than the simulator's (a real clock, a userspace router), which "
            "is why utilisation is shown as 100 ms means; for the same reason '95 % of it back "
            "after', the first 10 ms sample above that level, comes earlier on the real stacks "
            "than the 100 ms curves suggest.",
            "",
            "The real stacks can show episodes of dips, stalls or oscillation (time below 80 % "
            f"in the table: kernel {fmt(k['dip_s'], 2)} s, UDP "
            f"{fmt(measured['udp']['dip_s'], 2)} s in this run), at irregular times that differ "
            "from run to run; the simulator never does. Their cause is not isolated. The machine "
            "is one candidate: two cores shared by several jobs (load average in the table). "
            "When the router or a sender stalls, nothing crosses the link, the MaxNet price "
            "falls (by up to mu per second), and when forwarding resumes the sources' windows, "
            "which answer a price drop dq with a factor exp(alpha dq / tau) (the law's lead "
            "term, about exp(23 dq) here), open far beyond the equilibrium: a burst, a queue of "
            "up to megabytes, and the price climbs back. For the kernel stack a second candidate "
            "is the law's sensitivity to tau: W contains exp(-alpha q / tau), so a new minimum "
            "RTT 0.4 % lower halves the window until xi re-converges (docs/kernel.md). Judge "
            "the claims on the parts of the figure without such episodes.",
            "",
        ]
    )
