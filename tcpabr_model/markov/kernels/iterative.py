"""Numba kernels of the iterative block solve of the structured solver (docs/model.md sec. 8,
"Large blocks"): an SCC block ``C`` of the loss-free part, ``pi_C (I - T_CC) = acc_C``, solved
by GMRES preconditioned with the incomplete LU factorisation ILU(0) of ``M = I - T_CC``,
instead of stored sparse LU factors, whose fill grows with the block (120 entries per row at
4,391 states, 350 at 17,044) while ILU(0) keeps M's own pattern.

Storage, per block ``b`` of ``k`` states (``rp``: ``k + 1`` absolute row pointers at
``ro[b] + b``; ``idx``: int32 local column; ``val``: M; ``lu``: ILU(0) of M, L strictly
below the diagonal with unit diagonal, U from it; ``dg``: the absolute position of row
``i``'s diagonal at ``ro[b] + i``).  Rows are the block's states in the SCC's order (``pos``),
columns sorted, duplicates summed.

M is a nonsingular M-matrix (rows of a substochastic T_CC from which the block is left,
Tarjan's SCC being transient here), so ILU(0) exists with positive pivots (Meijerink and van
der Vorst 1977) and needs no pivoting; a pivot that is not positive and finite is reported,
never used.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .assemble import t_row, t_row_buffers


@njit(cache=True)
def block_rows(order, ptr, st, nl_ptr, nl_prob, nl_t, Q, comp, pos, blocks):
    """CSR of ``M = I - T_CC`` for the SCCs ``blocks`` (see the module's storage): returns
    ``(ro, rp, idx, val, dg)``.  Two passes over T's rows (count, then fill), so nothing
    of the size of the entries is stored twice."""
    nb = blocks.shape[0]
    rc, rv = t_row_buffers(nl_ptr, Q.shape[0])
    ro = np.zeros(nb + 1, dtype=np.int64)
    for b in range(nb):
        c = blocks[b]
        ro[b + 1] = ro[b] + ptr[c + 1] - ptr[c]
    rp = np.zeros(ro[nb] + nb, dtype=np.int64)
    kmax = 1
    for b in range(nb):
        kmax = max(kmax, ro[b + 1] - ro[b])
    mark = np.full(kmax, -1, dtype=np.int64)
    where = np.zeros(kmax, dtype=np.int64)
    # pass 1: distinct columns per row (the diagonal always)
    tot = 0
    for b in range(nb):
        c = blocks[b]
        lo = ptr[c]
        k = ptr[c + 1] - lo
        base = ro[b] + b
        rp[base] = tot
        for a in range(k):
            mark[a] = a
            cnt = 1
            for e in range(t_row(order[lo + a], st, nl_ptr, nl_prob, nl_t, Q, rc, rv, 0)):
                y = rc[e]
                if comp[y] == c and mark[pos[y]] != a:
                    mark[pos[y]] = a
                    cnt += 1
            tot += cnt
            rp[base + a + 1] = tot
        for a in range(k):
            mark[a] = -1
    idx = np.empty(tot, dtype=np.int32)
    val = np.empty(tot)
    dg = np.empty(ro[nb], dtype=np.int64)
    # pass 2: fill, the diagonal 1 first, then -T[x_a, y] summed per column; sort the row
    for b in range(nb):
        c = blocks[b]
        lo = ptr[c]
        k = ptr[c + 1] - lo
        base = ro[b] + b
        for a in range(k):
            p0 = rp[base + a]
            q = p0
            idx[q] = a
            val[q] = 1.0
            mark[a] = a
            where[a] = q
            q += 1
            for e in range(t_row(order[lo + a], st, nl_ptr, nl_prob, nl_t, Q, rc, rv, 0)):
                y = rc[e]
                if comp[y] == c:
                    j = pos[y]
                    if mark[j] != a:
                        mark[j] = a
                        where[j] = q
                        idx[q] = j
                        val[q] = 0.0
                        q += 1
                    val[where[j]] -= rv[e]
            # insertion sort of the row by column (rows hold tens of entries)
            for p in range(p0 + 1, q):
                ci = idx[p]
                vi = val[p]
                r = p - 1
                while r >= p0 and idx[r] > ci:
                    idx[r + 1] = idx[r]
                    val[r + 1] = val[r]
                    r -= 1
                idx[r + 1] = ci
                val[r + 1] = vi
            for p in range(p0, q):
                if idx[p] == a:
                    dg[ro[b] + a] = p
        for a in range(k):
            mark[a] = -1
    return ro, rp, idx, val, dg


@njit(cache=True)
def ilu0_blocks(ro, rp, idx, val, dg):
    """ILU(0) of every block's M in its own pattern (IKJ order, rows of sorted columns):
    returns ``(lu, bad)`` with ``bad[b]`` true for a block whose pivot is not positive and
    finite (its factorisation stops there)."""
    nb = ro.shape[0] - 1
    lu = val.copy()
    kmax = 1
    for b in range(nb):
        kmax = max(kmax, ro[b + 1] - ro[b])
    iw = np.full(kmax, -1, dtype=np.int64)
    bad = np.zeros(nb, dtype=np.bool_)
    for b in range(nb):
        k = ro[b + 1] - ro[b]
        base = ro[b] + b
        d0 = ro[b]
        for i in range(k):
            s0 = rp[base + i]
            s1 = rp[base + i + 1]
            for p in range(s0, s1):
                iw[idx[p]] = p
            for p in range(s0, dg[d0 + i]):
                kk = idx[p]
                f = lu[p] / lu[dg[d0 + kk]]
                lu[p] = f
                for q in range(dg[d0 + kk] + 1, rp[base + kk + 1]):
                    w = iw[idx[q]]
                    if w >= 0:
                        lu[w] -= f * lu[q]
            for p in range(s0, s1):
                iw[idx[p]] = -1
            piv = lu[dg[d0 + i]]
            if not (piv > 0.0 and piv < np.inf):
                bad[b] = True
                break
    return lu, bad


@njit(cache=True)
def failing_blocks(ro, rp, idx, val, lu, dg, bad, V, H, cs, sn, g, w, t, r, xs, rtol, max_restarts):
    """``bad`` with every block added whose :func:`block_gmres` does not converge on the
    right-hand side of ones (a block that fails there would fail in the solve's products)."""
    out = bad.copy()
    for b in range(ro.shape[0] - 1):
        if not out[b]:
            k = ro[b + 1] - ro[b]
            if block_gmres(b, k, np.ones(k), xs, ro, rp, idx, val, lu, dg, V, H, cs, sn, g, w, t, r, rtol, max_restarts) < 0:
                out[b] = True
    return out


@njit(cache=True, inline="always")
def _precondition(v, out, k, base, d0, rp, idx, lu, dg):
    """out = (L U)^{-T} v, i.e. the solve of (L U)^T out = v: U^T first (forward, row i of U is
    column i of U^T), then L^T (backward, unit diagonal)."""
    for i in range(k):
        out[i] = v[i]
    for i in range(k):
        wi = out[i] / lu[dg[d0 + i]]
        out[i] = wi
        if wi != 0.0:
            for p in range(dg[d0 + i] + 1, rp[base + i + 1]):
                out[idx[p]] -= lu[p] * wi
    for i in range(k - 1, -1, -1):
        zi = out[i]
        if zi != 0.0:
            for p in range(rp[base + i], dg[d0 + i]):
                out[idx[p]] -= lu[p] * zi


@njit(cache=True, inline="always")
def _apply_mt(v, out, k, base, rp, idx, val):
    """out = M^T v (scatter over M's rows)."""
    for i in range(k):
        out[i] = 0.0
    for i in range(k):
        vi = v[i]
        if vi != 0.0:
            for p in range(rp[base + i], rp[base + i + 1]):
                out[idx[p]] += val[p] * vi


def gmres_workspace(kmax: int, restart: int):
    """Scratch of :func:`block_gmres` for blocks of up to ``kmax`` states."""
    m = restart
    return (np.empty((m + 1, kmax)), np.zeros((m + 1, m)), np.empty(m), np.empty(m), np.empty(m + 1),
            np.empty(kmax), np.empty(kmax), np.empty(kmax), np.empty(kmax))


@njit(cache=True, inline="always")
def _triangular_norm(H, g, y, jn):
    """||y|| for y = H[:jn, :jn]^{-1} g[:jn] (upper triangular), in ``y``."""
    s2 = 0.0
    for i in range(jn - 1, -1, -1):
        s = g[i]
        for q in range(i + 1, jn):
            s -= H[i, q] * y[q]
        y[i] = s / H[i, i]
        s2 += y[i] * y[i]
    return np.sqrt(s2)


@njit(cache=True)
def block_gmres(b, k, rhs, x, ro, rp, idx, val, lu, dg, V, H, cs, sn, g, w, t, r, rtol, max_restarts):
    """x = M^{-T} rhs for block ``b`` (length ``k``): GMRES(m) with right preconditioning by
    ILU(0) (the residual it watches is the system's own), restarted from the true residual
    until the normwise backward error is at most ``rtol``: ``||rhs - M^T x||_2 <= rtol (||rhs||_2
    + nM ||x||_2)`` with ``nM = (||M||_1 ||M||_inf)^(1/2) >= ||M||_2``.  That is what a
    backward-stable direct solve guarantees; a residual relative to ``||rhs||`` alone has a
    rounding floor of about ``eps ||M|| ||M^{-1}||``, above 1e-14 for a block that is left
    rarely.  Returns the iterations, or -1 where that is not reached within ``max_restarts``
    restarts of ``m = H.shape[1]`` steps, or a restart does not halve the true residual."""
    base = ro[b] + b
    d0 = ro[b]
    m = H.shape[1]
    beta0 = 0.0
    for i in range(k):
        x[i] = 0.0
        beta0 += rhs[i] * rhs[i]
    beta0 = np.sqrt(beta0)
    if beta0 == 0.0:
        return 0
    n_inf = 0.0
    for i in range(k):
        w[i] = 0.0
    for i in range(k):
        s = 0.0
        for p in range(rp[base + i], rp[base + i + 1]):
            s += abs(val[p])
            w[idx[p]] += abs(val[p])
        n_inf = max(n_inf, s)
    n_one = 0.0
    for i in range(k):
        n_one = max(n_one, w[i])
    n_m = np.sqrt(n_one * n_inf)
    y = np.empty(m)
    its = 0
    last = np.inf
    for _ in range(max_restarts + 1):
        _apply_mt(x, t, k, base, rp, idx, val)
        beta = 0.0
        xn = 0.0
        for i in range(k):
            r[i] = rhs[i] - t[i]
            beta += r[i] * r[i]
            xn += x[i] * x[i]
        beta = np.sqrt(beta)
        tol = rtol * (beta0 + n_m * np.sqrt(xn))
        if beta <= tol:
            return its
        if beta > 0.5 * last:
            return -1       # stagnation at a floor above the tolerance
        last = beta
        for i in range(k):
            V[0, i] = r[i] / beta
        g[0] = beta
        jn = 0
        for j in range(m):
            _precondition(V[j], t, k, base, d0, rp, idx, lu, dg)
            _apply_mt(t, w, k, base, rp, idx, val)
            for i in range(j + 1):      # modified Gram-Schmidt
                h = 0.0
                for q in range(k):
                    h += w[q] * V[i, q]
                H[i, j] = h
                for q in range(k):
                    w[q] -= h * V[i, q]
            hn = 0.0
            for q in range(k):
                hn += w[q] * w[q]
            hn = np.sqrt(hn)
            H[j + 1, j] = hn
            if hn > 0.0:
                for q in range(k):
                    V[j + 1, q] = w[q] / hn
            for i in range(j):          # the earlier rotations on the new column
                h0 = cs[i] * H[i, j] + sn[i] * H[i + 1, j]
                H[i + 1, j] = -sn[i] * H[i, j] + cs[i] * H[i + 1, j]
                H[i, j] = h0
            den = np.sqrt(H[j, j] * H[j, j] + hn * hn)
            cs[j] = H[j, j] / den
            sn[j] = hn / den
            H[j, j] = den
            H[j + 1, j] = 0.0
            g[j + 1] = -sn[j] * g[j]
            g[j] = cs[j] * g[j]
            its += 1
            jn = j + 1
            if hn == 0.0:
                break
            # the cycle stops at the tolerance with ||x|| estimated: x0's, plus ||y|| / nM for
            # the step M_p^{-1} V y (||M_p^{-1} u|| >= ||u|| / ||M_p|| and M_p is close to M);
            # the true residual decides at the restart
            if abs(g[j + 1]) <= rtol * (beta0 + n_m * np.sqrt(xn)) + rtol * _triangular_norm(H, g, y, jn):
                break
        # y = H^{-1} g (upper triangular jn x jn); x += M_p^{-1} (V y)
        for i in range(jn - 1, -1, -1):
            s = g[i]
            for q in range(i + 1, jn):
                s -= H[i, q] * g[q]
            g[i] = s / H[i, i]
        for q in range(k):
            w[q] = 0.0
        for i in range(jn):
            gi = g[i]
            for q in range(k):
                w[q] += gi * V[i, q]
        _precondition(w, t, k, base, d0, rp, idx, lu, dg)
        for q in range(k):
            x[q] += t[q]
    return -1
