"""The capacity process inside the kernels (private): one place for both kernels.

A port's available capacity is a piecewise-constant sample path drawn outside the kernels
(:func:`tcpabr_model.sim.capacity.capacity_path`): ``ptimes[p]``, the change epochs in
slots, increasing and ending with +inf, and ``pstate[p] = (index of the next change, current
state)``; the capacity in state ``s`` is ``caps[p, s]`` (normalised to the port's high
rate).  The kernels read the path only through :func:`cap_integral` and
:func:`path_cursor`.

Extension point (issue 15, not implemented): a K-level Markov chain or a replayed measured
trace needs only (a) a generator of ``(ptimes, next states)`` in Python and (b) replacing
the two-state rule ``s = 1 - s`` below by the next state read from an array; ``caps`` then
holds K levels.  Nothing else in the kernels depends on the number of levels.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._layout import BIG

__all__ = ["cap_integral", "path_cursor"]


@njit(cache=True, error_model="numpy")
def cap_integral(p, a, b, ptimes, pstate, caps):
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
        s = 1 - s       # the two-state process (see the module docstring for K levels)
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
