"""Finite-sample estimators (seed 004 eqs. 24-28) and the EFFCAP design rule."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tcpabr_model.closed_forms as cf


def _naive_blocks(x, M, sliding):
    if sliding:
        return [sum(x[j:j + M]) for j in range(len(x) - M + 1)]
    nb = len(x) // M
    start = len(x) - nb * M
    return [sum(x[start + j * M:start + (j + 1) * M]) for j in range(nb)]


def _naive_eq25(x, M, delta, N, sliding):
    S = _naive_blocks(x, M, sliding)[-N:]
    return -math.log(sum(math.exp(-delta * s) for s in S) / len(S)) / (M * delta)


@settings(deadline=None, max_examples=50)
@given(st.lists(st.floats(0, 5), min_size=20, max_size=200), st.integers(1, 6), st.floats(0.01, 5), st.booleans())
def test_eq25_matches_naive(xs, M, delta, sliding):
    x = np.array(xs)
    nblocks = len(_naive_blocks(xs, M, sliding))
    N = max(1, nblocks // 2)
    got = cf.effcap_estimate(x, M, delta, N, sliding=sliding)
    assert got == pytest.approx(_naive_eq25(xs, M, delta, N, sliding), rel=1e-9, abs=1e-12)
    # eq. 26 is the same number split in two terms
    t1, t2 = cf.effcap_eq26_terms(x, M, delta, N, sliding=sliding)
    assert t1 + t2 == pytest.approx(got, rel=1e-9, abs=1e-12)
    # eqs. 27-28: eq. 25 lies between the min block average and it + log N/(M delta)
    e28 = cf.effcap_min_block_average(x, M, N, sliding=sliding)
    assert e28 - 1e-12 <= got <= e28 + math.log(N) / (M * delta) + 1e-12
    # and between the min and the mean block average
    S = np.array(_naive_blocks(xs, M, sliding)[-N:]) / M
    assert got <= S.mean() + 1e-9


def test_eq25_tends_to_eq28():
    rng = np.random.default_rng(0)
    x = rng.choice([1.0, 0.5], 10_000)
    e28 = cf.effcap_min_block_average(x, 7, 49)
    for d in (10.0, 100.0, 1000.0):
        diff = cf.effcap_estimate(x, 7, d, 49, sliding=True) - e28
        assert 0 <= diff <= math.log(49) / (7 * d)
    assert cf.effcap_estimate(x, 7, np.inf, 49, sliding=True) == e28


def _markov_samples(P, c, n, seed):
    rng = np.random.default_rng(seed)
    u = rng.random(n)
    x = np.empty(n)
    s = 0
    for i in range(n):
        x[i] = c[s]
        s = 1 - s if u[i] < P[s, 1 - s] else s
    return x


def _eq24_exact(P, c, delta, M):
    a, b = P[0, 1], P[1, 0]
    pi = np.array([b, a]) / (a + b)
    D = np.diag(np.exp(-delta * np.asarray(c)))
    v = pi @ D
    for _ in range(M - 1):
        v = v @ P @ D
    return -math.log(v.sum()) / (M * delta)


def test_estimator_converges_as_N_and_M_grow():
    P = cf.two_state_matrix(0.2, 0.3)
    c = [1.0, 0.5]
    delta = 0.5
    x = _markov_samples(P, c, 400_000, 1)
    g = cf.effective_capacity(P, c, delta)
    errs = []
    for M in (5, 20, 80):
        est = cf.effcap_estimate(x, M, delta)
        exact_M = _eq24_exact(P, c, delta, M)
        # eq. 25 (N large) -> eq. 24 at this M, within a few standard errors (~1e-3)
        assert est == pytest.approx(exact_M, abs=5e-3)
        errs.append(abs(exact_M - g))
    # eq. 24 -> eq. 23: bias decreases like 1/M
    assert errs[0] > errs[1] > errs[2]
    assert errs[2] < errs[0] * 5 / 80 * 1.5


def test_feedback_series_matches_naive():
    rng = np.random.default_rng(2)
    x = rng.random(3000)
    M, N = 7, 49
    out = cf.effcap_feedback_series(x, M, N)
    assert np.all(np.isnan(out[: M + N - 2]))
    for t in (M + N - 2, 100, 1234, 2999):
        avgs = [x[e - M + 1:e + 1].mean() for e in range(t - N + 1, t + 1)]
        assert out[t] == pytest.approx(min(avgs), rel=1e-12)
    assert out[-1] == pytest.approx(cf.effcap_min_block_average(x, M, N), rel=1e-12)


def test_eq24_from_block_sums():
    S = np.array([3.0, 3.5, 4.0])
    got = cf.effcap_eq24(S, 4, 1.0)
    assert got == pytest.approx(-math.log(np.mean(np.exp(-S))) / 4, rel=1e-14)


@pytest.mark.parametrize(
    "delta,s,k,M,N",
    [
        (200, 30, 8, 7, 49),      # Sec. V-B, footnote 6 / Fig. 10
        (200, 30, 2, 7, 7),       # Sec. VI example "N : 2 Delta"
        (240, 30, 12, 8, 88),     # Sec. VII case 1, session 1
        (360, 30, 12, 12, 132),   # Sec. VII case 1, session 2
        (300, 30, 12, 10, 110),   # Sec. VII case 2
        (50, 30, 4, 2, 6),        # Figs. 15-16 text
        (100, 30, 4, 4, 12),
    ],
)
def test_effcap_design_reference_values(delta, s, k, M, N):
    d = cf.effcap_design(delta, s, k)
    assert (d.M, d.N) == (M, N)


def test_effcap_design_conventions_and_errors():
    d = cf.effcap_design(200, 30)
    assert d.N_range == (49, 77)
    c = cf.effcap_design(200, 30, 8, convention="count")
    assert (c.M, c.N, c.N_range) == (7, 56, (56, 84))
    with pytest.raises(ValueError, match="delta"):
        cf.effcap_design(0, 30)
    with pytest.raises(ValueError, match="s="):
        cf.effcap_design(200, -1)
    with pytest.raises(ValueError, match="k="):
        cf.effcap_design(200, 30, 1)
    with pytest.raises(ValueError, match="convention"):
        cf.effcap_design(200, 30, convention="x")


def test_estimator_bad_inputs():
    x = np.ones(10)
    with pytest.raises(ValueError, match="M="):
        cf.effcap_estimate(x, 11, 1.0)
    with pytest.raises(ValueError, match="M="):
        cf.effcap_estimate(x, 0, 1.0)
    with pytest.raises(ValueError, match="N="):
        cf.effcap_estimate(x, 5, 1.0, N=3)
    with pytest.raises(ValueError, match="delta"):
        cf.effcap_estimate(x, 5, 0.0)
    with pytest.raises(ValueError, match="samples"):
        cf.effcap_estimate(np.ones((2, 5)), 1, 1.0)
    with pytest.raises(ValueError, match="samples"):
        cf.effcap_min_block_average([1.0, np.nan], 1)
