r"""Certified Perron root of a non-negative irreducible matrix, the numerical core of eq. 23.

:func:`perron_root` returns :math:`\rho(P\,\mathrm{diag}(d))` with a rigorous bracket
from Collatz-Wielandt bounds :math:`\min_i (Mx)_i/x_i \le \rho \le \max_i (Mx)_i/x_i` on
a computed Perron vector :math:`x`: LAPACK for small matrices, power steps then ARPACK for
large ones, then, while the bracket is loose, inverse iteration and diagonal balancing.
Whatever produced :math:`x`, only the bracket is trusted.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit
from scipy.sparse.linalg import ArpackNoConvergence, LinearOperator, eigs

from ..errors import SolveError

#: relative width of the Collatz-Wielandt bracket on rho accepted without refinement
RHO_RTOL = 1e-10
#: below this size the dense LAPACK eigen-solver is used
DENSE_LIMIT = 64
#: power steps tried before ARPACK (enough for fast-mixing chains)
POWER_STEPS = 12
#: inverse-iteration solves per factorisation when certifying the Perron root
INVERSE_MAX_SOLVES = 200
#: diagonal-balancing rounds when the bracket is still loose after inverse iteration
BALANCE_ROUNDS = 64


@njit(cache=True)
def _dense_matvec_jit(M, x, out):
    """out = M @ x for a C-contiguous dense matrix (single-threaded: steady timings when
    the BLAS thread pool competes with other processes)."""
    n, m = M.shape
    for i in range(n):
        s = 0.0
        for j in range(m):
            s += M[i, j] * x[j]
        out[i] = s


def _matvec(M, x, sparse):
    if sparse:
        return M @ x
    out = np.empty(M.shape[0])
    _dense_matvec_jit(M, np.ascontiguousarray(x, dtype=np.float64), out)
    return out


def _cw_bracket(M, x, sparse):
    """Rigorous bracket ``lo <= rho(M) <= hi`` from a positive vector ``x``.

    Upper bound: Collatz-Wielandt ``max_i (Mx)_i / x_i`` (valid for any x > 0).  Lower
    bound: ``min_{i in J} (M_JJ x_J)_i / x_i <= rho(M_JJ) <= rho(M)`` for a principal
    submatrix on ``J = {i : x_i >= theta max x}``; the best over a few ``theta`` is kept.
    Restricting J ignores the entries of a Perron vector that are too small to be
    computed to relative accuracy (they span hundreds of orders of magnitude for chains
    with strong drift), which would otherwise spoil the lower bound.
    """
    y = _matvec(M, x, sparse)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        r = y / x
    hi = float(np.max(r)) if np.all(np.isfinite(r)) else np.inf
    lo = float(np.min(r)) if np.all(np.isfinite(r)) else 0.0
    xmax = float(x.max())
    for theta in (1e-8, 1e-16, 1e-30, 1e-60, 1e-120):
        J = np.flatnonzero(x >= theta * xmax)
        if J.size == x.size:
            break
        MJ = M[J][:, J] if sparse else M[np.ix_(J, J)]
        with np.errstate(divide="ignore", invalid="ignore"):
            rJ = (MJ @ x[J]) / x[J]
        if np.all(np.isfinite(rJ)):
            lo = max(lo, float(rJ.min()))
    return lo, hi


def _scaled(M, lx, sparse):
    """``S^{-1} M S`` with ``S = diag(exp(lx))``; also whether exponents had to be clipped."""
    if sparse:
        rows = np.repeat(np.arange(M.shape[0]), np.diff(M.indptr))
        e = lx[M.indices] - lx[rows]
        clipped = bool(np.any(np.abs(e) > 700.0))
        Mk = sp.csr_array((M.data * np.exp(np.clip(e, -700.0, 700.0)), M.indices, M.indptr), shape=M.shape)
    else:
        e = lx[None, :] - lx[:, None]
        clipped = bool(np.any(np.abs(e[M > 0]) > 700.0))
        Mk = M * np.exp(np.clip(e, -700.0, 700.0))
    return Mk, clipped


def _balance(M, x, sparse, lo, hi, method, rho_est=np.nan):
    """Refine the bracket by diagonal balancing (second stage of :func:`perron_root`).

    With ``S = diag(exp(lx))`` from the current Perron vector estimate, the row sums of
    ``S^{-1} M S`` are exactly the Collatz-Wielandt ratios ``(Mx)_i / x_i``, computed
    without forming x (no underflow), and the balanced matrix has norm ~ rho, so its own
    Perron vector is computed to full relative accuracy even when ``rho << ||M||`` or
    when x spans hundreds of orders of magnitude.  ``lx`` accumulates the corrections.
    """
    n = M.shape[0]
    lx = np.log(np.maximum(x / x.max(), 1e-300))
    method += "+balance"
    for _ in range(BALANCE_ROUNDS):
        Mk, clipped = _scaled(M, lx, sparse)
        r = np.asarray(Mk.sum(axis=1)).ravel()
        if not clipped and np.all(np.isfinite(r)):
            blo, bhi = float(r.min()), float(r.max())
            if not np.isfinite(hi) or (bhi - blo) < (hi - lo):
                lo, hi = blo, bhi
        if np.isfinite(hi) and hi > 0 and (hi - lo) <= RHO_RTOL * hi:
            break
        # inverse iteration on the balanced matrix (LAPACK's eig balances by its own
        # rules and can return a poor vector for such matrices)
        if np.isfinite(rho_est) and rho_est > 0 and lo <= rho_est * (1 + 1e-8) and rho_est <= hi * (1 + 1e-8):
            est = rho_est
        else:
            est = float(np.median(r)) if np.all(np.isfinite(r)) else hi
        sigma = max(est, 1e-300) * (1.0 + 1e-10)
        if sparse:
            from scipy.sparse.linalg import splu

            solve = splu(sp.csc_array(sigma * sp.eye_array(n) - Mk)).solve
        else:
            import scipy.linalg as sla

            fac = sla.lu_factor(sigma * np.eye(n) - Mk, check_finite=False)
            solve = lambda v, fac=fac: sla.lu_solve(fac, v, check_finite=False)  # noqa: E731
        # each solve pushes the tail of the vector down by ~|log 1e-10| nats; 30 solves
        # reach the float64 floor, which the next round's rescaling then moves past
        y = np.ones(n)
        for _ in range(30):
            y = np.abs(solve(y))
            y = np.maximum(y / y.max(), 1e-300)
        lx = lx + np.log(np.maximum(y / y.max(), 1e-300))
    return lo, hi, method


def perron_root(Pm, d, sparse):
    """Perron root of ``M = P diag(d)`` with a certified bracket.  Returns (rho, lo, hi, method).

    LAPACK below ``DENSE_LIMIT`` states; above it up to ``POWER_STEPS`` power steps (enough
    for fast-mixing chains), then ARPACK.  The Perron vector estimate is certified by
    :func:`_cw_bracket`.  If the bracket is loose (slow mixing, or a Perron vector with
    tiny entries), inverse iteration follows with a shift just above the eigenvalue
    estimate (later ``sigma = hi (1 + 1e-12) > rho``, where ``(sigma I - M)^{-1}`` is
    entrywise non-negative).  Whatever produced ``x``, only the bracket is trusted.
    """
    n = Pm.shape[0]
    if sparse:
        M = sp.csr_array(Pm @ sp.diags_array(d))
        M.eliminate_zeros()
    else:
        M = Pm * d[None, :]
    if n == 1:
        r = float(M.toarray()[0, 0] if sparse else M[0, 0])
        return r, r, r, "dense"
    method = "dense" if n <= DENSE_LIMIT else "arpack"
    rho_est = np.nan
    if n <= DENSE_LIMIT:
        Md = M.toarray() if sparse else M
        w, V = np.linalg.eig(Md)
        k = int(np.argmax(w.real))
        x = np.abs(V[:, k].real)
        rho_est = float(w[k].real)
    else:
        # a few power steps first: for well-mixing chains (e.g. dense positive P) the
        # Collatz-Wielandt bracket closes in a handful of matvecs
        x = np.ones(n)
        for _ in range(POWER_STEPS):
            y = _matvec(M, x, sparse)
            with np.errstate(divide="ignore", invalid="ignore"):
                r = y / x
            lo, hi = float(np.min(r)), float(np.max(r))
            if np.isfinite(hi) and hi > 0 and (hi - lo) <= RHO_RTOL * hi:
                return 0.5 * (lo + hi), lo, hi, "power"
            ymax = float(y.max())
            if not (ymax > 0) or np.any(y <= 0):
                break
            x = y / ymax
    if n > DENSE_LIMIT:
        op = M if sparse else LinearOperator(
            (n, n), matvec=lambda v: _matvec(M, np.ravel(v), False), dtype=np.float64
        )
        try:
            v0 = x if np.all(x > 0) and np.all(np.isfinite(x)) else np.ones(n)
            w, V = eigs(op, k=1, which="LM", v0=v0, tol=1e-14, maxiter=10 * n)
            x = np.abs(V[:, 0].real)
            rho_est = float(abs(w[0]))
        except ArpackNoConvergence:
            x = np.ones(n)
            method = "power"
    x = np.maximum(x, 1e-300 * max(float(x.max()), 1e-300))
    lo, hi = _cw_bracket(M, x, sparse)
    if not (np.isfinite(hi) and (hi - lo) <= RHO_RTOL * hi) and np.isfinite(rho_est) and rho_est > 0:
        # LAPACK's balancing can return a Perron vector with exact zeros where the true
        # entries are large (badly scaled M); power steps scaled by the eigenvalue
        # estimate refill them from the accurate entries (irreducible M: n steps suffice)
        for _ in range(2 * n + 8):
            x = np.maximum(_matvec(M, x, sparse) / rho_est, 1e-300)
            x = x / x.max()
            plo, phi = _cw_bracket(M, x, sparse)
            if np.isfinite(phi) and (not np.isfinite(hi) or (phi - plo) < (hi - lo)):
                lo, hi = plo, phi
            if np.isfinite(hi) and (hi - lo) <= RHO_RTOL * hi:
                method += "+polish"
                break
    it = 0
    n_fact = 0
    while (not np.isfinite(hi) or (hi - lo) > RHO_RTOL * hi) and n_fact < 4:
        if n_fact == 0:
            method += "+inverse"
        if not np.isfinite(hi):
            hi = float(np.max(np.asarray(M.sum(axis=1)).ravel()))
        # shift just above the best estimate of rho: fast convergence even with a tiny
        # spectral gap; the bracket certifies the result whatever produced x
        est = rho_est if (np.isfinite(rho_est) and lo <= rho_est <= hi) else 0.5 * (lo + hi)
        sigma = min(hi, est) * (1.0 + 1e-10) if n_fact < 3 else hi * (1.0 + 1e-12)
        if sparse:
            from scipy.sparse.linalg import splu

            solve = splu(sp.csc_array(sigma * sp.eye_array(n) - M)).solve
        else:
            import scipy.linalg as sla

            fac = sla.lu_factor(sigma * np.eye(n) - M, check_finite=False)
            solve = lambda v, fac=fac: sla.lu_solve(fac, v, check_finite=False)  # noqa: E731
        n_fact += 1
        # the deep tail of a Perron vector converges a fixed number of decades per solve:
        # keep solving with the same factorisation while the bracket improves
        for k in range(INVERSE_MAX_SOLVES):
            x = np.abs(solve(x))
            x = np.maximum(x / x.max(), 1e-300)
            it += 1
            if k % 4 == 3 or k < 2:
                lo, hi = _cw_bracket(M, x, sparse)
                if np.isfinite(hi) and (hi - lo) <= RHO_RTOL * hi:
                    break
        if (hi - lo) < 1e-8 * hi:
            rho_est = 0.5 * (lo + hi)
    if not (np.isfinite(hi) and hi > 0 and (hi - lo) <= RHO_RTOL * hi):
        lo, hi, method = _balance(M, x, sparse, lo, hi, method, rho_est)
    if not (hi > 0) or not np.isfinite(hi) or (hi - lo) > 1e-6 * hi:
        raise SolveError(
            f"Perron root not certified: Collatz-Wielandt bracket [{lo:.3e}, {hi:.3e}] (the Perron vector "
            "may span more than the float64 range; try a smaller delta or delta=inf)"
        )
    return 0.5 * (lo + hi), lo, hi, method
