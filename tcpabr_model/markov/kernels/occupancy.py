"""The bottleneck's occupancy inside a loss-free interval (numba kernels; docs/model.md
sec. 13, issue 26 item 2).

The integral of the queue B(t) over ``(0, Delta]`` of one loss-free interval is the sum,
over the packets present, of the time each spends in the bottleneck within the interval:
``sum_k (min(c_k, Delta) - t_k)`` with ``t_k`` its arrival (0 for the ``b`` packets queued at
the epoch) and ``c_k`` its departure (FIFO, deterministic service ``r``, the head packet
starting afresh at 0, III-B.2).  The departure times have closed forms (the Lindley
recursion ``c_k = max(c_{k-1}, t_k) + r`` for arrivals on a line), so the integral costs
O(1) over ABR and O(N) for TCP alone (the N doubled ACKs are replayed, as in
:func:`~.interval.tcp_alone_outcome`).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True, inline="always")
def _sum_min_line(alpha, beta, lo, hi, delta):
    """sum_{i=lo..hi} min(alpha + beta i, Delta) for beta > 0 (0 when hi < lo)."""
    if hi < lo:
        return 0.0
    ic = int(math.floor((delta - alpha) / beta)) if delta >= alpha + beta * lo else lo - 1
    top = hi if ic > hi else ic
    total = 0.0
    if top >= lo:
        m = top - lo + 1
        total += m * alpha + beta * (lo + top) * m / 2.0
    rest_lo = lo if top < lo else top + 1
    if hi >= rest_lo:
        total += (hi - rest_lo + 1) * delta
    return total


@njit(cache=True, inline="always")
def _queued_head(b, r, delta):
    """sum_{k=1..b} min(k r, Delta): the time the ``b`` packets queued at the epoch spend in
    the bottleneck within the interval."""
    return _sum_min_line(r, r, 0, b - 1, delta)


@njit(cache=True)
def abr_queue_integral(b, n, r, s, delta):
    """Integral of B over ``(0, Delta]`` of a loss-free ABR interval: ``b`` queued, ``n``
    arrivals at ``0, s, 2s, ...`` (eq. 10), service time ``r``.  The i-th arrival departs at
    ``c_i = max(r (b + i + 1), i s + r)`` (the backlog's end or its own arrival plus one
    service); the first form holds while ``i <= r b / (s - r)``."""
    total = _queued_head(b, r, delta)
    if n <= 0:
        return total
    if s <= r:
        split = n - 1
    else:
        split = int(math.floor(r * b / (s - r) + 1e-12))
        if split > n - 1:
            split = n - 1
    total += _sum_min_line(r * (b + 1), r, 0, split, delta)
    total += _sum_min_line(r, s, split + 1, n - 1, delta)
    return total - s * n * (n - 1) / 2.0


@njit(cache=True)
def tcp_alone_queue_integral(b, d, ninc, g, r, delta, phase):
    """Integral of B over ``(0, Delta]`` of a loss-free TCP-alone interval (docs/model.md sec.
    3): ``b`` queued, the ``d`` ACKs at ``(i + phase) g`` releasing one packet each, the last
    ``ninc`` two.  The singles' departures are the closed form of eq. M7,
    ``c = max(r (b + i + 1), phase g + (i + 1) r, (i + phase) g + r)``, two lines in i; the
    doubled arrivals are replayed."""
    total = _queued_head(b, r, delta)
    n_single = d - ninc
    c_prev = r * b
    if n_single > 0:
        a12 = max(r * (b + 1), phase * g + r)        # the two lines of slope r
        if g <= r:
            split = n_single - 1
        else:
            split = int(math.floor((a12 - phase * g - r) / (g - r) + 1e-12))
            if split > n_single - 1:
                split = n_single - 1
            if split < -1:
                split = -1
        total += _sum_min_line(a12, r, 0, split, delta)
        total += _sum_min_line(phase * g + r, g, split + 1, n_single - 1, delta)
        total -= g * (n_single * (n_single - 1) / 2.0 + phase * n_single)
        i = n_single - 1
        c_prev = max(a12 + r * i, (i + phase) * g + r)
    for i in range(n_single, d):
        t = (i + phase) * g
        for _ in range(2):
            c = (c_prev if c_prev > t else t) + r
            total += (c if c < delta else delta) - t
            c_prev = c
    return total


@njit(cache=True, inline="always")
def _serve_until(t, q, j, o1, opp, t_prev, total, eps):
    """Serve the opportunities ``opp[j:o1]`` up to ``t + eps``, adding ``q dt`` between events:
    the new ``(q, j, t_prev, total)``."""
    while j < o1 and opp[j] <= t + eps:
        tj = opp[j] if opp[j] > t_prev else t_prev
        total += q * (tj - t_prev)
        t_prev = tj
        if q > 0:
            q -= 1
        j += 1
    return q, j, t_prev, total


@njit(cache=True)
def pattern_abr_queue_integral(b, n, s, opp, o0, o1, delta, eps):
    """Integral of B over ``(0, Delta]`` of a loss-free ABR interval served at the opportunities
    ``opp[o0:o1]`` (a within-interval pattern, sec. 11): ``b`` queued, ``n`` arrivals at ``0, s,
    2s, ...``; an opportunity serves the head packet (if any) and, at equal times, comes before
    an arrival, as :func:`~.interval.pattern_abr_entry`.  An event replay, O(n + opportunities)."""
    q = b
    j = o0
    t_prev = 0.0
    total = 0.0
    for i in range(n):
        t = i * s
        q, j, t_prev, total = _serve_until(t, q, j, o1, opp, t_prev, total, eps)
        if t > t_prev:
            total += q * (t - t_prev)
            t_prev = t
        q += 1
    q, j, t_prev, total = _serve_until(delta, q, j, o1, opp, t_prev, total, eps)
    if delta > t_prev:
        total += q * (delta - t_prev)
    return total


@njit(cache=True)
def held_path(bmax, c, curve, t_h, t_a):
    """``service._held_path`` element by element (the same operations in the same order, so the same
    numbers): the queue from ``B_max`` gains ``c[i] / steps`` and loses the next interval's expected
    service ``curve[j + 1] - curve[j]`` per step, held in ``[0, B_max]``; returns its area up to
    ``t_h[i]`` intervals (in ``Delta`` x packets, flat after the first interval) and its level at
    ``t_a[i]``."""
    n = c.shape[0]
    steps = curve.shape[0] - 1
    area = np.zeros(n)
    q_at = np.zeros(n)
    for i in range(n):
        q = bmax
        a = 0.0
        th = t_h[i]
        ta = t_a[i]
        qa = q if ta <= 0.0 else 0.0
        ci = c[i] / steps
        for j in range(steps):
            q1 = min(max(q + ci - (curve[j + 1] - curve[j]), 0.0), bmax)
            f = min(max(th * steps - j, 0.0), 1.0)
            a += f * (q + 0.5 * f * (q1 - q)) / steps
            if ta > j / steps and ta <= (j + 1) / steps:
                fa = min(max(ta * steps - j, 0.0), 1.0)
                qa = q + fa * (q1 - q)
            q = q1
        area[i] = a + max(th - 1.0, 0.0) * q
        q_at[i] = q if ta > 1.0 else qa
    return area, q_at
