"""Effective capacity (seed 004 eq. 23): properties, reference values, errors."""

import itertools
import math

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st

import tcpabr_model.closed_forms as cf
from tcpabr_model.errors import ErgodicityError, ModelError, SolveError
from validation.checks import _eq24_exact as _eq24_exact_pi

prob = st.floats(0.01, 1.0)
cap = st.floats(0.0, 10.0)
dlt = st.floats(1e-3, 50.0)


def _naive_gamma(P, c, delta, n=60):
    """Finite-n moment by repeated matrix products: log(pi D (PD)^n 1)/(n+1) increments."""
    k = len(c)
    A = P.T - np.eye(k)
    A[-1] = 1
    b = np.zeros(k)
    b[-1] = 1
    pi = np.linalg.solve(A, b)
    D = np.diag(np.exp(-delta * c))
    v = pi @ D
    logs = []
    acc = 0.0
    for _ in range(n):
        v = v @ P @ D
        s = v.sum()
        acc += math.log(s)
        v /= s
        logs.append(acc)
    return -(logs[-1] - logs[-2]) / delta


@settings(deadline=None, max_examples=60)
@given(prob, prob, cap, cap, dlt)
def test_two_state_between_min_cycle_mean_and_mean(a, b, c0, c1, d):
    g = cf.effective_capacity_two_state(a, b, c0, c1, d)
    mean = (b * c0 + a * c1) / (a + b)
    g_inf = cf.effective_capacity_two_state(a, b, c0, c1, np.inf)
    tol = 1e-9 * max(1.0, c0, c1)
    assert min(c0, c1) - tol <= g_inf - tol <= g <= mean + tol


@settings(deadline=None, max_examples=60)
@given(prob, prob, cap, cap, dlt, st.floats(1.01, 10.0))
def test_two_state_monotone_in_delta(a, b, c0, c1, d, factor):
    g1 = cf.effective_capacity_two_state(a, b, c0, c1, d)
    g2 = cf.effective_capacity_two_state(a, b, c0, c1, d * factor)
    assert g2 <= g1 + 1e-10 * max(1.0, c0, c1)


@settings(deadline=None, max_examples=60)
@given(prob, prob, cap, cap, dlt)
def test_two_state_symmetry(a, b, c0, c1, d):
    g = cf.effective_capacity_two_state(a, b, c0, c1, d)
    h = cf.effective_capacity_two_state(b, a, c1, c0, d)
    assert g == pytest.approx(h, rel=1e-12, abs=1e-12)


@settings(deadline=None, max_examples=40)
@given(prob, prob, cap, cap, dlt)
def test_two_state_closed_form_equals_spectral_radius(a, b, c0, c1, d):
    closed = cf.effective_capacity_two_state(a, b, c0, c1, d)
    res = cf.effective_capacity_solve(cf.two_state_matrix(a, b), [c0, c1], d)
    assert res.lower - 1e-12 <= closed <= res.upper + 1e-12 or closed == pytest.approx(res.value, rel=1e-10, abs=1e-12)


def test_limits_two_state():
    a, b, c0, c1 = 0.1, 0.2, 1.0, 0.5
    mean = (b * c0 + a * c1) / (a + b)
    assert cf.effective_capacity_two_state(a, b, c0, c1, 0.0) == pytest.approx(mean, rel=1e-15)
    assert cf.effective_capacity_two_state(a, b, c0, c1, 1e-7) == pytest.approx(mean, rel=1e-6)
    assert cf.effective_capacity_two_state(a, b, c0, c1, 1e4) == pytest.approx(0.5, rel=1e-3)
    assert cf.effective_capacity_two_state(a, b, c0, c1, np.inf) == 0.5
    # chain forced to leave the low state: Gamma(inf) is the 2-cycle mean, not c_min
    assert cf.effective_capacity_two_state(0.3, 1.0, 1.0, 0.5, np.inf) == pytest.approx(
        cf.min_cycle_mean(cf.two_state_matrix(0.3, 1.0), [1.0, 0.5])
    )
    assert cf.effective_capacity_two_state(1.0, 1.0, 1.0, 0.5, 30.0) == pytest.approx(0.75, rel=1e-12)


def test_vectorised_two_state():
    d = np.array([0.0, 0.5, 2.0, np.inf])
    g = cf.effective_capacity_two_state(0.1, 0.1, 1.0, 0.5, d)
    assert g.shape == (4,)
    assert np.all(np.diff(g) <= 0)
    assert g[0] == pytest.approx(0.75)
    assert g[-1] == 0.5


def test_sympy_derivation_returns_expression():
    import sympy as sy

    d = cf.derive_two_state_effective_capacity()
    s = d["symbols"]
    assert isinstance(d["Gamma"], sy.Expr)
    val = d["Gamma"].subs({s["p01"]: 0.1, s["p10"]: 0.2, s["c0"]: 1.0, s["c1"]: 0.5, s["delta"]: 2.0})
    assert float(val) == pytest.approx(cf.effective_capacity_two_state(0.1, 0.2, 1.0, 0.5, 2.0), rel=1e-12)
    # the eigenvalue sympy returned and the stable rewrite agree
    pt = {s["p01"]: 0.3, s["p10"]: 0.6, s["x0"]: 0.7, s["x1"]: 0.2}
    assert float(d["rho"].subs(pt)) == pytest.approx(float(d["rho_eigen"].subs(pt)), rel=1e-14)


def test_general_chain_against_matrix_products():
    P = np.array([[0.5, 0.3, 0.2], [0.2, 0.5, 0.3], [0.4, 0.1, 0.5]])
    c = np.array([1.0, 0.5, 0.2])
    for d in (0.1, 1.0, 5.0):
        assert cf.effective_capacity(P, c, d) == pytest.approx(_naive_gamma(P, c, d), rel=1e-10)


def test_dense_and_sparse_agree():
    rng = np.random.default_rng(1)
    n = 150
    A = rng.random((n, n)) * (rng.random((n, n)) < 0.05)
    A[np.arange(n), (np.arange(n) + 1) % n] += 1.0
    P = A / A.sum(1, keepdims=True)
    c = rng.random(n)
    for d in (0.3, 3.0):
        dense = cf.effective_capacity_solve(P, c, d)
        sparse = cf.effective_capacity_solve(sp.csr_array(P), c, d)
        assert dense.value == pytest.approx(sparse.value, rel=1e-10)
        assert dense.lower <= dense.value <= dense.upper


def test_min_cycle_mean_by_enumeration():
    rng = np.random.default_rng(4)
    n = 5
    A = rng.random((n, n)) * (rng.random((n, n)) < 0.4)
    np.fill_diagonal(A, 0)
    A[np.arange(n), (np.arange(n) + 1) % n] += 1
    P = A / A.sum(1, keepdims=True)
    c = rng.random(n)
    best = np.inf
    for L in range(1, n + 1):
        for cyc in itertools.permutations(range(n), L):
            if all(P[cyc[i], cyc[(i + 1) % L]] > 0 for i in range(L)):
                best = min(best, float(np.mean(c[list(cyc)])))
    assert cf.min_cycle_mean(P, c) == pytest.approx(best, rel=1e-14)
    assert cf.effective_capacity(P, c, np.inf) == pytest.approx(best, rel=1e-14)


def test_delta_for_rate_round_trip():
    P = cf.two_state_matrix(0.05, 0.05)
    c = [40.0, 20.0]
    for d in (0.01, 0.1, 1.0):
        rate = cf.effective_capacity(P, c, d)
        assert cf.delta_for_rate(P, c, rate) == pytest.approx(d, rel=1e-8)
        assert cf.delta_for_rate_two_state(0.05, 0.05, 40.0, 20.0, rate) == pytest.approx(d, rel=1e-8)
    assert cf.delta_for_rate(P, c, 30.0) == 0.0


def test_delta_for_rate_without_solution_raises():
    P = cf.two_state_matrix(0.1, 0.1)
    with pytest.raises(ModelError):
        cf.delta_for_rate(P, [1.0, 0.5], 0.5)  # = Gamma(inf): needs delta = inf
    with pytest.raises(ModelError):
        cf.delta_for_rate(P, [1.0, 0.5], 0.8)  # above the mean


def test_qos_delta():
    assert cf.qos_delta(math.exp(-20), 10) == pytest.approx(2.0)
    for eps in (0.0, 1.0, -0.1, 2.0):
        with pytest.raises(ValueError, match="epsilon"):
            cf.qos_delta(eps, 10)
    with pytest.raises(ValueError, match="bmax"):
        cf.qos_delta(0.1, 0)


def test_bad_inputs():
    with pytest.raises(ValueError, match="row"):
        cf.effective_capacity([[0.5, 0.4], [0.5, 0.5]], [1, 2], 1.0)
    with pytest.raises(ValueError, match="square"):
        cf.effective_capacity([[0.5, 0.5]], [1, 2], 1.0)
    with pytest.raises(ValueError, match="c.shape"):
        cf.effective_capacity([[0.5, 0.5], [0.5, 0.5]], [1, 2, 3], 1.0)
    with pytest.raises(ValueError, match="delta"):
        cf.effective_capacity([[0.5, 0.5], [0.5, 0.5]], [1, 2], -1.0)
    with pytest.raises(ValueError, match="non-negative"):
        cf.effective_capacity([[1.5, -0.5], [0.5, 0.5]], [1, 2], 1.0)
    with pytest.raises(ErgodicityError):
        cf.effective_capacity([[1.0, 0.0], [0.5, 0.5]], [1, 2], 1.0)
    with pytest.raises(ErgodicityError):
        cf.effective_capacity(sp.csr_array(np.eye(3)), [1, 2, 3], 1.0)
    with pytest.raises(ValueError, match="p01"):
        cf.effective_capacity_two_state(0.0, 0.5, 1, 0.5, 1.0)
    with pytest.raises(ValueError, match="p10"):
        cf.two_state_matrix(0.5, 1.5)


def test_underflow_raises_instead_of_guessing():
    # periodic chain: Perron root ~ exp(-delta * 0.25) underflows for huge delta
    with pytest.raises(SolveError):
        cf.effective_capacity(cf.two_state_matrix(1.0, 1.0), [1.0, 0.5], 1e4)


def test_large_chain_sparse_banded():
    n = 1000
    up = np.full(n - 1, 0.3)
    dn = np.full(n - 1, 0.3)
    diag = 1 - np.r_[up, 0] - np.r_[0, dn]
    P = sp.csr_array(sp.diags_array([diag, up, dn], offsets=[0, 1, -1]))
    c = np.linspace(0, 1, n)
    res = cf.effective_capacity_solve(P, c, 0.1)
    assert res.lower <= res.value <= res.upper
    assert 0.0 <= res.value <= 0.5


def test_two_state_large_delta_without_min_self_loop():
    # min state (c0 = 0) always leaves: both shifts under/overflow; factored form is used
    g_mid = cf.effective_capacity_two_state(1.0, 0.3, 0.0, 5.0, 100.0)
    assert g_mid == pytest.approx(cf.effective_capacity(cf.two_state_matrix(1.0, 0.3), [0.0, 5.0], 100.0), rel=1e-12)
    g_big = cf.effective_capacity_two_state(1.0, 0.3, 0.0, 5.0, 1e6)
    assert 2.5 < g_big < 2.5 + 1e-5
    assert cf.effective_capacity_two_state(1.0, 1.0, 0.0, 5.0, 1e3) == pytest.approx(2.5, rel=1e-12)


def _random_chain(seed, n):
    rng = np.random.default_rng(seed)
    A = rng.random((n, n)) * (rng.random((n, n)) < 0.6)
    A[np.arange(n), (np.arange(n) + 1) % n] += 0.2  # irreducible
    if rng.random() < 0.5:
        A[np.arange(n), np.arange(n)] += rng.random(n)
    return A / A.sum(1, keepdims=True), rng.uniform(0, 3, n)


@settings(deadline=None, max_examples=30)
@given(st.integers(0, 10_000), st.integers(2, 6), st.floats(1e-3, 30.0), st.floats(1.05, 10.0))
# LAPACK returned a Perron vector with an exact zero where the true entry is the largest
@example(seed=4858, n=5, d=20.5, factor=7.0)
def test_general_chain_bounds_and_monotonicity(seed, n, d, factor):
    P, c = _random_chain(seed, n)
    lo_lim, mean = cf.effective_capacity_limits(P, c)
    g1 = cf.effective_capacity(P, c, d)
    if np.any(np.exp(-d * factor * (c - c.min())) == 0.0):
        # delta x capacity spread beyond the float64 range: documented to raise, never a number
        with pytest.raises(SolveError, match="underflows"):
            cf.effective_capacity(P, c, d * factor)
        return
    g2 = cf.effective_capacity(P, c, d * factor)
    tol = 1e-9 * max(1.0, c.max())
    assert c.min() - tol <= lo_lim
    assert lo_lim - tol <= g2 <= g1 + tol
    assert g1 <= mean + tol
    # critical-cycle bound on the distance to the limit
    assert g1 - lo_lim <= -math.log(P[P > 0].min()) / d + tol


def _eq24_exact(P, c, delta, M):
    a, b = P[0, 1], P[1, 0]
    return _eq24_exact_pi(P, np.asarray(c, dtype=float), np.array([b, a]) / (a + b), delta, M)


@settings(deadline=None, max_examples=30)
@given(st.floats(0.1, 0.9), st.floats(0.1, 0.9), st.floats(0.0, 2.0), st.floats(0.0, 2.0), st.floats(0.05, 3.0))
def test_eq24_converges_to_eq23_as_M_grows(a, b, c0, c1, d):
    P = cf.two_state_matrix(a, b)
    g = cf.effective_capacity_two_state(a, b, c0, c1, d)
    e16 = abs(_eq24_exact(P, [c0, c1], d, 16) - g)
    e256 = abs(_eq24_exact(P, [c0, c1], d, 256) - g)
    assert e256 <= e16 / 4 + 1e-12
