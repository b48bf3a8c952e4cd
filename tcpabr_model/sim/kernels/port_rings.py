"""The network kernel's port queues, link delay lines and routes as flat arrays (private):
their allocation, and the cells left in them at the end of a run.  Used by
:func:`.general.simulate_network_kernel`."""

from __future__ import annotations

import numpy as np
from numba import njit

from ..arrays.layout import NCLASS, VP_NHOPS

__all__ = ["port_rings", "in_flight"]


@njit(cache=True, error_model="numpy")
def port_rings(nport, nvc, qcap, dl_cap, vpar, vroute):
    """Empty rings of a network.

    Returns the class queues (one flat ring per port and class, queue j = p * 3 + k, starting
    at ``qbase[j]``): ``qbase, qv, qc, qs, qi`` (VC, connection, sequence number / RM slot,
    info word of each cell), ``qh, qn`` (head, count), the per-VC, per-port accounting
    ``occ, nact, ppdf, armed, lot`` of :mod:`.port_arrival`; the link delay lines (one flat
    ring per port): ``dbase, dtt`` (arrival slot at the next port), ``dv, dc, ds, di``,
    ``dh, dn``; and ``nexthop[v, p]``, the port after ``p`` on VC ``v``'s route (-1: the
    destination).
    """
    nq = nport * NCLASS
    qbase = np.zeros(nq + 1, dtype=np.int64)
    for p in range(nport):
        for k in range(NCLASS):
            qbase[p * NCLASS + k + 1] = qbase[p * NCLASS + k] + qcap[p, k]
    qtot = qbase[nq]
    dbase = np.zeros(nport + 1, dtype=np.int64)
    for p in range(nport):
        dbase[p + 1] = dbase[p] + dl_cap[p]
    dtot = dbase[nport]
    nexthop = -np.ones((nvc, nport), dtype=np.int64)
    for v in range(nvc):
        for h in range(vpar[v, VP_NHOPS] - 1):
            nexthop[v, vroute[v, h]] = vroute[v, h + 1]
    return (qbase, np.zeros(qtot, dtype=np.int32), np.zeros(qtot, dtype=np.int32), np.zeros(qtot, dtype=np.int64),
            np.zeros(qtot, dtype=np.int32), np.zeros(nq, dtype=np.int64), np.zeros(nq, dtype=np.int64),
            np.zeros((nvc, nport), dtype=np.int64), np.zeros((nport, NCLASS), dtype=np.int64),
            np.zeros((nvc, nport), dtype=np.int8), np.ones((nvc, nport), dtype=np.int8),
            np.zeros(nport, dtype=np.int64),
            dbase, np.zeros(dtot, dtype=np.int64), np.zeros(dtot, dtype=np.int32), np.zeros(dtot, dtype=np.int32),
            np.zeros(dtot, dtype=np.int64), np.zeros(dtot, dtype=np.int32), np.zeros(nport, dtype=np.int64),
            np.zeros(nport, dtype=np.int64), nexthop)


@njit(cache=True, error_model="numpy")
def in_flight(nvc, occ, dbase, dv, dh, dn, dl_cap):
    """Cells of each VC still in port queues or on links."""
    nport = occ.shape[1]
    inflight = np.zeros(nvc, dtype=np.int64)
    for v in range(nvc):
        for p in range(nport):
            inflight[v] += occ[v, p]
    for p in range(nport):
        for i in range(dn[p]):
            inflight[dv[dbase[p] + (dh[p] + i) % dl_cap[p]]] += 1
    return inflight
