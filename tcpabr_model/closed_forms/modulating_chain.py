r"""The Markov-modulated service process of seed 004 Sec. IV: a slotted server whose
capacity :math:`C_i = c(X_i)` follows an irreducible Markov chain :math:`X` with
transition matrix :math:`P`.

Checks of ``(P, c)`` shared by the effective-capacity modules (square, stochastic rows to
``ROW_SUM_TOL``, finite capacities >= 0, irreducible), the two call forms ``f(P, c, x)``
and ``f(model, x)`` for a :class:`~tcpabr_model.capacity.CapacityModel`, and the
stationary law :math:`\pi = \pi P` with the mean capacity :math:`E C = \pi c` (the
:math:`\delta \to 0` limit of eq. 23).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit
from scipy.sparse.csgraph import connected_components

from .._validate import as_float_array
from ..errors import ErgodicityError

__all__ = [
    "ROW_SUM_TOL",
    "stationary_distribution",
    "stationary_mean",
]

#: tolerance on row sums of P
ROW_SUM_TOL = 1e-9


def _first_bad(P) -> str:
    """``[i, j]=v`` of the first entry of ``P`` (dense or sparse) that is not finite and >= 0."""
    if sp.issparse(P):
        P = sp.coo_array(P)
        k = int(np.argmax(~(np.isfinite(P.data) & (P.data >= 0))))
        i, j, v = int(P.row[k]), int(P.col[k]), float(P.data[k])
    else:
        i, j = (int(t) for t in np.argwhere(~(np.isfinite(P) & (P >= 0)))[0])
        v = float(P[i, j])
    return f"[{i}, {j}]={v!r}"


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
            raise ValueError(f"P{_first_bad(Pm)} is invalid: entries must be finite and non-negative")
        rows = np.asarray(Pm.sum(axis=1)).ravel()
        sparse = True
    else:
        Pm = np.ascontiguousarray(as_float_array("P", P))
        if Pm.ndim != 2 or Pm.shape[0] != Pm.shape[1] or Pm.shape[0] == 0:
            raise ValueError(f"P.shape={Pm.shape} is invalid: must be a non-empty square matrix")
        if not np.all(np.isfinite(Pm)) or Pm.min() < 0:
            raise ValueError(f"P{_first_bad(Pm)} is invalid: entries must be finite and non-negative")
        rows = Pm.sum(axis=1)
        n = Pm.shape[0]
        sparse = False
    if np.max(np.abs(rows - 1.0)) > ROW_SUM_TOL:
        i = int(np.argmax(np.abs(rows - 1.0)))
        raise ValueError(f"P[{i}, :].sum()={float(rows[i])!r} is invalid: every row must sum to 1 "
                         f"(to {ROW_SUM_TOL:g})")
    c = np.zeros(n) if c is None else np.ascontiguousarray(as_float_array("c", c).ravel())
    if c.shape != (n,):
        raise ValueError(f"c.shape={c.shape} is invalid: must be ({n},) to match P")
    if not np.all(np.isfinite(c)) or c.min() < 0:
        shown = c.tolist() if c.size <= 10 else f"array with {int(np.sum(~np.isfinite(c) | (c < 0)))} bad entries"
        raise ValueError(f"c={shown} is invalid: capacities must be finite and >= 0")
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
