"""The paper's question on a measured link: analysis on a fitted chain, simulation on the
fitted chain, simulation replaying the trace itself (issue 15 item 6).

One *point* is a trace, a round trip, a buffer and a feedback scheme
(``'none'`` = TCP alone, ``'instcap'``, ``'effcap'``).  :func:`study_point` returns

``analysis``
    the Markov renewal band ``[conservative, optimistic]`` (seed 004 Sec. III, eq. 18 and
    the conservative bound) of the K-state engine on the chain fitted at epoch = RTT (the
    embedding of assumption III-B.1), for TCP alone and INSTCAP; EFFCAP's chain (the last
    M + N - 1 levels, docs/model.md sec. 20) is up to K^(M + N - 2) times INSTCAP's on a
    fitted link, so its analysis here is ``None`` with the reason;
``fitted``
    the cell simulator driven by the fitted chain (:class:`tcpabr_model.sim.Scenario` with
    ``capacity=model``);
``trace``
    the cell simulator replaying the trace's delivery opportunities (random start per
    replication, repeated as Mahimahi does).

Units [choice]: one packet is one Mahimahi opportunity, 1500 bytes = a 1460-byte segment
and 40 bytes of TCP/IP headers (``payload_bytes=1460``).  Efficiency is throughput over the
mean available capacity.  For the simulations it is ``efficiency_wire`` (over ABR the frames
count whole on the wire: the cell tax 1500/1696 is not charged), which is the analysis'
definition (packets over capacity in packets).  The buffer is in packets (over ATM
``bmax x 32`` cells), the window ``wmax`` in packets.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace

import numpy as np

from ._validate import check_choice, check_int, check_real

__all__ = ["StudyPoint", "study_point", "fit_for_rtt", "window_packets", "analysis_band", "lift_outage",
           "LinkFit", "fit_link", "analyze_link", "LinkAnalysis", "PAYLOAD_BYTES", "FEEDBACKS",
           "trace_halves", "link_scenario", "fit_labels", "LINK_LOSS_CYCLE", "LINK_CA_INCREMENT", "LINK_WINDOW_TAIL",
           "link_loss_cycle", "link_validity", "transmission_share",
           "SLOW_DRAIN_STRAIN", "INSTCAP_TIMINGS", "feedback_timing", "effcap_round_trip"]

PAYLOAD_BYTES = 1460    # + 40 B TCP/IP = 1500 B: one Mahimahi delivery opportunity
FEEDBACKS = ("none", "instcap", "effcap")
#: the timeout cycle of a measured link's analysis (timeout-only TCP): the drained cycle in
#: continuous time (docs/model.md sec. 15), measured closer to a simulation of the very link the
#: chain models than III-B.4's (docs/traces.md sec. 7.2i); ``tcp='sack'`` keeps ``'paper'``
LINK_LOSS_CYCLE = "timer"
#: the congestion-avoidance growth of a measured link's analysis: the ACK counter (docs/model.md sec. 18),
#: the simulated TCP's; on the study's 58 common points it predicts as the paper's coins do (median change
#: 0.4 %, the same counts) at 2.3 times less analysis time (docs/traces.md sec. 7.2n)
LINK_CA_INCREMENT = "counter"
#: the window search of a measured link's analysis (:func:`tcpabr_model.markov.analyze`'s
#: ``window_tail``): its window cap, twice the peak pipe and the buffer (:func:`window_packets`), is
#: far above where the window goes, and the chain of a cap the window comes near at most 1e-12 of the
#: time gives the same numbers (docs/model.md sec. 19) at a fraction of the states
LINK_WINDOW_TAIL = 1e-12


def link_loss_cycle(loss_cycle: str | None, tcp: str = "timeout-only") -> str:
    """``loss_cycle`` as given, or the measured-link default: :data:`LINK_LOSS_CYCLE` for the
    timeout-only TCP, ``'paper'`` with fast recovery (the continuous cycles are derived for
    timeouts only)."""
    if loss_cycle is not None:
        return loss_cycle
    return LINK_LOSS_CYCLE if tcp == "timeout-only" else "paper"


@dataclass(frozen=True)
class StudyPoint:
    """One point of the study; efficiencies are dimensionless (see the module docstring)."""

    rtt: float                      # seconds
    bmax: int                       # packets
    wmax: int                       # packets
    feedback: str
    states: int                     # K of the fitted chain
    analysis_conservative: float | None
    analysis_optimistic: float | None
    analysis_note: str              # states and seconds, or why there is no analysis
    fitted: float
    fitted_half_width: float
    trace: float
    trace_half_width: float

    @property
    def fitted_rel_error(self) -> float:
        """(fitted - trace) / trace: how far the Markov fit's simulation is from the replay."""
        return (self.fitted - self.trace) / self.trace if self.trace else float("nan")

    def to_dict(self) -> dict:
        d = asdict(self)
        d["fitted_rel_error"] = self.fitted_rel_error
        return d


def window_packets(peak_rate: float, rtt: float, bmax: int) -> int:
    """Receiver window [choice]: twice what the pipe at the peak level and the buffer hold
    (at least 16 packets), so that it limits the analysis' chain and nothing else."""
    return max(16, int(math.ceil(2.0 * (peak_rate * rtt + bmax))))


def fit_for_rtt(trace, rtt: float, **kwargs):
    """The chain of the study: :func:`tcpabr_model.capacity.fit_trace` at ``epoch = rtt``."""
    from .capacity import fit_trace

    return fit_trace(trace, epoch=check_real("rtt", rtt, 0.001, 100.0), **kwargs)


@dataclass(frozen=True, eq=False)
class LinkFit:
    """What the analysis knows of a measured link at one round trip (issue 23): the chain
    fitted at epoch = RTT (``fit``, :func:`fit_for_rtt`) and, per level, weighted patterns of
    the opportunity times inside an epoch (``service``,
    :func:`tcpabr_model.capacity.fit_patterns`).  ``mean_rate``: the fitted trace's mean
    capacity, packets per second (the efficiency's denominator in the study)."""

    fit: object
    service: object
    rtt: float
    mean_rate: float
    #: with ``round_trip='transmission'`` (:func:`fit_link`): the round-trip propagation delay, seconds, and
    #: the transmission share ``tx`` (:func:`transmission_share`) by which the epoch ``rtt`` exceeds it
    propagation: float | None = None
    transmission: float = 0.0

    @property
    def model(self):
        return self.fit.model

    def describe(self) -> dict:
        m = self.fit.model
        extra = ({} if self.propagation is None else
                 {"round_trip": "transmission", "propagation_s": float(self.propagation),
                  "transmission_share": float(self.transmission)})
        return {"states": int(m.n_levels), "epoch_s": float(self.rtt), **extra,
                "levels_packets_per_s": [float(x) for x in m.levels],
                "occupancy": [float(x) for x in m.stationary],
                "patterns_per_level": [int(len(w)) for w in self.service.weights],
                "pattern_mean_packets_per_s": [float(x) for x in self.service.mean_rates],
                "mean_packets_per_s": float(self.mean_rate),
                "regimes": int(getattr(self.fit, "regimes", 1)), "order": int(getattr(self.fit, "order", 1)),
                # the regimes' smoothing window, None with one regime (it was 0.0; a CLI audit)
                "regime_window_s": (float(self.fit.regime_window) if getattr(self.fit, "regimes", 1) > 1 else None)}


def fit_labels(fit, trace, epoch: float) -> np.ndarray:
    """The state of each whole epoch of ``trace`` under ``fit`` (the trace it was fitted to):
    with one regime the nearest level (:func:`tcpabr_model.capacity.epoch_labels`: the fit's
    own labels up to k-means' last reassignment, kept as it was); with regimes the fit's
    labels (a level value is not enough to name a state), and so with ``order=2`` (pairs)."""
    from .capacity import epoch_labels

    one = getattr(fit, "regimes", 1) == 1 and getattr(fit, "order", 1) == 1
    return epoch_labels(trace, epoch, fit.model.levels) if one else fit.labels


def transmission_share(link: LinkFit) -> float:
    """``tx``: the occupancy-weighted mean over the serving levels of ``min(1, 1 / (c_k rtt))``, the gap
    between two delivery opportunities at a level, in round trips of the fit (docs/traces.md sec. 7.2y)."""
    return _transmission_share(link.fit.model, link.rtt)


def _transmission_share(m, epoch: float) -> float:
    occ = np.asarray(m.stationary, dtype=float)
    per = np.asarray(m.levels, dtype=float) * epoch
    s = per > 0
    return float((occ[s] * np.minimum(1.0, 1.0 / per[s])).sum() / occ[s].sum()) if s.any() else 0.0


def fit_link(trace, rtt: float, *, states: int | None = None, patterns: int = 8, outage: bool = True,
             regimes: int = 1, regime_window: float | None = None, order: int = 1,
             round_trip: str = "propagation") -> LinkFit:
    """The chain at epoch = ``rtt`` (:func:`fit_for_rtt`, K by the effective-capacity
    criterion unless ``states``) and ``patterns`` within-epoch patterns per level of it.
    ``regimes > 1``: the two-timescale regime x level chain
    (:func:`tcpabr_model.capacity.fit_trace`), patterns per (regime, level) state.  ``order=2``:
    the second-order chain (states: pairs of consecutive levels, docs/traces.md sec. 7.2x), each
    pair with the patterns of its current level, fitted as with ``order=1``.

    ``round_trip='transmission'`` (docs/traces.md sec. 7.2y): the epoch is a packet's round trip
    through the empty pipe, the propagation ``rtt`` plus the wait for its delivery opportunity: the
    chain is fitted at ``rtt`` once, for ``tx`` (:func:`transmission_share`), and again at epoch
    ``rtt (1 + tx)`` with the same number of levels **[choice: one gap between opportunities at the
    level, averaged over the time at each serving level]**; ``LinkFit.rtt`` is that epoch,
    ``propagation`` the given ``rtt``.  The default ``'propagation'`` is eq. 5's epoch, unchanged."""
    from .capacity import epoch_labels, expand_patterns, fit_patterns

    rtt = check_real("rtt", rtt, 0.001, 100.0)
    check_choice("round_trip", round_trip, ("propagation", "transmission"))
    if round_trip == "transmission":
        first = fit_for_rtt(trace, rtt, states=states, outage=outage, regimes=regimes, regime_window=regime_window,
                            order=order)
        if states is None:    # the first fit's K (with order=2 of its first-order levels, fit_trace's states)
            base = getattr(first, "base_of_state", ())
            states = int(max(base)) + 1 if base else int(first.model.n_levels)
        tx = _transmission_share(first.model, rtt)
        longer = fit_link(trace, rtt * (1.0 + tx), states=states, patterns=patterns, outage=outage, regimes=regimes,
                          regime_window=regime_window, order=order)
        return replace(longer, propagation=rtt, transmission=tx)
    fit = fit_for_rtt(trace, rtt, states=states, outage=outage, regimes=regimes, regime_window=regime_window,
                      order=order)
    per = check_int("patterns", patterns, 1, 1000)
    if fit.order == 2:   # the first-order levels' patterns, the same epochs as order=1 gives them
        base = np.asarray(fit.base_of_state)
        levels = np.zeros(int(base.max()) + 1)
        levels[base] = np.asarray(fit.model.levels)
        service = expand_patterns(fit_patterns(trace, rtt, epoch_labels(trace, rtt, levels), per_level=per), base)
    else:
        service = fit_patterns(trace, rtt, fit_labels(fit, trace, rtt), per_level=per)
    return LinkFit(fit=fit, service=service, rtt=rtt, mean_rate=float(trace.mean_rate))


@dataclass(frozen=True)
class LinkAnalysis:
    """The Markov renewal analysis of a fitted link: efficiencies over the link's mean
    capacity (packets served over packets the link could serve), the band and the point
    estimate, and the assumptions it rests on (``validity``).  ``mean_queueing_delay_s`` and
    ``mean_source_delay_s``: the mean time a delivered packet spends in the bottleneck (its
    service included) and in the ABR segmentation buffer (0 for TCP alone), seconds, by
    Little's law on the chain's occupancies (docs/model.md sec. 13; the propagation delay
    comes on top; None where the throughput is 0).  ``window_solved``: the window cap of the
    chain solved (``wmax`` or, with ``window_tail``, a smaller cap at which the window spends
    ``window_cap_share`` of the time, at most the tail; docs/model.md sec. 19; ``window_tries``: the
    caps tried, with their states, shares, seconds and predictions)."""

    prediction: float
    conservative: float
    optimistic: float
    feedback: str
    rtt: float
    bmax: int
    wmax: int
    n_states: int
    seconds: float
    model: dict
    validity: dict
    tcp: str = "timeout-only"
    loss_cycle: str = "paper"
    ca_increment: str = LINK_CA_INCREMENT
    mean_queueing_delay_s: float | None = None
    mean_source_delay_s: float | None = None
    window_solved: int | None = None
    window_cap_share: float | None = None
    window_tries: list | None = None

    def to_dict(self) -> dict:
        return asdict(self)


#: the occupancy share of levels at which a full buffer drains in more than one round trip above
#: which :func:`link_validity` calls the fixed-RTO timeout cycle strained (docs/traces.md sec.
#: 7.2i: above 0.4 the prediction was a median +22 to +24 % above a simulation of the same
#: link with III-B.4's cycle and +13.5 to +16 % with the timer cycle; below 0.4 -5 to +10 %)
#: **[choice, set from that measurement]**
SLOW_DRAIN_STRAIN = 0.4


def link_validity(link: LinkFit, bmax: int) -> dict:
    """How well the link fits the analysis' assumptions (docs/model.md sec. 11), in numbers:
    the mean sojourn of each level in round trips (the chain steps once per RTT: a level
    left after about one RTT strains assumption III-B.1), the share of time in outage
    (epochs that serve nothing), how much the opportunities inside an epoch vary (mean
    over epochs of the largest lag of the cumulative service behind an even spread, in
    packets, against the buffer), what the patterns leave out (the trace's own
    autocorrelation beyond one epoch is the chain's), and ``slow_drain_share``: the time at
    levels where a full buffer takes more than a round trip to drain (``c_k rtt < bmax``,
    outages included), where the fixed RTO of two round trips fires again behind the queue.
    The criteria are the link's, the same for TCP alone and INSTCAP (the INSTCAP error once put
    on outages was the feedback's timing, docs/model.md sec. 16)."""
    from .capacity import level_sojourns

    m = link.fit.model
    occ = np.asarray(m.stationary)
    base = getattr(link.fit, "base_of_state", ())
    if base:   # second order: the sojourn of a level, not of a pair
        sojourn = level_sojourns(m, base)[np.asarray(base)]
    else:
        sojourn = 1.0 / (1.0 - np.clip(np.diag(np.asarray(m.transition)), 0.0, 1.0 - 1e-12))
    outage = float(sum(o for o, c in zip(occ, m.levels) if c == 0.0))
    lags = []
    for k, (ok, wk) in enumerate(zip(link.service.offsets, link.service.weights)):
        for o, w in zip(ok, wk):
            if o.size:
                # packets the pattern is behind an even spread at its worst point: the i-th of an
                # even spread is due at i e / n; how many of the pattern's have come by then
                i = np.arange(1, o.size + 1)
                behind = max(0.0, float(np.max(i - np.searchsorted(o, i * (link.rtt / o.size), side="right"))))
                lags.append((occ[k] * w, behind))
    wsum = sum(x for x, _ in lags)
    mean_lag = sum(x * y for x, y in lags) / wsum if wsum > 0 else 0.0
    strained = []
    if float(np.dot(occ, sojourn)) < 2.0:
        strained.append("levels last about one round trip on average (III-B.1: the level is held for the whole RTT)")
    if outage > 0.05:
        strained.append(f"{outage:.0%} of epochs serve nothing (the timer is modelled at the round-trip "
                        "granularity: a timeout after two round trips without an ACK, and for TCP alone after "
                        "the first outage of a slow start, docs/model.md sec. 15a)")
    if mean_lag > 0.5 * bmax:
        strained.append("the service inside an epoch lags an even spread by more than half the buffer")
    # a full buffer takes more than a round trip to drain: the round trip exceeds the fixed RTO of two
    slow = float(sum(o for o, c in zip(occ, m.levels) if c * link.rtt < bmax))
    if slow > SLOW_DRAIN_STRAIN:
        strained.append(f"at levels occupied {slow:.0%} of the time a full buffer takes more than a round trip to "
                        "drain, so a retransmission queued behind it outlives the fixed RTO of two round trips "
                        "(repeated and later-hole timeouts, go-back-N copies: not in the chain; the analysis is "
                        "then above a simulation of the same link, docs/traces.md sec. 7.2i)")
    return {"mean_sojourn_rtts": [float(x) for x in sojourn], "mean_sojourn_rtts_weighted": float(np.dot(occ, sojourn)),
            "outage_share": outage, "service_lag_packets": float(mean_lag), "buffer_packets": int(bmax),
            "slow_drain_share": slow,
            "lifted_or_clipped": "nothing lifted (outages are epochs that serve nothing)",
            "strained": strained}


def analyze_link(link: LinkFit, bmax: int, feedback: str, *, wmax: int | None = None,
                 max_states: int = 2_000_000, mcr: float = 0.0, tcp: str = "timeout-only",
                 loss_cycle: str | None = None, ca_increment: str | None = None,
                 window_tail: float | None = LINK_WINDOW_TAIL, effcap_m: int | None = None,
                 effcap_n: int | None = None, silence: str = "epochs", duplicates: str = "none") -> LinkAnalysis:
    """Prediction and band of TCP alone (``'none'``) or INSTCAP on a fitted link; ``tcp`` is
    the TCP of the chain (``'timeout-only'`` or ``'sack'``, docs/model.md sec. 12) and
    ``loss_cycle`` the length of its timeout cycles (``'paper'``, ``'drain'`` or ``'timer'``,
    secs. 14-15; default :func:`link_loss_cycle`: ``'timer'`` for the timeout-only TCP) and
    ``ca_increment`` its congestion-avoidance growth (``'binomial'``, eq. 1's coins, or
    ``'counter'``, docs/model.md sec. 18; default :data:`LINK_CA_INCREMENT`, the counter).
    ``window_tail``: :func:`tcpabr_model.markov.analyze`'s (default :data:`LINK_WINDOW_TAIL`: the
    chain of a smaller window cap where the window spends at most that share of the time near it,
    docs/model.md sec. 19; None: the chain of ``wmax`` itself).  ``feedback='effcap'`` with
    ``effcap_m``, ``effcap_n``: EFFCAP sampled once per round trip, the chain of the last M + N - 1
    fitted levels (docs/model.md sec. 20; up to K^(M + N - 2) times INSTCAP's states).  ``silence``: the
    chain's RTO for want of ACKs (:class:`tcpabr_model.markov.Scenario`'s, docs/model.md sec. 11b);
    ``duplicates``: whether go-back-N's copies after a timeout are off the credits (its, sec. 15d).

    Efficiencies are over the *trace's* mean capacity (the quantity ``tcpabr simulate
    --capacity-trace`` measures), computed from the engine's throughput in packets per
    time unit; the engine's own mean (the patterns' mean through the chain's stationary
    law) equals it up to the epochs the fit drops.
    """
    import time

    from .markov import analyze
    from .markov.analysis import ordered_bounds

    sc = link_scenario(link, bmax, feedback, wmax=wmax, max_states=max_states, mcr=mcr, tcp=tcp,
                       loss_cycle=loss_cycle, ca_increment=ca_increment, effcap_m=effcap_m, effcap_n=effcap_n,
                       silence=silence, duplicates=duplicates)
    bmax, wmax, cmax = sc.bmax, sc.wmax, float(np.max(link.fit.model.levels))
    t0 = time.perf_counter()
    r = analyze(sc, window_tail=window_tail)
    # throughput in packets per second over the trace's mean capacity
    scale = cmax / link.mean_rate
    eff = {k: min(1.0, v * scale) for k, v in (("prediction", r.prediction * r.mean_capacity),
                                                ("conservative", r.throughput_conservative),
                                                ("optimistic", r.throughput_optimistic))}
    ordered_bounds(eff)     # the three rescaled apart: a crossing by rounding is put right
    return LinkAnalysis(prediction=eff["prediction"], conservative=eff["conservative"], optimistic=eff["optimistic"],
                        feedback=feedback, rtt=link.rtt, bmax=bmax, wmax=wmax, n_states=r.n_states,
                        seconds=time.perf_counter() - t0,
                        model={**link.describe(), **({"instcap_timing": INSTCAP_TIMING_NOTE} if feedback == "instcap"
                                                     else {}),
                               **({"effcap_m": sc.effcap_m, "effcap_n": sc.effcap_n, "history_states": sc.n_levels}
                                  if feedback == "effcap" else {}),
                               **({"silence": silence} if silence != "epochs" else {}),
                               **({"duplicates": duplicates} if duplicates != "none" else {})},
                        validity=link_validity(link, bmax), tcp=sc.tcp, loss_cycle=sc.loss_cycle,
                        ca_increment=sc.ca_increment,
                        window_solved=int(r.scenario.get("window_solved", wmax)),
                        window_cap_share=r.window_cap_share, window_tries=r.scenario.get("window_tries"),
                        **{f"{k}_s": (float(getattr(r, k)) / cmax if np.isfinite(getattr(r, k)) else None)
                           for k in ("mean_queueing_delay", "mean_source_delay")})


def lift_outage(model, rtt: float):
    """``model`` (levels in packets/s) with every level below one packet per round trip
    raised to it: the chain the K-state engine can carry (:func:`analysis_band`)."""
    from .capacity import CapacityModel

    levels = np.maximum(np.asarray(model.levels, dtype=float), 1.0 / rtt)
    return CapacityModel(levels, transition=model.transition, epoch=model.epoch, time_unit=model.time_unit,
                         packet_bytes=model.packet_bytes)


def analysis_band(model, rtt: float, bmax: int, wmax: int, feedback: str, max_states: int = 2_000_000):
    """(conservative, optimistic, note) of the K-state engine on ``model`` (levels in packets
    per second, epoch = ``rtt`` s); (None, None, reason) where there is no analysis.

    **[choice]** The engine's service times are ``1 / c_k`` and it needs at least one packet
    per round trip at every level (``delta x c_k >= 1``), so an outage level (0) is lifted to
    one packet per round trip for the analysis only, and the note says so; the simulations
    keep the outage.
    """
    if feedback == "effcap":
        return None, None, ("EFFCAP is simulated: its history chain on a fitted link is up to K^(M + N - 2) "
                            "times INSTCAP's (docs/model.md sec. 20)")
    from .errors import ModelError
    from .markov import Scenario as MScenario, analyze

    delta = rtt * float(np.max(model.levels))   # the round trip in packet times at the peak level
    note = ""
    if float(np.min(model.levels)) < 1.0 / rtt:
        note = f"levels below 1 packet/RTT (outage) lifted to {1.0 / rtt:.0f} packets/s; "
        model = lift_outage(model, rtt)
    try:
        r = analyze(MScenario(delta=delta, bmax=bmax, wmax=wmax, feedback=feedback, capacity=model,
                              max_states=max_states))
    except (ValueError, ModelError, MemoryError) as e:
        return None, None, note + str(e)
    return r.conservative, r.optimistic, note + f"{r.n_states} states"


#: how the study's simulator times INSTCAP (docs/model.md sec. 16): ``'round-trip'`` (default) measures
#: the link over each round trip and applies it over the next (``interval = rtt``, ``feedback_delay =
#: 0``), the analysis' INSTCAP (III-A.8: the source rate of interval k is the link's rate in interval
#: k - 1); ``'testbed'`` keeps the simulator's defaults from the paper's testbed (``s = 30`` ms,
#: applied one round trip after its end), a feedback older by about ``rtt + s / 2``
INSTCAP_TIMINGS = ("round-trip", "testbed")
#: what :func:`analyze_link` says of its INSTCAP (``model['instcap_timing']``, ``tcpabr analyze --trace``)
INSTCAP_TIMING_NOTE = ("the source sends over each round trip at the link's mean rate of the round trip before "
                       "(III-A.8, docs/model.md sec. 16): tcpabr simulate --capacity-trace times INSTCAP so by "
                       "default (--interval RTT --feedback-delay 0)")


def feedback_timing(feedback: str, rtt: float, timing: str = "round-trip") -> dict:
    """The :class:`~tcpabr_model.sim.Scenario` fields (``interval``, ``feedback_delay``) of the study's
    INSTCAP at round trip ``rtt`` (seconds) under ``timing`` (:data:`INSTCAP_TIMINGS`); ``{}`` (the
    simulator's defaults) for the other feedbacks and for ``'testbed'``."""
    check_choice("instcap_timing", timing, INSTCAP_TIMINGS)
    if feedback == "instcap" and timing == "round-trip":
        return {"interval": float(rtt), "feedback_delay": 0.0}
    return {}


def effcap_round_trip(rtt: float, m: int, n: int) -> dict:
    """The :class:`~tcpabr_model.sim.Scenario` fields of EFFCAP(``m``, ``n``) sampled once per round trip and
    applied over the next, as :func:`analyze_link` analyses it (docs/model.md sec. 20): ``interval = rtt``,
    ``feedback_delay = 0``, ``m``, ``n``."""
    return {"interval": float(rtt), "feedback_delay": 0.0, "m": check_int("m", m, 1, 10_000),
            "n": check_int("n", n, 1, 10_000)}


def _simulation(capacity, rtt, bmax, wmax, feedback, replications, duration, seed, workers, variant="timeout-only",
                instcap_timing="round-trip", effcap=None, timing_rtt=None):
    """The study's simulation of one point (warm-up min(10 s, duration / 10); INSTCAP timed by
    :func:`feedback_timing`; with ``effcap=(m, n)``, EFFCAP sampled once per round trip as
    :func:`analyze_link` analyses it, :func:`effcap_round_trip`): the whole
    :class:`~tcpabr_model.sim.SimulationResult`.  ``timing_rtt``: the round trip that times the
    feedback, where it is not the propagation ``rtt`` (the chain's epoch, docs/traces.md sec. 7.2y)."""
    from .sim import Scenario, TcpConfig, simulate

    tr = rtt if timing_rtt is None else timing_rtt
    timing = (effcap_round_trip(tr, *effcap) if effcap is not None and feedback == "effcap"
              else feedback_timing(feedback, tr, instcap_timing))
    sc = Scenario(feedback=feedback, rtt=rtt, buffer_packets=bmax, payload_bytes=PAYLOAD_BYTES, capacity=capacity,
                  duration=duration, warmup=min(10.0, duration / 10.0), tcp=TcpConfig(wmax=wmax, variant=variant),
                  **timing)
    return simulate(sc, replications=replications, seed=seed, workers=workers)


def _simulate(capacity, rtt, bmax, wmax, feedback, replications, duration, seed, workers, variant="timeout-only",
              instcap_timing="round-trip", effcap=None, timing_rtt=None):
    r = _simulation(capacity, rtt, bmax, wmax, feedback, replications, duration, seed, workers, variant,
                    instcap_timing, effcap, timing_rtt)
    w = r.efficiency_wire
    return float(w.mean), float(w.half_width) if w.half_width is not None else float("nan")


def study_point(trace, fit, rtt: float, bmax: int, feedback: str, *, wmax: int | None = None,
                replications: int = 5, duration: float = 140.0, seed: int = 1, workers: int = 1,
                max_states: int = 2_000_000) -> StudyPoint:
    """Analysis and simulation on ``fit.model`` and simulation on ``trace`` at one point.

    Parameters
    ----------
    trace : tcpabr_model.capacity.Trace
    fit : tcpabr_model.capacity.TraceFit
        Usually :func:`fit_for_rtt` ``(trace, rtt)``.
    rtt : float
        Round-trip propagation delay, seconds.
    bmax : int
        Bottleneck buffer, packets.
    feedback : {'none', 'instcap', 'effcap'}
    wmax : int, optional
        Receiver window, packets (default :func:`window_packets`).
    replications, duration, seed, workers
        Of both simulations (duration in simulated seconds per replication).
    """
    check_choice("feedback", feedback, FEEDBACKS)
    rtt = check_real("rtt", rtt, 0.001, 100.0)
    bmax = check_int("bmax", bmax, 1, 1_000_000)
    model = fit.model
    peak = float(np.max(model.levels))
    wmax = window_packets(peak, rtt, bmax) if wmax is None else check_int("wmax", wmax, 1, 10**6)
    lo, hi, note = analysis_band(model, rtt, bmax, wmax, feedback, max_states)
    fm, fh = _simulate(model, rtt, bmax, wmax, feedback, replications, duration, seed, workers)
    tm, th = _simulate(trace, rtt, bmax, wmax, feedback, replications, duration, seed, workers)
    return StudyPoint(rtt, bmax, wmax, feedback, fit.states, lo, hi, note, fm, fh, tm, th)


def trace_halves(trace):
    """The two halves in time of ``trace`` (issue 23 item 4: fit on one, replay the other),
    each a :class:`~tcpabr_model.capacity.Trace` with its times re-based to start at 0.

    **[choice]** The split is at ``S``, the first opportunity time at or after half the
    period ``T`` (a split at a line, so nothing is added): the first half holds the lines in
    ``(0, S]`` (period ``S``; a line at time 0 is the same instant as ``T`` and joins the
    second half), the second the lines in ``(S, T]`` shifted by ``-S`` (period ``T - S``),
    each repeating on its own as Mahimahi repeats a trace.
    """
    from .capacity import Trace

    T = trace.period_ms
    u = (trace.times_ms - 1) % T + 1            # (0, T]; 0 counts as T, as bin_trace does
    u = np.sort(u)
    i = int(np.searchsorted(u, T / 2.0, side="left"))
    S = int(u[i])
    if S >= T:
        raise ValueError(f"{trace.name}: no opportunity in the first half of the period: cannot split it")
    first, second = u[u <= S], u[u > S] - S
    return (Trace(first, name=f"{trace.name} [0, {S / 1000:g} s]", packet_bytes=trace.packet_bytes),
            Trace(second, name=f"{trace.name} [{S / 1000:g}, {T / 1000:g} s] - {S / 1000:g} s",
                  packet_bytes=trace.packet_bytes))


@dataclass(frozen=True)
class FitJackknife:
    """:func:`jackknife_link`'s result: per part the prediction and band, and their jackknife standard errors."""

    blocks: int
    predictions: tuple
    conservative: tuple
    optimistic: tuple
    standard_error: float
    seconds: float
    conservative_se: float = 0.0
    optimistic_se: float = 0.0

    def to_dict(self) -> dict:
        return asdict(self)


def jackknife_link(trace, rtt: float, bmax: int, feedback: str, *, blocks: int = 5, wmax: int | None = None,
                   fit: dict | None = None, **analysis) -> FitJackknife:
    """How much the prediction owes to the part of ``trace`` the fit saw (docs/traces.md sec. 7.2zd):
    ``blocks`` fits (:func:`fit_link` with ``fit``'s arguments), each on ``trace`` less one of its
    consecutive blocks (:func:`tcpabr_model.capacity.trace_less_block`), each analysed by
    :func:`analyze_link` (``analysis``'s arguments) with the same ``bmax`` and ``wmax``; the
    standard errors (of the prediction and of each bound) are the delete-a-group jackknife's, ``sqrt((J -
    1) / J sum (x_j - mean x)^2)``; ``[conservative - 2 conservative_se, optimistic + 2 optimistic_se]`` is
    the band with the fit's uncertainty (docs/traces.md sec. 7.2zd).
    **[choices]** Each part's efficiency is over its own mean capacity (what its fit predicts); give
    ``wmax`` (the whole trace's window) so that only the link changes; K afresh unless ``fit`` has ``states``."""
    import time

    from .capacity import trace_less_block
    from .stats import jackknife_se

    blocks, t0, got = check_int("blocks", blocks, 2, 50), time.perf_counter(), []
    for j in range(blocks):
        part = trace_less_block(trace, j, blocks)
        try:
            got.append(analyze_link(fit_link(part, rtt, **(fit or {})), bmax, feedback, wmax=wmax, **analysis))
        except ValueError as e:   # say which part: the whole trace was fitted and analysed
            raise type(e)(f"jackknife part {j + 1} of {blocks} ({part.name}): {e}") from e
    x, lo, hi = (np.array([float(getattr(a, k)) for a in got]) for k in ("prediction", "conservative", "optimistic"))
    return FitJackknife(blocks, tuple(x.tolist()), tuple(lo.tolist()), tuple(hi.tolist()), jackknife_se(x),
                        time.perf_counter() - t0, conservative_se=jackknife_se(lo), optimistic_se=jackknife_se(hi))


def link_scenario(link: LinkFit, bmax: int, feedback: str, *, wmax: int | None = None,
                  max_states: int = 2_000_000, mcr: float = 0.0, tcp: str = "timeout-only",
                  loss_cycle: str | None = None, ca_increment: str | None = None, effcap_m: int | None = None,
                  effcap_n: int | None = None, silence: str = "epochs", duplicates: str = "none"):
    """The :class:`tcpabr_model.markov.Scenario` that :func:`analyze_link` solves: the round
    trip in packet times at the peak level (``delta = rtt x c_max``), the fitted chain and
    its within-epoch patterns; ``wmax`` by :func:`window_packets` unless given; ``mcr`` the
    INSTCAP source's minimum rate in packets per second (0: none; at most the chain's peak
    level); ``ca_increment`` the chain's congestion-avoidance growth (docs/model.md sec. 18;
    default :data:`LINK_CA_INCREMENT`).  For :func:`tcpabr_model.markov.estimate_chain` before
    an analysis."""
    from .markov import Scenario as MScenario

    check_choice("feedback", feedback, ("none", "instcap", "effcap"))
    bmax = check_int("bmax", bmax, 1, 1_000_000)
    m = link.fit.model
    cmax = float(np.max(m.levels))
    wmax = window_packets(cmax, link.rtt, bmax) if wmax is None else check_int("wmax", wmax, 1, 10**6)
    mcr = check_real("mcr", mcr, 0.0)
    if mcr > cmax:   # a minimum above the link's peak: the chain's rates are fractions of the peak
        raise ValueError(f"mcr={mcr!r} is invalid: must be in [0, {cmax:g}] packets per second (at most the "
                         f"peak level of the chain fitted at epoch {link.rtt:g} s)")
    if mcr > 0.0 and feedback == "none":
        raise ValueError(f"mcr={mcr!r} is invalid with feedback={feedback!r}: the minimum cell rate (packets/s) is "
                         "the INSTCAP or EFFCAP source's (give mcr=0)")
    return MScenario(delta=link.rtt * cmax, bmax=bmax, wmax=wmax, feedback=feedback, capacity=m,
                     service=link.service, max_states=max_states, mcr=min(mcr / cmax, 1.0), tcp=tcp,
                     loss_cycle=link_loss_cycle(loss_cycle, tcp),
                     ca_increment=LINK_CA_INCREMENT if ca_increment is None else ca_increment,
                     effcap_m=effcap_m, effcap_n=effcap_n, silence=silence, duplicates=duplicates)
