"""Per-packet delay accounting inside both kernels (private; issue 26).

Each delivered frame (a TCP segment, or an IP packet for TCP alone) is timed at packet
granularity, from three slot stamps carried with its *last* cell: ``t0``, the slot TCP
handed the segment to the source (:func:`stamp_pushes`); ``te``, the slot the source sent
its last cell (the cell reaches the first port in that slot); and, at every port, ``ta``,
the slot that cell arrived there.  With ``ts`` the slot a port serves it (the frame
reaches the receiver at ``ts + 1`` after its last port), the components are, in slots:

* source (segmentation buffer)  ``S = te - t0``;
* queue at a port               ``Q_p = ts + 1 - ta`` (waiting and the cell's own service
  slot: the sojourn of Little's law with the cell in service counted as queued);
* queue (all ports of the route) ``Q = sum_p Q_p``;
* propagation                   ``P = total - S - Q`` (the link delays between ports;
  a constant of the route, checked by the tests);
* total                         ``t_recv - t0``.

The occupancies that go with them by Little's law (:data:`OC_*`, integrals over the
measured window, slots x units): frames and cells in the segmentation buffers at the end
of each slot (after the sources sent), and frames whose last cell is at a port before the
port serves (queued or in service).

Histograms are log-linear with fixed bins over integer slots (:func:`delay_bin`): exact
below :data:`DL_EXACT` slots, above it bins of relative width 1/128, so a quantile
reported at a bin's midpoint is within 1/256 of the exact order statistic
(:mod:`tcpabr_model.sim.delay`).  Nothing is kept per packet.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..arrays.layout import NCLASS, S_SEGSENT
from ..arrays.refcount import keep_alive

__all__ = ["DL_EXACT", "DL_SUB", "DL_NBIN", "R_SRC", "R_PROP", "R_TOTAL", "R_QUEUE", "R_PORT0", "OC_SRCF",
           "OC_SRCC", "OC_BAD", "OC_PORT0", "delay_bin", "delay_arrays", "delay_state", "record", "record_delivery",
           "stamp_arrival", "stamp_pushes"]

DL_SUB = 128                    # bins per octave above DL_EXACT
DL_EXACT = 2 * DL_SUB           # slots 0 .. DL_EXACT - 1 have a bin each
DL_NBIN = DL_EXACT + 54 * DL_SUB    # covers every delay below 2**62 slots

# histogram rows (dhist[row], dsum[row])
R_SRC = 0       # segmentation buffer, delivered frames
R_PROP = 1      # propagation (route's link delays), delivered frames
R_TOTAL = 2     # end to end, delivered frames
R_QUEUE = 3     # all ports of the route, delivered frames
R_PORT0 = 4     # port p (R_PORT0 + p): every frame whose last cell that port served

# occupancy integrals over [warmup, nslots) (docc)
OC_SRCF = 0     # frames in the segmentation buffers, end of slot (all connections)
OC_SRCC = 1     # cells (units) in the segmentation buffers, end of slot
OC_BAD = 2      # negative delays seen (an accounting bug; the driver refuses the result)
OC_PORT0 = 3    # port p (OC_PORT0 + p): frames whose last cell is queued or in service


def delay_arrays(nport: int) -> tuple:
    """Fresh ``(dhist, dsum, docc)`` of one replication with ``nport`` ports."""
    return (np.zeros((R_PORT0 + nport, DL_NBIN), dtype=np.int64), np.zeros(R_PORT0 + nport, dtype=np.int64),
            np.zeros(OC_PORT0 + nport, dtype=np.int64))


@njit(cache=True, error_model="numpy", inline="always")
def delay_bin(v):
    """Bin of a delay of ``v`` >= 0 slots: ``v`` itself below DL_EXACT, else the octave and
    the top 7 bits of the mantissa (bin [m 2^k, (m + 1) 2^k), 128 <= m < 256)."""
    if v < DL_EXACT:
        return v
    m, e = math.frexp(float(v))     # v = m 2^e, 0.5 <= m < 1
    return DL_EXACT + (e - 9) * DL_SUB + int(m * 256.0) - DL_SUB


@njit(cache=True, error_model="numpy", inline="always")
def record(dhist, dsum, docc, row, v):
    """Count a delay of ``v`` slots in histogram ``row`` (a negative one in ``OC_BAD``)."""
    if v < 0:
        docc[OC_BAD] += 1
    else:
        dhist[row, delay_bin(v)] += 1
        dsum[row] += v
    keep_alive(dhist, dsum, docc)


@njit(cache=True, error_model="numpy", inline="always")
def stamp_pushes(c, t, st, sq_t, stamped):
    """Stamp slot ``t`` on the segments connection ``c`` queued at its source since the last
    call; returns how many.  Push k of a connection sits at ring position k mod capacity (the
    ring's head + count advances by one per push and is unchanged by a pop), and
    ``S_SEGSENT`` counts the pushes, so no TCP function needs the time."""
    n = st[c, S_SEGSENT]
    k = stamped[c]
    cap = sq_t.shape[1]
    added = n - k
    while k < n:
        sq_t[c, k % cap] = t
        k += 1
    stamped[c] = n
    keep_alive(st, sq_t, stamped)
    return added


@njit(cache=True, error_model="numpy")
def delay_state(nconn, sq_cap, qtot, dltot, nport):
    """The network kernel's delay stamps: ``sq_t`` (push slot of each segment at its source),
    ``stamped`` (pushes stamped per connection), per queue slot ``qt0, qte, qta, qqs`` (of a
    frame's last cell: push slot, slot it left the source, slot it reached this port, its
    waits at earlier ports), per link slot ``dt0, dte, dqs``, and ``peom`` (last cells at
    each port)."""
    i64 = np.int64
    return (np.zeros((nconn, sq_cap), dtype=i64), np.zeros(nconn, dtype=i64), np.zeros(qtot, dtype=i64),
            np.zeros(qtot, dtype=i64), np.zeros(qtot, dtype=i64), np.zeros(qtot, dtype=i64),
            np.zeros(dltot, dtype=i64), np.zeros(dltot, dtype=i64), np.zeros(dltot, dtype=i64),
            np.zeros(nport, dtype=i64))


@njit(cache=True, error_model="numpy", inline="always")
def stamp_arrival(p, k, qcap, qbase, qh, qn, qt0, qte, qta, qqs, peom, t0, te, t, qs0):
    """A frame's last cell was just queued at port ``p``, class ``k`` (the newest cell of
    that queue), in slot ``t``: stamp it."""
    j = p * NCLASS + k
    pos = qbase[j] + (qh[j] + qn[j] - 1) % qcap[p, k]
    qt0[pos] = t0
    qte[pos] = te
    qta[pos] = t
    qqs[pos] = qs0
    peom[p] += 1
    keep_alive(qcap, qbase, qh, qn, qt0, qte, qta, qqs, peom)


@njit(cache=True, error_model="numpy", inline="always")
def record_delivery(dhist, dsum, docc, total, src, queue):
    """A frame reaches the receiver: its total, source, queue and propagation (the rest)
    delays, slots."""
    record(dhist, dsum, docc, R_TOTAL, total)
    record(dhist, dsum, docc, R_SRC, src)
    record(dhist, dsum, docc, R_QUEUE, queue)
    record(dhist, dsum, docc, R_PROP, total - src - queue)
    keep_alive(dhist, dsum, docc)
