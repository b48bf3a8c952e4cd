"""Result metrics of the ABR backbone experiments (private): the queue divergence verdict.

The slides (seed 003) call a switch queue "diverges" when it keeps growing for the whole
run instead of settling.  A finite run cannot prove unboundedness, so the verdict is a
stated rule (``docs/abr_erica.md``, "Divergence verdict"):

    fit q(t) = alpha + beta t by least squares to the queue samples of the second half of
    the run; the queue *diverges* iff beta > rel_slope x link rate (cells/s) and the queue
    at the end of the run is above the larger of ``min_queue`` cells and the mean of the
    second half -- or, when a ``ceiling`` is given (the most the queue can ever hold, e.g.
    the sum of the TCP receiver windows in cells), iff the mean of the last quarter of the
    run is above half of the ceiling: the queue is then held by the windows, not by the
    rate control, and would grow further with larger windows.

With the default ``rel_slope = 0.005`` a queue that keeps growing by 0.5 % of the link rate
(about 1,834 cells/s on 155.52 Mbps) over the second half is called divergent; a bounded
oscillation has beta near zero over a window spanning many periods.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..._validate import check_real

__all__ = ["DivergenceVerdict", "queue_divergence"]


@dataclass(frozen=True)
class DivergenceVerdict:
    """Outcome of :func:`queue_divergence`.

    Attributes
    ----------
    diverges : bool
    slope : float
        Least-squares growth rate over the second half, cells per second.
    threshold : float
        ``rel_slope`` x link rate, cells per second.
    q_end : float
        Last queue sample, cells.
    at_ceiling : bool
        True when the verdict comes from the ceiling rule.
    """

    diverges: bool
    slope: float
    threshold: float
    q_end: float
    at_ceiling: bool = False


def queue_divergence(t, q, link_cells_per_s: float, rel_slope: float = 0.005,
                     min_queue: float = 100.0, ceiling: float | None = None) -> DivergenceVerdict:
    """Decide whether a sampled queue series diverges (see the module docstring).

    Parameters
    ----------
    t : array_like(float)
        Sample times, seconds, increasing; at least 4 samples.
    q : array_like(float)
        Queue lengths in cells at those times.
    link_cells_per_s : float
        Link rate of the port, cells per second (> 0).
    rel_slope : float, optional(default=0.005)
        Threshold on the growth rate as a fraction of the link rate, in (0, 1].
    min_queue : float, optional(default=100.0)
        A queue that ends below this many cells never diverges, >= 0.
    ceiling : float or None, optional(default=None)
        Largest possible queue, cells (> 0): the sum of the receiver windows of the TCP
        connections through the port.
    """
    t = np.asarray(t, dtype=float)
    q = np.asarray(q, dtype=float)
    if t.ndim != 1 or t.shape != q.shape or t.size < 4:
        raise ValueError(f"t, q: shapes {t.shape}, {q.shape} are invalid: must be equal 1-D of length >= 4")
    if np.any(np.diff(t) <= 0):
        raise ValueError("t is invalid: must be strictly increasing")
    link = check_real("link_cells_per_s", link_cells_per_s, 0.0, low_open=True)
    rel = check_real("rel_slope", rel_slope, 0.0, 1.0, low_open=True)
    mq = check_real("min_queue", min_queue, 0.0)
    half = t[0] + 0.5 * (t[-1] - t[0])
    sel = t >= half
    if sel.sum() < 2:
        sel = np.zeros(t.size, dtype=bool)
        sel[-2:] = True
    ts, qs = t[sel], q[sel]
    tm = ts.mean()
    den = float(((ts - tm) ** 2).sum())
    slope = float(((ts - tm) * (qs - qs.mean())).sum() / den) if den > 0 else 0.0
    thr = rel * link
    q_end = float(q[-1])
    div = bool(slope > thr and q_end > max(mq, float(qs.mean())))
    at_ceiling = False
    if ceiling is not None:
        ceil = check_real("ceiling", ceiling, 0.0, low_open=True)
        last = q[t >= t[0] + 0.75 * (t[-1] - t[0])]
        if not div and last.size and float(last.mean()) > 0.5 * ceil:
            div = at_ceiling = True
    return DivergenceVerdict(div, slope, thr, q_end, at_ceiling)
