"""rcp-instability-N: the network on which RCP is unstable (seed 000, Section IX, Figs 12-16),
N in {1, 9, 49} - here its MaxNet half; RCP's half comes with RCP.

L1 (155 Mbit/s, 1 ms) carries N+1 flows; flow 1 continues over L2 (622 Mbit/s, 100 ms), the
other N over L3 (100 Mbit/s, 1 ms). 50 s. Seed 000: RCP (alpha 0.4, beta 1) settles after
about 3 s with about 50 % overshoot for N = 1, oscillates for N = 9 and switches between 0 and
the link capacity for N = 49; MaxNet "exhibits only minor variation" in all three. All links
run MaxNet's router with mu = 0.9 (our choice: the section does not restate mu). Flow 1 starts
at 0 s, the other N evenly spread over the first 10 s (our choice): started together, all
N+1 MaxStart probes see the idle link's spare capacity and overload L1 up to fifty-fold at once,
the case seed 000 (Section IV-B) leaves beyond MaxStart's scope (the report of a run with
2 s spreading is in the notes: flow 1 then stalls for about 10 s while L1's price, driven up by
the Q/T0 term of a 15 MB queue, decays).

Reported for MaxNet, from 20 s (after the last flow joined) to 50 s: flow 1's mean rate against
its max-min rate from the oracle, and the coefficient of variation of its 100 ms averages (a
window-based flow with a 200 ms RTT delivers its window in bursts, so 10 ms samples would
measure the ACK clock, not the rate).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..scenario import Scenario
from .report import Comparison, atomic_dir, fmt, markdown_table, save_figure, write_metrics

MU = 0.9
PAYLOAD = 1460 / 1500
T_F_S = 50.0


def scenario(n: int, scale: float = 1.0) -> Scenario:
    sc = Scenario(f"rcp-instability-{n}-maxnet", duration=f"{T_F_S * scale:g}s", seed=1)
    sc.add_host("src{i}", count=n + 1).add_host("far").add_host("dst{i}", count=n)
    for r in ("A", "B", "C", "D"):
        sc.add_router(r)
    sc.add_link("src{i}", "A", rate="10Gbps", delay=0, buffer="unlimited", count=n + 1)
    maxnet = {"kind": "maxnet", "mu": MU}
    sc.add_link("A", "B", rate="155Mbps", delay="1ms", buffer="unlimited", queue=maxnet)
    sc.add_link("B", "C", rate="622Mbps", delay="100ms", buffer="unlimited", queue=maxnet)
    sc.add_link("B", "D", rate="100Mbps", delay="1ms", buffer="unlimited", queue=maxnet)
    sc.add_link("C", "far", rate="10Gbps", delay=0, buffer="unlimited")
    # dst{i} for i = 1..n sit behind D; they serve sources 2..n+1.
    sc.add_link("D", "dst{i}", rate="10Gbps", delay=0, buffer="unlimited", count=n)
    sc.add_flow("flow1", src="src1", dst="far", cc="maxnet")
    for i in range(1, n + 1):
        start = f"{10.0 * i / (n + 1) * scale:g}s"
        sc.add_flow(f"flow{i + 1}", src=f"src{i + 1}", dst=f"dst{i}", cc="maxnet", start=start)
    sc.metrics(interval="10ms")
    return sc


def run_case(n: int, experiment: str, out_dir, quick: bool, log, progress) -> Path:
    import polars as pl

    import xcclab

    from ..maxmin import max_min_fair

    log = log or (lambda _m: None)
    scale = 0.2 if quick else 1.0
    out_dir = Path(out_dir)
    with atomic_dir(out_dir) as tmp:
        log(f"{experiment}: MaxNet, N = {n}, {T_F_S * scale:g} s simulated")
        res = xcclab.run(scenario(n, scale), progress=progress)
        res.save(tmp / "runs" / "maxnet")
        # Links: 0 = L1, 1 = L2, 2 = L3; flow 1 crosses L1 and L2, the others L1 and L3.
        want = max_min_fair([155e6, 622e6, 100e6], [[0, 1]] + [[0, 2]] * n, utilisation=MU).rate
        fid = res.flows.filter(pl.col("name") == "flow1")["flow_id"][0]
        fs = res.flow_series.filter(pl.col("flow_id") == fid).sort("time_s")
        t, r = fs["time_s"].to_numpy(), fs["rate_bps"].to_numpy()
        # 100 ms averages (ten 10 ms samples each).
        k = len(r) // 10
        t100, r100 = t[: 10 * k].reshape(k, 10).max(axis=1), r[: 10 * k].reshape(k, 10).mean(axis=1)
        settled = r100[t100 > 20 * scale]
        mean, std = float(settled.mean()), float(settled.std())
        target = float(want[0]) * PAYLOAD
        # The N flows' windows at their max-min rate: L3's RTT is about 4.2 ms (2 ms each way
        # plus serialisation); MaxNet's window never goes below one segment.
        rtt3 = 0.0042
        window_segments = float(want[1]) * PAYLOAD * rtt3 / (8 * 1460)
        m = {
            "n": n,
            "l3_flow_window_segments": window_segments,
            "maxmin_flow1_bps": target,
            "mean_flow1_bps": mean,
            "cv_flow1": std / mean if mean else float("nan"),
            "peak_flow1_bps": float(r100.max()),
        }
        comparisons = [
            Comparison("flow 1 mean rate from 20 s (max-min)", target / 1e6, mean / 1e6, "Mbit/s")
        ]
        fig_names = _figure(tmp, t100, r100, target, n)
        write_metrics(
            tmp, experiment, quick=quick, comparisons=comparisons, measured=m, figures=fig_names
        )
        text = "\n".join(
            [
                f"# {experiment}: the network on which RCP is unstable, N = {n} (MaxNet half)",
                "",
                f"Generated by `xcc reproduce {experiment}`."
                + ("\n\n> **Quick mode**: times divided by 5." if quick else ""),
                "",
                __doc__.split("\n\n", 1)[1].strip(),
                "",
                "## MaxNet",
                "",
                markdown_table(
                    ["quantity", "value"],
                    [
                        [
                            "flow 1 max-min rate (mu-scaled, payload)",
                            fmt(target / 1e6, 2) + " Mbit/s",
                        ],
                        ["flow 1 mean from 20 s", fmt(mean / 1e6, 2) + " Mbit/s"],
                        ["coefficient of variation from 20 s", fmt(100 * m["cv_flow1"], 2) + " %"],
                        ["peak (100 ms averages)", fmt(m["peak_flow1_bps"] / 1e6, 2) + " Mbit/s"],
                    ],
                ),
                "",
                f"MaxNet's flow 1 varies by {fmt(100 * m['cv_flow1'], 1)} % (coefficient of "
                "variation of 100 ms averages) around a mean "
                f"{fmt(100 * (mean / target - 1), 1)} % from its max-min rate"
                + (": minor variation, as the paper says." if m["cv_flow1"] < 0.1 else ".")
                + (
                    f" At their max-min rate the {n} flows over L3 would hold windows of "
                    f"{fmt(window_segments, 2)} segments; a window never falls below one segment, "
                    "so together they send more than L3's share, L3's price cannot hold them, and "
                    "the excess crosses L1 at flow 1's expense. A paced MaxNet "
                    "(`transport.pace = true`) or a rate-based protocol does not have this floor."
                    if window_segments < 2
                    else ""
                )
                + " RCP's half of this experiment (the unstable protocol) comes with RCP.",
                "",
                "## Figure",
                "",
                "\n".join(f"![{Path(f).stem}]({f})" for f in fig_names if f.endswith(".png")),
                "",
            ]
        )
        (tmp / "report.md").write_text(text, encoding="utf-8")
    return out_dir / "report.md"


def _figure(tmp: Path, t: Any, r: Any, target: float, n: int) -> list[str]:
    from ..plot import _pyplot

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(9, 3.5))
    ax.plot(t, r / 1e6, lw=0.7, label="MaxNet flow 1 (100 ms averages)")
    ax.axhline(target / 1e6, color="grey", ls=":", lw=0.8, label="max-min (mu-scaled)")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("rate (Mbit/s)")
    ax.set_ylim(0, 160)
    ax.grid(True, lw=0.3)
    ax.legend(fontsize=8)
    ax.set_title(f"Flow 1 on the RCP-instability network, N = {n}")
    fig.tight_layout()
    names = [p.name for p in save_figure(fig, tmp, "flow1-rate")]
    plt.close(fig)
    return names
