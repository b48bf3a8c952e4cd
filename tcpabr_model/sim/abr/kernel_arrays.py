"""Build the ABR arrays of a network and summarise them after a run (private).

:func:`abr_inputs` is called by :func:`tcpabr_model.sim.kernel_inputs.kernel_inputs`; it returns the
``abr`` tuple of :mod:`tcpabr_model.sim.abr.rm_cells` for the kernel.  :func:`abr_rep_summary` turns the arrays
(mutated in place by the kernel) into per-replication numbers.
"""

from __future__ import annotations

import numpy as np

from . import rm_cells as N
from . import source as A
from ..switch import erica as E
from ..arrays import layout as L
from .divergence import queue_divergence
from ...units import CELL_BYTES as L_CELL_BYTES

__all__ = ["abr_inputs", "abr_rep_summary", "abr_to_jsonable", "abr_summary_lines", "SAMPLE_SECONDS"]

SAMPLE_SECONDS = 1e-3   # queue sampling interval (divergence verdict, mean source queue)


def abr_inputs(net, kin) -> tuple:
    """The ``abr`` tuple for ``net``; sets the ICR of RM-cell VCs in ``kin['vfpar']``."""
    nvc = kin["vpar"].shape[0]
    nport = len(net.ports)
    rm_vcs = [i for i, v in enumerate(net.vcs) if v.feedback == "rm"]
    every = max(1, net.to_slots(SAMPLE_SECONDS))
    nsamp = int(kin["gpar"][L.G_NSLOTS]) // every + 2
    has = bool(rm_vcs)
    abr = N.abr_state(nvc, nport, nsamp if has else 1, every if has else 2**61,
                      rmcap=(1 << 15) if has else 1, bcap=4096 if has else 1)
    ai, ast, apar, rmr, b1t, b1r, b2t, b2r, adst, pra, epar, es, eact, eccr, sg, sq, sacc = abr
    if not has:
        sg[N.SG_NEXT] = 2**61
    slot = net.slot_seconds
    ts = net.to_slots
    for p, port in enumerate(net.ports):
        if getattr(port, "erica", None) is not None:
            pra[p] = N.RA_ERICA
            epar[p] = port.erica.to_array(slot, port.rate)
    for i in rm_vcs:
        vc = net.vcs[i]
        ai[i, N.AI_ISABR] = 1
        apar[i] = vc.abr.to_array(slot)
        r = vc.route
        k = next((j for j, p in enumerate(r) if pra[p] == N.RA_ERICA), 0)
        links = [net.ports[p].link_delay for p in r[:-1]]
        # forward: source -> first port and last port -> destination are folded (not
        # simulated); the reverse path is not simulated: see the module docstring of abr/rm_cells.py
        ai[i, N.AI_TURN] = ts(2.0 * vc.egress_delay + sum(links[k:]))
        ai[i, N.AI_BACK] = ts(2.0 * vc.access_delay + sum(links[:k]))
        sb = getattr(vc, "source_buffer", None)
        ai[i, N.AI_SRCBUF] = 0 if sb is None else int(sb)
        kin["vfpar"][i, L.VF_RATE] = vc.abr.icr * slot * L_CELL_BYTES
    N.abr_init(abr)
    return abr



def abr_rep_summary(net, kin, out) -> dict:
    """Per-replication ABR numbers (plain Python / numpy values)."""
    abr = kin["abr"]
    ai, ast, apar, rmr, b1t, b1r, b2t, b2r, adst, pra, epar, es, eact, eccr, sg, sq, sacc = abr
    st = out[0]
    nd = len(net.vcs)
    rm = np.array([ai[i, N.AI_ISABR] == 1 for i in range(nd)])
    if not rm.any():
        return {}
    if int(ai[:nd, N.AI_ERR].max()) != 0:
        from ...errors import ModelError
        raise ModelError("ABR bookkeeping overflow (BRM ring or RM record overwritten in flight)")
    ns = int(sg[N.SG_N])
    every = int(sg[N.SG_EVERY])
    slot = net.slot_seconds
    t = np.arange(ns) * every * slot
    qser = sq[:ns].copy()
    b = net.bottleneck
    link_cps = net.ports[b].rate / slot
    rtt = max(net.round_trip(i) for i in range(nd) if rm[i])
    rtt_cells = rtt * link_cps
    # the most the bottleneck can hold: every TCP receiver window (cells) of its VCs
    upf = net.units_per_frame
    ceiling = float(sum(v.connections for v in net.vcs if b in v.route) * net.tcp.wmax * upf)
    verdict = queue_divergence(t, qser[:, b], link_cps, ceiling=ceiling) if ns >= 4 else None
    g = kin["gpar"]
    secs = (g[L.G_NSLOTS] - g[L.G_WARMUP]) * slot
    good = st[:, L.S_GOOD].astype(float)
    return {
        "max_source_queue_cells": ai[:nd, N.AI_SQMAX].astype(float),
        "mean_source_queue_cells": sacc[:nd] / max(ns, 1),
        "source_drops_segments": ai[:nd, N.AI_SRCDROP].astype(float),
        "source_drops_cells": ai[:nd, N.AI_SRCDROPC].astype(float),
        "frm_sent": ast[:nd, A.AS_NFRM].copy(),
        "frm_turned": ai[:nd, N.AI_FRMDEST].astype(float),
        "brm_received": ai[:nd, N.AI_BRMSRC].astype(float),
        "brm_in_flight": (ai[:nd, N.AI_B1N] + ai[:nd, N.AI_B2N]).astype(float),
        "data_cells_abr": ast[:nd, A.AS_NDATA].copy(),
        "acr_end_mbps": ast[:nd, A.AS_ACR] / slot * 424 / 1e6,
        "max_switch_queue_cells": float(out[4][b, L.PS_QMAX]),
        "max_switch_queue_rtt": float(out[4][b, L.PS_QMAX]) / rtt_cells,
        "rtt_cells": rtt_cells,
        "throughput_mbps": float(good.sum() * net.payload_bytes * 8 / secs / 1e6),
        "diverges": None if verdict is None else verdict.diverges,
        "queue_slope_cells_per_s": None if verdict is None else verdict.slope,
        "queue_at_window_ceiling": None if verdict is None else verdict.at_ceiling,
        "window_ceiling_cells": ceiling,
        "queue_t": t, "queue_cells": qser[:, b],
        "erica_intervals": es[:, E.ES_NINT].copy(),
    }


def abr_to_jsonable(a: dict) -> dict:
    """One replication's ABR dict with arrays as lists (the queue series left out)."""
    out = {}
    for k, v in a.items():
        if k in ("queue_t", "queue_cells"):
            continue
        if isinstance(v, np.ndarray):
            out[k] = v.tolist()
        elif isinstance(v, (np.floating, np.integer, np.bool_)):
            out[k] = v.item()
        else:
            out[k] = v
    return out


def abr_summary_lines(reps) -> list[str]:
    """Text lines for ``tcpabr simulate --preset`` (one block per replication)."""
    lines = []
    for r, a in enumerate(reps):
        div = "diverges" if a["diverges"] else "bounded"
        if a.get("queue_at_window_ceiling"):
            div += " (held at the TCP window ceiling)"
        lines.append(f"ABR replication {r}: max switch queue {a['max_switch_queue_cells']:.0f} cells "
                     f"({a['max_switch_queue_rtt']:.2f} x RTT), {div}, slope "
                     f"{a['queue_slope_cells_per_s']:.0f} cells/s; throughput {a['throughput_mbps']:.2f} Mbit/s")
        lines.append(f"  source queue per VC: max {a['max_source_queue_cells'].max():.0f} cells, mean "
                     f"{a['mean_source_queue_cells'].mean():.1f} cells; edge drops "
                     f"{a['source_drops_cells'].sum():.0f} cells; FRMs sent {a['frm_sent'].sum():.0f}, turned "
                     f"{a['frm_turned'].sum():.0f}, BRMs received {a['brm_received'].sum():.0f}")
    return lines
