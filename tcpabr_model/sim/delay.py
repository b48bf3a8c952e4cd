"""Packet delay and buffer occupancy of a simulation (issue 26): the kernels' fixed-bin
histograms (:mod:`tcpabr_model.sim.kernels.delay_record`) turned into means, quantiles and
time-average occupancies per replication, and into estimates with confidence intervals
over replications.

Definitions (per delivered frame, i.e. TCP segment; TCP alone: IP packet; times from the
slot stamps of the frame's *last* cell):

* ``source``: from the slot TCP hands the segment to the source to the slot the source
  sends its last cell (the wait in the segmentation buffer, and the sending of the other
  cells at the allowed rate);
* ``queue``: the sum over the ports of the route of (slot the port serves the last cell
  + 1 - slot it arrived there): waiting plus the last cell's own service slot;
* ``propagation``: the link delays between consecutive ports of the route; 0 for a
  :class:`~tcpabr_model.sim.Scenario`, whose round trip Delta is all on the ACK path;
* ``total`` = source + queue + propagation: handover to TCP's receiver.

Per port, ``port_queue[p]`` is the queue delay at port ``p`` of every frame whose last cell
that port served (delivered or not).  Counted over the measured window: frames received
at or after the warm-up (as the receiver counts ``delivered_segments_measured``), and at a
port frames served in a slot at or after it.

Occupancies (time averages over the measured window): ``source_frames`` / ``source_cells``,
the frames (segments) and cells (units) in the segmentation buffers of all connections at
the end of each slot; per port ``queue_cells`` (cells queued or in service: the end-of-slot
occupancy ``queue_mean`` of :class:`~tcpabr_model.sim.NetResult` plus the cells served per
slot) and ``queue_frames`` (frames whose last cell is queued or in service).  With these
conventions Little's law holds exactly up to the frames in flight at the window's ends:
``source_frames`` = frames leaving the sources per slot x mean source delay, and
``queue_frames`` = frames served per slot x mean queue delay.

Resolution: delays are integer slots (one slot = one 53-byte cell time at the reference
rate, ``slot_seconds``); the histogram has one bin per slot below :data:`EXACT_SLOTS` and
128 bins per octave above, so a quantile (the smallest delay with at least a fraction q of
the frames at or below it, reported at its bin's midpoint) is exact below 256 slots and
within 1/256 (0.4 %) of the exact order statistic above; the means are exact.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ModelError
from ..stats import Estimate, two_digits
from .kernels.delay_record import (DL_EXACT, DL_NBIN, DL_SUB, OC_BAD, OC_PORT0, OC_SRCC, OC_SRCF, R_PORT0, R_PROP,
                                   R_QUEUE, R_SRC, R_TOTAL)

__all__ = ["COMPONENTS", "QUANTILES", "EXACT_SLOTS", "QUANTILE_REL_ERROR", "DelayEstimate", "DelayStats",
           "bin_values", "histogram_quantile", "replication_delay", "delay_stats"]

#: component -> histogram row of the kernels
COMPONENTS = {"source": R_SRC, "queue": R_QUEUE, "propagation": R_PROP, "total": R_TOTAL}
QUANTILES = {"p50": 0.50, "p95": 0.95, "p99": 0.99}
EXACT_SLOTS = DL_EXACT
QUANTILE_REL_ERROR = 1.0 / (2 * DL_SUB)


def bin_values() -> tuple[np.ndarray, np.ndarray]:
    """(lowest delay, bin width) of every histogram bin, in slots."""
    i = np.arange(DL_NBIN)
    j = np.maximum(i - DL_EXACT, 0)
    width = np.where(i < DL_EXACT, 1, 2 ** (j // DL_SUB + 1)).astype(float)
    low = np.where(i < DL_EXACT, i, (j % DL_SUB + DL_SUB) * width).astype(float)
    return low, width


_LOW, _WIDTH = bin_values()
_MID = _LOW + (_WIDTH - 1.0) / 2.0      # midpoint of the integer delays in the bin


def histogram_quantile(hist: np.ndarray, q: float) -> float:
    """The q-quantile (slots) of a delay histogram: the smallest delay with at least
    ceil(q n) of the n counts at or below it, at its bin's midpoint; NaN when n = 0."""
    n = int(hist.sum())
    if n == 0:
        return float("nan")
    k = max(1, int(np.ceil(q * n - 1e-9)))
    return float(_MID[int(np.searchsorted(np.cumsum(hist), k))])


def _component(hist, total, slot_s) -> dict:
    n = int(hist.sum())
    d = {"frames": n, "mean": total / n * slot_s if n else float("nan")}
    for name, q in QUANTILES.items():
        d[name] = histogram_quantile(hist, q) * slot_s
    return d


def replication_delay(delay: tuple, slot_seconds: float, window_slots: int, port_cells_integral) -> dict:
    """Per-replication delays (seconds) and occupancies from the kernel's ``(dhist, dsum,
    docc)``; ``port_cells_integral[p]``: cells queued or in service at port ``p`` summed
    over the measured window's slots.

    Raises
    ------
    ModelError
        When the kernel counted a negative delay (an accounting fault, never a number).
    """
    dhist, dsum, docc = delay
    if docc[OC_BAD] != 0:
        raise ModelError(f"internal: the delay accounting saw {int(docc[OC_BAD])} negative delays; "
                         "the delay statistics of this run are not trustworthy")
    w = max(1, int(window_slots))
    nport = dhist.shape[0] - R_PORT0
    out = {k: _component(dhist[r], dsum[r], slot_seconds) for k, r in COMPONENTS.items()}
    out["port_queue"] = [_component(dhist[R_PORT0 + p], dsum[R_PORT0 + p], slot_seconds) for p in range(nport)]
    out["source_frames"] = docc[OC_SRCF] / w
    out["source_cells"] = docc[OC_SRCC] / w
    out["queue_frames"] = [docc[OC_PORT0 + p] / w for p in range(nport)]
    out["queue_cells"] = [float(port_cells_integral[p]) / w for p in range(nport)]
    return out


@dataclass(frozen=True)
class DelayEstimate:
    """One delay component over replications: ``mean``, ``p50``, ``p95``, ``p99``
    (seconds, each an :class:`~tcpabr_model.stats.Estimate` of the per-replication values)
    and ``frames``, the frames counted in all replications together."""

    mean: Estimate
    p50: Estimate
    p95: Estimate
    p99: Estimate
    frames: int

    def to_dict(self) -> dict:
        return {"mean": self.mean.to_dict(), "p50": self.p50.to_dict(), "p95": self.p95.to_dict(),
                "p99": self.p99.to_dict(), "frames": self.frames}


@dataclass(frozen=True)
class DelayStats:
    """Delays and occupancies of a simulation (definitions in :mod:`tcpabr_model.sim.delay`).

    Attributes
    ----------
    source, queue, propagation, total : DelayEstimate
        Per delivered frame, seconds.
    port_queue : tuple of DelayEstimate
        Queue delay at each port (``queue`` is their sum along a route).
    source_frames, source_cells : Estimate
        Time-average occupancy of the segmentation buffers (all connections), frames and
        cells (units).
    queue_frames, queue_cells : tuple of Estimate
        Time-average occupancy of each port, frames and cells, queued or in service.
    slot_seconds : float
        The simulator's time unit (one cell time at the reference rate), seconds.
    """

    source: DelayEstimate
    queue: DelayEstimate
    propagation: DelayEstimate
    total: DelayEstimate
    port_queue: tuple
    source_frames: Estimate
    source_cells: Estimate
    queue_frames: tuple
    queue_cells: tuple
    slot_seconds: float

    def to_dict(self) -> dict:
        d = {k: getattr(self, k).to_dict() for k in COMPONENTS}
        d["port_queue"] = [x.to_dict() for x in self.port_queue]
        d["occupancy"] = {"source_frames": self.source_frames.to_dict(),
                          "source_cells": self.source_cells.to_dict(),
                          "queue_frames": [x.to_dict() for x in self.queue_frames],
                          "queue_cells": [x.to_dict() for x in self.queue_cells]}
        d["unit"] = "s"
        d["slot_seconds"] = self.slot_seconds
        d["quantile_resolution"] = (f"exact below {EXACT_SLOTS} slots, else within {QUANTILE_REL_ERROR:.4g} "
                                    "relative of the exact order statistic")
        return d

    def columns(self, port: int = 0) -> dict:
        """Tidy columns of a sweep table: ``delay_<component>_<stat>_s`` and ``..._s_hw`` (the
        CI half-width; NaN with one replication) for source, queue, propagation, total and
        mean, p50, p95, p99; ``delay_port_queue_<stat>_s`` at ``port``; occupancies
        ``occ_source_frames``, ``occ_source_cells``, ``occ_queue_frames``, ``occ_queue_cells``
        (at ``port``) with ``_hw``."""
        out = {}

        def put(name, e):
            out[name] = float(e.mean)
            out[name + "_hw"] = float(e.half_width)

        for k in COMPONENTS:
            for n in ("mean", "p50", "p95", "p99"):
                put(f"delay_{k}_{n}_s", getattr(getattr(self, k), n))
        for n in ("mean", "p50", "p95", "p99"):
            put(f"delay_port_queue_{n}_s", getattr(self.port_queue[port], n))
        put("occ_source_frames", self.source_frames)
        put("occ_source_cells", self.source_cells)
        put("occ_queue_frames", self.queue_frames[port])
        put("occ_queue_cells", self.queue_cells[port])
        return out

    def lines(self, atm: bool = True) -> list:
        """One text line per component (ms, mean +/- the CI half-width over replications, and the
        interval clipped at 0 where it reaches below) and one of occupancies.  ``atm=False`` (TCP
        alone: the link serves whole IP packets, a cell is a packet) counts packets only."""
        unit = "frames" if atm else "packets"
        out = []
        for k in COMPONENTS:
            e = getattr(self, k)
            if not np.isfinite(e.mean.mean):     # a replication measured no delivered frame
                out.append(f"delay {k:<12s}none: a replication delivered no {unit[:-1]} in its measured window "
                           f"({e.frames} {unit} in all)")
                continue
            if k == "propagation" and all(getattr(e, n).mean == 0.0 for n in ("mean", "p99")):
                # a Scenario: its round trip is all on the ACK return path (docs/simulator.md "Delay")
                out.append(f"delay {k:<12s}0 ms: the round trip is on the ACK return path here, so the "
                           f"total is source + queue ({e.frames} {unit})")
                continue
            q = ", ".join(f"{n} {_ms(getattr(e, n))}" for n in ("mean", "p50", "p95", "p99"))
            out.append(f"delay {k:<12s}{q} ms ({e.frames} {unit})")
        qf = ", ".join(x.format(".4g") for x in self.queue_frames)
        if not atm:
            out.append(f"occupancy         source {self.source_frames.format('.4g')} packets; queue {qf} packets")
            return out
        qc = ", ".join(x.format(".4g") for x in self.queue_cells)
        out.append(f"occupancy         source {self.source_frames.format('.4g')} frames, "
                   f"{self.source_cells.format('.4g')} cells; queue {qf} frames, {qc} cells")
        return out


def _ms(e: Estimate) -> str:
    m = f"{1e3 * e.mean:.4g}"
    if not e.has_interval:
        return m
    hw = e.half_width if e.half_width > 1e-12 * abs(e.mean) else 0.0     # rounding noise of equal replications
    return f"{m} +/- {two_digits(1e3 * hw)}{e.clip_note('.4g', 1e3)}"


def _est(reps, get, level):     # delays and occupancies: >= 0
    return Estimate.from_samples([get(r) for r in reps], level, (0.0, None))


def _delay_estimate(reps, get, level) -> DelayEstimate:
    return DelayEstimate(*(_est(reps, lambda r, k=k: get(r)[k], level) for k in ("mean", "p50", "p95", "p99")),
                         frames=int(sum(get(r)["frames"] for r in reps)))


def delay_stats(reps: list, slot_seconds: float, level: float = 0.95) -> DelayStats:
    """Estimates over replications of the per-replication dicts of :func:`replication_delay`."""
    nport = len(reps[0]["port_queue"])
    return DelayStats(
        **{k: _delay_estimate(reps, lambda r, k=k: r[k], level) for k in COMPONENTS},
        port_queue=tuple(_delay_estimate(reps, lambda r, p=p: r["port_queue"][p], level) for p in range(nport)),
        source_frames=_est(reps, lambda r: r["source_frames"], level),
        source_cells=_est(reps, lambda r: r["source_cells"], level),
        queue_frames=tuple(_est(reps, lambda r, p=p: r["queue_frames"][p], level) for p in range(nport)),
        queue_cells=tuple(_est(reps, lambda r, p=p: r["queue_cells"][p], level) for p in range(nport)),
        slot_seconds=float(slot_seconds))
