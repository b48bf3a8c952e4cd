"""Fast retransmit and recovery in the embedded chain (``Scenario(tcp='sack')``; numba
kernels).  Derivation and every modelling choice: ``docs/model.md`` section 12 (issue 25).

A loss event carries a *code* ``c``: ``c = m`` (``1 <= m <= mmax``) is the paper's timeout
cycle to ``(0, 0, m)`` in ``3 + ceil(log2 m)`` round trips (eqs. 12-13); ``c = mmax + m`` and
``c = 2 mmax + m`` are fast-recovery cycles to ``(0, 0, m)`` in 2 and 3 round trips.  Without
fast recovery only ``c <= mmax`` occurs, and every number is the timeout-only engine's.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .interval import (EPS, MODE_ABR, MODE_TCP_ALONE, PMF_TAIL, _departed_by, _single_departure, abr_table_entry,
                       ceil_log2, fill_arrivals)

DUPTHRESH = 3  # duplicate ACKs that trigger fast retransmit (RFC 5681)
N_CODE_KINDS = 3  # timeout, fast recovery in 2 round trips, fast recovery in 3


@njit(cache=True, inline="always")
def code_m(c, mmax):
    """The regeneration window m of loss-event code ``c`` (state (0, 0, m) of eq. 13)."""
    return c - mmax * ((c - 1) // mmax)


@njit(cache=True, inline="always")
def code_u(c, mmax):
    """The cycle length U (round trips) of loss-event code ``c``: 3 + ceil(log2 m) for a
    timeout (eq. 12), 2 or 3 for fast recovery (docs/model.md sec. 12)."""
    kind = (c - 1) // mmax
    if kind == 0:
        return 3 + ceil_log2(c)
    return 1 + kind


@njit(cache=True, inline="always")
def _count_admissions(times, n, q, next_dep, r, bmax, admitted):
    """Arrivals ``times[:n]`` into a FIFO bottleneck of ``bmax`` places holding ``q`` packets,
    the next departure at ``next_dep`` (service ``r``; departures first at ties, as
    :func:`~.interval.bottleneck`), every arrival offered even after a loss.  Returns
    ``(J, admitted, lost)``: the admitted count at the first loss (``admitted`` plus all if
    none is lost), the admitted count at the end and the arrivals lost."""
    j_before = -1
    lost = 0
    for i in range(n):
        t = times[i]
        while next_dep <= t + EPS:
            q -= 1
            next_dep = next_dep + r if q > 0 else np.inf
        if q >= bmax:
            if j_before < 0:
                j_before = admitted
            lost += 1
            continue
        admitted += 1
        q += 1
        if q == 1:
            next_dep = t + r
    if j_before < 0:
        j_before = admitted
    return j_before, admitted, lost


@njit(cache=True, inline="always")
def _offer(q, bmax, j_before, admitted, lost):
    """One arrival offered to a bottleneck holding ``q`` of ``bmax`` packets (every arrival is
    offered, even after a loss): ``(q, j_before, admitted, lost)`` after it, ``j_before`` set
    to the admitted count at the first loss."""
    if q >= bmax:
        if j_before < 0:
            j_before = admitted
        return q, j_before, admitted, lost + 1
    return q + 1, j_before, admitted + 1, lost


@njit(cache=True)
def loss_interval_counts(mode, a, b, d, n_inc, r, s, bmax, delta, work, phase=0.0):
    """The whole loss interval, not only up to the first loss (docs/model.md sec. 12).

    Returns ``(J, J2, L, a1)``: arrivals admitted before the first loss (the ``j_loss`` of
    :func:`bottleneck`), arrivals admitted after it (behind the hole: each returns a
    duplicate ACK), arrivals lost (the first included) and, over ABR, the packets left in
    the segmentation buffer at ``Delta`` (sent in the next interval; 0 for TCP alone).
    ``b + J + J2 + L + a1 = W + N``.  Same event rules as :func:`bottleneck`.
    """
    n = fill_arrivals(mode, a, d, n_inc, s, delta, work, phase)
    j_before, admitted, lost = _count_admissions(work, n, b, r if b > 0 else np.inf, r, bmax, 0)
    a1 = a + d + n_inc - n if mode == MODE_ABR else 0
    return j_before, admitted - j_before, lost, a1


@njit(cache=True)
def abr_departure_at_loss(b, r, s, bmax, delta):
    """Time of the first departure after the first loss of ABR arrivals ``0, s, 2s, ...`` into
    ``b`` queued packets (:func:`~.interval.abr_table_entry`'s third value); ``inf`` if none
    of the ``floor(Delta / s)`` arrivals is lost."""
    return abr_table_entry(b, r, s, bmax, delta)[2]


@njit(cache=True, inline="always")
def abr_after_loss(n, il, r, s, tau0):
    """``(J2, L)`` of :func:`loss_interval_counts` for ABR in O(1) (docs/model.md sec. 12.1):
    ``n`` arrivals at ``0, s, ...``, the first lost at index ``il``, the next departure at
    ``tau0``; ``B_max >= 2`` (with one place the server idles after each departure: use
    :func:`loss_interval_counts`).  The queue is full at the loss.  A source faster than the link (``s < r``) sees
    at most one departure between two arrivals, and each departure admits the next arrival:
    ``J2`` = departures in ``(il s, (n - 1) s]``.  Otherwise every departure comes before the
    next arrival and only the first is lost."""
    rest = n - 1 - il
    if s >= r - EPS:
        return rest, 1
    t_last = (n - 1) * s
    j2 = 0
    if tau0 <= t_last + EPS:
        j2 = int(math.floor((t_last + EPS - tau0) / r)) + 1
    if j2 > rest:
        j2 = rest
    return j2, n - il - j2


@njit(cache=True, inline="always")
def add_recovery_windows(pn, pmf_k, klo, khi, w_base, wmax, lossm, mlo, mhi, mmax, n_lost, kind):
    """Add one loss outcome of probability ``pn`` of a SACK TCP to the law of the loss-event
    codes (docs/model.md sec. 12).

    The window reached is ``w = min(w_base + k, W_max)`` as in :func:`add_loss_windows`
    (eq. M3).  Fast retransmit when the packets of that window not lost in the interval,
    ``w - n_lost``, can return ``DUPTHRESH`` duplicate ACKs (each is behind the hole or its
    ACK releases one that is): code ``kind * mmax + m`` with ``m = floor(w / 2)`` (RFC 5681
    eq. 4; PRR ends recovery at ssthresh); else the timeout of eq. 12, code ``ceil(w / 2)``.
    ``kind`` 0: the retransmission cannot beat the timer (sec. 12.1 (M8')), every window times
    out; one with enough duplicate ACKs has entered the recovery first, and the timer halves
    the recovery's window: code ``ceil(floor(w / 2) / 2)`` (M8'').
    Returns the conditional expectations given the loss, ``(q_fr, ew_fr, q_to, ew_to,
    ess_to, eu)``: probability and E[w 1{FR}] of fast recovery, the same and E[S_ss 1{TO}]
    (eq. 17) of a timeout, and the expected cycle length; and the widened ``mlo..mhi``.
    """
    q_fr = 0.0
    ew_fr = 0.0
    q_to = 0.0
    ew_to = 0.0
    ess_to = 0.0
    eul = 0.0
    for k in range(klo, khi + 1):
        pk = pmf_k[k]
        if pk < PMF_TAIL:
            continue
        w = w_base + k
        if w > wmax:
            w = wmax
        if kind > 0 and w - n_lost >= DUPTHRESH:
            c = kind * mmax + w // 2
            q_fr += pk
            ew_fr += pk * w
            eul += pk * (1 + kind)
        else:
            if kind == 0 and w - n_lost >= DUPTHRESH:   # (M8''): recovery, then the timer (w >= 3: c >= 1)
                c = (w // 2 + 1) // 2
            else:
                c = (w + 1) // 2
            q_to += pk
            ew_to += pk * w
            cl = ceil_log2(c)
            ess_to += pk * ((1 << cl) - 1)
            eul += pk * (3 + cl)
        lossm[c] += pn * pk
        if c < mlo:
            mlo = c
        if c > mhi:
            mhi = c
    return q_fr, ew_fr, q_to, ew_to, ess_to, eul, mlo, mhi


@njit(cache=True, inline="always")
def go_back_n_copies(j2, n_lost):
    """The segments the receiver already holds that go-back-N sends again after the timeout of a loss
    interval with ``n_lost`` arrivals lost and ``j2`` admitted after the first loss (docs/model.md sec. 15d):
    ``max(min(J2, 2 L - 2) - 1, 0)``, 0 for one hole; exact for holes at every other arrival (a rate
    halved under a full buffer), above it for contiguous holes and below for sparser ones."""
    if n_lost < 2:
        return 0
    return max(min(j2, 2 * n_lost - 2) - 1, 0)


@njit(cache=True)
def abr_go_back_n_copies(n, jl, s, r, opp, o0, o1):
    """:func:`go_back_n_copies` of an ABR loss interval (docs/model.md sec. 15d): its ``n`` arrivals at
    ``0, s, 2s, ...`` meet a buffer full from the first loss (arrival ``jl``, at ``jl s``) on, so each
    departure up to the last arrival, ``(n - 1) s``, lets one more in: ``J2`` = the server's opportunities
    in ``(jl s, (n - 1) s]`` (``opp[o0:o1]``, a pattern's; ``opp`` None: an even server of period ``r``,
    to one departure: its phase is left out), the rest lost."""
    t1 = jl * s + EPS
    tn = (n - 1) * s + EPS
    if opp is None:
        k = int(math.floor(tn / r)) - int(math.floor(t1 / r))
    else:
        k = int(np.searchsorted(opp[o0:o1], tn, side="right") - np.searchsorted(opp[o0:o1], t1, side="right"))
    j2 = max(min(k, n - jl - 1), 0)
    return go_back_n_copies(j2, n - jl - j2)


@njit(cache=True)
def tcp_alone_after_loss(b, d, ninc, g, r, bmax, delta, lost_single, phase, work):
    """``(J, J2, L)`` of :func:`loss_interval_counts` for TCP alone (``a1`` is 0), in
    O(log d + N) where the replay costs O(d) (docs/model.md sec. 12.1).

    ``lost_single`` is :func:`~.interval.tcp_alone_first_loss` of the ``d - ninc`` single
    arrivals.  A loss among the doubled arrivals at the end is replayed from the first
    doubled ACK, the singles before it in closed form, as
    :func:`~.interval.tcp_alone_outcome` does.  A loss among the singles with ACKs denser
    than the service (``g < r``) leaves a full queue that admits one arrival per departure
    until the end (a doubled ACK's two packets arrive at once): ``J2`` = departures after the
    loss up to the last arrival, the server busy throughout when ``B_max >= 2``.  The
    remaining cases (a single ACK slower than the service, or a buffer of one packet, where
    the server idles after each departure) are replayed."""
    n_single = d - ninc
    if lost_single < n_single:
        if g >= r - EPS or bmax < 2:
            j, j2, lost, _ = loss_interval_counts(MODE_TCP_ALONE, 0, b, d, ninc, r, g, bmax, delta, work, phase)
            return j, j2, lost
        i0 = lost_single
        t_loss = (i0 + phase) * g
        k = _departed_by(t_loss, b + i0, b, r, g, phase)
        tau0 = _single_departure(k + 1, b, r, g, phase)
        rest = n_single - 1 - i0 + 2 * ninc
        t_last = (d - 1 + phase) * g
        j2 = 0
        if tau0 <= t_last + EPS:
            j2 = int(math.floor((t_last + EPS - tau0) / r)) + 1
        if j2 > rest:
            j2 = rest
        return i0, j2, rest + 1 - j2
    # the singles are all admitted: replay the doubled arrivals to the end of the interval
    if n_single == 0:
        q = b
        next_dep = r if q > 0 else np.inf
    else:
        departed = _departed_by((n_single - 1 + phase) * g, b + n_single, b, r, g, phase)
        q = b + n_single - departed
        next_dep = _single_departure(departed + 1, b, r, g, phase) if q > 0 else np.inf
    k = 0
    for i in range(n_single, d):   # the doubled ACKs' arrivals, two at each
        work[k] = (i + phase) * g
        work[k + 1] = work[k]
        k += 2
    j_before, admitted, lost = _count_admissions(work, k, q, next_dep, r, bmax, n_single)
    return j_before, admitted - j_before, lost


@njit(cache=True)
def pattern_loss_counts(mode, a, b, d, ninc, s, g, opp, o0, o1, bmax, delta, phase, a0, a1, work):
    """``(J, J2, L)`` of the whole loss interval with service at the opportunity times
    ``opp[o0:o1]`` (docs/model.md secs. 11-12): ABR arrivals ``0, s, 2s, ...`` (none at an
    outage level, ``s = inf``), TCP alone's ACKs at the first ``d`` times of the pattern
    ``opp[a0:a1]`` when it has that many, else at ``(i + phase) g``, the last ``ninc`` releasing
    two.  An opportunity sends the head packet if one is queued (departures before arrivals
    at the same instant), as :func:`~.interval.pattern_abr_entry`."""
    k = 0
    if mode == MODE_ABR:
        m_arr = 0 if math.isinf(s) else int(math.floor(delta / s + EPS))
        n = a + d + ninc
        if n > m_arr:
            n = m_arr
        for i in range(n):
            work[i] = i * s
        k = n
    else:
        acks = a1 - a0 >= d
        for i in range(d):
            t = opp[a0 + i] if acks else (i + phase) * g
            work[k] = t
            k += 1
            if i >= d - ninc:
                work[k] = t
                k += 1
    q = b
    j = o0
    j_before = -1
    admitted = 0
    lost = 0
    for i in range(k):
        t = work[i]
        while j < o1 and opp[j] <= t + EPS:
            if q > 0:
                q -= 1
            j += 1
        q, j_before, admitted, lost = _offer(q, bmax, j_before, admitted, lost)
    if j_before < 0:
        j_before = admitted
    return j_before, admitted - j_before, lost


@njit(cache=True, inline="always")
def pattern_tcp_alone_loss_prefix(i0, q, j, bmax, lmin, lmax, pre2, jt, row):
    """The single ACKs of :func:`pattern_loss_counts` for TCP alone (every arrival offered,
    even after a loss), for every ``N`` with ``d - N`` in ``lmin..lmax`` at once, from the
    opportunity indices ``jt[row, i]`` of :func:`~.patterns.pattern_tcp_alone_prefix` (between
    two ACKs the queue only drains: ``min(q, jt[row, i] - j)`` served).  ``pre2[row, L]``
    receives ``(q, j, J, admitted, lost)`` before ACK ``L`` (``J`` = -1 before the first loss),
    ``L = lmin..lmax``; :func:`pattern_tcp_alone_loss_resume` finishes the interval.  It starts
    before ACK ``i0 <= lmin`` from the queue ``q`` and opportunity index ``j`` there, with no loss
    before ``i0`` (so ``i0`` arrivals admitted): the state the loss-free prefix left (its first loss
    or ``lmin``), which the two replays share; ``i0 = 0`` with ``(b, o0)`` replays it all."""
    j_before = -1
    admitted = i0
    lost = 0
    for i in range(i0, lmax + 1):
        if i >= lmin:
            pre2[row, i, 0] = q
            pre2[row, i, 1] = j
            pre2[row, i, 2] = j_before
            pre2[row, i, 3] = admitted
            pre2[row, i, 4] = lost
        if i == lmax:
            break
        nj = jt[row, i]
        q -= nj - j if nj - j < q else q
        j = nj
        q, j_before, admitted, lost = _offer(q, bmax, j_before, admitted, lost)


@njit(cache=True, inline="always")
def pattern_tcp_alone_loss_resume(d, L, bmax, q, j, j_before, admitted, lost, jt, row):
    """``(J, J2, L)`` of :func:`pattern_loss_counts` for TCP alone with ``ninc = d - L``, from
    the state before ACK ``L`` (:func:`pattern_tcp_alone_loss_prefix`): the doubled ACKs
    ``L..d - 1``, two arrivals at each, in O(d - L)."""
    for i in range(L, d):
        nj = jt[row, i]
        q -= nj - j if nj - j < q else q
        j = nj
        for _ in range(2):
            q, j_before, admitted, lost = _offer(q, bmax, j_before, admitted, lost)
    if j_before < 0:
        j_before = admitted
    return j_before, admitted - j_before, lost
