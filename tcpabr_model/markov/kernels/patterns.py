"""TCP alone over service patterns: the build's shared-prefix replays of an interval
(docs/model.md sec. 11) and the queue's exact integral along them (sec. 13).  Numba kernels,
plain arrays in, numbers out; :func:`~.interval.pattern_tcp_alone_outcome` is the one-call
replay they equal."""

from __future__ import annotations

import numpy as np
from numba import njit

from .interval import EPS

#: entries (int64) of :func:`ack_opportunity_table` at most, 32 MB; above it the prefix merges the
#: ACK times with the opportunities itself, as it did before the table (the same integers)
ACK_TABLE_CAP = 1 << 22


@njit(cache=True)
def ack_opportunity_table(opp_ptr, opp, use=True):
    """``tab[p, q, i]``: the index in ``opp`` of pattern ``p``'s first opportunity after pattern
    ``q``'s ``i``-th time (``EPS`` included): the ``jt`` of :func:`pattern_tcp_alone_prefix` when the
    ACKs return at ``q``'s times.  It depends on neither the state nor psi, so the build merges each
    pair of patterns once instead of once per (state, pattern, ACK pattern).  Shape ``(0, 0, 0)``
    where it would exceed ``ACK_TABLE_CAP`` entries, or without ``use`` (over ABR)."""
    npat = opp_ptr.shape[0] - 1
    lm = 0
    for q in range(npat):
        lm = max(lm, opp_ptr[q + 1] - opp_ptr[q])
    if npat * npat * lm > ACK_TABLE_CAP or not use:
        return np.empty((0, 0, 0), dtype=np.int64)
    tab = np.empty((npat, npat, lm), dtype=np.int64)
    for p in range(npat):
        for q in range(npat):
            j = opp_ptr[p]
            for i in range(opp_ptr[q + 1] - opp_ptr[q]):
                t = opp[opp_ptr[q] + i]
                while j < opp_ptr[p + 1] and opp[j] <= t + EPS:
                    j += 1
                tab[p, q, i] = j
    return tab


@njit(cache=True, inline="always")
def pattern_tcp_alone_prefix(b, d, g, opp, o0, o1, bmax, phase, a0, a1, lmin, lmax, pre, jt, row, at=None,
                             pre_area=None, cs=None, tab=None, pq=(0, 0)):
    """The first ``lmax`` ACKs of :func:`pattern_tcp_alone_outcome` as single ACKs, for every
    window increment ``N`` with ``d - N`` in ``lmin..lmax`` at once (the build's speed-up,
    docs/model.md sec. 11: an increment doubles the last ``N`` ACKs only).

    ``jt[row, i]`` receives the opportunity index after ACK ``i``'s time (the ``j`` of
    :func:`pattern_tcp_alone_outcome` after its ``while`` loop at ACK ``i``, which does not
    depend on the queue), ``i = 0..d - 1``; between two ACKs the queue only drains, so the
    opportunities ``j..jt[row, i] - 1`` serve ``min(q, jt[row, i] - j)`` packets.
    ``pre[row, L]`` receives ``(q, j, departed)`` before ACK ``L``, ``L = lmin..lmax``.
    Returns the index of the first lost single ACK, or ``lmax`` when none of the ``lmax`` is
    lost: with ``L = d - N`` single ACKs the outcome is a loss with ``j_loss`` that index
    when it is below ``L``, else :func:`pattern_tcp_alone_resume` from ``pre[row, L]``.  A loss
    at an index ``i < lmin`` leaves ``(q, j)`` before ACK ``i`` in ``pre[row, i, :2]``: with
    ``pre[row, lmin]`` the start of :func:`~.recovery.pattern_tcp_alone_loss_prefix` (no loss before).
    Integer counts of the same events: the same outcome as :func:`pattern_tcp_alone_outcome`.

    With ``at`` (float, ``at[row, i]`` receives ACK ``i``'s time), ``pre_area`` and ``cs`` (the
    cumulative sums of ``opp``, ``cs[k] = opp[0] + ... + opp[k - 1]``): ``pre_area[row, L]``
    receives the integral of the queue (packets present, from arrival to the opportunity that
    serves them) from 0 to ACK ``L``'s time (docs/model.md sec. 13: the exact integral with
    service patterns); between two ACKs the ``served`` departures at ``opp[j..j + served - 1]``
    take ``q (t - t_prev) - served t + sum of their times`` off, O(1) by ``cs``.

    ``tab`` (:func:`ack_opportunity_table`) and ``pq``, the indices of the service and the ACK
    patterns: ``jt`` is read from the table where the ACKs return at the ACK pattern's times."""
    acks = a1 - a0 >= d
    if acks and tab is not None and tab.shape[0] > 0:
        for i in range(d):
            jt[row, i] = tab[pq[0], pq[1], i]
            if at is not None:
                at[row, i] = opp[a0 + i]
    else:
        j = o0
        for i in range(d):
            t = opp[a0 + i] if acks else (i + phase) * g
            while j < o1 and opp[j] <= t + EPS:
                j += 1
            jt[row, i] = j
            if at is not None:
                at[row, i] = t
    q = b
    j = o0
    departed = 0
    area = 0.0
    for i in range(lmax):
        if i >= lmin:
            pre[row, i, 0] = q
            pre[row, i, 1] = j
            pre[row, i, 2] = departed
            if pre_area is not None:
                pre_area[row, i] = area
        q0, j0 = q, j
        q, j, departed, area = _serve_to_ack(q, j, departed, area, jt, row, i, at, cs)
        if q >= bmax:
            if i < lmin:    # the state before the lost ACK, where the loss interval's prefix starts
                pre[row, i, 0] = q0
                pre[row, i, 1] = j0
            return i
        q += 1
    pre[row, lmax, 0] = q
    pre[row, lmax, 1] = j
    pre[row, lmax, 2] = departed
    if pre_area is not None:
        pre_area[row, lmax] = area
    return lmax


@njit(cache=True, inline="always")
def _gap_area(q, served, j, t, t_prev, cs):
    """The queue's integral from ``t_prev`` to ``t`` starting at ``q`` packets, ``served`` of them
    leaving at the opportunities ``j, j + 1, ..`` (times summed by ``cs``)."""
    return q * (t - t_prev) - served * t + (cs[j + served] - cs[j])


@njit(cache=True, inline="always")
def _serve_to_ack(q, j, departed, area, jt, row, i, at, cs):
    """The departures before ACK ``i`` (the opportunities ``j..jt[row, i] - 1`` serve
    ``min(q, jt[row, i] - j)``) and, with ``at``, the queue's integral over the gap since ACK
    ``i - 1``: ``(q, j, departed, area)`` after them."""
    nj = jt[row, i]
    served = nj - j if nj - j < q else q
    if at is not None:
        area += _gap_area(q, served, j, at[row, i], at[row, i - 1] if i > 0 else 0.0, cs)
    return q - served, nj, departed + served, area


@njit(cache=True, inline="always")
def pattern_tcp_alone_resume(d, L, o1, bmax, q, j, departed, jt, row, area=0.0, at=None, cs=None, delta=0.0):
    """:func:`pattern_tcp_alone_outcome` with ``ninc = d - L`` from the state ``(q, j,
    departed)`` before ACK ``L`` (:func:`pattern_tcp_alone_prefix`, no loss among the ``L``
    single ACKs): the doubled ACKs ``L..d - 1`` and the rest of the pattern, O(d - L).
    Returns ``(lost, j_loss, b1, d1, area)``: with ``at`` and ``cs`` (the prefix's), ``area`` is
    the queue's integral over the whole interval ``(0, delta]`` from the prefix's ``area``
    (loss-free outcomes; unchanged otherwise)."""
    k = L
    for i in range(L, d):
        q, j, departed, area = _serve_to_ack(q, j, departed, area, jt, row, i, at, cs)
        if q >= bmax:
            return True, k, 0, 0, area
        q += 1
        k += 1
        if q >= bmax:
            return True, k, 0, 0, area
        q += 1
        k += 1
    rest = o1 - j
    dep = rest if rest < q else q
    if at is not None:
        area += _gap_area(q, dep, j, delta, at[row, d - 1] if d > 0 else 0.0, cs)
    return False, -1, q - dep, departed + dep, area
