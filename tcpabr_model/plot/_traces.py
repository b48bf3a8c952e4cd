"""Window, queue and source-rate traces of one simulated replication."""

from __future__ import annotations

import numpy as np

__all__ = ["plot_traces"]


def plot_traces(trace, *, connection: int | None = None, cells_per_frame: int | None = None,
                t_start: float | None = None, t_end: float | None = None, rate_ratio: float = 0.5, fig=None,
                title: str | None = None):
    """Three stacked panels from ``simulate(..., trace=True).trace``.

    Top: congestion window and slow-start threshold (packets) of each connection; middle:
    bottleneck queue (cells over ATM, packets for TCP alone; in packets when
    ``cells_per_frame`` is given) and the source's segmentation buffer; bottom: each ABR
    source's allowed rate and the available capacity (fractions of the high rate).

    Parameters
    ----------
    trace : tcpabr_model.sim.Trace
        Series sampled every measurement interval s (first replication).
    connection : int, optional
        Only this connection (0-based); all when omitted.
    cells_per_frame : int, optional
        Divide cell counts by it to show packets (``Scenario.cells_per_frame``; 12 by
        default with 500-byte segments).
    t_start, t_end : float, optional
        Time window in seconds.
    rate_ratio : float, optional(default=0.5)
        Low capacity / high capacity of the scenario (the trace records only the state).
    fig : matplotlib.figure.Figure, optional
        Drawn into (three axes are added); a new figure when omitted.
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure
        With ``fig.axes`` = [window, queue, rate] sharing the time axis.
    """
    t = np.asarray(trace.time, dtype=float)
    if t.ndim != 1 or t.size == 0:
        raise ValueError("trace is invalid: empty time series (simulate with trace=True)")
    cwnd = np.asarray(trace.cwnd, dtype=float).reshape(t.size, -1)
    ssth = np.asarray(trace.ssthresh, dtype=float).reshape(t.size, -1)
    rate = np.asarray(trace.source_rate, dtype=float).reshape(t.size, -1)
    seg = np.asarray(trace.segmentation_cells, dtype=float).reshape(t.size, -1)
    nconn = cwnd.shape[1]
    if connection is not None and not (isinstance(connection, (int, np.integer)) and 0 <= connection < nconn):
        raise ValueError(f"connection={connection!r} is invalid: must be an integer in [0, {nconn - 1}]")
    if cells_per_frame is not None and not (isinstance(cells_per_frame, (int, np.integer)) and cells_per_frame >= 1):
        raise ValueError(f"cells_per_frame={cells_per_frame!r} is invalid: must be an integer >= 1")
    conns = range(nconn) if connection is None else [connection]
    sel = np.ones(t.size, dtype=bool)
    if t_start is not None:
        sel &= t >= t_start
    if t_end is not None:
        sel &= t <= t_end
    if t_start is not None and t_end is not None and t_end <= t_start:
        raise ValueError(f"t_end={t_end!r} is invalid: must be > t_start={t_start!r}")
    div = float(cells_per_frame) if cells_per_frame else 1.0
    qunit = "packets" if cells_per_frame else "cells (packets for TCP alone)"
    cap = np.asarray(trace.capacity, dtype=float)
    if fig is None:
        import matplotlib.pyplot as plt

        fig = plt.figure(figsize=(8, 7))
    ax_w = fig.add_subplot(3, 1, 1)
    ax_q = fig.add_subplot(3, 1, 2, sharex=ax_w)
    ax_r = fig.add_subplot(3, 1, 3, sharex=ax_w)
    for c in conns:
        ax_w.step(t[sel], cwnd[sel, c], where="post", color=f"C{c}", label=f"cwnd, connection {c + 1}")
        ax_w.step(t[sel], ssth[sel, c], where="post", color=f"C{c}", ls="--", lw=0.8,
                  label=f"ssthresh, connection {c + 1}")
    ax_w.set_ylabel("window (packets)")
    ax_q.step(t[sel], np.asarray(trace.queue, dtype=float)[sel] / div, where="post", color="k",
              label="bottleneck queue")
    for c in conns:
        if np.any(seg[sel, c] > 0):
            ax_q.step(t[sel], seg[sel, c] / div, where="post", color=f"C{c}", lw=0.8,
                      label=f"segmentation buffer, connection {c + 1}")
    ax_q.set_ylabel(f"queue ({qunit})")
    ax_r.step(t[sel], np.where(cap[sel] == 0, 1.0, rate_ratio), where="post", color="0.5", lw=2, alpha=0.5,
              label=f"available capacity (high 1, low {rate_ratio:g})")
    for c in conns:
        ax_r.step(t[sel], rate[sel, c], where="post", color=f"C{c}", label=f"ABR allowed rate, connection {c + 1}")
    ax_r.set_ylabel("rate (fraction of the high rate)")
    ax_r.set_xlabel("time (s)")
    for a in (ax_w, ax_q, ax_r):
        a.grid(True, alpha=0.3)
        a.legend(fontsize=7, loc="upper right")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig
