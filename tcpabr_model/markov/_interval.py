"""Within-interval dynamics of (A, B, D) over one round-trip delay (numba kernels).

Derivation and every modelling choice: ``docs/model.md`` sections 3-4.  Plain scalars
and arrays in, tuples out; no validation here (the public API validates).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

EPS = 1e-9  # tolerance on event times (multiples of the service times)

# feedback modes understood by the kernels
MODE_ABR = 0       # ABR source with segmentation buffer (instcap or constant rate)
MODE_TCP_ALONE = 1  # no segmentation buffer, ACK-clocked bursts at infinite host speed


@njit(cache=True)
def fill_arrivals(mode, a, d, n_inc, s, delta, out, phase=0.0):
    """Arrival times at the bottleneck during (T_k, T_k + Delta); returns their count.

    ABR (eq. 10): the source sends ``min(a + d + N, floor(Delta / s))`` packets
    back-to-back at spacing ``s`` from the start of the interval.
    TCP alone: the ``d`` ACKs return at spacing ``g = min(s, Delta / d)`` (``s`` is the
    bottleneck service time one interval earlier, i.e. the ACK clock); each ACK releases
    one packet and the last ``N`` ACKs release two (the window increments).  ``phase``
    (TCP alone): the ACKs return at ``(i + phase) g``; 0 is the default ACK clock
    starting at T_k, 1 starts it one spacing later (docs/model.md sec. 3).
    """
    if mode == MODE_ABR:
        n = a + d + n_inc
        nmax = int(math.floor(delta / s + EPS))
        if n > nmax:
            n = nmax
        for i in range(n):
            out[i] = i * s
        return n
    # TCP alone
    if d == 0:
        return 0
    g = s
    if d * s > delta + EPS:
        g = delta / d
    k = 0
    for i in range(d):
        t = (i + phase) * g
        out[k] = t
        k += 1
        if i >= d - n_inc:
            out[k] = t
            k += 1
    return k


@njit(cache=True)
def bottleneck(b0, arrivals, n, r, bmax, delta):
    """FIFO bottleneck with deterministic service time ``r`` over one interval.

    ``b0`` packets are present at time 0 (capacity ``bmax`` counts the one in
    service); arrivals at the given times.  Departures are processed before an
    arrival at the same instant.  Returns ``(lost, j_loss, b_end, departed)`` where
    ``j_loss`` is the number of arrivals admitted before the first loss (-1 if none),
    ``b_end`` the packets present at ``Delta`` and ``departed`` the service completions
    in ``(0, Delta]``.  A packet whose service straddles Delta stays counted in ``b_end``
    (assumption III-B.2).
    """
    q = b0
    next_dep = r if q > 0 else np.inf
    departed = 0
    for i in range(n):
        t = arrivals[i]
        while next_dep <= t + EPS:
            q -= 1
            departed += 1
            next_dep = next_dep + r if q > 0 else np.inf
        if q >= bmax:
            return True, i, q, departed
        q += 1
        if q == 1:
            next_dep = t + r
    while next_dep <= delta + EPS:
        q -= 1
        departed += 1
        next_dep = next_dep + r if q > 0 else np.inf
    return False, -1, q, departed


@njit(cache=True)
def interval_outcome(mode, a, b, d, n_inc, r, s, bmax, delta, work, phase=0.0):
    """Outcome of one interval given the state and the window increment ``N``.

    Returns ``(lost, j_loss, a1, b1, d1)``: without loss, the next ``(A, B, D)``
    (eq. 10 for A; B and D derived in docs/model.md, eqs. M3-M4); with loss, ``j_loss``
    packets entered the bottleneck before the first lost one.
    """
    n = fill_arrivals(mode, a, d, n_inc, s, delta, work, phase)
    lost, j_loss, b_end, departed = bottleneck(b, work, n, r, bmax, delta)
    if lost:
        return True, j_loss, 0, 0, 0
    if mode == MODE_ABR:
        a1 = a + d + n_inc - n
    else:
        a1 = 0
    return False, -1, a1, b_end, departed


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
    tot = 0.0
    for k in range(n + 1):
        tot += out[k]
    for k in range(n + 1):
        out[k] /= tot


@njit(cache=True)
def ceil_log2(m):
    """ceil(log2 m) for integer m >= 1."""
    k = 0
    v = 1
    while v < m:
        v *= 2
        k += 1
    return k
