"""Within-interval dynamics of (A, B, D) over one round-trip delay (numba kernels).

Derivation and every modelling choice: ``docs/model.md`` sections 3-4.  Two forms of the
same rules: the event replay of one interval (:func:`interval_outcome`: the reference,
used by the embedded Monte Carlo and the tests) and the forms the chain build uses, O(1)
per window increment over ABR (:func:`abr_table_entry`, eqs. M5-M6) and O(log d) for TCP
alone (:func:`tcp_alone_outcome`, eq. M7; docs/model.md sec. 5a).  Plain scalars and
arrays in, tuples out; no validation here (the public API validates).
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
def ceil_log2(m):
    """ceil(log2 m) for integer m >= 1."""
    k = 0
    v = 1
    while v < m:
        v *= 2
        k += 1
    return k


@njit(cache=True)
def _drain(q, next_dep, r, delta):
    """Departures in (t, Delta] of a queue of ``q`` packets whose head leaves at ``next_dep``."""
    if q == 0 or next_dep > delta + EPS:
        return 0
    k = int(math.floor((delta + EPS - next_dep) / r)) + 1
    return k if k < q else q


@njit(cache=True)
def abr_table_entry(b, r, s, bmax, delta):
    """(i_L, K) for ABR arrivals 0, s, 2s, ... (M = floor(Delta/s) of them), b queued.

    ``i_L``: index of the first lost arrival (= packets admitted before it), -1 if none
    of the M arrivals is lost; ``K``: departures in (0, Delta] of the b queued packets and
    the arrivals admitted before the first loss.  The same event rules as
    :func:`bottleneck` (departure before an arrival at the same instant).
    """
    m_arr = int(math.floor(delta / s + EPS))
    q = b
    next_dep = r if q > 0 else np.inf
    departed = 0
    for i in range(m_arr):
        t = i * s
        while next_dep <= t + EPS:
            q -= 1
            departed += 1
            next_dep = next_dep + r if q > 0 else np.inf
        if q >= bmax:
            return i, departed + _drain(q, next_dep, r, delta)
        q += 1
        if q == 1:
            next_dep = t + r
    return -1, departed + _drain(q, next_dep, r, delta)


@njit(cache=True)
def _single_departure(k, b, r, g, phase):
    """Departure time of the k-th packet (1-based) when ``b`` are queued at 0 and single
    ACKs bring one packet each at ``(i + phase) g``: the Lindley recursion
    ``c = max(c_prev, t_i) + r`` in closed form (docs/model.md sec. 5a, eq. M7)."""
    if k <= b:
        return k * r
    i = k - b - 1
    c = k * r
    x = phase * g + (i + 1) * r
    if x > c:
        c = x
    y = (i + phase) * g + r
    if y > c:
        c = y
    return c


@njit(cache=True)
def _departed_by(t, m, b, r, g, phase):
    """Departures among the first ``m`` packets by time ``t`` (departures first at ties)."""
    lo = 0
    hi = m
    while lo < hi:  # the departure times are increasing: largest k with c_k <= t + EPS
        mid = (lo + hi + 1) // 2
        if _single_departure(mid, b, r, g, phase) <= t + EPS:
            lo = mid
        else:
            hi = mid - 1
    return lo


@njit(cache=True)
def _seen(i, b, r, g, phase):
    """Packets found by the i-th single arrival (0-based), before its admission."""
    return b + i - _departed_by((i + phase) * g, b + i, b, r, g, phase)


@njit(cache=True)
def tcp_alone_first_loss(b, d, g, r, bmax, phase):
    """Index of the first lost single-ACK arrival among ``d``, or ``d`` if none is lost.

    The queue seen by successive single arrivals is nondecreasing when ``g < r`` (at
    most one departure between two arrivals) and nonincreasing when ``g >= r`` (at least
    one while busy), so the first loss is found by bisection or at the first arrival.
    """
    if d == 0:
        return 0
    if g >= r:
        return 0 if _seen(0, b, r, g, phase) >= bmax else d
    if _seen(d - 1, b, r, g, phase) < bmax:
        return d
    lo = 0
    hi = d - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if _seen(mid, b, r, g, phase) >= bmax:
            hi = mid
        else:
            lo = mid + 1
    return lo


@njit(cache=True)
def tcp_alone_outcome(b, d, ninc, g, r, bmax, delta, lost_single, phase):
    """(lost, j_loss, b1, d1) for N = ``ninc`` doubled ACKs at the end (docs/model.md sec. 3).

    The queue after the ``L = d - N`` single arrivals comes from the closed form
    (O(log d)); only the ``2N`` doubled arrivals are replayed event by event.
    """
    L = d - ninc
    if lost_single < L:
        return True, lost_single, 0, 0
    if L == 0:
        q = b
        next_dep = r if q > 0 else np.inf
        departed = 0
    else:
        departed = _departed_by((L - 1 + phase) * g, b + L, b, r, g, phase)
        q = b + L - departed
        next_dep = _single_departure(departed + 1, b, r, g, phase) if q > 0 else np.inf
    k = L
    for i in range(L, d):
        t = (i + phase) * g
        for _ in range(2):
            while next_dep <= t + EPS:
                q -= 1
                departed += 1
                next_dep = next_dep + r if q > 0 else np.inf
            if q >= bmax:
                return True, k, 0, 0
            q += 1
            if q == 1:
                next_dep = t + r
            k += 1
    dep = departed + _drain(q, next_dep, r, delta)
    return False, -1, b + k - dep, dep
