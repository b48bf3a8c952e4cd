"""Candidate feedbacks, their evaluation by the simulator, and the Pareto front of
throughput against p95 delay (issue 26 item 3, first part; see the package docstring).

Throughput is ``efficiency_wire`` of :class:`~tcpabr_model.sim.SimulationResult`: the wire
bytes of the frames delivered in order over the capacity on the wire in the measured
window, so TCP alone (no cell tax) and the ABR sources compare on one scale.  Delay is the
end-to-end ``total`` of :mod:`tcpabr_model.sim.delay` (segmentation buffer + bottleneck
queue; the round trip Delta is on the ACK path and adds the same to every candidate).
Every candidate runs with the same seed, so with the same capacity paths (common random
numbers).  :func:`submit` hands every replication of every candidate to one process pool at
once (:func:`tcpabr_model.sim.driver.simulate_many`) and :func:`finish` collects them, the
analysis computed meanwhile; :func:`design` is the two in one pool (docs/design.md "Time").
"""

from __future__ import annotations

import itertools
import numbers
from dataclasses import dataclass

import numpy as np

from .._validate import check_choice, check_int, check_real
from ..sim.scenario import _DEFAULT_HIGH_RATE, Scenario, capacity_high_rate
from ..stats import Estimate, two_digits

__all__ = ["Candidate", "DesignPoint", "Design", "candidate_grid", "pareto_front", "design", "submit", "finish",
           "Submitted"]

FEEDBACKS = ("effcap", "instcap", "none")


#: each parameter's check, shared by :class:`Candidate` and :func:`candidate_grid` (interval None:
#: the base scenario's)
_CHECKS = {
    "m": lambda v: check_int("m", v, 1, 10_000),
    "n": lambda v: check_int("n", v, 1, 10_000),
    "interval": lambda v: None if v is None else check_real("interval", v, 0.0, 1e4, low_open=True),
    "mcr": lambda v: check_real("mcr", v, 0.0, 1.0),
    "utilisation": lambda v: check_real("utilisation", v, 0.0, 1.0, low_open=True),
}


@dataclass(frozen=True)
class Candidate:
    """One feedback design.

    Parameters
    ----------
    feedback : {'effcap', 'instcap', 'none'}
        'none' is TCP alone (the reference without rate feedback).
    m, n : int, optional
        EFFCAP's M (measurement intervals per average) and N (averages in the minimum,
        eq. 28); None: the paper's rule M : Delta, N : 8 Delta (Section V-B).
    interval : float, optional
        Measurement interval s, seconds (> 0); None: the base scenario's.
    mcr : float, optional(default=0.0)
        Minimum rate of the ABR source, a fraction of the high rate, in [0, 1].
    utilisation : float, optional(default=1.0)
        Fraction of the capacity estimate fed back, in (0, 1] (shared equally by the
        connections: ``share = utilisation / connections``); below 1 is the target
        utilisation of explicit-rate schemes.
    """

    feedback: str
    m: int | None = None
    n: int | None = None
    interval: float | None = None
    mcr: float = 0.0
    utilisation: float = 1.0

    def __post_init__(self):
        s = object.__setattr__
        check_choice("feedback", self.feedback, FEEDBACKS)
        if self.feedback != "effcap" and (self.m is not None or self.n is not None):
            raise ValueError(f"m={self.m!r}, n={self.n!r} are invalid with feedback={self.feedback!r}: "
                             "M and N are EFFCAP's")
        for name in ("m", "n"):
            if getattr(self, name) is not None:
                s(self, name, _CHECKS[name](getattr(self, name)))
        for name in ("interval", "mcr", "utilisation"):
            s(self, name, _CHECKS[name](getattr(self, name)))
        if self.feedback == "none" and (self.mcr != 0.0 or self.utilisation != 1.0 or self.interval is not None):
            raise ValueError("feedback='none' (TCP alone) takes no mcr, utilisation or interval")

    @property
    def label(self) -> str:
        """A short name: ``TCP alone``, ``INSTCAP u=0.9``, ``EFFCAP M=4 N=32 s=0.03 mcr=0.05``,
        ``EFFCAP paper rule``."""
        if self.feedback == "none":
            return "TCP alone"
        parts = [self.feedback.upper()]
        if self.feedback == "effcap":
            parts.append("paper rule" if self.m is None and self.n is None else f"M={self.m} N={self.n}")
        if self.utilisation != 1.0:
            parts.append(f"u={self.utilisation:g}")
        if self.interval is not None:
            parts.append(f"s={self.interval:g}")
        if self.mcr:
            parts.append(f"mcr={self.mcr:g}")
        return " ".join(parts)

    def scenario(self, base: Scenario) -> Scenario:
        """``base`` with this feedback (every other field kept)."""
        kw = {"feedback": self.feedback, "m": self.m, "n": self.n}
        if self.feedback != "none":
            kw["mcr"] = self.mcr
            kw["share"] = self.utilisation / base.n_connections
        else:
            kw["mcr"] = 0.0
            kw["share"] = None
        if self.interval is not None:
            kw["interval"] = self.interval
        if base.capacity is not None and capacity_high_rate(base.capacity, base.payload_bytes, 1) is not None:
            # a trace (or a model in seconds) fixes the peak in link bytes, so the payload's
            # high rate differs between ATM (cells) and TCP alone (IP packets): derive it again
            kw["high_rate"] = _DEFAULT_HIGH_RATE
        return base.with_(**kw)

    def to_dict(self) -> dict:
        return {"label": self.label, "feedback": self.feedback, "m": self.m, "n": self.n,
                "interval": self.interval, "mcr": self.mcr, "utilisation": self.utilisation}


def candidate_grid(*, m=(), n=(), interval=(None,), mcr=(0.0,), utilisation=(1.0,),
                   references: bool = True) -> tuple:
    """EFFCAP at every (M, N, s, mcr) of the grids, INSTCAP at every (utilisation, s, mcr)
    but utilisation 1 at the base interval (s None) and mcr 0, which is the reference INSTCAP,
    and (``references``) TCP alone, INSTCAP and EFFCAP with the paper's rule at the base
    scenario's interval.  Each grid is a sequence or one value; every value is checked as
    :class:`Candidate` checks it (utilisation in (0, 1]).  Duplicates are dropped, order kept;
    EFFCAP with M = N = 1 is left out: it is INSTCAP (the same run, counter for counter)."""
    m, n, interval, mcr, utilisation = (_grid(name, values, _CHECKS[name]) for name, values in
                                        (("m", m), ("n", n), ("interval", interval), ("mcr", mcr),
                                         ("utilisation", utilisation)))
    out = []
    if references:
        out += [Candidate("none"), Candidate("instcap"), Candidate("effcap")]
    for mm, nn, s, r in itertools.product(m, n, interval, mcr):
        if mm == 1 and nn == 1:     # EFFCAP with M = N = 1 is INSTCAP (sim/feedback.py), run once
            continue
        out.append(Candidate("effcap", m=mm, n=nn, interval=s, mcr=r))
    for u, s, r in itertools.product(utilisation, interval, mcr):
        if u < 1.0 or s is not None or r != 0.0:    # else the reference INSTCAP
            out.append(Candidate("instcap", interval=s, mcr=r, utilisation=u))
    return tuple(dict.fromkeys(out))


def _grid(name: str, values, check) -> tuple:
    """``values`` (a sequence, or one value: a grid of one) as a tuple, each ``check``-ed."""
    if values is None or isinstance(values, numbers.Real):
        return (check(values),)
    try:
        if isinstance(values, (str, bytes)):
            raise TypeError
        grid = tuple(values)
    except TypeError:
        raise ValueError(f"{name}={values!r} is invalid: must be a number or a sequence of numbers") from None
    return tuple(check(v) for v in grid)


def _workers(workers) -> int:
    """``workers`` checked as the simulator's drivers check it."""
    return check_int("workers", workers, 1, 256)


def pareto_front(throughput, delay) -> np.ndarray:
    """Boolean mask of the points no other point dominates (throughput at least as high and
    delay at least as low, one of them strictly).  NaN values are never on the front."""
    x = np.asarray(throughput, dtype=float)
    d = np.asarray(delay, dtype=float)
    if x.shape != d.shape or x.ndim != 1:
        raise ValueError(f"throughput and delay are invalid: need two 1-d arrays of one length, got shapes "
                         f"{x.shape} and {d.shape}")
    ok = np.isfinite(x) & np.isfinite(d)
    front = ok.copy()
    for i in np.nonzero(ok)[0]:
        dom = ok & (x >= x[i]) & (d <= d[i]) & ((x > x[i]) | (d < d[i]))
        if dom.any():
            front[i] = False
    return front


@dataclass(frozen=True)
class DesignPoint:
    """A candidate's results: ``throughput`` (efficiency_wire), ``p95_delay`` and
    ``mean_delay`` (end to end, seconds), each an Estimate over replications; whether it is
    on the Pareto front and within the delay limit.  ``analysis``: the Markov analysis beside
    it where it has one (:func:`tcpabr_model.design.analysis.analysis_beside`; throughput and
    mean delays, never a p95), else None."""

    candidate: Candidate
    throughput: Estimate
    p95_delay: Estimate
    mean_delay: Estimate
    on_front: bool
    feasible: bool
    analysis: dict | None = None

    @property
    def evaluated_by(self) -> str:
        """What evaluated what: the simulator always (throughput, p95 and mean delay, the
        front); the analysis beside it (throughput and mean delay only) where it has one."""
        if self.analysis is None or "error" in self.analysis:
            return "simulator"
        return "simulator; analysis beside (throughput, mean delay)"

    def to_dict(self) -> dict:
        return {"candidate": self.candidate.to_dict(), "throughput": self.throughput.to_dict(),
                "p95_delay_s": self.p95_delay.to_dict(), "mean_delay_s": self.mean_delay.to_dict(),
                "on_front": self.on_front, "feasible": self.feasible, "evaluated_by": self.evaluated_by,
                "analysis": self.analysis}


@dataclass(frozen=True)
class Design:
    """What :func:`design` returns: every evaluated point, the best feasible one (highest
    throughput with p95 delay within ``max_p95_delay``; None if none is), how the points were
    evaluated, and the run's settings."""

    points: tuple
    best: DesignPoint | None
    max_p95_delay: float | None
    evaluated_with: str
    replications: int
    seed: int
    scenario: Scenario

    @property
    def front(self) -> tuple:
        """The Pareto-front points, by increasing p95 delay."""
        return tuple(sorted((p for p in self.points if p.on_front), key=lambda p: p.p95_delay.mean))

    def to_dict(self) -> dict:
        return {"evaluated_with": self.evaluated_with, "replications": self.replications, "seed": self.seed,
                "max_p95_delay_s": self.max_p95_delay, "scenario": self.scenario.to_dict(),
                "points": [p.to_dict() for p in self.points],
                "front": [p.candidate.label for p in self.front],
                "best": None if self.best is None else self.best.to_dict()}

    def lines(self) -> list:
        """A table: one line per candidate ('*' on the front, '>' the best)."""
        out = [f"evaluated with the {self.evaluated_with}, {self.replications} replications, seed {self.seed}; "
               "throughput = efficiency_wire, delay = end to end per delivered segment (ms)"]
        for p in self.points:
            mark = (">" if p is self.best else " ") + ("*" if p.on_front else " ")
            out.append(f"{mark} {p.candidate.label:28s} throughput {p.throughput.format('.4f')}  "
                       f"p95 {_ms(p.p95_delay)}  mean {_ms(p.mean_delay)}  [{p.evaluated_by}]")
            a = p.analysis
            if a is not None and "error" in a:
                out.append(f"     analysis: not computed ({a['error']})")
            elif a is not None:
                out.append(f"     analysis: throughput {a['throughput']:.4f} (band {a['band'][0]:.4f}-"
                           f"{a['band'][1]:.4f}; {'holds' if a['holds'] else 'does NOT hold'} here: "
                           f"{a['validity']}), mean delay {1e3 * a['mean_delay_s']:.4g} ms (Little's law), "
                           f"no p95; {a['seconds']:.2f} s")
        lim = "" if self.max_p95_delay is None else f" with p95 <= {1e3 * self.max_p95_delay:g} ms"
        out.append(f"best{lim}: {'none' if self.best is None else self.best.candidate.label}; * = Pareto front")
        return out


def _ms(e: Estimate) -> str:
    m = f"{1e3 * e.mean:.4g}"
    return m if not e.has_interval else f"{m} +/- {two_digits(1e3 * e.half_width)}{e.clip_note('.4g', 1e3)}"


def design(base: Scenario, candidates=None, *, replications: int = 3, seed: int = 0, workers: int = 1,
           max_p95_delay: float | None = None, progress=None, analysis: bool = True) -> Design:
    """Evaluate ``candidates`` (default: :func:`candidate_grid` with the references only) on
    ``base`` with the simulator (:func:`tcpabr_model.sim.simulate`, the same seed for all;
    every replication of every candidate in one pool of ``workers``: :func:`submit`,
    :func:`finish`).

    Parameters
    ----------
    base : Scenario
        The link, round trip, buffer and TCP; its feedback fields are replaced per candidate.
    candidates : sequence of Candidate, optional
    replications, seed, workers
        As in :func:`~tcpabr_model.sim.simulate`; a deterministic link (a constant trace) gets
        one replication (every replication is the same run) and no interval.
    max_p95_delay : float, optional
        Delay limit, seconds (> 0): the best design is the highest throughput among the
        candidates whose mean p95 delay is within it; None: no limit.
    progress : callable, optional
        Called with each candidate's label after its evaluation.
    analysis : bool, optional(default=True)
        Report the Markov analysis beside the candidates it covers (TCP alone, INSTCAP at
        utilisation 1; :mod:`tcpabr_model.design.analysis`).  The front and the best design
        are the simulator's either way.

    Returns
    -------
    Design
    """
    from ..sim.driver import replication_pool

    workers = _workers(workers)     # before anything is submitted
    if max_p95_delay is not None:
        max_p95_delay = check_real("max_p95_delay", max_p95_delay, 0.0, low_open=True)
    with replication_pool(workers) as pool:
        return finish(submit(base, candidates, replications=replications, seed=seed, pool=pool),
                      max_p95_delay=max_p95_delay, analysis=analysis, progress=progress)


@dataclass(frozen=True)
class Submitted:
    """A design whose simulations are submitted (:func:`submit`) and not yet collected
    (:func:`finish`): the base, the candidates, the replications (1 for a deterministic
    link), the seed and the iterator of their :class:`~tcpabr_model.sim.SimulationResult`."""

    base: Scenario
    candidates: tuple
    replications: int
    seed: int
    results: object


def submit(base: Scenario, candidates=None, *, replications: int = 3, seed: int = 0, pool=None) -> Submitted:
    """Submit every replication of every candidate on ``base`` to ``pool`` at once
    (:func:`tcpabr_model.sim.driver.simulate_many`; None: run them in this process when
    :func:`finish` collects them).  Several designs submitted to one pool keep all its
    workers busy (docs/design.md "Time"); the numbers are :func:`design`'s either way."""
    from ..sim.driver import scenario_is_random, simulate_many

    if not isinstance(base, Scenario):
        raise ValueError(f"base={base!r} is invalid: must be a Scenario")
    cands = candidate_grid() if candidates is None else tuple(candidates)
    if not cands or not all(isinstance(c, Candidate) for c in cands):
        raise ValueError(f"candidates={candidates!r} is invalid: must be a non-empty sequence of Candidate")
    if not scenario_is_random(base):    # a constant trace: every replication is the same run
        replications = 1
    res = simulate_many([c.scenario(base) for c in cands], replications=replications, seed=seed, pool=pool)
    return Submitted(base, cands, replications, seed, res)


def finish(sub: Submitted, *, max_p95_delay: float | None = None, analysis: bool = True, progress=None) -> Design:
    """The :class:`Design` of a :func:`submit`: the analysis beside the candidates it covers
    (computed here, while the pool simulates), then the simulations collected in order, the
    front and the best within ``max_p95_delay`` (see :func:`design`)."""
    from .analysis import analysis_beside

    if max_p95_delay is not None:
        max_p95_delay = check_real("max_p95_delay", max_p95_delay, 0.0, low_open=True)
    cache = {}
    beside = [analysis_beside(sub.base, c, cache) if analysis else None for c in sub.candidates]
    rows = []
    for c, r in zip(sub.candidates, sub.results):
        rows.append((c, r.efficiency_wire, r.delay.total.p95, r.delay.total.mean))
        if progress is not None:
            progress(c.label)
    front = pareto_front([x[1].mean for x in rows], [x[2].mean for x in rows])
    pts = tuple(DesignPoint(c, th, p95, mean, bool(f),
                            max_p95_delay is None or (np.isfinite(p95.mean) and p95.mean <= max_p95_delay), a)
                for (c, th, p95, mean), f, a in zip(rows, front, beside))
    feas = [p for p in pts if p.feasible and np.isfinite(p.throughput.mean)]
    best = max(feas, key=lambda p: p.throughput.mean) if feas else None
    return Design(points=pts, best=best, max_p95_delay=max_p95_delay, evaluated_with="simulator",
                  replications=sub.replications, seed=sub.seed, scenario=sub.base)
