"""The capacity process inside the kernels (private): one place for both kernels.

A port's available capacity is a piecewise-constant sample path drawn outside the kernels
(:class:`tcpabr_model.sim.capacity.CapacityPath`): ``ptimes[p]``, the change epochs in
slots, increasing and ending with +inf; ``pseq[p, i]``, the level index in force from
``ptimes[p, i]`` on; ``pstate[p] = (index of the next change, current level index)``; the
capacity at level ``k`` is ``caps[p, k]`` (normalised to the port's peak rate, so at most
one unit per slot).  K levels: the paper's two-state process (``caps = (1, low)`` and
``pseq`` alternating), a K-state Markov chain, or a replayed measured trace (issue 15).
The kernels read the path only through :func:`cap_integral` and :func:`path_cursor`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..arrays.layout import BIG

__all__ = ["cap_integral", "path_cursor"]


@njit(cache=True, error_model="numpy")
def cap_integral(p, a, b, ptimes, pseq, pstate, caps):
    """Integral of port ``p``'s normalised capacity over [a, b) slots; advances its path."""
    acc = 0.0
    x = float(a)
    fb = float(b)
    i = pstate[p, 0]
    s = pstate[p, 1]
    while ptimes[p, i] < fb:
        tc = ptimes[p, i]
        if tc > x:
            acc += caps[p, s] * (tc - x)
            x = tc
        s = pseq[p, i]  # the level in force after change i
        i += 1
    acc += caps[p, s] * (fb - x)
    pstate[p, 0] = i
    pstate[p, 1] = s
    return acc


@njit(cache=True, error_model="numpy")
def path_cursor(p, ptimes, pstate, caps):
    """(last slot t such that [t, t+1) holds no capacity change of port ``p``, current capacity)."""
    x = ptimes[p, pstate[p, 0]]
    if x >= 4.0e18:
        n = BIG
    else:
        n = np.int64(np.floor(x)) - 1
    return n, caps[p, pstate[p, 1]]
