"""What a link serves *inside* one epoch: the delivery opportunities of a measured trace,
per level of a fitted chain (issue 23 item 1a).

A chain fitted epoch by epoch (:func:`~._fit.fit_trace`) keeps the number of
opportunities of each epoch and forgets where in the epoch they fall.  A cellular link
delivers in bursts with gaps shorter than an epoch, and a small buffer overflows in the
bursts and idles in the gaps (``docs/traces.md`` sec. 7: spreading each epoch's
opportunities evenly raises TCP's efficiency by 31-67 % with 0.5 BDP buffers).
:class:`ServicePatterns` keeps, for each level ``k`` of the chain, a few epochs of the
trace that the fit put at that level, as they are: their opportunity times inside the
epoch.  The Markov renewal engine (``docs/model.md`` sec. 11) draws one of them, with its
weight, for every interval spent at level ``k``, independently of everything else given
the level.

Choices (**[choice]**, flagged in ``docs/model.md`` sec. 11):

* the patterns of a level are ``per_level`` representatives of its epochs, the epochs at
  the quantiles ``(i + 1/2) / per_level`` of the level's epochs sorted by their count and
  then by the mean time of their opportunities (so the spread of counts within the level
  is kept, each representative with weight ``1 / per_level``); a level with fewer epochs
  keeps all of them, equally weighted;
* an epoch holds the opportunities in ``((k - 1) e, k e]`` (Mahimahi times are integer
  milliseconds; a time ``t`` lies at offset ``t - (k - 1) e`` in ``(0, e]``), as
  :func:`~._trace.bin_trace` counts them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._validate import check_int, check_real
from ._trace import Trace, bin_trace

__all__ = ["ServicePatterns", "fit_patterns", "epoch_labels", "service_instants"]

#: A measured trace's time resolution, seconds (Mahimahi: whole milliseconds; the simulator
#: serves each 1-ms bin at a constant rate, ``sim.capacity.TRACE_BIN_SECONDS``).
TRACE_RESOLUTION = 1e-3


@dataclass(frozen=True, eq=False)
class ServicePatterns:
    """Opportunity times inside one epoch, a few weighted patterns per capacity level.

    Attributes
    ----------
    epoch : float
        Epoch length, seconds (the chain's epoch).
    offsets : tuple of tuple of ndarray
        ``offsets[k][j]``: the opportunity times of pattern ``j`` of level ``k``, seconds
        in ``(0, epoch]``, sorted (one packet per opportunity).  A pattern may be empty (an
        epoch that serves nothing).
    weights : tuple of ndarray
        ``weights[k][j]``: probability of pattern ``j`` in an epoch at level ``k`` (each
        row sums to 1).
    """

    epoch: float
    offsets: tuple
    weights: tuple

    def __post_init__(self):
        check_real("epoch", self.epoch, 0.0, low_open=True)
        if len(self.offsets) != len(self.weights) or not self.offsets:
            raise ValueError(f"offsets/weights are invalid: {len(self.offsets)} and {len(self.weights)} levels; "
                             "need the same number >= 1")
        offs, ws = [], []
        for k, (ok, wk) in enumerate(zip(self.offsets, self.weights)):
            wk = np.asarray(wk, dtype=float)
            if len(ok) != wk.size or wk.size == 0 or np.any(wk < 0) or abs(wk.sum() - 1.0) > 1e-9:
                raise ValueError(f"weights[{k}]={wk.tolist()!r} is invalid: needs one non-negative weight per "
                                 "pattern, summing to 1")
            row = []
            for j, o in enumerate(ok):
                o = np.sort(np.asarray(o, dtype=float))
                if o.size and (o[0] <= 0.0 or o[-1] > self.epoch * (1 + 1e-12)):
                    raise ValueError(f"offsets[{k}][{j}] is invalid: opportunity times must lie in (0, epoch="
                                     f"{self.epoch:g}] s")
                o.setflags(write=False)
                row.append(o)
            wk.setflags(write=False)
            offs.append(tuple(row))
            ws.append(wk)
        object.__setattr__(self, "offsets", tuple(offs))
        object.__setattr__(self, "weights", tuple(ws))

    @property
    def n_levels(self) -> int:
        return len(self.offsets)

    @property
    def mean_counts(self) -> np.ndarray:
        """Expected opportunities per epoch at each level (packets per epoch)."""
        return np.array([sum(w * o.size for w, o in zip(wk, ok)) for ok, wk in zip(self.offsets, self.weights)])

    @property
    def mean_rates(self) -> np.ndarray:
        """Expected capacity at each level, packets per second."""
        return self.mean_counts / self.epoch

    def to_dict(self) -> dict:
        return {"epoch": self.epoch, "offsets": [[o.tolist() for o in ok] for ok in self.offsets],
                "weights": [w.tolist() for w in self.weights]}


def service_instants(offsets, resolution: float = TRACE_RESOLUTION) -> np.ndarray:
    """The instants at which a replay serves the opportunities ``offsets`` (seconds, sorted):
    the ``n`` opportunities that share one time ``t`` are served one after another through
    the ``resolution`` before it, at ``t0 + (i + 1) (t - t0) / n``, ``i = 0..n - 1``, with
    ``t0 = max(t - resolution, previous distinct time, 0)``; a lone opportunity keeps its time.

    Why (docs/model.md sec. 11): a Mahimahi trace has whole milliseconds, and several
    opportunities in one millisecond are a *rate* in that millisecond, not one instant.  The
    simulator serves each 1-ms bin ``(t - 1, t]`` ms at the constant rate of its opportunities
    (``sim.capacity.trace_path_slots``), so a packet that arrives inside the bin is served in
    it while room remains; read as ``n`` services at the one instant ``t``, a burst of ``n``
    ACK-clocked arrivals at ``t`` would miss them all (departures before arrivals) and wait for
    the next busy millisecond.  For whole-millisecond times this is the bin ``(t - 1, t]``
    exactly.  Unchanged for traces with at most one opportunity per time."""
    o = np.asarray(offsets, dtype=float)
    if o.size < 2:
        return o.copy()
    resolution = check_real("resolution", resolution, 0.0, low_open=True)
    if np.any(np.diff(o) < 0):
        raise ValueError("offsets are invalid: must be sorted (non-decreasing)")
    out = o.copy()
    brk = np.flatnonzero(np.diff(o) > 0) + 1
    starts = np.concatenate([[0], brk])
    ends = np.concatenate([brk, [o.size]])
    for a, b in zip(starts, ends):
        n = b - a
        if n == 1:
            continue
        t = o[a]
        t0 = max(t - resolution, o[a - 1] if a > 0 else 0.0, 0.0)
        out[a:b] = t0 + (np.arange(1, n + 1) / n) * (t - t0)
    return out


def epoch_labels(trace: Trace, epoch: float, levels) -> np.ndarray:
    """The level of each whole epoch of ``trace``: the nearest of ``levels`` (packets per
    second) to the epoch's rate, with the outage rule of :func:`~._fit.fit_levels`: when the
    lowest level is 0, it holds the empty epochs and only them.  For the epochs a chain was
    fitted to, these are the fit's own labels (k-means assigns each epoch to the nearest
    centre, and the levels are the centres)."""
    lev = np.asarray(levels, dtype=float)
    rates = bin_trace(trace, epoch).rates
    if lev.min() == 0.0 and lev.size > 1:
        nz = np.nonzero(lev > 0.0)[0]
        lab = nz[np.abs(rates[:, None] - lev[None, nz]).argmin(axis=1)]
        lab[rates == 0.0] = int(lev.argmin())
        return lab
    return np.abs(rates[:, None] - lev[None, :]).argmin(axis=1)


def fit_patterns(trace: Trace, epoch: float, labels, per_level: int = 8) -> ServicePatterns:
    """Weighted within-epoch patterns per level from ``trace`` binned at ``epoch`` s.

    ``labels[i]`` is the level of whole epoch ``i`` (e.g. :func:`epoch_labels` with the
    levels of a fitted chain); ``per_level`` representatives per level (module docstring).
    A level no epoch was given gets one empty pattern (it is never visited by the fitted
    chain's data; the engine still needs a service law for it).
    """
    if not isinstance(trace, Trace):
        raise ValueError(f"trace={trace!r} is invalid: must be a Trace")
    epoch = check_real("epoch", epoch, 0.0, low_open=True)
    per_level = check_int("per_level", per_level, 1, 10_000)
    lab = np.asarray(labels, dtype=np.int64)
    nep = bin_trace(trace, epoch).n_epochs
    if lab.shape != (nep,):
        raise ValueError(f"labels has shape {lab.shape}: must give one level per whole epoch ({nep})")
    e_ms = epoch * 1000.0
    T = trace.period_ms
    u = (trace.times_ms - 1) % T + 1                               # (0, T], as bin_trace
    idx = np.ceil(u / e_ms * (1.0 - 1e-12)).astype(np.int64) - 1
    keep = idx < nep
    u, idx = u[keep], idx[keep]
    order = np.argsort(idx, kind="stable")
    u, idx = u[order], idx[order]
    starts = np.searchsorted(idx, np.arange(nep + 1))
    nlev = int(lab.max()) + 1 if lab.size else 1
    offsets, weights = [], []
    for k in range(nlev):
        eps = np.nonzero(lab == k)[0]
        if eps.size == 0:
            offsets.append((np.zeros(0),))
            weights.append(np.ones(1))
            continue
        pats = [(u[starts[i]:starts[i + 1]] - i * e_ms) / 1000.0 for i in eps]
        key = sorted(range(eps.size), key=lambda j: (pats[j].size, float(pats[j].mean()) if pats[j].size else 0.0))
        if eps.size <= per_level:
            chosen = key
        else:
            chosen = [key[int(math.floor((i + 0.5) * eps.size / per_level))] for i in range(per_level)]
        offsets.append(tuple(np.clip(pats[j], 1e-9, epoch) for j in chosen))
        weights.append(np.full(len(chosen), 1.0 / len(chosen)))
    return ServicePatterns(epoch=epoch, offsets=tuple(offsets), weights=tuple(weights))
