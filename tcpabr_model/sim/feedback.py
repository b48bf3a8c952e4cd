"""INSTCAP and EFFCAP rate feedback (Sections III-A and IV-A of the core paper).

Every measurement interval ``s`` the bottleneck measures the average available capacity
over that interval, ``x_k`` (normalised so that the high rate is 1).

INSTCAP
    feeds back ``x_k`` itself (the short-term average capacity).
EFFCAP, eq. (28)
    averages over ``N`` sliding blocks of ``M`` consecutive measurements and feeds back
    the minimum::

        A_j   = (x_{j-M+1} + ... + x_j) / M
        fb_k  = min(A_{k-N+1}, ..., A_k)

    so it needs the last ``M + N - 1`` measurements.  With ``M = N = 1`` it is INSTCAP.
    Before ``M`` (resp. ``N``) measurements exist, the available ones are used.

Section VI's notation: ``M : Delta`` means ``M = ceil(Delta / s)``
(:func:`m_from_delta`) and ``N : k Delta`` means ``N = (k - 1) ceil(Delta / s)``
(:func:`n_from_k`); e.g. Delta = 200 ms, s = 30 ms gives M = 7 and, for k = 8, N = 49.
"""

from __future__ import annotations

import math

import numpy as np

from .._validate import as_float_array, check_int, check_real

__all__ = ["m_from_delta", "n_from_k", "effcap_reference"]


def m_from_delta(delta: float, s: float) -> int:
    """``M : Delta`` of Section VI: ``ceil(Delta / s)`` measurement intervals.

    ``delta`` and ``s`` in the same time unit.  A ratio within 1e-9 of an integer is
    taken as that integer (so 0.24 / 0.03 gives 8, not 9).
    """
    delta = check_real("delta", delta, 0.0, low_open=True)
    s = check_real("s", s, 0.0, low_open=True)
    r = delta / s
    if abs(r - round(r)) < 1e-9 * max(1.0, r):
        return max(1, int(round(r)))
    return max(1, math.ceil(r))


def n_from_k(k: float, delta: float, s: float) -> int:
    """``N : k Delta`` of Section VI: ``(k - 1) ceil(Delta / s)`` averages (``k > 1``)."""
    k = check_real("k", k, 1.0, low_open=True)
    n = (k - 1.0) * m_from_delta(delta, s)
    if abs(n - round(n)) > 1e-9:
        raise ValueError(f"k={k!r} is invalid: (k - 1) * ceil(delta / s) must be an integer")
    return int(round(n))


def effcap_reference(x, m: int, n: int) -> np.ndarray:
    """Eq. (28) computed directly from a measurement series (the tests' oracle).

    Parameters
    ----------
    x : array_like(float, ndim=1)
        Measurements ``x_1 .. x_K`` (average capacity per interval s), K >= 1, finite.
    m, n : int
        Block length M and number of blocks N.

    Returns
    -------
    ndarray(float, ndim=1)
        ``fb_k`` for k = 1..K, summing each block oldest-first like the kernel.
    """
    m = check_int("m", m, 1)
    n = check_int("n", n, 1)
    x = as_float_array("x", x)
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"x.shape={x.shape} is invalid: must be a non-empty 1-D array")
    if not np.all(np.isfinite(x)):
        i = int(np.argmin(np.isfinite(x)))
        raise ValueError(f"x[{i}]={float(x[i])!r} is invalid: every measurement must be finite")
    a = np.empty(x.size)
    for j in range(x.size):
        lo = max(0, j - m + 1)
        s = 0.0
        for i in range(lo, j + 1):
            s += x[i]
        a[j] = s / (j + 1 - lo)
    out = np.empty(x.size)
    for k in range(x.size):
        out[k] = a[max(0, k - n + 1):k + 1].min()
    return out
