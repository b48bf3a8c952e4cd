"""Sample paths of the available-capacity process: the paper's two-state chain (Sections II
and V), a K-state Markov chain, or a replayed measured trace (issue 15).

Every path reaches the kernels as one :class:`CapacityPath` (change epochs in slots, the level
index in force after each change, the K normalised levels, the level at slot 0), built by
:func:`build_path` for both the fast path and the general network kernel: the capacity
process lives here only.

The two-state process:

The bottleneck's available capacity alternates between a high state (the full link rate,
state 0) and a low state (state 1, ``rate_ratio`` times the high rate).  Two modes:

``continuous``
    Exponential sojourns with mean ``tau`` (seconds) in each state: a continuous-time
    Markov chain, valid for any ``psi = tau / Delta > 0`` including ``psi << 1``.
``embedded``
    Changes only at multiples of ``period`` (the round-trip delay Delta); at each such
    epoch the state switches with probability ``period / tau = 1 / psi``, so sojourns are
    geometric with mean ``psi`` periods.  This is the modulating chain of the analysis
    (Section III-B, assumption 1) and needs ``psi >= 1``.

Paths are returned as the increasing change epochs (in simulator slots, floats), ending
with ``+inf``; the state at time 0 is returned separately and toggles at every epoch.
Random numbers come from a :class:`numpy.random.Generator`, so a path is reproducible
from its seed.
"""

from __future__ import annotations

import weakref

import numpy as np

from dataclasses import dataclass

from numba import njit

from .._validate import check_choice, check_real

__all__ = ["capacity_path", "capacity_integral", "CapacityPath", "build_path", "chain_path_slots",
           "trace_path_slots", "check_trace_window", "path_integral", "TRACE_BIN_SECONDS"]

#: bin of a replayed trace: Mahimahi's time resolution, one millisecond
TRACE_BIN_SECONDS = 1e-3
#: trace_levels of each live Trace (a Trace is immutable and hashed by identity)
_TRACE_LEVELS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def capacity_path(rng: np.random.Generator, horizon: float, tau: float, mode: str = "continuous",
                  period: float | None = None, initial: str = "stationary") -> tuple[np.ndarray, int]:
    """Draw the change epochs of the capacity process on ``[0, horizon)``.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness (the only one the simulator uses).
    horizon : float
        Length of the path, in the same time unit as ``tau`` (the simulator passes slots).
    tau : float
        Mean sojourn time in each state (symmetric chain, Section V).
    mode : {'continuous', 'embedded'}, optional(default='continuous')
    period : float, optional
        Embedding period (Delta) for ``mode='embedded'``; required there.
    initial : {'stationary', 'high', 'low'}, optional(default='stationary')
        State at time 0; 'stationary' draws it with probability 1/2 each.

    Returns
    -------
    times : ndarray(float, ndim=1)
        Change epochs in ``(0, horizon)``, increasing, followed by ``+inf``.
    state0 : int
        0 (high) or 1 (low) at time 0.
    """
    horizon = check_real("horizon", horizon, 0.0, low_open=True)
    tau = check_real("tau", tau, 0.0, low_open=True)
    check_choice("mode", mode, ("continuous", "embedded"))
    check_choice("initial", initial, ("stationary", "high", "low"))
    if initial == "stationary":
        state0 = int(rng.integers(0, 2))
    else:
        state0 = 0 if initial == "high" else 1
    chunks = []
    if mode == "continuous":
        t = 0.0
        est = int(horizon / tau) + 16
        while t < horizon:
            gaps = rng.exponential(tau, size=max(16, int(1.1 * est)))
            ts = t + np.cumsum(gaps)
            chunks.append(ts)
            t = float(ts[-1])
            est = int((horizon - t) / tau) + 16
    else:
        if period is None:
            raise ValueError("period=None is invalid: must be given for mode='embedded'")
        period = check_real("period", period, 0.0, low_open=True)
        p = period / tau
        if p > 1.0 + 1e-12:
            raise ValueError(f"tau={tau!r} is invalid: must be >= period={period!r} in embedded mode "
                             "(switch probability 1/psi per period needs psi >= 1)")
        p = min(p, 1.0)
        k = 0
        kmax = int(np.floor(horizon / period))
        est = int(kmax * p) + 16
        while k < kmax:
            steps = rng.geometric(p, size=max(16, int(1.1 * est)))
            ks = k + np.cumsum(steps)
            chunks.append(ks.astype(np.float64) * period)
            k = int(ks[-1])
            est = int((kmax - k) * p) + 16
    times = np.concatenate(chunks) if chunks else np.empty(0)
    times = times[times < horizon]
    return np.concatenate([times, [np.inf]]), state0


def capacity_integral(times: np.ndarray, state0: int, low: float, a: float, b: float) -> float:
    """Integral of the normalised capacity (1 high, ``low`` low) over ``[a, b)``.

    A plain-numpy reference used by the tests to check the kernel's measurements.
    """
    caps = (1.0, low)
    edges = np.concatenate([[0.0], times[np.isfinite(times)]])
    states = (state0 + np.arange(edges.size)) % 2
    ends = np.concatenate([edges[1:], [np.inf]])
    lo = np.clip(edges, a, b)
    hi = np.clip(ends, a, b)
    return float(sum(caps[s] * (h - l) for s, l, h in zip(states, lo, hi) if h > l))


# ---------------------------------------------------------------------- K levels (issue 15)
@dataclass(frozen=True)
class CapacityPath:
    """One sample path of a port's available capacity, in the kernels' representation.

    Attributes
    ----------
    times : ndarray(float64, ndim=1)
        Change epochs in slots, increasing, ending with +inf.
    states : ndarray(int64, ndim=1)
        ``states[i]`` is the level index in force from ``times[i]`` on (same length as
        ``times``; the entry at +inf is never read).
    levels : ndarray(float64, ndim=1)
        Capacity of each level normalised to the port's peak rate, in [0, 1].
    state0 : int
        Level index at slot 0.
    """

    times: np.ndarray
    states: np.ndarray
    levels: np.ndarray
    state0: int


def two_state_path(rng: np.random.Generator, horizon: float, tau: float, mode: str, period: float | None,
                   initial: str, low: float) -> CapacityPath:
    """The paper's process (:func:`capacity_path`) as a :class:`CapacityPath`: levels ``(1, low)``,
    the level alternating at every change (the same draws as before issue 15)."""
    times, s0 = capacity_path(rng, horizon, tau, mode, period, initial)
    states = (s0 + 1 + np.arange(times.size, dtype=np.int64)) % 2
    return CapacityPath(times, states, np.array([1.0, low]), int(s0))


@njit(cache=True)
def _jump_chain(x0, u, jcdf, out):
    """``out[i]``: state after jump i of the jump chain from ``x0``, by inverse CDF of the
    uniforms ``u`` (drawn outside) on the rows of ``jcdf``."""
    x = x0
    k = jcdf.shape[1]
    for i in range(u.shape[0]):
        j = 0
        while j < k - 1 and u[i] >= jcdf[x, j]:
            j += 1
        x = j
        out[i] = x


def chain_path_slots(model, rng: np.random.Generator, horizon: float, unit_slots: float,
                     peak: float) -> CapacityPath:
    """A path of a K-state :class:`~tcpabr_model.capacity.CapacityModel` on ``[0, horizon)`` slots.

    The level at slot 0 is drawn from the stationary distribution.  Then, by jumps (exact
    for both kinds of chain, one uniform per visited state and one per jump):

    * discrete time: a sojourn in state ``i`` lasts a geometric number of epochs with
      success probability ``1 - P[i, i]``; changes fall on multiples of the epoch;
    * continuous time: a sojourn is exponential with rate ``-Q[i, i]``;

    and the next state is ``j != i`` with probability ``P[i, j] / (1 - P[i, i])`` (resp.
    ``Q[i, j] / -Q[i, i]``).  ``unit_slots`` is the model's time unit in slots and ``peak``
    the level that is the port's peak rate (levels are divided by it).
    """
    levels = np.asarray(model.levels, dtype=float) / peak
    k = levels.size
    cum = np.cumsum(model.stationary)
    x0 = min(int(np.searchsorted(cum, rng.random(), side="right")), k - 1)
    if k == 1:
        return CapacityPath(np.array([np.inf]), np.zeros(1, np.int64), levels, 0)
    if model.time == "discrete":
        M = np.array(model.transition, dtype=float)
        stay = np.diag(M).copy()
        step = model.epoch * unit_slots
        mean_soj = step / np.maximum(1e-300, 1.0 - stay)
    else:
        M = np.array(model.generator, dtype=float)
        rate = -np.diag(M) / unit_slots          # per slot
        mean_soj = 1.0 / np.maximum(1e-300, rate)
    off = M - np.diag(np.diag(M))
    with np.errstate(invalid="ignore", divide="ignore"):
        jump = off / off.sum(axis=1, keepdims=True)
    jump = np.nan_to_num(jump)
    jcdf = np.cumsum(jump, axis=1)
    jcdf[:, -1] = 1.0
    times, states = [], []
    t = 0.0
    n_ep = 0
    x = x0
    est = int(horizon / float(np.min(mean_soj))) + 16
    while t < horizon:
        n = max(16, min(est, 1 << 22))
        nxt = np.empty(n, np.int64)
        _jump_chain(x, rng.random(n), jcdf, nxt)
        visit = np.concatenate(([x], nxt[:-1]))       # the state each sojourn is spent in
        if model.time == "discrete":
            g = rng.geometric(1.0 - np.minimum(stay[visit], 1.0 - 1e-300))
            ep = n_ep + np.cumsum(g)
            ts = ep.astype(np.float64) * step
            n_ep = int(ep[-1])
        else:
            ts = t + np.cumsum(rng.standard_exponential(n) / rate[visit])
        times.append(ts)
        states.append(nxt)
        t = float(ts[-1])
        x = int(nxt[-1])
        est = int((horizon - t) / float(np.min(mean_soj))) + 16
    ts = np.concatenate(times)
    ss = np.concatenate(states)
    keep = ts < horizon
    return CapacityPath(np.concatenate([ts[keep], [np.inf]]), np.concatenate([ss[keep], [0]]).astype(np.int64),
                        levels, x0)


def trace_levels(trace) -> tuple[np.ndarray, np.ndarray, int]:
    """(level index of each 1-ms bin of one period, opportunities of each level, peak count).

    Bin ``k`` is ``(k, k+1]`` ms of the cycle (:func:`~tcpabr_model.capacity.bin_trace`'s
    convention, 0 counting as the period ``T``); the levels are the distinct counts.
    Computed once per :class:`~tcpabr_model.capacity.Trace` object (a scenario's checks ask
    for it several times per run: 160 times in a held-out design), the arrays read-only."""
    got = _TRACE_LEVELS.get(trace)
    if got is None:
        from ..capacity import bin_trace

        counts = bin_trace(trace, TRACE_BIN_SECONDS).counts
        uniq = np.unique(counts)
        sidx = np.searchsorted(uniq, counts).astype(np.int64)
        sidx.setflags(write=False)
        uniq.setflags(write=False)
        got = (sidx, uniq, int(uniq[-1]))
        _TRACE_LEVELS[trace] = got
    return got


def check_trace_window(trace, duration: float) -> None:
    """Refuse to replay ``trace`` with a measured window of ``duration`` seconds that can fall
    entirely inside its longest stretch without delivery opportunities
    (:attr:`~tcpabr_model.capacity.Trace.longest_gap`).

    CHOICE (issue 23): such a window has no capacity at all, so the efficiency of a replication
    that draws it is 0 / 0.  A run at least as long as the gap has capacity in every window and
    counts the gap as the long outage it is; a shorter one is refused, naming the trace and the
    gap, rather than returning NaN for some seeds and a number for others.
    """
    gap, start = trace.longest_gap
    if gap >= duration:
        raise ValueError(
            f"duration={duration!r} is invalid for the trace {trace.name}: it has no delivery opportunity for "
            f"{gap:.6g} s (from {start:.3f} s to {start + gap:.3f} s of its {trace.period_ms / 1000.0:.6g}-s "
            "period), at least the measured window, so a replication can see no capacity at all and has no "
            f"efficiency; measure longer than the gap (duration > {gap:.6g} s: the gap is then an outage inside "
            "every run) or cut the gap out of the trace")


def trace_path_slots(trace, horizon: float, ms_slots: float, offset_ms: int) -> CapacityPath:
    """Replay of ``trace`` on ``[0, horizon)`` slots, repeated with its period as Mahimahi does.

    Slot 0 is ``offset_ms`` ms into the trace; bin ``k`` of the trace (``(k, k+1]`` ms) is
    served at the constant rate of its opportunities (``count x packet_bytes`` per ms),
    normalised to the busiest bin.  ``ms_slots`` is one millisecond in slots.
    """
    sidx, uniq, peak = trace_levels(trace)
    T = sidx.size
    rolled = np.roll(sidx, -int(offset_ms))
    levels = uniq.astype(float) / peak
    s0 = int(rolled[0])
    # changes inside one period (ms positions 1..T-1) and at the wrap (position T)
    pos = np.flatnonzero(rolled[1:] != rolled[:-1]) + 1
    st = rolled[pos]
    if rolled[-1] != rolled[0]:
        pos = np.concatenate([pos, [T]])
        st = np.concatenate([st, [rolled[0]]])
    if pos.size == 0:
        return CapacityPath(np.array([np.inf]), np.zeros(1, np.int64), levels, s0)
    nper = int(np.floor(horizon / (T * ms_slots))) + 1
    reps = np.arange(nper, dtype=np.int64)[:, None] * T
    ms = (pos[None, :] + reps).ravel()
    ts = ms.astype(np.float64) * ms_slots
    keep = ts < horizon
    return CapacityPath(np.concatenate([ts[keep], [np.inf]]),
                        np.concatenate([np.tile(st, nper)[keep], [0]]).astype(np.int64), levels, s0)


def build_path(capacity, rng: np.random.Generator, horizon: float, slots_per_second: float, *,
               model_unit_seconds: float | None = None, offset: float | None = None) -> CapacityPath:
    """The path of a :class:`~tcpabr_model.capacity.CapacityModel` or a
    :class:`~tcpabr_model.capacity.Trace` for a port with ``slots_per_second`` slots per second.

    Both drivers pass the reference link's cell rate, ``link_rate_bps / (53 * 8)`` (the
    single bottleneck computes ``link_rate_bps`` as ``Scenario.to_network`` does), so the
    fast path and the general kernel convert times to slots bit for bit alike: a trace's
    1-ms bins can fall on whole slots, where a one-ulp difference would move a change.

    A model's time unit is ``model.time_unit`` seconds, else ``model_unit_seconds``; its
    levels are normalised to the largest.  A trace starts ``offset`` seconds into its period
    (rounded to whole ms), or at a whole ms drawn uniformly from the period with ``rng`` when
    ``offset`` is None (CHOICE: replications then replay different stretches of the trace).
    """
    from ..capacity import CapacityModel, Trace

    if isinstance(capacity, Trace):
        if offset is None:
            off = int(rng.integers(0, capacity.period_ms))
        else:
            off = int(round(offset * 1000.0)) % capacity.period_ms
        return trace_path_slots(capacity, horizon, TRACE_BIN_SECONDS * slots_per_second, off)
    if isinstance(capacity, CapacityModel):
        unit = capacity.time_unit if capacity.time_unit is not None else model_unit_seconds
        if unit is None:
            raise ValueError("capacity.time_unit=None is invalid here: a port needs the model's time unit in seconds")
        return chain_path_slots(capacity, rng, horizon, unit * slots_per_second, float(np.max(capacity.levels)))
    raise ValueError(f"capacity={capacity!r} is invalid: must be a CapacityModel or a Trace")


def path_integral(path: CapacityPath, a: float, b: float) -> float:
    """Integral of the normalised capacity of ``path`` over ``[a, b)`` slots (plain numpy, for tests)."""
    fin = path.times[np.isfinite(path.times)]
    edges = np.concatenate([[0.0], fin])
    states = np.concatenate([[path.state0], path.states[:fin.size]])
    ends = np.concatenate([fin, [np.inf]])
    lo = np.clip(edges, a, b)
    hi = np.clip(ends, a, b)
    return float(np.sum(path.levels[states] * np.maximum(hi - lo, 0.0)))
