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


def slow_start_queue_area(m, last_round: bool = True) -> np.ndarray:
    """The integral of the bottleneck queue (the packet in service included) over slow start
    to the window ``m``, in packets x packet times (:meth:`Skeleton.slow_start_queue`): round 1
    the retransmission alone (1); rounds ``k = 2..L``, ``L = ceil(log2 m)``, ``p = 2^(k-2)``
    ACKs one service time apart each releasing two packets (``p^2 + 2 p``); the last round, its
    first ``dbl = m - 2^(L-1)`` ACKs releasing two and the other ``2^(L-1) - dbl`` one
    (``dbl^2 + 2 dbl + (2^(L-1) - dbl)(dbl + 1)``), left out with ``last_round=False`` (III-B.4's
    cycle, whose ``U = 3 + L`` has no time for it, docs/model.md sec. 13)."""
    m = np.maximum(np.asarray(m, dtype=float), 1.0)
    L = np.frexp(m - 1.0)[1].astype(np.int64)                           # ceil(log2 m)
    top = np.maximum(L - 1, 0).astype(float)                            # full doublings k = 2..L
    full = (4.0 ** top - 1.0) / 3.0 + 2.0 * (2.0 ** top - 1.0)          # sum p^2 + 2 sum p, p = 1..2^(L-2)
    prev = np.where(L >= 1, 2.0 ** np.maximum(L - 1, 0), 0.0)
    dbl = np.where(L >= 1, m - prev, 0.0)
    return 1.0 + full + (dbl * dbl + 2.0 * dbl + (prev - dbl) * (dbl + 1.0) if last_round else 0.0)


def _held_area(bmax: float, k: np.ndarray, t_h: np.ndarray, t_a: np.ndarray | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
    """The queue held by the ACK clock after a loss interval: its area over ``[0, T_h]`` intervals, in
    units of ``Delta`` x packets, and its level at ``T_a`` (default ``T_h``), for ``q(x) = max(B_max -
    k x, 0)`` over the first interval after it and ``max(B_max - k, 0)`` from then on (``k`` packets
    per interval: the next level's service less the loss interval's, 0 or more)."""
    t_a = t_h if t_a is None else t_a
    a1 = np.minimum(t_h, 1.0)
    kk = np.where(k > 0, k, 1.0)
    x0 = bmax / kk
    first = np.where(k > 0, np.where(a1 <= x0, bmax * a1 - 0.5 * k * a1 * a1, 0.5 * bmax * x0), bmax * a1)
    flat = np.maximum(bmax - k, 0.0)
    area = first + np.maximum(t_h - 1.0, 0.0) * flat
    return area, np.where(t_a >= 1.0, flat, np.maximum(bmax - k * t_a, 0.0))


CURVE_STEPS = 64   # grid of the next interval's expected service curve (a held queue over service patterns)


def service_curves(patterns, delta: float, steps: int = CURVE_STEPS) -> np.ndarray | None:
    """``E_l(x)``, the expected opportunities of level ``l`` in the first ``x Delta`` of an interval, at
    ``x = 0, 1/steps, .., 1`` (``(K, steps + 1)``), from the service patterns ``(pat_ptr, pat_w, opp_ptr,
    opp_t)`` of docs/model.md sec. 11 (their weights per level); None without patterns."""
    if patterns is None:
        return None
    pat_ptr, pat_w, opp_ptr, opp_t = (np.asarray(a) for a in patterns)
    grid = np.linspace(0.0, float(delta), steps + 1)
    out = np.zeros((len(pat_ptr) - 1, steps + 1))
    for lvl in range(len(pat_ptr) - 1):
        w = np.asarray(pat_w[pat_ptr[lvl]:pat_ptr[lvl + 1]], dtype=float)
        for pp, wp in zip(range(pat_ptr[lvl], pat_ptr[lvl + 1]), w / max(w.sum(), 1e-300)):
            out[lvl] += wp * np.searchsorted(np.sort(opp_t[opp_ptr[pp]:opp_ptr[pp + 1]]), grid + 1e-9, side="right")
    return out


def _held_path(bmax: float, c: np.ndarray, curve: np.ndarray, t_h: np.ndarray, t_a: np.ndarray | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_held_area` over service patterns: the queue from ``B_max`` gains the loss interval's
    departures as they leave the window (``c`` per interval, evenly) and loses the next interval's
    expected service ``curve`` (:func:`service_curves`), held in ``[0, B_max]``, step by step; flat
    after the first interval.  Returns the area in units of ``Delta`` x packets up to ``T_h`` and the
    queue at ``T_a`` (default ``T_h``), from one pass over the steps."""
    from .kernels.occupancy import held_path

    t_a = t_h if t_a is None else t_a
    f64 = lambda x: np.ascontiguousarray(np.broadcast_to(np.asarray(x, dtype=float), c.shape))  # noqa: E731
    return held_path(float(bmax), f64(c), np.ascontiguousarray(curve, dtype=float), f64(t_h), f64(t_a))


def _prr_area(q0: np.ndarray, q_end: np.ndarray, r: np.ndarray, length) -> np.ndarray:
    """The queue over the first ``length`` (at most ``Delta``) of the recovery's round trip from ``q0``:
    PRR sends one packet per two delivered, so above ``q_end`` it falls at half the service rate
    ``1 / r`` and then holds ``q_end``; below it PRR's slow-start reduction bound sends two per
    delivered, so it rises at ``1 / r`` to ``q_end`` (RFC 6937)."""
    down = q0 >= q_end
    tau_d = np.minimum(2.0 * r * (q0 - q_end), length)
    a_down = q0 * tau_d - tau_d * tau_d / (4.0 * r) + q_end * (length - tau_d)
    tau_u = r * np.maximum(q_end - q0, 0.0)
    a_up = np.where(tau_u <= length, q_end * length - 0.5 * (q_end - q0) * tau_u,
                    q0 * length + 0.5 * length * length / r)
    return np.where(down, a_down, a_up)


def _dup_ack_time(C: np.ndarray, ahead: np.ndarray, c: np.ndarray, lvl: int) -> np.ndarray:
    """``T_a`` of a fast recovery (intervals from ``T_k``): the ``b + J`` packets ``ahead`` of the lost
    one served by the loss interval (``c`` per interval at its level) and then by the chain from the
    next level ``lvl`` (:func:`_service_time`)."""
    rest = ahead - c
    in_loss = np.divide(ahead, c, out=np.zeros_like(ahead), where=c > 0)       # served inside the loss interval
    return np.where(rest <= 0, in_loss,
                    1.0 + _service_time(C, np.full(ahead.size, lvl, dtype=np.int64), np.maximum(rest, 0.0)))


def _recovery_levels(C, P, r0, ahead, c, served, bmax: float, room, curves):
    """Per next level ``R'`` with ``P[R, R'] > 0``, a fast recovery's held queue (docs/model.md sec. 13),
    computed only at the states ``sel`` that can go there (element by element: the same numbers as
    over every state; EFFCAP's history chain reaches K of its levels from each):
    ``(sel, P[R, R'], c', T_a, T_h, held area, queue at T_a, share of PRR's round trip before room)``
    at ``sel``, with ``T_h = min(T_a, room)`` (``room`` None: not cut)."""
    for lvl in range(P.shape[0]):
        p = P[r0, lvl]
        sel = np.nonzero(p > 0)[0]
        if sel.size == 0:
            continue
        ah, cc = ahead[sel], c[sel]
        rm = None if room is None else room[sel]
        c1 = served[lvl]
        t_a = _dup_ack_time(C, ah, cc, lvl)
        t_h = t_a if rm is None else np.minimum(t_a, rm)
        held, q0 = (_held_area(bmax, np.maximum(c1 - cc, 0.0), t_h, t_a) if curves is None
                    else _held_path(bmax, cc, curves[lvl], t_h, t_a))
        yield sel, p[sel], c1, t_a, t_h, held, q0, (1.0 if rm is None else np.clip(rm - t_a, 0.0, 1.0))


def recovery_queue_area(C: np.ndarray, P: np.ndarray, ri: np.ndarray, ahead: np.ndarray, wbar: np.ndarray,
                        p_fr: np.ndarray, served: np.ndarray, bmax: float, delta: float,
                        room: np.ndarray | None = None, curves: np.ndarray | None = None) -> np.ndarray:
    """``tcp='sack'``, TCP alone (docs/model.md sec. 13): ``p_FR(x)`` times the integral of the
    bottleneck queue after the loss interval of a fast recovery, packets x time units; ``P`` is the
    rate chain per interval, ``C`` its service sums (:func:`_service_sums`).

    The duplicate ACKs that start the recovery return one round trip after the lost packet's
    turn, ``T_a`` intervals after ``T_k`` (the ``b + J`` packets ahead served by the loss interval
    at level ``R`` and then by the chain from the next level ``R'``, :func:`_service_time`).  Until
    then each returning ACK releases one packet, so the window is constant and the queue is
    ``B_max`` less what the pipe gains: over the first interval after the loss interval it falls
    by ``c' - c`` packets (``c``, ``c'`` the packets served per interval at ``R`` and ``R'``) when
    the next level is faster, and stays full otherwise (the excess is dropped); from then on it
    holds (arrivals and service both at ``c'``).  PRR then takes it from that level ``q0`` towards
    ``q_end = ceil(w / 2) -`` the pipe at ``R'`` (0 or more) over the recovery's round trip
    (:func:`_prr_area`), and the result is weighted by ``P[R, R']``.  ``room`` (intervals after the
    loss interval, per state): the cycle's own timeline, ``E[U - 1 | FR]`` (sec. 12, (M9)); the path
    is cut there, as III-B.4's timeout cycle cuts its queue (None: not cut).  ``curves``: over service
    patterns, the next interval's expected service curve per level (:func:`service_curves`), which
    the held queue follows (:func:`_held_path`) instead of an even rate.  **Choices**: ``J`` and ``w``
    at their expectations given a fast recovery; the level ``R'`` kept from the first interval
    after the loss interval to the end of the recovery; the three duplicate ACKs' service times
    neglected.  With one level it is the earlier rule, the queue full for ``T_a`` and PRR's drain
    from ``B_max``."""
    out = np.zeros(p_fr.shape[0])
    idx = np.nonzero(p_fr > 0)[0]
    if idx.size == 0:
        return out
    r0 = ri[idx]
    ah = ahead[idx]
    half = np.ceil(wbar[idx] / 2.0)
    c = served[r0]
    area = np.zeros(idx.size)
    for sel, p, c1, t_a, t_h, held, q0, frac in _recovery_levels(C, P, r0, ah, c, served, bmax,
                                                                 None if room is None else room[idx], curves):
        length = delta * frac
        r1 = delta / max(c1, 1.0)
        q_end = np.clip(half[sel] - c1, 0.0, bmax)
        area[sel] += p * (delta * held + _prr_area(q0, q_end, np.full(sel.size, r1), length))
    out[idx] = p_fr[idx] * area
    return out


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


def held_queue_weight(p: np.ndarray, t_a: np.ndarray, t_e: np.ndarray, ri: np.ndarray, P: np.ndarray,
                      served: np.ndarray, bmax: float, curves: np.ndarray | None = None) -> np.ndarray:
    """TCP alone's :func:`drain_queue_weight` with the next level (docs/model.md sec. 13, "The next
    level"): while the ACK clock runs (``min(T_a, T_e - 1)`` intervals after the loss interval) the
    window is constant, so the queue falls by ``c' - c`` packets over the first interval when the
    next level ``R'`` is faster and holds from then on (:func:`_held_area`); it then falls linearly
    from that level to 0 at ``T_e``.  Weighted by ``P[R, R']``; in units of ``B_max Delta / 2`` as
    :func:`drain_queue_weight`, which it is when ``P[R, R] = 1``; ``curves`` as
    :func:`recovery_queue_area`'s.  **Choices**: ``T_a``, ``T_e`` are
    the cycle's (expectations over the rate chain, as its length), not conditioned on ``R'``."""
    out = np.zeros(p.shape[0])
    idx = np.flatnonzero(p > 0)        # only the loss states hold a queue (elementwise: the same numbers)
    tail = np.maximum(t_e[idx] - 1.0, 0.0)
    hold = np.clip(t_a[idx], 0.0, tail)
    ri = ri[idx]
    c = served[ri]
    area = np.zeros(idx.size)
    for lvl in range(P.shape[0]):
        pl = P[ri, lvl]
        if not np.any(pl > 0):
            continue
        held, qh = (_held_area(bmax, np.maximum(served[lvl] - c, 0.0), hold) if curves is None
                    else _held_path(bmax, c, curves[lvl], hold))
        area += pl * (held + 0.5 * qh * (tail - hold))
    out[idx] = p[idx] * area * (2.0 / bmax)
    return out


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


def recovery_room(ls_ptr: np.ndarray, ls_m: np.ndarray, ls_prob: np.ndarray, mmax: int, n: int) -> np.ndarray:
    """``E[U - 1 | FR, x]`` per state from the loss-event codes (kind 1 or 2: a fast recovery of ``U =
    1 + kind`` round trips, (M9) of docs/model.md sec. 12); 0 where no fast recovery follows."""
    kind = (ls_m - 1) // mmax                     # 0 timeout, 1 or 2: U = 1 + kind
    rows = np.repeat(np.arange(n), np.diff(ls_ptr))
    fr = kind > 0
    num = np.bincount(rows[fr], ls_prob[fr] * kind[fr], minlength=n)
    den = np.bincount(rows[fr], ls_prob[fr], minlength=n)
    return np.divide(num, den, out=np.zeros(n), where=den > 0)


def loss_interval_queue(states: np.ndarray, p_loss: np.ndarray, jtot: np.ndarray, r_vals: np.ndarray,
                        s_vals: np.ndarray, delta: float, bmax: float, tcp_alone: bool, spread: bool,
                        phase: float, served: np.ndarray | None = None) -> np.ndarray:
    """The queue's integral over a loss interval, packets x time units (docs/model.md sec. 13): from
    ``b`` it reaches ``B_max`` with the first loss, at ``t_l = E[J | loss] g`` (``jtot`` = ``E[J
    1{loss} | x]``; ``g`` the arrivals' spacing: the source's ``s`` over ABR, the ACK clock's for TCP
    alone, sec. 3 or 3a, ``phase`` added), and stays full to the interval's end where the arrivals
    come faster than the level serves (``g < r``): ``Delta B_max - t_l (B_max - b) / 2``; elsewhere
    the trapezoid ``Delta (b + B_max) / 2``.  Over service patterns (``served``: the expected
    opportunities per interval of each level, sec. 11) the spacings are their means, ``r = Delta /
    served[R]`` and, for TCP alone's ACKs at the opportunities of a pattern of ``S``, ``g = Delta /
    served[S]``."""
    b = states[:, 1].astype(float)
    trap = 0.5 * delta * (b + bmax)
    lost = p_loss > 0
    if not np.any(lost):
        return trap
    jbar = np.divide(jtot, p_loss, out=np.zeros(p_loss.shape[0]), where=lost)
    g = s_vals[states[:, 4]]
    if served is not None:
        with np.errstate(divide="ignore"):
            mean_gap = delta / np.asarray(served, dtype=float)      # an outage: inf
        r = mean_gap[states[:, 3]]
        if tcp_alone:
            g = mean_gap[states[:, 4]]
    else:
        r = r_vals[states[:, 3]]
    if tcp_alone and served is None:      # the ACK clock: the previous level's spacing, or Delta / d
        d = states[:, 2].astype(float)
        even = spread | (d * g > delta + 1e-9)
        g = np.where(even & (d > 0), delta / np.maximum(d, 1.0), g)
    if tcp_alone:
        jbar = jbar + phase
    with np.errstate(invalid="ignore"):
        t_l = np.where(np.isfinite(g), np.clip(jbar * g, 0.0, delta), delta)    # no arrivals: the trapezoid
    return np.where(lost & (g < r - 1e-12), delta * bmax - 0.5 * t_l * (bmax - b), trap)


def _linear_drain(q: np.ndarray, tau: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The area over ``[0, x]`` of a level falling linearly from ``q`` to 0 at ``tau`` (then 0)."""
    tt = np.where(tau > 0, tau, 1.0)
    return np.where(x >= tau, 0.5 * q * tau, q * x - 0.5 * q * x * x / tt)


def abr_held_occupancy(p: np.ndarray, ri: np.ndarray, a_end: np.ndarray, t_a: np.ndarray, room: np.ndarray,
                       P: np.ndarray, served: np.ndarray, src: np.ndarray, bmax: float,
                       curves: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Over ABR, ``p(x)`` times the areas of the bottleneck queue and of the segmentation buffer after
    a timeout cycle's loss interval, in units of ``Delta`` x packets, up to ``room`` intervals after it
    (docs/model.md sec. 13, "Over ABR, the backlog held"; issue 26).  While the ACKs of the ``b + J``
    packets ahead of the lost one return (``T_a`` intervals, as :func:`held_queue_weight`) each releases
    a packet into the segmentation buffer, which the source sends at the rate of the level the ACKs
    left, so the buffer holds its loss-interval end ``a_end``; it then drains at the next level's source
    rate (``src[R']`` packets per interval).  The bottleneck, full at the loss interval's end, follows
    TCP alone's held path with the next level (:func:`_held_area`, :func:`_held_path`) while the source
    still sends, and then drains at ``served[R']`` per interval.  Weighted by ``P[R, R']``.
    **Choices**: ``T_a`` the cycle's (an expectation); the source's rate taken as the next level's
    from the end of the loss interval (INSTCAP lags it by one interval: the first interval's
    difference is in the held path); the buffer's input stops at ``T_a`` at once."""
    q_out, a_out = np.zeros(p.shape[0]), np.zeros(p.shape[0])
    # element by element, so computed only where it counts: the states that can lose, and per next
    # level those that can go there (the same numbers; EFFCAP's history chain reaches K of its levels)
    idx = np.nonzero(p > 0)[0]
    if idx.size == 0:
        return q_out, a_out
    ri, a_end, t_a = ri[idx], a_end[idx], t_a[idx]
    room = np.maximum(room[idx], 0.0)
    hold = np.clip(t_a, 0.0, room)
    c = served[ri]
    q_area = np.zeros(idx.size)
    a_area = np.zeros(idx.size)
    for lvl in range(P.shape[0]):
        pl = P[ri, lvl]
        sel = np.nonzero(pl > 0)[0]
        if sel.size == 0:
            continue
        pl = pl[sel]
        s_next = max(float(src[lvl]), 1e-12)
        ae, ho, rm, cc = a_end[sel], hold[sel], room[sel], c[sel]
        tau_a = ae / s_next
        a_lvl = ae * ho + _linear_drain(ae, tau_a, rm - ho)
        t_h = np.minimum(ho + tau_a, rm)
        held, qh = (_held_area(bmax, np.maximum(served[lvl] - cc, 0.0), t_h) if curves is None
                    else _held_path(bmax, cc, curves[lvl], t_h))
        tau_q = qh / max(float(served[lvl]), 1e-12)
        q_area[sel] += pl * (held + _linear_drain(qh, tau_q, rm - t_h))
        a_area[sel] += pl * a_lvl
    q_out[idx], a_out[idx] = p[idx] * q_area, p[idx] * a_area
    return q_out, a_out


def abr_recovery_occupancy(C: np.ndarray, P: np.ndarray, ri: np.ndarray, ahead: np.ndarray, wbar: np.ndarray,
                           a_end: np.ndarray, p_fr: np.ndarray, served: np.ndarray, bmax: float, delta: float,
                           room: np.ndarray, curves: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``tcp='sack'`` over ABR (docs/model.md sec. 13, "Over ABR, the backlog held"): ``p_FR(x)`` times the
    integrals of the bottleneck queue and of the segmentation buffer after a fast recovery's loss interval,
    packets x time units.  Until the duplicate ACKs return (``T_a``, as :func:`recovery_queue_area`) the
    window is constant: the segmentation buffer holds ``a_end`` (the source sends at the rate the ACKs
    come) and the bottleneck follows TCP alone's held path to ``q0``.  PRR then takes the backlog of both,
    ``a_end + q0``, towards ``ceil(w / 2)`` less the pipe at ``R'`` over the recovery's round trip
    (:func:`_prr_area`): the segmentation buffer first (the source still sends at the bottleneck's rate
    while it has packets, so the bottleneck holds), then the bottleneck.  Cut at ``room`` (``E[U - 1 |
    FR]``) and weighted by ``P[R, R']``.  **Choices**: those of :func:`recovery_queue_area`; the split of
    PRR's drain between the buffers as above."""
    q_out, a_out = np.zeros(p_fr.shape[0]), np.zeros(p_fr.shape[0])
    idx = np.nonzero(p_fr > 0)[0]
    if idx.size == 0:
        return q_out, a_out
    r0, ah, a0 = ri[idx], ahead[idx], a_end[idx]
    half = np.ceil(wbar[idx] / 2.0)
    c = served[r0]
    q_area, a_area = np.zeros(idx.size), np.zeros(idx.size)
    for sel, p, c1, t_a, t_h, held, q0, frac in _recovery_levels(C, P, r0, ah, c, served, bmax, room[idx], curves):
        length = delta * frac
        r1 = np.full(sel.size, delta / max(c1, 1.0))
        x_end = np.maximum(half[sel] - c1, 0.0)
        a1 = a0[sel]
        total = _prr_area(a1 + q0, x_end, r1, length)
        src = _prr_area(a1, np.maximum(x_end - q0, 0.0), r1, length)
        q_area[sel] += p * (delta * held + np.maximum(total - src, 0.0))
        a_area[sel] += p * (delta * a1 * t_h + src)
    q_out[idx], a_out[idx] = p_fr[idx] * q_area, p_fr[idx] * a_area
    return q_out, a_out


def first_serving(P: np.ndarray, served: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(F, h)`` of the timer cycle through an outage (docs/model.md sec. 15c): ``F[i, j]`` the law of
    the first level that serves, over the intervals after one at level ``i``, and ``h[i]`` the
    expected intervals until that level's interval starts (``h = 1 + P_OO h`` on the outage levels
    ``O``, those whose ``served`` is 0); ``F = I``, ``h = 0`` at a level that serves."""
    k = served.shape[0]
    out = np.asarray(served) <= 0.0
    F, h = np.eye(k), np.zeros(k)
    if out.any() and not out.all():
        A = np.eye(int(out.sum())) - P[np.ix_(out, out)]
        try:
            h[out] = np.linalg.solve(A, np.ones(int(out.sum())))
            F[np.ix_(out, ~out)] = np.linalg.solve(A, P[np.ix_(out, ~out)])
        except np.linalg.LinAlgError:   # outage levels the rate chain never leaves: no wait to take
            return np.eye(k), np.zeros(k)
        F[np.ix_(out, out)] = 0.0
        F[out] /= F[out].sum(axis=1, keepdims=True)   # a law: rounding of a nearly closed outage taken out
    return F, h


def over_first_serving(wait, ri: np.ndarray, fn):
    """``fn(levels, rows)`` (a tuple of arrays over the states ``rows``, element by element) with each
    state whose level ``ri`` is an outage replaced by the mixture over its first serving level ``j``
    (``wait = (F, h)`` of :func:`first_serving`) of ``fn`` at level ``j``; the others as they are.
    Returns the tuple and ``h[ri]``, the expected wait before that level (0 where ``ri`` serves).
    ``fn`` is evaluated at each ``j`` on the outage states only (the same numbers as over all states)."""
    F, h = wait
    base = fn(ri, slice(None))
    sel = h[ri] > 0.0
    if not sel.any():
        return base, np.zeros(ri.shape[0])
    rows = np.flatnonzero(sel)
    mix = [np.zeros(rows.size) for _ in base]
    for j in np.flatnonzero(h == 0.0):
        w = F[ri[rows], j]
        if not np.any(w > 0.0):
            continue
        vals = fn(np.full(rows.size, j, dtype=ri.dtype), rows)
        for acc, v in zip(mix, vals):
            acc += w * v
    out = tuple(np.array(b, dtype=float) for b in base)
    for o, acc in zip(out, mix):
        o[sel] = acc
    return out, np.where(sel, h[ri], 0.0)


def regeneration_law(wait) -> np.ndarray:
    """``F`` of ``wait = (F, h)`` (sec. 15c) as the kernels take it, or an empty (0, 0) array where
    ``wait`` is None (eq. 13 as it is; :func:`.kernels.assemble.from_first_serving`)."""
    return np.zeros((0, 0)) if wait is None else np.ascontiguousarray(wait[0], dtype=float)


def recovery_times(C: np.ndarray, ri: np.ndarray, ahead: np.ndarray, wbar: np.ndarray, bmax: float, wait=None):
    """The timer cycle's ``(T_a, behind, T_e)`` per state (docs/model.md sec. 15; intervals from ``T_k``):
    ``T_a = S_i^-1(b + J)``, ``behind = min(w - 1, S(T_a + 1) - S(T_a) + B_max)``, ``T_e = S_i^-1(b + J +
    behind)``.  ``wait`` (``(F, h)`` of :func:`first_serving`, sec. 15c): at an outage level, the wait
    ``h`` for the first serving level and the times from that level (:func:`over_first_serving`)."""
    def times(lv, rows):
        need = ahead[rows]
        t_a = _service_time(C, lv, need)
        behind = np.clip(np.minimum(wbar[rows] - 1.0, _served_by(C, lv, t_a + 1.0) - _served_by(C, lv, t_a) + bmax),
                         0.0, None)
        return t_a, behind, _service_time(C, lv, need + behind)
    if wait is None:
        return times(ri, slice(None))
    (t_a, behind, t_e), h = over_first_serving(wait, ri, times)
    return t_a + h, behind, t_e + h


def recovery_times_of_states(C: np.ndarray, lost: np.ndarray, ri: np.ndarray, b: np.ndarray, ahead: np.ndarray,
                             wbar: np.ndarray, bmax: float, wait=None):
    """:func:`recovery_times` of every state of a chain, evaluated once per loss state and once per
    (level, ``b``) of the others (whose ``ahead`` is ``b`` and ``w`` 0): element by element, so the same
    numbers at a fraction of the cost."""
    idx, rest = np.flatnonzero(lost), np.flatnonzero(~lost)
    b = np.asarray(b)[rest].astype(np.int64)
    _, first, inv = np.unique(np.asarray(ri)[rest].astype(np.int64) * (int(b.max(initial=0)) + 1) + b,
                              return_index=True, return_inverse=True)
    rows = np.concatenate([idx, rest[first]])
    out = []
    for x in recovery_times(C, ri[rows], ahead[rows], wbar[rows], bmax, wait):
        full = np.empty(ri.shape[0])
        full[idx], full[rest] = x[:idx.size], x[idx.size:][inv.ravel()]
        out.append(full)
    return tuple(out)


def slow_start_span(C: np.ndarray, ri: np.ndarray, wbar: np.ndarray, wait=None) -> np.ndarray:
    """``(L + 1) rbar`` of the timer cycle's slow start (:func:`_slow_start_rounds`); with ``wait``
    (sec. 15c) at the first serving level after an outage."""
    def span(lv, rows):
        _, rounds, rbar = _slow_start_rounds(C, lv, wbar[rows])
        return (rounds * rbar,)
    return span(ri, slice(None))[0] if wait is None else over_first_serving(wait, ri, span)[0][0]


def silence_timeouts(P: np.ndarray, pat_ptr, pat_w, opp_ptr, opp_t) -> np.ndarray:
    """``silence='patterns'`` (docs/model.md sec. 11b): per state ``S`` of the chain, the probability that
    the fixed RTO of two round trips expires in an interval whose state has ``z = 1`` (the interval before
    returned no ACK) although ACKs return in it.  The ACK-less interval is a one-epoch outage between a
    serving state ``j`` and ``S``; the last ACK before it left at the last opportunity ``l`` of a pattern of
    ``j`` (one round trip before it returned), the first after it at the first opportunity ``f`` of a pattern
    of ``S``, and the timer restarted by the first expires before the second returns iff ``f > l`` (offsets
    in their intervals).  ``j`` has the law of the serving state before a one-epoch outage that leads to
    ``S``: ``pi_j sum_o P(j, o) P(o, S)`` over the outage states ``o`` (**[choice]**: a queue that empties
    at a serving level is not counted; the departures are taken at the opportunities, the queue not
    empty).  0 where no outage leads to ``S``, and at the outage states (no ACK returns after them)."""
    k = len(pat_ptr) - 1
    pat_w, opp_ptr, opp_t = np.asarray(pat_w, float), np.asarray(opp_ptr), np.asarray(opp_t, float)
    first, last, w = np.full(len(pat_w), np.nan), np.full(len(pat_w), np.nan), np.zeros(len(pat_w))
    for p in range(len(pat_w)):
        if opp_ptr[p + 1] > opp_ptr[p]:
            first[p], last[p], w[p] = opp_t[opp_ptr[p]], opp_t[opp_ptr[p + 1] - 1], pat_w[p]
    mass = np.array([w[pat_ptr[i]:pat_ptr[i + 1]].sum() for i in range(k)])
    out = mass <= 0.0
    q = np.zeros(k)
    if not out.any() or out.all():
        return q
    from ..closed_forms.modulating_chain import stationary_distribution

    pi = stationary_distribution(P)
    lead = (pi[:, None] * P[:, out]) @ P[out, :]       # lead[j, S] = pi_j sum_o P(j, o) P(o, S)
    lead[out, :] = 0.0
    for s in np.flatnonzero(~out):
        tot = lead[:, s].sum()
        if tot <= 0.0:
            continue
        fs = slice(pat_ptr[s], pat_ptr[s + 1])
        for j in np.flatnonzero(lead[:, s] > 0.0):
            lj = slice(pat_ptr[j], pat_ptr[j + 1])
            late = (first[fs][:, None] > last[lj][None, :]) & (w[fs][:, None] > 0) & (w[lj][None, :] > 0)
            q[s] += lead[j, s] / tot * float(w[fs] @ late @ w[lj]) / (mass[s] * mass[j])
    return q
