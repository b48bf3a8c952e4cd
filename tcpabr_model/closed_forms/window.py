r"""Window-to-throughput formulas (seed 002, Sections 2-3) and the CA sawtooth.

* eq. (1) of seed 002: :math:`\text{Throughput [Mbps]} = 8\times10^{-6}\,\text{CWND}_{avg}
  [\text{B}] / \text{RTT} [\text{s}]`.
* eq. (2): :math:`\text{CWND}_{avg} = \frac1T\sum_{i=1}^{T}(\text{CWND}_{max}/2 +
  \text{MSS}\cdot i)` with :math:`T` the number of RTTs from :math:`\text{CWND}_{max}/2` to
  :math:`\text{CWND}_{max}`.  The printed equation has no parentheses; we read the summand
  as :math:`\text{CWND}_{max}/2 + \text{MSS}\,i` (the only reading that is a window).  With
  one MSS per RTT, :math:`T = \text{CWND}_{max}/(2\,\text{MSS})`; with delayed ACKs the
  window grows one MSS every ``b`` RTTs and the per-RTT increment is :math:`\text{MSS}/b`,
  :math:`T = b\,\text{CWND}_{max}/(2\,\text{MSS})`.  The sympy closed form
  (:func:`derive_eq2_closed_form`) is :math:`\text{CWND}_{max}/2 + \text{MSS}(T+1)/(2b)`,
  i.e. :math:`\tfrac34\text{CWND}_{max} + \text{MSS}/(2b)`.
* congestion-avoidance sawtooth between :math:`W/2` and :math:`W` (fluid): time-average
  window :math:`\tfrac34 W`, packet-weighted average :math:`\tfrac{7}{9} W`, throughput
  :math:`\tfrac{3W}{4\,\text{RTT}}` packets per unit time.
* FIFO share rule (seed 002, Section 3): :math:`\mu_i = \mu\,x_i/x`.

**TCP at constant capacity** (Lakshman and Madhow 1997, seed 004 ref. [15], issue 25).

One connection through a bottleneck of constant rate :math:`\mu` (packets per unit time),
round-trip propagation delay :math:`T`, pipe :math:`P = \mu T` packets and a buffer of
:math:`B` packets, :math:`\beta = B / P`.  The window grows one packet per round trip; the
buffer overflows when it reaches :math:`W = P + B`.

* **Reno** (fast retransmit and recovery, one halving per loss, no timeout): the window
  saws between :math:`W/2` and :math:`W`.  Below the pipe the link idles; above it the
  queue holds :math:`w - P`.  Counting packets and time over one cycle,

  .. math:: \eta = \frac{3}{4}\,\frac{(1+\beta)^2}{1+\beta+\beta^2}, \qquad \beta < 1,

  and :math:`\eta = 1` for :math:`\beta \ge 1` (the window never drops below the pipe).
* **Slow start** (Tahoe, or a timeout): each ACK releases two packets, so in the round
  trip that doubles the window from :math:`w` to :math:`2w` (below the pipe) the queue
  grows by one packet per ACK, to :math:`w`.  Slow start up to :math:`W/2` overflows the
  buffer iff its last doubling starts above :math:`B`: :math:`W/4 > B`, i.e.
  :math:`\beta < 1/3` (:func:`slow_start_overflows`).

**[choice]** A window cap :math:`w_{max} < W` (the simulator's ``wmax``) means no loss at
all: the window stays at :math:`w_{max}` and :math:`\eta = \min(w_{max}/P, 1)`.  The
formulas are fluid: the integer window and the packet in service shift the loss point by
about one packet.
"""

from __future__ import annotations

import functools

import numpy as np

from .._validate import as_float_array, check_choice, check_int, check_real

__all__ = [
    "throughput_from_window",
    "derive_eq2_closed_form",
    "average_window_linear",
    "average_window_linear_sum",
    "sawtooth_average_window",
    "sawtooth_throughput",
    "fifo_share",
    "reno_efficiency",
    "slow_start_overflows",
    "slow_start_peak_queue",
    "SLOW_START_LOSS_BETA",
]


def throughput_from_window(cwnd_avg_bytes, rtt_s, *, cap_mbps=None):
    """Seed 002 eq. (1): throughput in Mbps from the average window (bytes) and RTT (s).

    Vectorised over numpy arrays.  ``cap_mbps`` optionally clips at the TCP-layer maximum
    of the link (e.g. :func:`~tcpabr_model.closed_forms.tcp_max_throughput`); eq. (1) itself is
    unbounded (the paper's 600000-byte case gives 160 Mbps from eq. 1 but is reported as the
    126 Mbps maximum).
    """
    w = as_float_array("cwnd_avg_bytes", cwnd_avg_bytes)
    r = as_float_array("rtt_s", rtt_s)
    if np.any(~np.isfinite(w)) or np.any(w < 0):
        raise ValueError(f"cwnd_avg_bytes={cwnd_avg_bytes!r} is invalid: must be finite and >= 0")
    if np.any(~np.isfinite(r)) or np.any(r <= 0):
        raise ValueError(f"rtt_s={rtt_s!r} is invalid: must be finite and > 0")
    with np.errstate(over="ignore"):
        thr = 8e-6 * w / r
    if np.any(~np.isfinite(thr)):
        raise ValueError(f"cwnd_avg_bytes={cwnd_avg_bytes!r} over rtt_s={rtt_s!r} is invalid: the throughput "
                         "overflows a float (above 1.8e308 Mbps)")
    if cap_mbps is not None:
        cap = check_real("cap_mbps", cap_mbps, 0.0, low_open=True)
        thr = np.minimum(thr, cap)
    return float(thr) if thr.ndim == 0 else thr


@functools.lru_cache(maxsize=1)
def derive_eq2_closed_form():
    """Closed form of the sum in seed 002 eq. (2), derived with sympy.

    Returns
    -------
    dict
        ``"sum"``: :math:`\\frac1T\\sum_{i=1}^T (W/2 + (\\text{MSS}/b) i)` in closed form (symbols
        ``W, MSS, T, b``); ``"avg"``: the same with :math:`T = bW/(2\\,\\text{MSS})`
        substituted and simplified; ``"symbols"``.
    """
    import sympy as sy

    W, mss, T, b = sy.symbols("W MSS T b", positive=True)
    i = sy.symbols("i", integer=True, positive=True)
    s = sy.simplify(sy.summation(W / 2 + (mss / b) * i, (i, 1, T)) / T)
    avg = sy.simplify(sy.expand(s.subs(T, b * W / (2 * mss))))
    return {"sum": s, "avg": avg, "symbols": {"W": W, "MSS": mss, "T": T, "b": b}}


#: relative slack on T <= b cwnd_max / (2 mss) (T computed in floating point)
_T_SLACK = 1e-9


def _eq2_args(cwnd_max, mss, acks_per_increment):
    """Checked ``(W, mss, b)`` of eq. (2): the window must grow at least one step of
    ``mss/b`` from ``W/2`` to ``W`` (``T = b*W/(2*mss) >= 1``, i.e.
    ``cwnd_max >= 2*mss/b``); below that the sum has no term and the formula's average
    exceeds ``cwnd_max``."""
    W = check_real("cwnd_max", cwnd_max, 0.0, low_open=True)
    m = check_real("mss", mss, 0.0, low_open=True)
    b = check_real("acks_per_increment", acks_per_increment, 1.0)
    if 2.0 * m / b > W * (1.0 + _T_SLACK):
        raise ValueError(f"cwnd_max/mss={W!r}/{m!r} is invalid: eq. 2 needs cwnd_max >= 2*mss/acks_per_increment "
                         f"= {2.0 * m / b:.10g} (at least one round trip from cwnd_max/2 to cwnd_max)")
    return W, m, b


def average_window_linear_sum(cwnd_max, mss, T, *, acks_per_increment=1):
    """Eq. (2) for a given number of RTTs ``T``: ``cwnd_max/2 + mss*(T+1)/(2b)`` (closed form).

    Units follow ``cwnd_max`` and ``mss`` (bytes or segments).  ``T`` is in
    ``[1, b*cwnd_max/(2*mss)]``: the last window of the sum, ``cwnd_max/2 + mss*T/b``, is
    at most ``cwnd_max`` (so ``cwnd_max >= 2*mss/b``).
    """
    W, m, b = _eq2_args(cwnd_max, mss, acks_per_increment)
    t_max = b * W / (2.0 * m)
    T = check_real("T", T, 1.0)
    if T > t_max * (1.0 + _T_SLACK):
        raise ValueError(f"T={T!r} is invalid: must be in [1, {t_max:.10g}] (acks_per_increment*cwnd_max/(2*mss), "
                         "the round trips from cwnd_max/2 to cwnd_max)")
    return W / 2 + m * (T + 1) / (2 * b)


def average_window_linear(cwnd_max, mss, *, acks_per_increment=1):
    """Eq. (2) with :math:`T = b\\,\\text{CWND}_{max}/(2\\,\\text{MSS})`: ``0.75*cwnd_max + mss/(2b)``.

    Parameters
    ----------
    cwnd_max : float > 0
        Window at which the (single) loss occurs, bytes (or segments with ``mss=1``).
    mss : float > 0
        Segment size, same unit.
    acks_per_increment : float >= 1, optional(default=1)
        ``b``: RTTs per one-MSS increase (2 with delayed ACKs, seed 002 after eq. 2).

    Raises
    ------
    ValueError
        ``cwnd_max < 2*mss/b`` (:math:`T < 1`: no round trip of linear increase; the
        formula would exceed ``cwnd_max``), or a parameter out of its range.
    """
    W, m, b = _eq2_args(cwnd_max, mss, acks_per_increment)
    return 0.75 * W + m / (2 * b)


def sawtooth_average_window(w_max, *, weighting="time"):
    """Average window of the fluid congestion-avoidance sawtooth between ``w_max/2`` and ``w_max``.

    ``weighting="time"``: :math:`\\tfrac34 W` (what a time-average of cwnd gives);
    ``"packet"``: :math:`\\int w^2/\\int w = \\tfrac79 W` (the window seen by an average packet).
    """
    W = check_real("w_max", w_max, 0.0, low_open=True)
    check_choice("weighting", weighting, ("time", "packet"))
    return 0.75 * W if weighting == "time" else 7.0 * W / 9.0


def sawtooth_throughput(w_max, rtt):
    """Throughput of the sawtooth (packets per time unit): :math:`\\tfrac34 W/\\text{RTT}`.

    Valid while the window never exceeds the pipe (no queueing: RTT constant).
    """
    W = check_real("w_max", w_max, 0.0, low_open=True)
    r = check_real("rtt", rtt, 0.0, low_open=True)
    return 0.75 * W / r


def fifo_share(mu, occupancy):
    """FIFO rule (seed 002, Section 3): :math:`\\mu_i = \\mu\\,x_i / \\sum_j x_j`.

    Parameters
    ----------
    mu : float >= 0
        Total output rate of the FIFO buffer.
    occupancy : array_like(float, ndim=1)
        Mean buffer occupancy :math:`x_i` of each flow (or its threshold :math:`r_i`,
        giving the expected rate :math:`\\mu_i^e = \\mu r_i / \\sum r`).
    """
    m = check_real("mu", mu, 0.0)
    x = as_float_array("occupancy", occupancy)
    if x.ndim != 1 or x.size == 0 or np.any(~np.isfinite(x)) or np.any(x < 0) or x.sum() <= 0:
        raise ValueError(f"occupancy={occupancy!r} is invalid: must be a 1-D array of x_i >= 0 with a positive sum")
    return m * x / x.sum()


#: the buffer / pipe ratio below which slow start up to ssthresh = (P + B) / 2 overflows the buffer
SLOW_START_LOSS_BETA = 1.0 / 3.0


def reno_efficiency(pipe: float, buffer: float, wmax: float | None = None) -> float:
    """Long-run throughput / capacity of Reno at constant capacity (Lakshman-Madhow).

    Parameters
    ----------
    pipe : float
        Bandwidth-delay product :math:`\\mu T`, packets (> 0).
    buffer : float
        Bottleneck buffer :math:`B`, packets (>= 0).
    wmax : float, optional
        Window cap, packets; a cap below :math:`P + B` avoids every loss.

    Raises
    ------
    ValueError
        A parameter out of its range (named).
    """
    p = check_real("pipe", pipe, 0.0, low_open=True)
    b = check_real("buffer", buffer, 0.0)
    if wmax is not None:
        w = check_real("wmax", wmax, 0.0, low_open=True)
        if w < p + b:
            return min(w / p, 1.0)
    beta = b / p
    if beta >= 1.0:
        return 1.0
    return 0.75 * (1.0 + beta) ** 2 / (1.0 + beta + beta * beta)


def slow_start_overflows(pipe: float, buffer: float) -> bool:
    """Whether slow start up to ssthresh = (P + B) / 2 overflows the buffer: B < P / 3."""
    p = check_real("pipe", pipe, 0.0, low_open=True)
    b = check_real("buffer", buffer, 0.0)
    return b < SLOW_START_LOSS_BETA * p


def slow_start_peak_queue(pipe: int, buffer: int) -> int:
    """Peak bottleneck occupancy (packets, the one in service included) of slow start from 1
    to ssthresh = floor((P + B + 1) / 2), with integer windows (issue 25).

    The window at a congestion-avoidance loss is P + B + 1 (pipe, buffer, the packet
    dropped).  Each round trip doubles the window, w -> min(2 w, ssthresh); its ACKs come
    one per service time and each releases two segments, so the queue grows by one per ACK:
    min(2 w, ssthresh) - w + 1 at the end of the round.  Slow start overflows the buffer
    iff this exceeds ``buffer``.  The fluid rule (:func:`slow_start_overflows`, B < P / 3)
    assumes the last round doubles from ssthresh / 2; with integer windows it starts at the
    largest power of two below ssthresh, so the loss point moves between about 0.22 P and
    0.36 P with P (P = 40: B = 10; P = 48: 17; P = 80: 18; P = 96: 33).
    """
    p = check_int("pipe", pipe, 1)
    b = check_int("buffer", buffer, 0)
    ss = (p + b + 1) // 2
    w, peak = 1, 0
    while w < ss:
        nxt = min(2 * w, ss)
        peak = max(peak, nxt - w + 1)
        w = nxt
    return peak
