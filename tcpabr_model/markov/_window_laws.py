"""The binomial laws of the window (numba kernels): the increment law of eq. 10 and the
loss-window law alpha(x; w) of eq. 11.

Between losses the window grows by ``N = min(Binomial(D, 1/W), W_max - W)`` (eq. 10);
after a loss it reaches ``w = min(W + N + Binomial(B + J, 1/W), W_max)`` (docs/model.md
sec. 4, eq. M3), which sets the threshold ``m = ceil(w / 2)`` of the regeneration state
(0, 0, m) of eq. 13.  Binomial terms below ``PMF_TAIL`` are dropped and the rest
renormalised; the laws are evaluated only on the window where their terms reach
``WINDOW_TAIL`` (docs/model.md sec. 5a, item 3).
"""

from __future__ import annotations

import math

from numba import njit

from ._interval import ceil_log2

PMF_TAIL = 1e-17  # binomial terms below this are dropped and the rest renormalised
WINDOW_TAIL = 1e-21  # binomial terms are evaluated down to this (below PMF_TAIL, see above)


@njit(cache=True, inline="always")
def _normalise(out, lo, hi):
    """Divide ``out[lo..hi]`` by its sum."""
    tot = 0.0
    for k in range(lo, hi + 1):
        tot += out[k]
    for k in range(lo, hi + 1):
        out[k] /= tot


@njit(cache=True)
def binomial_mode(n, p):
    """(mode, pmf at the mode, p / (1 - p)) of Binomial(n, p), 0 < p < 1, n >= 1."""
    mode = int(math.floor((n + 1) * p))
    if mode > n:
        mode = n
    lp = math.log(p)
    lq = math.log1p(-p)
    lmode = (math.lgamma(n + 1.0) - math.lgamma(mode + 1.0) - math.lgamma(n - mode + 1.0)
             + mode * lp + (n - mode) * lq)
    return mode, math.exp(lmode), p / (1.0 - p)


@njit(cache=True)
def binomial_pmf(n, p, out):
    """pmf of Binomial(n, p) into ``out[0..n]`` (stable recursion from the mode)."""
    for k in range(n + 1):
        out[k] = 0.0
    if n == 0:
        out[0] = 1.0
        return
    if p >= 1.0:
        out[n] = 1.0
        return
    if p <= 0.0:
        out[0] = 1.0
        return
    mode, pm, ratio = binomial_mode(n, p)
    out[mode] = pm
    for k in range(mode, n):
        out[k + 1] = out[k] * (n - k) / (k + 1.0) * ratio
    for k in range(mode, 0, -1):
        out[k - 1] = out[k] * k / ((n - k + 1.0) * ratio)
    _normalise(out, 0, n)


@njit(cache=True)
def binomial_window(n, p, out):
    """Binomial(n, p) on the window ``[lo, hi]`` of terms >= 1e-21 (normalised there).

    Same recursion from the mode as :func:`binomial_pmf`; the terms left out
    are below 1e-21 and would be dropped by the 1e-17 tail rule, so the normalisation
    differs from the full law by less than n * 1e-21 relative.  Writes ``out[lo..hi]``
    only and returns ``(lo, hi)``.
    """
    if n == 0 or p <= 0.0:
        out[0] = 1.0
        return 0, 0
    if p >= 1.0:
        out[n] = 1.0
        return n, n
    mode, pm, ratio = binomial_mode(n, p)
    out[mode] = pm
    hi = mode
    while hi < n and out[hi] >= WINDOW_TAIL:
        out[hi + 1] = out[hi] * (n - hi) / (hi + 1.0) * ratio
        hi += 1
    lo = mode
    while lo > 0 and out[lo] >= WINDOW_TAIL:
        out[lo - 1] = out[lo] * lo / ((n - lo + 1.0) * ratio)
        lo -= 1
    _normalise(out, lo, hi)
    return lo, hi


@njit(cache=True)
def increment_law(d, w0, wmax, pmf):
    """Law of N = min(Binomial(d, 1/W), W_max - W) after the 1e-17 tail rule (eq. 10).

    Writes ``pmf[lo..hi]`` (zeros inside allowed) and returns ``(lo, hi)``.
    """
    room = wmax - w0
    lo, hi = binomial_window(d, 1.0 / w0, pmf)
    if d > room:
        extra = 0.0
        for k in range(max(lo, room + 1), hi + 1):
            extra += pmf[k]
        if room < lo:
            pmf[room] = extra
            lo = room
            hi = room
        elif room <= hi:
            pmf[room] += extra
            hi = room
    for k in range(lo, hi + 1):
        if pmf[k] < PMF_TAIL:
            pmf[k] = 0.0
    _normalise(pmf, lo, hi)
    return lo, hi


@njit(cache=True, inline="always")
def add_loss_windows(pn, pmf_k, klo, khi, w_base, wmax, lossm, mlo, mhi):
    """Add one loss outcome of probability ``pn`` to the law of m = ceil(w / 2) (eq. 11).

    ``pmf_k[klo..khi]`` is the law of the ACK-driven growth ``Binomial(b + J, 1/W)``
    (:func:`binomial_window`) and ``w_base = W + N``, so ``w = min(w_base + k, W_max)``
    (eq. M3); terms below ``PMF_TAIL`` are skipped.  Adds ``pn P(m)`` to ``lossm[m]`` and
    returns the conditional expectations given the loss of ``w``, of the slow-start packets
    ``2^ceil(log2 m) - 1`` (eq. 17) and of the cycle length ``3 + ceil(log2 m)`` (eq. 20),
    with the touched range ``mlo..mhi`` of ``lossm`` widened.
    """
    ew = 0.0
    ess = 0.0
    eul = 0.0
    for k in range(klo, khi + 1):
        pk = pmf_k[k]
        if pk < PMF_TAIL:
            continue
        w = w_base + k
        if w > wmax:
            w = wmax
        m = (w + 1) // 2
        lossm[m] += pn * pk
        if m < mlo:
            mlo = m
        if m > mhi:
            mhi = m
        ew += pk * w
        c = ceil_log2(m)
        ess += pk * ((1 << c) - 1)
        eul += pk * (3 + c)
    return ew, ess, eul, mlo, mhi
