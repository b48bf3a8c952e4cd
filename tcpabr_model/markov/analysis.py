"""Markov renewal-reward throughput of TCP over INSTCAP ABR and of TCP alone.

gamma = E_pi V / E_pi U  (eq. 14), with E_pi V from eqs. 15-18 and E_pi U from eq. 21;
U is in units of the chain's epoch (Delta, or Delta + 1 with
``round_trip='transmission'``: ``Scenario.epoch``), so the throughput in packets per time unit
is E_pi V / (epoch E_pi U), and the efficiency divides it by the mean bottleneck capacity
(packets per time unit).  Packets are whole TCP packets including their TCP/IP
headers; ATM cell overhead is *not* charged (multiply by the cell-tax factor of
:mod:`tcpabr_model.closed_forms` to compare with cell-level efficiencies).
"""

from __future__ import annotations

import math
import time
import weakref
from collections.abc import Iterable
from dataclasses import asdict, dataclass, replace

import numpy as np

from .._results import ResultMixin  # to_frame() / to_flat_dict() (issue 17)
from .._validate import check_choice, check_real
from .scenario import MAX_PSI, Scenario
from .skeleton import skeleton_for
from .slow_start import with_go_back_n_burst, with_outage_wait, with_slow_start_outage
from .solvers import (DEFAULT_TOL, METHODS, SOLVE_BLAS_THREADS, blas_threads, event_start, loss_event_law,
                      stationary_distribution, structured_matrix_free)

__all__ = ["AnalysisResult", "WINDOW_TAIL", "analyze", "sweep_psi"]

#: The share of time near the window cap below which :func:`analyze`'s ``window_tail`` search accepts a
#: chain with a smaller cap for the requested one (docs/model.md sec. 19): the two agree to about it.
WINDOW_TAIL = 1e-12
#: each cap of the search after the first starts its loss-event GMRES from the previous cap's law
#: (docs/model.md sec. 19, "The start") [choice, measured]; False: from the uniform law
WARM_START = True


@dataclass(frozen=True)
class AnalysisResult(ResultMixin):
    """Throughput bounds of one scenario.

    Efficiencies are throughput / mean capacity (dimensionless); throughputs are in
    packets per time unit (one time unit = one packet time at the high rate);
    ``mean_cycle_length`` is in units of the chain's epoch (``Scenario.epoch``: Delta, or Delta + 1
    with ``round_trip='transmission'``).
    ``optimistic`` is eq. 18 with the post-loss credit capped by what the bottleneck can
    carry (two caps the paper does not have, docs/model.md sec. 6); ``optimistic_eq18``
    is the paper's eq. 18 uncapped, which exceeds 1 when the regeneration state credits
    windows beyond the pipe (``eq18_above_capacity`` says so); ``conservative`` credits
    nothing sent in a loss interval (and is also under the cycle cap).  Quote the band
    ``[conservative, optimistic]``; ``optimistic_eq18`` is for comparison with the paper
    only.  ``prediction`` is the point estimate inside the band (docs/model.md sec. 11: the
    packets a timeout-only TCP delivers in order in a loss cycle).  The three are
    efficiencies of at most 1: a value above 1 (the caps act on expectations given the
    state) is returned as 1 and ``clipped[name]`` holds the unclipped value (None where the
    bound was at most 1).  ``fast_recovery_share`` (``tcp='sack'``, docs/model.md sec. 12):
    the share of loss cycles recovered by fast retransmit, the rest by a timeout (None for
    the timeout-only TCP).  ``mean_queue`` and ``mean_source_buffer`` (packets): the
    time-average occupancy of the bottleneck (B, the packet in service included) and of the
    ABR segmentation buffer (A; 0 for TCP alone), by renewal reward over the cycles of eqs.
    14-21; ``mean_queueing_delay`` and ``mean_source_delay`` (time units): the mean time a
    delivered packet spends in each, by Little's law with the ``prediction`` throughput
    (docs/model.md sec. 13; the propagation delay Delta comes on top).  ``mean_queueing_delay``
    is the sojourn in the bottleneck, its own service included; ``mean_waiting_delay`` the wait
    before service, ``(mean_queue - P(busy)) / throughput`` with the server busy a fraction
    ``prediction`` of the time (**choice**, exact when every packet served is delivered).
    ``nnz`` is the nonzeros of P; for K > 2 levels with a structured solver, P is
    not assembled (``method`` ends in "(matrix-free)") and ``nnz`` counts the stored
    entries of its loss-free and loss parts, an upper bound.  ``window_cap_share``: the share of
    time (each interval's loss cycle included) at windows from which the cap ``wmax`` of the chain
    solved can act, ``W >= wmax - margin`` (docs/model.md sec. 19); with ``analyze(...,
    window_tail=...)`` the chain solved may have a smaller cap than the scenario's
    (``scenario['window_solved']``, the caps tried in ``scenario['window_tries']`` with their states,
    shares, seconds and predictions), and this share
    is then at most ``window_tail``.
    """

    scenario: dict
    optimistic: float
    conservative: float
    prediction: float
    optimistic_eq18: float
    eq18_above_capacity: bool
    throughput_optimistic: float
    throughput_conservative: float
    mean_capacity: float
    loss_probability: float
    mean_cycle_length: float
    n_states: int
    nnz: int
    residual: float
    method: str
    build_seconds: float
    assemble_seconds: float
    solve_seconds: float
    clipped: dict | None = None
    fast_recovery_share: float | None = None
    mean_queue: float | None = None
    mean_source_buffer: float | None = None
    mean_queueing_delay: float | None = None
    mean_source_delay: float | None = None
    mean_waiting_delay: float | None = None
    window_cap_share: float | None = None

    def to_dict(self) -> dict:
        """JSON-ready dictionary; keys documented in README.md ("JSON keys")."""
        return asdict(self)


def analyze(scenario: Scenario, method: str = "structured", tol: float = DEFAULT_TOL,
            progress: bool = False, window_tail: float | None = None) -> AnalysisResult:
    """Solve the embedded Markov renewal process of ``scenario`` (Section III of seed 004).

    The rate chain is the paper's two-state one (``psi``, ``rate_ratio``) or
    ``scenario.capacity``'s K levels with its matrix per round trip (docs/model.md,
    "K capacity states"); the mean capacity is ``pi . c``.  The skeleton depends on the
    levels only and is cached, so a psi sweep enumerates the states once.
    Before building, the states are counted exactly and memory is estimated; above
    ``scenario.max_states`` or the available memory
    :class:`~tcpabr_model.errors.ChainTooLargeError` is raised without building.
    ``progress=True`` shows tqdm bars on counts and builds longer than 2 s.
    Raises :class:`~tcpabr_model.errors.ChainTooLargeError` or
    :class:`~tcpabr_model.errors.SolveError` rather than return an untrusted number.

    ``window_tail`` (None: off, the chain of ``scenario.wmax`` itself): solve the chain with a
    smaller window cap where the window spends at most this share of the time near that cap
    (:data:`WINDOW_TAIL` = 1e-12 on the measured-link path), found by :func:`_window_search`;
    within a cycle the window never falls without a loss, so the two chains coincide up to
    the cap and their results differ by about that share (docs/model.md sec. 19, measured there).
    """
    if not isinstance(scenario, Scenario):
        raise ValueError(f"scenario={scenario!r} is invalid: must be a tcpabr_model.markov.Scenario")
    check_choice("method", method, METHODS)
    check_real("tol", tol, 0.0, 1.0, low_open=True)   # the solve's residual bound (SolveError above it)
    if window_tail is not None and not (isinstance(window_tail, (int, float)) and 0.0 <= window_tail < 1e-3):
        raise ValueError(f"window_tail={window_tail!r} is invalid: a share of time in [0, 1e-3) "
                         f"(e.g. {WINDOW_TAIL:g}; 0 or None: the chain of wmax itself)")
    # BLAS at SOLVE_BLAS_THREADS for the whole analysis: the block inverses of the solve and
    # the dot products of the rewards (OpenBLAS splits a long dot product over its threads) then
    # give the same last bits on every machine (docs/model.md sec. 5a item 6)
    with blas_threads(SOLVE_BLAS_THREADS):
        if window_tail is None or window_tail == 0.0:
            return _analyze(scenario, method, tol, progress)
        return _window_search(scenario, method, tol, progress, float(window_tail))


_KEPT: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _kept(sk, name: str, make):
    """A value of the skeleton ``sk`` that does not depend on psi (the rate chain's matrix),
    computed once for it: a psi sweep reuses the skeleton and these with it."""
    kept = _KEPT.setdefault(sk, {})
    if name not in kept:
        kept[name] = make()
    return kept[name]


def max_increment(sk, w: np.ndarray, chunk: int = 1 << 21) -> int:
    """The largest increase of the window ``w`` (``sk.window``, eq. 9) over one loss-free interval
    among the chain's entries (``N`` of eq. 10 as enumerated, the cut of the 1e-17 tail included),
    in chunks of states so that no array of all entries is formed."""
    tail, tab = sk.nl_t
    out = 0
    for lo in range(0, sk.n_states, chunk):
        hi = min(lo + chunk, sk.n_states)
        a, b = sk.nl_ptr[lo], sk.nl_ptr[hi]
        if b > a:
            rows = np.repeat(np.arange(lo, hi), np.diff(sk.nl_ptr[lo:hi + 1]))
            out = max(out, int((w[tab[tail[a:b], 0]] - w[rows]).max()))
    return out


def window_shares(sk, pi: np.ndarray, dur: np.ndarray, eu: float, wmax: int) -> tuple[np.ndarray, float, int]:
    """``(shares, cap_share, margin)`` (docs/model.md sec. 19): ``shares[W]`` the share of time at
    window ``W = A + B + D`` (eq. 9), each state's interval and loss cycle (``dur``, units of
    Delta, mean ``eu``) included; ``cap_share`` the share at windows ``W >= wmax - margin``,
    ``margin = 2 h + 1`` with ``h`` the largest loss-free increment (:func:`max_increment`): the
    states from which the cap can act, by ``min(W + N, W_max)`` (eq. 10) or on the loss window
    ``min(W + N + Binomial(b + J, 1/W), W_max)`` of (M3), whose two increments are each taken
    as at most ``h`` **[choice: b + J ACKs grow the window as d do; a bound, not a proof]**."""
    w = sk.window
    shares = np.bincount(w, weights=pi * dur, minlength=wmax + 1) / eu
    margin = 2 * _kept(sk, "max_increment", lambda: max_increment(sk, w)) + 1
    return shares, float(shares[max(wmax - margin, 0):].sum()), margin


def first_window(scenario: Scenario) -> int:
    """The first cap :func:`_window_search` tries, a probe: half of what the pipe at the peak level
    and the buffer hold, ``ceil((ceil(delta) + bmax) / 2)``, at most ``wmax``.  Its chain costs a
    fraction of the others, and below its cap its time per window is the full chain's, from which
    :func:`next_window` extrapolates (docs/model.md sec. 19: a first try at ``ceil(delta) + bmax``
    itself fell short at 2 BDP and cost a whole chain before the chain of ``wmax``)."""
    return int(min(scenario.wmax, max(2, math.ceil((math.ceil(scenario.epoch - 1e-9) + scenario.bmax) / 2))))


def next_window(w: int, wmax: int, shares: np.ndarray, share: float, margin: int, tail: float) -> int:
    """The next cap after ``w`` fell short (its ``share`` at windows ``W >= w - margin`` above
    ``tail``).  Below ``w - margin`` the capped chain's time per window ``shares`` is the full
    chain's (the two coincide there); its logarithm over the fifth of the windows below that is
    fitted by a parabola (a straight line where the fit bends up), and the next cap is the
    smallest whose share by that fit is ``tail / 1000``, its distance from ``w`` plus 15 %;
    doubled where no decay shows; the scenario's ``wmax`` where the cap would be within a tenth
    of it (a third chain would cost more than the chain of ``wmax``)."""
    top = w - margin - 1
    lo = max(1, top - max(8, w // 5))
    x = np.arange(lo, max(top, lo - 1) + 1, dtype=float)
    y = np.asarray(shares[lo:lo + x.size], dtype=float)
    ok = y > 0.0
    nxt = 2 * w
    if ok.sum() >= 3 and share > tail:
        X, Y = x[ok], np.log(y[ok])
        c2, c1, c0 = np.polyfit(X, Y, 2)
        if c2 > 0.0:
            c2 = 0.0
            c1, c0 = np.polyfit(X, Y, 1)
        if c1 + 2.0 * c2 * top < 0.0:
            grid = np.arange(top + 1, wmax + margin + 2, dtype=float)
            fit = np.exp(np.minimum(c0 + c1 * grid + c2 * grid * grid, 0.0))
            beyond = np.cumsum(fit[::-1])[::-1]         # the fitted share at W >= grid[i]
            below = np.flatnonzero(beyond <= tail / 1000.0)
            nxt = w + int(math.ceil(1.15 * (grid[below[0]] + margin - w))) if below.size else wmax
    nxt = max(nxt, w + 1)
    return wmax if nxt >= 0.9 * wmax else nxt


def _window_search(scenario: Scenario, method: str, tol: float, progress: bool, tail: float) -> AnalysisResult:
    """:func:`analyze` with ``window_tail``: the chains of caps ``w = first_window, next_window, ...``
    until the share of time at the cap is at most ``tail`` or ``w`` is ``wmax`` (docs/model.md
    sec. 19).  Each rejected chain's skeleton leaves the cache before the next is built."""
    from .skeleton import _CACHE

    wmax = scenario.wmax
    # TCP alone loses before its window passes the pipe and the buffer by a few increments: its
    # enumeration reaches no window beyond, whatever wmax, so a smaller cap saves nothing [choice]
    w = wmax if scenario.feedback == "none" else first_window(scenario)
    tries = []
    info: dict = {}
    while True:
        sub = scenario if w >= wmax else replace(scenario, wmax=w)
        if not WARM_START:
            info = {}
        r = _analyze(sub, method, tol, progress, info)
        tries.append({"wmax": int(w), "states": int(r.n_states), "cap_share": float(r.window_cap_share),
                      "seconds": float(r.build_seconds + r.assemble_seconds + r.solve_seconds),
                      "prediction": float(r.prediction)})
        if w >= wmax or r.window_cap_share <= tail:
            break
        _CACHE.pop((sub.structure_key(), sub.max_states), None)   # free the rejected chain
        w = next_window(w, wmax, info["window_shares"], r.window_cap_share, info["window_margin"], tail)
    desc = {**r.scenario, "wmax": int(wmax), "window_tail": tail, "window_solved": int(w), "window_tries": tries}
    return replace(r, scenario=desc)


#: a bound on the wrong side of the prediction by at most this (relative) is rounding: the three rewards
#: coincide where no cap acts (e.g. ``W_max`` 1), and their sums may then differ in the last bit
ORDER_ROUNDING = 1e-12


def ordered_bounds(eff: dict) -> None:
    """``conservative <= prediction <= optimistic`` where a bound crosses the prediction by rounding only
    (:data:`ORDER_ROUNDING`); a larger crossing is left as it is (and would show)."""
    p = eff["prediction"]
    if p < eff["conservative"] <= p * (1.0 + ORDER_ROUNDING):
        eff["conservative"] = p
    if p * (1.0 - ORDER_ROUNDING) <= eff["optimistic"] < p:
        eff["optimistic"] = p


def solved_skeleton(scenario: Scenario, sk):
    """The skeleton :func:`analyze` solves for ``scenario`` from its build ``sk``: with the timer cycle, TCP
    alone's loss in slow start and go-back-N's burst (docs/model.md secs. 15, 15b) and an outage in its slow
    start (sec. 15a), and the timeout cycle that waits out an outage (sec. 15c); ``sk`` itself otherwise."""
    Q = scenario.rate_matrix
    if scenario.loss_cycle == "timer" and scenario.feedback == "none":
        sk = with_go_back_n_burst(sk, sk.with_slow_start_loss(Q), Q)
        if scenario.service is not None:
            sk = with_slow_start_outage(sk, Q)
    if scenario.loss_cycle == "timer" and scenario.service is not None:
        sk = with_outage_wait(sk, Q)
    return sk


def _analyze(scenario: Scenario, method: str, tol: float, progress: bool, info: dict | None = None) -> AnalysisResult:
    t0 = time.perf_counter()
    sk = skeleton_for(scenario, progress=progress)
    t_build = time.perf_counter() - t0
    Q = scenario.rate_matrix
    sk = solved_skeleton(scenario, sk)
    sol = None
    t_asm = 0.0
    if sk.n_levels > 2 and method in ("structured", "structured-direct"):
        # K > 2: K^2 regeneration targets per loss entry make P large; solve it in factored form
        start = None
        if info is not None and info.get("events") is not None:   # sec. 19: the previous cap's law
            start = event_start(info["events"], info["events_mmax"], sk)
        sol, nnz = structured_matrix_free(sk, Q, method=method, tol=tol, progress=progress, start=start)
    if sol is None:
        t0 = time.perf_counter()
        P = sk.transition_matrix(Q)
        t_asm = time.perf_counter() - t0
        sol = stationary_distribution(sk, Q, method=method, tol=tol, P=P, progress=progress)
        nnz = int(P.nnz)
    pi = sol.pi
    drain_queue = drain_source = None
    if scenario.loss_cycle in ("drain", "timer"):    # docs/model.md secs. 14-15: longer timeout cycles
        rewards = sk.rewards(Q, drain=True, timer=scenario.loss_cycle == "timer")
        if scenario.duplicates == "go-back-n":    # sec. 15d: the segments sent again are not new data
            for k in ("prediction", "conservative"):
                rewards[k] = np.maximum(rewards[k] - sk.duplicates, 0.0)
        dur = sk.u + sk.p_loss * rewards.pop("drain_extra")
        eu = float(pi @ dur)
        drain_queue = rewards.pop("drain_queue")
        drain_source = rewards.pop("drain_source", None)
        if scenario.feedback != "none" and scenario.loss_cycle == "timer":   # sec. 13: the backlog held
            drain_queue, held_source = abr_held_backlog(sk, Q, timer=True)
            drain_source = drain_source + held_source    # rewards' timer cycle over ABR: its slow-start pairs
    else:
        rewards = sk.rewards(Q)
        dur = sk.u
        eu = float(pi @ dur)
        if scenario.feedback == "none":
            # docs/model.md sec. 13: the queue a fast recovery, or a timeout, holds and drains after
            # the loss interval (and the timeout's slow start)
            drain_queue = sk.recovery_queue(Q)
        else:
            # sec. 13: over ABR the backlog of both buffers is held while the ACK clock runs, then drains
            # (a timeout), or PRR takes it down (a fast recovery); the timeout's slow-start pairs wait in A
            drain_queue, drain_source = abr_held_backlog(sk, Q, timer=False)
            if sk.recovery is None:
                drain_source = drain_source + slow_start_source(sk, Q)
    delta = scenario.epoch      # the chain's round trip (docs/model.md sec. 3b)
    cap = scenario.mean_capacity
    thr = {k: float(pi @ v) / (eu * delta) for k, v in rewards.items()}
    desc = {"delta": scenario.delta, "bmax": scenario.bmax, "psi": scenario.psi,
            "rate_ratio": scenario.rate_ratio, "wmax": scenario.wmax,
            "feedback": scenario.feedback, "source_rate": scenario.source_rate,
            "bmax_counts_service": scenario.bmax_counts_service,
            "ack_clock": scenario.ack_clock, "tcp": scenario.tcp, "loss_cycle": scenario.loss_cycle,
            "switch_time": scenario.switch_time}
    if scenario.switch_time != "epoch":
        desc["switch_phases"] = scenario.switch_phases
    if scenario.feedback == "effcap":   # docs/model.md sec. 20: EFFCAP's parameters and its history chain
        desc.update(effcap_m=scenario.effcap_m, effcap_n=scenario.effcap_n, history_states=scenario.n_levels)
    if scenario.round_trip != "propagation":   # docs/model.md sec. 3b: the chain's epoch
        desc["round_trip"] = scenario.round_trip
        desc["epoch"] = scenario.epoch
    if scenario.duplicates != "none":   # docs/model.md sec. 15d
        desc["duplicates"] = scenario.duplicates
    if scenario.ca_increment != "binomial":   # docs/model.md sec. 18; the paper's coins need no mention
        desc["ca_increment"] = scenario.ca_increment
    if scenario.capacity is not None:  # the normalised levels and the chain per round trip
        desc["capacity_levels"] = list(scenario.levels)
        desc["capacity_rate_matrix"] = Q.tolist()
    eff = {k: thr[k] / cap for k in ("optimistic", "conservative", "prediction")}
    ordered_bounds(eff)
    clipped = {k: (v if v > 1.0 else None) for k, v in eff.items()}   # unclipped value, None if <= 1
    occ = dict(_kept(sk, "occupancy", sk.occupancy_rewards))   # its arrays are not changed in place
    if drain_queue is not None:
        occ["queue"] = occ["queue"] + drain_queue
    if drain_source is not None:
        occ["source"] = occ["source"] + drain_source
    mean_q = float(pi @ occ["queue"]) / (eu * delta)
    mean_a = float(pi @ occ["source"]) / (eu * delta)
    thr_pred = min(thr["prediction"], cap)
    fr_share = None
    if sk.recovery is not None:
        p_all = float(pi @ sk.p_loss)
        fr_share = min(max(float(pi @ sk.recovery[0]) / p_all, 0.0), 1.0) if p_all > 0 else 0.0
    if scenario.service is not None:
        desc["service_patterns"] = [len(w) for w in scenario.service.weights]
    shares, cap_share, margin = window_shares(sk, pi, dur, eu, scenario.wmax)
    if info is not None:
        info.update(window_shares=shares, window_margin=margin, events=loss_event_law(sk, pi), events_mmax=sk.mmax,
                    pi=pi)
    return AnalysisResult(
        scenario=desc,
        optimistic=min(eff["optimistic"], 1.0),
        conservative=min(eff["conservative"], 1.0),
        prediction=min(eff["prediction"], 1.0),
        optimistic_eq18=thr["eq18"] / cap,
        eq18_above_capacity=bool(thr["eq18"] / cap > 1.0),
        throughput_optimistic=min(thr["optimistic"], cap),
        throughput_conservative=min(thr["conservative"], cap),
        mean_capacity=cap,
        loss_probability=min(max(float(pi @ sk.p_loss), 0.0), 1.0),
        mean_cycle_length=eu,
        n_states=sk.n_states,
        nnz=nnz,
        residual=sol.residual,
        method=sol.method,
        build_seconds=t_build,
        assemble_seconds=t_asm,
        solve_seconds=sol.seconds,
        clipped=clipped,
        fast_recovery_share=fr_share,
        mean_queue=mean_q,
        mean_source_buffer=mean_a,
        mean_queueing_delay=mean_q / thr_pred if thr_pred > 0 else float("inf"),
        mean_source_delay=mean_a / thr_pred if thr_pred > 0 else float("inf"),
        mean_waiting_delay=max(mean_q - thr_pred / cap, 0.0) / thr_pred if thr_pred > 0 else float("inf"),
        window_cap_share=cap_share,
    )


def sweep_psi(scenario: Scenario, psis: Iterable[float], method: str = "structured",
              progress: bool = False):
    """Analyse ``scenario`` at each psi; returns a tidy pandas DataFrame (one row per psi).

    The psi-independent skeleton is built once; ``progress=True`` shows a tqdm bar.
    """
    import pandas as pd

    if progress:  # tqdm.auto warns in Jupyter without ipywidgets, even for a disabled bar
        from tqdm.auto import tqdm
    else:
        from tqdm import tqdm

    if not isinstance(scenario, Scenario):
        raise ValueError(f"scenario={scenario!r} is invalid: must be a tcpabr_model.markov.Scenario")
    if scenario.capacity is not None:
        raise ValueError("capacity is invalid for sweep_psi: a K-level model has no psi; analyse each "
                         "model with analyze()")
    if isinstance(psis, (str, bytes)) or not isinstance(psis, Iterable):
        raise ValueError(f"psis={psis!r} is invalid: must be a non-empty sequence of real numbers in [1, "
                         f"{MAX_PSI:g}] (e.g. [2, 5, 20])")
    psis = list(psis)
    if not psis:
        raise ValueError("psis=[] is invalid: give at least one psi >= 1")
    for i, psi in enumerate(psis):   # all of them before the first (slow) analysis
        check_real(f"psis[{i}]", psi, 1.0, MAX_PSI)
    rows = []
    for psi in tqdm(psis, disable=not progress, desc="psi sweep", unit="chain"):
        r = analyze(scenario.with_psi(float(psi)), method=method)
        row = {k: v for k, v in r.to_dict().items() if k != "scenario"}
        row.update(r.scenario)
        rows.append(row)
    return pd.DataFrame(rows)


def slow_start_source(sk, rates) -> np.ndarray:
    """III-B.4's cycle over ABR, timeout-only (docs/model.md sec. 13): the slow start's pairs in the
    segmentation buffer, :meth:`~.skeleton.Skeleton.slow_start_queue` on the rate chain ``rates``, as
    the timer cycle adds them to ``R_A``, over the cycle's ``L`` rounds (not the round of ``m``)."""
    return sk.slow_start_queue(sk.drain_sums(sk.chain(rates, None), sk._served(), 8), False)


def abr_loss_drain(sk) -> np.ndarray:
    """III-B.4's cycle over ABR (docs/model.md sec. 13): ``p(x) B_max^2 r / 2``, the bottleneck queue,
    full at the loss interval's end, draining at the loss interval's level (service time ``r``) once
    the source's supply falls after the loss; a lower bound (no hold while the segmentation buffer's
    backlog keeps the source sending).  Used for ``tcp='sack'``'s timeouts (their share of ``p``,
    :func:`abr_held_backlog`); the timeout-only TCP's cycles hold the backlog first."""
    key = sk.scenario_key
    r = float(key[0]) / np.maximum(sk._served()[sk.states[:, 3]], 1.0)
    return sk.p_loss * 0.5 * float(key[1]) ** 2 * r


def abr_held_backlog(sk, rates, timer: bool) -> tuple[np.ndarray, np.ndarray]:
    """Over ABR, a timeout cycle's bottleneck queue and segmentation buffer after its loss interval,
    packets x time units per state (docs/model.md sec. 13, "Over ABR, the backlog held"): the
    segmentation buffer ends the loss interval at ``a_end = max(a + d - n_s, 0)`` (eq. 10 with its
    ``N`` left out, ``n_s`` the source's sends per interval), and both buffers are held while the ACK
    clock runs and then drain (:func:`.service.abr_held_occupancy`) up to the retransmission's service:
    epoch 3 in III-B.4's cycle, ``max(T_a + 3, T_e)`` in the timer cycle.  The source term also
    carries the loss interval's part that ``occupancy_rewards`` leaves out: its trapezoid is ``Delta
    (a + a_end) / 2``, where that rule took the buffer to drain to 0 (``Delta a / 2``)."""
    from .estimate import _kernel_args
    from .service import abr_held_occupancy, service_curves

    key = sk.scenario_key
    delta, bmax = float(key[0]), float(key[1])
    served, P = sk._served(), sk.chain(rates, None)
    C = sk.drain_sums(P, served, 8)
    s_vals = np.asarray(_kernel_args(key)[6], dtype=float)
    with np.errstate(divide="ignore"):
        src = np.where(np.isfinite(s_vals) & (s_vals > 0), np.floor(delta / s_vals + 1e-9), 0.0)
    st = sk.states
    a_end = np.maximum(st[:, 0] + st[:, 2] - src[st[:, 4]], 0.0).astype(float)
    curves = service_curves(key[7], key[0])
    loss_interval = 0.5 * delta * sk.p_loss * a_end
    if sk.recovery is not None:   # tcp='sack': fast recoveries with PRR; its timeouts drain (abr_loss_drain)
        from .service import abr_recovery_occupancy, recovery_expectations

        p_fr = sk.recovery[0]
        ahead, wbar = recovery_expectations(st[:, 1], sk.recovery, sk.recovery_j)
        q, a = abr_recovery_occupancy(C, P, st[:, 3], ahead, wbar, a_end, p_fr, served, bmax, delta,
                                      sk.recovery_room(), curves)
        to_share = np.divide(np.maximum(sk.p_loss - p_fr, 0.0), sk.p_loss, out=np.zeros(sk.n_states),
                             where=sk.p_loss > 0)
        return q + to_share * abr_loss_drain(sk), a + loss_interval
    t_a, _, t_e = sk.recovery_times(C)
    room = np.maximum(t_a + 3.0, t_e) - 1.0 if timer else np.full(sk.n_states, 2.0)
    q, a = abr_held_occupancy(sk.p_loss, st[:, 3], a_end, t_a, room, P, served, src, bmax, curves)
    return delta * q, delta * a + loss_interval
