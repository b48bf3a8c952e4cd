"""What a simulation returns: :class:`SimulationResult` (:func:`~tcpabr_model.sim.simulate`) and
:class:`NetResult` (:func:`~tcpabr_model.sim.simulate_network`), one family
(:class:`ReplicatedResult`), and the per-replication metrics both are estimated from.

Units: efficiencies are fractions of the capacity on the wire (which headers count as
overhead is said per field); goodputs in payload bytes (``SimulationResult``) or bits
(``NetResult``) per second; counters in cells, frames or segments as named.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._results import ResultMixin  # to_frame() / to_flat_dict() (issue 17)
from ..errors import ModelError
from ..stats import Estimate, jain_index
from .arrays import layout as L
from .delay import DelayStats
from .network import CELL_BYTES, Network
from .scenario import Scenario

__all__ = ["ReplicatedResult", "SimulationResult", "NetResult", "Trace", "replication_metrics", "batch_metrics",
           "network_metrics", "SCENARIO_COUNTERS", "NETWORK_COUNTERS"]


@dataclass(frozen=True)
class ReplicatedResult(ResultMixin):
    """What every simulation result holds besides its estimates: the seed, the number of
    replications and the speed of the run (cells simulated, kernel seconds, compilation
    excluded)."""

    def speed_dict(self) -> dict:
        """``cells_simulated``, ``kernel_seconds``, ``cells_per_second``, ``slots_simulated``."""
        return {"cells_simulated": self.cells_simulated, "kernel_seconds": self.kernel_seconds,
                "cells_per_second": self.cells_per_second, "slots_simulated": self.slots_simulated}


@dataclass(frozen=True)
class Trace:
    """Series sampled every ``interval`` seconds (first replication only).

    Attributes: ``time`` (s), ``queue`` (bottleneck occupancy, units), ``capacity``
    (level index: 0 high, 1 low for the two-state process; the index into the sorted
    levels of a K-state model or a trace), ``cwnd`` / ``ssthresh`` (packets, one column per connection),
    ``source_rate`` (allowed rate, fraction of the high rate), ``segmentation_cells``
    (cells waiting at the source), ``delivered`` (cumulative in-order segments),
    ``measured`` (INSTCAP measurement per interval s) and ``feedback`` (eq. 28 value per
    interval and connection).
    """

    time: np.ndarray
    queue: np.ndarray
    capacity: np.ndarray
    cwnd: np.ndarray
    ssthresh: np.ndarray
    source_rate: np.ndarray
    segmentation_cells: np.ndarray
    delivered: np.ndarray
    measured: np.ndarray
    feedback: np.ndarray

    def to_dict(self) -> dict:
        return {k: getattr(self, k).tolist() for k in self.__dataclass_fields__}


@dataclass(frozen=True)
class SimulationResult(ReplicatedResult):
    """Results of :func:`simulate` (keys of :meth:`to_dict` documented in docs/simulator.md).

    Attributes
    ----------
    efficiency : Estimate
        IP bytes (payload + TCP/IP headers) of in-order delivered segments / capacity on
        the wire, over the measured window (Section V's definition: ATM overhead counts as
        lost capacity).
    efficiency_wire : Estimate
        Same numerator counted as the wire bytes of each delivered frame (cell tax not
        counted as loss; equals ``efficiency`` for TCP alone).
    per_connection_efficiency : tuple of Estimate
        Each connection's IP-byte goodput / mean capacity.
    goodput_bps : tuple of Estimate
        Payload bytes per second delivered in order, per connection.
    fairness : Estimate
        Jain's index of the per-connection goodputs.
    cell_loss_ratio, frame_loss_ratio : Estimate
        Dropped / sent cells and frames at the bottleneck (all connections).
    counters : dict
        Totals over all replications (cells sent/served/dropped, frames, timeouts, ...).
    cells_simulated : int
        Cells sent by the sources + cells served or dropped at the bottleneck.
    cells_per_second : float
        ``cells_simulated`` / kernel wall time (compilation excluded).
    delay : DelayStats
        Per delivered segment, the time in the source's segmentation buffer, in the
        bottleneck queue, in propagation and in total (mean, p50, p95, p99, seconds), and
        the buffers' time-average occupancies, over replications (:mod:`tcpabr_model.sim.delay`).
    """

    scenario: Scenario
    seed: int
    replications: int
    ci_method: str
    efficiency: Estimate
    efficiency_wire: Estimate
    per_connection_efficiency: tuple
    goodput_bps: tuple
    fairness: Estimate
    cell_loss_ratio: Estimate
    frame_loss_ratio: Estimate
    counters: dict
    cells_simulated: int
    kernel_seconds: float
    cells_per_second: float
    slots_simulated: int
    trace: Trace | None = field(default=None, repr=False)
    delay: DelayStats | None = field(default=None, repr=False)

    def to_dict(self, include_trace: bool = False) -> dict:
        d = {
            "scenario": self.scenario.to_dict(),
            "seed": self.seed,
            "replications": self.replications,
            "ci_method": self.ci_method,
            "efficiency": self.efficiency.to_dict(),
            "efficiency_wire": self.efficiency_wire.to_dict(),
            "overhead_factor": self.scenario.overhead_factor,
            "per_connection_efficiency": [e.to_dict() for e in self.per_connection_efficiency],
            "goodput_bps": [e.to_dict() for e in self.goodput_bps],
            "fairness": self.fairness.to_dict(),
            "cell_loss_ratio": self.cell_loss_ratio.to_dict(),
            "frame_loss_ratio": self.frame_loss_ratio.to_dict(),
            "counters": self.counters,
            "speed": self.speed_dict(),
        }
        if self.delay is not None:
            d["delay"] = self.delay.to_dict()
        if include_trace and self.trace is not None:
            d["trace"] = self.trace.to_dict()
        return d


@dataclass(frozen=True)
class NetResult(ReplicatedResult):
    """Results of :func:`simulate_network` (estimates over replications, 95 % Student-t CIs).

    Attributes
    ----------
    efficiency : Estimate
        Seed 000 Sec. 4.2: sum of TCP goodputs (payload bytes delivered in order) / the
        maximum possible TCP throughput, i.e. payload fraction x (bottleneck capacity
        minus the VBR cells it served), over the measured window.
    efficiency_ip : Estimate
        The core paper's definition (``tcpabr_model.sim``): IP bytes (payload + TCP/IP
        header) of in-order segments / bottleneck capacity in wire bytes.
    fairness : Estimate
        Jain's index of the per-connection goodputs (seed 000 Sec. 4.2).
    vc_fairness : Estimate
        Jain's index of the per-VC goodputs.
    goodput_bps, vc_goodput_bps : tuple of Estimate
        Payload bits per second, per connection and per VC.
    share_ratio : tuple of Estimate or None
        Seed 002: (mu_i / mu) / (r_i / r) per VC, with r_i the VC's ``threshold``
        (None unless every VC has one).
    cell_loss_ratio, frame_loss_ratio : Estimate
        Seed 001: cells dropped / cells sent by the TCP sources (all ports), and frames with
        at least one dropped cell / frames sent.
    queue_max : tuple of int
        Largest occupancy of each port (cells, all classes), over all replications.
    queue_mean : tuple of Estimate
        Time-average occupancy of each port over the measured window (cells).
    abr : tuple of dict
        Per replication, the ABR RM-cell results (source queues, RM accounting, switch
        queue series and divergence verdict; ``docs/abr_erica.md``); empty without
        ``feedback='rm'`` VCs.
    counters : dict
        Totals over all replications.
    delay : DelayStats
        Per delivered frame, source / queue (sum over the route's ports) / propagation /
        total delay, the queue delay at every port, and the occupancies of the sources and
        of every port (:mod:`tcpabr_model.sim.delay`).
    samples : dict of ndarray
        Per-replication values behind the estimates (keys ``eff``, ``eff_ip``, ``jain``,
        ``vc_jain``, ``goodput``, ``vc_goodput``, ``clr``, ``flr``, ``qmean``, ``ratio``).
    """

    network: Network
    seed: int
    replications: int
    efficiency: Estimate
    efficiency_ip: Estimate
    fairness: Estimate
    vc_fairness: Estimate
    goodput_bps: tuple
    vc_goodput_bps: tuple
    share_ratio: tuple | None
    cell_loss_ratio: Estimate
    frame_loss_ratio: Estimate
    queue_max: tuple
    queue_mean: tuple
    counters: dict
    cells_simulated: int
    kernel_seconds: float
    cells_per_second: float
    slots_simulated: int
    abr: tuple = ()
    samples: dict | None = field(default=None, repr=False)
    delay: DelayStats | None = field(default=None, repr=False)

    def to_dict(self) -> dict:
        def ests(x):
            return None if x is None else [e.to_dict() for e in x]
        d = {
            "network": self.network.to_dict(), "seed": self.seed, "replications": self.replications,
            "efficiency": self.efficiency.to_dict(), "efficiency_ip": self.efficiency_ip.to_dict(),
            "fairness": self.fairness.to_dict(), "vc_fairness": self.vc_fairness.to_dict(),
            "goodput_bps": ests(self.goodput_bps), "vc_goodput_bps": ests(self.vc_goodput_bps),
            "share_ratio": ests(self.share_ratio),
            "cell_loss_ratio": self.cell_loss_ratio.to_dict(), "frame_loss_ratio": self.frame_loss_ratio.to_dict(),
            "queue_max": list(self.queue_max), "queue_mean": ests(self.queue_mean), "counters": self.counters,
            "speed": self.speed_dict(),
        }
        if self.delay is not None:
            d["delay"] = self.delay.to_dict()
        return d


SCENARIO_COUNTERS = {
    "cells_sent": L.S_CSENT, "cells_dropped": L.S_CDROP, "cells_served": L.S_CSERVED,
    "frames_sent": L.S_FSENT, "frames_dropped": L.S_FDROP, "frames_reassembled": L.S_FDELIV,
    "segments_sent": L.S_SEGSENT, "retransmissions": L.S_RETX, "timeouts": L.S_TIMEOUTS,
    "fast_retransmits": L.S_FASTRTX, "acks_sent": L.S_ACKS, "delivered_segments": L.S_GOODALL,
    "delivered_segments_measured": L.S_GOOD, "timeouts_repeated": L.S_TOREPEAT,
    "timeouts_later_hole": L.S_TOHOLE, "timeouts_in_slow_start": L.S_TOSS, "timeouts_without_drop": L.S_TONODROP,
}


NETWORK_COUNTERS = {
    "cells_sent": L.S_CSENT, "cells_dropped": L.S_CDROP, "frames_sent": L.S_FSENT, "frames_dropped": L.S_FDROP,
    "frames_reassembled": L.S_FDELIV, "segments_sent": L.S_SEGSENT, "retransmissions": L.S_RETX,
    "timeouts": L.S_TIMEOUTS, "fast_retransmits": L.S_FASTRTX, "acks_sent": L.S_ACKS,
    "delivered_segments": L.S_GOODALL, "delivered_segments_measured": L.S_GOOD,
    "timeouts_repeated": L.S_TOREPEAT, "timeouts_later_hole": L.S_TOHOLE, "timeouts_in_slow_start": L.S_TOSS,
    "timeouts_without_drop": L.S_TONODROP,
}


#: why a replication (or batch) without capacity has no efficiency, and what to do
_NO_CAPACITY = ("{what} of a replication had no capacity at all (the capacity process stayed at a level of 0 "
                "throughout): its efficiency is 0 / 0, undefined; measure longer than the longest outage")


def replication_metrics(sc: Scenario, st, gout, g):
    """Per-replication metrics of :func:`~tcpabr_model.sim.simulate` from the fast path's outputs."""
    atm = sc.feedback != "none"
    capwin = gout[L.O_CAPWIN] * sc.slot_bytes  # wire bytes of capacity in the measured window
    if not capwin > 0:
        raise ModelError(_NO_CAPACITY.format(what=f"the measured window (duration={sc.duration!r} s)"))
    secs = (g[L.G_NSLOTS] - g[L.G_WARMUP]) * sc.slot_seconds
    good = st[:, L.S_GOOD].astype(float)
    ipb = sc.ip_packet_bytes
    wireb = sc.frame_wire_bytes if atm else ipb
    eff_c = good * ipb / capwin
    return {
        "eff": float(eff_c.sum()),
        "eff_wire": float((good * wireb).sum() / capwin),
        "eff_c": eff_c,
        "goodput": good * sc.payload_bytes / secs,
        "jain": jain_index(good, undefined="nan"),
        "clr": float(st[:, L.S_CDROP].sum() / max(1, st[:, L.S_CSENT].sum())),
        "flr": float(st[:, L.S_FDROP].sum() / max(1, st[:, L.S_FSENT].sum())),
    }


def batch_metrics(sc: Scenario, smp_i, smp_g, g, nb):
    """Batch means of efficiency from the sampled cumulative series of one run."""
    t = smp_g[:, 0]
    warm = g[L.G_WARMUP]
    idx = np.nonzero(t >= warm)[0]
    if idx.size < nb + 1:
        raise ValueError(f"batches={nb} is invalid: the run has only {idx.size} samples after warm-up")
    edges = idx[np.linspace(0, idx.size - 1, nb + 1).round().astype(int)]
    good = smp_i[:, :, 0].astype(float)
    cap = smp_g[:, 2] * sc.slot_bytes
    ipb = sc.ip_packet_bytes
    wireb = sc.frame_wire_bytes if sc.feedback != "none" else ipb
    out = {"eff": [], "eff_wire": [], "eff_c": [], "goodput": [], "jain": []}
    for a, b in zip(edges[:-1], edges[1:]):
        dg = good[b] - good[a]
        dc = cap[b] - cap[a]
        if not dc > 0:
            raise ModelError(_NO_CAPACITY.format(what=f"a batch of the measured window (batches={nb})")
                             + " or fewer batches")
        secs = (t[b] - t[a]) * sc.slot_seconds
        out["eff"].append(dg.sum() * ipb / dc)
        out["eff_wire"].append(dg.sum() * wireb / dc)
        out["eff_c"].append(dg * ipb / dc)
        out["goodput"].append(dg * sc.payload_bytes / secs)
        out["jain"].append(jain_index(dg, undefined="nan"))
    return out


def network_metrics(net: Network, out, kin) -> dict:
    """Per-replication metrics from raw kernel outputs."""
    st, fs, vst, vfs, pst, pfs, gout, inflight = out
    g = kin["gpar"]
    nmeas = g[L.G_NSLOTS] - g[L.G_WARMUP]
    secs = nmeas * net.slot_seconds
    b = net.bottleneck
    rate = net.ports[b].rate
    cap_bytes = pfs[b, L.PFS_CAPWIN] * rate * CELL_BYTES
    vbr_bytes = pst[b, L.PS_SERVEDW0 + L.CL_VBR] * CELL_BYTES
    good = st[:, L.S_GOOD].astype(float)
    ipb = net.payload_bytes + net.tcpip_header_bytes
    gp = good * net.payload_bytes * 8 / secs
    vcs = np.array([cp_vc for cp_vc in kin["cpar"][:, L.CP_VC]])
    nvc = len(net.vcs)
    vgp = np.array([gp[vcs == i].sum() for i in range(nvc)])
    avail = cap_bytes - vbr_bytes
    m = {
        "eff": float(good.sum() * net.payload_bytes / (net.payload_fraction * avail)) if avail > 0 else float("nan"),
        "eff_ip": float(good.sum() * ipb / cap_bytes) if cap_bytes > 0 else float("nan"),
        "jain": jain_index(gp, undefined="nan"), "vc_jain": jain_index(vgp, undefined="nan"),
        "goodput": gp, "vc_goodput": vgp,
        "clr": float(st[:, L.S_CDROP].sum() / max(1, st[:, L.S_CSENT].sum())),
        "flr": float(st[:, L.S_FDROP].sum() / max(1, st[:, L.S_FSENT].sum())),
        "qmean": pfs[:, L.PFS_QINT] / max(1, nmeas), "qmax": pst[:, L.PS_QMAX].copy(),
    }
    if all(v.threshold is not None for v in net.vcs):
        r = np.array([v.threshold for v in net.vcs])
        tot = vgp.sum()
        m["ratio"] = (vgp / tot) / (r / r.sum()) if tot > 0 else np.full(nvc, np.nan)
    return m
