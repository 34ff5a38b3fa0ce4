"""maxnet-stability: MaxNet's parameter design (seed 000, Section VIII-D/E, Figs 10 and 11).

Algorithm 3 (:mod:`xcclab.maxnet_stability`) on the paper's two cases: the deployed parameters
(tau_bar = 1000 s, T = 0.4 s, alpha = 0.66, eta = 0.06, so alpha T = 0.264 s), for which the
paper gives gamma = 0.3504 and omega_bar = 0.001525 with alpha = 0.66 < alpha_max; and Fig. 10's
illustration (tau_bar = 3 s, eta = 0.7, alpha T = 0.1 s). Also Section VIII-E's empirical rule:
the largest alpha with a 45 degree phase margin at tau = alpha T for eta = 0.1.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from ...claims import Bound, Claim
from ...maxnet_stability import design, loop_gain, phase_margin_alpha, slope_range
from ..common.paper_claims import quote, table_points
from ..common.report import Comparison, atomic_dir, figure_links, fmt, markdown_table, write_metrics
from ..common.templates import report
from ..experiment import Experiment

ID = "maxnet-stability"
TITLE = "MaxNet parameter design (seed 000, Section VIII, Algorithm 3)"
CLAIM = "tau_bar 1000 s, T 0.4, alpha 0.66, eta 0.06: gamma = 0.3504, omega_bar = 0.001525, stable"


def run(
    out_dir: str | Path,
    quick: bool = False,
    *,
    log: Callable[[str], None] | None = None,
    progress: bool = True,
) -> Path:
    """Run Algorithm 3 on the paper's cases; write report.md, metrics.json and the figures."""
    (log or (lambda _m: None))(f"{ID}: Algorithm 3")
    deployed = design(1000.0, 0.66 * 0.4, 0.06)
    rounded = design(1000.0, 0.26, 0.06)  # alpha T rounded to two decimals
    fig10 = design(3.0, 0.1, 0.7)
    pm_alpha = phase_margin_alpha(0.264, 0.264, 0.1)
    slopes = slope_range(deployed, 0.66)
    paper_line_ok = slopes is not None and slopes[0] <= 0.3504 <= slopes[1]
    eta07 = design(1000.0, 0.264, 0.07)
    comparisons = [
        Comparison("omega_bar", 0.001525, deployed.omega_bar, "rad/s"),
        Comparison("gamma (alpha T = 0.264 s)", 0.3504, deployed.gamma, ""),
        Comparison("gamma (alpha T = 0.26 s)", 0.3504, rounded.gamma, ""),
    ]
    out_dir = Path(out_dir)
    with atomic_dir(out_dir) as tmp:
        figures = _figures(tmp, deployed, fig10)
        write_metrics(
            tmp,
            ID,
            title=TITLE,
            quick=quick,
            comparisons=comparisons,
            deployed={
                "alpha_max": deployed.alpha_max,
                "stable_at_alpha_0_66": deployed.alpha_max > 0.66,
                "slopes_through_minus_1_over_0_66": list(slopes) if slopes else None,
                "paper_line_above_s_and_t": paper_line_ok,
            },
            alpha_t_0_26={
                "omega_bar": rounded.omega_bar,
                "gamma": rounded.gamma,
                "alpha_max": rounded.alpha_max,
            },
            fig10={
                "omega_bar": fig10.omega_bar,
                "gamma": fig10.gamma,
                "alpha_max": fig10.alpha_max,
            },
            phase_margin_45_alpha=pm_alpha,
            figures=figures,
        )
        rows = [
            [c.quantity, f"{c.paper:.6g}", f"{c.ours:.6g}", f"{100 * (c.rel_diff or 0):+.2f} %"]
            for c in comparisons
        ]
        text = report(
            TITLE,
            f"xcc reproduce {ID}",
            options=" (also `xcc analyze maxnet-stability`)",
            intro=[
                __doc__.split("\n\n", 1)[1].strip(),
            ],
            sections=[
                (
                    "The deployed parameters",
                    [
                        markdown_table(["quantity", "paper", "ours", "diff"], rows),
                        f"alpha_max = {fmt(deployed.alpha_max, 4)}: alpha = 0.66 is "
                        + (
                            "below it, so MaxNet is provably stable for every RTT up to 1000 s, "
                            "as the paper says."
                            if deployed.alpha_max > 0.66
                            else "NOT below it, unlike the paper's claim."
                        ),
                        "**gamma.** Step 4 of Algorithm 3 leaves the line's slope free; we take "
                        "the line that maximises alpha_max (it touches both S and T). With alpha "
                        f"T = 0.66 x 0.4 = 0.264 s exactly its slope is {deployed.gamma:.4f}; with "
                        f"alpha T rounded to 0.26 s it is {rounded.gamma:.4f}, the paper's 0.3504 "
                        "to four figures, so the paper's number was most likely computed with "
                        "alpha T = 0.26 s (or alpha = 0.65). gamma moves by about 0.5 per second "
                        "of alpha T (the tail's tangent point, near tau = 10 s, sets it); "
                        "omega_bar does not depend on alpha T to seven digits.",
                        "The question the paper asks of its parameters is whether *some* line "
                        "through -1/0.66 lies above S and T. The slopes that do, for alpha T = "
                        "0.264 s, span "
                        + (
                            f"[{slopes[0]:.4f}, {slopes[1]:.4f}]"
                            if slopes
                            else "nothing (no such line exists)"
                        )
                        + ": the paper's slope 0.3504 "
                        + ("is among them" if paper_line_ok else "is NOT among them")
                        + ", so the paper's line itself certifies alpha = 0.66 with our S and T.",
                        "**omega_bar.** Ours is the exact lowest frequency at which eq. (13) is "
                        "real: phi = omega tau_bar solves phi = atan(phi / eta) up to the pole "
                        f"term, phi = {deployed.omega_bar * 1000:.5f}. It agrees with the paper's "
                        "0.001525 to three figures when 0.001525 is rounded half up (0.00153) and "
                        f"differs by {100 * abs(deployed.omega_bar / 0.001525 - 1):.2f} % in the "
                        "fourth. No variation of the stated law moves the crossing there without "
                        f"moving gamma far off: eta = 0.07 gives omega_bar = {eta07.omega_bar:.6f} "
                        f"but gamma = {eta07.gamma:.4f}. A frequency grid with a step of 2.5e-5 "
                        "rad/s (phi in steps of 0.025), whose last point below the real axis is "
                        "0.001525, would explain it; that is a guess the paper does not let us "
                        "confirm.",
                    ],
                ),
                (
                    "Fig. 10's illustration",
                    [
                        "tau_bar = 3 s, eta = 0.7, alpha T = 0.1 s: omega_bar = "
                        f"{fmt(fig10.omega_bar, 4)} rad/s, gamma = {fmt(fig10.gamma, 4)}, "
                        f"alpha_max = {fmt(fig10.alpha_max, 4)}.",
                    ],
                ),
                (
                    "Section VIII-E: 45 degree phase margin",
                    [
                        "For tau = alpha T = 0.264 s and eta = 0.1 the largest alpha with a 45 "
                        f"degree phase margin is {fmt(pm_alpha, 3)} (the deployed 0.66 "
                        + ("satisfies it)." if pm_alpha >= 0.66 else "does not)."),
                    ],
                ),
                (
                    "Figures",
                    [
                        figure_links(figures),
                    ],
                ),
            ],
        )
        (tmp / "report.md").write_text(text, encoding="utf-8")
    return out_dir / "report.md"


def _figures(tmp: Path, deployed, fig10) -> list[str]:
    import numpy as np

    from ...figures import pyplot as _pyplot
    from ...figures import save_figure
    from ...maxnet_stability import plot_design

    written = [p.name for p in plot_design(fig10, tmp / "fig10-spiral-tail-line")]
    written += [
        p.name
        for p in plot_design(
            deployed,
            tmp / "deployed-spiral-tail-line",
            "tau_bar = 1000 s, eta = 0.06, alpha T = 0.264 s",
        )
    ]
    # Fig. 11: S and T with Nyquist curves of several RTTs below tau_bar.
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 5))
    ax.plot(fig10.spiral.real, fig10.spiral.imag, "k", lw=1.0, label="S")
    ax.plot(fig10.tail.real, fig10.tail.imag, "k", lw=1.0, label="T")
    for tau in (0.05, 0.3, 1.0, 3.0):
        w = np.geomspace(0.01, 200, 4000)
        f = loop_gain(w, tau, fig10.alpha_t, fig10.eta)
        ax.plot(f.real, f.imag, lw=0.6, label=f"tau = {tau:g} s")
    ax.set_xlim(-3, 1)
    ax.set_ylim(-3, 1.5)
    ax.axhline(0, color="grey", lw=0.5)
    ax.set_xlabel("Re")
    ax.set_ylabel("Im")
    ax.legend(fontsize=7)
    ax.set_title("Fig. 11: S, T and Nyquist curves (tau_bar = 3 s)")
    fig.tight_layout()
    written += [p.name for p in save_figure(fig, tmp, "fig11-nyquist")]
    plt.close(fig)
    return written


def claims(metrics: dict) -> list[Claim]:
    out = table_points(
        metrics,
        "000",
        lambda c: "Section VIII (Proposition 1)",
        measure="Algorithm 3 for tau_bar = 1000 s, eta = 0.06 (our implementation)",
    )
    # alpha and T are given (0.66, 0.4 s): alpha T = 0.26 s is our guess at the paper's
    # rounding, not a setting it leaves open, so it is a second definition (issue 31).
    rounded = [c for c in out if "0.26 s" in c.id]
    exact = [c for c in out if "0.264 s" in c.id]
    rest = [c for c in out if c not in rounded and c not in exact]
    gamma = [replace(c, id="gamma", measure=c.measure + "; alpha T = 0.66 x 0.4 = 0.264 s")
             for c in exact]  # fmt: skip
    gamma_rounded = [
        replace(
            c,
            id="gamma (alpha T rounded to 0.26 s)",
            second_definition="alpha T rounded to 0.26 s (the paper gives alpha 0.66 and T "
            "0.4 s: 0.264 s)",
        )
        for c in rounded
    ]
    deployed = metrics.get("deployed", {})
    stable = []
    if "alpha_max" in deployed:
        stable.append(
            Bound(
                id="stable for every RTT up to 1000 s (alpha 0.66 below alpha_max)",
                quote=quote(
                    "000",
                    "Section VIII-C",
                    "it can be shown that MaxNet is stable for all RTTs up to τ = 1000 seconds "
                    "using the parameters of Section VII, namely T = 0.4 s, α = 0.66 and "
                    "η = 0.06",
                ),
                measure="alpha_max of Algorithm 3 for tau_bar = 1000 s, alpha T = 0.264 s, "
                "eta = 0.06 (our implementation; Proposition 1: stable for alpha < alpha_max)",
                ours=deployed["alpha_max"],
                op=">",
                limit=0.66,
            )
        )
    return rest + gamma + stable + gamma_rounded


EXPERIMENT = Experiment(id=ID, seed="000", title=TITLE, summary=CLAIM, run=run, claims=claims)


if __name__ == "__main__":
    print(run(sys.argv[1] if len(sys.argv) > 1 else ID))
