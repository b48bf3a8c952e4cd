"""psi-dependent assembly of the embedded transition matrix (numba kernels).

P = T + L, where T holds the loss-free transitions (eq. 10 and the derived B, D
recursions, window never decreasing) and L the loss transitions to the regeneration
states (0, 0, m, i2, j2) of eq. 13.  Both are returned as CSR arrays.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._interval import ceil_log2


@njit(cache=True)
def rate_powers(p01, p10, kmax):
    """P^k for k = 0..kmax of the embedded two-state rate chain (state 0 = high)."""
    out = np.zeros((kmax + 1, 2, 2))
    out[0, 0, 0] = 1.0
    out[0, 1, 1] = 1.0
    P = np.array([[1.0 - p01, p01], [p10, 1.0 - p10]])
    for k in range(1, kmax + 1):
        for i in range(2):
            for j in range(2):
                out[k, i, j] = out[k - 1, i, 0] * P[0, j] + out[k - 1, i, 1] * P[1, j]
    return out


@njit(cache=True)
def assemble_T(st, nl_ptr, nl_prob, nl_t, p01, p10):
    """Loss-free part T in CSR: each (x, N) entry splits over the next bottleneck rate."""
    n = st.shape[0]
    P = np.array([[1.0 - p01, p01], [p10, 1.0 - p10]])
    indptr = np.empty(n + 1, dtype=np.int64)
    nnz = 2 * nl_prob.shape[0]
    indices = np.empty(nnz, dtype=np.int64)
    data = np.empty(nnz, dtype=np.float64)
    k = 0
    indptr[0] = 0
    for i in range(n):
        ri = st[i, 3]
        for e in range(nl_ptr[i], nl_ptr[i + 1]):
            for rj in range(2):
                pr = P[ri, rj]
                if pr > 0.0:
                    indices[k] = nl_t[e, rj]
                    data[k] = nl_prob[e] * pr
                    k += 1
        indptr[i + 1] = k
    return indptr, indices[:k], data[:k]


@njit(cache=True)
def assemble_L(st, ls_ptr, ls_m, ls_prob, reg, constant_s, p01, p10):
    """Loss part L in CSR (eq. 13): mass p(x) alpha(x; 2m) Q^(3 + ceil(log2 m))."""
    n = st.shape[0]
    mmax = reg.shape[0] - 1
    kmax = 3 + ceil_log2(max(mmax, 1)) + 1
    Pk = rate_powers(p01, p10, kmax)
    indptr = np.empty(n + 1, dtype=np.int64)
    nnz = 4 * ls_prob.shape[0]
    indices = np.empty(nnz, dtype=np.int64)
    data = np.empty(nnz, dtype=np.float64)
    k = 0
    indptr[0] = 0
    for i in range(n):
        ri = st[i, 3]
        for e in range(ls_ptr[i], ls_ptr[i + 1]):
            m = ls_m[e]
            u = 3 + ceil_log2(m)
            q = ls_prob[e]
            if constant_s:
                for i2 in range(2):
                    pr = Pk[u, ri, i2]
                    if pr > 0.0:
                        indices[k] = reg[m, i2, 0]
                        data[k] = q * pr
                        k += 1
            else:
                # Q^u(i1, j1; i2, j2) = P^(u-1)(i1, j2) P(j2, i2): S_{k+u} = R_{k+u-1}
                for j2 in range(2):
                    for i2 in range(2):
                        pr = Pk[u - 1, ri, j2] * Pk[1, j2, i2]
                        if pr > 0.0:
                            indices[k] = reg[m, i2, j2]
                            data[k] = q * pr
                            k += 1
        indptr[i + 1] = k
    return indptr, indices[:k], data[:k]
