"""CUBIC and BBR, the simulator's beside Linux's own: ``xcc reproduce baselines [--emu]``.

A 20 Mbit/s dumbbell (40 ms base RTT, so one BDP is 67 packets of 1500 B) runs, each case
``REPS`` times: one CUBIC or one BBR flow over a shallow (17 packets, 1/4 BDP), a one-BDP (67)
and a deep (267, 4 BDP) DropTail buffer; two flows of one algorithm with RTTs 20 and 80 ms; one
BBR and one CUBIC flow sharing the bottleneck over 1/2, 2 and 8 BDP buffers. Every flow is bulk
with SACK, Linux's delayed ACKs, Linux's retransmission timer (``rto = "linux"``), Linux's loss
recovery (``loss_detection = "rack"``: RACK-TLP, timeout undo) and a 1448-byte MSS (1500-byte
packets): the simulated sender recovers from losses as the kernel's does, so the comparison is
of CUBIC and BBR, not of two transports. Run k (seed k) starts each flow at a seeded offset in
[0, 10 ms) and gives the access links a seeded 100 us propagation jitter (the simulator's
stand-in for the real network's timing noise; the emulator's router adds none, its hosts add
their own), so the simulator's repeats are distinct runs, as the kernel's are. Measured on the
bottleneck's 100 ms series after the first 5 s (10 s for two flows): utilisation, mean queue,
drops; over the whole run, the flows' retransmission timeouts; CUBIC's loss-epoch period (the
median time between drop episodes, against K from RFC 9438 for the measured window); BBR's
PROBE_RTT dips (100 ms bins under 30 % of capacity) and their period; the flows' shares.
``--emu`` runs every case again with the kernel's own ``cubic`` and ``bbr`` through the TUN
router (docs/emu.md) and states, per number, whether the kernel's interval agrees with the
simulator's within a stated bound.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ...claims import Estimate, Ordering, Qualitative, Quote, Shape, estimate
from ..common.repeats import judge_difference
from ..common.report import atomic_dir, fmt, markdown_table, write_metrics
from ..common.templates import render
from ..experiment import Experiment

ID = "baselines"
RATE_BPS = 20e6
PACKET = 1500
BASE_RTT_S = 0.040
BDP_PKTS = RATE_BPS * BASE_RTT_S / 8 / PACKET  # 66.7
BUFFERS = {"shallow": 17, "bdp": 67, "deep": 267}
MIX_BUFFERS = {"0.5 BDP": 33, "2 BDP": 133, "8 BDP": 533}
DURATION_S = 30.0
REPS = 5
QUICK_SCALE = 0.25
BOTTLENECK = "r1->r2"
#: Linux's RTO: RFC 6298's (max(200 ms, SRTT + 4 RTTVAR)) fires during CUBIC's fast recoveries
#: behind the 4-BDP buffer (16 timeouts in 30 s, utilisation 0.944); the kernel's
#: (SRTT + max(200 ms, 4 mdev)) does not (docs/scenario-format.md, `rto`).
#: Linux's loss recovery: with RFC 6675's (a lost retransmission left to the timer, which
#: forgets the SACK scoreboard and goes back N) BBR in the 1/4-BDP buffer timed out 15.8 times
#: per run and two BBR flows 83 times, the kernel's close to never (net.ipv4.tcp_recovery = 1:
#: RACK-TLP, RFC 8985; tcp_frto = 2: F-RTO, RFC 5682), so the comparison would be of the
#: transports (docs/scenario-format.md, `loss_detection`).
TRANSPORT = {
    "mss": "1448B",
    "header": "52B",
    "delayed_ack": "linux",
    "rto": "linux",
    "loss_detection": "rack",
}
#: What makes run k differ from run j in the simulator: each flow starts at a seeded offset in
#: [0, START_SPREAD_MS), and the access links jitter by up to ACCESS_JITTER (seeded draws).
START_SPREAD_MS = 10.0
ACCESS_JITTER = "100us"
#: RFC 9438 C and beta, for K from the measured W_max.
C_CUBIC, BETA_CUBIC = 0.4, 0.7


def scenario(
    name: str,
    ccs: list[str],
    rtts_ms: list[float],
    buffer_pkts: int,
    duration_s: float,
    seed: int,
    jitter: str = ACCESS_JITTER,
) -> dict[str, Any]:
    """A dumbbell with one bulk flow per entry of ``ccs``; flow i's base RTT ``rtts_ms[i]``
    (the bottleneck has half the smallest one-way delay, access links the rest)."""
    bottleneck_ms = min(rtts_ms) / 2 - 2.0
    rng = random.Random(seed)
    hosts, links, flows = [], [], []
    for i, (cc, rtt) in enumerate(zip(ccs, rtts_ms), start=1):
        access_ms = (rtt / 2 - bottleneck_ms) / 2
        hosts += [{"name": f"s{i}"}, {"name": f"d{i}"}]
        for a, b in ((f"s{i}", "r1"), ("r2", f"d{i}")):
            links.append(
                {
                    "between": [a, b],
                    "rate": "1Gbps",
                    "delay": f"{access_ms * 1000:.0f}us",
                    "buffer": "unlimited",
                    "jitter": jitter,
                }
            )
        flows.append(
            {
                "name": f"f{i}",
                "src": f"s{i}",
                "dst": f"d{i}",
                "start": f"{rng.uniform(0.0, START_SPREAD_MS) * 1000:.0f}us",
                "cc": cc,
                "transport": dict(TRANSPORT),
            }
        )
    links.append(
        {
            "between": ["r1", "r2"],
            "rate": f"{RATE_BPS / 1e6:g}Mbps",
            "delay": f"{bottleneck_ms * 1000:.0f}us",
            "buffer": f"{buffer_pkts}pkt",
        }
    )
    return {
        "name": name,
        "duration": f"{duration_s:g}s",
        "seed": seed,
        "host": hosts,
        "router": [{"name": "r1"}, {"name": "r2"}],
        "link": links,
        "flow": flows,
        "metrics": {"interval": "100ms"},
    }


def cases(duration_s: float) -> dict[str, dict[str, Any]]:
    """Case name -> its scenario's arguments (without the seed)."""
    out: dict[str, dict[str, Any]] = {}
    for cc in ("cubic", "bbr"):
        for b, pkts in BUFFERS.items():
            out[f"{cc}-{b}"] = {"ccs": [cc], "rtts_ms": [40.0], "buffer_pkts": pkts}
        out[f"{cc}-rtt"] = {"ccs": [cc, cc], "rtts_ms": [20.0, 80.0], "buffer_pkts": 100}
    for b, pkts in MIX_BUFFERS.items():
        out[f"mix-{b}"] = {"ccs": ["bbr", "cubic"], "rtts_ms": [40.0, 40.0], "buffer_pkts": pkts}
    for c in out.values():
        c["duration_s"] = duration_s
    return out


# --- measuring ------------------------------------------------------------------------------


def _episodes(t: np.ndarray, mask: np.ndarray) -> list[tuple[float, float]]:
    """Runs of consecutive true bins: (first bin's time, run length in s)."""
    out, start, n = [], None, 0
    dt = float(np.median(np.diff(t))) if len(t) > 1 else 0.1
    for ti, m in zip(t, mask):
        if m and start is None:
            start, n = float(ti), 1
        elif m:
            n += 1
        elif start is not None:
            out.append((start, n * dt))
            start = None
    if start is not None:
        out.append((start, n * dt))
    return out


def measure(res: Any, case: str, warmup_s: float) -> dict[str, Any]:
    """One run's numbers (see the module's doc)."""
    import polars as pl

    links = res.links
    lid = links["name"].to_list().index(BOTTLENECK)
    ls = res.link_series.filter(pl.col("link_id") == lid).sort("time_s")
    t = ls["time_s"].to_numpy()
    rate = ls["rate_bps"].to_numpy()
    queue = ls["queue_bytes"].to_numpy() / PACKET
    drops = ls["drops"].to_numpy()
    sel = t > warmup_s
    m: dict[str, Any] = {
        "utilisation": float(rate[sel].mean() / RATE_BPS),
        "mean_queue_pkts": float(queue[sel].mean()),
        "drops": int(drops[sel].sum()),
        # Whole run, all flows; the kernel's from tcp_info's tcpi_total_rto (Linux >= 6.7).
        "timeouts": int(res.flows["timeouts"].sum()),
    }
    loss_times = [s for s, _ in _episodes(t[sel], drops[sel] > 0)]
    if len(loss_times) >= 3:
        m["loss_period_s"] = float(np.median(np.diff(loss_times)))
    dips = _episodes(t[sel], rate[sel] < 0.3 * RATE_BPS)
    m["dips"] = len(dips)
    if len(dips) >= 2:
        m["dip_period_s"] = float(np.median(np.diff([s for s, _ in dips])))
    if dips:
        m["dip_length_s"] = float(np.median([d for _, d in dips]))
    fs = res.flow_series
    ids = res.flows["name"].to_list()
    shares = []
    for i, _name in enumerate(ids):
        f = fs.filter(pl.col("flow_id") == i).sort("time_s")
        ft = f["time_s"].to_numpy()
        shares.append(float(f["rate_bps"].to_numpy()[ft > warmup_s].mean()))
    total = sum(shares)
    m["rates_bps"] = shares
    if len(shares) == 2 and total > 0:
        m["share_first"] = shares[0] / total  # f1: the 20 ms flow, or BBR in the mix
        m["ratio_first_second"] = shares[0] / shares[1] if shares[1] > 0 else math.inf
    if case.startswith("cubic-") and len(shares) == 1:
        # W_max: BDP + buffer (the window at which DropTail drops a lone flow), and RFC 9438's K.
        w_max = BDP_PKTS + BUFFERS[case.split("-", 1)[1]]
        m["k_rfc_s"] = (w_max * (1 - BETA_CUBIC) / C_CUBIC) ** (1 / 3)
    return m


def summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Each numeric quantity over the runs: mean and 95 % interval (claims.estimate)."""
    keys = sorted({k for r in runs for k, v in r.items() if isinstance(v, (int, float))})
    out = {}
    for k in keys:
        vals = [float(r[k]) for r in runs if isinstance(r.get(k), (int, float))]
        vals = [v for v in vals if math.isfinite(v)]
        if vals:
            e = estimate(vals)
            out[k] = {"mean": e.mean, "lo": e.lo, "hi": e.hi, "n": len(vals)}
    return out


# --- agreement of the kernel with the simulator ----------------------------------------------

#: quantity -> (absolute bound, relative bound, text): |kernel - simulator| at most the larger.
AGREEMENT = {
    "utilisation": (0.03, 0.0, "3 points"),
    "mean_queue_pkts": (5.0, 0.30, "5 packets or 30 %"),
    "loss_period_s": (0.3, 0.15, "0.3 s or 15 %"),
    "dip_period_s": (0.3, 0.05, "0.3 s or 5 %"),
    "share_first": (0.10, 0.0, "0.10 of the capacity"),
    "ratio_first_second": (0.0, 0.25, "25 %"),
}


def agreement(sim: dict[str, Any], kernel: dict[str, Any], key: str) -> dict[str, Any] | None:
    """The kernel's interval against the simulator's: the difference of the means with the
    half-widths combined; "holds" when that interval lies inside the bound, "fails" when it
    lies outside, else "inconclusive"."""
    if key not in sim or key not in kernel:
        return None
    s, k = sim[key], kernel[key]
    a, r, text = AGREEMENT[key]
    bound = max(a, r * abs(s["mean"]))
    diff = k["mean"] - s["mean"]
    half = math.hypot((s["hi"] - s["lo"]) / 2, (k["hi"] - k["lo"]) / 2)
    lo, hi = diff - half, diff + half
    # The scorer's rule on an interval (common/repeats.py), as every real-packet report.
    status = judge_difference(Estimate(diff, lo, hi, min(s["n"], k["n"])), bound)
    return {
        "difference": diff,
        "lo": lo,
        "hi": hi,
        "bound": bound,
        "bound_text": text,
        "status": status,
    }


# --- claims ----------------------------------------------------------------------------------

DRAFT = Quote(
    "Relative to loss-based congestion control algorithms such as Reno or CUBIC, BBR offers "
    "substantially higher throughput for bottlenecks with shallow buffers or random losses, and "
    "substantially lower queueing delays for bottlenecks with deep buffers",
    "Cardwell et al., draft-cardwell-iccrg-bbr-congestion-control-00 (2017), abstract",
)
QUEUE_PAPER = Quote(
    "When bottleneck buffers are large, loss-based congestion control keeps them full, causing "
    "bufferbloat.",
    "Cardwell et al., BBR: Congestion-Based Congestion Control, ACM Queue 14(5) 2016 / CACM "
    "60(2) 2017, introduction",
)
KERNEL_MIN_RTT = Quote(
    "The min_rtt filter window is 10 seconds. When the min_rtt estimate expires, we enter "
    "PROBE_RTT mode and cap the cwnd at bbr_cwnd_min_target=4 packets.",
    "Linux net/ipv4/tcp_bbr.c (Cardwell, Cheng et al.), comment above bbr_update_min_rtt",
)
BBR_DEV = Quote(
    "the current code expects a full buffer (BDP) at the bottleneck, if there is any "
    "competition. If the condition is not met, it drives up the loss rate. Then traditional "
    "TCP's will basically starve.",
    "bbr-dev discussion of third-party tests of BBR v1, as quoted in a unix.stackexchange.com "
    "answer (question 71051); the peer-reviewed studies (Hock et al. ICNP 2017, Ware et al. "
    "IMC 2019) were not in the stored corpus",
)


def _est(summary: dict[str, Any], case: str, key: str) -> Estimate | None:
    v = summary.get(case, {}).get(key)
    return None if v is None else Estimate(v["mean"], v["lo"], v["hi"], v["n"])


def _diff(a: Estimate | None, b: Estimate | None) -> Estimate | None:
    if a is None or b is None:
        return None
    half = math.hypot(a.hi - a.mean, b.hi - b.mean)
    d = a.mean - b.mean
    return Estimate(d, d - half, d + half, min(a.n, b.n))


def _shallow_cause(engine: str, summary: dict[str, Any]) -> dict[str, Any]:
    """Why BBR's throughput advantage in the 1/4-BDP buffer is not shown, per engine, from the
    measured numbers."""
    bbr, cubic = summary.get("bbr-shallow", {}), summary.get("cubic-shallow", {})
    if "utilisation" not in bbr or "utilisation" not in cubic:
        return {}
    if engine == "sim" and bbr.get("timeouts", {}).get("mean", 0.0) >= 1.0:
        return {
            "note": "some simulated BBR runs fall into repeated retransmission timeouts, each "
            "cutting BBR's window to one segment (loss recovery other than Linux's?)",
            "evidence": ("summary.sim.bbr-shallow.timeouts", "summary.sim.bbr-shallow.utilisation"),
        }
    if engine == "sim":
        return {
            "note": "one CUBIC flow loses little in this buffer: its window after a loss, "
            "0.7 x (67 + 17) = 59 packets, is 0.88 BDP and regrows within seconds, so CUBIC "
            "keeps the link as busy as BBR (both about 0.98); BBR, which no longer times out "
            "with Linux's loss recovery, has no room to do better. The draft's other cases "
            "(random loss, shallower buffers) are not run here",
            "evidence": (
                "summary.sim.cubic-shallow.utilisation",
                "summary.sim.bbr-shallow.utilisation",
                "summary.sim.bbr-shallow.timeouts",
            ),
        }
    return {
        "note": "the kernel's CUBIC runs are bimodal in this buffer (the report's per-run "
        "utilisation): in the low runs its rate falls to a third or less of the link for "
        "seconds at a time with no retransmission timeout and no router stall beyond the high "
        "runs'; the kernel's window is not sampled, so the cause is not established",
        "evidence": (
            "summary.kernel.cubic-shallow.utilisation",
            "summary.kernel.cubic-shallow.timeouts",
        ),
    }


def claims(metrics: dict[str, Any]) -> list:
    """The published claims these runs test, scored per engine (``sim``, and ``kernel`` when
    the real-packet runs are there)."""
    out = []
    for engine, summary in metrics.get("summary", {}).items():
        tag = f"[{engine}]"
        out.append(
            Ordering(
                f"bbr-shallow-throughput {tag}",
                DRAFT,
                "utilisation of one BBR flow minus one CUBIC flow's, 17-packet (1/4 BDP) buffer, "
                f"after 5 s, {REPS} runs",
                _diff(
                    _est(summary, "bbr-shallow", "utilisation"),
                    _est(summary, "cubic-shallow", "utilisation"),
                ),
                first="BBR",
                second="CUBIC",
                **_shallow_cause(engine, summary),
            )
        )
        out.append(
            Ordering(
                f"bbr-deep-queue {tag}",
                DRAFT,
                "mean queue (packets) of one CUBIC flow minus one BBR flow's, 267-packet (4 BDP) "
                "buffer, after 5 s",
                _diff(
                    _est(summary, "cubic-deep", "mean_queue_pkts"),
                    _est(summary, "bbr-deep", "mean_queue_pkts"),
                ),
                unit="packets",
                first="CUBIC's queue",
                second="BBR's queue",
            )
        )
        q = _est(summary, "cubic-deep", "mean_queue_pkts")
        out.append(
            Shape(
                f"cubic-keeps-buffer-full {tag}",
                QUEUE_PAPER,
                "mean queue of one CUBIC flow as a fraction of the 267-packet buffer, after 5 s",
                None if q is None else Estimate(q.mean / 267, q.lo / 267, q.hi / 267, q.n),
                definition="our reading of 'keeps them full': the mean occupancy above half",
                op=">",
                limit=0.5,
                window="whole run",
            )
        )
        out.append(
            Shape(
                f"probe-rtt-period {tag}",
                KERNEL_MIN_RTT,
                "median time between PROBE_RTT dips (100 ms bins under 30 % of capacity) of one "
                "BBR flow, one-BDP buffer",
                _est(summary, "bbr-bdp", "dip_period_s"),
                unit="s",
                definition="dip period; the kernel adds max(200 ms, one round) at 4 packets",
                value=10.0,
                precision="about",
                window="samples",
            )
        )
        share = _est(summary, "mix-0.5 BDP", "share_first")
        out.append(
            Qualitative(
                f"cubic-starves-below-one-bdp {tag}",
                BBR_DEV,
                "BBR's share of the two flows' throughput, 33-packet (1/2 BDP) buffer",
                share,
                observed="n/a"
                if share is None
                else f"BBR takes {share.mean:.2f} (95 % interval {share.lo:.2f} to {share.hi:.2f}) "
                "of the bottleneck beside one CUBIC flow",
            )
        )
    return out


# --- the figure ------------------------------------------------------------------------------

#: The cases the figure shows, one panel each.
FIGURE_CASES = ("cubic-bdp", "cubic-deep", "bbr-bdp", "mix-2 BDP")


def figure(runs: Path, out: Path, engines: list[str]) -> list[str]:
    """The bottleneck queue of each case's first run, simulator dashed, kernel solid; the
    figure's file names (``queues.png``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import polars as pl

    from ...figures import save_figure

    fig, axes = plt.subplots(len(FIGURE_CASES), 1, figsize=(8, 2.2 * len(FIGURE_CASES)))
    for ax, case in zip(axes, FIGURE_CASES):
        for engine in engines:
            d = runs / engine / f"{case.replace(' ', '')}-1"
            if not (d / "link_series.parquet").is_file():
                continue
            lid = pl.read_parquet(d / "links.parquet")["name"].to_list().index(BOTTLENECK)
            ls = pl.read_parquet(d / "link_series.parquet").filter(pl.col("link_id") == lid)
            ls = ls.sort("time_s")
            ax.plot(
                ls["time_s"].to_numpy(),
                ls["queue_bytes"].to_numpy() / PACKET,
                "--" if engine == "sim" else "-",
                lw=0.9,
                label=ENGINE_LABEL[engine],
            )
        ax.set_title(f"{case}: bottleneck queue", fontsize=9)
        ax.set_ylabel("packets")
        ax.legend(fontsize=7, loc="upper right")
    axes[-1].set_xlabel("time (s)")
    fig.tight_layout()
    paths = save_figure(fig, out, "queues", ["png"])
    plt.close(fig)
    return [p.name for p in paths]


#: BBR's modes as the flow series names them, bottom to top in the state panels.
BBR_MODES = ("STARTUP", "DRAIN", "PROBE_BW", "PROBE_RTT")
#: The cases whose controllers the second figure shows (the simulator's first run).
CONTROLLER_CASES = ("bbr-bdp", "bbr-rtt", "mix-2 BDP", "cubic-deep")


def controller_figure(runs: Path, out: Path) -> list[str]:
    """The simulator's controllers over time, first run of each case in ``CONTROLLER_CASES``:
    cwnd (packets) and pacing rate (Mbit/s) per flow, and BBR's mode with its pacing gain
    (sampled every 100 ms, so the 1.25 / 0.75 phases of about one RTT show only when a sample
    falls in them); ``controllers.png``. The kernel's cwnd and mode are not sampled over time."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import polars as pl

    from ...figures import save_figure

    fig, axes = plt.subplots(len(CONTROLLER_CASES), 2, figsize=(11, 2.4 * len(CONTROLLER_CASES)))
    for row, case in zip(axes, CONTROLLER_CASES):
        d = runs / "sim" / f"{case.replace(' ', '')}-1"
        if not (d / "flow_series.parquet").is_file():
            continue
        flows = pl.read_parquet(d / "flows.parquet")
        fs = pl.read_parquet(d / "flow_series.parquet").sort("time_s")
        ax_w, ax_s = row
        ax_r = ax_w.twinx()
        for i, (name, cc) in enumerate(zip(flows["name"].to_list(), flows["cc"].to_list())):
            f = fs.filter(pl.col("flow_id") == i)
            t = f["time_s"].to_numpy()
            label = f"{name} ({cc})"
            ax_w.plot(t, f["cwnd_bytes"].to_numpy() / PACKET, lw=0.8, label=f"{label} cwnd")
            pacing = f["pacing_rate_bps"].to_numpy()
            if f["pacing_rate_bps"].null_count() < len(f):
                ax_r.plot(t, pacing / 1e6, ":", lw=0.8, label=f"{label} pacing")
            states = f["cc_state"].to_list()
            if any(states):
                codes = [BBR_MODES.index(s) if s in BBR_MODES else math.nan for s in states]
                ax_s.step(t, [c + 0.08 * i for c in codes], where="post", lw=0.9, label=label)
                gain = f["pacing_gain"].to_numpy()
                ax_s.plot(t, gain + 4.5, ".", ms=1.5, label=f"{label} pacing gain (+4.5)")
        ax_w.set_title(f"{case}: cwnd (solid, packets), pacing rate (dotted, Mbit/s)", fontsize=8)
        ax_w.set_ylabel("packets")
        ax_r.set_ylabel("Mbit/s")
        ax_w.legend(fontsize=6, loc="upper left")
        ax_s.set_yticks([*range(len(BBR_MODES)), 4.5 + 0.75, 4.5 + 1.0, 4.5 + 1.25])
        ax_s.set_yticklabels([*BBR_MODES, "0.75", "1", "1.25"], fontsize=6)
        ax_s.set_title(f"{case}: BBR's mode and pacing gain", fontsize=8)
        if ax_s.lines:
            ax_s.legend(fontsize=6, loc="center right")
        else:
            ax_s.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel("time (s)")
    fig.tight_layout()
    paths = save_figure(fig, out, "controllers", ["png"])
    plt.close(fig)
    return [p.name for p in paths]


# --- running ---------------------------------------------------------------------------------

ENGINE_LABEL = {"sim": "simulator", "kernel": "Linux (emulator)"}


def _run_engine(
    engine: str,
    tmp: Path,
    duration_s: float,
    reps: int,
    log: Callable[[str], None],
) -> tuple[dict[str, list[dict[str, Any]]], list[str]]:
    import xcclab

    measured: dict[str, list[dict[str, Any]]] = {}
    failures: list[str] = []
    for case, args in cases(duration_s).items():
        warmup = (10.0 if len(args["ccs"]) == 2 else 5.0) * duration_s / DURATION_S
        for rep in range(1, reps + 1):
            sc = scenario(f"{ID}-{case.replace(' ', '')}", seed=rep, **args)
            out = tmp / "runs" / engine / f"{case.replace(' ', '')}-{rep}"
            log(f"{ID}: {case}, {ENGINE_LABEL[engine]}, run {rep}/{reps}")
            try:
                if engine == "sim":
                    res = xcclab.run(sc, progress=False)
                    res.save(out)
                else:
                    from xcclab.emu import emulate

                    res = emulate(sc, out=out)
            except RuntimeError as exc:
                failures.append(f"{case} run {rep}: {exc}")
                log(f"{ID}: {case} run {rep} failed: {exc}")
                continue
            m = measure(res, case, warmup)
            if engine == "kernel":
                m["lateness_max_us"] = _router_lateness_max_us(out)
            measured.setdefault(case, []).append(m)
    return measured, failures


#: A kernel run in which the emulator's router fell this far behind its schedule at worst (a
#: stall of the whole path for 2.5 base RTTs) no longer emulates the scenario: it is listed,
#: not counted. The limit is the emulator's validity, not the result's.
STALL_LIMIT_US = 100_000


def _router_lateness_max_us(run_dir: Path) -> float | None:
    """The router's worst lateness in a kernel run (run.json's ``emu`` record), if recorded."""
    import json

    f = run_dir / "run.json"
    late = json.loads(f.read_text()).get("emu", {}).get("lateness_max_us") if f.is_file() else None
    return None if late is None else float(late)


def counted(
    engine: str, case: str, runs: list[dict[str, Any]], notes: list[str]
) -> list[dict[str, Any]]:
    """The runs a summary counts: a kernel run whose router stalled beyond ``STALL_LIMIT_US``
    is left out and named in ``notes``."""
    if engine != "kernel":
        return runs
    kept = []
    for k, r in enumerate(runs, start=1):
        late = r.get("lateness_max_us")
        if late is not None and late > STALL_LIMIT_US:
            notes.append(
                f"{case} run {k}: the router stalled {late / 1000:.0f} ms "
                f"(limit {STALL_LIMIT_US / 1000:.0f} ms), not counted"
            )
        else:
            kept.append(r)
    return kept


ROWS = [
    ("utilisation", "utilisation", 3),
    ("mean_queue_pkts", "mean queue (pkt)", 1),
    ("drops", "drops", 0),
    ("timeouts", "retransmission timeouts (whole run, all flows)", 0),
    ("loss_period_s", "CUBIC loss period (s)", 2),
    ("k_rfc_s", "RFC 9438 K for W_max = BDP + buffer (s)", 2),
    ("dip_period_s", "BBR PROBE_RTT period (s)", 2),
    ("dip_length_s", "PROBE_RTT dip (s, 100 ms bins)", 2),
    ("share_first", "share of f1 (20 ms flow / BBR)", 3),
    ("ratio_first_second", "rate f1 / f2", 2),
]


def _cell(s: dict[str, Any] | None, digits: int) -> str:
    if s is None:
        return "-"
    if s["n"] > 1:
        return f"{fmt(s['mean'], digits)} [{fmt(s['lo'], digits)}, {fmt(s['hi'], digits)}]"
    return fmt(s["mean"], digits)


def report(
    summary: dict[str, Any],
    agreements: dict[str, Any],
    failures: dict[str, list[str]],
    quick: bool,
    reps: int,
    figures: Sequence[str] = (),
    extra: Sequence[str] = (),
) -> str:
    engines = list(summary)
    case_names = sorted({c for e in engines for c in summary[e]})
    tables = []
    for key, label, digits in ROWS:
        rows = []
        for case in case_names:
            cells = [_cell(summary[e].get(case, {}).get(key), digits) for e in engines]
            if all(c == "-" for c in cells):
                continue
            a = agreements.get(case, {}).get(key)
            verdict = "" if a is None else f"{a['status']} (|diff| <= {a['bound_text']})"
            rows.append([case, *cells] + ([verdict] if "kernel" in engines else []))
        if rows:
            headers = ["case", *[ENGINE_LABEL[e] for e in engines]]
            if "kernel" in engines:
                headers.append("kernel vs simulator")
            tables.append((label, headers, rows))
    agreement_text = None
    if "kernel" in engines:
        counts: dict[str, int] = {}
        for per in agreements.values():
            for a in per.values():
                if a is not None:
                    counts[a["status"]] = counts.get(a["status"], 0) + 1
        agreement_text = {
            "bounds": "; ".join(f"{k}: {v[2]}" for k, v in AGREEMENT.items()),
            "tally": ", ".join(f"{n} {s}" for s, n in sorted(counts.items())),
        }
    captions = {
        "queues.png": "bottleneck queues, first run of each case",
        "controllers.png": "the simulator's cwnd, pacing rate and BBR mode, first run",
    }
    return render(
        "baselines.md.j2",
        title=f"{ID}: CUBIC and BBR, simulator beside Linux",
        setup=(__doc__ or "").split("\n\n", 1)[1].strip(),
        reps=reps,
        quick=quick,
        tables=tables,
        agreement=agreement_text,
        extra="\n".join(extra).strip(),
        figures=[(captions.get(name, name), name) for name in figures],
        failures=[(ENGINE_LABEL[e], fails) for e, fails in failures.items() if fails],
    )


#: The access jitters of the sensitivity runs: BBR's queue behind the deep buffer against the
#: timing noise of the path (the kernel's runs see the router's, `lateness` below).
JITTER_SENSITIVITY = ("100us", "300us", "500us", "1ms")


def jitter_sensitivity(duration_s: float, reps: int) -> dict[str, Any]:
    """bbr-deep simulated with each access jitter of ``JITTER_SENSITIVITY``: jitter -> the
    summary of its runs (seeds 1..reps)."""
    import xcclab

    args = cases(duration_s)["bbr-deep"]
    warmup = 5.0 * duration_s / DURATION_S
    out = {}
    for jit in JITTER_SENSITIVITY:
        runs = [
            measure(
                xcclab.run(
                    scenario(f"{ID}-bbr-deep-jitter", seed=rep, jitter=jit, **args), progress=False
                ),
                "bbr-deep",
                warmup,
            )
            for rep in range(1, reps + 1)
        ]
        out[jit] = summarise(runs)
    return out


def lateness(runs: Path) -> dict[str, Any]:
    """The router's lateness behind its schedule in each kernel run (run.json's ``emu``
    record: p50, p99 and max, in us), summarised per case."""
    import json

    per_case: dict[str, list[dict[str, Any]]] = {}
    for d in sorted((runs / "kernel").glob("*-*")):
        f = d / "run.json"
        if not f.is_file():
            continue
        e = json.loads(f.read_text()).get("emu", {})
        case = d.name.rsplit("-", 1)[0]
        per_case.setdefault(case, []).append(
            {k: e[k] for k in ("lateness_p50_us", "lateness_p99_us", "lateness_max_us") if k in e}
        )
    return {c: summarise(r) for c, r in per_case.items()}


def environment_section(sensitivity: dict[str, Any], late: dict[str, Any]) -> list[str]:
    """The report's lines on timing noise: the router's measured lateness per case (kernel
    runs) and the simulator's BBR queue against an access jitter."""
    lines = ["## Timing noise", ""]
    if late:
        keys = ("lateness_p50_us", "lateness_p99_us", "lateness_max_us")
        rows = [[c] + [_cell(late[c].get(k), 0) for k in keys] for c in sorted(late)]
        lines += [
            "How late the emulator's router delivered packets behind their schedule in the "
            "kernel's runs (us; run.json's `emu` record): a delayed packet holds those behind "
            "it, which then arrive in a burst, as do their ACKs.",
            "",
            markdown_table(["case", "lateness p50", "p99", "max"], rows),
            "",
        ]
    if sensitivity:
        rows = [
            [jit, _cell(s.get("mean_queue_pkts"), 1), _cell(s.get("utilisation"), 3)]
            for jit, s in sensitivity.items()
        ]
        lines += [
            "The simulator's bbr-deep with a larger access jitter (every other setting as "
            "above): BBR's bandwidth samples are delivered / max(send, ACK interval), so ACKs "
            "bunched by the path's timing raise the 10-round maximum, and BBR paces above the "
            "bottleneck until its 2-BDP window stops it.",
            "",
            markdown_table(["access jitter", "mean queue (pkt)", "utilisation"], rows),
            "",
        ]
    return lines


def per_run_section(measured: dict[str, Any], key: str = "utilisation") -> list[str]:
    """The report's table of every run's ``key`` per case and engine (where intervals are wide,
    the runs say whether they spread or split)."""
    engines = [e for e in ("sim", "kernel") if e in measured]
    cases_ = sorted({c for e in engines for c in measured[e]})
    rows = [
        [c]
        + [
            ", ".join(fmt(r[key], 3) for r in measured[e].get(c, []) if key in r) or "-"
            for e in engines
        ]
        for c in cases_
    ]
    return [
        f"## {key} per run",
        "",
        markdown_table(["case", *[ENGINE_LABEL[e] for e in engines]], rows),
        "",
    ]


def rerender(out: str | Path) -> Path:
    """Writes ``out/report.md`` (and the figures) again from ``out/metrics.json`` and the
    runs there, with the timing-noise section (the sensitivity runs are simulated now)."""
    import json

    out = Path(out)
    m = json.loads((out / "metrics.json").read_text())
    # Runs measured before the stall rule carry no lateness: read it from their run.json.
    for case, runs in m["measured"].get("kernel", {}).items():
        for k, r in enumerate(runs, start=1):
            if "lateness_max_us" not in r:
                r["lateness_max_us"] = _router_lateness_max_us(
                    out / "runs" / "kernel" / f"{case.replace(' ', '')}-{k}"
                )
    m["failed"] = {e: [f for f in fs if "stalled" not in f] for e, fs in m["failed"].items()}
    m["summary"] = {
        e: {c: summarise(counted(e, c, r, m["failed"].setdefault(e, []))) for c, r in per.items()}
        for e, per in m["measured"].items()
    }
    if "kernel" in m["summary"]:
        m["agreement"] = {
            case: {
                key: agreement(s, m["summary"]["kernel"].get(case, {}), key) for key in AGREEMENT
            }
            for case, s in m["summary"]["sim"].items()
        }
    (out / "metrics.json").write_text(json.dumps(m, indent=2) + "\n")
    figures = figure(out / "runs", out, list(m["summary"]))
    figures += controller_figure(out / "runs", out)
    sens = {} if m["quick"] else jitter_sensitivity(m["duration_s"], m["reps"])
    text = report(
        m["summary"],
        m["agreement"],
        m["failed"],
        m["quick"],
        m["reps"],
        figures,
        environment_section(sens, lateness(out / "runs")) + per_run_section(m["measured"]),
    )
    (out / "report.md").write_text(text)
    from ..verdicts import judge_directory

    judge_directory(EXPERIMENT, out)
    return out / "report.md"


def _run(out_dir: str | Path, quick: bool, emu: bool, log: Callable[[str], None] | None) -> Path:
    log = log or (lambda _m: None)
    scale = QUICK_SCALE if quick else 1.0
    reps = 1 if quick else REPS
    duration = DURATION_S * scale
    if emu:
        from xcclab.emu import preflight

        preflight(scenario("preflight", ["cubic"], [40.0], 67, duration, 1))
    out = Path(out_dir) / ("emu" if emu else "")
    with atomic_dir(out) as tmp:
        measured, failures = {}, {}
        for engine in ("sim", "kernel") if emu else ("sim",):
            measured[engine], failures[engine] = _run_engine(engine, tmp, duration, reps, log)
        summary = {}
        for e, per_case in measured.items():
            summary[e] = {}
            for c, r in per_case.items():
                summary[e][c] = summarise(counted(e, c, r, failures[e]))
        agreements: dict[str, Any] = {}
        if emu:
            for case, s in summary["sim"].items():
                k = summary["kernel"].get(case, {})
                agreements[case] = {key: agreement(s, k, key) for key in AGREEMENT}
        write_metrics(
            tmp,
            ID,
            quick=quick,
            mode="emu" if emu else "sim",
            reps=reps,
            duration_s=duration,
            measured=measured,
            summary=summary,
            agreement=agreements,
            failed=failures,
            figures=["queues.png", "controllers.png"],
        )
        figures = figure(tmp / "runs", tmp, list(measured))
        figures += controller_figure(tmp / "runs", tmp)
        log(f"{ID}: sensitivity of BBR's queue to the access jitter")
        sens = {} if quick else jitter_sensitivity(duration, reps)
        extra = environment_section(sens, lateness(tmp / "runs")) + per_run_section(measured)
        text = report(summary, agreements, failures, quick, reps, figures, extra)
        (tmp / "report.md").write_text(text)
    return out / "report.md"


def resimulate(out: str | Path, log: Callable[[str], None] | None = None) -> Path:
    """Runs the simulator's side of an ``--emu`` report again (``out/runs/sim``) and writes
    the report from those runs and the kernel runs already in ``out/runs/kernel``: for a change
    to the simulated side only (the kernel's TCP does not depend on it)."""
    import json
    import shutil

    out = Path(out)
    m = json.loads((out / "metrics.json").read_text())
    sim_runs = out / "runs" / "sim"
    if sim_runs.exists():
        shutil.rmtree(sim_runs)
    m["measured"]["sim"], m["failed"]["sim"] = _run_engine(
        "sim", out, m["duration_s"], m["reps"], log or (lambda _m: None)
    )
    (out / "metrics.json").write_text(json.dumps(m, indent=2) + "\n")
    return rerender(out)


def run(out_dir: str | Path, quick: bool = False, *, log=None, progress: bool = True) -> Path:
    """The simulator's CUBIC and BBR on every case; ``out_dir/report.md``."""
    return _run(out_dir, quick, False, log)


def run_emu(out_dir: str | Path, quick: bool = False, *, log=None, **_kw) -> Path:
    """Every case simulated and on real packets with Linux's own; ``out_dir/emu/report.md``,
    with the claims scored on both engines."""
    from ..verdicts import judge_directory

    report_md = _run(out_dir, quick, True, log)
    judge_directory(EXPERIMENT, report_md.parent)
    return report_md


EXPERIMENT = Experiment(
    id=ID,
    seed="beyond",
    title="CUBIC and BBR: the simulator's beside Linux's own",
    summary="BBR: more throughput than CUBIC in shallow buffers, less queue in deep ones; "
    "PROBE_RTT every 10 s; CUBIC keeps deep buffers full",
    run=run,
    claims=claims,
    emu=run_emu,
)
