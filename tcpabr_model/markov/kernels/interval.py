"""One round-trip interval of the embedded chain (numba kernels): the dynamics of (A, B, D)
and the binomial laws of the window.

Derivation and every modelling choice: ``docs/model.md`` sections 3-4.

* Dynamics (sec. 3): the event replay of one interval (:func:`interval_outcome`: the
  reference, used by the embedded Monte Carlo and the tests) and the forms the chain
  build uses, O(1) per window increment over ABR (:func:`abr_table_entry`, eqs. M5-M6)
  and O(log d) for TCP alone (:func:`tcp_alone_outcome`, eq. M7; sec. 5a).
* Window laws (sec. 4): the increment ``N = min(Binomial(D, 1/W), W_max - W)`` of eq. 10
  (:func:`increment_law`) and, after a loss, the window reached
  ``w = min(W + N + Binomial(B + J, 1/W), W_max)`` (eq. M3), whose law alpha(x; w) of
  eq. 11 sets the threshold ``m = ceil(w / 2)`` of the regeneration state (0, 0, m) of
  eq. 13 (:func:`add_loss_windows`).  Binomial terms below ``PMF_TAIL`` are dropped and
  the rest renormalised; the laws are evaluated only where their terms reach
  ``WINDOW_TAIL`` (sec. 5a, item 3).

Plain scalars and arrays in, tuples out; no validation here (the public API validates).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

EPS = 1e-9  # tolerance on event times (multiples of the service times)

# feedback modes understood by the kernels
MODE_ABR = 0       # ABR source with segmentation buffer (instcap or constant rate)
MODE_TCP_ALONE = 1  # no segmentation buffer, ACK-clocked bursts at infinite host speed

PMF_TAIL = 1e-17  # binomial terms below this are dropped and the rest renormalised
WINDOW_TAIL = 1e-21  # binomial terms are evaluated down to this (below PMF_TAIL, see above)


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
    """(i_L, K, tau0) for ABR arrivals 0, s, 2s, ... (M = floor(Delta/s) of them), b queued.

    ``i_L``: index of the first lost arrival (= packets admitted before it), -1 if none
    of the M arrivals is lost; ``K``: departures in (0, Delta] of the b queued packets and
    the arrivals admitted before the first loss; ``tau0``: the first departure after that
    loss (``inf`` without one; fast recovery, ``recovery.abr_after_loss``).  The same event
    rules as :func:`bottleneck` (departure before an arrival at the same instant).
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
            return i, departed + _drain(q, next_dep, r, delta), next_dep
        q += 1
        if q == 1:
            next_dep = t + r
    return -1, departed + _drain(q, next_dep, r, delta), np.inf


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


# --- the binomial laws of the window (eqs. 10-11) ------------------------------------------

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
def counter_window(n, p, out):
    """The window growth of ``n`` ACKs that count towards ``1 / p`` (``Scenario(ca_increment='counter')``,
    docs/model.md sec. 18): ``floor(U + n p)`` with the counter's phase ``U`` uniform on [0, 1), i.e.
    ``floor(n p)`` or one more with probability ``frac(n p)`` (the mean of ``Binomial(n, p)``, not its
    spread).  Writes ``out[lo..hi]`` and returns ``(lo, hi)``, as :func:`binomial_window`."""
    x = n * p
    lo = int(math.floor(x + 1e-12))
    frac = x - lo
    if lo >= n or frac <= 1e-12:
        lo = min(lo, n)
        out[lo] = 1.0
        return lo, lo
    out[lo] = 1.0 - frac
    out[lo + 1] = frac
    return lo, lo + 1


@njit(cache=True)
def growth_window(n, p, out, counter):
    """The law of the congestion-avoidance growth of ``n`` ACKs at ``p = 1/W``: eq. 1's coin per ACK,
    ``Binomial(n, p)`` (:func:`binomial_window`), or with ``counter`` the ACK counter of
    :func:`counter_window`."""
    if counter:
        return counter_window(n, p, out)
    return binomial_window(n, p, out)


@njit(cache=True)
def increment_law(d, w0, wmax, pmf, counter=False):
    """Law of N = min(Binomial(d, 1/W), W_max - W) after the 1e-17 tail rule (eq. 10); with
    ``counter`` the ACK counter's growth (:func:`counter_window`) in place of the binomial.

    Writes ``pmf[lo..hi]`` (zeros inside allowed) and returns ``(lo, hi)``.
    """
    room = wmax - w0
    lo, hi = growth_window(d, 1.0 / w0, pmf, counter)
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
    ew, ess, eul, lo, hi = loss_window_moments(pmf_k, 0, klo, khi, w_base, wmax)
    add_loss_mass(pn, pmf_k, 0, klo, khi, w_base, wmax, lossm)
    return ew, ess, eul, min(mlo, lo), max(mhi, hi)


@njit(cache=True)
def silence_at(silence, si):
    """``silence[si]``, or 0 without the table (docs/model.md sec. 11b; the kernels' ``silence=None``)."""
    if silence is None:
        return 0.0
    return silence[si]


@njit(cache=True, inline="always")
def loss_window_moments(pmf, off, klo, khi, w_base, wmax):
    """The expectations of :func:`add_loss_windows` without its ``lossm`` update, for the
    law ``pmf[off + k]``, ``k = klo..khi``: ``(ew, ess, eul, mlo, mhi)``, the same sums in
    the same order (bit for bit), and the range of ``m`` its terms reach (``mlo > mhi`` when
    every term is below ``PMF_TAIL``).  They depend on the loss outcome only through
    ``(B + J, N)``: the build computes them once per state and pair
    (``enumeration.build_skeleton``) and adds ``pn P(m)`` to ``lossm`` with
    :func:`add_loss_mass`."""
    ew = 0.0
    ess = 0.0
    eul = 0.0
    mlo = wmax + 1
    mhi = 0
    for k in range(klo, khi + 1):
        pk = pmf[off + k]
        if pk < PMF_TAIL:
            continue
        w = w_base + k
        if w > wmax:
            w = wmax
        m = (w + 1) // 2
        if m < mlo:
            mlo = m
        if m > mhi:
            mhi = m
        ew += pk * w
        c = ceil_log2(m)
        ess += pk * ((1 << c) - 1)
        eul += pk * (3 + c)
    return ew, ess, eul, mlo, mhi


@njit(cache=True, inline="always")
def add_loss_mass(pn, pmf, off, klo, khi, w_base, wmax, lossm):
    """``lossm[m] += pn P(m)`` of :func:`add_loss_windows` (the same additions in the same
    order) for the law ``pmf[off + k]``, ``k = klo..khi``."""
    for k in range(klo, khi + 1):
        pk = pmf[off + k]
        if pk < PMF_TAIL:
            continue
        w = w_base + k
        if w > wmax:
            w = wmax
        lossm[(w + 1) // 2] += pn * pk


# --- service at given opportunity times (docs/model.md sec. 11, issue 23) -------------------
# With a ServicePatterns the interval at level k serves at the opportunity times of one pattern
# of that level (drawn with its weight), not every 1 / c_k: an opportunity at time o sends the
# head packet if one is queued and is lost otherwise; a packet arriving at the same instant is
# not served by it (departures before arrivals, as above); an empty pattern serves nothing.
# Times in packet times at the peak level, in (0, Delta]; opp[o0:o1] is one pattern.

@njit(cache=True)
def pattern_abr_entry(b, opp, o0, o1, s, bmax, delta):
    """(i_L, K) of ABR arrivals ``0, s, 2s, ...`` (``floor(Delta / s)`` of them; none when
    the source's level is an outage, ``s = inf``) into ``b`` queued packets served at
    ``opp[o0:o1]``: the index of the first lost arrival (-1 if none) and the departures in
    ``(0, Delta]`` of the ``b`` packets and the arrivals admitted before that loss.  As in
    :func:`abr_table_entry`, a prefix of ``n`` arrivals (no loss) leaves
    ``min(b + n, K)`` departures: a packet's departure depends only on the packets before
    it."""
    m_arr = 0 if math.isinf(s) else int(math.floor(delta / s + EPS))
    q = b
    j = o0
    departed = 0
    for i in range(m_arr):
        t = i * s
        while j < o1 and opp[j] <= t + EPS:
            if q > 0:
                q -= 1
                departed += 1
            j += 1
        if q >= bmax:
            rest = o1 - j
            return i, departed + (rest if rest < q else q)
        q += 1
    rest = o1 - j
    return -1, departed + (rest if rest < q else q)


@njit(cache=True)
def pattern_tcp_alone_outcome(b, d, ninc, g, opp, o0, o1, bmax, phase, a0=0, a1=0):
    """(lost, j_loss, b1, d1) of TCP alone into ``b`` queued packets served at ``opp[o0:o1]``:
    the ``d`` ACKs each release one packet, the last ``ninc`` two.  The ACKs return at the
    first ``d`` opportunity times of ``opp[a0:a1]`` (a pattern of the previous interval's
    level: the departures that sent them, one round trip earlier) when it has at least
    ``d``, else at section 3's ACK clock ``(i + phase) g``.  ``j_loss``: arrivals admitted
    before the first loss; without loss ``b1`` packets remain at ``Delta`` and ``d1``
    departed."""
    q = b
    j = o0
    departed = 0
    k = 0
    acks = a1 - a0 >= d
    for i in range(d):
        t = opp[a0 + i] if acks else (i + phase) * g
        while j < o1 and opp[j] <= t + EPS:
            if q > 0:
                q -= 1
                departed += 1
            j += 1
        reps = 2 if i >= d - ninc else 1
        for _ in range(reps):
            if q >= bmax:
                return True, k, 0, 0
            q += 1
            k += 1
    rest = o1 - j
    dep = rest if rest < q else q
    return False, -1, q - dep, departed + dep
