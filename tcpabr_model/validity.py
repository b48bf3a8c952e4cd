"""Where the Markov renewal analysis holds: its bounds against the cell-level simulator.

The analysis of Section III of seed 004 (:mod:`tcpabr_model.markov`) gives a pair of
bounds, ``[conservative, optimistic]``, on the efficiency of one TCP connection over
INSTCAP ABR or alone.  It rests on idealisations (Section III-A/B): the rate changes only
at multiples of Delta (III-B.1), packets leave the ABR source back-to-back, no loss in
slow start (III-B.3), recovery starts exactly three round trips after a loss from the
state (0, 0, m) (III-B.4, eq. 13).  This module measures where those idealisations cost
accuracy: over a grid of (psi, B_max, Delta, W_max) it runs the analysis and the cell
simulator (:mod:`tcpabr_model.sim`) in two capacity modes,

``embedded`` (like with like)
    the capacity changes only at multiples of Delta (switch probability 1/psi per epoch,
    the analysis' rate chain), and INSTCAP measures the capacity over the last Delta and
    applies it at once, so the source rate in ``[k Delta, (k+1) Delta)`` is the link rate
    of the previous period (``S_t = R_{t - Delta}``, assumption III-A.8);
``continuous`` (the system)
    exponential sojourns of mean ``tau = psi Delta``, INSTCAP measured every
    s = 30 ms (6 time units) and fed back after Delta (the paper's testbed, Section V);

and reports the signed relative gap of the simulation outside the band (:func:`relative_gap`).

Units.  Efficiency = throughput / mean capacity, TCP/IP headers counted as throughput and
no ATM cell tax: the simulator's ``efficiency_wire`` (delivered frames counted as their
wire bytes), which is what the analysis computes in packets.  Delta and W_max are in
packets (time units of one packet at the high rate), psi = tau / Delta.

See ``docs/validity.md`` for the measured map and which assumption fails where.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from ._validate import check_choice, check_int, check_real
# the ca_increment axis (docs/model.md sec. 18; default the paper's coins); numpy and the validators only
from .markov.scenario import ACK_CLOCKS, CA_INCREMENTS, ROUND_TRIPS
from .markov.switching import SWITCH_TIMES  # the switch_time axis (docs/model.md sec. 17); numpy only

__all__ = [
    "MODES",
    "FEEDBACKS",
    "DEFAULT_GRID",
    "QUICK_GRID",
    "FIG89_GRID",
    "TCPS",
    "embedded_sim_scenario",
    "continuous_sim_scenario",
    "sim_scenario",
    "relative_gap",
    "point_gap",
    "add_gap_columns",
    "validity_point",
    "validity_grid",
    "validity_map",
]

MODES = ("embedded", "continuous")
FEEDBACKS = ("instcap", "effcap", "none")

#: Full map: 8 psi x 3 buffers x 3 delays x 2 windows x 2 feedbacks x 2 modes = 576 points.
DEFAULT_GRID: dict = {
    "psi": [1.5, 2.0, 3.0, 5.0, 10.0, 20.0, 50.0, 100.0],
    "bmax": [5, 10, 20],
    "delta": [20.0, 40.0, 80.0],
    "wmax": [48, 128],
    "feedback": ["instcap", "none"],
    "mode": ["embedded", "continuous"],
}
#: Quick map (CI size): 4 psi x 2 buffers x 1 delay x 2 windows x 2 feedbacks x 2 modes = 64 points.
QUICK_GRID: dict = {
    "psi": [2.0, 5.0, 20.0, 100.0],
    "bmax": [10, 20],
    "delta": [40.0],
    "wmax": [48, 128],
    "feedback": ["instcap", "none"],
    "mode": ["embedded", "continuous"],
}
#: The paper's Fig. 8 / Fig. 9 grid (psi 1.5-1000, B_max 10 and 12, Delta 40, W_max 128, like with like):
#: 44 points per TCP; the grid of issue 25's target for ``tcp='sack'``.
FIG89_GRID: dict = {
    "psi": [1.5, 2.0, 3.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0],
    "bmax": [10, 12],
    "delta": [40.0],
    "wmax": [128],
    "feedback": ["instcap", "none"],
    "mode": ["embedded"],
}
#: Simulation size per point: (replications, time units per replication).
FULL_SIM = (6, 200_000.0)
QUICK_SIM = (4, 100_000.0)

_AXES = ("psi", "bmax", "delta", "wmax", "feedback", "mode", "rate_ratio", "tcp", "loss_cycle", "switch_time",
         "ca_increment", "ack_clock", "round_trip", "effcap_m", "effcap_n")
#: the TCPs both the analysis and the simulator model (``tcp`` axis; default the paper's)
TCPS = ("timeout-only", "sack")
#: the analysis' timeout cycles (``loss_cycle`` axis; default the paper's III-B.4, docs/model.md secs. 14-15)
LOSS_CYCLES = ("paper", "drain", "timer")

# the paper's testbed (Section V): measurement/feedback interval s = 30 ms = 6 time units
TESTBED_INTERVAL_UNITS = 6.0


def _interval_override(feedback: str, kwargs: dict, default: float) -> float:
    """``interval`` (seconds) may be overridden only for TCP alone, where it is only a trace clock."""
    if "interval" not in kwargs:
        return default
    v = kwargs.pop("interval")
    if feedback != "none":
        raise ValueError(f"interval={v!r} is invalid here: the measurement interval is fixed by the mode "
                         "for ABR feedback (only TCP alone, feedback='none', accepts it as a trace clock)")
    return v


def embedded_sim_scenario(delta: float = 40.0, bmax: int = 10, psi: float = 20.0, wmax: int = 128,
                          feedback: str = "instcap", *, rate_ratio: float = 0.5,
                          source_rate: float | None = None, **kwargs):
    """The cell-simulator scenario that compares like with like with the analysis.

    Capacity changes only at multiples of Delta (``capacity_mode='embedded'``, switch
    probability 1/psi per epoch, assumption III-B.1); INSTCAP measures the available
    capacity over the last Delta (``interval`` = Delta) and the source applies it at once
    (``feedback_delay=0``), so ``S_t = R_{t - Delta}`` (III-A.8).  For TCP alone the
    pipe holds Delta IP packets in every mode (one time unit, :mod:`tcpabr_model.units`).

    Parameters
    ----------
    delta : float
        Round-trip propagation delay, packets (time units of one packet at the high rate).
    bmax : int
        Bottleneck buffer, packets including the one in service.
    psi : float
        tau / Delta, >= 1.
    wmax : int
        Maximum TCP window, packets.
    feedback : {'instcap', 'effcap', 'none', 'constant'}
        'effcap': EFFCAP measured every Delta, its ``effcap_m`` and ``effcap_n`` (in ``kwargs``;
        default 1 and 8) the simulator's ``m`` and ``n``, as the analysis has them (docs/model.md sec. 20).
    rate_ratio : float
        Low rate / high rate.
    source_rate : float, optional
        With ``feedback='constant'``: the fixed ABR rate (fraction of the high rate).
    **kwargs
        Other :meth:`tcpabr_model.sim.Scenario.from_normalized` arguments (e.g.
        ``duration_units``).

    Returns
    -------
    tcpabr_model.sim.Scenario
    """
    from .sim import Scenario

    check_choice("feedback", feedback, ("instcap", "effcap", "none", "constant"))
    delta = check_real("delta", delta, 1.0, 1e5)
    psi = check_real("psi", psi, 1.0)
    unit = kwargs.get("payload_bytes", 500) / kwargs.get("high_rate", 100e3)
    extra = {"initial_rate": source_rate} if source_rate is not None else {}
    extra.update(_effcap_samples(feedback, kwargs, 1.0))
    interval = _interval_override(feedback, kwargs, delta * unit)
    return Scenario.from_normalized(delta=delta, bmax=bmax, psi=psi, rate_ratio=rate_ratio, wmax=wmax,
                                    feedback=feedback, capacity_mode="embedded", interval=interval,
                                    feedback_delay=0.0, **extra, **kwargs)


def _effcap_samples(feedback: str, kwargs: dict, per_delta: float) -> dict:
    """The simulator's ``m``, ``n`` for the analysis' EFFCAP(``effcap_m``, ``effcap_n``) (popped from
    ``kwargs``; default 1 and 8, :class:`~tcpabr_model.markov.Scenario`'s), whose sample is one round trip
    (docs/model.md sec. 20), with ``per_delta`` samples per round trip: averages as long
    (``round(M per_delta)`` samples) over the same span (``round((N - 1) per_delta) + 1`` of them)
    **[choice]**; ``{}`` for other feedbacks, which refuse the two."""
    m, n = kwargs.pop("effcap_m", None), kwargs.pop("effcap_n", None)
    if feedback != "effcap":
        for name, v in (("effcap_m", m), ("effcap_n", n)):
            if v is not None:
                raise ValueError(f"{name}={v!r} is invalid with feedback={feedback!r}: it is EFFCAP's")
        return {}
    m = 1 if m is None else check_int("effcap_m", m, 1, 10_000)
    n = 8 if n is None else check_int("effcap_n", n, 1, 10_000)
    return {"m": max(1, round(m * per_delta)), "n": round((n - 1) * per_delta) + 1}


def continuous_sim_scenario(delta: float = 40.0, bmax: int = 10, psi: float = 20.0, wmax: int = 128,
                            feedback: str = "instcap", *, rate_ratio: float = 0.5, **kwargs):
    """The simulated system of Section V at the analysis' operating point.

    Exponential capacity sojourns of mean ``tau = psi Delta``; INSTCAP measured every
    s = 30 ms (6 time units) and fed back after one round-trip delay (the paper's testbed).
    Parameters as :func:`embedded_sim_scenario`.
    """
    from .sim import Scenario

    check_choice("feedback", feedback, ("instcap", "effcap", "none"))
    delta = check_real("delta", delta, 1.0, 1e5)
    unit = kwargs.get("payload_bytes", 500) / kwargs.get("high_rate", 100e3)
    extra = _effcap_samples(feedback, kwargs, delta / TESTBED_INTERVAL_UNITS)
    interval = _interval_override(feedback, kwargs, TESTBED_INTERVAL_UNITS * unit)
    return Scenario.from_normalized(delta=delta, bmax=bmax, psi=psi, rate_ratio=rate_ratio, wmax=wmax,
                                    feedback=feedback, capacity_mode="continuous", interval=interval, **extra,
                                    **kwargs)


def sim_scenario(mode: str, **params):
    """:func:`embedded_sim_scenario` or :func:`continuous_sim_scenario` by ``mode``."""
    check_choice("mode", mode, MODES)
    return (embedded_sim_scenario if mode == "embedded" else continuous_sim_scenario)(**params)


# ------------------------------------------------------------------------------ the gap
def point_gap(sim, conservative, optimistic):
    """Signed relative distance of a point estimate outside ``[conservative, optimistic]``.

    ``(sim - clip(sim, conservative, optimistic)) / mid`` with ``mid`` the band's midpoint
    ``(conservative + optimistic) / 2``: 0 inside the band, negative below the
    conservative bound, positive above the optimistic one.  Works element-wise on arrays.
    """
    sim, lo_b, hi_b = (np.asarray(x, dtype=float) for x in (sim, conservative, optimistic))
    if np.any(lo_b > hi_b):
        raise ValueError("conservative > optimistic is invalid: the band must satisfy conservative <= optimistic")
    mid = 0.5 * (lo_b + hi_b)
    out = (sim - np.clip(sim, lo_b, hi_b)) / mid
    return float(out) if out.ndim == 0 else out


def relative_gap(sim_low, sim_high, conservative, optimistic):
    """Signed relative gap of a simulated confidence interval outside the analysis band.

    The distance from the band ``[conservative, optimistic]`` to the *nearest* end of the
    simulation's confidence interval ``[sim_low, sim_high]``, divided by the band's
    midpoint:

    * ``(sim_high - conservative) / mid < 0`` when the whole interval lies below the band;
    * ``(sim_low - optimistic) / mid > 0`` when it lies above;
    * 0 when the interval and the band overlap (the simulation is consistent with the
      analysis at the interval's level).

    So a nonzero gap is significant at the interval's level, and its size is a lower bound
    on how far the system is from the analysis.  NaN half-widths (one replication) should
    be passed as ``sim_low = sim_high = mean``.  Element-wise on arrays.
    """
    lo, hi, cb, ob = (np.asarray(x, dtype=float) for x in (sim_low, sim_high, conservative, optimistic))
    if np.any(lo > hi):
        raise ValueError("sim_low > sim_high is invalid: the interval must satisfy sim_low <= sim_high")
    if np.any(cb > ob):
        raise ValueError("conservative > optimistic is invalid: the band must satisfy conservative <= optimistic")
    mid = 0.5 * (cb + ob)
    out = np.where(hi < cb, (hi - cb) / mid, np.where(lo > ob, (lo - ob) / mid, 0.0))
    return float(out) if out.ndim == 0 else out


def add_gap_columns(df: pd.DataFrame) -> pd.DataFrame:
    """Add ``band_mid``, ``gap_point``, ``gap`` and ``verdict`` to a validity table.

    Needs the columns ``conservative``, ``optimistic``, ``sim_efficiency``, ``sim_low``,
    ``sim_high``.  ``verdict`` is 'inside', 'below' or 'above' (by ``gap``), or 'failed'
    where the point has no numbers.
    """
    need = ("conservative", "optimistic", "sim_efficiency", "sim_low", "sim_high")
    miss = [c for c in need if c not in df.columns]
    if miss:
        raise ValueError(f"df is invalid: missing columns {miss}")
    df = df.copy()
    ok = df[list(need)].notna().all(axis=1).to_numpy()
    c = df["conservative"].to_numpy(float)
    o = df["optimistic"].to_numpy(float)
    s = df["sim_efficiency"].to_numpy(float)
    lo = df["sim_low"].to_numpy(float)
    hi = df["sim_high"].to_numpy(float)
    gp = np.full(len(df), np.nan)
    g = np.full(len(df), np.nan)
    if ok.any():
        gp[ok] = point_gap(s[ok], c[ok], o[ok])
        g[ok] = relative_gap(lo[ok], hi[ok], c[ok], o[ok])
    df["band_mid"] = 0.5 * (c + o)
    df["gap_point"] = gp
    df["gap"] = g
    df["verdict"] = np.where(~ok, "failed", np.where(g < 0, "below", np.where(g > 0, "above", "inside")))
    return df


# ------------------------------------------------------------------------------ one point
def _slow_start_timeout_fraction(trace, sc) -> tuple[float, int]:
    """Fraction of TCP-alone loss cycles whose first loss happened in slow start.

    From a trace of the first replication sampled every time unit.  A timeout resets cwnd
    to 1 (at ``ssthresh`` set for the next cycle).  Within the cycle that the timeout
    ends: ``t_x`` is the first sample with cwnd >= ssthresh (end of slow start; none if
    slow start never ended); cwnd stops growing at ``t_p`` when the last ACK of a packet
    sent before the loss arrives, i.e. one round-trip delay plus the queueing delay of
    the (full) buffer after the loss, so the loss time is estimated as
    ``t_L = t_p - Delta - queue(t_p) x packet service time``.  The loss happened in slow
    start when ``t_L < t_x``.  The estimate is good to about one packet service time.
    Returns (fraction, number of cycles seen).
    """
    t = np.asarray(trace.time, dtype=float)
    cw = np.asarray(trace.cwnd, dtype=float)[:, 0]
    ss = np.asarray(trace.ssthresh, dtype=float)[:, 0]
    q = np.asarray(trace.queue, dtype=float)
    cap = np.asarray(trace.capacity)
    link_bps = sc.frame_wire_bytes / sc.time_unit          # wire bytes per second, high state
    pkt_s = sc.ip_packet_bytes / link_bps                   # one IP packet at the high rate, s
    resets = np.nonzero((cw[1:] < cw[:-1]) & (cw[1:] <= 1.0 + 1e-9))[0] + 1
    n = 0
    in_ss = 0
    for j, i in zip(resets[:-1], resets[1:]):
        seg = np.arange(j, i)                               # one cycle: reset j .. before reset i
        thr = ss[j]
        above = seg[cw[seg] >= thr]
        t_x = t[above[0]] if above.size else np.inf
        grow = seg[1:][cw[seg[1:]] > cw[seg[:-1]]]
        if grow.size == 0:
            continue
        k = grow[-1]
        service = pkt_s / (1.0 if cap[k] == 0 else sc.rate_ratio)
        t_loss = t[k] - sc.rtt[0] - q[k] * service
        n += 1
        in_ss += bool(t_loss < t_x)
    if n == 0:
        return float("nan"), 0
    return in_ss / n, n


def validity_point(params: Mapping, seed: int, *, replications: int = FULL_SIM[0],
                   duration_units: float = FULL_SIM[1], diagnostics: bool = True) -> dict:
    """Analysis bounds and one simulation mode at one point (a :func:`run_sweep` method).

    Parameters
    ----------
    params : mapping
        ``psi``, ``bmax``, ``delta``, ``wmax``, ``feedback`` ('instcap' or 'none'),
        ``mode`` ('embedded' or 'continuous'), optionally ``rate_ratio`` (0.5) and ``tcp``
        ('timeout-only', the default, or 'sack': the analysis' ``Scenario(tcp=...)`` and the
        simulator's ``variant``, docs/model.md sec. 12) and ``loss_cycle`` (the analysis' timeout
        cycle: 'paper', the default, 'drain' or 'timer', docs/model.md secs. 14-15; the
        simulation does not depend on it) and ``switch_time`` (when the analysis' rate changes inside
        the round trip: 'epoch', the default, or 'uniform', docs/model.md sec. 17; neither does it) and
        ``ca_increment`` (the analysis' congestion-avoidance growth: 'binomial', eq. 1's coins, the
        default, or 'counter', docs/model.md sec. 18; nor does it) and ``ack_clock`` (TCP alone's
        returning ACKs in the analysis: 'at-epoch', the default, or 'spread', docs/model.md sec.
        3a; INSTCAP points ignore it, their source being paced at its rate, eq. 10) and ``round_trip``
        (the chain's epoch: 'propagation', the default, or 'transmission', docs/model.md sec. 3b; the
        simulator's ``delta`` is the propagation in both), and with ``feedback='effcap'`` its ``effcap_m`` and
        ``effcap_n`` (default 1 and 8; one sample per round trip in the analysis and the embedded mode, the
        same averaging length and span in 30-ms samples in the continuous mode; docs/model.md sec. 20).
    seed : int
        Root seed of the simulation's replications.
    replications : int
        Independent replications (Student-t 95 % interval).
    duration_units : float
        Measured length of one replication, time units (warm-up 20 s on top).
    diagnostics : bool
        For TCP alone, also sample cwnd every time unit in the first replication and
        report the fraction of timeouts whose loss happened in slow start.

    Returns
    -------
    dict
        ``optimistic``, ``conservative``, ``prediction``, ``optimistic_eq18`` (analysis efficiencies),
        ``n_states``; ``sim_efficiency`` (``efficiency_wire`` mean), ``sim_half_width``,
        ``sim_low``, ``sim_high`` (95 % CI), ``sim_efficiency_atm`` (cell tax charged),
        ``timeouts_per_kunit`` (timeouts per 1000 time units), ``frame_loss_ratio``,
        ``ss_timeout_fraction``, ``ss_timeouts`` (TCP alone diagnostics; NaN/0 otherwise),
        ``pipe_ratio`` = B_max / (Delta + 1) (III-B.3 holds for TCP alone above 1/3);
        delays in time units: the analysis' ``queueing_delay`` (bottleneck sojourn),
        ``waiting_delay``, ``source_delay`` and ``total_delay`` (sojourn + source), the
        simulator's ``sim_queueing_delay``, ``sim_source_delay`` and ``sim_total_delay`` (source +
        queue per delivered packet), each with its ``_half_width``.
    """
    from .markov import Scenario as MScenario, analyze
    from .sim import simulate

    p = dict(params)
    unknown = sorted(set(p) - set(_AXES))
    if unknown:
        raise ValueError(f"params={unknown!r} are invalid: allowed keys are {list(_AXES)}")
    feedback = check_choice("feedback", p.get("feedback", "instcap"), FEEDBACKS)
    mode = check_choice("mode", p.get("mode", "embedded"), MODES)
    psi = check_real("psi", p.get("psi", 20.0), 1.0)
    bmax = check_int("bmax", p.get("bmax", 10), 1, 100_000)
    delta = check_real("delta", p.get("delta", 40.0), 1.0, 1e5)
    wmax = check_int("wmax", p.get("wmax", 128), 1, 1_000_000)
    rr = check_real("rate_ratio", p.get("rate_ratio", 0.5), 0.0, 1.0, low_open=True)
    tcp = check_choice("tcp", p.get("tcp", "timeout-only"), TCPS)
    loss_cycle = check_choice("loss_cycle", p.get("loss_cycle", "paper"), LOSS_CYCLES)
    switch_time = check_choice("switch_time", p.get("switch_time", "epoch"), SWITCH_TIMES)
    ca_increment = check_choice("ca_increment", p.get("ca_increment", "binomial"), CA_INCREMENTS)
    ack_clock = check_choice("ack_clock", p.get("ack_clock", "at-epoch"), ACK_CLOCKS)
    round_trip = check_choice("round_trip", p.get("round_trip", "propagation"), ROUND_TRIPS)
    # EFFCAP's M and N (docs/model.md sec. 20): points of other feedbacks ignore them, as INSTCAP does ack_clock
    eff = ({"effcap_m": check_int("effcap_m", p.get("effcap_m", 1), 1, 10_000),
            "effcap_n": check_int("effcap_n", p.get("effcap_n", 8), 1, 10_000)} if feedback == "effcap" else {})
    replications = check_int("replications", replications, 1, 100_000)
    duration_units = check_real("duration_units", duration_units, 0.0, low_open=True)

    a = analyze(MScenario(delta=delta, bmax=bmax, psi=psi, rate_ratio=rr, wmax=wmax, feedback=feedback, tcp=tcp,
                          loss_cycle=loss_cycle, switch_time=switch_time, ca_increment=ca_increment,
                          ack_clock=ack_clock if feedback == "none" else "at-epoch", round_trip=round_trip, **eff))
    kw = {"duration_units": duration_units, **eff}
    diag = diagnostics and feedback == "none"
    if diag:
        # TCP alone ignores the measurement interval; use it as a fine trace clock
        unit = 500 / 100e3
        kw["interval"] = 1.0 * unit
    if tcp != "timeout-only":
        from .sim import TcpConfig
        kw["tcp"] = TcpConfig(variant=tcp, wmax=wmax)
    sc = sim_scenario(mode, delta=delta, bmax=bmax, psi=psi, wmax=wmax, feedback=feedback, rate_ratio=rr, **kw)
    r = simulate(sc, replications=replications, seed=seed, trace=diag)
    e = r.efficiency_wire
    hw = e.half_width if not math.isnan(e.half_width) else 0.0
    ss_frac, ss_n = (_slow_start_timeout_fraction(r.trace, sc) if diag else (float("nan"), 0))
    units = replications * duration_units
    return {
        "optimistic": a.optimistic,
        "conservative": a.conservative,
        "prediction": a.prediction,
        "optimistic_eq18": a.optimistic_eq18,
        "n_states": a.n_states,
        "sim_efficiency": e.mean,
        "sim_half_width": e.half_width,
        "sim_low": e.mean - hw,
        "sim_high": e.mean + hw,
        "sim_efficiency_atm": r.efficiency.mean,
        "sim_replications": r.replications,
        "timeouts_per_kunit": r.counters["timeouts"] / units * 1000.0,
        "frame_loss_ratio": r.frame_loss_ratio.mean,
        "ss_timeout_fraction": ss_frac,
        "ss_timeouts": ss_n,
        "pipe_ratio": bmax / (delta + 1.0),
        # delay (issue 26 item 2): the analysis' means by Little's law (docs/model.md sec. 13)
        # and the simulator's per delivered packet (sim.delay), both in time units
        "queueing_delay": a.mean_queueing_delay,
        "waiting_delay": a.mean_waiting_delay,
        "source_delay": a.mean_source_delay,
        "sim_queueing_delay": _delay_units(r, "queue", sc),
        "sim_queueing_delay_half_width": _delay_units(r, "queue", sc, "half_width"),
        "sim_source_delay": _delay_units(r, "source", sc),
        "sim_source_delay_half_width": _delay_units(r, "source", sc, "half_width"),
        # the two together: TCP's send to the receiver's handover, less the propagation; where a
        # packet's own transmission is counted differs (the chain: at the bottleneck; the cells:
        # at the ABR source, which paces them), the sum does not (docs/validity.md, "Delay")
        "total_delay": _total_delay(a),
        "sim_total_delay": _delay_units(r, "total", sc) - _delay_units(r, "propagation", sc),
        "sim_total_delay_half_width": _delay_units(r, "total", sc, "half_width"),
    }


def _total_delay(a) -> float:
    """The analysis' mean bottleneck sojourn plus its mean wait in the source's segmentation
    buffer (none for TCP alone), time units; NaN where the analysis gives no delay."""
    if a.mean_queueing_delay is None:
        return float("nan")
    return float(a.mean_queueing_delay) + float(a.mean_source_delay or 0.0)


def _delay_units(result, component: str, sc, what: str = "mean") -> float:
    """The simulator's mean delay of ``component`` per delivered packet (or its CI half
    width), in the analysis' time units (packet times at the high rate); NaN without a
    delay measurement."""
    d = getattr(result, "delay", None)
    if d is None:
        return float("nan")
    return float(getattr(getattr(d, component).mean, what)) / sc.time_unit


# ------------------------------------------------------------------------------ the map
def validity_grid(grid_spec: Mapping | None = None, *, quick: bool = False):
    """The sweep grid of a validity map.

    ``grid_spec`` maps axis names (``psi``, ``bmax``, ``delta``, ``wmax``, ``feedback``,
    ``mode``, ``rate_ratio``, and the analysis' options ``tcp``, ``loss_cycle``, ``switch_time``,
    ``ca_increment``, ``ack_clock``, ``round_trip`` of :func:`validity_point`) to lists of values; missing axes
    take :data:`DEFAULT_GRID` (or :data:`QUICK_GRID` with ``quick=True``).  Points with psi < 1
    are refused (the analysis needs psi >= 1).

    Returns
    -------
    tcpabr_model.sweep.Grid
    """
    from .sweep import Grid

    base = dict(QUICK_GRID if quick else DEFAULT_GRID)
    if grid_spec is not None:
        if not isinstance(grid_spec, Mapping):
            raise ValueError(f"grid_spec={grid_spec!r} is invalid: must be a mapping axis -> list of values")
        unknown = sorted(set(grid_spec) - set(_AXES))
        if unknown:
            raise ValueError(f"grid_spec={unknown!r} are invalid axes: allowed {list(_AXES)}")
        for k, v in grid_spec.items():
            vals = list(v) if isinstance(v, (list, tuple, np.ndarray)) else [v]
            if not vals:
                raise ValueError(f"grid_spec[{k!r}]=[] is invalid: must hold at least one value")
            base[k] = vals
    for v in base["psi"]:
        check_real("psi", v, 1.0)
    for v in base["feedback"]:
        check_choice("feedback", v, FEEDBACKS)
    for v in base["mode"]:
        check_choice("mode", v, MODES)
    for v in base.get("tcp", []):
        check_choice("tcp", v, TCPS)
    for v in base.get("switch_time", []):
        check_choice("switch_time", v, SWITCH_TIMES)
    for v in base.get("ca_increment", []):
        check_choice("ca_increment", v, CA_INCREMENTS)
    for v in base.get("ack_clock", []):
        check_choice("ack_clock", v, ACK_CLOCKS)
    for v in base.get("round_trip", []):
        check_choice("round_trip", v, ROUND_TRIPS)
    for name in ("effcap_m", "effcap_n"):
        for v in base.get(name, []):
            check_int(name, v, 1, 10_000)
    return Grid(base)


def validity_map(grid_spec: Mapping | None = None, *, quick: bool = False, seed: int = 0,
                 replications: int | None = None, duration_units: float | None = None,
                 cache_dir=None, workers: int | None = None, client=None, progress=None,
                 diagnostics: bool = True) -> pd.DataFrame:
    """Analysis bounds against the simulation over a grid: the validity map.

    Parameters
    ----------
    grid_spec : mapping, optional
        Axis -> values (see :func:`validity_grid`); default :data:`DEFAULT_GRID`
        (:data:`QUICK_GRID` with ``quick=True``).
    quick : bool
        Quick grid and simulation size (:data:`QUICK_SIM`: 4 replications of 1e5 time
        units = 500 s) instead of :data:`FULL_SIM` (6 x 2e5 time units = 6 x 1000 s).
    seed : int
        Root seed; each point's seed depends on the point only (:func:`run_sweep`).
    replications, duration_units : optional
        Override the simulation size.
    cache_dir, workers, client, progress
        Passed to :func:`tcpabr_model.sweep.run_sweep` (disk cache, local processes, a
        ``dask.distributed.Client``, progress bar).
    diagnostics : bool
        See :func:`validity_point`.

    Returns
    -------
    pandas.DataFrame
        One row per point: the axes, the :func:`validity_point` columns, ``band_mid``,
        ``gap_point`` (:func:`point_gap`), ``gap`` (:func:`relative_gap`, CI-aware) and
        ``verdict``, ``prediction_gap`` and ``prediction_ok`` (within CI + 5 %), ``delay_gap``
        and ``delay_ok`` (``total_delay`` against ``sim_total_delay``, the same test), plus the
        sweep's ``status``, ``error``, ``seed``, ``seconds``,
        ``cached``.  A failed point keeps its row with ``status`` and ``error`` and NaN
        numbers.
    """
    from .sweep import run_sweep

    reps, dur = QUICK_SIM if quick else FULL_SIM
    reps = check_int("replications", replications if replications is not None else reps, 1, 100_000)
    dur = check_real("duration_units", duration_units if duration_units is not None else dur, 0.0, low_open=True)
    grid = validity_grid(grid_spec, quick=quick)
    df = run_sweep(validity_point, grid, seed=seed, cache_dir=cache_dir, workers=workers, client=client,
                   progress=progress, on_error="record",
                   method_options={"replications": reps, "duration_units": dur, "diagnostics": diagnostics})
    for col in ("conservative", "optimistic", "sim_efficiency", "sim_low", "sim_high"):
        if col not in df.columns:
            df[col] = np.nan
    df = add_gap_columns(df)
    if "prediction" in df.columns:   # the point estimate against the simulation: |gap| <= CI + 5 %
        hw = df["sim_half_width"].fillna(0.0)
        df["prediction_gap"] = (df["prediction"] - df["sim_efficiency"]) / df["sim_efficiency"]
        df["prediction_ok"] = (df["prediction"] - df["sim_efficiency"]).abs() <= hw + 0.05 * df["sim_efficiency"]
    if "total_delay" in df.columns and "sim_total_delay" in df.columns:   # issue 26: the same test on the delay
        hw = df["sim_total_delay_half_width"].fillna(0.0)
        df["delay_gap"] = (df["total_delay"] - df["sim_total_delay"]) / df["sim_total_delay"]
        df["delay_ok"] = (df["total_delay"] - df["sim_total_delay"]).abs() <= hw + 0.05 * df["sim_total_delay"]
    return df
