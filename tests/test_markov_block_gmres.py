"""The iterative block solve of the matrix-free structured solver (docs/model.md sec. 8,
"Large blocks"): ILU(0) of ``M = I - T_CC`` and GMRES on ``pi_C M = acc_C``.  Exact cases
(a full pattern, where ILU(0) is the LU and one step solves), a property test against a
dense solve, the pivot check, the fallback to SuperLU when GMRES does not converge, and
the whole analysis against the dense inverses."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import _small_chains
from tcpabr_model.markov import analyze, solvers
from tcpabr_model.markov import skeleton as _skeleton
from tcpabr_model.markov.kernels.iterative import block_gmres, gmres_workspace, ilu0_blocks


def _csr_blocks(mats):
    """The storage of kernels/iterative.py for dense matrices ``mats`` (their nonzeros)."""
    ro = np.zeros(len(mats) + 1, dtype=np.int64)
    rp, idx, val, dg = [0], [], [], []
    for b, M in enumerate(mats):
        k = M.shape[0]
        ro[b + 1] = ro[b] + k
        for i in range(k):
            cols = np.flatnonzero(M[i])
            assert i in cols
            for j in cols:
                if j == i:
                    dg.append(len(idx))
                idx.append(j)
                val.append(M[i, j])
            rp.append(len(idx))
        if b + 1 < len(mats):
            rp.append(len(idx))   # the next block's first pointer (k + 1 per block)
    return ro, np.array(rp, dtype=np.int64), np.array(idx, dtype=np.int32), np.array(val), np.array(dg, dtype=np.int64)


def _solve(mats, b, rhs, restart=40, rtol=1e-14, max_restarts=20):
    ro, rp, idx, val, dg = _csr_blocks(mats)
    lu, bad = ilu0_blocks(ro, rp, idx, val, dg)
    assert not bad.any()
    k = mats[b].shape[0]
    V, H, cs, sn, g, w, t, r, x = gmres_workspace(max(m.shape[0] for m in mats), restart)
    its = block_gmres(b, k, rhs, x, ro, rp, idx, val, lu, dg, V, H, cs, sn, g, w, t, r, rtol, max_restarts)
    return x[:k].copy(), its, lu


def _substochastic(rng, k, density, leak):
    """A random T with rows summing to 1 - leak (a transient block) and a random pattern."""
    T = rng.random((k, k)) * (rng.random((k, k)) < density)
    T[np.arange(k), (np.arange(k) + 1) % k] += 0.5       # a cycle: one strongly connected block
    T /= T.sum(axis=1, keepdims=True)
    return T * (1.0 - leak)


def test_full_pattern_is_the_exact_lu_and_one_step_solves():
    """With every entry present ILU(0) is the LU factorisation: M = L U to rounding, and the
    preconditioned GMRES solves in one step."""
    rng = np.random.default_rng(3)
    T = _substochastic(rng, 6, 1.0, 0.2)
    M = np.eye(6) - T
    x, its, lu = _solve([M], 0, rng.random(6))
    L = np.eye(6) + np.tril(lu.reshape(6, 6), -1)
    U = np.triu(lu.reshape(6, 6))
    np.testing.assert_allclose(L @ U, M, rtol=0, atol=1e-15)
    assert its == 1


def test_zero_right_hand_side_is_zero_without_a_step():
    M = np.eye(3) - _substochastic(np.random.default_rng(0), 3, 0.5, 0.1)
    x, its, _ = _solve([M], 0, np.zeros(3))
    assert its == 0 and not x.any()


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(2, 60), density=st.floats(0.02, 0.5),
       leak=st.floats(1e-3, 0.5), which=st.integers(0, 1))
def test_block_gmres_solves_pi_m_equals_acc(seed, k, density, leak, which):
    """pi M = acc (x = M^{-T} acc) to 1e-11 relative against a dense solve, for the block
    ``which`` of two stored side by side (the offsets of a second block are right)."""
    rng = np.random.default_rng(seed)
    mats = [np.eye(k) - _substochastic(rng, k, density, leak), np.eye(k + 3) - _substochastic(rng, k + 3, density, leak)]
    M = mats[which]
    acc = rng.random(M.shape[0]) * (rng.random(M.shape[0]) < 0.5)
    x, its, _ = _solve(mats, which, acc)
    ref = np.linalg.solve(M.T, acc)
    assert its >= 0
    np.testing.assert_allclose(x, ref, rtol=0, atol=1e-11 * max(np.abs(ref).max(), 1e-300))


def test_a_pivot_that_is_not_positive_is_reported():
    """ILU(0) of a matrix that is not an M-matrix (a zero pivot) names the block instead of
    dividing by it."""
    good = np.eye(2) - 0.25
    bad = np.array([[1.0, 2.0], [0.5, 1.0]])     # 1 - 0.5 * 2 = 0
    ro, rp, idx, val, dg = _csr_blocks([good, bad])
    assert ilu0_blocks(ro, rp, idx, val, dg)[1].tolist() == [False, True]


def test_no_convergence_is_minus_one_not_a_number():
    rng = np.random.default_rng(5)
    M = np.eye(40) - _substochastic(rng, 40, 0.1, 1e-3)
    x, its, _ = _solve([M], 0, rng.random(40), restart=1, rtol=1e-30, max_restarts=0)
    assert its == -1


@pytest.fixture(scope="module")
def small_instcap():
    return _small_chains.small_instcap()


def _bounds(sc, method: str = "structured (matrix-free)") -> np.ndarray:
    _skeleton._CACHE.clear()
    r = analyze(sc)
    assert r.method == method
    return np.array([r.prediction, r.conservative, r.optimistic, r.loss_probability, r.mean_queue])


def test_every_block_iterative_agrees_with_the_dense_inverses(small_instcap, monkeypatch):
    """Every SCC of >= 2 states by ILU(0)-GMRES against every block inverted dense: 1e-12."""
    monkeypatch.setattr(solvers, "SPARSE_BLOCK_FROM", 10**9)
    dense = _bounds(small_instcap)
    monkeypatch.setattr(solvers, "SPARSE_BLOCK_FROM", 2)
    monkeypatch.setattr(solvers, "ITERATIVE_FROM", 2)
    iterative = _bounds(small_instcap)
    np.testing.assert_allclose(iterative, dense, rtol=1e-12, atol=0.0)


def test_blocks_whose_gmres_fails_a_first_solve_take_superlu(small_instcap, monkeypatch):
    """One step and no restart cannot reach the tolerance: every block fails the first solve on
    ones and is factored by SuperLU instead; the numbers are SuperLU's bit for bit."""
    monkeypatch.setattr(solvers, "SPARSE_BLOCK_FROM", 2)
    monkeypatch.setattr(solvers, "ITERATIVE_FROM", 10**9)
    lu = _bounds(small_instcap)
    monkeypatch.setattr(solvers, "ITERATIVE_FROM", 2)
    monkeypatch.setattr(solvers, "BLOCK_GMRES_RESTART", 1)
    monkeypatch.setattr(solvers, "BLOCK_GMRES_MAX_RESTARTS", 0)
    n = int((np.diff(solvers._structure(_skeleton.skeleton_for(small_instcap)).ptr) >= 2).sum())
    fallback = _bounds(small_instcap, f"structured [{n} SCC blocks by SuperLU] (matrix-free)")
    np.testing.assert_array_equal(fallback, lu)


def test_a_bad_ilu_pivot_takes_superlu(small_instcap, monkeypatch):
    """A block whose ILU(0) reports a pivot that is not positive is never iterated on: every
    block reported so is factored by SuperLU, and the numbers are SuperLU's bit for bit."""
    from tcpabr_model.markov import blocks

    monkeypatch.setattr(solvers, "SPARSE_BLOCK_FROM", 2)
    monkeypatch.setattr(solvers, "ITERATIVE_FROM", 10**9)
    lu = _bounds(small_instcap)
    real = blocks.ilu0_blocks
    monkeypatch.setattr(blocks, "ilu0_blocks", lambda *a: (real(*a)[0], np.ones_like(real(*a)[1])))
    monkeypatch.setattr(solvers, "ITERATIVE_FROM", 2)
    n = int((np.diff(solvers._structure(_skeleton.skeleton_for(small_instcap)).ptr) >= 2).sum())
    np.testing.assert_array_equal(_bounds(small_instcap, f"structured [{n} SCC blocks by SuperLU] (matrix-free)"), lu)


def test_gmres_failing_in_a_product_takes_superlu_for_that_block(small_instcap, monkeypatch):
    """A block that passed the first solve but fails in a product: that block is factored by
    SuperLU and the product done again; the method says so, and the result agrees with the
    dense inverses."""
    monkeypatch.setattr(solvers, "SPARSE_BLOCK_FROM", 10**9)
    dense = _bounds(small_instcap)
    monkeypatch.setattr(solvers, "SPARSE_BLOCK_FROM", 2)
    monkeypatch.setattr(solvers, "ITERATIVE_FROM", 2)
    real = solvers.forward_pi_prepared
    calls = [0]

    def fail_once(*a):
        calls[0] += 1
        pi, its = real(*a)
        return (pi, -1) if calls[0] == 3 else (pi, its)    # block 0 fails in the third product

    monkeypatch.setattr(solvers, "forward_pi_prepared", fail_once)
    again = _bounds(small_instcap, "structured [1 SCC block by SuperLU] (matrix-free)")
    np.testing.assert_allclose(again, dense, rtol=1e-12, atol=0.0)


def test_default_solve_does_not_warn(small_instcap):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        _bounds(small_instcap)


def test_inexact_products_agree_with_exact_ones(small_instcap, monkeypatch):
    """docs/model.md sec. 5a item 13: the blocks' GMRES loosened as the loss-event GMRES
    converges (RELAX_FACTOR) gives the exact products' numbers to 1e-12; the loosening is
    used (some product's tolerance above BLOCK_GMRES_RTOL, none above RELAX_MAX), and the
    product that gives pi is exact."""
    monkeypatch.setattr(solvers, "SPARSE_BLOCK_FROM", 2)
    monkeypatch.setattr(solvers, "ITERATIVE_FROM", 2)
    monkeypatch.setattr(solvers, "RELAX_FACTOR", None)
    exact = _bounds(small_instcap)
    used = []
    real = solvers._PreparedForward.set_rtol

    def record(self, rtol):
        used.append(rtol)
        real(self, rtol)

    monkeypatch.setattr(solvers._PreparedForward, "set_rtol", record)
    monkeypatch.setattr(solvers, "RELAX_FACTOR", 0.1)
    relaxed = _bounds(small_instcap)
    np.testing.assert_allclose(relaxed, exact, rtol=1e-12, atol=0.0)
    assert used[0] == solvers.BLOCK_GMRES_RTOL and used[-1] == solvers.BLOCK_GMRES_RTOL
    assert max(used) > 10 * solvers.BLOCK_GMRES_RTOL
    assert max(used) <= solvers.RELAX_MAX


def test_pi_is_the_last_exact_product_when_gmres_ends_on_it(small_instcap, monkeypatch):
    """GMRES's true residual is a product at its final x; pi is taken from it instead of one
    more product (item 13): the products counted equal the substitutions made, and the
    numbers are those of a product made anew at that x (the relaxation off, so that every
    product is exact)."""
    monkeypatch.setattr(solvers, "RELAX_FACTOR", None)
    calls = [0]
    real = solvers.forward_pi_prepared

    def count(*a):
        calls[0] += 1
        return real(*a)

    monkeypatch.setattr(solvers, "forward_pi_prepared", count)
    matvecs = [0]
    real_gmres = solvers.spla.gmres

    def gmres(A, *a, **k):
        def mv(x):
            matvecs[0] += 1
            return A.matvec(x)
        return real_gmres(solvers.spla.LinearOperator(A.shape, matvec=mv, dtype=float), *a, **k)

    monkeypatch.setattr(solvers.spla, "gmres", gmres)
    _skeleton._CACHE.clear()
    # the chain with every state (docs/model.md sec. 10: the one built without the pattern of P's zeros),
    # on which GMRES ends on a true-residual product; on the smaller chain it ends elsewhere and pi is
    # one product more (the other branch)
    sk = _skeleton._build(small_instcap.structure_key()[:12] + (None,), 10**6)
    sol, _ = solvers.structured_matrix_free(sk, small_instcap.rate_matrix)
    assert sol.iterations == calls[0] == matvecs[0] > 2
    s = solvers._structure(sk)
    lam = s.event_mass(sol.pi)[s.active]
    again = solvers._PreparedForward(s, (sk.states, sk.nl_ptr, sk.nl_prob, sk.nl_t, small_instcap.rate_matrix))
    full = np.zeros(s.n_events)
    full[s.active] = lam
    pi2 = again(solvers.entry_vector(full, sk.reg, s.mmax, sk.n_states, sk.constant_s, small_instcap.rate_matrix,
                                     s.n_codes, np.zeros((0, 0))))
    np.testing.assert_allclose(pi2 / pi2.sum(), sol.pi, rtol=1e-10, atol=1e-15)


@pytest.mark.parametrize("blocks", ["dense", "superlu", "gmres"])
def test_states_renumbered_in_the_scc_order_give_the_same_bits(small_instcap, monkeypatch, blocks):
    """``blocks.renumbered`` (chains up to ``RENUMBER_MAX_STATES``): the substitution on T's rows
    numbered in the SCC order makes the same operations in the same order, so pi and every
    result are the skeleton's own order's bit for bit, whichever way the blocks are solved."""
    if blocks == "superlu":
        monkeypatch.setattr(solvers, "SPARSE_BLOCK_FROM", 2)
    elif blocks == "gmres":
        monkeypatch.setattr(solvers, "SPARSE_BLOCK_FROM", 2)
        monkeypatch.setattr(solvers, "ITERATIVE_FROM", 2)
    out = {}
    for limit in (0, 10**9):
        monkeypatch.setattr(solvers, "RENUMBER_MAX_STATES", limit)
        _skeleton._CACHE.clear()
        sk = _skeleton.skeleton_for(small_instcap)
        sol, _ = solvers.structured_matrix_free(sk, small_instcap.rate_matrix)
        assert (solvers._structure(sk)._renumbered is not None) == (limit > 0)
        out[limit] = (sol.pi, _bounds(small_instcap))
    assert np.array_equal(out[0][0], out[10**9][0])
    assert np.array_equal(out[0][1], out[10**9][1])
    s = solvers._structure(sk)
    r, (st, nl_ptr, nl_prob, (tail, tab)) = s._renumbered
    # state order[i] is state i: its level, its entries and its targets, renumbered
    x = s.order
    assert np.array_equal(st, sk.states[x]) and np.array_equal(np.diff(nl_ptr), np.diff(sk.nl_ptr)[x])
    i = len(x) // 2
    e0, e1 = sk.nl_ptr[x[i]], sk.nl_ptr[x[i] + 1]
    assert np.array_equal(nl_prob[nl_ptr[i]:nl_ptr[i + 1]], sk.nl_prob[e0:e1])
    assert np.array_equal(x[tab[tail[nl_ptr[i]:nl_ptr[i + 1]]]], sk.nl_t[1][sk.nl_t[0][e0:e1]])
