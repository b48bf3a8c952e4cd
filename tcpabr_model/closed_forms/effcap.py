r"""Effective capacity of a Markov-modulated service process (seed 004, eq. 23).

A slotted server serves :math:`C_i` packets in slot :math:`i`; :math:`C_i = c(X_i)`
where :math:`X` is an irreducible Markov chain with transition matrix :math:`P`.
Eq. (23) of Shakkottai et al. (2001) defines

.. math::

    \Gamma_{\rm eff}(\delta) = -\frac{1}{\delta}\lim_{n\to\infty}\frac{1}{n+1}
        \log E\exp\Big(-\delta\sum_{i=0}^{n} C_i\Big).

For a finite irreducible chain :math:`E\exp(-\delta\sum C_i) = \pi D (PD)^n \mathbf 1`
with :math:`D = \mathrm{diag}(e^{-\delta c})`, so by Perron-Frobenius

.. math::  \Gamma_{\rm eff}(\delta) = -\frac{1}{\delta}\log\rho\big(P\,\mathrm{diag}(e^{-\delta c})\big).

Numerically we shift by :math:`c_{\min}` (:math:`D_s = \mathrm{diag}(e^{-\delta(c-c_{\min})})`,
entries in (0, 1]) so nothing overflows for large :math:`\delta`:
:math:`\Gamma = c_{\min} - \log\rho(P D_s)/\delta`.  The Perron root is certified by
Collatz-Wielandt bounds :math:`\min_i (Mx)_i/x_i \le \rho \le \max_i (Mx)_i/x_i` on the
computed Perron vector; the result carries these bounds.

Limits: :math:`\Gamma(0^+) = E C` (stationary mean); :math:`\Gamma(\infty)` is the
**minimum cycle mean** of :math:`c` on the transition graph of :math:`P` (Karp).  This
equals :math:`C_{\min}` -- the limit the paper states -- exactly when some minimum-capacity
state has a self-loop (:math:`P_{ii} > 0`); for a chain forced to leave the low state it is
larger.  :math:`\Gamma` is non-increasing in :math:`\delta`.

Units: :math:`\Gamma` has the units of ``c`` (packets per slot); :math:`\delta` has units
of 1 / (unit of ``c`` x slot), i.e. "per packet" when ``c`` counts packets per slot, which
is the unit of the QoS link :math:`\delta = -\log\epsilon / B_{\max}` with
:math:`B_{\max}` in packets.

Capacity models: every function that takes ``(P, c)`` also takes a
:class:`~tcpabr_model.capacity.CapacityModel` in their place (``effective_capacity(model,
delta)``).  A discrete-time model is the slotted server with slot = ``model.epoch`` and
:math:`C_i = c_{X_i}\,\epsilon` packets per slot; results are returned per **time unit**
(divided by the epoch), ``delta`` stays per packet.  A continuous-time model (generator
:math:`Q`) has :math:`\Gamma(\delta) = -s(Q - \delta\,\mathrm{diag}(c))/\delta`, with
:math:`s` the spectral abscissa (the continuous-time limit of eq. 23), and
:math:`\Gamma(\infty) = \min_k c_k` (any state can be held arbitrarily long).

References
----------
S. Shakkottai, A. Kumar, A. Karnik, A. Anvekar, "TCP performance over end-to-end rate
control and stochastic available capacity", IEEE/ACM ToN 9(4), 2001, Section IV.
C.-S. Chang, J. A. Thomas, "Effective bandwidth in high-speed digital networks", JSAC 1995.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numba import njit
from scipy.optimize import brentq
from scipy.sparse.csgraph import connected_components
from scipy.sparse.linalg import ArpackNoConvergence, LinearOperator, eigs

from .._validate import check_int, check_probability, check_real
from ..errors import ErgodicityError, ModelError, SolveError

__all__ = [
    "EffectiveCapacityResult",
    "effective_capacity",
    "effective_capacity_solve",
    "effective_capacity_limits",
    "effective_capacity_eq24",
    "stationary_distribution",
    "min_cycle_mean",
    "stationary_mean",
    "delta_for_rate",
    "qos_delta",
    "two_state_matrix",
    "derive_two_state_effective_capacity",
    "effective_capacity_two_state",
    "delta_for_rate_two_state",
]

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
#: tolerance on row sums of P
ROW_SUM_TOL = 1e-9


@dataclass(frozen=True)
class EffectiveCapacityResult:
    """Effective capacity with its diagnostics.

    Attributes
    ----------
    value : float
        :math:`\\Gamma_{\\rm eff}(\\delta)` in units of ``c``.
    lower, upper : float
        Certified bracket on ``value`` from Collatz-Wielandt bounds on the Perron root.
    log_rho : float
        :math:`\\log\\rho(P\\,\\mathrm{diag}(e^{-\\delta(c-c_{\\min})}))` (shifted).
    delta : float
    method : str
        ``"limit"`` (delta = 0 or inf), else the first stage -- ``"dense"`` (LAPACK),
        ``"power"`` or ``"arpack"`` -- with ``"+inverse"`` / ``"+balance"`` appended when
        the inverse-iteration / diagonal-balancing refinements were needed.
    """

    value: float
    lower: float
    upper: float
    log_rho: float
    delta: float
    method: str


# --------------------------------------------------------------------------- checks
def _as_chain(P, c):
    """Validate (P, c); return (P as csr or dense float64, c float64, is_sparse).

    ``c=None`` checks ``P`` alone (``c`` is returned as zeros).
    """
    if sp.issparse(P):
        Pm = sp.csr_array(P, dtype=float, copy=True)
        Pm.eliminate_zeros()  # explicit zeros are not transitions
        n = Pm.shape[0]
        if Pm.shape != (n, n) or n == 0:
            raise ValueError(f"P.shape={Pm.shape} is invalid: must be a non-empty square matrix")
        if not np.all(np.isfinite(Pm.data)) or (Pm.nnz and Pm.data.min() < 0):
            raise ValueError("P is invalid: must have finite non-negative entries")
        rows = np.asarray(Pm.sum(axis=1)).ravel()
        sparse = True
    else:
        Pm = np.ascontiguousarray(np.asarray(P, dtype=float))
        if Pm.ndim != 2 or Pm.shape[0] != Pm.shape[1] or Pm.shape[0] == 0:
            raise ValueError(f"P.shape={Pm.shape} is invalid: must be a non-empty square matrix")
        if not np.all(np.isfinite(Pm)) or Pm.min() < 0:
            raise ValueError("P is invalid: must have finite non-negative entries")
        rows = Pm.sum(axis=1)
        n = Pm.shape[0]
        sparse = False
    if np.max(np.abs(rows - 1.0)) > ROW_SUM_TOL:
        raise ValueError(
            f"P row sums={rows[np.argmax(np.abs(rows - 1.0))]!r} is invalid: every row must sum to 1"
        )
    c = np.zeros(n) if c is None else np.ascontiguousarray(np.asarray(c, dtype=float).ravel())
    if c.shape != (n,):
        raise ValueError(f"c.shape={c.shape} is invalid: must be ({n},) to match P")
    if not np.all(np.isfinite(c)) or c.min() < 0:
        raise ValueError("c is invalid: capacities must be finite and >= 0")
    if sparse:
        ncomp, _ = connected_components(Pm, directed=True, connection="strong")
    else:
        ncomp = 1 if _dense_irreducible_jit(Pm) else 2
    if ncomp != 1:
        raise ErgodicityError(
            "the modulating chain is not irreducible; eq. 23 needs an irreducible chain"
        )
    return Pm, c, sparse


@njit(cache=True)
def _dense_irreducible_jit(P):
    """True if the support of dense ``P`` is strongly connected (BFS from 0 forward and back)."""
    n = P.shape[0]
    for direction in range(2):
        seen = np.zeros(n, np.bool_)
        stack = np.empty(n, np.int64)
        seen[0] = True
        stack[0] = 0
        top = 1
        count = 1
        while top > 0:
            top -= 1
            i = stack[top]
            for j in range(n):
                w = P[i, j] if direction == 0 else P[j, i]
                if w > 0.0 and not seen[j]:
                    seen[j] = True
                    stack[top] = j
                    top += 1
                    count += 1
        if count != n:
            return False
    return True


def _check_delta(delta, allow_inf=True) -> float:
    return check_real("delta", delta, 0.0, allow_inf=allow_inf)


def _is_model(x) -> bool:
    """True for a :class:`~tcpabr_model.capacity.CapacityModel` (duck-typed: the capacity
    package builds on this module, so it cannot be imported here)."""
    return hasattr(x, "chain_per_epoch") and hasattr(x, "levels")


def _model_or_chain(P, c, rest=None, rest_name="delta"):
    """Resolve the call forms ``f(P, c, x)`` and ``f(model, x)``.

    Returns ``(model_or_None, P, c, x)``; with a model ``P, c`` are ``None``.
    """
    if _is_model(P):
        if rest is None:
            c, rest = None, c
        if c is not None:
            raise ValueError(f"c={c!r} is invalid: a CapacityModel carries its levels; call f(model, {rest_name})")
        return P, None, None, rest
    if c is None:
        raise ValueError("c=None is invalid: give the capacities c with P, or a CapacityModel")
    return None, P, c, rest


def stationary_distribution(P) -> np.ndarray:
    """Stationary distribution :math:`\\pi = \\pi P` of an irreducible transition matrix.

    Parameters
    ----------
    P : array_like(float, ndim=2) or scipy sparse
        Stochastic, irreducible (raises ``ValueError`` / ``ErgodicityError`` otherwise).
    """
    Pm, _, sparse = _as_chain(P, None)
    return _stationary(Pm, sparse)


def stationary_mean(P, c=None) -> float:
    """Mean capacity :math:`E C = \\pi c` of the stationary modulating chain.

    Parameters
    ----------
    P : array_like(float, ndim=2) or scipy sparse, or CapacityModel
        Irreducible transition matrix (or a model: its mean in packets per time unit).
    c : array_like(float, ndim=1)
        Capacity (packets per slot) in each state; omitted with a model.
    """
    model, P, c, _ = _model_or_chain(P, c, 0.0)
    if model is not None:
        return float(model.mean)
    Pm, c, sparse = _as_chain(P, c)
    return float(_stationary(Pm, sparse) @ c)


def _stationary(Pm, sparse) -> np.ndarray:
    n = Pm.shape[0]
    if n == 1:
        return np.ones(1)
    if not sparse and n <= 2000:
        A = Pm.T - np.eye(n)
        A[-1, :] = 1.0
        b = np.zeros(n)
        b[-1] = 1.0
        pi = np.linalg.solve(A, b)
    else:
        from scipy.sparse.linalg import spsolve

        A = sp.lil_array(sp.csr_array(Pm).T - sp.eye_array(n))
        A[n - 1, :] = np.ones(n)
        b = np.zeros(n)
        b[-1] = 1.0
        pi = spsolve(sp.csc_array(A), b)
    pi = np.clip(pi, 0.0, None)
    return pi / pi.sum()


# --------------------------------------------------------------------------- Karp
@njit(cache=True)
def _karp_jit(indptr, indices, c):
    """Minimum cycle mean of vertex weights ``c`` on the CSR digraph (Karp 1978).

    The weight of edge i->j is c[i] (the capacity of the slot spent in i), so the mean
    over a cycle is the average of c over the states it visits.
    """
    n = indptr.size - 1
    inf = np.inf
    F = np.full((n + 1, n), inf)
    F[0, 0] = 0.0  # irreducible: any source reaches every state
    for k in range(1, n + 1):
        for i in range(n):
            fi = F[k - 1, i]
            if fi == inf:
                continue
            w = fi + c[i]
            for p in range(indptr[i], indptr[i + 1]):
                j = indices[p]
                if w < F[k, j]:
                    F[k, j] = w
    best = inf
    for v in range(n):
        if F[n, v] == inf:
            continue
        worst = -inf
        for k in range(n):
            if F[k, v] < inf:
                val = (F[n, v] - F[k, v]) / (n - k)
                if val > worst:
                    worst = val
        if worst < best:
            best = worst
    return best


def min_cycle_mean(P, c=None) -> float:
    """:math:`\\Gamma_{\\rm eff}(\\infty)`: minimum over cycles of the mean capacity.

    Karp's algorithm on the support of ``P``; :math:`O(n\\,\\mathrm{nnz})`.  With a
    CapacityModel: packets per time unit (``min_k c_k`` in continuous time).
    """
    model, P, c, _ = _model_or_chain(P, c, 0.0)
    if model is not None:
        return effective_capacity_solve(model, np.inf).value
    Pm, c, sparse = _as_chain(P, c)
    return _min_cycle_mean(Pm, c)


def _min_cycle_mean(Pm, c) -> float:
    # shortcut: a minimum-capacity state with a self-loop is a cycle of mean c_min, and
    # no cycle can do better (Karp costs O(n nnz), 1.5 s for a dense 1000-state chain)
    diag = Pm.diagonal() if sp.issparse(Pm) else np.diag(Pm)
    if np.any((c == c.min()) & (diag > 0)):
        return float(c.min())
    csr = sp.csr_array(Pm)
    csr.eliminate_zeros()
    return float(_karp_jit(csr.indptr.astype(np.int64), csr.indices.astype(np.int64), c))


def effective_capacity_limits(P, c=None) -> tuple[float, float]:
    """``(Gamma(inf), Gamma(0))`` = (minimum cycle mean, stationary mean); ``P`` may be a CapacityModel."""
    return min_cycle_mean(P, c), stationary_mean(P, c)


# --------------------------------------------------------------------------- Perron root
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
    """Refine the bracket by diagonal balancing (second stage of :func:`_perron`).

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


def _perron(Pm, d, sparse):
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


def effective_capacity_solve(P, c=None, delta=None) -> EffectiveCapacityResult:
    """Eq. (23) exactly, with a certified bracket (see :class:`EffectiveCapacityResult`).

    Call forms: ``effective_capacity_solve(P, c, delta)`` and
    ``effective_capacity_solve(model, delta)`` for a CapacityModel (result in packets per
    time unit, ``delta`` per packet; ``log_rho`` stays per epoch, or is the spectral
    abscissa per time unit for a continuous-time model).

    Parameters
    ----------
    P : array_like(float, ndim=2) or scipy sparse array, or CapacityModel
        Transition matrix of the irreducible modulating chain (one step = one slot).
    c : array_like(float, ndim=1)
        Packets served per slot in each state (:math:`C_i = c(X_i)`).
    delta : float
        QoS exponent :math:`\\delta \\ge 0` (``np.inf`` allowed), units 1/(unit of c).

    Raises
    ------
    ValueError
        Bad P, c or delta.
    ErgodicityError
        P is not irreducible.
    SolveError
        The Perron root cannot be certified (e.g. it underflows for huge delta; use
        ``delta=np.inf`` for the limit).
    """
    model, P, c, delta = _model_or_chain(P, c, delta)
    if model is not None:
        return _model_effective_capacity(model, delta)
    Pm, c, sparse = _as_chain(P, c)
    delta = _check_delta(delta)
    if delta == 0.0:
        m = float(_stationary(Pm, sparse) @ c)
        return EffectiveCapacityResult(m, m, m, 0.0, 0.0, "limit")
    if math.isinf(delta):
        m = _min_cycle_mean(Pm, c)
        return EffectiveCapacityResult(m, m, m, -np.inf, delta, "limit")
    cmin = float(c.min())
    d = np.exp(-delta * (c - cmin))
    if np.any(d == 0.0):
        raise SolveError(
            f"exp(-delta (c - c_min)) underflows at delta={delta!r} (delta x capacity spread > 745); "
            "use delta=inf for the limit or rescale c"
        )
    rho, lo, hi, method = _perron(Pm, d, sparse)
    if lo <= 1e-290:
        raise SolveError(
            f"Perron root underflows at delta={delta!r} (bracket [{lo:.3e}, {hi:.3e}]); "
            "use delta=inf for the limit"
        )
    val = cmin - math.log(rho) / delta
    return EffectiveCapacityResult(
        value=val,
        lower=cmin - math.log(hi) / delta,
        upper=cmin - math.log(lo) / delta,
        log_rho=math.log(rho),
        delta=delta,
        method=method,
    )


def effective_capacity(P, c=None, delta=None) -> float:
    """Effective capacity :math:`\\Gamma_{\\rm eff}(\\delta)` of eq. (23), exact.

    :math:`-\\log\\rho(P\\,\\mathrm{diag}(e^{-\\delta c}))/\\delta`; ``delta=0`` gives the
    stationary mean and ``delta=inf`` the minimum cycle mean.  Same parameters as
    :func:`effective_capacity_solve` (``effective_capacity(model, delta)`` for a
    CapacityModel, in packets per time unit); returns only the value (packets per slot).
    """
    return effective_capacity_solve(P, c, delta).value


def _model_effective_capacity(model, delta) -> EffectiveCapacityResult:
    """Eq. (23) for a CapacityModel, per time unit (see the module docstring)."""
    delta = _check_delta(delta)
    if model.transition is not None:
        P, C, epoch = model.chain_per_epoch()
        r = effective_capacity_solve(P, C, delta)
        return EffectiveCapacityResult(r.value / epoch, r.lower / epoch, r.upper / epoch, r.log_rho, delta, r.method)
    Q = np.asarray(model.generator, dtype=float)
    c = np.asarray(model.levels, dtype=float)
    if delta == 0.0:
        m = float(model.mean)
        return EffectiveCapacityResult(m, m, m, 0.0, 0.0, "limit")
    cmin = float(c.min())
    if math.isinf(delta):
        return EffectiveCapacityResult(cmin, cmin, cmin, -np.inf, delta, "limit")
    # spectral abscissa s of the Metzler matrix Q - delta diag(c - cmin): shifted by q it is
    # non-negative and irreducible, with Perron root s + q (certified bracket as in eq. 23)
    A = Q - delta * np.diag(c - cmin)
    q = float(np.max(-np.diag(A)))
    A = A + q * np.eye(c.size)
    rho, lo, hi, method = _perron(np.clip(A, 0.0, None), np.ones(c.size), False)
    return EffectiveCapacityResult(
        value=cmin - (rho - q) / delta,
        lower=cmin - (hi - q) / delta,
        upper=cmin - (lo - q) / delta,
        log_rho=rho - q,
        delta=delta,
        method=method + "+generator",
    )


def effective_capacity_eq24(P, c=None, delta=None, M=None) -> float:
    """Eq. (24) exactly for the stationary chain: :math:`-\\log E e^{-\\delta\\sum_{i=1}^M C_i}/(M\\delta)`.

    The finite-horizon effective capacity that the block estimator eq. (25) estimates
    (its N -> infinity limit at the same M); it tends to eq. (23) as M grows, with a bias
    O(1/M).  :math:`E e^{-\\delta S_M} = \\pi D (P D)^{M-1} \\mathbf 1`, evaluated with the
    shift :math:`D = \\mathrm{diag}(e^{-\\delta(c - c_{\\min})})` and normalised products.

    Parameters
    ----------
    P, c : transition matrix and packets per slot, or a discrete CapacityModel (then
        ``effective_capacity_eq24(model, delta, M)``, packets per time unit, M in epochs).
    delta : float >= 0
        Per packet; 0 gives the mean, ``inf`` the minimum over M-step paths of the average.
    M : int >= 1
        Slots per block.
    """
    if _is_model(P):
        if c is not None:  # positional effective_capacity_eq24(model, delta, M)
            if M is not None and delta is not None:
                raise ValueError(f"c={c!r} is invalid: a CapacityModel carries its levels")
            delta, M = (c, delta) if M is None else (c, M)
        if M is None:
            raise ValueError("M=None is invalid: give the block length M (epochs)")
        Pe, Ce, epoch = P.chain_per_epoch()
        return effective_capacity_eq24(Pe, Ce, delta, M) / epoch
    Pm, c, sparse = _as_chain(P, c)
    delta = _check_delta(delta)
    if M is None:
        raise ValueError("M=None is invalid: give the block length M (slots)")
    M = check_int("M", M, 1)
    pi = _stationary(Pm, sparse)
    if delta == 0.0:
        return float(pi @ c)
    Pd = Pm.toarray() if sparse else Pm
    if math.isinf(delta):
        # min over positive-probability M-step paths of the mean of c (min-plus products)
        best = c.copy()
        for _ in range(M - 1):
            best = np.min(np.where(Pd > 0, best[:, None], np.inf), axis=0) + c
        return float(best.min() / M)
    cmin = float(c.min())
    d = np.exp(-delta * (c - cmin))
    v = pi * d
    logs = 0.0
    for _ in range(M - 1):
        tot = v.sum()
        if not tot > 0:
            raise SolveError(f"eq. 24 underflowed at delta={delta!r}; use delta=inf for the limit")
        logs += math.log(tot)
        v = ((v / tot) @ Pd) * d
    tot = v.sum()
    if not tot > 0:
        raise SolveError(f"eq. 24 underflowed at delta={delta!r}; use delta=inf for the limit")
    return float(cmin - (logs + math.log(tot)) / (M * delta))


def qos_delta(epsilon, bmax) -> float:
    """QoS exponent :math:`\\delta = -\\log\\epsilon / B_{\\max}` (seed 004, after eq. 23).

    Parameters
    ----------
    epsilon : float in (0, 1)
        Target loss probability.
    bmax : float > 0
        Buffer size (packets); the result is then in 1/packet.
    """
    eps = check_probability("epsilon", epsilon, open_low=True, open_high=True)
    b = check_real("bmax", bmax, 0.0, low_open=True)
    return -math.log(eps) / b


def _solve_delta(gamma_fn, rate, lo_lim, mean, what):
    """Smallest delta >= 0 with gamma_fn(delta) = rate, gamma non-increasing."""
    span = max(abs(mean), 1e-300)
    if rate > mean + 1e-12 * span:
        raise ModelError(
            f"rate={rate!r} exceeds the mean capacity {mean!r} = Gamma(0) of {what}: no delta gives it"
        )
    if rate >= mean - 1e-12 * span:
        return 0.0
    if rate <= lo_lim + 1e-12 * span:
        raise ModelError(
            f"rate={rate!r} is at or below Gamma(inf)={lo_lim!r} (minimum cycle mean) of {what}: "
            "no finite delta gives it"
        )
    hi = 1.0 / span
    g = gamma_fn(hi)
    while g > rate:
        hi *= 4.0
        if hi > 1e12:
            raise ModelError(f"no delta <= 1e12 reaches rate={rate!r} for {what}")
        g = gamma_fn(hi)
    lo = 0.0
    return float(brentq(lambda x: gamma_fn(x) - rate, lo, hi, xtol=1e-14 * hi, rtol=1e-13, maxiter=200))


def delta_for_rate(P, c=None, rate=None) -> float:
    """Smallest :math:`\\delta` with :math:`\\Gamma_{\\rm eff}(\\delta) = ` ``rate`` (inverse of eq. 23).

    ``rate`` must lie in :math:`(\\Gamma(\\infty), E C]`; ``rate == E C`` gives 0.
    Raises :class:`~tcpabr_model.errors.ModelError` when no finite delta exists.
    ``delta_for_rate(model, rate)``: a CapacityModel, ``rate`` in packets per time unit.
    """
    model, P, c, rate = _model_or_chain(P, c, rate, "rate")
    if model is not None:
        rate = check_real("rate", rate, 0.0)
        lo_lim, mean = effective_capacity_limits(model)
        return _solve_delta(lambda d: effective_capacity(model, d) if d > 0 else mean, rate, lo_lim, mean,
                            "the capacity model")
    Pm, cc, sparse = _as_chain(P, c)
    rate = check_real("rate", rate, 0.0)
    mean = float(_stationary(Pm, sparse) @ cc)
    lo_lim = _min_cycle_mean(Pm, cc)
    return _solve_delta(lambda d: effective_capacity(Pm, cc, d) if d > 0 else mean, rate, lo_lim, mean, "the chain")


# --------------------------------------------------------------------------- two states
def two_state_matrix(p01, p10) -> np.ndarray:
    """``[[1-p01, p01], [p10, 1-p10]]`` after checking p01, p10 in (0, 1]."""
    a = check_probability("p01", p01, open_low=True)
    b = check_probability("p10", p10, open_low=True)
    return np.array([[1.0 - a, a], [b, 1.0 - b]])


@functools.lru_cache(maxsize=1)
def derive_two_state_effective_capacity():
    """Derive the two-state closed form of eq. (23) with sympy.

    Returns
    -------
    dict
        ``"Gamma"``: :math:`\\Gamma(\\delta)` as a sympy expression in ``p01, p10, c0, c1,
        delta``; ``"rho"``: the Perron root in terms of ``x0 = exp(-delta c0)``,
        ``x1 = exp(-delta c1)``; ``"rho_eigen"``: the same root as returned by sympy's
        eigenvalue solver (kept to show the derivation); ``"symbols"``: the symbols.

    Notes
    -----
    :math:`M = P\\,\\mathrm{diag}(x_0, x_1)`; its characteristic polynomial is
    :math:`\\lambda^2 - \\mathrm{tr}M\\,\\lambda + \\det M`, and the Perron root is the ``+``
    root.  The discriminant is rewritten as
    :math:`((1-p_{01})x_0-(1-p_{10})x_1)^2 + 4p_{01}p_{10}x_0x_1`, a sum of non-negative
    terms, so the numeric form never takes the square root of a negative rounding error.
    The rewriting is checked symbolically (``simplify(disc - disc_eigen) == 0``).
    """
    import sympy as sy

    p01, p10, c0, c1, delta = sy.symbols("p01 p10 c0 c1 delta", positive=True)
    x0, x1 = sy.symbols("x0 x1", positive=True)
    lam = sy.Symbol("lambda")
    P = sy.Matrix([[1 - p01, p01], [p10, 1 - p10]])
    M = P * sy.diag(x0, x1)
    charpoly = sy.expand(M.charpoly(lam).as_expr())
    roots = sy.solve(sy.Eq(charpoly, 0), lam)
    # the Perron root is the one with +sqrt: larger at a positive test point
    test = {p01: sy.Rational(1, 3), p10: sy.Rational(1, 5), x0: sy.Rational(1, 2), x1: sy.Rational(1, 7)}
    rho_eigen = max(roots, key=lambda r: float(r.subs(test)))
    tr = M.trace()
    det = sy.factor(M.det())
    disc = ((1 - p01) * x0 - (1 - p10) * x1) ** 2 + 4 * p01 * p10 * x0 * x1
    if sy.simplify(sy.expand(disc - (tr**2 - 4 * det))) != 0:  # pragma: no cover - derivation guard
        raise ModelError("two-state derivation: discriminant rewrite is not an identity")
    rho = (tr + sy.sqrt(disc)) / 2
    if sy.simplify(sy.expand((rho - rho_eigen).subs(test))) != 0:  # pragma: no cover
        raise ModelError("two-state derivation: Perron root does not match sympy's eigenvalue")
    gamma = -sy.log(rho.subs({x0: sy.exp(-delta * c0), x1: sy.exp(-delta * c1)})) / delta
    return {
        "Gamma": gamma,
        "rho": rho,
        "rho_eigen": rho_eigen,
        "symbols": {"p01": p01, "p10": p10, "c0": c0, "c1": c1, "delta": delta, "x0": x0, "x1": x1},
    }


@functools.lru_cache(maxsize=1)
def _rho_two_state_numeric():
    """Lambdified Perron root rho(p01, p10, x0, x1) from the sympy derivation."""
    import sympy as sy

    d = derive_two_state_effective_capacity()
    s = d["symbols"]
    return sy.lambdify((s["p01"], s["p10"], s["x0"], s["x1"]), d["rho"], modules="numpy")


def effective_capacity_two_state(p01, p10, c0, c1, delta):
    """Closed-form eq. (23) for the two-state chain, vectorised (numpy broadcasting).

    Uses the lambdified sympy derivation (:func:`derive_two_state_effective_capacity`),
    evaluated with the shift :math:`x_i = e^{-\\delta(c_i - c_{\\min})}` so that it is
    stable for large delta: :math:`\\Gamma = c_{\\min} - \\log\\rho(x_0, x_1)/\\delta`
    (and, where that underflows -- the minimum state has no self-loop -- with the mid-point
    shift :math:`\\bar c = (c_0 + c_1)/2`, using that rho is homogeneous of degree 1).

    Parameters
    ----------
    p01, p10 : array_like(float), in (0, 1]
        Transition probabilities per slot (state 0 -> 1 and 1 -> 0).
    c0, c1 : array_like(float) >= 0
        Packets served per slot in states 0 and 1.
    delta : array_like(float) >= 0
        ``0`` gives the mean, ``inf`` the minimum cycle mean.

    Returns
    -------
    float or ndarray
        Effective capacity in packets per slot.
    """
    a, b, c0a, c1a, da = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (p01, p10, c0, c1, delta)))
    scalar = a.ndim == 0
    for name, v, lo_open in (("p01", a, True), ("p10", b, True)):
        if not np.all(np.isfinite(v)) or np.any(v <= 0) or np.any(v > 1):
            bad = v[~(np.isfinite(v) & (v > 0) & (v <= 1))].ravel()[0] if v.ndim else float(v)
            raise ValueError(f"{name}={bad!r} is invalid: must be in (0, 1]")
    for name, v in (("c0", c0a), ("c1", c1a)):
        if not np.all(np.isfinite(v)) or np.any(v < 0):
            raise ValueError(f"{name}={v.ravel()[np.argmin(np.isfinite(v) & (v >= 0))]!r} is invalid: must be >= 0")
    if np.any(np.isnan(da)) or np.any(da < 0):
        raise ValueError("delta is invalid: must be >= 0 (inf allowed)")
    cmin = np.minimum(c0a, c1a)
    mean = (b * c0a + a * c1a) / (a + b)
    # Gamma(inf): min cycle mean = cmin if the min state has a self-loop, else the 2-cycle mean
    self_loop_min = np.where(c0a <= c1a, a < 1, b < 1)
    g_inf = np.where(self_loop_min, cmin, 0.5 * (c0a + c1a))
    rho_fn = _rho_two_state_numeric()
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        dfin = np.where(np.isfinite(da) & (da > 0), da, 1.0)
        # rho is homogeneous of degree 1 in (x0, x1): evaluate with two shifts and keep
        # the finite one.  Shift by c_min (x in (0, 1]) fails only when the min state has
        # no self-loop and the other x underflows; the mid-point shift fails only when
        # delta |c0 - c1| / 2 overflows exp.
        x0 = np.exp(-dfin * (c0a - cmin))
        x1 = np.exp(-dfin * (c1a - cmin))
        val_min = cmin - np.log(rho_fn(a, b, x0, x1)) / dfin
        cbar = 0.5 * (c0a + c1a)
        y0 = np.exp(-dfin * (c0a - cbar))
        y1 = np.exp(-dfin * (c1a - cbar))
        val_mid = cbar - np.log(rho_fn(a, b, y0, y1)) / dfin
        val = np.where(np.isfinite(val_min), val_min, val_mid)
        # both shifts fail only if the min state has no self-loop (p = 1) and
        # delta |c0 - c1| > ~1418: with u = exp(-delta (c_max - c_min)), q = p01 p10 and
        # s = the other state's self-loop probability, the Perron root is
        # rho = sqrt(u) (s sqrt(u) + sqrt(s^2 u + 4 q)) / 2  (same expression, sqrt(u) factored)
        bad = ~np.isfinite(val)
        if np.any(bad):
            L = dfin * np.abs(c0a - c1a)
            s_other = np.where(c0a <= c1a, 1.0 - b, 1.0 - a)
            su = np.exp(-0.5 * L)
            log_rho = -0.5 * L + np.log(0.5 * (s_other * su + np.sqrt(s_other**2 * su * su + 4.0 * a * b)))
            val = np.where(bad, cmin - log_rho / dfin, val)
    val = np.where(da == 0, mean, np.where(np.isinf(da), g_inf, val))
    if np.any(~np.isfinite(val)):
        raise SolveError("two-state effective capacity underflowed; use delta=inf for the limit")
    return float(val) if scalar else val


def delta_for_rate_two_state(p01, p10, c0, c1, rate) -> float:
    """Inverse of :func:`effective_capacity_two_state`: smallest delta giving ``rate``."""
    P = two_state_matrix(p01, p10)
    c0 = check_real("c0", c0, 0.0)
    c1 = check_real("c1", c1, 0.0)
    rate = check_real("rate", rate, 0.0)
    a, b = P[0, 1], P[1, 0]
    mean = (b * c0 + a * c1) / (a + b)
    g_inf = float(effective_capacity_two_state(a, b, c0, c1, np.inf))
    return _solve_delta(
        lambda d: float(effective_capacity_two_state(a, b, c0, c1, d)), rate, g_inf, mean, "the two-state chain"
    )
