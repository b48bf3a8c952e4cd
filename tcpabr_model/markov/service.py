"""Expected service of the bottleneck over whole and fractional round-trip intervals, and
the queue of slow start: the sums that the caps of docs/model.md sec. 6, the drained and timer
cycles (secs. 14-15) and the timer cycle's occupancy (sec. 13) read.  Plain numpy on arrays."""

from __future__ import annotations

import numpy as np


def _service_sums(P: np.ndarray, served: np.ndarray, n: int) -> np.ndarray:
    """``C[j, i]``, j = 0..n: the packets the bottleneck is expected to serve in the ``j``
    intervals from one at level ``i`` (``sum_{l<j} P^l served``; the caps of docs/model.md
    sec. 6 and the drained cycle of sec. 14)."""
    C = np.zeros((n + 1, P.shape[0]))
    Pj = np.eye(P.shape[0])
    for j in range(1, n + 1):
        C[j] = C[j - 1] + Pj @ served
        Pj = Pj @ P
    return C


def _served_by(C: np.ndarray, ri: np.ndarray, t) -> np.ndarray:
    """``S_i(t)``: ``C[t, ri]`` at whole ``t`` (the same numbers, bit for bit), joined linearly
    between rows at fractional ``t`` (loss_cycle='timer'); ``t`` clipped to ``C``'s rows."""
    t = np.asarray(t)
    if t.dtype.kind in "iu":
        return C[t, ri]
    nmax = C.shape[0] - 1
    t = np.clip(t, 0.0, float(nmax))
    k = np.minimum(np.floor(t).astype(np.int64), nmax - 1)
    f = t - k
    return C[k, ri] * (1.0 - f) + C[k + 1, ri] * f


def _service_time(C: np.ndarray, ri: np.ndarray, need: np.ndarray) -> np.ndarray:
    """The least real ``t >= 0`` with ``S_i(t) >= need`` (``S`` of :func:`_served_by`), per
    state; the last row of ``C`` where it is never reached."""
    nmax = C.shape[0] - 1
    t = np.full(need.shape[0], float(nmax))
    for lvl in range(C.shape[1]):
        sel = ri == lvl
        col = C[:, lvl]
        k = np.clip(np.searchsorted(col, need[sel] - 1e-12, side="left"), 1, nmax)
        lo, hi = col[k - 1], col[k]
        step = hi - lo
        frac = np.where(step > 0, (need[sel] - lo) / np.where(step > 0, step, 1.0), 0.0)
        t[sel] = np.where(need[sel] <= 0, 0.0, (k - 1) + np.clip(frac, 0.0, 1.0))
    return t


def slow_start_queue_area(m) -> np.ndarray:
    """The integral of the bottleneck queue (the packet in service included) over slow start
    to the window ``m``, in packets x packet times (:meth:`Skeleton.slow_start_queue`): round 1
    the retransmission alone (1); rounds ``k = 2..L``, ``L = ceil(log2 m)``, ``p = 2^(k-2)``
    ACKs one service time apart each releasing two packets (``p^2 + 2 p``); the last round, its
    first ``dbl = m - 2^(L-1)`` ACKs releasing two and the other ``2^(L-1) - dbl`` one
    (``dbl^2 + 2 dbl + (2^(L-1) - dbl)(dbl + 1)``)."""
    m = np.maximum(np.asarray(m, dtype=float), 1.0)
    L = np.frexp(m - 1.0)[1].astype(np.int64)                           # ceil(log2 m)
    top = np.maximum(L - 1, 0).astype(float)                            # full doublings k = 2..L
    full = (4.0 ** top - 1.0) / 3.0 + 2.0 * (2.0 ** top - 1.0)          # sum p^2 + 2 sum p, p = 1..2^(L-2)
    prev = np.where(L >= 1, 2.0 ** np.maximum(L - 1, 0), 0.0)
    dbl = np.where(L >= 1, m - prev, 0.0)
    return 1.0 + full + dbl * dbl + 2.0 * dbl + (prev - dbl) * (dbl + 1.0)


def recovery_queue_area(C: np.ndarray, ri: np.ndarray, ahead: np.ndarray, wbar: np.ndarray, p_fr: np.ndarray,
                        served: np.ndarray, bmax: float, delta: float) -> np.ndarray:
    """``tcp='sack'``, TCP alone (docs/model.md sec. 13): ``p_FR(x)`` times the integral of the
    bottleneck queue after the loss interval of a fast recovery, packets x time units.

    The duplicate ACKs that start the recovery return one round trip after the lost packet's
    turn, ``T_a = S^-1(b + J)`` intervals after ``T_k`` (:func:`_service_time`); until then the
    ACK clock keeps the window full and the queue at ``B_max`` (``B_max Delta T_a`` beyond the
    loss interval's end).  PRR then sends about one packet per two delivered (ssthresh over
    RecoverFS, RFC 6937): the queue falls at half the service rate ``1 / r`` (``r = Delta /``
    the level's packets per interval) from ``B_max`` to ``q_end = ceil(w / 2) - `` the level's
    pipe (0 or more), for at most the recovery's round trip ``Delta``, and holds ``q_end`` for the
    rest of it.  **Choices**: ``J`` and ``w`` at their expectations given a loss (as the timer
    cycle), the loss interval's level throughout, the three duplicate ACKs' service times
    neglected."""
    lost = p_fr > 0
    pipe = served[ri]
    r = delta / np.maximum(pipe, 1.0)
    t_a = _service_time(C, ri, ahead)
    q_end = np.clip(np.ceil(wbar / 2.0) - pipe, 0.0, bmax)
    tau = np.minimum(2.0 * r * (bmax - q_end), delta)
    area = bmax * delta * t_a + bmax * tau - tau * tau / (4.0 * r) + q_end * (delta - tau)
    return np.where(lost, p_fr * area, 0.0)


def drain_queue_weight(p: np.ndarray, t_a: np.ndarray, t_e: np.ndarray, ack_clocked: bool) -> np.ndarray:
    """``p(x)`` times the bottleneck queue's area after the loss interval of a timeout cycle, in
    units of ``B_max Delta / 2`` (docs/model.md sec. 13, secs. 14-15's cycles).  The queue is empty
    at ``T_e`` (intervals from ``T_k``).  For TCP alone (``ack_clocked``) the ACKs of the ``b + J``
    packets ahead of the lost one, which leave by ``T_a``, keep releasing packets into it until
    ``T_a + 1``: it stays at ``B_max`` for ``min(T_a, T_e - 1)`` intervals after the loss interval
    (as a fast recovery's, :func:`recovery_queue_area`) and then falls linearly to 0 at ``T_e``;
    over ABR it falls linearly from the loss interval's end.  **Choices**: full while the ACK
    clock runs, whatever the next level; ``T_a``, ``T_e`` from expectations given the loss."""
    tail = np.maximum(t_e - 1.0, 0.0)
    hold = np.clip(t_a, 0.0, tail) if ack_clocked else 0.0
    return np.where(p > 0, p * (tail + hold), 0.0)


def recovery_expectations(b: np.ndarray, recovery: tuple, recovery_j: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(b + E[J | FR], E[w | FR])`` per state (0 where no fast recovery follows): the packets ahead of
    the lost one and the loss window of a fast recovery (docs/model.md sec. 13), from the build's
    ``P(FR | x)``, ``E[J 1{FR} | x]`` and the optimistic credit ``E[(b + J + w) 1{FR} | x]`` (sec. 12)."""
    p_fr, _, _, fr_opt = recovery
    b = np.asarray(b, dtype=float)
    ps = np.where(p_fr > 0, p_fr, 1.0)
    jbar = np.where(p_fr > 0, recovery_j / ps, 0.0)
    wbar = np.where(p_fr > 0, (fr_opt - recovery_j) / ps - b, 0.0)
    return b + jbar, wbar


def slow_start_pipe(sk, P: np.ndarray, ri: np.ndarray, L: np.ndarray):
    """``(pipe, rbar)`` of a slow start of ``L + 1`` rounds after a loss at level ``ri`` (docs/model.md
    sec. 15): the packets per interval of that level, or where it serves under one (an outage) the
    expected packets per interval over the slow start's ``L + 1`` intervals from it (at least 0.001);
    ``rbar`` the service time of a packet, at most 1.  ``P``: the rate chain per interval."""
    served = sk._served()
    mmax = sk.reg.shape[0] - 1
    umax = 3 + int(np.ceil(np.log2(max(mmax, 1)))) + 2
    C = _service_sums(P, served, umax + 1)
    span = C[np.minimum(4 + L, umax + 1), ri] - C[3, ri]
    pipe = np.where(served[ri] >= 1.0, served[ri], np.maximum(span / (L + 1), 1e-3))
    return pipe, np.minimum(1.0 / pipe, 1.0)


def slow_start_failure(k_fail, L, new_m, pipe, rbar, bmax: float):
    """``(d_u, credit, beyond)`` of slow starts to ``m`` (``L = ceil(log2 m)``) failing in round
    ``k_fail`` and starting again to ``new_m`` (docs/model.md sec. 15): ``U(m') - U(m)`` (eq. 20), the
    packets credited beyond the slow start to ``m`` (the failed rounds, the round that lost up to a
    round trip of service and a full buffer, the new slow start), and the round trips the failure
    adds beyond ``U(m')`` (the timer ``B_max / c + 3`` round trips after the failing round)."""
    Lp = np.frexp(np.maximum(new_m, 1) - 1.0)[1].astype(np.int64)
    prev = 2.0 ** np.maximum(k_fail - 2, 0)
    t_fail = (k_fail - 1) * (1 + rbar) + bmax / pipe + 3.0 + (Lp + 1) * (1 + rbar)
    t_ok = (L + 1) * (1 + rbar)
    d_u = (3 + Lp) - (3 + L)                                             # U(m') - U(m), eq. 20
    credit = (2.0 ** (k_fail - 1) - 1) + np.minimum(2 * prev, pipe + bmax) + (2.0 ** Lp - 1) - (2.0 ** L - 1)
    return d_u, credit, t_fail - t_ok - d_u


def _slow_start_rounds(C: np.ndarray, ri: np.ndarray, wbar: np.ndarray):
    """The timer cycle's slow start after a loss of expected window ``wbar`` at level ``ri``
    (docs/model.md sec. 15): ``m = ceil(wbar / 2)``, its ``L + 1`` rounds (``L = ceil(log2 m)``
    rounds of windows ``1 .. 2^(L-1)`` and the round of window ``m`` whose departures the
    regeneration state ``(0, 0, m)`` holds in ``D``, (M1)) and ``rbar``, the expected service time
    of a packet over those rounds' intervals (``C``'s rows 3 to ``3 + L + 1``), at most 1."""
    m = np.ceil(np.maximum(wbar, 1.0) / 2.0)
    rounds = np.frexp(m - 1.0)[1].astype(np.int64) + 1
    nmax = C.shape[0] - 1
    span = C[np.minimum(3 + rounds, nmax), ri] - C[np.minimum(3, nmax), ri]
    rbar = np.minimum(np.where(span > 0, rounds / np.where(span > 0, span, 1.0), 1.0), 1.0)
    return m, rounds, rbar
