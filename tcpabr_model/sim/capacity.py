"""Sample paths of the two-state available-capacity process (Sections II and V).

The bottleneck's available capacity alternates between a high state (the full link rate,
state 0) and a low state (state 1, ``rate_ratio`` times the high rate).  Two modes:

``continuous``
    Exponential sojourns with mean ``tau`` (seconds) in each state: a continuous-time
    Markov chain, valid for any ``psi = tau / Delta > 0`` including ``psi << 1``.
``embedded``
    Changes only at multiples of ``period`` (the round-trip delay Delta); at each such
    epoch the state switches with probability ``period / tau = 1 / psi``, so sojourns are
    geometric with mean ``psi`` periods.  This is the modulating chain of the analysis
    (Section III-B, assumption 1) and needs ``psi >= 1``.

Paths are returned as the increasing change epochs (in simulator slots, floats), ending
with ``+inf``; the state at time 0 is returned separately and toggles at every epoch.
Random numbers come from a :class:`numpy.random.Generator`, so a path is reproducible
from its seed.
"""

from __future__ import annotations

import numpy as np

from .._validate import check_choice, check_real

__all__ = ["capacity_path", "capacity_integral"]


def capacity_path(rng: np.random.Generator, horizon: float, tau: float, mode: str = "continuous",
                  period: float | None = None, initial: str = "stationary") -> tuple[np.ndarray, int]:
    """Draw the change epochs of the capacity process on ``[0, horizon)``.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness (the only one the simulator uses).
    horizon : float
        Length of the path, in the same time unit as ``tau`` (the simulator passes slots).
    tau : float
        Mean sojourn time in each state (symmetric chain, Section V).
    mode : {'continuous', 'embedded'}, optional(default='continuous')
    period : float, optional
        Embedding period (Delta) for ``mode='embedded'``; required there.
    initial : {'stationary', 'high', 'low'}, optional(default='stationary')
        State at time 0; 'stationary' draws it with probability 1/2 each.

    Returns
    -------
    times : ndarray(float, ndim=1)
        Change epochs in ``(0, horizon)``, increasing, followed by ``+inf``.
    state0 : int
        0 (high) or 1 (low) at time 0.
    """
    horizon = check_real("horizon", horizon, 0.0, low_open=True)
    tau = check_real("tau", tau, 0.0, low_open=True)
    check_choice("mode", mode, ("continuous", "embedded"))
    check_choice("initial", initial, ("stationary", "high", "low"))
    if initial == "stationary":
        state0 = int(rng.integers(0, 2))
    else:
        state0 = 0 if initial == "high" else 1
    chunks = []
    if mode == "continuous":
        t = 0.0
        est = int(horizon / tau) + 16
        while t < horizon:
            gaps = rng.exponential(tau, size=max(16, int(1.1 * est)))
            ts = t + np.cumsum(gaps)
            chunks.append(ts)
            t = float(ts[-1])
            est = int((horizon - t) / tau) + 16
    else:
        if period is None:
            raise ValueError("period=None is invalid: must be given for mode='embedded'")
        period = check_real("period", period, 0.0, low_open=True)
        p = period / tau
        if p > 1.0 + 1e-12:
            raise ValueError(f"tau={tau!r} is invalid: must be >= period={period!r} in embedded mode "
                             "(switch probability 1/psi per period needs psi >= 1)")
        p = min(p, 1.0)
        k = 0
        kmax = int(np.floor(horizon / period))
        est = int(kmax * p) + 16
        while k < kmax:
            steps = rng.geometric(p, size=max(16, int(1.1 * est)))
            ks = k + np.cumsum(steps)
            chunks.append(ks.astype(np.float64) * period)
            k = int(ks[-1])
            est = int((kmax - k) * p) + 16
    times = np.concatenate(chunks) if chunks else np.empty(0)
    times = times[times < horizon]
    return np.concatenate([times, [np.inf]]), state0


def capacity_integral(times: np.ndarray, state0: int, low: float, a: float, b: float) -> float:
    """Integral of the normalised capacity (1 high, ``low`` low) over ``[a, b)``.

    A plain-numpy reference used by the tests to check the kernel's measurements.
    """
    caps = (1.0, low)
    edges = np.concatenate([[0.0], times[np.isfinite(times)]])
    states = (state0 + np.arange(edges.size)) % 2
    ends = np.concatenate([edges[1:], [np.inf]])
    lo = np.clip(edges, a, b)
    hi = np.clip(ends, a, b)
    return float(sum(caps[s] * (h - l) for s, l, h in zip(states, lo, hi) if h > l))
