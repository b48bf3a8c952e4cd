r"""Effective capacity of a Markov-modulated service process, exactly (seed 004, eqs. 23-24).

The server of :mod:`.modulating_chain` serves :math:`C_i = c(X_i)` packets in slot
:math:`i`.  Eq. (23) of Shakkottai et al. (2001) defines

.. math::

    \Gamma_{\rm eff}(\delta) = -\frac{1}{\delta}\lim_{n\to\infty}\frac{1}{n+1}
        \log E\exp\Big(-\delta\sum_{i=0}^{n} C_i\Big).

For a finite irreducible chain :math:`E\exp(-\delta\sum C_i) = \pi D (PD)^n \mathbf 1`
with :math:`D = \mathrm{diag}(e^{-\delta c})`, so by Perron-Frobenius

.. math::  \Gamma_{\rm eff}(\delta) = -\frac{1}{\delta}\log\rho\big(P\,\mathrm{diag}(e^{-\delta c})\big).

Numerically we shift by :math:`c_{\min}` (:math:`D_s = \mathrm{diag}(e^{-\delta(c-c_{\min})})`,
entries in (0, 1]) so nothing overflows for large :math:`\delta`:
:math:`\Gamma = c_{\min} - \log\rho(P D_s)/\delta`, with the Perron root certified by a
Collatz-Wielandt bracket (:mod:`._perron_root`) that the result carries.
Eq. (24), the same expectation over a finite block of :math:`M` slots, is
:func:`effective_capacity_eq24` (what the block estimator of eq. 25 estimates).

Limits: :math:`\Gamma(0^+) = E C` (stationary mean); :math:`\Gamma(\infty)` is the
**minimum cycle mean** of :math:`c` on the transition graph of :math:`P` (Karp).  This
equals :math:`C_{\min}` -- the limit the paper states -- exactly when some minimum-capacity
state has a self-loop (:math:`P_{ii} > 0`); for a chain forced to leave the low state it is
larger.  :math:`\Gamma` is non-increasing in :math:`\delta`.

Units: :math:`\Gamma` has the units of ``c`` (packets per slot); :math:`\delta` has units
of 1 / (unit of ``c`` x slot), i.e. "per packet" when ``c`` counts packets per slot, which
is the unit of the QoS link :math:`\delta = -\log\epsilon / B_{\max}` with
:math:`B_{\max}` in packets (:mod:`.qos_exponent`).

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

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numba import njit

from .._validate import check_int, check_real
from ..errors import SolveError
from ._perron_root import perron_root
from .modulating_chain import _as_chain, _is_model, _model_or_chain, _stationary, stationary_mean

__all__ = [
    "EffectiveCapacityResult",
    "effective_capacity",
    "effective_capacity_solve",
    "effective_capacity_limits",
    "effective_capacity_eq24",
    "min_cycle_mean",
]


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


def _check_delta(delta, allow_inf=True) -> float:
    return check_real("delta", delta, 0.0, allow_inf=allow_inf)


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
    rho, lo, hi, method = perron_root(Pm, d, sparse)
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
    rho, lo, hi, method = perron_root(np.clip(A, 0.0, None), np.ones(c.size), False)
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
