"""ABR with RM cells in the network kernel: the hook functions and their state (private).

The network kernel (:mod:`tcpabr_model.sim.kernels.fast_path`) calls these small functions at its ABR hook sites
(``docs/network.md``, "Extension points for ABR"; ``docs/abr_erica.md``, "Integration").
All ABR state travels in one tuple ``abr`` of arrays built by :func:`abr_state`:

``ai``   int64[nvc, AI_N]     per-VC integers (delays, RM serials, BRM rings, counters)
``ast``  float64[nvc, AS_*]   ABR source state (:mod:`tcpabr_model.sim.abr.source`)
``apar`` float64[nvc, AP_*]   ABR source parameters (rates in cells/slot, times in slots)
``rmr``  float64[nvc, RMCAP, RMX_N]  RM cell records (RM_* fields + serial), by serial % RMCAP
``b1t, b1r`` int64[nvc, BCAP] BRMs on their way from the destination to the stamping port
``b2t, b2r`` int64[nvc, BCAP] BRMs on their way from the stamping port to the source
``adst`` int64[nvc, AD_*]     destination state
``pra``  int64[nport]         rate allocation of the port: RA_NONE or RA_ERICA
``epar`` float64[nport, EP_*] ERICA parameters (rates in cells/slot)
``es``   float64[nport, ES_*] ERICA state
``eact``, ``eccr`` float64[nport, nvc]  ERICA activity levels and CCR table
``sg``   int64[SG_N]          sampling: interval, next sample slot, samples taken
``sq``   float64[nsamp, nport] sampled total queue of each port, cells
``sacc`` float64[nvc]         sum of the sampled source queue of each VC, cells

Forward RM cells travel through the ports like data cells (kind ``KIND_RMF``, no
connection, the RM serial in the cell's sequence field).  The reverse path is not
simulated cell by cell: a turned-around RM cell (BRM) waits ``AI_TURN`` slots (from its
arrival at the destination to its passage through the VC's first ERICA port on the way
back), is stamped there by every ERICA port of the route at that instant, and reaches the
source ``AI_BACK`` slots later (``docs/abr_erica.md``, CHOICE "reverse path").
"""

from __future__ import annotations

import numpy as np
from numba import njit

from . import source as A
from ..switch import erica as E
from ..arrays.refcount import keep_alive
from ..arrays.layout import CP_UPF, S_SEGSENT, S_SQCELLS, S_SQCIDX, S_SQCNT, VP_CONN0, VP_NCONN

RA_NONE = 0
RA_ERICA = 1

# ---- per-VC integer columns (ai) ------------------------------------------------------
AI_ISABR = 0        # 1: the VC is an ABR source following RM cells
AI_TURN = 1         # slots from FRM arrival at the destination to the stamping instant
AI_BACK = 2         # slots from the stamping instant to the BRM's arrival at the source
AI_SERIAL = 3       # next RM serial
AI_B1H = 4
AI_B1N = 5
AI_B2H = 6
AI_B2N = 7
AI_SRCBUF = 8       # source (edge) buffer, cells (0: unlimited)
AI_SQMAX = 9        # maximum source queue seen, cells
AI_SRCDROP = 10     # segments dropped at the source buffer
AI_SRCDROPC = 11    # cells of those segments
AI_FRMDEST = 12     # FRMs that reached the destination (turned around)
AI_BRMSRC = 13      # BRMs that reached the source
AI_ERR = 14         # 1: a BRM ring overflowed, 2: an RM record was overwritten in flight
AI_N = 15

RMX_SERIAL = A.RM_NFIELDS   # extra column of an RM record: its serial (overwrite guard)
RMX_N = A.RM_NFIELDS + 1

SG_EVERY = 0
SG_NEXT = 1
SG_N = 2
SG_NCOL = 3


def abr_state(nvc: int, nport: int, nsamp: int, sample_every: int, rmcap: int = 4096,
              bcap: int = 4096):
    """Allocate the ``abr`` tuple (every VC non-ABR, every port without ERICA)."""
    ai = np.zeros((nvc, AI_N), dtype=np.int64)
    ast = np.zeros((nvc, A.AS_NSTATE))
    apar = np.zeros((nvc, A.AP_NPAR))
    rmr = np.zeros((nvc, rmcap, RMX_N))
    b1t = np.zeros((nvc, bcap), dtype=np.int64)
    b1r = np.zeros((nvc, bcap), dtype=np.int64)
    b2t = np.zeros((nvc, bcap), dtype=np.int64)
    b2r = np.zeros((nvc, bcap), dtype=np.int64)
    adst = np.zeros((nvc, A.AD_NSTATE), dtype=np.int64)
    pra = np.zeros(nport, dtype=np.int64)
    epar = np.zeros((nport, E.EP_NPAR))
    es = np.zeros((nport, E.ES_NSTATE))
    eact = np.zeros((nport, nvc))
    eccr = np.zeros((nport, nvc))
    sg = np.zeros(SG_NCOL, dtype=np.int64)
    sg[SG_EVERY] = max(int(sample_every), 1)
    sq = np.zeros((max(nsamp, 1), nport))
    sacc = np.zeros(nvc)
    return (ai, ast, apar, rmr, b1t, b1r, b2t, b2r, adst, pra, epar, es, eact, eccr, sg, sq, sacc)


@njit(cache=True, error_model="numpy")
def abr_init(abr):
    """Initialise sources (ACR = ICR) and ERICA ports at slot 0."""
    ai, ast, apar, rmr, b1t, b1r, b2t, b2r, adst, pra, epar, es, eact, eccr, sg, sq, sacc = abr
    for v in range(ai.shape[0]):
        if ai[v, AI_ISABR] == 1:
            A.abr_source_init(apar[v], ast[v])
    for p in range(pra.shape[0]):
        if pra[p] == RA_ERICA:
            E.erica_init(epar[p], es[p], eact[p], eccr[p], 0.0)


@njit(cache=True, error_model="numpy", inline="always")
def abr_source_cell(v, t, abr):
    """The ABR source of VC ``v`` is about to send an in-rate cell at slot ``t``.

    Returns the RM serial (>= 0) if the cell must be a forward RM cell (SES-2/3), or -1
    for a data cell (which is then counted, SES-3).
    """
    ai = abr[0]
    ast = abr[1]
    apar = abr[2]
    rmr = abr[3]
    if not A.abr_next_is_frm(apar[v], ast[v], float(t)):
        A.abr_send_data(ast[v])
        s = -1
    else:
        s = ai[v, AI_SERIAL]
        ai[v, AI_SERIAL] = s + 1
        rec = rmr[v, s % rmr.shape[1]]
        A.abr_send_frm(apar[v], ast[v], float(t), rec)
        rec[RMX_SERIAL] = s
    keep_alive(ai, ast, apar, rmr)     # one exit, abr read first: see arrays/refcount.py
    return s


@njit(cache=True, error_model="numpy", inline="always")
def abr_port_input(p, v, is_frm, serial, t, abr, qabr):
    """An ABR-class cell of VC ``v`` arrives at port ``p`` (ERICA input accounting).

    ``qabr``: the port's ABR queue (cells) before the arrival.
    """
    pra = abr[9]
    rmr = abr[3]
    epar = abr[10]
    es = abr[11]
    eact = abr[12]
    eccr = abr[13]
    if pra[p] == RA_ERICA:
        if is_frm:
            E.erica_on_frm(eccr[p], v, rmr[v, serial % rmr.shape[1], A.RM_CCR])
        if E.erica_on_abr_input(epar[p], es[p], eact[p], v):
            E.erica_end_interval(epar[p], es[p], eact[p], float(t), float(qabr))
    keep_alive(pra, rmr, epar, es, eact, eccr)     # one exit, abr read first: see arrays/refcount.py


@njit(cache=True, error_model="numpy")
def abr_next_interval_end(abr, t, tn):
    """The earliest slot in (t, tn] at which an ERICA port's averaging interval is due to
    end by time, else ``tn``.  The kernel's idle skip stops there (and ends the interval
    with :func:`abr_port_tick` before skipping on), so that intervals end on time while
    nothing moves, as a switch's timer does, and a backward RM cell stamped after an idle
    period sees the idle intervals' (zero) load instead of the last busy interval's."""
    pra = abr[9]
    epar = abr[10]
    es = abr[11]
    best = tn
    for p in range(pra.shape[0]):
        if pra[p] == RA_ERICA:
            due = es[p][E.ES_TSTART] + epar[p][E.EP_T]
            d = np.int64(np.ceil(due))
            if d <= t:
                d = t + 1
            if d < best:
                best = d
    return best


@njit(cache=True, error_model="numpy", inline="always")
def abr_port_tick(p, t, abr, qabr):
    """Once per slot per port: end the ERICA averaging interval when its time is up."""
    pra = abr[9]
    epar = abr[10]
    es = abr[11]
    eact = abr[12]
    if pra[p] == RA_ERICA:
        if E.erica_time_due(epar[p], es[p], float(t)):
            E.erica_end_interval(epar[p], es[p], eact[p], float(t), float(qabr))
    keep_alive(pra, epar, es, eact)     # one exit, abr read first: see arrays/refcount.py


@njit(cache=True, error_model="numpy", inline="always")
def abr_vbr_served(p, abr):
    """A VBR cell was served on port ``p``'s link (ERICA's VBR measurement)."""
    pra = abr[9]
    es = abr[11]
    if pra[p] == RA_ERICA:
        E.erica_on_vbr_served(es[p])
    keep_alive(pra, es)     # see arrays/refcount.py


@njit(cache=True, error_model="numpy")
def abr_turnaround(v, serial, t, abr):
    """An FRM of VC ``v`` reaches its destination at slot ``t``: turn it around (DES-2).

    Returns the slot at which the BRM passes the stamping port (a timed event).
    """
    ai = abr[0]
    rmr = abr[3]
    b1t = abr[4]
    b1r = abr[5]
    adst = abr[8]
    rec = rmr[v, serial % rmr.shape[1]]
    if rec[RMX_SERIAL] != serial:
        ai[v, AI_ERR] = 2
    A.abr_dest_turnaround(adst[v], rec)
    ai[v, AI_FRMDEST] += 1
    cap = b1t.shape[1]
    if ai[v, AI_B1N] >= cap:
        ai[v, AI_ERR] = 1
        return np.int64(2**62)
    pos = (ai[v, AI_B1H] + ai[v, AI_B1N]) % cap
    b1t[v, pos] = t + ai[v, AI_TURN]
    b1r[v, pos] = serial
    ai[v, AI_B1N] += 1
    return b1t[v, pos]


@njit(cache=True, error_model="numpy")
def abr_timed(v, t, abr, vroute, nhops):
    """Timed ABR events of VC ``v`` at slot ``t``: BRMs pass the stamping port (ERICA
    stamps ER) and BRMs reach the source (SES-8/9).

    Returns the new ACR in cells/slot (or -1 if unchanged) and the next event slot.
    """
    ai = abr[0]
    ast = abr[1]
    apar = abr[2]
    rmr = abr[3]
    b1t = abr[4]
    b1r = abr[5]
    b2t = abr[6]
    b2r = abr[7]
    pra = abr[9]
    epar = abr[10]
    es = abr[11]
    eccr = abr[13]
    cap = b1t.shape[1]
    rcap = rmr.shape[1]
    while ai[v, AI_B1N] > 0 and b1t[v, ai[v, AI_B1H]] <= t:
        h = ai[v, AI_B1H]
        s = b1r[v, h]
        rec = rmr[v, s % rcap]
        for i in range(nhops):
            p = vroute[i]
            if pra[p] == RA_ERICA:
                rec[A.RM_ER] = E.erica_feedback(epar[p], es[p], eccr[p], v, rec[A.RM_ER])
        ai[v, AI_B1H] = (h + 1) % cap
        ai[v, AI_B1N] -= 1
        if ai[v, AI_B2N] >= cap:
            ai[v, AI_ERR] = 1
            continue
        pos = (ai[v, AI_B2H] + ai[v, AI_B2N]) % cap
        b2t[v, pos] = b1t[v, h] + ai[v, AI_BACK]
        b2r[v, pos] = s
        ai[v, AI_B2N] += 1
    acr = -1.0
    while ai[v, AI_B2N] > 0 and b2t[v, ai[v, AI_B2H]] <= t:
        h = ai[v, AI_B2H]
        acr = A.abr_on_brm(apar[v], ast[v], rmr[v, b2r[v, h] % rcap])
        ai[v, AI_BRMSRC] += 1
        ai[v, AI_B2H] = (h + 1) % cap
        ai[v, AI_B2N] -= 1
    nxt = np.int64(2**62)
    if ai[v, AI_B1N] > 0:
        nxt = b1t[v, ai[v, AI_B1H]]
    if ai[v, AI_B2N] > 0 and b2t[v, ai[v, AI_B2H]] < nxt:
        nxt = b2t[v, ai[v, AI_B2H]]
    keep_alive(ai, ast, apar, rmr, b1t, b1r, b2t, b2r, pra, epar, es, eccr, vroute)     # see arrays/refcount.py
    return acr, nxt


@njit(cache=True, error_model="numpy")
def abr_next_event(v, abr):
    """Earliest pending BRM event of VC ``v`` (2**62 if none)."""
    ai = abr[0]
    b1t = abr[4]
    b2t = abr[6]
    nxt = np.int64(2**62)
    if ai[v, AI_B1N] > 0:
        nxt = b1t[v, ai[v, AI_B1H]]
    if ai[v, AI_B2N] > 0 and b2t[v, ai[v, AI_B2H]] < nxt:
        nxt = b2t[v, ai[v, AI_B2H]]
    return nxt


@njit(cache=True, error_model="numpy", inline="always")
def abr_source_queue(v, waiting, abr):
    """Track the maximum source queue (cells) of VC ``v``; called once per slot."""
    ai = abr[0]
    if waiting > ai[v, AI_SQMAX]:
        ai[v, AI_SQMAX] = waiting
    keep_alive(ai)     # see arrays/refcount.py


@njit(cache=True, error_model="numpy")
def abr_trim_source(v, abr, st, cpar, vpar):
    """Finite edge buffer: drop the newest whole segments of VC ``v``'s connections while
    its source queue exceeds ``AI_SRCBUF`` cells (tail drop of packets at the edge router).

    Called after TCP may have queued segments (the timed events of the slot).  A dropped
    segment is one TCP handed down and the network lost: ``S_SEGSENT`` is decreased so that
    the kernel's cells-sent count stays exact, and the loss is counted in ``AI_SRCDROP``.
    """
    ai = abr[0]
    lim = ai[v, AI_SRCBUF]
    if lim > 0:
        c0 = vpar[v, VP_CONN0]
        nc = vpar[v, VP_NCONN]
        tot = 0
        for c in range(c0, c0 + nc):
            tot += st[c, S_SQCELLS]
        k = 0
        while tot > lim and k < nc:
            # newest segments first, connection by connection from the last one
            c = c0 + nc - 1 - k
            n = st[c, S_SQCNT]
            if n > 1 or (n == 1 and st[c, S_SQCIDX] == 0):
                upf = cpar[c, CP_UPF]
                st[c, S_SQCNT] = n - 1
                st[c, S_SQCELLS] -= upf
                st[c, S_SEGSENT] -= 1
                ai[v, AI_SRCDROP] += 1
                ai[v, AI_SRCDROPC] += upf
                tot -= upf
            else:
                k += 1
    keep_alive(ai, st, cpar, vpar)     # one exit: see arrays/refcount.py


@njit(cache=True, error_model="numpy", inline="always")
def abr_sample(t, abr, qn, nclass, st, vpar):
    """Record samples due at or before slot ``t``: every port's total queue and, per VC,
    the source queue (added to ``sacc``; the mean is sacc / samples)."""
    sg = abr[14]
    sq = abr[15]
    sacc = abr[16]
    while sg[SG_NEXT] <= t:
        n = sg[SG_N]
        if n < sq.shape[0]:
            for p in range(sq.shape[1]):
                tot = 0
                for k in range(nclass):
                    tot += qn[p * nclass + k]
                sq[n, p] = tot
            for v in range(sacc.shape[0]):
                c0 = vpar[v, VP_CONN0]
                w = 0
                for c in range(c0, c0 + vpar[v, VP_NCONN]):
                    w += st[c, S_SQCELLS]
                sacc[v] += w
            sg[SG_N] = n + 1
        sg[SG_NEXT] += sg[SG_EVERY]
    keep_alive(sg, sq, sacc, qn, st, vpar)     # see arrays/refcount.py
