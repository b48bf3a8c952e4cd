"""ERICA and ERICA+ explicit-rate allocation at a switch output port (private).

Source: R. Jain, S. Kalyanaraman, R. Goyal, S. Fahmy, R. Viswanathan, *ERICA Switch
Algorithm: A Complete Description*, ATM Forum/96-1172 (OSU-CIS TR-51, 1996) and
S. Kalyanaraman et al., *The ERICA Switch Algorithm for ABR Traffic Management in ATM
Networks*, IEEE/ACM ToN 8(1), 2000; ERICA+ queue control from S. Kalyanaraman, *Traffic
Management for the Available Bit Rate (ABR) Service in ATM Networks*, PhD thesis, OSU
1997, Ch. 6 (Fig. 6.6).  See ``docs/abr_erica.md`` for the formulas and every CHOICE.

At the end of each averaging interval (after ``N`` ABR input cells or ``T`` time, whichever
comes first)::

    C_abr    = max(0, link rate - VBR cells served / dt)           (ABR capacity)
    Fraction = U (ERICA)   or   f(Tq), Tq = Q / C_abr  (ERICA+)
    C_target = min(Fraction * C_abr, link rate)                    (target ABR capacity)
    z        = (ABR input cells / dt) / C_target                   (overload factor)
               [ERICA+ option: z <- (1 - Az) z_prev + Az z]
    N_act    = VCs seen in the interval
               [option: sum of activity levels, each 1 when seen, times An per interval]
    FairShare = C_target / max(N_act, 1)

with f(Tq) = b T0 / ((b - 1) Tq + T0) for Tq <= T0 and
max(QDLF, a T0 / ((a - 1) Tq + T0)) for Tq > T0.  On each backward RM cell of a VC::

    VCShare = CCR[VC] / z            (C_target when z = 0: zero load)
    ER = max(FairShare, VCShare)                         if z > 1 + delta
    ER = max(FairShare, VCShare, MaxAllocPrevious)       otherwise (fairness option)
    ER = min(ER, C_target, link rate);  MaxAllocCurrent = max(MaxAllocCurrent, ER)
    ER = FairShare   if ER > FairShare and CCR[VC] < FairShare   (avoid a sudden increase)
    ER in cell = min(ER in cell, ER)

CCR[VC] is the CCR field of the last forward RM cell of the VC seen at the port.  The
"avoid a sudden increase" step is the BRM step that the ERICA+ pseudo-code of ATM Forum
98-0408 (node 4, its equation 12) describes as avoiding "sudden increase in the feedback
rate": a VC sending below the fair share is raised to at most the fair share, never
straight to MaxAllocPrevious (``docs/abr_erica.md``, "Findings", for what it changes).  The
kernel functions are unit-agnostic (rates in cells per slot, times in slots in the network
kernel); :class:`EricaParams` holds physical units.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ..._validate import check_int, check_real

__all__ = ["EricaParams", "queue_control_fraction"]

# ---- ERICA parameter row (float64) ----------------------------------------------------
EP_NCELLS = 0   # averaging interval: ABR input cells
EP_T = 1        # averaging interval: time
EP_U = 2        # target utilisation (ERICA without queue control)
EP_QC = 3       # 1: ERICA+ queue control f(Tq), 0: constant U
EP_T0 = 4       # target queueing delay
EP_A = 5        # overload-side hyperbola parameter a (> 1)
EP_B = 6        # underload-side hyperbola parameter b (>= 1)
EP_QDLF = 7     # queue drain limit factor (lower bound of f)
EP_AVGN = 8     # 1: average the number of active sources
EP_AN = 9       # activity decay factor per interval
EP_AVGZ = 10    # 1: exponentially average the overload factor
EP_AZ = 11      # weight of the newest z sample
EP_MAP = 12     # 1: MaxAllocPrevious fairness option in underload
EP_DELTA = 13   # underload band: z <= 1 + delta counts as underload
EP_LINK = 14    # link rate (same rate unit as CCR and ER)
EP_SPIKE = 15   # 1: a VC whose CCR is below the fair share gets at most the fair share
EP_NPAR = 16

# ---- ERICA port state row (float64) ---------------------------------------------------
ES_TSTART = 0   # start time of the current interval
ES_NABR = 1     # ABR input cells in the current interval
ES_NVBR = 2     # VBR cells served on the link in the current interval
ES_CABR = 3     # ABR capacity of the last interval
ES_TARGET = 4   # target ABR capacity of the last interval
ES_Z = 5        # overload factor in use (averaged if EP_AVGZ)
ES_NACT = 6     # number of active sources in use
ES_FAIR = 7     # fair share
ES_MAPREV = 8   # MaxAllocPrevious
ES_MACUR = 9    # MaxAllocCurrent
ES_INRATE = 10  # ABR input rate of the last interval
ES_NINT = 11    # completed intervals (counter)
ES_TQ = 12      # queueing delay Tq of the last interval
ES_FRAC = 13    # Fraction (U or f(Tq)) of the last interval
ES_ZINIT = 14   # 1 once z has a first sample (z averaging)
ES_NSTATE = 15


@dataclass(frozen=True)
class EricaParams:
    """ERICA / ERICA+ parameters (physical units).

    Parameters
    ----------
    interval_cells : int, optional(default=100)
        The averaging interval ends after this many ABR input cells ...
    interval_seconds : float, optional(default=1e-3)
        ... or after this time, whichever comes first (slides: (100, 1 ms), (500, 5 ms)).
    queue_control : bool, optional(default=True)
        True: ERICA+ (target capacity f(Tq) x ABR capacity); False: plain ERICA
        (``target_utilization`` x ABR capacity).
    target_utilization : float, optional(default=0.9)
        U in (0, 1], used only when ``queue_control`` is False.
    t0_seconds : float, optional(default=0.5e-3)
        ERICA+ target queueing delay T0, seconds, > 0.
    a, b : float, optional(default=1.15, 1.05)
        Curvatures of the overload (Tq > T0, a > 1) and underload (b >= 1) hyperbolas.
    qdlf : float, optional(default=0.5)
        Queue drain limit factor, lower bound of f, in (0, 1].
    average_sources : bool, optional(default=True)
        Average the number of active sources (activity decays by ``source_decay`` per
        interval; slides' "Averaging of Na? (An = 0.9)").
    source_decay : float, optional(default=0.9)
        An in [0, 1).
    average_overload : bool, optional(default=True)
        Exponentially average z (slides' "Averaging of z? (Az = 0.2)").
    overload_weight : float, optional(default=0.2)
        Az in (0, 1]: weight of the newest sample.
    max_alloc_previous : bool, optional(default=True)
        ERICA's fairness option: in underload the ER is at least the largest ER given in
        the previous interval.
    delta : float, optional(default=0.1)
        Underload band: z <= 1 + delta.
    limit_low_ccr : bool, optional(default=True)
        ERICA's "avoid sudden increase" step: a VC whose CCR is below the FairShare gets
        at most the FairShare (not MaxAllocPrevious or a large VCShare).  False only for
        the sensitivity study of ``docs/abr_erica.md`` ("Findings").
    """

    interval_cells: int = 100
    interval_seconds: float = 1e-3
    queue_control: bool = True
    target_utilization: float = 0.9
    t0_seconds: float = 0.5e-3
    a: float = 1.15
    b: float = 1.05
    qdlf: float = 0.5
    average_sources: bool = True
    source_decay: float = 0.9
    average_overload: bool = True
    overload_weight: float = 0.2
    max_alloc_previous: bool = True
    delta: float = 0.1
    limit_low_ccr: bool = True

    def __post_init__(self):
        object.__setattr__(self, "interval_cells", check_int("interval_cells", self.interval_cells, 1))
        object.__setattr__(self, "interval_seconds", check_real(
            "interval_seconds", self.interval_seconds, 0.0, low_open=True))
        for name in ("queue_control", "average_sources", "average_overload", "max_alloc_previous",
                     "limit_low_ccr"):
            v = getattr(self, name)
            if not isinstance(v, (bool, np.bool_)):
                raise ValueError(f"{name}={v!r} is invalid: must be True or False")
        object.__setattr__(self, "target_utilization", check_real(
            "target_utilization", self.target_utilization, 0.0, 1.0, low_open=True))
        object.__setattr__(self, "t0_seconds", check_real("t0_seconds", self.t0_seconds, 0.0, low_open=True))
        object.__setattr__(self, "a", check_real("a", self.a, 1.0, low_open=True))
        object.__setattr__(self, "b", check_real("b", self.b, 1.0))
        object.__setattr__(self, "qdlf", check_real("qdlf", self.qdlf, 0.0, 1.0, low_open=True))
        object.__setattr__(self, "source_decay", check_real("source_decay", self.source_decay, 0.0, 1.0,
                                                            high_open=True))
        object.__setattr__(self, "overload_weight", check_real("overload_weight", self.overload_weight,
                                                               0.0, 1.0, low_open=True))
        object.__setattr__(self, "delta", check_real("delta", self.delta, 0.0))

    def to_array(self, slot_seconds: float, link_rate: float) -> np.ndarray:
        """Kernel parameter row.

        Parameters
        ----------
        slot_seconds : float
            Length of one kernel time step, seconds (> 0).
        link_rate : float
            Port link rate in cells per slot (> 0).
        """
        s = check_real("slot_seconds", slot_seconds, 0.0, low_open=True)
        link = check_real("link_rate", link_rate, 0.0, low_open=True)
        p = np.zeros(EP_NPAR)
        p[EP_NCELLS] = self.interval_cells
        p[EP_T] = self.interval_seconds / s
        p[EP_U] = self.target_utilization
        p[EP_QC] = 1.0 if self.queue_control else 0.0
        p[EP_T0] = self.t0_seconds / s
        p[EP_A] = self.a
        p[EP_B] = self.b
        p[EP_QDLF] = self.qdlf
        p[EP_AVGN] = 1.0 if self.average_sources else 0.0
        p[EP_AN] = self.source_decay
        p[EP_AVGZ] = 1.0 if self.average_overload else 0.0
        p[EP_AZ] = self.overload_weight
        p[EP_MAP] = 1.0 if self.max_alloc_previous else 0.0
        p[EP_DELTA] = self.delta
        p[EP_LINK] = link
        p[EP_SPIKE] = 1.0 if self.limit_low_ccr else 0.0
        return p


@njit(cache=True, error_model="numpy")
def queue_control_fraction(tq, t0, a, b, qdlf):
    """ERICA+ queue control function f(Tq) (Kalyanaraman 1997, Fig. 6.6).

    ``b T0 / ((b - 1) Tq + T0)`` for ``0 <= Tq <= T0`` (from b at Tq = 0 down to 1) and
    ``max(QDLF, a T0 / ((a - 1) Tq + T0))`` for ``Tq > T0`` (from 1 towards 0).
    ``tq = inf`` (a queue with no ABR capacity to drain it) gives QDLF.
    """
    if tq <= t0:
        return b * t0 / ((b - 1.0) * tq + t0)
    if tq == np.inf:
        return qdlf
    f = a * t0 / ((a - 1.0) * tq + t0)
    if f < qdlf:
        f = qdlf
    return f


@njit(cache=True, error_model="numpy")
def erica_init(par, es, act, ccr, now):
    """Reset a port's ERICA state; before the first interval ends the target is the link."""
    for i in range(ES_NSTATE):
        es[i] = 0.0
    es[ES_TSTART] = now
    link = par[EP_LINK]
    es[ES_CABR] = link
    es[ES_TARGET] = link
    es[ES_FAIR] = link
    es[ES_NACT] = 1.0
    es[ES_FRAC] = 1.0
    for v in range(act.shape[0]):
        act[v] = 0.0
        ccr[v] = 0.0


@njit(cache=True, error_model="numpy")
def erica_on_abr_input(par, es, act, vc):
    """An ABR cell (data or FRM) of ``vc`` arrives at the port.

    Returns True when the cell count ends the averaging interval (the caller then calls
    :func:`erica_end_interval` with the current time and queue).
    """
    es[ES_NABR] += 1.0
    act[vc] = 1.0
    return es[ES_NABR] >= par[EP_NCELLS]


@njit(cache=True, error_model="numpy")
def erica_on_vbr_served(es):
    """A VBR (higher-priority) cell was transmitted on the port's link."""
    es[ES_NVBR] += 1.0


@njit(cache=True, error_model="numpy")
def erica_on_frm(ccr, vc, ccr_field):
    """Record the CCR field of a forward RM cell of ``vc`` (ERICA's CCR table)."""
    ccr[vc] = ccr_field


@njit(cache=True, error_model="numpy")
def erica_time_due(par, es, now):
    """True when the averaging interval has lasted ``T`` (the time end condition)."""
    return now - es[ES_TSTART] >= par[EP_T]


@njit(cache=True, error_model="numpy")
def erica_end_interval(par, es, act, now, queue_cells):
    """Close the averaging interval at time ``now`` with ``queue_cells`` ABR cells queued.

    Computes ABR capacity, target capacity, overload factor z, active sources and fair
    share as in the module docstring and starts a new interval.  An interval of zero
    length is ignored (returns False).
    """
    dt = now - es[ES_TSTART]
    if dt <= 0.0:
        return False
    link = par[EP_LINK]
    cabr = link - es[ES_NVBR] / dt
    if cabr < 0.0:
        cabr = 0.0
    if par[EP_QC] > 0.5:
        if cabr > 0.0:
            tq = queue_cells / cabr
        elif queue_cells > 0:
            tq = np.inf
        else:
            tq = 0.0
        frac = queue_control_fraction(tq, par[EP_T0], par[EP_A], par[EP_B], par[EP_QDLF])
    else:
        tq = queue_cells / cabr if cabr > 0.0 else 0.0
        frac = par[EP_U]
    target = frac * cabr
    if target > link:
        target = link
    inrate = es[ES_NABR] / dt
    if target > 0.0:
        zs = inrate / target
    elif inrate > 0.0:
        zs = 1.0e30          # load but no capacity: maximal overload
    else:
        zs = 0.0
    if par[EP_AVGZ] > 0.5 and es[ES_ZINIT] > 0.5:
        z = (1.0 - par[EP_AZ]) * es[ES_Z] + par[EP_AZ] * zs
    else:
        z = zs
    es[ES_ZINIT] = 1.0
    # number of active sources
    n = 0.0
    if par[EP_AVGN] > 0.5:
        for v in range(act.shape[0]):
            n += act[v]
            act[v] *= par[EP_AN]
    else:
        for v in range(act.shape[0]):
            n += act[v]
            act[v] = 0.0
    nact = n if n > 1.0 else 1.0      # boundary condition: no (or < 1) source seen
    es[ES_CABR] = cabr
    es[ES_TARGET] = target
    es[ES_Z] = z
    es[ES_NACT] = nact
    es[ES_FAIR] = target / nact
    es[ES_MAPREV] = es[ES_MACUR]
    es[ES_MACUR] = 0.0
    es[ES_INRATE] = inrate
    es[ES_TQ] = tq
    es[ES_FRAC] = frac
    es[ES_NINT] += 1.0
    es[ES_TSTART] = now
    es[ES_NABR] = 0.0
    es[ES_NVBR] = 0.0
    return True


@njit(cache=True, error_model="numpy")
def erica_feedback(par, es, ccr, vc, er_in):
    """ER for a backward RM cell of ``vc`` carrying ``er_in``; returns min(er_in, ER)."""
    z = es[ES_Z]
    target = es[ES_TARGET]
    fair = es[ES_FAIR]
    if z > 1e-12:
        vcshare = ccr[vc] / z
    else:
        vcshare = target                 # boundary condition: zero load
    er = fair if fair > vcshare else vcshare
    if par[EP_MAP] > 0.5 and z <= 1.0 + par[EP_DELTA]:
        if es[ES_MAPREV] > er:
            er = es[ES_MAPREV]
    if er > target:
        er = target
    if er > par[EP_LINK]:
        er = par[EP_LINK]
    if er > es[ES_MACUR]:
        es[ES_MACUR] = er
    if par[EP_SPIKE] > 0.5 and er > fair and ccr[vc] < fair:
        er = fair
    if er_in < er:
        return er_in
    return er
