"""The psi-independent part of the embedded chain: states, transitions per window
increment, loss-window laws and expected rewards (docs/model.md)."""

from __future__ import annotations

import dataclasses
import time
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..errors import ChainTooLargeError, ModelError
from .kernels.assemble import assemble_csr
from .kernels.enumeration import build_skeleton
from .scenario import Scenario, allowed_levels
from .service import (_service_sums, _served_by, _service_time, _slow_start_rounds, drain_queue_weight,  # noqa: F401
                      held_queue_weight, loss_interval_queue, recovery_expectations, recovery_queue_area, recovery_room,
                      recovery_times_of_states, regeneration_law, service_curves, slow_start_failure, slow_start_pipe,
                      slow_start_queue_area, slow_start_span)

__all__ = ["Skeleton", "skeleton_for", "rate_chain"]


def rate_chain(rates, p10: float | None = None, n_levels: int | None = None) -> np.ndarray:
    """The embedded rate chain's K x K matrix per round trip, as a C-contiguous float array.

    ``rates`` is either the K x K matrix (``p10`` None) or, with ``p10``, the two-state
    shorthand ``p01``: ``[[1 - p01, p01], [p10, 1 - p10]]`` (Sec. III-B).  ``n_levels``
    (optional) is the K the skeleton was built for.
    """
    if p10 is not None:
        Q = np.array([[1.0 - rates, rates], [p10, 1.0 - p10]], dtype=float)
    else:
        Q = np.ascontiguousarray(np.asarray(rates, dtype=float))
    k = Q.shape[0] if Q.ndim == 2 else -1
    if Q.ndim != 2 or Q.shape != (k, k) or (n_levels is not None and k != n_levels):
        want = "a square matrix" if n_levels is None else f"({n_levels}, {n_levels}) for the skeleton's levels"
        raise ValueError(f"rates.shape={Q.shape} is invalid: must be {want} (or give p01, p10)")
    if not np.all(np.isfinite(Q)) or Q.min() < 0 or np.abs(Q.sum(axis=1) - 1.0).max() > 1e-12:
        raise ValueError(f"rates={Q.tolist()} is invalid: must be a stochastic matrix (entries >= 0, "
                         "rows summing to 1 to 1e-12)")
    return Q


@dataclass(frozen=True, eq=False)
class Skeleton:
    """Reachable states and psi-independent transition data.

    Attributes (arrays indexed by state): ``states`` (n, 5) int columns A, B, D, R level index (two states:
    0 high / 1 low), S level index; ``p_loss`` = p(x) (eq. 6); ``post`` = E[(J + w) 1{loss}] (packets admitted
    before the loss plus the loss window, the post-loss terms of eq. 18); ``ss`` = E[S_slowstart 1{loss}]
    (eq. 17); ``u`` = expected cycle length U(x) in units of Delta (eq. 20).  Rewards V(x): :meth:`rewards`.
    """

    scenario_key: tuple
    states: np.ndarray
    nl_ptr: np.ndarray
    nl_prob: np.ndarray
    #: the loss-free targets as a pair ``(nl_tail, tail_tab)`` (docs/model.md sec. 5a item 10):
    #: entry ``e`` goes to state ``tail_tab[nl_tail[e], r]`` at next level ``r``
    nl_t: tuple
    ls_ptr: np.ndarray
    ls_m: np.ndarray
    ls_prob: np.ndarray
    p_loss: np.ndarray
    post: np.ndarray
    ss: np.ndarray
    u: np.ndarray
    reg: np.ndarray
    constant_s: bool
    build_seconds: float
    j_loss: np.ndarray | None = None    # E[J 1{loss} | x]: packets admitted before the first loss
    #: tcp='sack' (docs/model.md sec. 12): per state P(FR | x) and E[c 1{FR} | x] for the
    #: conservative, prediction and optimistic credits c = B + J + J2, B + J + w - L and B + J + w;
    #: None otherwise
    recovery: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
    #: E[integral of B over the interval 1{no loss} | x], packets x time units (sec. 13)
    queue_integral: np.ndarray | None = None
    #: loss_cycle='timer' with loss in slow start (:meth:`with_slow_start_loss`): per state
    #: ``E[(T_fail - T_ok - (U(m') - U(m))) 1{loss} | x]``, round trips the failed slow starts add
    #: beyond the cycle of the remapped codes; None otherwise
    slow_start_time: np.ndarray | None = None
    #: loss_cycle='timer', timeout-only TCP alone (sec. 15b): per state E[1{L >= B_max} 1{loss} | x], L the
    #: arrivals lost in the loss interval (go-back-N's burst, ``slow_start.with_go_back_n_burst``); None otherwise
    burst_loss: np.ndarray | None = None
    #: tcp='sack': E[J 1{FR} | x], the packets admitted before the first loss of a fast recovery (sec. 13)
    recovery_j: np.ndarray | None = None
    #: loss_cycle='timer' with outage levels (sec. 15c): ``(F, h)`` of :func:`.service.first_serving`; else None
    outage_wait: tuple | None = None
    #: E[D 1{timeout} | x], the segments go-back-N sends again after the state's timeouts (docs/model.md sec. 15d)
    duplicates: np.ndarray | None = None

    @property
    def n_states(self) -> int:
        return int(self.states.shape[0])

    @property
    def levels(self) -> tuple[float, ...]:
        """The rate levels (packets per time unit) the skeleton was built for."""
        return tuple(self.scenario_key[2])

    @property
    def n_levels(self) -> int:
        return len(self.scenario_key[2])

    def regenerations(self) -> np.ndarray:
        """Per ``m``, whether ``(0, 0, m, R, S)`` is a state at every ``(R, S)`` a chain can enter
        (:func:`.scenario.allowed_levels`; docs/model.md sec. 10)."""
        allow = allowed_levels(self.scenario_key)
        ok = (self.reg >= 0) | (False if allow is None else ~allow.T)
        return ok.reshape(ok.shape[0], -1).all(axis=1)

    def chain(self, rates, p10: float | None = None) -> np.ndarray:
        """:func:`rate_chain` for this skeleton's levels, refused where it is positive at a pair of
        levels the skeleton built no state for (:func:`.scenario.allowed_levels`; docs/model.md sec. 10)."""
        Q = rate_chain(rates, p10, self.n_levels)
        allow = allowed_levels(self.scenario_key)
        if allow is not None and np.any(Q[~allow] > 0):
            raise ValueError("rates is invalid: positive where the pair chain of switch_time='uniform' (M12) or the "
                             "capacity model's transition matrix is 0: the skeleton holds no state there "
                             "(docs/model.md sec. 10)")
        return Q

    @property
    def mmax(self) -> int:
        """ceil(W_max / 2): the largest regeneration window m of eq. 13."""
        return int(self.reg.shape[0] - 1)

    @property
    def n_codes(self) -> int:
        """Loss-event codes (docs/model.md sec. 12): m = 1..mmax (timeouts), and with fast
        recovery mmax + m and 2 mmax + m (recovery in 2 and 3 round trips)."""
        from .kernels.recovery import N_CODE_KINDS

        return self.mmax * (N_CODE_KINDS if self.recovery is not None else 1)

    def targets(self) -> np.ndarray:
        """The loss-free targets expanded, ``(entries, K)`` int64: state of entry ``e`` at
        next level ``r`` (K times the stored ``nl_t``; for tests and inspection)."""
        tail, tab = self.nl_t
        return tab[tail].astype(np.int64)

    @property
    def stored_bytes(self) -> int:
        """Bytes of the transition data the solves read (loss-free and loss entries, their
        pointers, the tail table and the regeneration table)."""
        return int(sum(a.nbytes for a in (self.nl_ptr, self.nl_prob, *self.nl_t, self.ls_ptr, self.ls_m,
                                          self.ls_prob, self.reg)))

    @property
    def window(self) -> np.ndarray:
        """W = A + B + D of every state (eq. 9)."""
        return self.states[:, :3].sum(axis=1)

    def _loss_expectations(self):
        """``(p, lost, R, E[w | loss], b + E[J | loss])`` per state: the loss probability, where it
        is positive, the level, the loss window and the packets ahead of the lost one, the
        expectations given the loss that the drained and timer cycles use (0 without a loss)."""
        p = self.p_loss
        lost = p > 0
        ps = np.where(lost, p, 1.0)
        jbar = np.where(lost, self.j_loss / ps, 0.0)
        wbar = np.where(lost, (self.post - self.j_loss) / ps, 0.0)
        return p, lost, self.states[:, 3], wbar, self.states[:, 1] + jbar

    def drain_terms(self, C: np.ndarray, P: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``loss_cycle='drain'`` (docs/model.md sec. 14): per state, the extra round trips E(x) of a
        timeout cycle and ``E[behind 1{loss} | x]``, the packets sent after the lost one that pass
        the bottleneck before recovery (a receiver that keeps out-of-order segments delivers them
        when the retransmission fills the hole).  ``C[n, i]``: the expected packets the bottleneck
        serves in the ``n`` intervals from one at level ``i`` (the loss interval is the first).  With
        ``J`` and the loss window ``w`` at their expectations given the loss (**choice**): the
        ``b + J`` packets ahead of the lost one have left by the end of interval ``n_a`` (the least
        ``n`` with ``C[n, i] >= b + J``); their ACKs keep the source sending for one more round trip,
        so ``behind = min(w - 1, C[n_a + 1, i] - C[n_a, i] + B_max)`` packets follow it (at most a
        round trip's service and a full buffer), and they have left by the end of interval ``n_e``
        (the least ``n`` with ``C[n, i] >= b + J + behind``).  The timer, restarted by the last ACK,
        expires two intervals after ``n_a`` (III-B.4 with ``n_a = 1``) and the retransmission is
        served once the queue is empty, so recovery starts at epoch ``max(n_a + 2, n_e)`` instead of
        3: ``E = max(n_a + 2, n_e) - 3`` (**choice**: expected service, not a sampled rate path).
        Third: the queue after the loss interval, :func:`.service.drain_queue_weight` at (n_a, n_e)
        (TCP alone with the rate chain ``P``: :func:`.service.held_queue_weight`, the next level)."""
        if self.recovery is not None:
            raise ModelError("loss_cycle='drain' is derived for the timeout-only TCP")
        bmax = float(self.scenario_key[1])
        p, lost, ri, wbar, ahead = self._loss_expectations()
        nmax = C.shape[0] - 1

        def first_n(need):
            """The least n >= 1 with C[n, ri] >= need, per state (nmax where none)."""
            n = np.full(need.shape[0], nmax, dtype=np.int64)
            for lvl in range(C.shape[1]):
                sel = ri == lvl
                k = np.searchsorted(C[1:, lvl], need[sel] - 1e-9, side="left") + 1
                n[sel] = np.minimum(k, nmax)
            return n

        n_a = first_n(ahead)
        nxt = np.minimum(n_a + 1, nmax)
        behind = np.clip(np.minimum(wbar - 1.0, C[nxt, ri] - C[n_a, ri] + bmax), 0.0, None)
        n_e = first_n(ahead + behind)
        extra = np.maximum(np.maximum(n_a + 2, n_e) - 3, 0)
        return (np.where(lost, extra, 0).astype(np.int64), np.where(lost, p * behind, 0.0),
                self._queue_weight(p, n_a.astype(float), n_e.astype(float), P))

    def timer_terms(self, C: np.ndarray, P: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``loss_cycle='timer'`` (docs/model.md sec. 15): the drained cycle of
        :meth:`drain_terms` in continuous time.  ``S_i(t)``, the expected packets served in the
        first ``t`` intervals from one at level ``i``, is ``C[:, i]`` joined linearly.  The
        ``b + J`` packets ahead of the lost one have left at ``T_a = S^-1(b + J)``; the ACK of
        the last of them restarts the timer one round trip later and it expires two round
        trips after that, at ``T_a + 3`` (III-B.4's epoch 3 is the case ``T_a = 0``);
        ``behind = min(w - 1, S(T_a + 1) - S(T_a) + B_max)`` packets follow the lost one and
        have left at ``T_e = S^-1(b + J + behind)``; the retransmission is served once they
        have, at ``max(T_a + 3, T_e)``.  Slow start then takes ``L = ceil(log2 m)`` rounds of
        windows ``1 .. 2^(L-1)`` (the packets of eq. 17) **and one more**, the round of window
        ``m`` whose departures the regeneration state ``(0, 0, m)`` holds in ``D`` ((M1): the
        departures of the interval before it); eq. 20's ``U = 3 + L`` leaves that round out
        (docs/model.md sec. 15, a correction of the paper flagged there).  Each of the ``L + 1``
        rounds waits one packet's service beyond the round trip for its first ACK (``rbar``: the
        expected service time of a packet over those intervals, at most one interval).  So the
        cycle is ``U + E`` round trips with ``E = max(T_a, T_e - 3) + 1 + (L + 1) rbar``, a real
        number (**choice**: expectations given the loss for ``J`` and ``w`` as in
        :meth:`drain_terms`; ``m = ceil(E[w | loss] / 2)``).
        Returns ``(E, E[behind 1{loss} | x], drain_queue_weight(p, T_a, T_e))`` (TCP alone with the rate
        chain ``P``: :func:`.service.held_queue_weight`).
        """
        if self.recovery is not None:
            raise ModelError("loss_cycle='timer' is derived for the timeout-only TCP")
        p, lost, ri, wbar, _ = self._loss_expectations()
        t_a, behind, t_e = self.recovery_times(C)
        extra = np.maximum(t_a, t_e - 3.0) + 1.0 + slow_start_span(C, ri, wbar, self.outage_wait)
        return (np.where(lost, extra, 0.0), np.where(lost, p * behind, 0.0), self._queue_weight(p, t_a, t_e, P))

    def _queue_weight(self, p, t_a, t_e, P):
        """The timeout cycles' queue after the loss interval in units of ``B_max Delta / 2`` (TCP alone: held
        by the ACK clock with the next level where ``P`` is given, :func:`.service.held_queue_weight`)."""
        if self.scenario_key[4] == "none" and P is not None:
            key = self.scenario_key
            return held_queue_weight(p, t_a, t_e, self.states[:, 3], P, self._served(), float(key[1]),
                                     service_curves(key[7], key[0]))
        return drain_queue_weight(p, t_a, t_e, self.scenario_key[4] == "none")

    def drain_sums(self, P: np.ndarray, served: np.ndarray, n: int) -> np.ndarray:
        """:func:`_service_sums` from ``n`` rows, doubled until every drain fits (``b + J + behind
        <= B_max + 2 W_max`` plus a pipe): the ``C`` that :meth:`drain_terms`, :meth:`timer_terms`
        and :meth:`recovery_times` read."""
        need = self.scenario_key[1] + 2 * self.scenario_key[3] + served.max()
        C = _service_sums(P, served, n)
        while C[-1].min() < need and n < 100_000:
            n *= 2
            C = _service_sums(P, served, n)
        return C

    def recovery_times(self, C: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`timer_terms`'s ``(T_a, behind, T_e)`` per state (intervals from ``T_k``; 0 packets
        where there is no loss): the retransmission is served at ``max(T_a + 3, T_e)``."""
        bmax = float(self.scenario_key[1])
        _, lost, ri, wbar, ahead = self._loss_expectations()
        return recovery_times_of_states(C, lost, ri, self.states[:, 1], ahead, wbar, bmax, self.outage_wait)

    def recovery_queue(self, rates) -> np.ndarray:
        """TCP alone's queue after the loss interval in III-B.4's cycle (docs/model.md sec. 13): a fast
        recovery's (``tcp='sack'``, :func:`.service.recovery_queue_area`), else the timeout's, held and
        drained by epoch 3 (:func:`.service.drain_queue_weight`), and its slow start's."""
        served, P, key = self._served(), self.chain(rates, None), self.scenario_key
        C = self.drain_sums(P, served, 8)
        if self.recovery is None:
            t_a, _, t_e = self.recovery_times(C)
            return (0.5 * float(key[1]) * float(key[0]) * self._queue_weight(
                self.p_loss, np.minimum(t_a, 2.0), np.minimum(t_e, 3.0), P) + self.slow_start_queue(C, False))
        ahead, wbar = recovery_expectations(self.states[:, 1], self.recovery, self.recovery_j)
        return recovery_queue_area(C, P, self.states[:, 3], ahead, wbar, self.recovery[0], served, float(key[1]),
                                   float(key[0]), self.recovery_room(), service_curves(key[7], key[0]))

    def recovery_room(self) -> np.ndarray:
        """``E[U - 1 | FR, x]``: the intervals a fast recovery's cycle spends after its loss interval
        (1 or 2, (M9) of docs/model.md sec. 12, from the loss-event codes); 0 where none follows."""
        return recovery_room(self.ls_ptr, self.ls_m, self.ls_prob, self.mmax, self.n_states)

    def slow_start_queue(self, C: np.ndarray, last_round: bool = True) -> np.ndarray:
        """``loss_cycle='timer'``, TCP alone (docs/model.md sec. 13): ``p(x)`` times the integral
        of the bottleneck queue (the packet in service included, packets x time units) over the
        ``L + 1`` slow-start rounds of :meth:`timer_terms` that sec. 13's rule counted as empty.

        Round 1 is the retransmission alone, ``r`` (``r = rbar Delta``, the packet time of
        :meth:`timer_terms`).  In round ``k = 2..L`` the ``p = 2^(k-2)`` ACKs of round ``k - 1``
        return one service time apart and each releases two packets, so the queue grows by one
        per service time to ``p + 1`` and then drains: ``(p^2 + 2 p) r``.  In the last round
        (window ``m``) only the first ``m - 2^(L-1)`` of its ``2^(L-1)`` ACKs double, the others
        release one packet each: ``(dbl^2 + 2 dbl + (2^(L-1) - dbl)(dbl + 1)) r``,
        ``dbl = m - 2^(L-1)``.  **[choice]** The pattern is that of a round whose window the
        pipe carries within the round; where a window passes the pipe the standing queue is
        left to the chain's next interval from the regeneration state (as the credit of eq. 17).
        ``m``, ``L`` and ``rbar`` are :meth:`timer_terms`'s (expectations given the loss); without
        ``last_round`` the ``L`` rounds of III-B.4's cycle only.  """
        p, lost, ri, wbar, _ = self._loss_expectations()
        m, _, rbar = _slow_start_rounds(C, ri, wbar)
        return np.where(lost, p * slow_start_queue_area(m, last_round) * rbar * float(self.scenario_key[0]), 0.0)

    def with_slow_start_loss(self, rates, p10: float | None = None) -> "Skeleton":
        """``loss_cycle='timer'``, TCP alone (docs/model.md sec. 15, III-B.3 relaxed): the skeleton
        with the slow starts that overflow the buffer.

        Slow start to ``m`` sends rounds of windows ``1, 2, ..., 2^(L-1)`` and then ``m``; in round
        ``k >= 2`` the ACKs of round ``k - 1`` (``prev = 2^(k-2)`` of them, one service time
        apart) release two packets each while the window is below ``m``, so the queue builds by
        ``doubled = prev`` (``m - 2^(L-1)`` in the last round) on top of the ``max(0, prev - c)``
        that a window above the pipe ``c`` leaves standing (``c``: packets per round trip at the
        loss state's level, or where that serves under one packet per round trip, an outage, the
        expected packets per round trip over the slow start's ``L + 1`` intervals from it,
        **choice**; at least 0.001).  The first round with ``doubled + standing > B_max`` loses:
        the timer then expires ``B_max / c + 3`` round trips later (a full buffer ahead of the
        hole, as :meth:`timer_terms`), ssthresh becomes half the window that round reached
        (``prev``; ``floor(m / 2)`` in the last round; at least 2), and slow start to that ``m'``
        regenerates at ``(0, 0, m')``.  So each loss entry's code ``m`` becomes ``m'``, ``u`` and
        ``ss`` follow (the packets of the failed rounds, the round that lost credited up to a
        round trip of service and a full buffer, **choice**, and the new slow start's), and
        :attr:`slow_start_time` holds the time beyond the new codes' ``U``.  A second failure is
        not followed (``m'`` passes the test whenever ``prev <= B_max``, which holds for the
        first failing round except with a standing queue).  Entries whose slow start does not
        overflow are unchanged.
        """
        if self.recovery is not None:
            raise ModelError("loss in slow start is derived for the timeout-only TCP")
        bmax = float(self.scenario_key[1])
        P = self.chain(rates, p10)
        rows = np.repeat(np.arange(self.n_states), np.diff(self.ls_ptr))
        m = self.ls_m.astype(np.int64)
        L = np.frexp(np.maximum(m, 1) - 1.0)[1].astype(np.int64)            # ceil(log2 m)
        pipe, rbar = slow_start_pipe(self, P, self.states[rows, 3], L)
        new_m = m.copy()
        k_fail = np.zeros(m.size, dtype=np.int64)
        for k in range(2, int(L.max(initial=0)) + 2):
            prev = 2.0 ** (k - 2)
            doubled = np.where(k <= L, prev, m - 2.0 ** (L - 1))
            fail = (k_fail == 0) & (k <= L + 1) & (doubled + np.maximum(prev - pipe, 0.0) > bmax)
            k_fail[fail] = k
            new_m[fail] = np.maximum(2, np.where(k <= L[fail], int(prev), m[fail] // 2))
        failed = k_fail > 0
        if not failed.any():
            return self
        d_u, credit, beyond = slow_start_failure(k_fail, L, new_m, pipe, rbar, bmax)
        w = np.where(failed, self.ls_prob, 0.0)
        n = self.n_states
        time_beyond = np.bincount(rows, w * beyond, minlength=n)
        return dataclasses.replace(
            self, ls_m=np.where(failed, new_m, m).astype(self.ls_m.dtype),
            u=self.u + np.bincount(rows, w * d_u, minlength=n),
            ss=self.ss + np.bincount(rows, w * credit, minlength=n), slow_start_time=time_beyond)

    def _served(self) -> np.ndarray:
        """Packets the bottleneck serves per interval at each level: the patterns' expected
        opportunities, or ``floor(Delta c)`` of an even server (docs/model.md sec. 6)."""
        delta = self.scenario_key[0]
        if self.scenario_key[7] is not None:
            return delta * np.array(self.levels)
        return np.floor(delta * np.array(self.levels) + 1e-9)

    def rewards(self, rates, p10: float | None = None, drain: bool = False,
                timer: bool = False) -> dict[str, np.ndarray]:
        """Expected cycle rewards V(x) in packets (docs/model.md, section 6).

        ``rates``: the K x K rate chain per round trip, or ``p01`` with ``p10`` (two states).

        ``eq18``: the paper's optimistic reward, eq. 18 with the exact number J of packets
        admitted before the loss in place of 2(B_max - B) and the loss window w in place
        of W + 1.  ``optimistic``: the same credit, capped twice by what the bottleneck can
        carry -- the b + J + w packets credited before recovery by its expected service in
        the three round trips before recovery (eq. 5), and the whole loss-cycle credit by
        its expected service over the U round trips of the cycle less the m packets that
        the regeneration state (0, 0, m) of eq. 13 places beyond the bottleneck.
        ``conservative``: nothing sent in the loss interval earns credit (d + b +
        S_slowstart), under the same cycle cap.  ``prediction`` (docs/model.md sec. 11):
        the packets a timeout-only TCP with go-back-N actually delivers in a loss cycle,
        d + b + J + S_slowstart (the J packets admitted before the first loss reach the
        receiver in order; what follows the lost one is sent again), under the optimistic
        bound's two caps.  Every cap acts on the expectation given the state, and the
        cycle cap's room is floored at 0 (docs/model.md sec. 6).

        ``drain`` (``loss_cycle='drain'``, :meth:`drain_terms`): each timeout cycle is ``E(x)``
        round trips longer (both caps count them; returned as ``"drain_extra"``) and the
        prediction credits the ``behind`` packets beside the ``J`` ones, under the same cap
        before recovery.  ``timer`` (with ``drain``; ``loss_cycle='timer'``, :meth:`timer_terms`): the
        same with ``E(x)`` in continuous time, the caps reading ``C`` between its rows.
        """
        d = self.states[:, 2].astype(float)
        b = self.states[:, 1].astype(float)
        ri = self.states[:, 3]
        served = self._served()
        P = self.chain(rates, p10)
        # C[n, i]: expected packets the bottleneck can serve in n intervals starting in i
        mmax = self.reg.shape[0] - 1
        umax = 3 + int(np.ceil(np.log2(max(mmax, 1)))) + 1
        C = _service_sums(P, served, umax)
        extra = behind = None
        if drain:
            C = self.drain_sums(P, served, umax)
            extra, behind, draining = self.timer_terms(C, P) if timer else self.drain_terms(C, P)
            if timer and self.slow_start_time is not None:     # failed slow starts (with_slow_start_loss)
                lost = self.p_loss > 0
                extra = extra + np.where(lost, self.slow_start_time / np.where(lost, self.p_loss, 1.0), 0.0)
            if umax + extra.max(initial=0) + 1 >= C.shape[0]:   # the caps index C at U + E(x)
                C = _service_sums(P, served, umax + int(np.ceil(extra.max())) + 1)
        rows = np.repeat(np.arange(self.n_states), np.diff(self.ls_ptr))
        # loss-event codes (sec. 12): kind 0 the timeout to (0, 0, m), kinds 1-2 fast recovery
        kind = (self.ls_m - 1) // mmax
        m_of = self.ls_m - mmax * kind
        u_of = 3 + np.frexp(m_of - 1)[1].astype(int)  # 3 + ceil(log2 m) = 3 + bit_length(m - 1)
        if self.recovery is not None:
            u_of = np.where(kind == 0, u_of, 1 + kind)
        if extra is not None:
            u_of = u_of + extra[rows]
        cycle_room = np.zeros(self.n_states)
        np.add.at(cycle_room, rows, self.ls_prob * (_served_by(C, ri[rows], u_of) - m_of))
        cycle_room = np.maximum(cycle_room, 0.0)
        if self.recovery is None:
            credit = self.p_loss * b + self.ss
            room3 = self.p_loss * np.maximum(_served_by(C, ri, 3 if extra is None else 3 + extra) - b, 0.0)
            before_recovery = np.minimum(self.post, room3)
            out = {
                "eq18": d + credit + self.post,
                "optimistic": d + np.minimum(credit + before_recovery, cycle_room),
                "conservative": d + np.minimum(credit, cycle_room),
            }
            if self.j_loss is not None:
                sent = self.j_loss if behind is None else self.j_loss + behind
                out["prediction"] = d + np.minimum(credit + np.minimum(sent, room3), cycle_room)
            if extra is not None:
                out["drain_extra"] = extra
                # sec. 13 with the drained cycle: the queue after the loss interval, held at B_max
                # while TCP alone's ACK clock runs, then falling linearly to empty (packets x time units)
                out["drain_queue"] = 0.5 * float(self.scenario_key[1]) * float(self.scenario_key[0]) * draining
                if timer and self.scenario_key[4] == "none":   # the slow-start rounds' queue (sec. 13)
                    out["drain_queue"] = out["drain_queue"] + self.slow_start_queue(C)
                elif timer:    # over ABR the source paces slow start: its pairs queue in A (sec. 13)
                    out["drain_source"] = self.slow_start_queue(C)
            return out
        # tcp='sack' (sec. 12): the timeout cycles as above (their probability p - p_FR), the
        # fast-recovery cycles with their own credits, both under the one cycle cap
        p_fr, fr_cons, fr_pred, fr_opt = self.recovery
        p_to = np.maximum(self.p_loss - p_fr, 0.0)
        credit = p_to * b + self.ss
        room3 = p_to * np.maximum(C[3, ri] - b, 0.0)
        before_recovery = np.minimum(self.post, room3)
        return {
            "eq18": d + credit + self.post + fr_opt,
            "optimistic": d + np.minimum(credit + before_recovery + fr_opt, cycle_room),
            "conservative": d + np.minimum(credit + fr_cons, cycle_room),
            "prediction": d + np.minimum(credit + np.minimum(self.j_loss, room3) + fr_pred, cycle_room),
        }

    def occupancy_rewards(self) -> dict[str, np.ndarray]:
        """Expected time integrals over a cycle of the bottleneck queue B and the ABR
        segmentation buffer A, in packets x time units (docs/model.md sec. 13, issue 26).

        Loss-free interval: for B the exact integral of the queue over the interval
        (``kernels/occupancy.py``: departure times in closed form; TCP alone over service
        patterns: the pattern's replay, ``patterns.pattern_tcp_alone_resume``; over ABR with
        patterns ``occupancy.pattern_abr_queue_integral``), for A the trapezoid ``Delta (x_k +
        E[x_{k+1} | x, no loss]) / 2`` on the embedded values (**choice**: the source buffer's path
        inside the interval is not kept).
        Loss interval: the queue rises to ``B_max`` at the loss and stays full (:meth:`_loss_interval_queue`),
        and the source buffer here is ``Delta a / 2`` (0 for TCP alone; ``analysis.abr_held_backlog`` adds
        ``Delta a_end / 2``); the rest of the cycle is added by ``analyze`` (:meth:`recovery_queue`,
        :meth:`timer_terms`, :meth:`slow_start_queue`, ``analysis.slow_start_source``, ``abr_held_backlog``).
        Divided by ``Delta E_pi U`` these are the time-average occupancies (renewal reward,
        as eqs. 14 and 21), and by the throughput the mean delays (Little's law).
        """
        delta = float(self.scenario_key[0])
        a = self.states[:, 0].astype(float)
        b = self.states[:, 1].astype(float)
        nl = 1.0 - self.p_loss

        def next_mean(col: int) -> np.ndarray:
            """E[X_{k+1} 1{no loss} | x] of state component ``col`` (every next level leads to
            the same (A, B, D), so the first level's target stands for all)."""
            rows = np.repeat(np.arange(self.n_states), np.diff(self.nl_ptr))
            tail, tab = self.nl_t
            return np.bincount(rows, self.nl_prob * self.states[tab[tail, 0], col], minlength=self.n_states)

        # loss-free intervals: the exact integral where the kernels have it, else the trapezoid
        if self.queue_integral is not None:
            lossfree_q = self.queue_integral
        else:
            lossfree_q = 0.5 * delta * (nl * b + next_mean(1))
        source = 0.5 * delta * (nl * a + next_mean(0) + self.p_loss * a) if a.any() else np.zeros(self.n_states)
        return {"queue": lossfree_q + self.p_loss * self._loss_interval_queue(), "source": source}

    def _loss_interval_queue(self) -> np.ndarray:
        """:func:`.service.loss_interval_queue` for this chain (docs/model.md sec. 13)."""
        from .estimate import _kernel_args, ack_phase

        key, (r_vals, s_vals) = self.scenario_key, _kernel_args(self.scenario_key)[5:7]
        jtot = self.j_loss + (self.recovery_j if self.recovery_j is not None else 0.0)
        return loss_interval_queue(self.states, self.p_loss, jtot, r_vals, s_vals, float(key[0]), float(key[1]),
                                   key[4] == "none", key[6] == "spread", ack_phase(key),
                                   self._served() if key[7] is not None else None)

    def transition_parts(self, rates, p10: float | None = None):
        """(T, L) as scipy CSR matrices for the rate chain ``rates`` (K x K per round trip,
        or ``p01`` with ``p10`` for two states), each in canonical form (sorted columns,
        duplicates summed) with int32 indices where the size allows."""
        args = (self.states, self.nl_ptr, self.nl_prob, self.nl_t, self.ls_ptr, self.ls_m, self.ls_prob,
                self.reg, self.constant_s, self.chain(rates, p10))
        F = regeneration_law(self.outage_wait)
        return assemble_csr(*args, with_l=False, F=F), assemble_csr(*args, with_t=False, F=F)

    def transition_matrix(self, rates, p10: float | None = None) -> sp.csr_matrix:
        """The embedded transition matrix P = T + L (CSR, duplicates summed).

        ``rates``: the K x K rate chain per round trip, or ``p01`` with ``p10`` (two states).

        P is assembled in one piece from the skeleton (no copies of T and L, int32 indices
        where the size allows: 12 bytes per nonzero; docs/model.md sec. 8), with the
        numbers of ``T + L`` bit for bit.  Every row is checked to sum to 1 (to 1e-12); a
        violation raises :class:`~tcpabr_model.errors.ModelError` instead of returning the
        matrix.
        """
        P = assemble_csr(self.states, self.nl_ptr, self.nl_prob, self.nl_t, self.ls_ptr, self.ls_m,
                         self.ls_prob, self.reg, self.constant_s, self.chain(rates, p10),
                         F=regeneration_law(self.outage_wait))
        rows = np.asarray(P.sum(axis=1)).ravel()
        worst = int(np.argmax(np.abs(rows - 1.0)))
        if abs(rows[worst] - 1.0) > 1e-12 or (P.nnz and P.data.min() < 0):
            raise ModelError(f"the embedded transition matrix is not stochastic: row {worst} "
                             f"(state {tuple(int(v) for v in self.states[worst])}) sums to {rows[worst]!r}")
        return P


def _build(key: tuple, max_states: int, total: int | None = None, progress: bool = False,
           mem: np.ndarray | None = None) -> Skeleton | None:
    """The skeleton of ``key``, built up to ``max_states`` (above: the count's refusal) and,
    with ``mem`` (:func:`~.estimate.memory_budget`), up to the memory budget: None where the
    build stopped there (the caller counts the chain to refuse it with its size)."""
    from .estimate import build_args, run_with_progress

    prog = np.zeros(2, dtype=np.int64)
    t0 = time.perf_counter()
    out = run_with_progress(build_skeleton, build_args(key, max_states, False, prog, mem), prog,
                            total, "building chain", progress)
    (st, nl_ptr, nl_prob, nl_t, ls_ptr, ls_m, ls_prob, p_loss, ev_post, ev_ss, eu, reg,
     overflow, _, _, ev_j, fr, occ_q) = out
    delta, bmax, _, wmax, feedback = key[:5]
    if overflow and mem is not None and mem[4] == 1.0:
        return None
    if overflow:   # where the build ran without a count, it counted: the count's refusal
        from .estimate import over_max_states

        raise over_max_states(max_states, f"delta={delta:g}, bmax={bmax}, wmax={wmax}, feedback={feedback!r}",
                              time.perf_counter() - t0)
    col = [np.ascontiguousarray(fr[:, c]) for c in range(5)]   # P(FR) (or the burst's share), credits, E[J 1{FR}]
    sack, (occ_q, dup) = key[9] != "timeout-only", np.ascontiguousarray(occ_q.T)   # the queue's integral, sec. 15d's D
    return Skeleton(key, st, nl_ptr, nl_prob, nl_t, ls_ptr, ls_m, ls_prob, p_loss, ev_post, ev_ss, eu, reg,
                    key[4] == "constant", time.perf_counter() - t0, ev_j, tuple(col[:4]) if sack else None, occ_q,
                    duplicates=dup, burst_loss=col[0] if key[10] else None, recovery_j=col[4] if sack else None)


_CACHE: "OrderedDict[tuple, Skeleton]" = OrderedDict()
_CACHE_SIZE = 16


def skeleton_for(scenario: Scenario, progress: bool = False) -> Skeleton:
    """The (cached) psi-independent skeleton of ``scenario``: a psi sweep builds it once.

    Where ``max_states`` chains of a typical density (2 kB per state) fit in the available
    memory, the chain is built at once, without counting it first (docs/model.md sec. 5a item
    10): the build stops above ``scenario.max_states`` with the count's
    :class:`~tcpabr_model.errors.ChainTooLargeError`, and before its stored entries pass the
    available memory at :func:`~.estimate.check_fits`'s bytes per state and entry; a chain
    stopped there is counted in full (:func:`~.estimate.estimate_chain`) and refused on memory
    with its estimated size, never built past the memory.  A larger ``max_states``, or a chain
    counted already (a caller that estimated it first), is counted (the count stops at the
    memory), checked and built.  ``progress=True`` shows
    a tqdm bar on counts and builds longer than 2 s.
    """
    from .estimate import (TYPICAL_BYTES_PER_STATE, _cached_count, available_memory, check_fits, estimate_chain,
                           memory_budget)

    ck = (scenario.structure_key(), scenario.max_states)
    sk = _CACHE.get(ck)
    if sk is not None:
        _CACHE.move_to_end(ck)
        return sk
    sk = None
    if _cached_count(*ck) is None and ck[1] * TYPICAL_BYTES_PER_STATE < available_memory():
        # the memory cannot bind before max_states at a typical density: build at once, the
        # memory check inside the build as the safety net; a larger max_states is counted first
        # (the count stops at the memory and refuses a chain that cannot fit in seconds)
        sk = _build(ck[0], ck[1], progress=progress, mem=memory_budget(ck[0]))
    if sk is None:     # counted already, or stopped at the memory: count, refuse or build
        est = estimate_chain(scenario, progress=progress)
        check_fits(est, scenario)
        sk = _build(ck[0], ck[1], total=est.n_states, progress=progress)
    _CACHE[ck] = sk
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return sk
