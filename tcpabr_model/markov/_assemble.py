"""Rate-chain-dependent assembly of the embedded transition matrix (numba kernels).

P = T + L, where T holds the loss-free transitions (eq. 10 and the derived B, D
recursions, window never decreasing) and L the loss transitions to the regeneration
states (0, 0, m, i2, j2) of eq. 13.  Both are returned as CSR arrays.  The rate chain
enters only here, as its K x K transition matrix per round trip ``Q`` (K = 2 and
``Q = [[1 - p01, p01], [p10, 1 - p10]]`` for the paper's chain; docs/model.md,
"K capacity states").
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._interval import ceil_log2


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


@njit(cache=True, inline="always")
def _csr_buffers(n, nnz):
    """``indptr`` (n + 1, with ``indptr[0] = 0``), ``indices`` and ``data`` (room for ``nnz``)."""
    indptr = np.empty(n + 1, dtype=np.int64)
    indptr[0] = 0
    return indptr, np.empty(nnz, dtype=np.int64), np.empty(nnz, dtype=np.float64)


@njit(cache=True)
def assemble_T(st, nl_ptr, nl_prob, nl_t, Q):
    """Loss-free part T in CSR: each (x, N) entry splits over the next bottleneck level."""
    n = st.shape[0]
    nlev = Q.shape[0]
    indptr, indices, data = _csr_buffers(n, nlev * nl_prob.shape[0])
    k = 0
    for i in range(n):
        ri = st[i, 3]
        for e in range(nl_ptr[i], nl_ptr[i + 1]):
            for rj in range(nlev):
                pr = Q[ri, rj]
                if pr > 0.0:
                    indices[k] = nl_t[e, rj]
                    data[k] = nl_prob[e] * pr
                    k += 1
        indptr[i + 1] = k
    return indptr, indices[:k], data[:k]


@njit(cache=True)
def assemble_L(st, ls_ptr, ls_m, ls_prob, reg, constant_s, Q):
    """Loss part L in CSR (eq. 13): mass p(x) alpha(x; 2m) Q^(3 + ceil(log2 m))."""
    n = st.shape[0]
    nlev = Q.shape[0]
    mmax = reg.shape[0] - 1
    kmax = 3 + ceil_log2(max(mmax, 1)) + 1
    Pk = rate_powers(Q, kmax)
    indptr, indices, data = _csr_buffers(n, nlev * nlev * ls_prob.shape[0])
    k = 0
    for i in range(n):
        ri = st[i, 3]
        for e in range(ls_ptr[i], ls_ptr[i + 1]):
            m = ls_m[e]
            u = 3 + ceil_log2(m)
            q = ls_prob[e]
            if constant_s:
                for i2 in range(nlev):
                    pr = Pk[u, ri, i2]
                    if pr > 0.0:
                        indices[k] = reg[m, i2, 0]
                        data[k] = q * pr
                        k += 1
            else:
                # Q^u(i1, j1; i2, j2) = P^(u-1)(i1, j2) P(j2, i2): S_{k+u} = R_{k+u-1}
                for j2 in range(nlev):
                    for i2 in range(nlev):
                        pr = Pk[u - 1, ri, j2] * Pk[1, j2, i2]
                        if pr > 0.0:
                            indices[k] = reg[m, i2, j2]
                            data[k] = q * pr
                            k += 1
        indptr[i + 1] = k
    return indptr, indices[:k], data[:k]
