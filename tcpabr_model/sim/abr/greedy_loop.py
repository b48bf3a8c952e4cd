"""A minimal single-bottleneck ABR loop for tests (private; not the network simulator).

``n`` greedy ABR sources (always backlogged, no TCP) share one switch output port that runs
ERICA/ERICA+, with an optional on/off VBR source at strict priority.  It exercises the
source rules of :mod:`tcpabr_model.sim.abr.source` and the port algorithm of :mod:`tcpabr_model.sim.switch.erica` end to end
(FRM emission, forwarding through the port, turnaround at the destination, ER stamping on
the backward pass through the switch, ACR update at the source) without the topology
kernel, so the two modules can be tested in closed loop on their own.  TCP over ABR on
a topology is the network kernel's job (:mod:`tcpabr_model.sim.kernels.general`).

Time is slotted at one cell time of the bottleneck link (link rate = 1 cell/slot); all
sources see the same delays: source -> switch ``d1``, switch -> destination ``d2``, and
the backward RM cell passes the switch ``d2`` after the turnaround and reaches its source
``d1`` later (reverse path uncongested, fixed delay).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from . import source as A
from ..switch import erica as E

# outputs (out array)
LO_ABR_SERVED = 0   # ABR cells (data + FRM) served by the port
LO_VBR_SERVED = 1
LO_FRM_SENT = 2
LO_FRM_TURNED = 3
LO_BRM_RECV = 4
LO_DATA_SENT = 5
LO_QMAX = 6
LO_ERR = 7          # 1: a ring overflowed
LO_ABR_SERVED_2H = 8  # ABR cells served in the second half
LO_NOUT = 9

# trace of the ERICA interval ends (ilog rows; pass an array with 0 rows for no trace)
IL_T = 0        # slot at which the interval ended
IL_DT = 1       # its length, slots
IL_NABR = 2     # ABR input cells counted
IL_NVBR = 3     # VBR cells served
IL_CABR = 4     # ABR capacity (link = 1)
IL_TARGET = 5   # target ABR capacity
IL_Z = 6        # overload factor in use
IL_FAIR = 7     # fair share
IL_Q = 8        # ABR queue at the end, cells
IL_BYTIME = 9   # 1: ended by the time limit, 0: by the cell count
IL_N = 10
# trace of the backward RM cells passing the switch (blog rows)
BL_T = 0        # slot
BL_VC = 1
BL_CCRTAB = 2   # CCR of the VC in the port's table (its last FRM at the port input)
BL_ER = 3       # ER field after stamping
BL_CCRCELL = 4  # CCR field carried by this RM cell (the source's ACR when it sent the FRM)
BL_N = 5


@njit(cache=True, error_model="numpy")
def _end_interval_traced(epar, es, act, t, q, bytime, ilog, nlog):
    """End the ERICA interval at slot ``t`` and append a trace row if there is room."""
    nab = es[E.ES_NABR]
    nvb = es[E.ES_NVBR]
    t0 = es[E.ES_TSTART]
    if E.erica_end_interval(epar, es, act, float(t), q):
        k = nlog[0]
        if k < ilog.shape[0]:
            ilog[k, IL_T] = t
            ilog[k, IL_DT] = t - t0
            ilog[k, IL_NABR] = nab
            ilog[k, IL_NVBR] = nvb
            ilog[k, IL_CABR] = es[E.ES_CABR]
            ilog[k, IL_TARGET] = es[E.ES_TARGET]
            ilog[k, IL_Z] = es[E.ES_Z]
            ilog[k, IL_FAIR] = es[E.ES_FAIR]
            ilog[k, IL_Q] = q
            ilog[k, IL_BYTIME] = bytime
            nlog[0] = k + 1


@njit(cache=True, error_model="numpy")
def abr_loop(nslots, t_stop, d1, d2, vbr_rate, vbr_on, vbr_off, spar, epar, n, sample_every,
             ring, q_samples, acr_samples, out, ilog, blog, nlog):
    """Run the loop for ``nslots`` slots.

    ``spar``: source parameter row (rates in cells/slot, times in slots), shared by the
    ``n`` sources; ``epar``: ERICA parameter row with link rate 1.  ``vbr_on``/``vbr_off``
    in slots (``vbr_rate = 0``: no VBR).  ``ring``: capacity of the internal FIFOs.
    Sources stop emitting at slot ``t_stop`` (so the loop can drain).
    Samples of the port's ABR queue and of the sum of ACRs are written every
    ``sample_every`` slots.  ``ilog`` (rows ``IL_*``) and ``blog`` (rows ``BL_*``) record
    the ERICA interval ends and the BRM stampings until they are full; ``nlog[0]``,
    ``nlog[1]`` count the rows written (arrays with 0 rows: no trace).
    """
    st = np.zeros((n, A.AS_NSTATE))
    cred = np.zeros(n)
    for i in range(n):
        A.abr_source_init(spar, st[i])
    dst = np.zeros((n, A.AD_NSTATE), dtype=np.int64)
    es = np.zeros(E.ES_NSTATE)
    act = np.zeros(n)
    ccr = np.zeros(n)
    E.erica_init(epar, es, act, ccr, 0.0)
    # FIFO rings: 0 source->switch, 1 port queue, 2 switch->dest, 3 dest->switch (BRM),
    # 4 switch->source (BRM).  Each entry: time, vc, kind (0 data, 1 RM), RM fields.
    nf = 5
    ft = np.zeros((nf, ring), dtype=np.int64)
    fv = np.zeros((nf, ring), dtype=np.int64)
    fk = np.zeros((nf, ring), dtype=np.int64)
    frm = np.zeros((nf, ring, A.RM_NFIELDS))
    head = np.zeros(nf, dtype=np.int64)
    cnt = np.zeros(nf, dtype=np.int64)
    rmtmp = np.zeros(A.RM_NFIELDS)
    vcred = 0.0
    rr = 0
    ns = 0
    half = nslots // 2
    for t in range(nslots):
        # ---- sources emit at ACR (round-robin start to avoid bias) --------------------
        for k in range(n if t < t_stop else 0):
            i = (rr + k) % n
            cred[i] += st[i, A.AS_ACR]
            if cred[i] >= 1.0:
                cred[i] -= 1.0
                if cred[i] > 1.0:
                    cred[i] = 1.0
                if cnt[0] >= ring:
                    out[LO_ERR] = 1
                    return
                pos = (head[0] + cnt[0]) % ring
                ft[0, pos] = t + d1
                fv[0, pos] = i
                if A.abr_next_is_frm(spar, st[i], float(t)):
                    A.abr_send_frm(spar, st[i], float(t), frm[0, pos])
                    fk[0, pos] = 1
                    out[LO_FRM_SENT] += 1
                else:
                    A.abr_send_data(st[i])
                    fk[0, pos] = 0
                    out[LO_DATA_SENT] += 1
                cnt[0] += 1
        rr = (rr + 1) % n
        # ---- arrivals at the switch port ------------------------------------------
        while cnt[0] > 0 and ft[0, head[0]] <= t:
            h = head[0]
            v = fv[0, h]
            if fk[0, h] == 1:
                E.erica_on_frm(ccr, v, frm[0, h, A.RM_CCR])
            if E.erica_on_abr_input(epar, es, act, v):
                _end_interval_traced(epar, es, act, t, cnt[1], 0, ilog, nlog)
            if cnt[1] >= ring:
                out[LO_ERR] = 1
                return
            pos = (head[1] + cnt[1]) % ring
            fv[1, pos] = v
            fk[1, pos] = fk[0, h]
            for c in range(A.RM_NFIELDS):
                frm[1, pos, c] = frm[0, h, c]
            cnt[1] += 1
            head[0] = (h + 1) % ring
            cnt[0] -= 1
        if E.erica_time_due(epar, es, float(t)):
            _end_interval_traced(epar, es, act, t, cnt[1], 1, ilog, nlog)
        if cnt[1] > out[LO_QMAX]:
            out[LO_QMAX] = cnt[1]
        # ---- the port serves one cell: VBR first -----------------------------------
        on = False
        if vbr_rate > 0.0:
            ph = t % (vbr_on + vbr_off)
            on = ph < vbr_on
        if on:
            vcred += vbr_rate
        else:
            vcred = 0.0
        if vcred >= 1.0:
            vcred -= 1.0
            E.erica_on_vbr_served(es)
            out[LO_VBR_SERVED] += 1
        elif cnt[1] > 0:
            h = head[1]
            pos = (head[2] + cnt[2]) % ring
            if cnt[2] >= ring:
                out[LO_ERR] = 1
                return
            ft[2, pos] = t + d2
            fv[2, pos] = fv[1, h]
            fk[2, pos] = fk[1, h]
            for c in range(A.RM_NFIELDS):
                frm[2, pos, c] = frm[1, h, c]
            cnt[2] += 1
            head[1] = (h + 1) % ring
            cnt[1] -= 1
            out[LO_ABR_SERVED] += 1
            if t >= half:
                out[LO_ABR_SERVED_2H] += 1
        # ---- destinations: data absorbed, FRMs turned around -------------------------
        while cnt[2] > 0 and ft[2, head[2]] <= t:
            h = head[2]
            v = fv[2, h]
            if fk[2, h] == 1:
                A.abr_dest_turnaround(dst[v], frm[2, h])
                out[LO_FRM_TURNED] += 1
                if cnt[3] >= ring:
                    out[LO_ERR] = 1
                    return
                pos = (head[3] + cnt[3]) % ring
                ft[3, pos] = t + d2
                fv[3, pos] = v
                for c in range(A.RM_NFIELDS):
                    frm[3, pos, c] = frm[2, h, c]
                cnt[3] += 1
            else:
                A.abr_dest_on_data(dst[v], False)
            head[2] = (h + 1) % ring
            cnt[2] -= 1
        # ---- BRMs pass the switch: ERICA stamps ER -----------------------------------
        while cnt[3] > 0 and ft[3, head[3]] <= t:
            h = head[3]
            v = fv[3, h]
            frm[3, h, A.RM_ER] = E.erica_feedback(epar, es, ccr, v, frm[3, h, A.RM_ER])
            k = nlog[1]
            if k < blog.shape[0]:
                blog[k, BL_T] = t
                blog[k, BL_VC] = v
                blog[k, BL_CCRTAB] = ccr[v]
                blog[k, BL_ER] = frm[3, h, A.RM_ER]
                blog[k, BL_CCRCELL] = frm[3, h, A.RM_CCR]
                nlog[1] = k + 1
            if cnt[4] >= ring:
                out[LO_ERR] = 1
                return
            pos = (head[4] + cnt[4]) % ring
            ft[4, pos] = t + d1
            fv[4, pos] = v
            for c in range(A.RM_NFIELDS):
                frm[4, pos, c] = frm[3, h, c]
            cnt[4] += 1
            head[3] = (h + 1) % ring
            cnt[3] -= 1
        # ---- BRMs reach their sources -------------------------------------------------
        while cnt[4] > 0 and ft[4, head[4]] <= t:
            h = head[4]
            for c in range(A.RM_NFIELDS):
                rmtmp[c] = frm[4, h, c]
            A.abr_on_brm(spar, st[fv[4, h]], rmtmp)
            out[LO_BRM_RECV] += 1
            head[4] = (h + 1) % ring
            cnt[4] -= 1
        if t % sample_every == 0 and ns < q_samples.shape[0]:
            q_samples[ns] = cnt[1]
            s = 0.0
            for i in range(n):
                s += st[i, A.AS_ACR]
            acr_samples[ns] = s
            ns += 1
