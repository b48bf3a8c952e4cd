"""Validated scenario for the Markov renewal analysis (Section III of seed 004).

Units: one *time unit* is the transmission time of one TCP packet at the bottleneck's
high rate (r0 = 1).  The low rate is ``rate_ratio`` packets per time unit (service time
r1 = 1 / rate_ratio).  ``delta`` is the round-trip propagation delay in time units,
``bmax`` the bottleneck buffer in packets (counting the packet in service), ``wmax``
the maximum TCP window in packets.

With ``capacity`` (a :class:`~tcpabr_model.capacity.CapacityModel`) the bottleneck follows
a K-level chain instead (docs/model.md, "K capacity states"): its levels are divided by
the largest one, so the time unit stays one packet time at the peak level, and its chain
is taken per round trip Delta.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from .._validate import check_choice, check_int, check_real
from .switching import SWITCH_TIMES

if TYPE_CHECKING:  # the capacity package is imported only when a model is given
    from ..capacity import CapacityModel, ServicePatterns

__all__ = ["Scenario", "switch_probability", "FEEDBACKS", "ACK_CLOCKS", "TCP_MODELS", "LOSS_CYCLES", "MAX_PSI",
           "SWITCH_TIMES", "CA_INCREMENTS", "ROUND_TRIPS"]

FEEDBACKS = ("instcap", "effcap", "none", "constant")
ACK_CLOCKS = ("at-epoch", "after-service", "spread")
#: the round trip the chain steps by: eq. 5's propagation delay Delta, or Delta plus one packet's
#: transmission at the high rate (docs/model.md sec. 3b)
ROUND_TRIPS = ("propagation", "transmission")
#: The TCPs the embedded chain models, named as the simulator's ``--variant``: the paper's
#: timeout-only TCP (III-A.7) and SACK with fast retransmit and PRR (docs/model.md sec. 12).
TCP_MODELS = ("timeout-only", "sack")
#: the timeout cycle's length: III-B.4 as printed, with the queue drained (docs/model.md sec. 14), or
#: that in continuous time, the timer restarted by the last ACK ahead of the loss (sec. 15)
LOSS_CYCLES = ("paper", "drain", "timer")
#: How congestion avoidance grows the window per round trip: eq. 1's coin per ACK (III-A.6, the paper's),
#: or an ACK counter, one packet per W ACKs as Linux, ns-3 and RFC 5681 do it (docs/model.md sec. 18)
CA_INCREMENTS = ("binomial", "counter")
#: when the fixed RTO expires for want of ACKs: after two intervals without one (sec. 11), or also where a
#: silence of two round trips spans one interval and the parts of its neighbours the patterns leave (sec. 11b)
SILENCES = ("epochs", "patterns")
#: the segments go-back-N sends again after a timeout: not counted (the paper's), or taken off the credits (sec. 15d)
DUPLICATES = ("none", "go-back-n")
#: Largest psi accepted; beyond it the embedded chain is numerically a constant link.
MAX_PSI = 1e9


def _pattern(P) -> tuple:
    """Where the matrix ``P`` is positive, as a tuple of row tuples of bools (a part of the skeleton's key)."""
    return tuple(tuple(bool(x) for x in row) for row in np.asarray(P) > 0)


def allowed_levels(key: tuple) -> np.ndarray | None:
    """``allow[S, R]`` of the structure ``key`` (:meth:`Scenario.structure_key`): whether a chain can be at
    level ``R`` after serving level ``S`` (docs/model.md sec. 10, "States never entered"); None where every
    pair is built (no pattern of zeros, or a constant source, whose ``S`` is always 0)."""
    return None if key[12] is None or key[4] == "constant" else np.array(key[12], dtype=np.bool_)


def switch_probability(psi: float) -> float:
    """Probability that the embedded rate chain changes state at an epoch ``t_k = k Delta``.

    Assumption III-B.1 embeds the modulating chain at multiples of Delta.  With mean
    sojourn ``tau = psi * Delta`` in each state and sojourns that are geometric in units
    of Delta, the per-epoch switch probability is ``p01 = p10 = 1 / psi``.  This needs
    ``psi >= 1`` (``psi = 1`` is the deterministic alternation); faster variation is
    outside the analysis and must be studied with the simulator (``tcpabr simulate``).
    """
    psi = check_real("psi", psi, 1.0, MAX_PSI)
    return 1.0 / psi


@dataclass(frozen=True)
class Scenario:
    """One operating point of TCP over INSTCAP ABR (or TCP alone).

    Parameters
    ----------
    delta : float
        Round-trip propagation delay Delta, in packet times at the high rate (>= 1).
    bmax : int
        Bottleneck buffer B_max in packets, including the packet in service (>= 1).
    psi : float, optional(default=20.0)
        Mean time in each capacity state over Delta, psi = tau / Delta (>= 1).  Two-state
        chain only: must be left out (None) when ``capacity`` is given.
    rate_ratio : float, optional(default=0.5)
        Low rate / high rate, in (0, 1]; 1 means a constant-capacity link.  Two-state
        chain only: must be left out (None) when ``capacity`` is given.
    wmax : int
        Maximum TCP window W_max in packets.
    feedback : {'instcap', 'effcap', 'none', 'constant'}
        'instcap': TCP over ABR whose source rate follows the bottleneck rate one
        Delta later (assumption III-A.8).  'effcap': the source gets EFFCAP(``effcap_m``,
        ``effcap_n``) of the levels, one sample per round trip (eq. 28; the chain on the
        last ``M + N - 1`` levels, docs/model.md sec. 20).  'none': TCP alone (Section
        III-D).  'constant': the ABR source held at ``source_rate`` (Section IV experiment).
    source_rate : float, optional
        Packets per time unit for ``feedback='constant'``, in [lowest level, 1]
        (the lowest level is ``rate_ratio`` for the two-state chain).
    max_states : int
        Guard: the states are counted before building, and more than this many raise
        :class:`~tcpabr_model.errors.ChainTooLargeError`.
    bmax_counts_service : bool
        True (default): ``bmax`` counts the packet in service, so the bottleneck holds
        ``bmax`` packets in all.  False: the paper's count (Sec. III-C), ``bmax`` waiting
        places plus the one in service (``bmax + 1`` in all); this moves eq. 18 by up to
        0.1 in small pipes (docs/model.md sec. 3).
    ack_clock : {'at-epoch', 'after-service', 'spread'}
        TCP alone only: the d returning ACKs of an interval arrive at ``i g`` ('at-epoch',
        the default: the first at T_k, the pessimistic phase) or at ``(i + 1) g``
        ('after-service': one ACK spacing later), ``g = min(S, Delta/d)``, the spacing of the
        previous interval's level (docs/model.md sec. 3; moves TCP alone by about one buffer
        slot in small pipes); or at ``i Delta / d`` ('spread': the flow's packets spread over
        the round trip, whatever the level that served them; no ACK pattern with service
        patterns or ``switch_time='uniform'``; docs/model.md sec. 3a, the closer to the
        simulator and to Lakshman-Madhow for ``tcp='sack'``).
    capacity : CapacityModel, optional
        A K-level capacity chain in place of the two-state one (docs/model.md, "K capacity
        states").  Its levels are normalised by the largest (the time unit is one packet
        time at the peak level); a discrete-time model must step once per round trip
        (``epoch * max(levels) == delta``) or an integer number of times per round trip
        (then ``P^n`` is used); a continuous-time model is sampled every round trip
        (``discretize``).  Levels of 0 (outages) are refused: the engine's service
        times are ``1 / c_k``.  ``None`` (default): the paper's chain from ``psi`` and
        ``rate_ratio``.
    service : ServicePatterns, optional
        What the link serves *inside* an interval (docs/model.md sec. 11, issue 23): per
        level of ``capacity``, weighted patterns of opportunity times (one packet each)
        measured on a trace (:func:`tcpabr_model.capacity.fit_patterns`).  Needs a
        discrete-time ``capacity`` whose epoch is the round trip (``service.epoch ==
        capacity.epoch``, ``epoch * max(levels) == delta``); the levels the engine uses
        are then the patterns' mean rates (normalised by the largest level of
        ``capacity``), and levels of 0 (outages: epochs that serve nothing) are allowed.
    effcap_m, effcap_n : int, optional
        ``feedback='effcap'`` only: samples per average (M) and averages (N) of eq. 28, the
        sample being the level of one round trip; default M = 1, N = 8: the minimum spans 8
        round trips, as the paper's testbed rule ("M : Delta, N : 8-12 Delta", M = 7, N = 49 at
        s = 30 ms, Section V-B) does.
        ``2^(M + N - 1)`` histories (``K^(M + N - 1)``) are lumped exactly before the build.
    mcr : float, optional(default=0.0)
        TM 4.0 minimum cell rate of the INSTCAP or EFFCAP source, packets per time unit (a fraction of
        the peak level, the simulator's unit): the source sends at ``max(c_S, mcr)``
        (docs/model.md sec. 11).  0, TM 4.0's default, is the paper's source.
    tcp : {'timeout-only', 'sack'}
        The TCP of the chain, in the simulator's ``--variant`` vocabulary.  'timeout-only'
        (default): the paper's TCP, every loss recovered by a timeout (III-A.7).  'sack':
        SACK with fast retransmit and Proportional Rate Reduction (RFC 6675 / RFC 6937, the
        default of Linux and ns-3): a loss with enough duplicate ACKs is recovered in one
        or two round trips with the window halved, a loss without them by a timeout
        (docs/model.md sec. 12).
    loss_cycle : {'paper', 'drain', 'timer'}
        How long a timeout cycle lasts (docs/model.md sec. 14, issue 23).  'paper' (default):
        III-B.4, recovery three round trips after the start of the loss interval.  'drain': the
        timer starts only when the ACKs of the packets queued ahead of the lost one stop, and the
        retransmission waits behind the packets sent after it; the cycle is longer by the
        intervals this takes at the loss interval's level, and those packets (delivered to a
        receiver that keeps out-of-order segments) are credited.  'timer' (sec. 15): the same
        cycle in continuous time, the timer restarted by the ACK of the last packet ahead of
        the lost one (which leaves ``b + J`` packet times into the loss interval, not at its
        end) and each slow-start round one packet's service longer than the round trip.
        Timeout-only TCP only.
    switch_time : {'epoch', 'uniform'}
        When the bottleneck rate changes inside the round trip (docs/model.md sec. 17).  'epoch'
        (default): at the connection's epochs, III-B.1 as printed.  'uniform': at an instant
        uniform inside the interval, drawn afresh each time: the interval is served at the level
        of ``X_k`` up to ``u Delta`` and at that of ``X_{k+1}`` after, so the chain runs on
        ``(X_k, X_{k+1}, u)`` (K + K (K - 1) ``switch_phases`` levels; :attr:`levels` then lists
        the rate each serves, which INSTCAP feeds back) with each state's service as a
        within-interval pattern.  The link a rate process with changes at times of its own
        presents to a connection (the paper's testbed); not with ``service`` (measured patterns
        already hold it).
    switch_phases : int
        ``switch_time='uniform'``: the instants ``u = (m + 1/2) / switch_phases`` (default 4;
        8 moves the prediction by 0.6-0.7 % at psi 1.5, Delta 40, B_max 10, for 3.3-3.5 times the
        states).
    round_trip : {'propagation', 'transmission'}
        The chain's epoch (eq. 5's interval): ``delta``, the round-trip propagation delay (default,
        the paper's), or ``delta`` plus one packet's transmission at the high rate, the round trip of
        a packet through an empty pipe, as the simulator and a real link have it (docs/model.md sec.
        3b; the two-state chain only, with ``loss_cycle='paper'``; the per-epoch switch probability
        is then ``(delta + 1) / (psi delta)``, at most 1, so that ``psi`` keeps meaning ``tau / delta``).
    ca_increment : {'binomial', 'counter'}
        How congestion avoidance grows the window (docs/model.md sec. 18).  'binomial' (default): the
        paper's III-A.6, each ACK grows it by one with probability 1/W (eq. 1), so the d ACKs of an
        interval give ``Binomial(d, 1/W)``.  'counter': one packet per W ACKs counted, as Linux
        (``snd_cwnd_cnt``), ns-3 and the cell simulator grow it, with the counter's phase at the
        epoch taken uniform: ``floor(U + d / W)``, the binomial's mean without its spread (two
        increments in one interval, which the coins allow, need ``d >= W``).  Both TCPs.
    silence : {'epochs', 'patterns'}
        With ``service``: when the fixed RTO of two round trips expires for want of ACKs (docs/model.md
        sec. 11b).  'epochs' (default): after two whole intervals without an ACK (sec. 11).  'patterns':
        also where one interval returned none and the next returns ACKs later in it than the last ACK
        before the silence (a silence of two round trips across the epochs), with the probability the
        patterns give (:func:`~tcpabr_model.markov.service.silence_timeouts`); the same timeout cycle.
    duplicates : {'none', 'go-back-n'}
        With ``loss_cycle='timer'``: whether the credits of a timeout cycle count the segments go-back-N
        sends again (docs/model.md sec. 15d).  'none' (default): as new data, as the paper's cycle does.
        'go-back-n': not (the window after a silence, nothing lost; after a loss the segments received
        between its holes), off the prediction and the conservative bound.
    """

    delta: float = 40.0
    bmax: int = 10
    psi: float | None = None
    rate_ratio: float | None = None
    wmax: int = 128
    feedback: str = "instcap"
    source_rate: float | None = None
    max_states: int = 5_000_000
    bmax_counts_service: bool = True
    ack_clock: str = "at-epoch"
    capacity: "CapacityModel | None" = None
    service: "ServicePatterns | None" = None
    mcr: float = 0.0
    tcp: str = "timeout-only"
    effcap_m: int | None = None
    effcap_n: int | None = None
    loss_cycle: str = "paper"
    switch_time: str = "epoch"
    switch_phases: int = 4
    ca_increment: str = "binomial"
    round_trip: str = "propagation"
    silence: str = "epochs"
    duplicates: str = "none"

    def __post_init__(self):
        object.__setattr__(self, "delta", check_real("delta", self.delta, 1.0, 1e5))
        object.__setattr__(self, "bmax", check_int("bmax", self.bmax, 1, 100_000))
        object.__setattr__(self, "_service_key", None)
        object.__setattr__(self, "_level_pattern", None)   # which levels can follow which (P's zeros, M12)
        object.__setattr__(self, "_source_levels", None)   # EFFCAP's rate per state of its history chain (sec. 20)
        check_choice("round_trip", self.round_trip, ROUND_TRIPS)
        if self.round_trip != "propagation" and self.capacity is not None:
            raise ValueError(f"round_trip={self.round_trip!r} is invalid with capacity: a K-level model's matrix is "
                             "per round trip of the fit (give round_trip='propagation')")
        # docs/model.md sec. 3b: the chain's epoch, Delta or Delta plus one transmission at the high rate
        object.__setattr__(self, "_epoch", self.delta + (1.0 if self.round_trip == "transmission" else 0.0))
        if self.service is not None and self.capacity is None:
            raise ValueError("service is invalid without capacity: the patterns belong to the levels of a "
                             "capacity model (tcpabr_model.capacity.fit_patterns)")
        if self.capacity is not None:
            self._init_capacity()
        else:
            self._init_two_state()
        object.__setattr__(self, "wmax", check_int("wmax", self.wmax, 1, 1_000_000))
        low = min(self._levels)
        check_choice("feedback", self.feedback, FEEDBACKS)
        if self.feedback == "constant":
            if self.source_rate is None:
                raise ValueError("source_rate=None is invalid: feedback='constant' needs a source_rate "
                                 f"in [{low}, 1] packets per time unit")
            object.__setattr__(
                self, "source_rate", check_real("source_rate", self.source_rate, low, 1.0)
            )
        elif self.source_rate is not None:
            raise ValueError(f"source_rate={self.source_rate!r} is invalid: only used with feedback='constant'")
        object.__setattr__(self, "max_states", check_int("max_states", self.max_states, 1, 10**9))
        if not isinstance(self.bmax_counts_service, bool):
            raise ValueError(f"bmax_counts_service={self.bmax_counts_service!r} is invalid: must be True or False")
        check_choice("ack_clock", self.ack_clock, ACK_CLOCKS)
        check_choice("tcp", self.tcp, TCP_MODELS)
        check_choice("loss_cycle", self.loss_cycle, LOSS_CYCLES)
        if self.round_trip != "propagation" and self.loss_cycle != "paper":
            raise ValueError(f"round_trip={self.round_trip!r} is invalid with loss_cycle={self.loss_cycle!r}: that "
                             "cycle already counts a transmission per slow-start round (docs/model.md secs. 3b, 15; "
                             "give loss_cycle='paper')")
        if self.loss_cycle != "paper" and self.tcp != "timeout-only":
            raise ValueError(f"loss_cycle={self.loss_cycle!r} is invalid with tcp={self.tcp!r}: the drained loss "
                             "cycle is derived for the timeout-only TCP (give loss_cycle='paper')")
        object.__setattr__(self, "mcr", check_real("mcr", self.mcr, 0.0, 1.0))
        if self.mcr > 0.0 and self.feedback not in ("instcap", "effcap"):
            raise ValueError(f"mcr={self.mcr!r} is invalid with feedback={self.feedback!r}: the minimum cell rate "
                             "is the INSTCAP or EFFCAP source's (give mcr=0)")
        if self.ack_clock != "at-epoch" and self.feedback != "none":
            raise ValueError(f"ack_clock={self.ack_clock!r} is invalid with feedback={self.feedback!r}: "
                             "the ACK clock is a TCP-alone convention (feedback='none'); an ABR source paces its "
                             "packets at its rate")
        if self.service is None and math.floor(self.delta * low + 1e-9) < 1:
            what = ("low rate", "rate_ratio") if self.capacity is None else ("lowest (normalised) level",
                                                                             "min(levels)")
            raise ValueError(
                f"delta={self.delta!r} is invalid: at the {what[0]} {low} at least one "
                f"packet must fit in a round-trip delay (delta * {what[1]} >= 1)"
            )
        check_choice("ca_increment", self.ca_increment, CA_INCREMENTS)
        check_choice("switch_time", self.switch_time, SWITCH_TIMES)
        object.__setattr__(self, "switch_phases", check_int("switch_phases", self.switch_phases, 1, 1000))
        if self.switch_time == "uniform":
            self._init_switch_inside()
        check_choice("silence", self.silence, SILENCES)
        if self.silence != "epochs" and self.service is None:
            raise ValueError(f"silence={self.silence!r} is invalid without service: the silences are read off the "
                             "within-epoch patterns (give silence='epochs')")
        check_choice("duplicates", self.duplicates, DUPLICATES)
        if self.duplicates != "none" and self.loss_cycle != "timer":
            raise ValueError(f"duplicates={self.duplicates!r} is invalid with loss_cycle={self.loss_cycle!r}: it is "
                             "derived for the timer cycle's credits (give loss_cycle='timer' or duplicates='none')")
        if self.feedback == "effcap":
            self._init_effcap()
        else:
            for name in ("effcap_m", "effcap_n"):
                if getattr(self, name) is not None:
                    raise ValueError(f"{name}={getattr(self, name)!r} is invalid with feedback={self.feedback!r}: "
                                     "EFFCAP's M and N are for feedback='effcap' (leave them out)")
        object.__setattr__(self, "_silence", self._silence_table())   # once: structure_key is called per build

    def _init_effcap(self) -> None:
        """``feedback='effcap'`` (docs/model.md sec. 20): the levels become the lumped chain of the last
        ``M + N - 1`` levels (:func:`~tcpabr_model.capacity.effcap_history_chain`), each state serving at its
        newest level and feeding back eq. 28 of its history, which the source uses over the next round trip."""
        from ..capacity import effcap_history_chain

        if self.switch_time != "epoch":
            raise ValueError(f"switch_time={self.switch_time!r} is invalid with feedback='effcap': EFFCAP's samples are "
                             "the levels of whole round trips (give switch_time='epoch')")
        m = 1 if self.effcap_m is None else check_int("effcap_m", self.effcap_m, 1, 10_000)
        n = 8 if self.effcap_n is None else check_int("effcap_n", self.effcap_n, 1, 10_000)
        object.__setattr__(self, "effcap_m", m)
        object.__setattr__(self, "effcap_n", n)
        try:
            hc = effcap_history_chain(self._levels, self._rate_matrix, m, n, mcr=self.mcr)
        except ValueError as e:
            why = str(e).removeprefix(f"m={m!r}, n={n!r} are invalid ")   # one parameter pair, said once (an audit)
            raise ValueError(f"effcap_m/effcap_n={m!r}/{n!r} is invalid {why}") from None
        if self._service_key is not None:   # each state is served by its newest level's patterns
            pat_ptr, pat_w, opp_ptr, opp_t = self._service_key
            pp, pw, op, ot = [0], [], [0], []
            for b in hc.base:
                for q in range(pat_ptr[b], pat_ptr[b + 1]):
                    pw.append(pat_w[q])
                    ot.extend(opp_t[opp_ptr[q]:opp_ptr[q + 1]])
                    op.append(len(ot))
                pp.append(len(pw))
            object.__setattr__(self, "_service_key", (tuple(pp), tuple(pw), tuple(op), tuple(ot)))
        object.__setattr__(self, "_levels", tuple(float(c) for c in hc.levels))
        object.__setattr__(self, "_rate_matrix", np.ascontiguousarray(hc.matrix))
        object.__setattr__(self, "_source_levels", tuple(float(c) for c in hc.source_levels))
        object.__setattr__(self, "_level_pattern", _pattern(hc.matrix))

    def _init_switch_inside(self) -> None:
        """``switch_time='uniform'`` (docs/model.md sec. 17): the chain on ``(X_k, X_{k+1}, u_k)``,
        each state's interval served by its pattern (:func:`.switching.pair_chain`)."""
        from ..closed_forms.modulating_chain import stationary_distribution
        from .switching import pair_chain, pair_pattern, pair_stationary

        if self.service is not None:
            raise ValueError("switch_time='uniform' is invalid with service: the measured patterns already hold what "
                             "the link serves inside an epoch, changes of level included (give switch_time='epoch')")
        states, levels, Pp, key = pair_chain(self._levels, self._rate_matrix, self._epoch, self.switch_phases)
        # the pair chain's law from the rate chain's (pair_stationary): at psi 1 the pairs (i, i)
        # are never taken, and the pair chain, reducible there, has no law of its own to solve for
        pi = pair_stationary(states, stationary_distribution(self._rate_matrix), self._rate_matrix,
                             self.switch_phases)
        object.__setattr__(self, "_levels", tuple(float(c) for c in levels))
        object.__setattr__(self, "_rate_matrix", np.ascontiguousarray(Pp))
        object.__setattr__(self, "_mean", float(pi @ levels))
        object.__setattr__(self, "_service_key", key)
        object.__setattr__(self, "_level_pattern", pair_pattern(states) if self.capacity is None else _pattern(Pp))

    def _init_two_state(self) -> None:
        """The paper's chain: levels (1, rate_ratio), switch probability 1/psi (III-B.1)."""
        if self.psi is None:
            object.__setattr__(self, "psi", 20.0)
        if self.rate_ratio is None:
            object.__setattr__(self, "rate_ratio", 0.5)
        if isinstance(self.psi, (int, float)) and not isinstance(self.psi, bool) and 0 < self.psi < 1:
            raise ValueError(
                f"psi={self.psi!r} is invalid: the embedded analysis needs psi >= 1 (rate changes "
                "at most once per round-trip delay); use the cell-level simulator "
                "(tcpabr simulate / tcpabr_model.sim) for psi < 1"
            )
        object.__setattr__(self, "psi", check_real("psi", self.psi, 1.0, MAX_PSI))
        object.__setattr__(
            self, "rate_ratio", check_real("rate_ratio", self.rate_ratio, 0.0, 1.0, low_open=True)
        )
        p = self._switch_per_epoch()
        object.__setattr__(self, "_levels", (1.0, float(self.rate_ratio)))
        object.__setattr__(self, "_rate_matrix", np.array([[1.0 - p, p], [p, 1.0 - p]]))
        object.__setattr__(self, "_mean", 0.5 * (1.0 + self.rate_ratio))

    def _init_capacity(self) -> None:
        """Validate ``capacity`` and derive the normalised levels and the per-Delta matrix."""
        from ..capacity import CapacityModel

        cm = self.capacity
        if not isinstance(cm, CapacityModel):
            raise ValueError(f"capacity={cm!r} is invalid: must be a tcpabr_model.capacity.CapacityModel "
                             "(load a file with tcpabr_model.capacity.load_model) or None")
        for name in ("psi", "rate_ratio"):
            if getattr(self, name) is not None:
                raise ValueError(f"{name}={getattr(self, name)!r} is invalid together with capacity: the "
                                 "capacity model carries the levels and the switching; give one or the other")
        if self.service is None:
            cm.require_no_outage("the Markov renewal engine (service times 1/c_k, docs/model.md; give "
                                 "service=ServicePatterns for a link with outages)")
        cmax = float(cm.levels.max())
        levels = cm.levels / cmax  # the time unit: one packet time at the peak level
        if cm.time == "continuous":
            # Q per model time unit; Delta in engine units is delta / cmax model time units
            P = np.array(cm.discretize(self.delta / cmax).transition)
        else:
            epoch = float(cm.epoch) * cmax  # in packet times at the peak level
            n = self.delta / epoch
            nr = round(n)
            if nr < 1 or abs(n - nr) > 1e-9 * max(n, 1.0):
                raise ValueError(
                    f"capacity.epoch={cm.epoch!r} is invalid: it is {epoch:g} packet times at the peak level, "
                    f"and the embedded chain steps once per round trip delta={self.delta:g}, so the epoch "
                    f"must be delta or delta / n for an integer n (give epoch={self.delta / cmax!r} model "
                    "time units, or a continuous-time model, which is sampled every delta)")
            P = np.linalg.matrix_power(np.array(cm.transition), int(nr))
        if self.service is not None:
            levels = self._init_service(cm, cmax)
        object.__setattr__(self, "_levels", tuple(float(c) for c in levels))
        object.__setattr__(self, "_rate_matrix", np.ascontiguousarray(P, dtype=float))
        object.__setattr__(self, "_mean", float(cm.stationary @ levels))
        if (P == 0).any():   # no state where P[S, R] = 0 is built (docs/model.md sec. 10, "States never entered")
            object.__setattr__(self, "_level_pattern", _pattern(P))

    def _init_service(self, cm, cmax: float) -> np.ndarray:
        """Validate ``service`` against ``capacity``; the patterns in engine units (packet times
        at the peak level ``cmax``) as the kernels' flat arrays; the levels they serve."""
        from ..capacity import ServicePatterns, service_instants

        sv = self.service
        if not isinstance(sv, ServicePatterns):
            raise ValueError(f"service={sv!r} is invalid: must be a tcpabr_model.capacity.ServicePatterns or None")
        if cm.time != "discrete" or cm.time_unit is None:
            raise ValueError("service is invalid with this capacity: the patterns need a discrete-time model in "
                             "seconds (time_unit set), as fit_trace returns")
        if sv.n_levels != cm.n_levels:
            raise ValueError(f"service has {sv.n_levels} levels: must match capacity's {cm.n_levels}")
        ep = float(cm.epoch) * float(cm.time_unit)
        if abs(sv.epoch - ep) > 1e-9 * ep or abs(ep * cmax - self.delta) > 1e-9 * self.delta:
            raise ValueError(f"service.epoch={sv.epoch!r} is invalid: the patterns and the chain must share one "
                             f"epoch, the round trip (capacity epoch {ep:g} s, delta={self.delta:g} packet times "
                             f"= {self.delta / cmax:g} s)")
        pat_ptr, pat_w, opp_ptr, opp_t = [0], [], [0], []
        for ok, wk in zip(sv.offsets, sv.weights):
            for o, w in zip(ok, wk):
                # coincident opportunities through their millisecond, as the replay serves them
                opp_t.extend(float(x) * cmax for x in service_instants(o))
                opp_ptr.append(len(opp_t))
                pat_w.append(float(w))
            pat_ptr.append(len(pat_w))
        key = (tuple(pat_ptr), tuple(pat_w), tuple(opp_ptr), tuple(min(x, self.delta) for x in opp_t))
        object.__setattr__(self, "_service_key", key)
        return sv.mean_counts / self.delta

    # derived quantities -------------------------------------------------------------
    @property
    def levels(self) -> tuple[float, ...]:
        """Bottleneck rate levels c_1..c_K in packets per time unit (largest 1); (1, rate_ratio)
        for the two-state chain.  Level index 0 is the state X_0 starts in (eq. 4)."""
        return self._levels

    @property
    def n_levels(self) -> int:
        """K, the number of capacity levels (2 for the paper's chain)."""
        return len(self._levels)

    @property
    def rate_matrix(self) -> np.ndarray:
        """K x K transition matrix of the embedded rate chain per round trip Delta (a copy)."""
        return self._rate_matrix.copy()

    @property
    def service_times(self) -> tuple[float, ...]:
        """(r_1, ..., r_K) = 1 / c_k: bottleneck packet service times per level ((r0, r1) for two states)."""
        return tuple(1.0 / c for c in self._levels)

    @property
    def buffer_capacity(self) -> int:
        """Packets the bottleneck holds in all, including the one in service."""
        return self.bmax if self.bmax_counts_service else self.bmax + 1

    @property
    def p_switch(self) -> float:
        """Per-epoch switch probability of the embedded two-state rate chain (1/psi; with
        ``round_trip='transmission'`` the epoch over the mean sojourn ``psi Delta``, at most 1)."""
        if self.capacity is not None:
            raise ValueError("p_switch is invalid with capacity: a K-level model has a transition matrix, "
                             "see rate_matrix")
        return self._switch_per_epoch()

    def _switch_per_epoch(self) -> float:
        if self.round_trip == "propagation":
            return switch_probability(self.psi)
        return min(1.0, self._epoch / (self.psi * self.delta))   # sec. 3b [choice: 1 below psi (Delta + 1) / Delta]

    @property
    def epoch(self) -> float:
        """The chain's round trip in time units: ``delta``, or ``delta + 1`` with ``round_trip='transmission'``
        (docs/model.md sec. 3b); eq. 5's interval, the time unit of the rewards' cycle lengths."""
        return self._epoch

    @property
    def mean_capacity(self) -> float:
        """Mean bottleneck capacity pi . c in packets per time unit (two states: (1 + ratio)/2)."""
        return self._mean

    def with_psi(self, psi: float) -> "Scenario":
        if self.capacity is not None:
            raise ValueError(f"psi={psi!r} is invalid with capacity: a K-level model has no psi; "
                             "vary the model instead")
        return replace(self, psi=psi)

    def structure_key(self) -> tuple:
        """Everything the rate-chain-independent skeleton depends on (the levels, not the matrix)."""
        # EFFCAP: INSTCAP's chain on its history levels, their own source levels in mcr's place (sec. 20)
        return (self._epoch, self.buffer_capacity, self._levels, self.wmax, self.feedback, self.source_rate,
                self.ack_clock, self._service_key, self.mcr if self._source_levels is None else self._source_levels,
                self.tcp,  # switch_time: in _levels / _service_key
                # the timer cycle of the timeout-only TCP alone counts the loss interval's drops (sec. 15b)
                self.loss_cycle == "timer" and self.feedback == "none" and self.tcp == "timeout-only",
                self.ca_increment, self._level_pattern, self._silence)

    def _silence_table(self) -> tuple | None:
        """``silence='patterns'``: :func:`~.service.silence_timeouts` per state (sec. 11b), else None."""
        if self.silence == "epochs":
            return None
        from .service import silence_timeouts

        return tuple(float(x) for x in silence_timeouts(self._rate_matrix, *self._service_key))
