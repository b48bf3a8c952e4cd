"""Numba kernel of the network (topology) cell-level simulator (private).

Time advances in slots of one 53-byte cell time at the *reference rate* (the rate whose
``PF_RATE`` is 1).  Every server works with a byte credit like :mod:`tcpabr_model.sim`:
a source gains its rate (bytes per slot) each slot and emits one unit (cell, or IP
packet for TCP alone) per ``GF_UNITB`` bytes of credit; a port gains ``capacity x rate x
53`` bytes per slot and serves one unit per ``GF_UNITB`` bytes.  A server with an empty
queue at the end of a slot forfeits its credit.  Slots in which nothing is queued
anywhere (ports, link delay lines, sources; no VBR source on) are skipped in one step,
up to the next timed event, measurement boundary or ERICA averaging-interval end (an
ERICA port's timer keeps running while nothing moves).

Order of work inside slot ``t`` (the same as the single-bottleneck kernel, so the
network built by :meth:`tcpabr_model.sim.Scenario.to_network` reproduces it exactly):

1. boundaries: measurement interval end -> rate allocation hook of every port
   (:mod:`tcpabr_model.sim.switch.rate_allocation`);
2. timed events per VC (in VC order): feedback arrivals, VBR on/off switches, then for
   each of its connections ACK arrivals, delayed-ACK timer, retransmission timer
   (:mod:`tcpabr_model.sim.tcp.connection`);
3. cells whose link delay ends at ``t`` arrive at their next port;
4. sources emit (VC order); a cell arrives at the first port of its route in the same
   slot (the access-link delay is folded into the ACK return delay, see
   ``docs/network.md``) and is admitted or dropped by the class queue's policy
   (:mod:`tcpabr_model.sim.switch.drop_policies`);
5. ports serve (port order, strict priority VBR > ABR > UBR with the UBR guaranteed
   rate); a served cell enters the port's outgoing link delay line towards the next port
   of its route, or, after its last port, reaches the destination at ``t + 1``
   (reassembly: a frame is delivered iff all its cells arrived in order).

The kernel takes only arrays and scalars and is deterministic; the only randomness
(capacity paths, drawn outside; the GFR lottery, a counter-based generator keyed by
``G_SEED``) is reproducible from the replication's seed.

Numba alone would key the on-disk cache of this kernel on *this* file only, keeping a stale
compiled callee after an edit of ``connection``, ``drop_policies``, ``rate_allocation``... ;
``tcpabr_model._numba_cache`` (installed by the package's ``__init__``) stamps every cached
kernel with a hash of all kernel sources instead, so any such edit recompiles it.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .capacity_cursor import cap_integral, path_cursor
from .delay_record import (OC_PORT0, OC_SRCC, OC_SRCF, R_PORT0, delay_state, record, record_delivery, stamp_arrival,
                           stamp_pushes)
from .port_arrival import arrive
from .port_rings import in_flight, port_rings
from ..arrays.layout import (
    BIG, CL_ABR, CL_UBR, CL_VBR, CP_START, CP_UPF, G_MEAS, G_NSLOTS, G_WARMUP, GF_SLOTB,
    GF_UNITB, INFO_CIDX_SHIFT, INFO_EOM, INFO_KIND_MASK, INFO_TAG, KIND_DATA, KIND_VBR, NCLASS,
    O_ERR, O_NMEAS, O_NOUT, PF_GR, PF_NETVBR, PF_RATE, PFS_CAPTOT, PFS_CAPWIN, PFS_CRED,
    PFS_GACC, PFS_MEASACC, PFS_NSTATE, PFS_QINT, PP_INITSTATE,
    PP_LINKDELAY, PS_NSTATE, PS_SERVED0, PS_SERVEDW0,
    S_AKCNT, S_AKHEAD, S_DAEXP, S_RTOEXP, S_CSENT, S_FSENT, S_SEGSENT, S_SQCELLS, S_SQCIDX,
    S_SQCNT, S_SQHEAD, S_STARTED, SRC_CONSTANT, SRC_FEEDBACK, SRC_VBR, V_CDELIV, V_CSENT,
    V_CURC, V_DCONN, V_DCORR, V_DEXP, V_DSEQ, V_FBCNT, V_FBHEAD, V_FCORR, V_NEXTTOG,
    V_NSTATE, V_ON, V_RR, V_VBRDELIV, V_VBRSENT, VF_INITRATE, VF_MCR, VF_RATE, VF_SHARE, VP_CLASS,
    VP_CONN0, VP_FBPORT, VP_M, VP_N, VP_NCONN, VP_NHOPS, VP_OFF, VP_ON, VP_PHASE,
    VP_SRCMODE, VP_TAG, VP_UPF, VS_ACR, VS_CRED, VS_NSTATE,
)
from ..abr.rm_cells import (RA_ERICA, SG_NEXT, abr_next_interval_end, abr_port_input, abr_port_tick,
                       abr_sample, abr_source_cell, abr_source_queue, abr_timed, abr_trim_source,
                       abr_turnaround, abr_vbr_served)
from ..arrays.layout import KIND_RMF, SRC_ABR
from ..switch.rate_allocation import port_interval, receive_feedback
from ..tcp.connection import conn_next, on_ack, on_timeout, rcv_frame, segmentation_cells, send_ack, tcp_state, try_send

__all__ = ["simulate_network_kernel"]


@njit(cache=True, error_model="numpy")
def simulate_network_kernel(gpar, gfpar, ppar, pfpar, ptimes, pseq, plev, qcap, qpol, qfpar, vpar, vfpar,
                            vroute, vthr, cpar, cfpar, force_conn, force_seq,
                            sq_cap, ak_cap, fb_cap, rb_cap, dl_cap, abr, delay):
    """Run one replication of a network.

    Parameters
    ----------
    gpar, gfpar : ndarray
        Global integer / float parameters (``G_*``, ``GF_*``).
    ppar, pfpar : ndarray(ndim=2)
        Per-port parameters (``PP_*``, ``PF_*`` columns).
    ptimes : ndarray(float64, ndim=2)
        Per port, capacity change epochs in slots, increasing, padded with +inf (a row
        of +inf for a constant-capacity port).
    pseq : ndarray(int64, ndim=2)
        Per port, the level index in force from ``ptimes[p, i]`` on; the index at slot 0
        is ``ppar[p, PP_INITSTATE]``.
    plev : ndarray(float64, ndim=2)
        Per port, the capacity of each level normalised to the port's peak ``rate``, in
        [0, 1] (padded).
    qcap, qpol : ndarray(int64, shape=(nports, 3))
        Buffer size (cells) and drop policy (``POL_*``) of each class queue.
    qfpar : ndarray(float64, shape=(nports, 3, QP_NPAR))
        Policy parameters (R, Z).
    vpar, vfpar : ndarray(ndim=2)
        Per-VC parameters (``VP_*``, ``VF_*``).
    vroute : ndarray(int64, ndim=2)
        Ports of each VC's route, in order (``VP_NHOPS`` entries used).
    vthr : ndarray(float64, shape=(nvc, nports, 2))
        Per-VC, per-port threshold R_i (cells) and weight W_i (GFR, THRESH).
    cpar, cfpar : ndarray(ndim=2)
        Per-connection parameters (``CP_*``, ``CF_*``).
    force_conn, force_seq : ndarray(int64)
        Frames (connection, segment) dropped at the first port of their route on their
        first transmission (tests).
    sq_cap, ak_cap, fb_cap, rb_cap : int
        Ring sizes: segmentation queue (frames), ACKs in flight, feedback values in flight,
        receiver reorder window (also the SACK scoreboard).
    dl_cap : ndarray(int64)
        Per-port capacity of the outgoing link's delay line (cells).
    abr : tuple of ndarray
        ABR RM-cell state (:mod:`tcpabr_model.sim.abr.rm_cells`, built by :mod:`tcpabr_model.sim.abr.kernel_arrays`); updated in place.
    delay : tuple of ndarray
        ``(dhist, dsum, docc)``: delay histograms, sums and occupancy integrals of the
        measured window (:mod:`.delay_record`); filled in place.

    Returns
    -------
    st, fs : per-connection state and counters (``S_*``, ``F_*``)
    vst, vfs : per-VC state and counters (``V_*``, ``VS_*``)
    pst, pfs : per-port counters (``PS_*``, ``PFS_*``)
    gout : global outputs (``O_*``)
    inflight : ndarray(int64, ndim=1), cells of each VC still in port queues or on links
    """
    nport = ppar.shape[0]
    nvc = vpar.shape[0]
    nconn = cpar.shape[0]
    nslots = gpar[G_NSLOTS]
    warm = gpar[G_WARMUP]
    meas_len = gpar[G_MEAS]
    slotb = gfpar[GF_SLOTB]
    unitb = gfpar[GF_UNITB]

    st, fs, sq_seq, ak_t, ak_v, ak_s, ooo, sb = tcp_state(nconn, sq_cap, ak_cap, rb_cap, cfpar, gpar)
    vst = np.zeros((nvc, V_NSTATE), dtype=np.int64)
    vfs = np.zeros((nvc, VS_NSTATE))
    pst = np.zeros((nport, PS_NSTATE), dtype=np.int64)
    pfs = np.zeros((nport, PFS_NSTATE))
    gout = np.zeros(O_NOUT)
    fb_t = np.zeros((nvc, fb_cap), dtype=np.int64)
    fb_v = np.zeros((nvc, fb_cap))

    # class queues (flat rings, queue j = p * 3 + k), link delay lines and routes (.port_rings)
    (qbase, qv, qc, qs, qi, qh, qn, occ, nact, ppdf, armed, lot, dbase, dtt, dv, dc, ds, di, dh, dn,
     nexthop) = port_rings(nport, nvc, qcap, dl_cap, vpar, vroute)
    qtot = qbase[nport * NCLASS]
    nforce = force_conn.shape[0]
    force_used = np.zeros(nforce, dtype=np.int8)
    # delay stamps of segments and of frames' last cells (issue 26, .delay_record)
    dhist, dsum, docc = delay
    sq_t, stamped, qt0, qte, qta, qqs, dt0, dte, dqs, peom = delay_state(nconn, sq_cap, qtot, dbase[nport], nport)
    src_frames = 0                              # frames in the segmentation buffers

    # rate allocation history
    mmax = 1
    nmax = 1
    for v in range(nvc):
        if vpar[v, VP_M] > mmax:
            mmax = vpar[v, VP_M]
        if vpar[v, VP_N] > nmax:
            nmax = vpar[v, VP_N]
    xh = np.zeros((nport, mmax))
    avg = np.zeros((nvc, nmax))

    # capacity paths
    caps = plev
    pstate = np.zeros((nport, 2), dtype=np.int64)
    nchg = np.zeros(nport, dtype=np.int64)
    ccap = np.zeros(nport)
    for p in range(nport):
        pstate[p, 1] = ppar[p, PP_INITSTATE]
        nchg[p], ccap[p] = path_cursor(p, ptimes, pstate, caps)

    err = 0
    nvbr_on = 0
    for v in range(nvc):
        vst[v, V_CURC] = -1
        mode = vpar[v, VP_SRCMODE]
        if mode == SRC_FEEDBACK or mode == SRC_CONSTANT:
            r0 = max(vfpar[v, VF_INITRATE] * vfpar[v, VF_SHARE], vfpar[v, VF_MCR])    # TM 4.0: ACR >= MCR
            vfs[v, VS_ACR] = r0 * slotb * pfpar[vpar[v, VP_FBPORT], PF_RATE]
        else:
            vfs[v, VS_ACR] = vfpar[v, VF_RATE]
        if mode == SRC_VBR:
            vst[v, V_NEXTTOG] = vpar[v, VP_PHASE]
        else:
            vst[v, V_NEXTTOG] = BIG
    for c in range(nconn):
        if cpar[c, CP_START] > 0:
            st[c, S_RTOEXP] = cpar[c, CP_START]     # the start is a timer event
        else:
            st[c, S_STARTED] = 1
            if not try_send(c, 0, st, fs, cpar, gpar, sq_seq, sb):
                err = 1
            src_frames += stamp_pushes(c, 0, st, sq_t, stamped)
    next_evt = BIG
    for c in range(nconn):
        x = conn_next(c, st, ak_t)
        if x < next_evt:
            next_evt = x
    for v in range(nvc):
        if vst[v, V_NEXTTOG] < next_evt:
            next_evt = vst[v, V_NEXTTOG]

    # the ABR hooks are skipped outright when the network has no ERICA port / no RM-cell
    # samples (a numba call with the whole ``abr`` tuple costs more than a slot's work)
    has_erica = False
    for p in range(nport):
        if abr[9][p] == RA_ERICA:
            has_erica = True
    sg = abr[14]
    # next BRM event of each ABR VC (abr_timed's answer, kept until a turnaround adds one):
    # abr_timed is called only when one is due
    abr_nx = np.zeros(nvc, dtype=np.int64)

    tot_q = 0
    dl_tot = 0
    next_meas = meas_len
    kmeas = 0
    t = np.int64(0)
    t_chk = np.int64(0)
    seg_total = segmentation_cells(st)
    while True:
        if t >= t_chk:
            # ---- 1. measurement boundary: rate allocation hook of every port --------------
            if t == next_meas:
                kmeas += 1
                for p in range(nport):
                    xm = pfs[p, PFS_MEASACC] / meas_len
                    if xm < 0.0:  # capacity left by VBR: credit carried into the interval
                        xm = 0.0
                    pfs[p, PFS_MEASACC] = 0.0
                    e, nf = port_interval(p, t, kmeas, xm, xh, avg, vpar, vst, fb_t, fb_v)
                    if e != 0:
                        err = e
                    if nf < next_evt:
                        next_evt = nf
                next_meas += meas_len
            if t >= nslots or err != 0:
                break
            # ---- 2. timed events -------------------------------------------------------------
            if t >= next_evt:
                next_evt = BIG
                for v in range(nvc):
                    nf = receive_feedback(v, t, vst, V_FBHEAD, V_FBCNT, fb_t, fb_v, vfs, VS_ACR, vfpar[v, VF_SHARE],
                                          vfpar[v, VF_MCR], slotb, pfpar[vpar[v, VP_FBPORT], PF_RATE])
                    if nf < next_evt:
                        next_evt = nf
                    while vst[v, V_NEXTTOG] <= t:
                        if vst[v, V_ON] == 0:
                            vst[v, V_ON] = 1
                            nvbr_on += 1
                            vst[v, V_NEXTTOG] += vpar[v, VP_ON]
                        else:
                            vst[v, V_ON] = 0
                            nvbr_on -= 1
                            vfs[v, VS_CRED] = 0.0
                            vst[v, V_NEXTTOG] += vpar[v, VP_OFF]
                    if vst[v, V_NEXTTOG] < next_evt:
                        next_evt = vst[v, V_NEXTTOG]
                    if vpar[v, VP_SRCMODE] == SRC_ABR:
                        if abr_nx[v] <= t:
                            # a BRM ring head is due (both rings are in time order)
                            acr, abr_nx[v] = abr_timed(v, t, abr, vroute[v], vpar[v, VP_NHOPS])
                            if acr >= 0.0:
                                vfs[v, VS_ACR] = acr * slotb
                        if abr_nx[v] < next_evt:
                            next_evt = abr_nx[v]
                    c0 = vpar[v, VP_CONN0]
                    for c in range(c0, c0 + vpar[v, VP_NCONN]):
                        while st[c, S_AKCNT] > 0 and ak_t[c, st[c, S_AKHEAD]] <= t:
                            h = st[c, S_AKHEAD]
                            a = ak_v[c, h]
                            sk = ak_s[c, h]
                            st[c, S_AKHEAD] = (h + 1) % ak_cap
                            st[c, S_AKCNT] -= 1
                            if not on_ack(c, a, sk, t, st, fs, cpar, gpar, sq_seq, sb):
                                err = 1
                        if st[c, S_DAEXP] <= t:
                            if not send_ack(c, t, -1, st, cpar, ak_t, ak_v, ak_s):
                                err = 2
                        if st[c, S_RTOEXP] <= t:
                            if st[c, S_STARTED] == 0:
                                st[c, S_STARTED] = 1
                                st[c, S_RTOEXP] = BIG
                                if not try_send(c, t, st, fs, cpar, gpar, sq_seq, sb):
                                    err = 1
                            elif not on_timeout(c, t, st, fs, cpar, gpar, sq_seq, sb):
                                err = 1
                        x = conn_next(c, st, ak_t)
                        if x < next_evt:
                            next_evt = x
                    if vpar[v, VP_SRCMODE] == SRC_ABR:
                        abr_trim_source(v, abr, st, cpar, vpar)
                    for c in range(c0, c0 + vpar[v, VP_NCONN]):     # after the trim: kept segments only
                        src_frames += stamp_pushes(c, t, st, sq_t, stamped)
            seg_total = segmentation_cells(st)
            t_chk = next_evt
            if next_meas < t_chk:
                t_chk = next_meas
            if nslots < t_chk:
                t_chk = nslots

        # ---- idle: skip to the next event or boundary --------------------------------------
        if tot_q == 0 and seg_total == 0 and dl_tot == 0 and nvbr_on == 0:
            # an ERICA port's averaging timer runs while nothing moves: end the intervals
            # that are due now (the queues are empty), and stop the skip at the next end
            if has_erica:
                for p in range(nport):
                    abr_port_tick(p, t, abr, 0)
                tn = abr_next_interval_end(abr, t, t_chk)
            else:
                tn = t_chk
            if tn > t:
                lo = t if t > warm else warm
                for p in range(nport):
                    if tn > lo:
                        if lo > t:
                            ci = cap_integral(p, t, lo, ptimes, pseq, pstate, caps)
                            pfs[p, PFS_MEASACC] += ci
                            pfs[p, PFS_CAPTOT] += ci
                        ci = cap_integral(p, lo, tn, ptimes, pseq, pstate, caps)
                        pfs[p, PFS_MEASACC] += ci
                        pfs[p, PFS_CAPTOT] += ci
                        pfs[p, PFS_CAPWIN] += ci
                    else:
                        ci = cap_integral(p, t, tn, ptimes, pseq, pstate, caps)
                        pfs[p, PFS_MEASACC] += ci
                        pfs[p, PFS_CAPTOT] += ci
                    pfs[p, PFS_CRED] = 0.0
                    nchg[p], ccap[p] = path_cursor(p, ptimes, pstate, caps)
                for v in range(nvc):
                    vfs[v, VS_CRED] = 0.0
                # queue samples due in the skipped slots see the idle (empty) state
                if sg[SG_NEXT] < tn:
                    abr_sample(tn - 1, abr, qn, NCLASS, st, vpar)
                t = tn
                continue

        # ---- 3. link delay lines deliver to the next port ----------------------------------
        if dl_tot > 0:
            for p in range(nport):
                while dn[p] > 0 and dtt[dbase[p] + dh[p]] <= t:
                    pos = dbase[p] + dh[p]
                    v = dv[pos]
                    dh[p] = dh[p] + 1 if dh[p] + 1 < dl_cap[p] else 0
                    dn[p] -= 1
                    dl_tot -= 1
                    if has_erica and vpar[v, VP_CLASS] == CL_ABR:
                        np_ = nexthop[v, p]
                        abr_port_input(np_, v, (di[pos] & INFO_KIND_MASK) == KIND_RMF, ds[pos], t, abr,
                                       qn[np_ * NCLASS + CL_ABR])
                    a = arrive(nexthop[v, p], v, dc[pos], ds[pos], di[pos], False, gpar, qcap, qpol,
                               qfpar, vthr, qbase, qh, qn, qv, qc, qs, qi, occ, nact, ppdf, armed,
                               lot, pst, st, vst, vpar, force_conn, force_seq, force_used)
                    tot_q += a
                    if a == 1 and (di[pos] & (INFO_EOM | INFO_KIND_MASK)) == (INFO_EOM | KIND_DATA):
                        stamp_arrival(nexthop[v, p], vpar[v, VP_CLASS], qcap, qbase, qh, qn, qt0, qte, qta, qqs,
                                      peom, dt0[pos], dte[pos], t, dqs[pos])

        # ---- 4. sources emit ----------------------------------------------------------------
        for v in range(nvc):
            p0 = vroute[v, 0]
            if vpar[v, VP_SRCMODE] == SRC_VBR:
                if vst[v, V_ON] == 0:
                    continue
                cred = vfs[v, VS_CRED] + vfs[v, VS_ACR]
                while cred >= unitb:
                    cred -= unitb
                    vst[v, V_VBRSENT] += 1
                    vst[v, V_CSENT] += 1
                    tot_q += arrive(p0, v, -1, 0, KIND_VBR | INFO_EOM, True, gpar, qcap, qpol, qfpar,
                                     vthr, qbase, qh, qn, qv, qc, qs, qi, occ, nact, ppdf, armed, lot,
                                     pst, st, vst, vpar, force_conn, force_seq, force_used)
                vfs[v, VS_CRED] = cred
                continue
            c0 = vpar[v, VP_CONN0]
            ncv = vpar[v, VP_NCONN]
            waiting = 0
            for c in range(c0, c0 + ncv):
                waiting += st[c, S_SQCELLS]
            if waiting == 0:
                vfs[v, VS_CRED] = 0.0
                continue
            isabr = vpar[v, VP_SRCMODE] == SRC_ABR
            if isabr:
                abr_source_queue(v, waiting, abr)
            cred = vfs[v, VS_CRED] + vfs[v, VS_ACR]
            tagbit = INFO_TAG if vpar[v, VP_TAG] == 1 else 0
            while cred >= unitb and waiting > 0:
                if isabr:
                    # TM 4.0 SES-2/3: an in-rate forward RM cell every Nrm cells
                    rs = abr_source_cell(v, t, abr)
                    if rs >= 0:
                        cred -= unitb
                        vst[v, V_CSENT] += 1
                        abr_port_input(p0, v, True, rs, t, abr, qn[p0 * NCLASS + CL_ABR])
                        tot_q += arrive(p0, v, -1, rs, KIND_RMF, True, gpar, qcap, qpol, qfpar, vthr, qbase,
                                         qh, qn, qv, qc, qs, qi, occ, nact, ppdf, armed, lot, pst, st, vst,
                                         vpar, force_conn, force_seq, force_used)
                        continue
                c = vst[v, V_CURC]
                if c < 0:
                    # next connection with a frame waiting, round robin (frames never interleave)
                    for i in range(ncv):
                        cc = c0 + (vst[v, V_RR] + i) % ncv
                        if st[cc, S_SQCELLS] > 0:
                            c = cc
                            break
                    vst[v, V_CURC] = c
                cred -= unitb
                upf = cpar[c, CP_UPF]
                cidx = st[c, S_SQCIDX]
                eom = cidx == upf - 1
                st[c, S_SQCELLS] -= 1
                waiting -= 1
                seg_total -= 1
                h = st[c, S_SQHEAD]
                seq = sq_seq[c, h]
                if eom:
                    st[c, S_SQHEAD] = h + 1 if h + 1 < sq_cap else 0
                    st[c, S_SQCNT] -= 1
                    st[c, S_SQCIDX] = 0
                    src_frames -= 1
                    vst[v, V_CURC] = -1
                    vst[v, V_RR] = (c - c0 + 1) % ncv
                else:
                    st[c, S_SQCIDX] = cidx + 1
                info = KIND_DATA | (cidx << INFO_CIDX_SHIFT) | tagbit
                if eom:
                    info |= INFO_EOM
                vst[v, V_CSENT] += 1
                if has_erica and vpar[v, VP_CLASS] == CL_ABR:
                    abr_port_input(p0, v, False, -1, t, abr, qn[p0 * NCLASS + CL_ABR])
                a = arrive(p0, v, c, seq, info, True, gpar, qcap, qpol, qfpar, vthr, qbase, qh, qn,
                           qv, qc, qs, qi, occ, nact, ppdf, armed, lot, pst, st, vst, vpar,
                           force_conn, force_seq, force_used)
                tot_q += a
                if a == 1 and eom:
                    stamp_arrival(p0, vpar[v, VP_CLASS], qcap, qbase, qh, qn, qt0, qte, qta, qqs, peom,
                                  sq_t[c, h], t, t, 0)
            if waiting == 0:
                cred = 0.0
            vfs[v, VS_CRED] = cred

        # ---- 5. ports serve -------------------------------------------------------------------
        for p in range(nport):
            if nchg[p] >= t:
                ci = ccap[p]
            else:
                ci = cap_integral(p, t, t + 1, ptimes, pseq, pstate, caps)
                nchg[p], ccap[p] = path_cursor(p, ptimes, pstate, caps)
            pfs[p, PFS_MEASACC] += ci
            pfs[p, PFS_CAPTOT] += ci
            if t >= warm:
                pfs[p, PFS_CAPWIN] += ci
            j0 = p * NCLASS
            if has_erica:
                abr_port_tick(p, t, abr, qn[j0 + CL_ABR])
            nport_q = qn[j0] + qn[j0 + 1] + qn[j0 + 2]
            if t >= warm:
                docc[OC_PORT0 + p] += peom[p]
            if nport_q > 0:
                cred = pfs[p, PFS_CRED] + ci * slotb * pfpar[p, PF_RATE]
                gr = pfpar[p, PF_GR]
                while cred >= unitb and nport_q > 0:
                    cred -= unitb
                    # strict priority VBR > ABR > UBR, except that the UBR class is owed GR
                    # of every cell slot while it has cells queued
                    k = -1
                    if gr > 0.0 and qn[j0 + CL_UBR] > 0:
                        g = pfs[p, PFS_GACC] + gr
                        if g >= 1.0:
                            g -= 1.0
                            k = CL_UBR
                        pfs[p, PFS_GACC] = g
                    if k < 0:
                        if qn[j0 + CL_VBR] > 0:
                            k = CL_VBR
                        elif qn[j0 + CL_ABR] > 0:
                            k = CL_ABR
                        else:
                            k = CL_UBR
                    j = j0 + k
                    pos = qbase[j] + qh[j]
                    qh[j] = qh[j] + 1 if qh[j] + 1 < qcap[p, k] else 0
                    qn[j] -= 1
                    nport_q -= 1
                    tot_q -= 1
                    v = qv[pos]
                    occ[v, p] -= 1
                    if occ[v, p] == 0:
                        nact[p, k] -= 1
                    pst[p, PS_SERVED0 + k] += 1
                    if t >= warm:
                        pst[p, PS_SERVEDW0 + k] += 1
                    if k == CL_VBR:
                        abr_vbr_served(p, abr)
                        if pfpar[p, PF_NETVBR] > 0.5:
                            # the rate allocation measures the capacity left by VBR
                            pfs[p, PFS_MEASACC] -= unitb / (slotb * pfpar[p, PF_RATE])
                    c = qc[pos]
                    info = qi[pos]
                    nh = nexthop[v, p]
                    qsum = 0
                    if (info & (INFO_EOM | INFO_KIND_MASK)) == (INFO_EOM | KIND_DATA):
                        peom[p] -= 1
                        qp = t + 1 - qta[pos]
                        qsum = qqs[pos] + qp
                        if t >= warm:
                            record(dhist, dsum, docc, R_PORT0 + p, qp)
                    if nh >= 0:
                        # onto the outgoing link, towards the next port of the route
                        if dn[p] >= dl_cap[p]:
                            err = 4
                            t_chk = t + 1
                            continue
                        dpos = dbase[p] + (dh[p] + dn[p]) % dl_cap[p]
                        dtt[dpos] = t + 1 + ppar[p, PP_LINKDELAY]
                        dv[dpos] = v
                        dc[dpos] = c
                        ds[dpos] = qs[pos]
                        di[dpos] = info
                        dt0[dpos] = qt0[pos]
                        dte[dpos] = qte[pos]
                        dqs[dpos] = qsum
                        dn[p] += 1
                        dl_tot += 1
                        continue
                    # ---- destination (reassembly), reached at t + 1 ----
                    vst[v, V_CDELIV] += 1
                    kind = info & INFO_KIND_MASK
                    if kind == KIND_VBR:
                        vst[v, V_VBRDELIV] += 1
                        continue
                    if kind == KIND_RMF:
                        # TM 4.0 DES-2: the destination turns the RM cell around
                        x = abr_turnaround(v, qs[pos], t + 1, abr)
                        if x < abr_nx[v]:
                            abr_nx[v] = x
                        if x < next_evt:
                            next_evt = x
                        if x < t_chk:
                            t_chk = x
                        continue
                    if kind != KIND_DATA:
                        continue
                    cidx = info >> INFO_CIDX_SHIFT
                    seq = qs[pos]
                    if cidx == 0:
                        vst[v, V_DCORR] = 0
                        vst[v, V_DCONN] = c
                        vst[v, V_DSEQ] = seq
                    elif cidx != vst[v, V_DEXP] or c != vst[v, V_DCONN] or seq != vst[v, V_DSEQ]:
                        vst[v, V_DCORR] = 1
                    vst[v, V_DEXP] = cidx + 1
                    if info & INFO_EOM:
                        vst[v, V_DEXP] = 0
                        if vst[v, V_DCORR] != 0 or cidx != vpar[v, VP_UPF] - 1:
                            vst[v, V_FCORR] += 1
                            continue
                        if t + 1 >= warm:   # received in the window (the receiver's S_GOOD)
                            record_delivery(dhist, dsum, docc, t + 1 - qt0[pos], qte[pos] - qt0[pos], qsum)
                        if not rcv_frame(c, seq, t + 1, st, cpar, gpar, ooo, ak_t, ak_v, ak_s):
                            err = 2
                        x = conn_next(c, st, ak_t)
                        if x < next_evt:
                            next_evt = x
                        if x < t_chk:
                            t_chk = x
                        if err != 0:
                            t_chk = t + 1
                if nport_q == 0:
                    cred = 0.0
                pfs[p, PFS_CRED] = cred
            else:
                pfs[p, PFS_CRED] = 0.0
            if t >= warm:
                pfs[p, PFS_QINT] += nport_q
        if sg[SG_NEXT] <= t:
            abr_sample(t, abr, qn, NCLASS, st, vpar)
        if t >= warm:
            docc[OC_SRCF] += src_frames
            docc[OC_SRCC] += seg_total
        t += 1

    # derived counters (conservation at the source)
    for c in range(nconn):
        upf = cpar[c, CP_UPF]
        st[c, S_CSENT] = st[c, S_SEGSENT] * upf - st[c, S_SQCELLS]
        st[c, S_FSENT] = st[c, S_SEGSENT] - st[c, S_SQCNT] + (1 if st[c, S_SQCIDX] > 0 else 0)
    inflight = in_flight(nvc, occ, dbase, dv, dh, dn, dl_cap)
    gout[O_ERR] = err
    gout[O_NMEAS] = kmeas
    return st, fs, vst, vfs, pst, pfs, gout, inflight
