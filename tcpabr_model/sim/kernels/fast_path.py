"""Numba kernel of the cell-level TCP/ABR simulator (private).

Time advances in *slots*: one slot is the transmission time of one 53-byte ATM cell at
the bottleneck's high rate.  Every rate in the kernel is in bytes per slot and every
server (ABR source, host link, bottleneck) works with a byte credit: each slot it gains
``rate`` bytes and transmits one unit (a cell, or a whole IP packet for TCP alone)
whenever its credit reaches the unit's size.  A server whose queue is empty at the end
of a slot forfeits its credit, so a unit arriving at an idle server departs one full
transmission time later.  Slots in which every queue is empty are skipped in one step
(the capacity integral over them is still accumulated exactly).

The kernel takes only arrays and scalars, draws no random numbers (the capacity path is
generated outside, see :mod:`tcpabr_model.sim.capacity`), and is fully deterministic.
The TCP sender and receiver state of each connection is a row of the integer array
``st`` and the float array ``fs`` (the "TCB as a state record"); the TCP rules are the
ones of the general network kernel, :mod:`tcpabr_model.sim.tcp.connection`, and the columns come
from :mod:`tcpabr_model.sim.arrays.layout`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..arrays.layout import *  # noqa: F401,F403  (re-exported: the fast path's columns for run.py)
from ..arrays.layout import (
    BIG, CF_HOSTRATE, CF_INITRATE, CF_MCR, CF_SHARE, CP_ABR, CP_FBDELAY, CP_M, CP_N, F_ACR, F_CRED, F_CWND, F_SSTH,
    G_BUF, G_EPD, G_INITSTATE, G_MEAS, G_NSLOTS, G_SAMPLE, G_UPF, G_WARMUP, GF_RATE, GF_SLOTB,
    GF_UNITB, O_CAPTOT, O_CAPWIN, O_ERR, O_NMEAS, O_NOUT, O_NSAMP, O_QEND, O_QINT, O_QMAX, O_SERVEDW, S_CDROP,
    S_CSENT, S_CSERVED, S_FBCNT, S_FBHEAD, S_FDROP, S_FSENT, S_GOODALL, S_PPDTX, S_SEGSENT,
    S_AKCNT, S_AKHEAD, S_DAEXP, S_RTOEXP,
    S_SQCELLS, S_SQCIDX, S_SQCNT, S_SQHEAD, S_TIMEOUTS,
)
from .capacity_cursor import cap_integral, path_cursor
from .delay_record import OC_PORT0, OC_SRCC, OC_SRCF, R_PORT0, record, record_delivery, stamp_pushes
from ..switch.rate_allocation import effcap_update, push_feedback, receive_feedback
from ..arrays.refcount import keep_alive
from ..tcp.connection import conn_next, on_ack, on_timeout, rcv_frame, segmentation_cells, send_ack, tcp_state, try_send


@njit(cache=True, error_model="numpy", inline="always")
def _conn_next(c, st, ak_t, fb_t):
    """Earliest timed event of connection ``c``: its TCP events or a feedback arrival."""
    n = conn_next(c, st, ak_t)
    if st[c, S_FBCNT] > 0:
        v = fb_t[c, st[c, S_FBHEAD]]
        if v < n:
            n = v
    keep_alive(st, ak_t, fb_t)     # see arrays/refcount.py
    return n


@njit(cache=True, error_model="numpy", inline="never")
def _coast(t, t_chk, nchg, warm, cred, acr, unitb, link_cred, link_add, ccap, bq_cnt, bq_eom, src_frames, seg_total,
           meas_acc, cap_tot, cap_win, pint, qint, sfi, sci):
    """The slots in which one connection with cells queued keeps its credit below a cell and
    the link (if busy) its credit below a unit: until then, a capacity change (``nchg``), an
    event or a boundary (``t_chk``), a slot only accumulates credits, capacity and the
    integrals.  The same additions in the same order as the kernel's full slot (bit for bit);
    a trace replay at a fraction of its busiest millisecond's rate spends most slots here.
    ``link_add`` is ``ccap * slotb * linkrate``, the full slot's expression.  Returns the
    first slot not run and the accumulators."""
    while t < t_chk and nchg >= t:
        cn = cred + acr
        if cn >= unitb:
            break
        if bq_cnt > 0:
            lc = link_cred + link_add
            if lc >= unitb:
                break
            link_cred = lc
        else:
            link_cred = 0.0
        cred = cn
        meas_acc += ccap
        cap_tot += ccap
        if t >= warm:
            cap_win += ccap
            pint += bq_eom
            qint += bq_cnt
            sfi += src_frames
            sci += seg_total
        t += 1
    return t, cred, link_cred, meas_acc, cap_tot, cap_win, pint, qint, sfi, sci


@njit(cache=True, error_model="numpy")
def simulate_kernel(gpar, gfpar, cpar, cfpar, ptimes, pseq, plev, force_conn, force_seq,
                    sq_cap, ak_cap, fb_cap, rb_cap, dhist, dsum, docc):
    """Run one replication.

    Parameters
    ----------
    gpar : ndarray(int64, ndim=1)
        Global integer parameters, indexed by the ``G_*`` constants.
    gfpar : ndarray(float64, ndim=1)
        Global float parameters, indexed by the ``GF_*`` constants.
    cpar : ndarray(int64, ndim=2)
        Per-connection integer parameters (rows: connections; ``CP_*`` columns).
    cfpar : ndarray(float64, ndim=2)
        Per-connection float parameters (``CF_*`` columns).
    ptimes : ndarray(float64, ndim=1)
        Capacity change epochs in slots, increasing, ending with +inf.  The level index
        starts at ``gpar[G_INITSTATE]``.
    pseq : ndarray(int64, ndim=1)
        Level index in force from ``ptimes[i]`` on (same length as ``ptimes``).
    plev : ndarray(float64, ndim=1)
        Capacity of each level, normalised to the high (peak) rate, in [0, 1].
    force_conn, force_seq : ndarray(int64, ndim=1)
        Frames (connection, sequence number) dropped at the bottleneck on their first
        transmission (for tests); empty arrays for none.
    sq_cap, ak_cap, fb_cap, rb_cap : int
        Ring sizes: segmentation queue (frames), ACKs in flight, feedback messages in
        flight, receiver reorder window.
    dhist, dsum, docc : ndarray(int64)
        Delay histograms, sums and occupancy integrals of the measured window
        (:mod:`.delay_record`, one port), filled in place.

    Returns
    -------
    st : ndarray(int64, ndim=2)
        Final per-connection state and counters (``S_*`` columns).
    fs : ndarray(float64, ndim=2)
        Final per-connection float state (``F_*`` columns).
    gout : ndarray(float64, ndim=1)
        Global outputs (``O_*``).
    meas : ndarray(float64, ndim=1)
        Measured average capacity of each interval s (INSTCAP values).
    fbv : ndarray(float64, ndim=2)
        Value computed from ``meas`` by eq. (28) for each connection and interval.
    smp_i : ndarray(int64, ndim=3)
        Samples every ``G_SAMPLE`` slots: ``[k, c, 0]`` cumulative in-order segments,
        ``[k, c, 1]`` cells in the segmentation queue, ``[k, c, 2]`` timeouts.
    smp_f : ndarray(float64, ndim=3)
        ``[k, c, 0]`` cwnd, ``[k, c, 1]`` allowed rate (normalised), ``[k, c, 2]``
        ssthresh.
    smp_g : ndarray(float64, ndim=2)
        ``[k, 0]`` slot, ``[k, 1]`` bottleneck occupancy (units), ``[k, 2]``
        cumulative capacity integral, ``[k, 3]`` capacity level index.
    """
    nconn = cpar.shape[0]
    nslots = gpar[G_NSLOTS]
    upf = gpar[G_UPF]
    bufcap = gpar[G_BUF]
    epd = gpar[G_EPD]
    meas_len = gpar[G_MEAS]
    samp_len = gpar[G_SAMPLE]
    slotb = gfpar[GF_SLOTB]
    linkrate = gfpar[GF_RATE]
    unitb = gfpar[GF_UNITB]
    caps = plev.reshape((1, plev.shape[0]))     # the one port's capacity levels (see capacity_cursor.py)
    ptimes2 = ptimes.reshape((1, ptimes.shape[0]))
    pseq2 = pseq.reshape((1, pseq.shape[0]))

    st, fs, sq_seq, ak_t, ak_v, ak_s, ooo, sb = tcp_state(nconn, sq_cap, ak_cap, rb_cap, cfpar, gpar)
    gout = np.zeros(O_NOUT)
    fb_t = np.zeros((nconn, fb_cap), dtype=np.int64)
    fb_v = np.zeros((nconn, fb_cap))
    # bottleneck FIFO: code = connection * 2 + end-of-message flag; seq of the frame
    bq_code = np.zeros(bufcap, dtype=np.int64)
    bq_seq = np.zeros(bufcap, dtype=np.int64)
    # delay stamps (issue 26): push slot of each queued segment; of a last cell in the
    # bottleneck, its frame's push slot and its arrival slot (= the slot the source sent it)
    sq_t = np.zeros((nconn, sq_cap), dtype=np.int64)
    stamped = np.zeros(nconn, dtype=np.int64)
    bq_t0 = np.zeros(bufcap, dtype=np.int64)
    bq_ta = np.zeros(bufcap, dtype=np.int64)
    src_frames = 0      # frames in the segmentation buffers
    bq_eom = 0          # last cells in the bottleneck
    sfi = 0             # occupancy integrals over [warm, nslots)
    sci = 0
    pint = 0
    nforce = force_conn.shape[0]
    force_used = np.zeros(nforce, dtype=np.int8)

    mmax = 1
    nmax = 1
    for c in range(nconn):
        if cpar[c, CP_M] > mmax:
            mmax = cpar[c, CP_M]
        if cpar[c, CP_N] > nmax:
            nmax = cpar[c, CP_N]
    xh = np.zeros(mmax)
    avg = np.zeros((nconn, nmax))
    nmeas_max = nslots // meas_len + 1
    meas = np.zeros(nmeas_max)
    fbv = np.zeros((nconn, nmeas_max))
    nsamp_max = nslots // samp_len + 2
    smp_i = np.zeros((nsamp_max, nconn, 3), dtype=np.int64)
    smp_f = np.zeros((nsamp_max, nconn, 3))
    smp_g = np.zeros((nsamp_max, 4))

    pstate = np.zeros((1, 2), dtype=np.int64)
    pstate[0, 1] = gpar[G_INITSTATE]

    for c in range(nconn):
        if cpar[c, CP_ABR] >= 1:
            fs[c, F_ACR] = max(cfpar[c, CF_INITRATE] * cfpar[c, CF_SHARE], cfpar[c, CF_MCR]) * slotb
        else:
            fs[c, F_ACR] = cfpar[c, CF_HOSTRATE]

    err = 0
    for c in range(nconn):
        if not try_send(c, 0, st, fs, cpar, gpar, sq_seq, sb):
            err = 1
        src_frames += stamp_pushes(c, 0, st, sq_t, stamped)
    next_evt = BIG
    for c in range(nconn):
        v = _conn_next(c, st, ak_t, fb_t)
        if v < next_evt:
            next_evt = v

    bq_head = 0
    bq_cnt = 0
    qmax = 0        # the network kernel's queue statistics (simulate_network's fast path)
    qint = 0
    servedw = 0
    link_cred = 0.0
    meas_acc = 0.0
    cap_tot = 0.0
    cap_win = 0.0
    warm = gpar[G_WARMUP]
    next_meas = meas_len
    next_samp = 0
    kmeas = 0
    ksamp = 0
    t = np.int64(0)

    nchg, ccap = path_cursor(0, ptimes2, pstate, caps)
    t_chk = np.int64(0)
    coast = False
    seg_total = segmentation_cells(st)
    while True:
        if t >= t_chk:
            # ---- boundaries at the start of slot t ---------------------------------
            if t == next_meas:
                x = meas_acc / meas_len
                meas_acc = 0.0
                xh[kmeas % mmax] = x
                meas[kmeas] = x
                kmeas += 1
                for c in range(nconn):
                    v = effcap_update(xh, avg[c], kmeas, cpar[c, CP_M], cpar[c, CP_N])
                    fbv[c, kmeas - 1] = v
                    if cpar[c, CP_ABR] == 1:
                        a = push_feedback(c, t, v, cpar[c, CP_FBDELAY], st, S_FBHEAD, S_FBCNT, fb_t, fb_v)
                        if a < 0:
                            err = 3
                        elif a < next_evt:
                            next_evt = a
                next_meas += meas_len
            if t == next_samp:
                smp_g[ksamp, 0] = t
                smp_g[ksamp, 1] = bq_cnt
                smp_g[ksamp, 2] = cap_tot
                smp_g[ksamp, 3] = pstate[0, 1]
                for c in range(nconn):
                    smp_i[ksamp, c, 0] = st[c, S_GOODALL]
                    smp_i[ksamp, c, 1] = st[c, S_SQCELLS]
                    smp_i[ksamp, c, 2] = st[c, S_TIMEOUTS]
                    smp_f[ksamp, c, 0] = fs[c, F_CWND]
                    smp_f[ksamp, c, 1] = fs[c, F_ACR] / slotb
                    smp_f[ksamp, c, 2] = fs[c, F_SSTH]
                ksamp += 1
                next_samp += samp_len
            if t >= nslots or err != 0:
                break

            # ---- timed events: feedback, ACK arrivals, timers -------------------------
            if t >= next_evt:
                next_evt = BIG
                for c in range(nconn):
                    receive_feedback(c, t, st, S_FBHEAD, S_FBCNT, fb_t, fb_v, fs, F_ACR, cfpar[c, CF_SHARE],
                                     cfpar[c, CF_MCR], slotb, 1.0)
                    while st[c, S_AKCNT] > 0 and ak_t[c, st[c, S_AKHEAD]] <= t:
                        h = st[c, S_AKHEAD]
                        a = ak_v[c, h]
                        st[c, S_AKHEAD] = (h + 1) % ak_cap
                        st[c, S_AKCNT] -= 1
                        if not on_ack(c, a, ak_s[c, h], t, st, fs, cpar, gpar, sq_seq, sb):
                            err = 1
                    if st[c, S_DAEXP] <= t:
                        if not send_ack(c, t, -1, st, cpar, ak_t, ak_v, ak_s):
                            err = 2
                    if st[c, S_RTOEXP] <= t:
                        if not on_timeout(c, t, st, fs, cpar, gpar, sq_seq, sb):
                            err = 1
                    src_frames += stamp_pushes(c, t, st, sq_t, stamped)
                    v = _conn_next(c, st, ak_t, fb_t)
                    if v < next_evt:
                        next_evt = v

            seg_total = segmentation_cells(st)
            t_chk = next_evt
            if next_meas < t_chk:
                t_chk = next_meas
            if next_samp < t_chk:
                t_chk = next_samp
            if nslots < t_chk:
                t_chk = nslots
            coast = nconn == 1 and fs[0, F_ACR] < 0.25 * unitb

        # ---- idle: skip to the next event or boundary -----------------------------
        if bq_cnt == 0 and seg_total == 0:
            tn = t_chk
            if tn > t:
                lo = t if t > warm else warm
                if tn > lo:
                    # split so that the warm-up boundary is honoured
                    if lo > t:
                        ci = cap_integral(0, t, lo, ptimes2, pseq2, pstate, caps)
                        meas_acc += ci
                        cap_tot += ci
                    ci = cap_integral(0, lo, tn, ptimes2, pseq2, pstate, caps)
                    meas_acc += ci
                    cap_tot += ci
                    cap_win += ci
                else:
                    ci = cap_integral(0, t, tn, ptimes2, pseq2, pstate, caps)
                    meas_acc += ci
                    cap_tot += ci
                for c in range(nconn):
                    fs[c, F_CRED] = 0.0
                link_cred = 0.0
                nchg, ccap = path_cursor(0, ptimes2, pstate, caps)
                t = tn
                continue

        # ---- busy link, idle sources: run the slots before the next departure -----
        # Every source is empty (their credit is 0) and the bottleneck is sending: until
        # the link's credit reaches a unit, a capacity change, an event or a boundary, a
        # slot only accumulates capacity, link credit and the queue integral.  The same
        # additions in the same order as the full slot below, so the results are
        # bit-identical; TCP alone (about 10 slots per IP packet) spends most slots here.
        if seg_total == 0 and bq_cnt > 0:
            t0 = t
            while t < t_chk and nchg >= t:
                lc = link_cred + ccap * slotb * linkrate
                if lc >= unitb:
                    break
                link_cred = lc
                meas_acc += ccap
                cap_tot += ccap
                if t >= warm:
                    cap_win += ccap
                    qint += bq_cnt
                    pint += bq_eom
                t += 1
            if t > t0:
                continue

        # ---- one source and the link between units: run the slots before either sends ---
        # (:func:`_coast`; entered where the source sends at most every fourth slot and a busy
        # link too: ``coast``, set with the events, as the allowed rate changes there; at higher
        # rates the loop would stop at once and its test cost the full slot 10-15 %)
        if coast and seg_total > 0 and fs[0, F_CRED] + 4.0 * fs[0, F_ACR] < unitb and \
                (bq_cnt == 0 or link_cred + 4.0 * ccap * slotb * linkrate < unitb):
            t0 = t
            (t, cred, link_cred, meas_acc, cap_tot, cap_win, pint, qint, sfi,
             sci) = _coast(t, t_chk, nchg, warm, fs[0, F_CRED], fs[0, F_ACR], unitb, link_cred, ccap * slotb * linkrate,
                           ccap, bq_cnt, bq_eom, src_frames, seg_total, meas_acc, cap_tot, cap_win, pint, qint,
                           sfi, sci)
            if t > t0:
                fs[0, F_CRED] = cred
                continue

        # ---- sources emit ---------------------------------------------------------
        # st[c, S_PPDTX] is 1 while the rest of the head frame is being discarded
        # (partial packet discard); it is cleared with the frame's last cell.
        for c in range(nconn):
            if st[c, S_SQCELLS] == 0:
                fs[c, F_CRED] = 0.0
                continue
            cred = fs[c, F_CRED] + fs[c, F_ACR]
            while cred >= unitb and st[c, S_SQCELLS] > 0:
                cred -= unitb
                cidx = st[c, S_SQCIDX]
                eom = cidx == upf - 1
                st[c, S_SQCELLS] -= 1
                seg_total -= 1
                h = st[c, S_SQHEAD]
                if eom:
                    st[c, S_SQHEAD] = h + 1 if h + 1 < sq_cap else 0
                    st[c, S_SQCNT] -= 1
                    st[c, S_SQCIDX] = 0
                    src_frames -= 1
                else:
                    st[c, S_SQCIDX] = cidx + 1
                # -- arrival at the bottleneck (PPD / EPD / forced drop) --
                if st[c, S_PPDTX] != 0:
                    st[c, S_CDROP] += 1
                    if eom:
                        st[c, S_PPDTX] = 0
                    continue
                drop = False
                if cidx == 0:
                    if nforce > 0:
                        seq = sq_seq[c, h]
                        for k in range(nforce):
                            if force_used[k] == 0 and force_conn[k] == c and force_seq[k] == seq:
                                force_used[k] = 1
                                drop = True
                                break
                    if epd >= 0 and bq_cnt >= epd:
                        drop = True
                if drop or bq_cnt >= bufcap:
                    st[c, S_FDROP] += 1
                    st[c, S_CDROP] += 1
                    if not eom:
                        st[c, S_PPDTX] = 1
                    continue
                pos = bq_head + bq_cnt
                if pos >= bufcap:
                    pos -= bufcap
                if eom:
                    bq_code[pos] = 2 * c + 1
                    bq_seq[pos] = sq_seq[c, h]
                    bq_t0[pos] = sq_t[c, h]
                    bq_ta[pos] = t
                    bq_eom += 1
                else:
                    bq_code[pos] = 2 * c
                bq_cnt += 1
                if bq_cnt > qmax:
                    qmax = bq_cnt
            if st[c, S_SQCELLS] == 0:
                cred = 0.0
            fs[c, F_CRED] = cred

        # ---- capacity of this slot and bottleneck service --------------------------
        if nchg >= t:
            ci = ccap
        else:
            ci = cap_integral(0, t, t + 1, ptimes2, pseq2, pstate, caps)
            nchg, ccap = path_cursor(0, ptimes2, pstate, caps)
        meas_acc += ci
        cap_tot += ci
        if t >= warm:
            cap_win += ci
            pint += bq_eom
        if bq_cnt > 0:
            link_cred += ci * slotb * linkrate
            while link_cred >= unitb and bq_cnt > 0:
                link_cred -= unitb
                code = bq_code[bq_head]
                h = bq_head
                bq_head += 1
                if bq_head == bufcap:
                    bq_head = 0
                bq_cnt -= 1
                if t >= warm:
                    servedw += 1
                # A frame's last cell reaches the receiver iff none of its cells was
                # dropped: discards (PPD/EPD/forced) always remove every later cell of
                # the frame, including the last one.  So no per-cell reassembly count.
                if code & 1:
                    c = code >> 1
                    bq_eom -= 1
                    # delays (.delay_record): served in the window, received in it (the receiver's
                    # S_GOOD window); propagation 0: Delta is all on the ACK path
                    if t >= warm:
                        record(dhist, dsum, docc, R_PORT0, t + 1 - bq_ta[h])
                    if t + 1 >= warm:
                        record_delivery(dhist, dsum, docc, t + 1 - bq_t0[h], bq_ta[h] - bq_t0[h], t + 1 - bq_ta[h])
                    if not rcv_frame(c, bq_seq[h], t + 1, st, cpar, gpar, ooo, ak_t, ak_v, ak_s):
                        err = 2
                    v = _conn_next(c, st, ak_t, fb_t)
                    if v < next_evt:
                        next_evt = v
                    if v < t_chk:
                        t_chk = v
                    if err != 0:
                        t_chk = t + 1
            if bq_cnt == 0:
                link_cred = 0.0
        else:
            link_cred = 0.0
        if t >= warm:
            qint += bq_cnt
            sfi += src_frames
            sci += seg_total
        t += 1

    # counters derived from conservation instead of being counted per cell
    for c in range(nconn):
        st[c, S_CSENT] = st[c, S_SEGSENT] * upf - st[c, S_SQCELLS]
        st[c, S_FSENT] = st[c, S_SEGSENT] - st[c, S_SQCNT] + (1 if st[c, S_SQCIDX] > 0 else 0)
        st[c, S_CSERVED] = st[c, S_CSENT] - st[c, S_CDROP]
    for i in range(bq_cnt):
        pos = (bq_head + i) % bufcap
        st[bq_code[pos] >> 1, S_CSERVED] -= 1
    gout[O_CAPTOT] = cap_tot
    gout[O_CAPWIN] = cap_win
    gout[O_ERR] = err
    gout[O_QEND] = bq_cnt
    gout[O_NMEAS] = kmeas
    gout[O_NSAMP] = ksamp
    gout[O_QMAX] = qmax
    gout[O_QINT] = qint
    gout[O_SERVEDW] = servedw
    docc[OC_SRCF] = sfi
    docc[OC_SRCC] = sci
    docc[OC_PORT0] = pint
    return st, fs, gout, meas[:kmeas], fbv[:, :kmeas], smp_i[:ksamp], smp_f[:ksamp], smp_g[:ksamp]
