"""TCP sender and receiver hooks of the network kernel (private).

One connection's state is a row of ``st`` (integers) and ``fs`` (floats), columns from
:mod:`._layout`.  Sequence numbers count segments (one segment = one AAL5 frame).  The
variant of each connection is ``cpar[c, CP_VARIANT]``:

``TCP_TIMEOUT_ONLY`` ("Vanilla" TCP, seed 000 Sec. 2.1; the core paper's model)
    slow start and congestion avoidance; a loss is recovered by the retransmission
    timeout only: ssthresh = max(floor(min(cwnd, wmax) / 2), 2), cwnd = 1, go-back-N.
``TCP_RENO``
    fast retransmit on the ``dupthresh``-th duplicate ACK, ssthresh = max(flight/2, 2),
    cwnd = ssthresh + dupthresh... exactly the rules of :mod:`tcpabr_model.sim` (cwnd =
    ssthresh + 3, +1 per further duplicate ACK, cwnd = ssthresh at the first new ACK).
``TCP_SACK``
    the receiver reports the segment that triggered each duplicate ACK (the first SACK
    block of RFC 2018; with a lossless reverse path the sender's scoreboard is then
    exact).  On the ``dupthresh``-th duplicate ACK: ssthresh = cwnd_eff = max(flight/2, 2),
    ``pipe`` = flight - dupthresh, retransmit the first unacknowledged segment.  During
    recovery (Fall & Floyd 1996, seed 000 ref. [20]): each duplicate ACK decrements pipe
    by 1, a partial ACK by 2; while pipe < cwnd the sender "first retransmits the lost
    packets before sending out any new packets" (seed 000 Sec. 2.1): the lowest segment
    below the highest SACKed one that is neither SACKed nor already retransmitted, else
    new data within the receiver window; each transmission adds 1 to pipe.  Recovery ends
    when an ACK covers the highest segment sent at its start (cwnd = ssthresh).  A timeout
    clears the scoreboard (RFC 2018) and goes back N like the other variants.

Timers: fixed RTO (``CP_RTOFIX``) or the RFC 6298 estimator with timer granularity
``G_GRAN`` (expiry rounded up to a multiple of it), as in :mod:`tcpabr_model.sim`.
Receiver: cumulative ACKs, out-of-order segments kept, optional delayed ACK (every second
in-order segment or after ``G_DELACKTO``; out-of-order and hole-filling segments are
acknowledged at once).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._layout import (
    BIG, CF_IW, CF_SSTHRESH0, CP_ACKDELAY, CP_RTOFIX, CP_UPF, CP_VARIANT, CP_WMAX, F_CWND, F_RTO, F_RTTVAR,
    F_SRTT, F_SSTH, G_DELACK, G_DELACKTO, G_DUPTHRESH, G_GRAN, G_RTOINIT, G_RTOMAX, G_RTOMIN, G_RTOMODE,
    G_WARMUP, S_ACKS, S_AKCNT, S_AKHEAD, S_DAEXP, S_DAPEND, S_DUP, S_FASTRTX, S_FDELIV, S_GOOD,
    S_GOODALL, S_HIGHSACK, S_INREC, S_MAX, S_NXT, S_PIPE, S_RCVNXT, S_RECOVER, S_RETX, S_RTOEXP,
    S_RTTACT, S_RTTSEQ, S_RTTSTART, S_RTXNEXT, S_SEGSENT, S_SQCELLS, S_SQCNT, S_SQHEAD,
    S_TIMEOUTS, S_UNA, TCP_RENO, TCP_SACK,
)

__all__ = ["push_seg", "try_send", "on_ack", "on_timeout", "rcv_frame", "send_ack", "conn_next"]


@njit(cache=True, error_model="numpy", inline="always")
def _rto_slots(c, fs, cpar, gpar):
    if gpar[G_RTOMODE] == 0:
        return cpar[c, CP_RTOFIX]
    return np.int64(np.ceil(fs[c, F_RTO]))


@njit(cache=True, error_model="numpy", inline="always")
def _arm_timer(c, t, st, fs, cpar, gpar):
    exp = t + _rto_slots(c, fs, cpar, gpar)
    if gpar[G_RTOMODE] == 1:
        g = gpar[G_GRAN]
        if g > 1:
            exp = ((exp + g - 1) // g) * g
    st[c, S_RTOEXP] = exp


@njit(cache=True, error_model="numpy", inline="always")
def push_seg(c, seq, st, cpar, sq_seq):
    """Queue segment ``seq`` for segmentation at the VC source; False on ring overflow."""
    cap = sq_seq.shape[1]
    if st[c, S_SQCNT] >= cap:
        return False
    pos = (st[c, S_SQHEAD] + st[c, S_SQCNT]) % cap
    sq_seq[c, pos] = seq
    st[c, S_SQCNT] += 1
    st[c, S_SQCELLS] += cpar[c, CP_UPF]
    st[c, S_SEGSENT] += 1
    return True


@njit(cache=True, error_model="numpy", inline="always")
def _send_new(c, t, st, fs, cpar, gpar, sq_seq):
    seq = st[c, S_NXT]
    if not push_seg(c, seq, st, cpar, sq_seq):
        return False
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
    return True


@njit(cache=True, error_model="numpy")
def try_send(c, t, st, fs, cpar, gpar, sq_seq, sb):
    """Send what the window allows (the SACK recovery rule during SACK recovery)."""
    if cpar[c, CP_VARIANT] == TCP_SACK and st[c, S_INREC] == 1:
        cap = sb.shape[1]
        wmax = cpar[c, CP_WMAX]
        cw = np.int64(np.floor(fs[c, F_CWND] + 1e-9))
        while st[c, S_PIPE] < cw:
            q = st[c, S_RTXNEXT]
            if q < st[c, S_UNA]:
                q = st[c, S_UNA]
            hs = st[c, S_HIGHSACK]
            while q < hs and sb[c, q % cap] != 0:
                q += 1
            if q < hs:
                if not push_seg(c, q, st, cpar, sq_seq):
                    return False
                sb[c, q % cap] = 2
                st[c, S_RETX] += 1
                st[c, S_RTXNEXT] = q + 1
                st[c, S_PIPE] += 1
                continue
            st[c, S_RTXNEXT] = q
            if st[c, S_NXT] < st[c, S_UNA] + wmax:
                if not _send_new(c, t, st, fs, cpar, gpar, sq_seq):
                    return False
                st[c, S_PIPE] += 1
            else:
                break
        return True
    win = fs[c, F_CWND]
    wmax = cpar[c, CP_WMAX]
    if win > wmax:
        win = float(wmax)
    w = np.int64(np.floor(win + 1e-9))
    if w < 1:
        w = 1
    while st[c, S_NXT] < st[c, S_UNA] + w:
        if not _send_new(c, t, st, fs, cpar, gpar, sq_seq):
            return False
    return True


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


@njit(cache=True, error_model="numpy")
def on_ack(c, a, sk, t, st, fs, cpar, gpar, sq_seq, sb):
    """ACK with cumulative value ``a`` (next expected segment) and SACKed segment ``sk``
    (-1: none) reaches the sender at slot ``t``.  Returns False on a ring overflow."""
    wmax = float(cpar[c, CP_WMAX])
    variant = cpar[c, CP_VARIANT]
    cap = sb.shape[1]
    if variant == TCP_SACK and sk >= st[c, S_UNA] and sk < st[c, S_MAX]:
        sb[c, sk % cap] |= 1
        if sk + 1 > st[c, S_HIGHSACK]:
            st[c, S_HIGHSACK] = sk + 1
    if a > st[c, S_UNA]:
        if st[c, S_RTTACT] == 1 and a > st[c, S_RTTSEQ]:
            _rtt_sample(c, t - st[c, S_RTTSTART], fs, gpar)
            st[c, S_RTTACT] = 0
        if variant == TCP_SACK:
            for q in range(st[c, S_UNA], a):
                sb[c, q % cap] = 0
        if st[c, S_INREC] == 1:
            if variant == TCP_SACK and a < st[c, S_RECOVER]:
                st[c, S_PIPE] -= 2       # partial ACK: the original and its retransmission left
                if st[c, S_PIPE] < 0:
                    st[c, S_PIPE] = 0
            else:
                fs[c, F_CWND] = fs[c, F_SSTH]
                st[c, S_INREC] = 0
        elif fs[c, F_CWND] < fs[c, F_SSTH]:
            fs[c, F_CWND] += 1.0
        else:
            fs[c, F_CWND] += 1.0 / fs[c, F_CWND]
        if fs[c, F_CWND] > wmax:
            fs[c, F_CWND] = wmax
        st[c, S_UNA] = a
        st[c, S_DUP] = 0
        if st[c, S_NXT] < a:
            st[c, S_NXT] = a
        if st[c, S_HIGHSACK] < a:
            st[c, S_HIGHSACK] = a
        if st[c, S_UNA] < st[c, S_MAX]:
            _arm_timer(c, t, st, fs, cpar, gpar)
        else:
            st[c, S_RTOEXP] = BIG
    elif a == st[c, S_UNA] and st[c, S_MAX] > st[c, S_UNA]:
        st[c, S_DUP] += 1
        if variant == TCP_RENO:
            if st[c, S_INREC] == 0 and st[c, S_DUP] == gpar[G_DUPTHRESH]:
                flight = st[c, S_MAX] - st[c, S_UNA]
                ss = float(flight // 2)
                if ss < 2.0:
                    ss = 2.0
                fs[c, F_SSTH] = ss
                push_seg(c, st[c, S_UNA], st, cpar, sq_seq)
                st[c, S_RETX] += 1
                st[c, S_FASTRTX] += 1
                fs[c, F_CWND] = ss + 3.0
                st[c, S_INREC] = 1
                st[c, S_RTTACT] = 0
                _arm_timer(c, t, st, fs, cpar, gpar)
            elif st[c, S_INREC] == 1:
                fs[c, F_CWND] += 1.0
        elif variant == TCP_SACK:
            # no new recovery before every segment outstanding at the last timeout (or
            # recovery start) is acknowledged: S_RECOVER (ns Sack1 ``recover_``, RFC 6675
            # Sec. 5.1); the duplicate ACKs of go-back-N duplicates are not losses
            if (st[c, S_INREC] == 0 and st[c, S_DUP] == gpar[G_DUPTHRESH]
                    and st[c, S_UNA] >= st[c, S_RECOVER]):
                flight = st[c, S_MAX] - st[c, S_UNA]
                ss = float(flight // 2)
                if ss < 2.0:
                    ss = 2.0
                fs[c, F_SSTH] = ss
                fs[c, F_CWND] = ss
                st[c, S_INREC] = 1
                st[c, S_RECOVER] = st[c, S_MAX]
                st[c, S_PIPE] = flight - gpar[G_DUPTHRESH]
                if st[c, S_PIPE] < 0:
                    st[c, S_PIPE] = 0
                una = st[c, S_UNA]
                push_seg(c, una, st, cpar, sq_seq)
                sb[c, una % cap] = 2
                st[c, S_RTXNEXT] = una + 1
                st[c, S_PIPE] += 1
                st[c, S_RETX] += 1
                st[c, S_FASTRTX] += 1
                st[c, S_RTTACT] = 0
                _arm_timer(c, t, st, fs, cpar, gpar)
            elif st[c, S_INREC] == 1:
                st[c, S_PIPE] -= 1
                if st[c, S_PIPE] < 0:
                    st[c, S_PIPE] = 0
    return try_send(c, t, st, fs, cpar, gpar, sq_seq, sb)


@njit(cache=True, error_model="numpy")
def on_timeout(c, t, st, fs, cpar, gpar, sq_seq, sb):
    """Retransmission timeout at slot ``t``: halve ssthresh, cwnd = 1, go back N."""
    w = fs[c, F_CWND]
    wmax = float(cpar[c, CP_WMAX])
    if w > wmax:
        w = wmax
    ss = np.floor(w / 2.0)
    if ss < 2.0:
        ss = 2.0
    fs[c, F_SSTH] = ss
    fs[c, F_CWND] = 1.0
    if cpar[c, CP_VARIANT] == TCP_SACK:
        cap = sb.shape[1]
        for q in range(st[c, S_UNA], st[c, S_MAX]):
            sb[c, q % cap] = 0
        st[c, S_HIGHSACK] = st[c, S_UNA]
        st[c, S_PIPE] = 0
        st[c, S_RECOVER] = st[c, S_MAX]     # recovery point (Fall & Floyd's ns Sack1, RFC 6675 5.1)
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
    if st[c, S_AKCNT] >= cap:
        return False
    pos = (st[c, S_AKHEAD] + st[c, S_AKCNT]) % cap
    ak_t[c, pos] = t + cpar[c, CP_ACKDELAY]
    ak_v[c, pos] = st[c, S_RCVNXT]
    ak_s[c, pos] = sk
    st[c, S_AKCNT] += 1
    st[c, S_ACKS] += 1
    st[c, S_DAPEND] = 0
    st[c, S_DAEXP] = BIG
    return True


@njit(cache=True, error_model="numpy")
def rcv_frame(c, q, t, st, cpar, gpar, ooo, ak_t, ak_v, ak_s):
    """A complete frame carrying segment ``q`` reaches the receiver at slot ``t``."""
    if st[c, S_DAEXP] < t:          # a delayed-ACK timer that expired before this arrival
        if not send_ack(c, st[c, S_DAEXP], -1, st, cpar, ak_t, ak_v, ak_s):
            return False
    st[c, S_FDELIV] += 1
    rb = ooo.shape[1]
    rn = st[c, S_RCVNXT]
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
            if st[c, S_DAPEND] >= 2:
                return send_ack(c, t, -1, st, cpar, ak_t, ak_v, ak_s)
            if st[c, S_DAEXP] >= BIG:
                st[c, S_DAEXP] = t + gpar[G_DELACKTO]
            return True
        return send_ack(c, t, -1, st, cpar, ak_t, ak_v, ak_s)
    sk = -1
    if q > rn and q - rn < rb:
        ooo[c, q % rb] = 1
        sk = q
    return send_ack(c, t, sk, st, cpar, ak_t, ak_v, ak_s)


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
    return n


@njit(cache=True, error_model="numpy")
def init_conn(c, st, fs, cfpar, gpar):
    fs[c, F_CWND] = cfpar[c, CF_IW]
    fs[c, F_SSTH] = cfpar[c, CF_SSTHRESH0]
    fs[c, F_SRTT] = -1.0
    fs[c, F_RTO] = float(gpar[G_RTOINIT])
    st[c, S_RTOEXP] = BIG
    st[c, S_DAEXP] = BIG
