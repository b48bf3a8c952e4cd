r"""The QoS exponent :math:`\delta` of eq. 23 (seed 004 Sec. IV).

From the loss target, :math:`\delta = -\log\epsilon / B_{\max}` (:func:`qos_delta`), or,
as in the paper's Sec. IV experiment, as the smallest :math:`\delta` whose effective
capacity equals a given rate :math:`\mu` (the inverse of eq. 23: :func:`delta_for_rate`
for a chain or a CapacityModel, :func:`delta_for_rate_two_state` through the two-state
closed form).  :math:`\Gamma` is non-increasing in :math:`\delta`, so the inverse is a
bracketed root search on :math:`(\Gamma(\infty), E C]`.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq

from .._validate import check_probability, check_real
from ..errors import ModelError
from .chain_effective_capacity import _min_cycle_mean, effective_capacity, effective_capacity_limits
from .modulating_chain import _as_chain, _model_or_chain, _stationary
from .two_state_closed_form import effective_capacity_two_state, two_state_matrix

__all__ = [
    "qos_delta",
    "delta_for_rate",
    "delta_for_rate_two_state",
]


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
