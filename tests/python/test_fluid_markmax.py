"""The MarkMax fluid model (seed 003, Section III): closed forms, exact per-source backlog, and
the guideline bounds of Lemmas 1-4."""

from __future__ import annotations

import math
import random

import pytest

from xcclab.fluid.markmax import (
    MarkMaxFluid,
    backlog_closed_form,
    beta_tilde_bounds,
    lambda_minus_bounds,
    lemma2_theta_max,
    lemma3_holds,
    lemma3_theta_min,
    lemma4_queue_bound,
    single_cut_suffices,
)

MU = 70e6 / 8  # 70 Mbit/s in bytes/s
MSS = 540.0


def alphas(*rtts: float) -> list[float]:
    return [MSS / r**2 for r in rtts]


def test_trajectory_matches_eq1_when_the_buffer_stays_busy():
    """x0 >= (lam0 - mu)^2 / (2 alpha): eq. (1) all the way (theta out of reach)."""
    al = alphas(0.012, 0.036)
    a = sum(al)
    rates = [0.4 * MU, 0.35 * MU]  # lam0 = 0.75 mu
    lam0 = sum(rates)
    x0 = 1.2 * (lam0 - MU) ** 2 / (2 * a)
    times = [k * 0.01 for k in range(1, 200)]
    fl = MarkMaxFluid(MU, al, 1e12, rates0=rates, backlog0=[x0 / 2, x0 / 2])
    res = fl.run(2.0, sample_times=times)
    assert len(res.samples) == len(times)
    for t, x, lam, _ in res.samples:
        expect = x0 + (lam0 - MU) * t + a / 2 * t * t
        assert x == pytest.approx(expect, rel=1e-9, abs=1e-6)
        assert sum(lam) == pytest.approx(lam0 + a * t, rel=1e-12)
    # Eq. (3): x as a function of lambda along the same parabola.
    for _t, x, lam, _ in res.samples:
        la = sum(lam)
        x3 = la * la / (2 * a) - la * MU / a + x0 + MU * lam0 / a - lam0 * lam0 / (2 * a)
        assert x == pytest.approx(x3, rel=1e-7, abs=1e-3)


def test_trajectory_matches_eq2_through_an_empty_period():
    """x0 < (lam0 - mu)^2 / (2 alpha) and lam0 < mu: decrease, empty, then alpha/2 (t - t2)^2."""
    al = alphas(0.012)
    a = al[0]
    lam0 = 0.5 * MU
    x0 = 0.3 * (lam0 - MU) ** 2 / (2 * a)
    t1 = (MU - lam0 - math.sqrt((MU - lam0) ** 2 - 2 * a * x0)) / a
    t2 = (MU - lam0) / a
    times = sorted({*(k * t2 / 50 for k in range(1, 100)), t1 * 0.999, t1 * 1.001, t2 * 1.001})
    res = MarkMaxFluid(MU, al, 1e12, rates0=[lam0], backlog0=[x0]).run(2 * t2, sample_times=times)
    pieces = set()
    for t, x, _, _ in res.samples:
        expect = backlog_closed_form(t, x0, lam0, MU, a)
        assert x == pytest.approx(expect, rel=1e-9, abs=1e-6), t
        pieces.add("fall" if t < t1 else "empty" if t <= t2 else "rise")
        if t1 < t <= t2:
            assert x == 0.0
    assert pieces == {"fall", "empty", "rise"}
    # The closed form's own pieces join continuously.
    assert backlog_closed_form(t1, x0, lam0, MU, a) == pytest.approx(0.0, abs=1e-6)


def test_per_source_backlogs_sum_to_total_and_match_a_brute_force_fifo():
    """x_i(t) from R_in, R_out and d(t) sums to x(t), and agrees with a fine discretisation of
    the same FIFO (a check of the construction, not how the model computes)."""
    from collections import deque

    al = alphas(0.012, 0.036, 0.06)
    theta = 240 * MSS
    rates0 = [0.2 * MU, 0.3 * MU, 0.1 * MU]
    dt = 2e-5
    steps = 150_000  # 3 s
    dense = [k * dt for k in range(1, steps + 1)]
    res = MarkMaxFluid(MU, al, theta, rates0=rates0).run(steps * dt + 1e-9, sample_times=dense)
    assert res.theta_events >= 3
    for _, x, _, xs in res.samples[::1000]:
        assert sum(xs) == pytest.approx(x, rel=1e-7, abs=1e-3)
    # Brute force: the same rate trajectory, in 20 us slices, through a FIFO served at mu.
    fifo: deque[list[float]] = deque()
    prev = rates0
    worst = 0.0
    for k, (_, _, lam, exact) in enumerate(res.samples):
        fifo.append([(p + q) / 2 * dt for p, q in zip(prev, lam)])  # trapezoid
        prev = lam
        serve = MU * dt
        while serve > 0 and fifo:
            head = fifo[0]
            tot = sum(head)
            if tot <= serve:
                serve -= tot
                fifo.popleft()
            else:
                f = serve / tot
                fifo[0] = [h * (1 - f) for h in head]
                serve = 0
        if k % 5000 == 4999:
            brute = [sum(sl[i] for sl in fifo) for i in range(3)]
            worst = max(worst, *(abs(b - e) for b, e in zip(brute, exact)))
    # Discretisation error: about one slice (mu dt = 175 B).
    assert worst < 0.005 * theta, worst


def test_cut_goes_to_largest_backlog_for_b_and_largest_rate_for_t():
    """From the same state the variants cut different sources: source 2 holds most of the
    backlog (it filled the buffer earlier), source 1 sends fastest now. B cuts 2, T cuts 1."""
    al = alphas(0.1, 0.1)  # slow growth: the state barely moves before theta
    theta = 240 * MSS
    kw = dict(rates0=[0.6 * MU, 0.5 * MU], backlog0=[0.0, 0.98 * theta])
    t_event = 0.2 * theta / MU  # (theta - x0) / (lambda - mu), growth aside
    probe = MarkMaxFluid(MU, al, theta, **kw).run(0.01, sample_times=[0.95 * t_event])
    _, _, lam, xs = probe.samples[0]
    assert xs[1] > 3 * xs[0] and lam[0] > lam[1]
    res_b = MarkMaxFluid(MU, al, theta, variant="b", **kw).run(0.01)
    res_t = MarkMaxFluid(MU, al, theta, variant="t", **kw).run(0.01)
    assert res_b.cuts_per_event == [1] and res_t.cuts_per_event == [1]
    assert res_b.cuts == [0, 1]
    assert res_t.cuts == [1, 0]


def test_utilisation_and_fairness_of_table_i_corner():
    """Table I, RTT2/RTT1 = 3: J ~ 0.99 and rho rising with theta (0.89, 0.95, 0.996)."""
    al = alphas(0.012, 0.036)
    rhos = []
    for th in (60, 240, 960):
        res = MarkMaxFluid(MU, al, th * MSS).run(400.0, t_start=100.0)
        assert res.jain > 0.97
        rhos.append(res.utilisation)
    assert rhos[0] < rhos[1] < rhos[2] <= 1.0 + 1e-9
    assert rhos[0] == pytest.approx(0.890, abs=0.02)
    assert rhos[2] > 0.99


def test_lemma2_single_cut_condition_on_random_instances():
    """Lemma 2: with theta <= mu^2 (1-beta)^2 / (2 alpha (N-1+beta)^2), every rate vector that
    can reach theta (mu <= lambda^- <= mu + sqrt(2 alpha theta), eq. (5)) is brought below mu by
    one cut of its largest rate; and MarkMax-T's fluid runs never need a second cut."""
    rng = random.Random(5)
    for _ in range(300):
        n = rng.randint(2, 10)
        beta = rng.uniform(0.3, 0.8)
        mu = rng.uniform(1e6, 1e8)
        al = [rng.uniform(1e3, 1e7) for _ in range(n)]
        a = sum(al)
        theta = rng.uniform(0.05, 1.0) * lemma2_theta_max(mu, a, beta, n)
        lo, hi = lambda_minus_bounds(mu, a, theta)
        total = rng.uniform(lo, hi)
        w = [rng.random() for _ in range(n)]
        rates = [total * x / sum(w) for x in w]
        assert single_cut_suffices(rates, mu, beta)
        # Lemma 1's upper bound on beta~ is what makes it work.
        j = max(range(n), key=lambda i: rates[i])
        after = total - (1 - beta) * rates[j]
        b_lo, b_hi = beta_tilde_bounds(mu, a, theta, beta, n)
        assert after / total <= b_hi + 1e-12
    for _ in range(25):
        n = rng.randint(2, 6)
        al = [MSS / rng.uniform(0.01, 0.3) ** 2 for _ in range(n)]
        a = sum(al)
        theta = rng.uniform(0.2, 1.0) * lemma2_theta_max(MU, a, 0.5, n)
        res = MarkMaxFluid(MU, al, theta, variant="t").run(3 * MU / a + 10.0)
        assert res.cuts_per_event, "theta never reached"
        assert max(res.cuts_per_event) == 1


def test_lemma2_bound_is_tight_enough_to_fail_beyond_it():
    """Far above Lemma 2's theta a single cut can be insufficient: the lemma is not vacuous."""
    mu, beta, n = 1e7, 0.5, 10
    a = 1e6
    theta = 50 * lemma2_theta_max(mu, a, beta, n)
    _, hi = lambda_minus_bounds(mu, a, theta)
    assert not single_cut_suffices([hi / n] * n, mu, beta)


def test_lemma1_lower_bound_and_lemma3_and_lemma4():
    mu, beta = MU, 0.5
    a = sum(alphas(0.012, 0.036))
    lo, hi = beta_tilde_bounds(mu, a, 240 * MSS, beta, 2)
    assert 0 < lo < beta < hi < 1
    th3 = lemma3_theta_min(mu, a, beta)
    assert lemma3_holds(mu, a, th3 * 1.001, beta)
    assert not lemma3_holds(mu, a, th3 * 0.999, beta)
    # Lemma 3's theta gives no underflow in the MarkMax-T fluid run (utilisation 1 after the
    # first busy period), a theta well below it underflows.
    res = MarkMaxFluid(mu, alphas(0.012, 0.036), th3 * 1.05, variant="t").run(300.0, t_start=100.0)
    assert res.utilisation == pytest.approx(1.0, abs=1e-6)
    res = MarkMaxFluid(mu, alphas(0.012, 0.036), th3 * 0.02, variant="t").run(300.0, t_start=100.0)
    assert res.utilisation < 0.99
    # Lemma 4: the backlog one RTT_max after reaching theta, without a cut, is at most (11).
    theta, rtt = 240 * MSS, 0.036
    lo_l, hi_l = lambda_minus_bounds(mu, a, theta)
    for lam_minus in (lo_l, (lo_l + hi_l) / 2, hi_l):
        x = theta + (lam_minus - mu) * rtt + a / 2 * rtt**2
        assert x <= lemma4_queue_bound(theta, a, rtt) + 1e-6
    assert lemma4_queue_bound(theta, a, rtt) == pytest.approx(
        theta + math.sqrt(2 * a * theta) * rtt + a / 2 * rtt**2
    )


def test_mmb_repeated_cuts_fall_back_after_the_cap():
    """MarkMax-B's loop picks the same source while no time passes; when cutting it cannot
    bring the total below mu, the cap hands the remaining cuts to the largest rate."""
    al = [MSS / 0.012**2, MSS / 0.012**2]
    # Source 2 alone exceeds mu but source 1 holds the larger initial backlog.
    fl = MarkMaxFluid(
        MU,
        al,
        100 * MSS,
        variant="b",
        rates0=[0.01 * MU, 1.1 * MU],
        backlog0=[99 * MSS, 0.0],
        max_cuts=8,
    )
    res = fl.run(0.05)
    assert res.cap_fallbacks >= 1
    assert res.cuts_per_event[0] == 9
