"""The one TCP of both cell-level kernels (private): sender and receiver state once,
variants as hook functions.

One connection's state is a row of ``st`` (integers) and ``fs`` (floats), columns from
:mod:`tcpabr_model.sim.arrays.layout`.  Sequence numbers count segments (one segment = one AAL5 frame, or one IP
packet for TCP alone).  The variant of each connection is ``cpar[c, CP_VARIANT]``
(vocabulary and ids in :mod:`tcpabr_model.sim.tcp.variants`).  The rules every variant shares
(slow start, congestion avoidance, the RTO and go-back-N, the receiver) are written once;
what differs is in two hooks, one dispatch on the variant id each, in the manner of the
drop policies (:mod:`tcpabr_model.sim.switch.drop_policies`):

:func:`on_dupack`
    a duplicate ACK: nothing (timeout-only), fast retransmit / inflation (reno, newreno),
    scoreboard recovery start / pipe (sack);
:func:`on_recovery_ack`
    an ACK for new data during recovery: leave recovery (reno), partial ACKs (newreno,
    sack).

NewReno's two timer rules (variant ids ``TCP_NEWRENO`` and ``TCP_NEWRENO_STEADY``) differ
only in whether a partial ACK after the first of a recovery restarts the timer
(:func:`_restarts_timer`).

``ssthresh_on_loss`` and ``ssthresh_on_timeout`` hold the two ssthresh rules.  Every
variant records the *recover point* ``S_RECOVER`` (highest segment sent + 1) at a timeout,
and no variant starts a fast retransmit before it is acknowledged (RFC 6582 Sec. 4.2, RFC
6675 Sec. 5.1, ns Sack1 ``recover_``): after a go-back-N retransmission the copies still
queued at the source produce duplicate ACKs that are not losses.  Without this guard Reno
over ABR livelocked (issue 14: fast retransmits feeding the segmentation buffer with stale
copies, whose duplicate ACKs inflated cwnd, which resent more copies).

SACK details: the receiver reports the segment that triggered each duplicate ACK (the
first SACK block of RFC 2018; with a lossless reverse path the sender's scoreboard is then
exact).  Recovery is RFC 6675 loss recovery with RFC 6937's Proportional Rate Reduction in
its PRR-SSRB form, as Linux and ns-3 (``TcpPrrRecovery``) run it (issue 25): on every ACK of
the recovery ``pipe`` is recomputed from the scoreboard (RFC 6675 SetPipe: segments neither
SACKed nor lost, plus retransmissions; lost = ``dupthresh`` SACKed segments above, IsLost),
``cwnd = pipe + sndcnt`` with PRR's ``sndcnt`` (:func:`~tcpabr_model.sim.tcp.prr.prr_ack`), and while pipe < cwnd the
sender retransmits the lowest lost segment not yet retransmitted, else sends new data
(NextSeg rules 1 and 2); each transmission adds 1 to pipe and to ``prr_out``.  Recovery ends
when an ACK covers the highest segment sent at its start, with cwnd = ssthresh.

Timers: fixed RTO (``CP_RTOFIX``) or the RFC 6298 estimator with timer granularity
``G_GRAN`` (expiry rounded up to a multiple of it), in both kernels.
Receiver: cumulative ACKs, out-of-order segments kept, optional delayed ACK (every second
in-order segment or after ``G_DELACKTO``; out-of-order and hole-filling segments are
acknowledged at once).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..arrays.layout import (
    BIG, CF_IW, CF_SSTHRESH0, CP_ACKDELAY, CP_RTOFIX, CP_UPF, CP_VARIANT, CP_WMAX, F_CWND, F_RTO, F_RTTVAR,
    F_SRTT, F_SSTH, G_DELACK, G_DELACKTO, G_DUPTHRESH, G_GRAN, G_RTOINIT, G_RTOMAX, G_RTOMIN, G_RTOMODE,
    G_WARMUP, S_ACKS, S_AKCNT, S_AKHEAD, S_DAEXP, S_DAPEND, S_DUP, S_FASTRTX, S_FDELIV, S_GOOD,
    S_GOODALL, S_HIGHSACK, S_INREC, S_MAX, S_NXT, S_PIPE, S_RCVNXT, S_RECOVER, S_RETX, S_RTOEXP,
    S_RTTACT, S_RTTSEQ, S_RTTSTART, S_RTXNEXT, S_SEGSENT, S_SQCELLS, S_SQCNT, S_SQHEAD,
    S_PARTIALS, S_TIMEOUTS, S_UNA, TCP_NEWRENO, TCP_NEWRENO_STEADY, TCP_RENO, TCP_SACK, S_NSTATE, F_NSTATE,
    S_LOSTEND, S_FDROP, S_TODROP, S_TONODROP, S_PRRDEL, S_PRROUT, S_RECOVFS, S_RTOUNA, S_SSEXIT, S_TOHOLE,
    S_TOREPEAT, S_TOSS,
)
from ..arrays.refcount import keep_alive
from .prr import prr_ack

__all__ = ["push_seg", "try_send", "on_ack", "on_timeout", "rcv_frame", "send_ack", "conn_next", "segmentation_cells",
           "tcp_state"]


@njit(cache=True, error_model="numpy", inline="always")
def _rto_slots(c, fs, cpar, gpar):
    if gpar[G_RTOMODE] == 0:
        r = cpar[c, CP_RTOFIX]
    else:
        r = np.int64(np.ceil(fs[c, F_RTO]))
    keep_alive(fs, cpar, gpar)
    return r


@njit(cache=True, error_model="numpy", inline="always")
def _arm_timer(c, t, st, fs, cpar, gpar):
    exp = t + _rto_slots(c, fs, cpar, gpar)
    if gpar[G_RTOMODE] == 1:
        g = gpar[G_GRAN]
        if g > 1:
            exp = ((exp + g - 1) // g) * g
    st[c, S_RTOEXP] = exp
    keep_alive(st, fs, cpar, gpar)


@njit(cache=True, error_model="numpy", inline="always")
def push_seg(c, seq, st, cpar, sq_seq):
    """Queue segment ``seq`` for segmentation at the VC source; False on ring overflow."""
    cap = sq_seq.shape[1]
    ok = st[c, S_SQCNT] < cap
    if ok:
        pos = (st[c, S_SQHEAD] + st[c, S_SQCNT]) % cap
        sq_seq[c, pos] = seq
        st[c, S_SQCNT] += 1
        st[c, S_SQCELLS] += cpar[c, CP_UPF]
        st[c, S_SEGSENT] += 1
    keep_alive(st, cpar, sq_seq)
    return ok


@njit(cache=True, error_model="numpy", inline="always")
def _send_new(c, t, st, fs, cpar, gpar, sq_seq):
    seq = st[c, S_NXT]
    ok = push_seg(c, seq, st, cpar, sq_seq)
    if ok:
        if seq >= st[c, S_MAX]:
            st[c, S_MAX] = seq + 1
            if st[c, S_RTTACT] == 0 and gpar[G_RTOMODE] == 1:
                st[c, S_RTTACT] = 1
                st[c, S_RTTSEQ] = seq
                st[c, S_RTTSTART] = t
        else:
            st[c, S_RETX] += 1
        st[c, S_NXT] += 1
        if st[c, S_RTOEXP] >= BIG:
            _arm_timer(c, t, st, fs, cpar, gpar)
    keep_alive(st, fs, cpar, gpar, sq_seq)
    return ok


@njit(cache=True, error_model="numpy")
def _sack_send(c, t, st, fs, cpar, gpar, sq_seq, sb):
    """SACK recovery (RFC 6675 NextSeg rules 1-2): while pipe < cwnd (<= wmax), retransmit the
    lowest lost segment not yet retransmitted, else send new data.

    New data is limited by the receiver's reorder buffer, 2 wmax segments past snd_una
    (``rb_cap`` = 2 wmax + 8 in :mod:`tcpabr_model.sim.kernel_inputs`), not by wmax: the
    SACKed segments have left the network, and capping the sequence space at snd_una + wmax
    stalled the second half of every recovery at a window near wmax (issue 25).
    """
    cap = sb.shape[1]
    wmax = cpar[c, CP_WMAX]
    cw = np.int64(np.floor(fs[c, F_CWND] + 1e-9))
    while st[c, S_PIPE] < cw:
        q = st[c, S_RTXNEXT]
        if q < st[c, S_UNA]:
            q = st[c, S_UNA]
        lost = st[c, S_LOSTEND]
        while q < lost and sb[c, q % cap] != 0:
            q += 1
        if q < lost:
            if not push_seg(c, q, st, cpar, sq_seq):
                return False
            sb[c, q % cap] = 2
            st[c, S_RETX] += 1
            st[c, S_RTXNEXT] = q + 1
            st[c, S_PIPE] += 1
            st[c, S_PRROUT] += 1
            continue
        st[c, S_RTXNEXT] = q
        if st[c, S_NXT] < st[c, S_UNA] + 2 * wmax:       # the receiver's reorder buffer
            if not _send_new(c, t, st, fs, cpar, gpar, sq_seq):
                return False
            st[c, S_PIPE] += 1
            st[c, S_PRROUT] += 1
        else:
            break
    return True


@njit(cache=True, error_model="numpy", inline="always")
def try_send(c, t, st, fs, cpar, gpar, sq_seq, sb):
    """Send what the window allows (the SACK recovery rule during SACK recovery).

    Outside recovery the window is min(cwnd, wmax) past snd_una.  During Reno / NewReno
    recovery cwnd is inflated by one per duplicate ACK (segments that have left the
    network), so it is not capped at wmax there, only at the receiver's reorder buffer of
    2 wmax (issue 25: the cap at wmax stopped the ACK clock in the second half of each
    recovery and the deficit came back as a burst or a slow start that lost again).
    """
    if cpar[c, CP_VARIANT] == TCP_SACK and st[c, S_INREC] == 1:
        ok = _sack_send(c, t, st, fs, cpar, gpar, sq_seq, sb)
    else:
        win = fs[c, F_CWND]
        wmax = cpar[c, CP_WMAX]
        if st[c, S_INREC] == 1:
            wmax = 2 * wmax
        if win > wmax:
            win = float(wmax)
        w = np.int64(np.floor(win + 1e-9))
        if w < 1:
            w = 1
        ok = True
        while ok and st[c, S_NXT] < st[c, S_UNA] + w:
            ok = _send_new(c, t, st, fs, cpar, gpar, sq_seq)
    keep_alive(st, fs, cpar, gpar, sq_seq, sb)
    return ok


@njit(cache=True, error_model="numpy")
def _rtt_sample(c, r, fs, gpar):
    r = float(r)
    if fs[c, F_SRTT] < 0.0:
        fs[c, F_SRTT] = r
        fs[c, F_RTTVAR] = 0.5 * r
    else:
        fs[c, F_RTTVAR] = 0.75 * fs[c, F_RTTVAR] + 0.25 * abs(fs[c, F_SRTT] - r)
        fs[c, F_SRTT] = 0.875 * fs[c, F_SRTT] + 0.125 * r
    g = float(gpar[G_GRAN])
    v = 4.0 * fs[c, F_RTTVAR]
    if v < g:
        v = g
    rto = fs[c, F_SRTT] + v
    if rto < gpar[G_RTOMIN]:
        rto = float(gpar[G_RTOMIN])
    if rto > gpar[G_RTOMAX]:
        rto = float(gpar[G_RTOMAX])
    fs[c, F_RTO] = rto


@njit(cache=True, error_model="numpy", inline="always")
def ssthresh_on_loss(c, st):
    """ssthresh after duplicate ACKs: max(FlightSize / 2, 2) segments (RFC 5681 eq. 4)."""
    ss = float((st[c, S_MAX] - st[c, S_UNA]) // 2)
    return ss if ss > 2.0 else 2.0


@njit(cache=True, error_model="numpy", inline="always")
def ssthresh_on_timeout(c, fs, cpar):
    """ssthresh after a timeout: max(floor(min(cwnd, wmax) / 2), 2) segments."""
    w = fs[c, F_CWND]
    wmax = float(cpar[c, CP_WMAX])
    if w > wmax:
        w = wmax
    ss = np.floor(w / 2.0)
    return ss if ss > 2.0 else 2.0


@njit(cache=True, error_model="numpy", inline="always")
def _may_fast_retransmit(c, st, gpar):
    """The dupthresh-th duplicate ACK, outside recovery, and every segment outstanding at
    the last timeout or recovery start acknowledged (RFC 6582 Sec. 4.2, RFC 6675 Sec. 5.1):
    the duplicates of a go-back-N retransmission are not a loss."""
    return (st[c, S_INREC] == 0 and st[c, S_DUP] == gpar[G_DUPTHRESH]
            and st[c, S_UNA] >= st[c, S_RECOVER])


@njit(cache=True, error_model="numpy", inline="always")
def _fast_retransmit(c, t, st, fs, cpar, gpar, sq_seq):
    """Retransmit the first unacknowledged segment and enter recovery; returns ssthresh."""
    ss = ssthresh_on_loss(c, st)
    fs[c, F_SSTH] = ss
    st[c, S_INREC] = 1
    st[c, S_PARTIALS] = 0
    push_seg(c, st[c, S_UNA], st, cpar, sq_seq)
    st[c, S_RETX] += 1
    st[c, S_FASTRTX] += 1
    st[c, S_RTTACT] = 0
    _arm_timer(c, t, st, fs, cpar, gpar)
    return ss


@njit(cache=True, error_model="numpy")
def on_dupack(c, t, st, fs, cpar, gpar, sq_seq, sb):
    """Variant hook: a duplicate ACK (``S_DUP`` already counts it).

    timeout-only: nothing.  reno: on the dupthresh-th, ssthresh = max(flight/2, 2),
    retransmit, cwnd = ssthresh + dupthresh; +1 per further duplicate (inflation).
    newreno: the same, and ``S_RECOVER`` = highest segment sent + 1 (RFC 6582 Sec. 3.2
    step 2).  sack: the recovery's PRR state (prr_delivered 0, prr_out 1 for the
    retransmission, RecoverFS = flight); cwnd and pipe are then set by :func:`~tcpabr_model.sim.tcp.prr.prr_ack`
    on this and every later ACK of the recovery.
    """
    variant = cpar[c, CP_VARIANT]
    newreno = variant == TCP_NEWRENO or variant == TCP_NEWRENO_STEADY
    if variant == TCP_RENO or newreno:
        if _may_fast_retransmit(c, st, gpar):
            if newreno:
                st[c, S_RECOVER] = st[c, S_MAX]
            ss = _fast_retransmit(c, t, st, fs, cpar, gpar, sq_seq)
            fs[c, F_CWND] = ss + float(gpar[G_DUPTHRESH])
        elif st[c, S_INREC] == 1:
            fs[c, F_CWND] += 1.0
    elif variant == TCP_SACK:
        if _may_fast_retransmit(c, st, gpar):
            flight = st[c, S_MAX] - st[c, S_UNA]
            st[c, S_RECOVER] = st[c, S_MAX]
            una = st[c, S_UNA]
            ss = _fast_retransmit(c, t, st, fs, cpar, gpar, sq_seq)
            fs[c, F_CWND] = ss
            sb[c, una % sb.shape[1]] = 2
            st[c, S_RTXNEXT] = una + 1
            st[c, S_PRRDEL] = 0
            st[c, S_PRROUT] = 1             # the fast retransmission
            st[c, S_RECOVFS] = flight


@njit(cache=True, error_model="numpy")
def on_recovery_ack(c, a, st, fs, cpar, sq_seq):
    """Variant hook: an ACK for new data ``a`` > ``S_UNA`` during recovery (before
    ``S_UNA`` moves).  Returns True while recovery goes on (a partial ACK).

    reno: leave recovery, cwnd = ssthresh (4.4BSD).  newreno (RFC 6582 Sec. 3.2): a partial
    ACK (a < recover) retransmits segment ``a``, deflates cwnd by the segments acknowledged
    and adds one back, and is counted in ``S_PARTIALS`` (step 5; the timer rule is
    :func:`_restarts_timer`); a full ACK sets cwnd = min(ssthresh, max(flight, 1) + 1)
    (step 3, option 1).  sack: a partial ACK keeps recovery (PRR sets cwnd, :func:`~tcpabr_model.sim.tcp.prr.prr_ack`);
    a full ACK sets cwnd = ssthresh (RFC 6937).
    """
    variant = cpar[c, CP_VARIANT]
    partial = a < st[c, S_RECOVER]
    newreno = variant == TCP_NEWRENO or variant == TCP_NEWRENO_STEADY
    if newreno and partial:
        w = fs[c, F_CWND] - float(a - st[c, S_UNA]) + 1.0
        fs[c, F_CWND] = w if w > 1.0 else 1.0
        push_seg(c, a, st, cpar, sq_seq)
        st[c, S_RETX] += 1
        st[c, S_PARTIALS] += 1
        return True
    if variant == TCP_SACK and partial:
        return True
    if newreno:
        f = float(st[c, S_MAX] - a)
        if f < 1.0:
            f = 1.0
        w = f + 1.0
        fs[c, F_CWND] = w if w < fs[c, F_SSTH] else fs[c, F_SSTH]
    else:
        fs[c, F_CWND] = fs[c, F_SSTH]
    st[c, S_INREC] = 0
    return False


@njit(cache=True, error_model="numpy", inline="always")
def _restarts_timer(c, st, cpar):
    """Whether an ACK for new data restarts the retransmission timer (RFC 6298 5.3).

    Always, except NewReno's later partial ACKs: RFC 6582 Sec. 3.2 step 5 resets the timer
    "for the first partial ACK that arrives during fast recovery" only (the Impatient
    variant); ``newreno-steady`` resets it on every partial ACK (Fall & Floyd 1996).
    """
    return not (cpar[c, CP_VARIANT] == TCP_NEWRENO and st[c, S_INREC] == 1 and st[c, S_PARTIALS] > 1)


@njit(cache=True, error_model="numpy", inline="always")
def on_ack(c, a, sk, t, st, fs, cpar, gpar, sq_seq, sb):
    """ACK with cumulative value ``a`` (next expected segment) and SACKed segment ``sk``
    (-1: none) reaches the sender at slot ``t``.  Returns False on a ring overflow.

    The rules common to every variant are here; the variant hooks are
    :func:`on_dupack` and :func:`on_recovery_ack`.
    """
    wmax = float(cpar[c, CP_WMAX])
    variant = cpar[c, CP_VARIANT]
    cap = sb.shape[1]
    delivered = 0       # SACK: segments this ACK delivered (RFC 6937 DeliveredData)
    if variant == TCP_SACK and sk >= st[c, S_UNA] and sk < st[c, S_MAX]:
        if sb[c, sk % cap] & 1 == 0:
            delivered = 1
        sb[c, sk % cap] |= 1
        if sk + 1 > st[c, S_HIGHSACK]:
            st[c, S_HIGHSACK] = sk + 1
    if a > st[c, S_UNA]:
        if st[c, S_RTTACT] == 1 and a > st[c, S_RTTSEQ]:
            _rtt_sample(c, t - st[c, S_RTTSTART], fs, gpar)
            st[c, S_RTTACT] = 0
        if variant == TCP_SACK:
            delivered += a - st[c, S_UNA]
            for q in range(st[c, S_UNA], a):
                if sb[c, q % cap] & 1:
                    delivered -= 1          # counted when it was SACKed
                sb[c, q % cap] = 0
        if st[c, S_INREC] == 1:
            on_recovery_ack(c, a, st, fs, cpar, sq_seq)
        elif fs[c, F_CWND] < fs[c, F_SSTH]:
            fs[c, F_CWND] += 1.0
            if fs[c, F_CWND] >= fs[c, F_SSTH]:     # slow start ends: later segments are sent in CA
                st[c, S_SSEXIT] = st[c, S_MAX] + 1
        else:
            fs[c, F_CWND] += 1.0 / fs[c, F_CWND]
        if fs[c, F_CWND] > wmax and st[c, S_INREC] == 0:     # an inflated window is not clamped
            fs[c, F_CWND] = wmax
        st[c, S_UNA] = a
        st[c, S_DUP] = 0
        if st[c, S_NXT] < a:
            st[c, S_NXT] = a
        if st[c, S_HIGHSACK] < a:
            st[c, S_HIGHSACK] = a
        if st[c, S_UNA] >= st[c, S_MAX]:
            st[c, S_RTOEXP] = BIG
        elif _restarts_timer(c, st, cpar):
            _arm_timer(c, t, st, fs, cpar, gpar)
    elif a == st[c, S_UNA] and st[c, S_MAX] > st[c, S_UNA]:
        st[c, S_DUP] += 1
        on_dupack(c, t, st, fs, cpar, gpar, sq_seq, sb)
    if variant == TCP_SACK and st[c, S_INREC] == 1:
        prr_ack(c, delivered, st, fs, gpar, sb)
    ok = try_send(c, t, st, fs, cpar, gpar, sq_seq, sb)
    keep_alive(st, fs, cpar, gpar, sq_seq, sb)
    return ok


@njit(cache=True, error_model="numpy")
def on_timeout(c, t, st, fs, cpar, gpar, sq_seq, sb):
    """Retransmission timeout at slot ``t``: halve ssthresh, cwnd = 1, go back N.

    ssthresh is halved only at the first timeout of a segment: when the timer fires again
    before ``snd_una`` has moved (the segment already retransmitted by the timer), it is held
    constant (RFC 5681 Sec. 3.1), so a spurious second timeout behind a deep queue does not
    set it to 2 (docs/simulator.md, "Repeated timeouts").

    Every variant records ``S_RECOVER`` = highest segment sent + 1 (RFC 6582 Sec. 3.2 step
    4; ns Sack1 ``recover_``): no fast retransmit before it is acknowledged.  SACK also
    clears its scoreboard (RFC 2018).
    """
    if st[c, S_RTOUNA] == st[c, S_UNA] + 1:   # timeout kinds (diagnostic counters only)
        st[c, S_TOREPEAT] += 1
    elif st[c, S_UNA] < st[c, S_RECOVER]:
        st[c, S_TOHOLE] += 1
    elif st[c, S_SSEXIT] == 0 or st[c, S_UNA] < st[c, S_SSEXIT] - 1:
        st[c, S_TOSS] += 1
    elif st[c, S_FDROP] == st[c, S_TODROP]:   # nothing lost since: the ACKs stopped for an RTO (a silence)
        st[c, S_TONODROP] += 1
    st[c, S_TODROP] = st[c, S_FDROP]
    st[c, S_SSEXIT] = 0
    if st[c, S_RTOUNA] != st[c, S_UNA] + 1:   # the first timeout of this segment
        fs[c, F_SSTH] = ssthresh_on_timeout(c, fs, cpar)
    st[c, S_RTOUNA] = st[c, S_UNA] + 1
    fs[c, F_CWND] = 1.0
    if cpar[c, CP_VARIANT] == TCP_SACK:
        cap = sb.shape[1]
        for q in range(st[c, S_UNA], st[c, S_MAX]):
            sb[c, q % cap] = 0
        st[c, S_HIGHSACK] = st[c, S_UNA]
        st[c, S_PIPE] = 0
    st[c, S_RECOVER] = st[c, S_MAX]
    st[c, S_NXT] = st[c, S_UNA]
    st[c, S_DUP] = 0
    st[c, S_INREC] = 0
    st[c, S_RTTACT] = 0
    st[c, S_TIMEOUTS] += 1
    if gpar[G_RTOMODE] == 1:
        r = 2.0 * fs[c, F_RTO]
        if r > gpar[G_RTOMAX]:
            r = float(gpar[G_RTOMAX])
        fs[c, F_RTO] = r
    st[c, S_RTOEXP] = BIG
    return try_send(c, t, st, fs, cpar, gpar, sq_seq, sb)


@njit(cache=True, error_model="numpy", inline="always")
def send_ack(c, t, sk, st, cpar, ak_t, ak_v, ak_s):
    """The receiver sends an ACK at slot ``t`` (arrives ``CP_ACKDELAY`` later)."""
    cap = ak_t.shape[1]
    ok = st[c, S_AKCNT] < cap
    if ok:
        pos = (st[c, S_AKHEAD] + st[c, S_AKCNT]) % cap
        ak_t[c, pos] = t + cpar[c, CP_ACKDELAY]
        ak_v[c, pos] = st[c, S_RCVNXT]
        ak_s[c, pos] = sk
        st[c, S_AKCNT] += 1
        st[c, S_ACKS] += 1
        st[c, S_DAPEND] = 0
        st[c, S_DAEXP] = BIG
    keep_alive(st, cpar, ak_t, ak_v, ak_s)
    return ok


@njit(cache=True, error_model="numpy", inline="always")
def rcv_frame(c, q, t, st, cpar, gpar, ooo, ak_t, ak_v, ak_s):
    """A complete frame carrying segment ``q`` reaches the receiver at slot ``t``."""
    ok = True
    if st[c, S_DAEXP] < t:          # a delayed-ACK timer that expired before this arrival
        ok = send_ack(c, st[c, S_DAEXP], -1, st, cpar, ak_t, ak_v, ak_s)
    if ok:
        st[c, S_FDELIV] += 1
        rb = ooo.shape[1]
        rn = st[c, S_RCVNXT]
        ack = True          # whether to send an ACK now
        sk = -1
        if q == rn:
            rn += 1
            adv = 1
            while ooo[c, rn % rb] != 0:
                ooo[c, rn % rb] = 0
                rn += 1
                adv += 1
            st[c, S_RCVNXT] = rn
            st[c, S_GOODALL] += adv
            if t >= gpar[G_WARMUP]:
                st[c, S_GOOD] += adv
            if gpar[G_DELACK] == 1 and adv == 1:
                st[c, S_DAPEND] += 1
                if st[c, S_DAPEND] < 2:
                    ack = False
                    if st[c, S_DAEXP] >= BIG:
                        st[c, S_DAEXP] = t + gpar[G_DELACKTO]
        elif q > rn and q - rn < rb:
            ooo[c, q % rb] = 1
            sk = q
        if ack:
            ok = send_ack(c, t, sk, st, cpar, ak_t, ak_v, ak_s)
    keep_alive(st, cpar, gpar, ooo, ak_t, ak_v, ak_s)
    return ok


@njit(cache=True, error_model="numpy", inline="always")
def conn_next(c, st, ak_t):
    """Earliest pending timed event of connection ``c`` (ACK arrival or timer)."""
    n = st[c, S_RTOEXP]
    if st[c, S_DAEXP] < n:
        n = st[c, S_DAEXP]
    if st[c, S_AKCNT] > 0:
        v = ak_t[c, st[c, S_AKHEAD]]
        if v < n:
            n = v
    keep_alive(st, ak_t)
    return n


@njit(cache=True, error_model="numpy", inline="always")
def segmentation_cells(st):
    """Units (cells, or packets for TCP alone) waiting in every connection's segmentation
    buffer: the kernels skip idle slots only when this is 0."""
    n = np.int64(0)
    for c in range(st.shape[0]):
        n += st[c, S_SQCELLS]
    keep_alive(st)
    return n


@njit(cache=True, error_model="numpy")
def init_conn(c, st, fs, cfpar, gpar):
    fs[c, F_CWND] = cfpar[c, CF_IW]
    fs[c, F_SSTH] = cfpar[c, CF_SSTHRESH0]
    fs[c, F_SRTT] = -1.0
    fs[c, F_RTO] = float(gpar[G_RTOINIT])
    st[c, S_RTOEXP] = BIG
    st[c, S_DAEXP] = BIG


@njit(cache=True, error_model="numpy")
def tcp_state(nconn, sq_cap, ak_cap, rb_cap, cfpar, gpar):
    """The per-connection TCP state of a kernel (both kernels), every connection initialised
    by :func:`init_conn`.

    Returns ``st`` (``S_*``), ``fs`` (``F_*``), the segmentation queue ``sq_seq``, the ACKs
    in flight ``ak_t, ak_v, ak_s`` (arrival slot, cumulative value, SACKed segment), the
    receiver's out-of-order window ``ooo`` and the sender's SACK scoreboard ``sb``.
    """
    st = np.zeros((nconn, S_NSTATE), dtype=np.int64)
    fs = np.zeros((nconn, F_NSTATE))
    sq_seq = np.zeros((nconn, sq_cap), dtype=np.int64)
    ak_t = np.zeros((nconn, ak_cap), dtype=np.int64)
    ak_v = np.zeros((nconn, ak_cap), dtype=np.int64)
    ak_s = np.zeros((nconn, ak_cap), dtype=np.int64)
    ooo = np.zeros((nconn, rb_cap), dtype=np.int8)
    sb = np.zeros((nconn, rb_cap), dtype=np.int8)
    for c in range(nconn):
        init_conn(c, st, fs, cfpar, gpar)
    return st, fs, sq_seq, ak_t, ak_v, ak_s, ooo, sb
