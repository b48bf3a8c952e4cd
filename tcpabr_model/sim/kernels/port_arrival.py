"""A cell's arrival at a port of the general kernel (numba): admission into its class queue
by the port's drop policy (:mod:`..switch.drop_policies`), the frame-discard state (EPD /
PPD / policy rejects), forced drops of tests, and the queue's counters.  Inlined into
:func:`.general.simulate_network_kernel` once per cell."""

from __future__ import annotations

from numba import njit

from ..arrays.layout import (
    G_SEED, INFO_CIDX_SHIFT, INFO_EOM, INFO_KIND_MASK, INFO_TAG, KIND_DATA, KIND_RMF, NCLASS, POL_EPD,
    POL_GFR, POL_TAIL, POL_THRESH, PS_DROP0, PS_FDROP, PS_QMAX, PS_QMAX0, QP_R, QP_Z, S_CDROP, S_FDROP, V_CDROP,
    VP_CLASS,
)
from ..arrays.refcount import keep_alive
from ..switch.drop_policies import frame_admit, uniform01

__all__ = ["arrive"]


@njit(cache=True, error_model="numpy", inline="always")
def arrive(p, v, c, seq, info, first_port, gpar, qcap, qpol, qfpar, vthr, qbase, qh, qn,
            qv, qc, qs, qi, occ, nact, ppdf, armed, lot, pst, st, vst, vpar,
            force_conn, force_seq, force_used):
    """A cell arrives at port ``p``; admit it into its class queue or drop it.

    Returns 1 if the cell was queued, 0 if dropped.  One exit, ending with
    :func:`..arrays.refcount.keep_alive` of every array argument: inlined once per cell, the function
    would otherwise pay two atomic reference-count operations per array (:mod:`..arrays.refcount`).
    """
    k = vpar[v, VP_CLASS]
    j = p * NCLASS + k
    eom = (info & INFO_EOM) != 0
    kind = info & INFO_KIND_MASK
    cidx = info >> INFO_CIDX_SHIFT
    rmc = kind == KIND_RMF      # ABR RM cell: no frame, never part of a PPD discard
    res = 0
    if ppdf[v, p] == 1 and not rmc:
        # rest of a frame that is being discarded here (EPD / policy reject / PPD)
        pst[p, PS_DROP0 + k] += 1
        vst[v, V_CDROP] += 1
        if c >= 0:
            st[c, S_CDROP] += 1
        if eom:
            ppdf[v, p] = 0
    else:
        pol = qpol[p, k]
        x = qn[j]
        kk = qcap[p, k]
        admit = True
        if cidx == 0 and kind == KIND_DATA:
            if first_port and force_conn.shape[0] > 0:
                for q in range(force_conn.shape[0]):
                    if force_used[q] == 0 and force_conn[q] == c and force_seq[q] == seq:
                        force_used[q] = 1
                        admit = False
                        break
            if admit:
                if pol == POL_THRESH:
                    if occ[v, p] < vthr[v, p, 0]:
                        armed[v, p] = 1
                    elif armed[v, p] == 1:
                        armed[v, p] = 0
                        admit = False
                elif pol >= POL_EPD:
                    u = 0.5
                    if pol == POL_GFR:
                        u = uniform01(gpar[G_SEED] + 7919 * p, lot[p])
                        lot[p] += 1
                    admit = frame_admit(pol, float(x), float(occ[v, p]), float(nact[p, k]), float(kk),
                                        qfpar[p, k, QP_R], qfpar[p, k, QP_Z], vthr[v, p, 0], vthr[v, p, 1],
                                        (info & INFO_TAG) != 0, u)
            if not admit:
                pst[p, PS_DROP0 + k] += 1
                pst[p, PS_FDROP] += 1
                vst[v, V_CDROP] += 1
                if c >= 0:
                    st[c, S_CDROP] += 1
                    st[c, S_FDROP] += 1
                if not eom:
                    ppdf[v, p] = 1
        if not admit:
            pass
        elif x >= kk:
            pst[p, PS_DROP0 + k] += 1
            vst[v, V_CDROP] += 1
            if not rmc:
                if ppdf[v, p] == 0:
                    pst[p, PS_FDROP] += 1
                    if c >= 0:
                        st[c, S_FDROP] += 1
                if c >= 0:
                    st[c, S_CDROP] += 1
                if eom:
                    ppdf[v, p] = 0
                elif pol == POL_TAIL:
                    ppdf[v, p] = 2      # frame damaged, later cells still admitted (counted once)
                else:
                    ppdf[v, p] = 1      # partial packet discard
        else:
            if eom and ppdf[v, p] == 2:
                ppdf[v, p] = 0
            pos = qbase[j] + (qh[j] + x) % kk
            qv[pos] = v
            qc[pos] = c
            qs[pos] = seq
            qi[pos] = info
            qn[j] = x + 1
            if occ[v, p] == 0:
                nact[p, k] += 1
            occ[v, p] += 1
            if x + 1 > pst[p, PS_QMAX0 + k]:
                pst[p, PS_QMAX0 + k] = x + 1
            tot = qn[p * NCLASS] + qn[p * NCLASS + 1] + qn[p * NCLASS + 2]
            if tot > pst[p, PS_QMAX]:
                pst[p, PS_QMAX] = tot
            res = 1
    keep_alive(gpar, qcap, qpol, qfpar, vthr, qbase, qh, qn, qv, qc, qs, qi, occ, nact, ppdf, armed, lot, pst,
               st, vst, vpar, force_conn, force_seq, force_used)
    return res
