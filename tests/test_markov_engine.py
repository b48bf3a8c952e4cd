"""Invariants, limits and reference agreements of the Markov renewal engine."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tcpabr_model.errors import ChainTooLargeError, ErgodicityError
from tcpabr_model.markov import (Scenario, analyze, simulate_embedded, skeleton_for,
                                 stationary_distribution, switch_probability)
from tcpabr_model.markov.kernels.interval import MODE_ABR, MODE_TCP_ALONE, binomial_pmf, bottleneck, interval_outcome

SETTINGS = settings(max_examples=int(__import__("os").environ.get("HYP_EXAMPLES", 25)), deadline=None, suppress_health_check=[HealthCheck.too_slow])

small_scenarios = st.builds(
    Scenario,
    delta=st.integers(4, 16).map(float),
    bmax=st.integers(1, 8),
    psi=st.floats(1.0, 300.0),
    rate_ratio=st.sampled_from([0.25, 0.5, 0.75]),
    wmax=st.integers(2, 48),
    feedback=st.sampled_from(["instcap", "none"]),
)


# --- the interval kernel: small deterministic cases with exact answers ------------------

def test_bottleneck_matched_rates_keeps_queue():
    arr = np.arange(40, dtype=float)  # 40 arrivals at spacing 1, service 1
    lost, j, b_end, dep = bottleneck(3, arr, 40, 1.0, 10, 40.0)
    assert (lost, b_end, dep) == (False, 3, 40)


def test_bottleneck_mismatch_loses_after_2_bmax_minus_b():
    # source at the high rate, link at the low rate: the 2 (B_max - B)-th arriving packet
    # is the first one lost (Sec. III-C), so 2 (B_max - B) - 1 are admitted before it
    for b0 in range(0, 10):
        lost, j, _, _ = bottleneck(b0, np.arange(40, dtype=float), 40, 2.0, 10, 40.0)
        assert lost and j == 2 * (10 - b0) - 1


def test_interval_abr_conserves_window():
    work = np.empty(200)
    lost, _, a1, b1, d1 = interval_outcome(MODE_ABR, 30, 2, 40, 3, 1.0, 1.0, 10, 40.0, work)
    assert not lost and a1 + b1 + d1 == 30 + 2 + 40 + 3 and d1 == 40 and b1 == 2


def test_interval_tcp_alone_window_growth_fills_buffer():
    work = np.empty(200)
    # 40 ACKs at spacing 1, 2 increments: 42 packets into a link serving 40
    lost, _, a1, b1, d1 = interval_outcome(MODE_TCP_ALONE, 0, 1, 40, 2, 1.0, 1.0, 10, 40.0, work)
    assert not lost and (a1, b1, d1) == (0, 3, 40)


@given(n=st.integers(0, 300), p=st.floats(1e-4, 1.0))
@SETTINGS
def test_binomial_pmf_sums_to_one(n, p):
    out = np.empty(n + 1)
    binomial_pmf(n, p, out)
    assert np.all(out >= 0) and abs(out.sum() - 1) < 1e-12


# --- chain invariants --------------------------------------------------------------------

@given(sc=small_scenarios)
@SETTINGS
def test_chain_invariants(sc):
    sk = skeleton_for(sc)
    p = sc.p_switch
    P = sk.transition_matrix(p, p)
    rows = np.asarray(P.sum(axis=1)).ravel()
    assert np.all(np.abs(rows - 1) < 1e-12), "rows must be stochastic"
    assert P.data.min() >= 0
    assert sk.window.max() <= sc.wmax and sk.window.min() >= 1
    if sc.feedback == "none":
        assert np.all(sk.states[:, 0] == 0), "TCP alone has no segmentation buffer"
    assert np.all(sk.states[:, 1] <= sc.bmax)
    # loss-free transitions never decrease the window
    W = sk.window
    T, _ = sk.transition_parts(p, p)
    coo = T.tocoo()
    assert np.all(W[coo.col] >= W[coo.row])
    # every loss goes to a state (0, 0, m, ., .)
    _, L = sk.transition_parts(p, p)
    tgt = sk.states[L.tocoo().col]
    assert np.all(tgt[:, 0] == 0) and np.all(tgt[:, 1] == 0)


def _slow_start_fits(sc):
    """The regeneration state (0, 0, m) of eq. 13 and the loss-free slow start of
    III-B.3 are physically possible: the largest threshold m = ceil(W_max / 2) can
    cross the bottleneck in one round trip at the low rate."""
    return (sc.wmax + 1) // 2 <= int(sc.delta * sc.rate_ratio + 1e-9)


@given(sc=small_scenarios)
@SETTINGS
def test_bounds_are_ordered_and_in_unit_interval(sc):
    try:
        r = analyze(sc)
    except ErgodicityError:
        # only the deterministic alternation psi = 1 may lock the chain into phase classes
        assert sc.psi == 1.0
        return
    assert r.residual < 1e-11
    assert 0 < r.conservative <= r.optimistic <= r.optimistic_eq18 + 1e-12
    if _slow_start_fits(sc):
        # outside this regime the model's slow start (and its regeneration at
        # (0, 0, m)) credits more packets than the link can carry: docs/model.md, sec. 9
        assert r.optimistic <= 1 + 1e-9
    assert 0 <= r.loss_probability <= 1


@given(sc=small_scenarios)
@SETTINGS
def test_structured_solver_matches_sparse_direct(sc):
    sk = skeleton_for(sc)
    p = sc.p_switch
    try:
        a = stationary_distribution(sk, p, p, "structured")
    except ErgodicityError:
        assert sc.psi == 1.0
        return
    b = stationary_distribution(sk, p, p, "sparse-direct")
    assert a.pi.min() >= 0 and abs(a.pi.sum() - 1) < 1e-12
    np.testing.assert_allclose(a.pi, b.pi, atol=1e-10)


def test_all_methods_agree_on_fig8_chain():
    sc = Scenario(delta=40, bmax=10, psi=20)
    sk = skeleton_for(sc)
    p = sc.p_switch
    ref = stationary_distribution(sk, p, p, "structured").pi
    for m in ("structured-direct", "sparse-direct", "dense", "power", "quantecon"):
        pi = stationary_distribution(sk, p, p, m).pi
        np.testing.assert_allclose(pi, ref, atol=1e-9, err_msg=m)


# --- limits -----------------------------------------------------------------------------

@pytest.mark.parametrize("feedback", ["instcap", "none"])
def test_no_loss_when_rate_never_changes(feedback):
    # rate ratio 1: both states have the same capacity; a buffer above the window's excess
    sc = Scenario(delta=20, bmax=30, psi=5, rate_ratio=1.0, wmax=40, feedback=feedback)
    sk = skeleton_for(sc)
    assert sk.p_loss.max() == 0.0
    r = analyze(sc)
    assert r.loss_probability == 0.0
    assert r.optimistic == pytest.approx(1.0, abs=1e-12)
    assert r.conservative == pytest.approx(1.0, abs=1e-12)


def test_abr_constant_link_never_loses_even_with_tiny_buffer():
    # over ABR a constant link never loses: the window waits in the segmentation buffer
    sk = skeleton_for(Scenario(delta=20, bmax=2, psi=5, rate_ratio=1.0, wmax=60))
    assert sk.p_loss.max() == 0.0


def test_tcp_alone_loses_without_rate_changes_when_window_exceeds_pipe_plus_buffer():
    sk = skeleton_for(Scenario(delta=20, bmax=3, psi=5, rate_ratio=1.0, wmax=60, feedback="none"))
    assert sk.p_loss.max() > 0
    assert analyze(Scenario(delta=20, bmax=3, psi=5, rate_ratio=1.0, wmax=60, feedback="none")).optimistic < 1


def test_abr_efficiency_increases_towards_one_as_psi_grows():
    effs = [analyze(Scenario(delta=40, bmax=10, psi=psi)).conservative for psi in (2, 10, 50, 1e4, 1e7)]
    assert all(np.diff(effs) > 0)
    assert effs[-1] > 0.9999


def test_tcp_alone_psi_limit_is_below_abr():
    abr = analyze(Scenario(delta=40, bmax=10, psi=1e6)).conservative
    alone = analyze(Scenario(delta=40, bmax=10, psi=1e6, feedback="none")).optimistic
    assert alone < abr


def test_switch_probability_mapping():
    assert switch_probability(1) == 1.0
    assert switch_probability(20) == pytest.approx(0.05)
    with pytest.raises(ValueError, match="psi"):
        switch_probability(0.5)


# --- reproduction of the paper's qualitative findings (Figs. 8-9) -------------------------

def test_abr_insensitive_to_buffer_tcp_alone_is_not():
    def eff(fb, b):
        return analyze(Scenario(delta=40, bmax=b, psi=100, feedback=fb)).conservative
    assert abs(eff("instcap", 10) - eff("instcap", 12)) < 0.002
    assert eff("none", 12) - eff("none", 10) > 0.01


# --- independent Monte Carlo of the same Markov renewal process ---------------------------

@pytest.mark.parametrize("feedback,psi,kw", [("instcap", 1.5, {}), ("instcap", 8.0, {}), ("none", 3.0, {}),
                                           ("effcap", 3.0, {"effcap_m": 2, "effcap_n": 2}),
                                           ("effcap", 8.0, {"effcap_m": 1, "effcap_n": 4})])
def test_embedded_monte_carlo_agrees(feedback, psi, kw):
    sc = Scenario(delta=40, bmax=10, psi=psi, feedback=feedback, **kw)
    r = analyze(sc)
    mc = simulate_embedded(sc, n_cycles=200_000, seed=7)
    # 95% batch-means intervals, widened to 4 half-widths for a ~1e-4 false-alarm rate
    assert abs(mc.optimistic_eq18 - r.optimistic_eq18) < 4 * mc.optimistic_eq18_halfwidth
    assert abs(mc.conservative - r.conservative) < 4 * mc.conservative_halfwidth
    assert mc.conservative_halfwidth < 0.01


def test_embedded_monte_carlo_is_reproducible():
    sc = Scenario(delta=20, bmax=5, psi=3)
    assert simulate_embedded(sc, n_cycles=20_000, seed=3) == simulate_embedded(sc, n_cycles=20_000, seed=3)
    assert simulate_embedded(sc, n_cycles=20_000, seed=3) != simulate_embedded(sc, n_cycles=20_000, seed=4)


# --- bad input and untrustworthy computations ---------------------------------------------

@pytest.mark.parametrize("kwargs,name", [
    (dict(delta=0.5), "delta"), (dict(bmax=0), "bmax"), (dict(psi=0.5), "psi"),
    (dict(psi=float("nan")), "psi"), (dict(rate_ratio=0.0), "rate_ratio"),
    (dict(rate_ratio=1.5), "rate_ratio"), (dict(wmax=0), "wmax"), (dict(feedback="erica"), "feedback"),
    (dict(feedback="constant"), "source_rate"), (dict(source_rate=0.7), "source_rate"),
    (dict(bmax=2.5), "bmax"), (dict(delta=1, rate_ratio=0.5), "delta"),
])
def test_invalid_scenarios_name_the_parameter(kwargs, name):
    with pytest.raises(ValueError, match=name):
        Scenario(**kwargs)


def test_too_large_chain_raises():
    with pytest.raises(ChainTooLargeError, match="max_states"):
        analyze(Scenario(delta=40, bmax=10, psi=5, max_states=100))


def test_constant_rate_source_between_min_and_mean():
    lo = analyze(Scenario(delta=40, bmax=10, psi=20, feedback="constant", source_rate=0.5))
    assert lo.loss_probability == 0.0  # never faster than the link: no loss
    assert lo.conservative == pytest.approx(0.5 / 0.75, rel=0.02)
