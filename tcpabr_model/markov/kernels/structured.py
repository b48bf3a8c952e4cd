"""Numba kernels of the structured stationary solver (docs/model.md, section 8).

Between losses the window W = A + B + D never decreases, so the loss-free part T of
the transition matrix is block triangular: its strongly connected components (SCCs)
are tiny (a few states of equal W) and can be ordered topologically.  Every loss leads
to a regeneration state (0, 0, m, i2, j2) through a *loss event* e = (m, i1) whose
law is psi-independent given the state (e = K (m - 1) + i1 for K rate levels).  Hence

    h = (I - T)^{-1} L_E          (backward substitution over the SCC order),
    K_E(e, e') = sum_rho G(e, rho) h(rho, e')   (|E| x |E|, G = Q^(3 + ceil log2 m)),
    lambda K_E = lambda,   nu = lambda G,   pi = nu (I - T)^{-1}  (forward substitution).

All steps are direct (no iteration); the only dense solve is on the loss-event set.

T is never stored: every kernel reads its rows from the skeleton (``st``, ``nl_ptr``,
``nl_prob``, ``nl_t``) and the rate chain ``Q`` through :func:`._assemble.t_row`, in the
stored order of the assembled T, so the numbers are those of a CSR T bit for bit while
the memory is the skeleton's alone (docs/model.md sec. 8).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .assemble import from_first_serving, rate_powers, t_row, t_row_buffers
from .interval import ceil_log2
from .iterative import block_gmres
from .recovery import code_m, code_u


@njit(cache=True)
def loss_events(st, ls_ptr, ls_m, nlev):
    """Column indices of L_E (state -> loss event e = K (c - 1) + R index, c the loss-event
    code (the window m for a timeout-only TCP, docs/model.md sec. 12), K = ``nlev``
    levels; independent of the rate chain's matrix), as int32: with the skeleton's
    ``ls_ptr`` and ``ls_prob`` they are the CSR of L_E, without a copy of either."""
    out = np.empty(ls_m.shape[0], dtype=np.int32)
    for i in range(st.shape[0]):
        for e in range(ls_ptr[i], ls_ptr[i + 1]):
            out[e] = nlev * (ls_m[e] - 1) + st[i, 3]
    return out


@njit(cache=True)
def event_mass(pi, ls_ptr, e_idx, ls_prob, n_events):
    """lambda = pi L_E: the loss-event mass (states in increasing order, as a CSR product
    with L_E^T would sum them)."""
    lam = np.zeros(n_events)
    for x in range(ls_ptr.shape[0] - 1):
        px = pi[x]
        for e in range(ls_ptr[x], ls_ptr[x + 1]):
            lam[e_idx[e]] += ls_prob[e] * px
    return lam


@njit(cache=True)
def left_lossfree(pi, st, nl_ptr, nl_prob, nl_t, Q):
    """pi T (states in increasing order, as a CSC product with T^T would sum them)."""
    y = np.zeros(pi.shape[0])
    rc, rv = t_row_buffers(nl_ptr, Q.shape[0])
    for x in range(pi.shape[0]):
        px = pi[x]
        for e in range(t_row(x, st, nl_ptr, nl_prob, nl_t, Q, rc, rv, 0)):
            y[rc[e]] += rv[e] * px
    return y


@njit(cache=True)
def _block_solve(A, B):
    return np.linalg.solve(A, B)


@njit(cache=True)
def backward_h(n, order, ptr, st, nl_ptr, nl_prob, nl_t, Q, e_ptr, e_idx, e_val, n_events, comp, pos):
    """h = (I - T)^{-1} L_E, dense (n x |E|); returns (h, ok) (``comp``, ``pos``: see
    :func:`forward_pi`; T read from the skeleton).  ``ok`` is False if an
    SCC has no exit (a loss-free closed class), where (I - T) is singular."""
    h = np.zeros((n, n_events))
    rc, rv = t_row_buffers(nl_ptr, Q.shape[0])
    n_scc = ptr.shape[0] - 1
    for c in range(n_scc):
        lo = ptr[c]
        hi = ptr[c + 1]
        k = hi - lo
        if k == 1:
            x = order[lo]
            diag = 0.0
            row = np.zeros(n_events)
            for e in range(e_ptr[x], e_ptr[x + 1]):
                row[e_idx[e]] += e_val[e]
            for e in range(t_row(x, st, nl_ptr, nl_prob, nl_t, Q, rc, rv, 0)):
                y = rc[e]
                if y == x:
                    diag += rv[e]
                else:
                    row += rv[e] * h[y]
            if 1.0 - diag <= 1e-300:
                return h, False
            h[x] = row / (1.0 - diag)
        else:
            A = np.eye(k)
            R = np.zeros((k, n_events))
            for a in range(k):
                x = order[lo + a]
                for e in range(e_ptr[x], e_ptr[x + 1]):
                    R[a, e_idx[e]] += e_val[e]
                for e in range(t_row(x, st, nl_ptr, nl_prob, nl_t, Q, rc, rv, 0)):
                    y = rc[e]
                    if comp[y] == c:
                        A[a, pos[y]] -= rv[e]  # pos[y]: y's position inside the block
                    else:
                        R[a] += rv[e] * h[y]
            # singular block: no exit from the class
            exit_mass = 0.0
            for a in range(k):
                s = 0.0
                for bpos in range(k):
                    s += A[a, bpos]
                exit_mass += s
            if exit_mass <= 1e-300:
                return h, False
            X = _block_solve(A, R)
            for a in range(k):
                h[order[lo + a]] = X[a]
    return h, True


@njit(cache=True)
def event_kernel(h, reg, mmax, constant_s, Q, ncodes, F):
    """K_E(e, e') = sum_rho G(e, rho) h(rho, e') with G the rate law of eq. 13
    (``Q``: the K x K rate chain per round trip; ``ncodes`` loss-event codes, sec. 12; ``F``: the
    regeneration from the first serving level, :func:`.assemble.from_first_serving`)."""
    nlev = Q.shape[0]
    n_events = nlev * ncodes
    kmax = 3 + ceil_log2(max(mmax, 1)) + 1
    Pk = from_first_serving(rate_powers(Q, kmax), F)
    K = np.zeros((n_events, n_events))
    for c in range(1, ncodes + 1):
        m = code_m(c, mmax)
        u = code_u(c, mmax)
        for i1 in range(nlev):
            e = nlev * (c - 1) + i1
            if constant_s:
                for i2 in range(nlev):
                    rho = reg[m, i2, 0]
                    if rho >= 0:
                        K[e] += Pk[u, i1, i2] * h[rho]
            else:
                for j2 in range(nlev):
                    for i2 in range(nlev):
                        rho = reg[m, i2, j2]
                        g = Pk[u - 1, i1, j2] * Pk[1, j2, i2]
                        if rho >= 0 and g > 0.0:
                            K[e] += g * h[rho]
    return K


@njit(cache=True)
def entry_vector(lam, reg, mmax, n, constant_s, Q, ncodes, F):
    """nu = lambda G: mass entering each regeneration state (``ncodes`` loss-event codes; ``F`` as
    :func:`event_kernel`'s)."""
    nlev = Q.shape[0]
    kmax = 3 + ceil_log2(max(mmax, 1)) + 1
    Pk = from_first_serving(rate_powers(Q, kmax), F)
    nu = np.zeros(n)
    for c in range(1, ncodes + 1):
        m = code_m(c, mmax)
        u = code_u(c, mmax)
        for i1 in range(nlev):
            le = lam[nlev * (c - 1) + i1]
            if le == 0.0:
                continue
            if constant_s:
                for i2 in range(nlev):
                    rho = reg[m, i2, 0]
                    if rho >= 0:
                        nu[rho] += le * Pk[u, i1, i2]
            else:
                for j2 in range(nlev):
                    for i2 in range(nlev):
                        rho = reg[m, i2, j2]
                        if rho >= 0:
                            nu[rho] += le * Pk[u - 1, i1, j2] * Pk[1, j2, i2]
    return nu


@njit(cache=True, inline="always")
def _self_loop(x, rc, rv, m):
    """T[x, x] from row ``x`` of T in ``rc[:m]``, ``rv[:m]``: the loss-free self-transition."""
    diag = 0.0
    for e in range(m):
        if rc[e] == x:
            diag += rv[e]
    return diag


@njit(cache=True, inline="always")
def _forward_start(nu, ptr, nl_ptr, Q):
    """What both forward substitutions start from: the right-hand side ``nu`` (copied), pi = 0,
    the row buffers of T and the number of SCCs."""
    rc, rv = t_row_buffers(nl_ptr, Q.shape[0])
    return nu.copy(), np.zeros(nu.shape[0]), rc, rv, ptr.shape[0] - 1


@njit(cache=True)
def forward_pi(nu, order, ptr, st, nl_ptr, nl_prob, nl_t, Q, comp, pos):
    """pi = nu (I - T)^{-1} by forward substitution in topological SCC order.

    T is read from the skeleton (``st``, ``nl_ptr``, ``nl_prob``, ``nl_t``) and ``Q``;
    ``comp[x]``: the SCC of state x; ``pos[x]``: its position inside that SCC (so a
    block entry costs O(1): with K levels the SCCs reach K^2 states).
    """
    acc, pi, rc, rv, n_scc = _forward_start(nu, ptr, nl_ptr, Q)
    for c in range(n_scc - 1, -1, -1):
        lo = ptr[c]
        hi = ptr[c + 1]
        k = hi - lo
        if k == 1:
            x = order[lo]
            m = t_row(x, st, nl_ptr, nl_prob, nl_t, Q, rc, rv, 0)
            pi[x] = acc[x] / (1.0 - _self_loop(x, rc, rv, m))
            for e in range(m):
                y = rc[e]
                if y != x:
                    acc[y] += pi[x] * rv[e]
        else:
            # pi_C (I - T_CC) = acc_C  <=>  (I - T_CC)^T pi_C^T = acc_C^T
            A = np.eye(k)
            rhs = np.zeros((k, 1))
            for a in range(k):
                x = order[lo + a]
                rhs[a, 0] = acc[x]
                for e in range(t_row(x, st, nl_ptr, nl_prob, nl_t, Q, rc, rv, 0)):
                    y = rc[e]
                    if comp[y] == c:
                        A[pos[y], a] -= rv[e]
            X = _block_solve(A, rhs)
            for a in range(k):
                pi[order[lo + a]] = X[a, 0]
            for a in range(k):
                x = order[lo + a]
                for e in range(t_row(x, st, nl_ptr, nl_prob, nl_t, Q, rc, rv, 0)):
                    y = rc[e]
                    if comp[y] != c:
                        acc[y] += pi[x] * rv[e]
    return pi


@njit(cache=True)
def has_closed_lossfree_class(order, ptr, comp, st, nl_ptr, nl_prob, nl_t, Q, p_loss, cand):
    """True if some SCC of the loss-free part has no exit (no loss, no edge out); only the SCCs
    ``cand`` are looked at (the others' loss mass alone is an exit: solvers._Structure)."""
    rc, rv = t_row_buffers(nl_ptr, Q.shape[0])
    for c in cand:
        exit_mass = 0.0
        for a in range(ptr[c], ptr[c + 1]):
            x = order[a]
            exit_mass += p_loss[x]
            for e in range(t_row(x, st, nl_ptr, nl_prob, nl_t, Q, rc, rv, 0)):
                if comp[rc[e]] != c:
                    exit_mass += rv[e]
        if exit_mass <= 1e-14:
            return True
    return False


@njit(cache=True)
def prepare_forward(order, ptr, st, nl_ptr, nl_prob, nl_t, Q, comp, pos, sparse_from, looped):
    """Per-solve factors of :func:`forward_pi_prepared`: ``inv_diag[x] = 1 / (1 - T[x, x])``
    for singleton SCCs (1 without reading the row where ``looped[x]`` is false: no entry of ``x``
    comes back to it, :func:`.classes.structural_self_loops`), and for every SCC C of 2 ..
    ``sparse_from - 1`` states the inverse of ``(I - T_CC)^T`` (flat, block ``c`` at ``blk_off[c]``, row-major k x k).  T is fixed during
    a solve while the substitution is repeated once per GMRES product, so the blocks are
    inverted once.  Blocks of ``sparse_from`` states or more get no inverse here (an empty
    slot): they are factored sparse (:func:`large_block_entries`, ``solvers._sparse_blocks``)."""
    n = order.shape[0]
    n_scc = ptr.shape[0] - 1
    rc, rv = t_row_buffers(nl_ptr, Q.shape[0])
    inv_diag = np.zeros(n)
    blk_off = np.zeros(n_scc + 1, dtype=np.int64)
    for c in range(n_scc):
        k = ptr[c + 1] - ptr[c]
        blk_off[c + 1] = blk_off[c] + (k * k if 1 < k < sparse_from else 0)
    blk_inv = np.zeros(blk_off[n_scc])
    for c in range(n_scc):
        lo = ptr[c]
        k = ptr[c + 1] - lo
        if k == 1:
            x = order[lo]
            if looped[x]:
                m = t_row(x, st, nl_ptr, nl_prob, nl_t, Q, rc, rv, 0)
                inv_diag[x] = 1.0 / (1.0 - _self_loop(x, rc, rv, m))
            else:
                inv_diag[x] = 1.0
        elif k < sparse_from:
            A = np.eye(k)
            for a in range(k):
                x = order[lo + a]
                for e in range(t_row(x, st, nl_ptr, nl_prob, nl_t, Q, rc, rv, 0)):
                    y = rc[e]
                    if comp[y] == c:
                        A[pos[y], a] -= rv[e]
            M = np.linalg.inv(A)
            o = blk_off[c]
            for i in range(k):
                for j in range(k):
                    blk_inv[o + i * k + j] = M[i, j]
    return inv_diag, blk_off, blk_inv


@njit(cache=True)
def large_block_entries(order, ptr, st, nl_ptr, nl_prob, nl_t, Q, comp, pos, pick):
    """The SCCs ``c`` with ``pick[c]`` and the entries of their ``(I - T_CC)^T``
    (as :func:`prepare_forward` assembles the dense ones: the identity, then ``-T[x_a, y]`` at
    ``(pos[y], a)`` in T's stored order; duplicates not summed): returns ``(blocks, e_ptr,
    rows, cols, vals)``, block ``blocks[b]``'s entries at ``e_ptr[b]:e_ptr[b + 1]``."""
    n_scc = ptr.shape[0] - 1
    rc, rv = t_row_buffers(nl_ptr, Q.shape[0])
    nb = 0
    for c in range(n_scc):
        if pick[c]:
            nb += 1
    blocks = np.empty(nb, dtype=np.int64)
    e_ptr = np.zeros(nb + 1, dtype=np.int64)
    b = 0
    for c in range(n_scc):
        lo = ptr[c]
        k = ptr[c + 1] - lo
        if not pick[c]:
            continue
        cnt = k
        for a in range(k):
            m = t_row(order[lo + a], st, nl_ptr, nl_prob, nl_t, Q, rc, rv, 0)
            for e in range(m):
                if comp[rc[e]] == c:
                    cnt += 1
        blocks[b] = c
        e_ptr[b + 1] = e_ptr[b] + cnt
        b += 1
    rows = np.empty(e_ptr[nb], dtype=np.int32)
    cols = np.empty(e_ptr[nb], dtype=np.int32)
    vals = np.empty(e_ptr[nb])
    for b in range(nb):
        c = blocks[b]
        lo = ptr[c]
        k = ptr[c + 1] - lo
        q = e_ptr[b]
        for a in range(k):
            rows[q] = a
            cols[q] = a
            vals[q] = 1.0
            q += 1
        for a in range(k):
            m = t_row(order[lo + a], st, nl_ptr, nl_prob, nl_t, Q, rc, rv, 0)
            for e in range(m):
                y = rc[e]
                if comp[y] == c:
                    rows[q] = pos[y]
                    cols[q] = a
                    vals[q] = -rv[e]
                    q += 1
    return blocks, e_ptr, rows, cols, vals


@njit(cache=True, inline="always")
def _apply_lu(b, k, acc, pi, order, lo, z, lu_vo, lu_perm_r, lu_perm_c, lu_udiag, l_ptr, l_idx, l_val, u_ptr,
              u_idx, u_val):
    """pi_C = A^{-1} acc_C for the SCC at ``order[lo:lo + k]`` from the sparse LU factors of
    its ``A = (I - T_CC)^T`` (SuperLU's ``Pr A Pc = L U``, L unit lower, stored as block ``b``:
    see ``solvers._sparse_blocks``): ``z = Pr acc_C``, then ``L``, then ``U`` column by column
    (CSC), then ``pi_C = Pc z``."""
    v = lu_vo[b]
    cp = v + b   # the column pointers hold k + 1 entries per block
    for i in range(k):
        z[lu_perm_r[v + i]] = acc[order[lo + i]]
    for j in range(k):
        zj = z[j]
        if zj != 0.0:
            for p in range(l_ptr[cp + j], l_ptr[cp + j + 1]):
                z[l_idx[p]] -= l_val[p] * zj
    for j in range(k - 1, -1, -1):
        zj = z[j] / lu_udiag[v + j]
        z[j] = zj
        if zj != 0.0:
            for p in range(u_ptr[cp + j], u_ptr[cp + j + 1]):
                z[u_idx[p]] -= u_val[p] * zj
    for i in range(k):
        pi[order[lo + i]] = z[lu_perm_c[v + i]]


@njit(cache=True, inline="always")
def _apply_inverse(blk_inv, o, k, acc, pi, order, lo, buf):
    """pi_C = M acc_C for the SCC at ``order[lo:lo + k]`` and its inverse ``M`` (row-major at
    ``blk_inv[o:]``): each row's sum over j = 0..k-1 in that order from 0.0, four rows at a
    time (four independent sums instead of one chain of dependent additions) from acc_C
    gathered once into ``buf``.  The same operations per row as one row at a time: the
    same numbers bit for bit."""
    for j in range(k):
        buf[j] = acc[order[lo + j]]
    i = 0
    while i + 4 <= k:
        r0 = o + i * k
        r1 = r0 + k
        r2 = r1 + k
        r3 = r2 + k
        v0 = 0.0
        v1 = 0.0
        v2 = 0.0
        v3 = 0.0
        for j in range(k):
            aj = buf[j]
            v0 += blk_inv[r0 + j] * aj
            v1 += blk_inv[r1 + j] * aj
            v2 += blk_inv[r2 + j] * aj
            v3 += blk_inv[r3 + j] * aj
        pi[order[lo + i]] = v0
        pi[order[lo + i + 1]] = v1
        pi[order[lo + i + 2]] = v2
        pi[order[lo + i + 3]] = v3
        i += 4
    while i < k:
        r0 = o + i * k
        v0 = 0.0
        for j in range(k):
            v0 += blk_inv[r0 + j] * buf[j]
        pi[order[lo + i]] = v0
        i += 1


@njit(cache=True)
def forward_pi_prepared(nu, order, ptr, st, nl_ptr, nl_prob, nl_t, Q, comp, inv_diag, blk_off, blk_inv, lu_of,
                        lu_vo, lu_perm_r, lu_perm_c, lu_udiag, l_ptr, l_idx, l_val, u_ptr, u_idx, u_val, it):
    """:func:`forward_pi` with the factors of :func:`prepare_forward` (same result up to
    rounding: a block is applied as its inverse instead of an LU solve), for the SCCs with
    ``lu_of[c] >= 0`` the sparse LU factors of ``blocks.sparse_blocks``, and for those with
    ``lu_of[c] <= -2`` GMRES on block ``-2 - lu_of[c]`` of ``it = (ro, rp, idx, val, lu, dg,
    V, H, cs, sn, g, w, t, r, xs, rtol, max_restarts)`` (:mod:`.iterative`).  Returns ``(pi,
    its)``: ``its`` the most GMRES iterations of one block, or ``-1 - b`` where block ``b``
    did not converge (``pi`` is then not a solution)."""
    acc, pi, rc, rv, n_scc = _forward_start(nu, ptr, nl_ptr, Q)
    buf = np.empty(int(np.max(ptr[1:] - ptr[:-1])) if n_scc > 0 else 1)
    ro, rp, idx, val, lu, dg, V, H, cs, sn, g, w, t, r, xs, rtol, max_restarts = it
    its = 0
    for c in range(n_scc - 1, -1, -1):
        lo = ptr[c]
        k = ptr[c + 1] - lo
        if k == 1:
            x = order[lo]
            px = acc[x] * inv_diag[x]
            pi[x] = px
            if px != 0.0:
                for e in range(t_row(x, st, nl_ptr, nl_prob, nl_t, Q, rc, rv, 0)):
                    y = rc[e]
                    if y != x:
                        acc[y] += px * rv[e]
        else:
            if lu_of[c] >= 0:
                _apply_lu(lu_of[c], k, acc, pi, order, lo, buf, lu_vo, lu_perm_r, lu_perm_c, lu_udiag, l_ptr, l_idx,
                          l_val, u_ptr, u_idx, u_val)
            elif lu_of[c] <= -2:
                for a in range(k):
                    buf[a] = acc[order[lo + a]]
                got = block_gmres(-2 - lu_of[c], k, buf, xs, ro, rp, idx, val, lu, dg, V, H, cs, sn, g, w, t, r,
                                  rtol, max_restarts)
                if got < 0:
                    return pi, -1 - (-2 - lu_of[c])
                its = max(its, got)
                for a in range(k):
                    pi[order[lo + a]] = xs[a]
            else:
                _apply_inverse(blk_inv, blk_off[c], k, acc, pi, order, lo, buf)
            for a in range(k):
                x = order[lo + a]
                px = pi[x]
                for e in range(t_row(x, st, nl_ptr, nl_prob, nl_t, Q, rc, rv, 0)):
                    y = rc[e]
                    if comp[y] != c:
                        acc[y] += px * rv[e]
    return pi, its
