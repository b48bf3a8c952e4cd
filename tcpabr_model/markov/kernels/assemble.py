"""Rate-chain-dependent assembly of the embedded transition matrix (numba kernels).

P = T + L, where T holds the loss-free transitions (eq. 10 and the derived B, D
recursions, window never decreasing) and L the loss transitions to the regeneration
states (0, 0, m, i2, j2) of eq. 13.  The rows of T and L are generated from the
skeleton's arrays (:func:`t_row`, :func:`l_row`): :func:`assemble_csr` stores T, L or
P = T + L once, in canonical CSR with int32 indices where the size allows (12 bytes per
nonzero), and the structured solver reads T row by row without storing it
(docs/model.md sec. 8).  The rate chain enters only here, as its K x K transition matrix
per round trip ``Q`` (K = 2 and ``Q = [[1 - p01, p01], [p10, 1 - p10]]`` for the paper's
chain; docs/model.md, "K capacity states").
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit

from .interval import ceil_log2
from .recovery import code_m, code_u


@njit(cache=True)
def rate_powers(Q, kmax):
    """Q^k for k = 0..kmax of the embedded K-level rate chain (level 0 = X_0's level)."""
    nlev = Q.shape[0]
    out = np.zeros((kmax + 1, nlev, nlev))
    for i in range(nlev):
        out[0, i, i] = 1.0
    for k in range(1, kmax + 1):
        for i in range(nlev):
            for j in range(nlev):
                acc = 0.0
                for m in range(nlev):
                    acc += out[k - 1, i, m] * Q[m, j]
                out[k, i, j] = acc
    return out


@njit(cache=True)
def rate_law_powers(Q, mmax):
    """``rate_powers`` up to the longest loss cycle, 3 + ceil(log2 mmax) + 1 steps (eq. 13)."""
    return rate_powers(Q, 3 + ceil_log2(max(mmax, 1)) + 1)


@njit(cache=True)
def from_first_serving(Pk, F):
    """``Pk`` with ``Pk[u] = F Pk[u]`` for ``u >= 2`` (docs/model.md sec. 15c: a timeout cycle that waits
    out an outage regenerates ``u`` steps from the first level that serves, law ``F``); ``Pk[0]``,
    ``Pk[1]`` (the last step ``P(j2, i2)`` of eq. 13) as they are.  ``F`` of shape (0, 0): ``Pk``
    itself."""
    if F.shape[0] == 0:
        return Pk
    out = Pk.copy()
    k = Pk.shape[1]
    for u in range(2, Pk.shape[0]):
        for i in range(k):
            for j in range(k):
                acc = 0.0
                for m in range(k):
                    acc += F[i, m] * Pk[u, m, j]
                out[u, i, j] = acc
    return out


@njit(cache=True, inline="always")
def t_row(i, st, nl_ptr, nl_prob, nl_t, Q, cols, vals, k):
    """The loss-free entries of row ``i`` of T, written to ``cols[k:]``, ``vals[k:]``; returns
    the new end.  Each (x, N) entry of the skeleton splits over the next bottleneck level
    ``rj`` with ``Q[ri, rj] > 0``; the order (entries, then levels) is T's stored order, so
    every kernel that reads T through this function sees the same numbers in the same order.
    ``nl_t`` is the skeleton's pair ``(nl_tail, tail_tab)``: entry ``e`` goes to state
    ``tail_tab[nl_tail[e], rj]`` at next level ``rj``."""
    ri = st[i, 3]
    tail, tab = nl_t       # (tail of each entry, state of each (tail, next level)): sec. 5a item 10
    for e in range(nl_ptr[i], nl_ptr[i + 1]):
        te = tail[e]
        for rj in range(Q.shape[0]):
            pr = Q[ri, rj]
            if pr > 0.0:
                cols[k] = tab[te, rj]
                vals[k] = nl_prob[e] * pr
                k += 1
    return k


@njit(cache=True, inline="always")
def l_row(i, st, ls_ptr, ls_m, ls_prob, reg, constant_s, Pk, cols, vals, k):
    """The loss entries of row ``i`` of L (eq. 13: mass p(x) alpha(x; 2m) Q^U with U = 3 + ceil(log2 m)
    after a timeout, 2 or 3 after a fast recovery (docs/model.md sec. 12)),
    ``Pk`` from :func:`rate_law_powers`), written to ``cols[k:]``, ``vals[k:]``; returns the
    new end."""
    nlev = Pk.shape[1]
    mmax = reg.shape[0] - 1
    ri = st[i, 3]
    for e in range(ls_ptr[i], ls_ptr[i + 1]):
        m = code_m(ls_m[e], mmax)   # the loss-event code's window and cycle length (sec. 12);
        u = code_u(ls_m[e], mmax)   # for a timeout-only TCP the code is m, u = 3 + ceil(log2 m)
        q = ls_prob[e]
        if constant_s:
            for i2 in range(nlev):
                pr = Pk[u, ri, i2]
                if pr > 0.0:
                    cols[k] = reg[m, i2, 0]
                    vals[k] = q * pr
                    k += 1
        else:
            # Q^u(i1, j1; i2, j2) = P^(u-1)(i1, j2) P(j2, i2): S_{k+u} = R_{k+u-1}
            for j2 in range(nlev):
                for i2 in range(nlev):
                    pr = Pk[u - 1, ri, j2] * Pk[1, j2, i2]
                    if pr > 0.0:
                        cols[k] = reg[m, i2, j2]
                        vals[k] = q * pr
                        k += 1
    return k


@njit(cache=True)
def t_row_buffers(nl_ptr, nlev):
    """Scratch (columns, values) long enough for any row of T (:func:`t_row`)."""
    longest = 0
    for i in range(nl_ptr.shape[0] - 1):
        longest = max(longest, nl_ptr[i + 1] - nl_ptr[i])
    return np.empty(nlev * longest, dtype=np.int64), np.empty(nlev * longest, dtype=np.float64)


@njit(cache=True, inline="always")
def _merged_row(i, st, nl_ptr, nl_prob, nl_t, ls_ptr, ls_m, ls_prob, reg, constant_s, Q, Pk, with_t, with_l,
                rc, rv, perm, cols, vals):
    """Row ``i`` of T (``with_t``) plus L (``with_l``) with sorted columns and duplicates
    summed, in ``cols[:k]``, ``vals[:k]``; returns k.  The row's entries are sorted stably
    by column, so a column's value is (its T entries summed in stored order) + (its L
    entries likewise), and exact zeros are not kept: the numbers of scipy's
    ``(T + L).tocsr()`` with ``sum_duplicates()``, bit for bit."""
    k = t_row(i, st, nl_ptr, nl_prob, nl_t, Q, rc, rv, 0) if with_t else 0
    kt = k
    if with_l:
        k = l_row(i, st, ls_ptr, ls_m, ls_prob, reg, constant_s, Pk, rc, rv, k)
    if k <= 64:  # stable insertion sort of the positions (rows of two levels have about 40)
        for a in range(k):
            c = rc[a]
            b = a - 1
            while b >= 0 and rc[perm[b]] > c:
                perm[b + 1] = perm[b]
                b -= 1
            perm[b + 1] = a
    else:
        perm[:k] = np.argsort(rc[:k], kind="mergesort")
    out = 0
    a = 0
    while a < k:
        j = rc[perm[a]]
        t_sum = 0.0
        l_sum = 0.0
        while a < k and rc[perm[a]] == j:
            e = perm[a]
            if e < kt:
                t_sum += rv[e]
            else:
                l_sum += rv[e]
            a += 1
        v = t_sum + l_sum
        if v != 0.0:
            cols[out] = j
            vals[out] = v
            out += 1
    return out


@njit(cache=True)
def _merged_csr(st, nl_ptr, nl_prob, nl_t, ls_ptr, ls_m, ls_prob, reg, constant_s, Q, with_t, with_l,
                indptr, indices, data, F):
    """Fill the CSR arrays of :func:`assemble_csr` row by row (``indices`` and ``data`` at
    least as long as the unmerged entries); returns the number of nonzeros written."""
    n = st.shape[0]
    nlev = Q.shape[0]
    Pk = from_first_serving(rate_law_powers(Q, reg.shape[0] - 1), F)
    longest = 0
    for i in range(n):
        longest = max(longest, nlev * (nl_ptr[i + 1] - nl_ptr[i]) + nlev * nlev * (ls_ptr[i + 1] - ls_ptr[i]))
    rc = np.empty(longest, dtype=np.int64)
    rv = np.empty(longest, dtype=np.float64)
    perm = np.empty(longest, dtype=np.int64)
    cols = np.empty(longest, dtype=np.int64)
    vals = np.empty(longest, dtype=np.float64)
    indptr[0] = 0
    o = 0
    for i in range(n):
        k = _merged_row(i, st, nl_ptr, nl_prob, nl_t, ls_ptr, ls_m, ls_prob, reg, constant_s, Q, Pk, with_t,
                        with_l, rc, rv, perm, cols, vals)
        for a in range(k):
            indices[o + a] = cols[a]
            data[o + a] = vals[a]
        o += k
        indptr[i + 1] = o
    return o


def index_dtype(n: int, nnz: int):
    """int32 for CSR indices and pointers where the states and nonzeros allow it (< 2^31),
    else int64 (scipy's own rule): 12 bytes per stored nonzero instead of 16."""
    return np.int32 if max(n, nnz) < 2**31 else np.int64


def assemble_csr(st, nl_ptr, nl_prob, nl_t, ls_ptr, ls_m, ls_prob, reg, constant_s, Q, with_t=True,
                 with_l=True, F=None) -> sp.csr_matrix:
    """T (``with_t``), L (``with_l``) or P = T + L (both, the default) as a scipy CSR matrix
    in canonical form (sorted columns, duplicates summed), stored once.

    One pass over the rows into arrays sized for the unmerged entries (K per loss-free
    entry, K^2 per loss entry; K with a constant source), shrunk in place where rows had
    duplicates (pages never written are never resident): no copies of T and L and no
    second copy of P, with int32 indices where :func:`index_dtype` allows (12 bytes per
    nonzero); the scratch is one row.  ``F``: the regeneration from the first serving level of
    :func:`from_first_serving`, a C-contiguous float array (None or (0, 0): eq. 13 as it is).
    """
    n = st.shape[0]
    nlev = Q.shape[0]
    bound = (nlev * nl_prob.shape[0] if with_t else 0) + \
        ((nlev if constant_s else nlev * nlev) * ls_prob.shape[0] if with_l else 0)
    idx = index_dtype(n, bound)
    indptr = np.empty(n + 1, dtype=idx)
    indices = np.empty(bound, dtype=idx)
    data = np.empty(bound, dtype=np.float64)
    nnz = _merged_csr(st, nl_ptr, nl_prob, nl_t, ls_ptr, ls_m, ls_prob, reg, constant_s, Q, with_t, with_l,
                      indptr, indices, data, np.zeros((0, 0)) if F is None else F)
    if nnz < bound:  # realloc in place: no copy of the written part
        indices.resize(nnz, refcheck=False)
        data.resize(nnz, refcheck=False)
    M = sp.csr_matrix((data, indices, indptr), shape=(n, n))
    M.has_canonical_format = True  # the kernel sorted and merged every row: spares scipy a check
    return M
