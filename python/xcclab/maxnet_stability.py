"""MaxNet's stability design (seed 000, Section VIII-D, Algorithm 3; and VIII-E).

The loop of a flow with RTT tau is (eq. (13))

    F(s, tau; alpha) = alpha e^{-s tau} / (s tau) * (s tau + eta) / (s tau + eta alpha T / tau)

Algorithm 3, for an upper bound tau_bar on the RTT and given alpha T and eta:

1. omega_bar = omega_0(tau_bar), the lowest frequency where F(j omega, tau_bar; 1) crosses the
   real axis (eq. (14));
2. the spiral S = {F(j omega, tau_bar; 1) : omega > omega_bar};
3. the tail T = {F(j omega_bar, tau; 1) : tau < tau_bar};
4. a line L = {x + j y : y = gamma (x + 1 / alpha_max)} above S and T; MaxNet is stable for
   every alpha < alpha_max (Proposition 1), any topology, any RTT up to tau_bar.

Step 4 leaves the line's slope free; we take the line that gives the largest alpha_max: with
``c = 1 / alpha_max`` and ``u = 1 / gamma`` every point must satisfy ``y <= (x + c) / u``, i.e.
``c >= u y - x``, so ``c(u) = max_p (u y_p - x_p)``, convex in ``u``, minimised by a golden-section
search. The paper's numbers for tau_bar = 1000 s, T = 0.4 s, alpha = 0.66, eta = 0.06:
gamma = 0.3504, omega_bar = 0.001525. That gamma is the optimal line's slope for alpha T = 0.26 s
(0.3504 to four figures); alpha T = 0.264 s exactly gives 0.3523 (docs/algorithms/maxnet.md).

Because the slope is free, :func:`slope_range` also answers the question the paper actually
asks of its parameters: which lines through -1/alpha lie above S and T for a given alpha.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


def loop_gain(
    omega: np.ndarray | float,
    tau: np.ndarray | float,
    alpha_t: float,
    eta: float,
    alpha: float = 1.0,
):
    """F(j omega, tau; alpha) of eq. (13); ``alpha_t`` is the product alpha T."""
    s = 1j * np.asarray(omega, dtype=float)
    tau = np.asarray(tau, dtype=float)
    return alpha * np.exp(-s * tau) / (s * tau) * (s * tau + eta) / (s * tau + eta * alpha_t / tau)


def _phase(phi: np.ndarray, tau: float, alpha_t: float, eta: float) -> np.ndarray:
    """Unwrapped argument of F(j phi / tau, tau; 1) as a function of phi = omega tau."""
    return -math.pi / 2 - phi + np.arctan2(phi, eta) - np.arctan2(phi, eta * alpha_t / tau)


def omega0(tau: float, alpha_t: float, eta: float) -> float:
    """Eq. (14): the lowest frequency at which F(j omega, tau; 1) is real (phase -pi)."""
    phi = np.geomspace(1e-9, 100.0, 200_001)
    ph = _phase(phi, tau, alpha_t, eta)
    k = int(np.argmax(ph <= -math.pi))
    lo, hi = phi[k - 1], phi[k]
    for _ in range(100):  # bisection on the unwrapped phase
        mid = 0.5 * (lo + hi)
        if _phase(np.array([mid]), tau, alpha_t, eta)[0] > -math.pi:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi) / tau


@dataclass(frozen=True)
class StabilityDesign:
    tau_bar: float
    alpha_t: float
    eta: float
    omega_bar: float
    gamma: float
    alpha_max: float
    spiral: np.ndarray
    tail: np.ndarray


def design(tau_bar: float, alpha_t: float, eta: float, points: int = 20_000) -> StabilityDesign:
    """Algorithm 3 for RTTs up to ``tau_bar`` (s), ``alpha_t`` = alpha T (s) and ``eta``."""
    for name, v in (("tau_bar", tau_bar), ("alpha_t", alpha_t), ("eta", eta)):
        if not (v > 0 and math.isfinite(v)):
            raise ValueError(f"{name} = {v}: expected a positive number")
    w_bar = omega0(tau_bar, alpha_t, eta)
    omegas = w_bar * np.geomspace(1.0, 1e4, points)
    spiral = loop_gain(omegas, tau_bar, alpha_t, eta)
    taus = tau_bar * np.geomspace(1e-8, 1.0, points)
    tail = loop_gain(w_bar, taus, alpha_t, eta)
    pts = np.concatenate([spiral, tail])
    x, y = pts.real, pts.imag

    def c_of(log_u: float) -> float:
        return float(np.max(math.exp(log_u) * y - x))

    lo, hi = -12.0, 12.0  # golden-section search on log(1/gamma)
    g = (math.sqrt(5) - 1) / 2
    a, b = hi - g * (hi - lo), lo + g * (hi - lo)
    for _ in range(200):
        if c_of(a) < c_of(b):
            hi = b
        else:
            lo = a
        a, b = hi - g * (hi - lo), lo + g * (hi - lo)
    log_u = 0.5 * (lo + hi)
    c = c_of(log_u)
    return StabilityDesign(tau_bar, alpha_t, eta, w_bar, math.exp(-log_u), 1.0 / c, spiral, tail)


def slope_range(d: StabilityDesign, alpha: float) -> tuple[float, float] | None:
    """The slopes of the lines L through -1/alpha that lie above S and T, as (lowest, highest);
    None if there is none (alpha >= alpha_max). A point left of -1/alpha bounds the slope from
    above, a point right of it from below."""
    if not (alpha > 0 and math.isfinite(alpha)):
        raise ValueError(f"alpha = {alpha}: expected a positive number")
    pts = np.concatenate([d.spiral, d.tail])
    dx, y = pts.real + 1.0 / alpha, pts.imag
    right, left = dx > 0, dx < 0
    if np.any((dx == 0) & (y > 0)):
        return None
    lowest = float(np.max(y[right] / dx[right], initial=0.0))
    highest = float(np.min(y[left] / dx[left], initial=math.inf))
    return (lowest, highest) if lowest <= highest else None


def phase_margin_alpha(tau: float, alpha_t: float, eta: float, margin_deg: float = 45.0) -> float:
    """Section VIII-E step 2: the largest alpha for which F(j omega, tau; alpha) keeps a phase
    margin of ``margin_deg``: its (unwrapped) argument stays above -pi + margin wherever
    |F| > 1. (The text prints the bound as -3 pi / 2; a 45 degree margin is -3 pi / 4.)"""
    phi = np.geomspace(1e-6, 1e3, 400_000)
    mag = np.abs(loop_gain(phi / tau, tau, alpha_t, eta))
    ph = _phase(phi, tau, alpha_t, eta)
    bad = ph <= -math.pi + math.radians(margin_deg)
    # |alpha F| > 1 must not happen where the phase is too low: alpha < 1 / max |F| there.
    return float(1.0 / mag[bad].max()) if bad.any() else float("inf")


def format_design(d: StabilityDesign) -> str:
    return (
        f"tau_bar = {d.tau_bar:g} s, alpha T = {d.alpha_t:g} s, eta = {d.eta:g}\n"
        f"omega_bar = {d.omega_bar:.6g} rad/s\n"
        f"line L: slope gamma = {d.gamma:.4f}, meets the real axis at -1/alpha_max = "
        f"{-1 / d.alpha_max:.4f}\n"
        f"stable for alpha < alpha_max = {d.alpha_max:.4f}"
    )


def plot_design(d: StabilityDesign, path_stem, title: str | None = None) -> list:
    """Fig. 10: the spiral S, the tail T and the line L."""
    from .figures import pyplot as _pyplot
    from .figures import save_figure

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 5))
    ax.plot(d.spiral.real, d.spiral.imag, lw=0.8, label="spiral S")
    ax.plot(d.tail.real, d.tail.imag, lw=0.8, label="tail T")
    x = np.linspace(-1 / d.alpha_max - 2, 1, 100)
    ax.plot(x, d.gamma * (x + 1 / d.alpha_max), "k--", lw=0.8, label=f"L (gamma = {d.gamma:.3f})")
    ax.plot([-1 / d.alpha_max], [0], "ko", ms=3)
    ax.set_xlim(-1 / d.alpha_max - 1.5, 1.0)
    ax.set_ylim(-2.5, 1.5)
    ax.axhline(0, color="grey", lw=0.5)
    ax.axvline(0, color="grey", lw=0.5)
    ax.set_xlabel("Re")
    ax.set_ylabel("Im")
    ax.legend(fontsize=8)
    ax.set_title(title or f"tau_bar = {d.tau_bar:g} s, eta = {d.eta:g}, alpha T = {d.alpha_t:g} s")
    fig.tight_layout()
    from pathlib import Path

    stem = Path(path_stem)
    paths = save_figure(fig, stem.parent, stem.name)
    plt.close(fig)
    return paths
