"""Robust designs (issue 26 item 3): held out on a trace, worst case over psi.

:func:`design_held_out` designs on one half of a trace (:func:`tcpabr_model.trace_study.trace_halves`)
and reports the chosen designs on the OTHER half, both ways round, beside TCP alone and
INSTCAP replayed on that half: the judgement is on data the design did not see.

:func:`design_over_psi` designs the paper's two-state link at several psi at once: a
candidate is feasible if its p95 delay is within the limit at every psi, and the robust
design is the feasible one with the highest worst-case throughput (max-min).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .._validate import check_real
from ..sim.scenario import _DEFAULT_HIGH_RATE, Scenario
from .search import Candidate, Design, _workers, candidate_grid, finish, submit

__all__ = ["HeldOutRound", "HeldOut", "design_held_out", "PsiDesign", "design_over_psi", "best_within"]

_TCP, _INSTCAP = Candidate("none"), Candidate("instcap")


def best_within(points, limit: float | None, feedback: str | None = None):
    """The point of highest mean throughput whose mean p95 delay is within ``limit``
    (seconds; None: no limit), among ``feedback``'s candidates (None: all); None if none is."""
    ok = [p for p in points if (feedback is None or p.candidate.feedback == feedback)
          and np.isfinite(p.throughput.mean) and np.isfinite(p.p95_delay.mean)
          and (limit is None or p.p95_delay.mean <= limit)]
    return max(ok, key=lambda p: p.throughput.mean) if ok else None


@dataclass(frozen=True)
class HeldOutRound:
    """One way round: designed on ``design_half``, reported on ``test_half``.

    ``limit``: the p95 limit the choice used (seconds; the given one, or INSTCAP's p95 on the
    design half when none was given: "at no more delay than INSTCAP").  ``chosen``: the best
    candidate within it on the design half; ``chosen_effcap``: the best EFFCAP within it.
    ``test``: TCP alone, INSTCAP and the chosen designs replayed on the held-out half."""

    design_half: str
    test_half: str
    limit: float | None
    limit_source: str
    designed: Design
    chosen: Candidate | None
    chosen_effcap: Candidate | None
    test: Design

    def on_test(self, cand: Candidate | None):
        """``cand``'s point on the held-out half (None for None)."""
        return None if cand is None else next(p for p in self.test.points if p.candidate == cand)

    def effcap_vs_instcap(self) -> dict | None:
        """The issue's target on the held-out half: the designed EFFCAP's throughput relative to
        INSTCAP's and its p95 minus INSTCAP's (seconds), and whether it is within 5 % at no
        more p95 delay (the p95 compared with INSTCAP's CI half width: 'no more' = not above
        INSTCAP's mean + half width)."""
        e, i = self.on_test(self.chosen_effcap), self.on_test(_INSTCAP)
        if e is None:
            return None
        rel = e.throughput.mean / i.throughput.mean - 1.0 if i.throughput.mean > 0 else float("nan")
        hw = i.p95_delay.half_width if i.p95_delay.has_interval else 0.0
        dp = e.p95_delay.mean - i.p95_delay.mean
        return {"throughput_rel": rel, "p95_diff_s": dp, "instcap_p95_half_width_s": hw,
                "met": bool(rel >= -0.05 and dp <= hw)}

    def to_dict(self) -> dict:
        return {"design_half": self.design_half, "test_half": self.test_half, "limit_s": self.limit,
                "limit_source": self.limit_source,
                "chosen": None if self.chosen is None else self.chosen.label,
                "chosen_effcap": None if self.chosen_effcap is None else self.chosen_effcap.label,
                "effcap_vs_instcap_held_out": self.effcap_vs_instcap(),
                "designed": self.designed.to_dict(), "held_out": self.test.to_dict()}

    def lines(self) -> list:
        lim = "none" if self.limit is None else f"{1e3 * self.limit:.4g} ms ({self.limit_source})"
        out = [f"== designed on {self.design_half}; p95 limit {lim}"]
        out += ["   " + x for x in self.designed.lines()]
        out.append(f"== reported on the OTHER half, held out: {self.test_half}")
        for name, c in (("chosen", self.chosen), ("chosen EFFCAP", self.chosen_effcap), ("INSTCAP", _INSTCAP),
                        ("TCP alone", _TCP)):
            p = self.on_test(c)
            if p is None:
                out.append(f"   {name:14s} none within the limit on the design half")
                continue
            out.append(f"   {name:14s} {c.label:26s} throughput {p.throughput.format('.4f')}  "
                       f"p95 {1e3 * p.p95_delay.mean:.4g} ms  mean {1e3 * p.mean_delay.mean:.4g} ms")
        t = self.effcap_vs_instcap()
        if t is not None:
            out.append(f"   held out, designed EFFCAP against INSTCAP: throughput {100 * t['throughput_rel']:+.1f} %, "
                       f"p95 {1e3 * t['p95_diff_s']:+.4g} ms -> target (within 5 %, no more p95) "
                       f"{'met' if t['met'] else 'NOT met'}")
        return out


@dataclass(frozen=True)
class HeldOut:
    """Both rounds of :func:`design_held_out`."""

    rounds: tuple

    def to_dict(self) -> dict:
        return {"held_out": True, "rounds": [r.to_dict() for r in self.rounds]}

    def lines(self) -> list:
        out = ["held-out design: each half of the trace designs, the other half judges (issue 26)"]
        for r in self.rounds:
            out += r.lines()
        return out


def design_held_out(base: Scenario, candidates=None, *, replications: int = 3, seed: int = 0, workers: int = 1,
                    max_p95_delay: float | None = None, duration: float | None = None,
                    analysis: bool = True, progress=None) -> HeldOut:
    """Design on each half of ``base``'s trace and report on the other half.

    Both halves' designs go to one pool of ``workers`` at once, then both replays on the
    other halves (:func:`~tcpabr_model.design.search.submit`): the numbers do not depend on
    it (docs/design.md "Time").

    Parameters
    ----------
    base : Scenario
        Its ``capacity`` must be a :class:`tcpabr_model.capacity.Trace`.
    candidates, replications, seed, workers, analysis, progress
        As in :func:`design` (TCP alone and INSTCAP are added if missing).
    max_p95_delay : float, optional
        p95 limit of the choice, seconds; None: INSTCAP's p95 on the design half.
    duration : float, optional
        Measured seconds per replication on each half; None: the half's period (each
        replication replays the whole half once, from a random start).
    """
    from ..capacity import Trace
    from ..trace_study import trace_halves

    if not isinstance(base, Scenario) or not isinstance(base.capacity, Trace):
        raise ValueError("base is invalid for a held-out design: its capacity must be a trace "
                         "(tcpabr design --capacity-trace TRACE)")
    workers = _workers(workers)
    if max_p95_delay is not None:
        max_p95_delay = check_real("max_p95_delay", max_p95_delay, 0.0, low_open=True)
    cands = candidate_grid() if candidates is None else tuple(candidates)
    cands = tuple(dict.fromkeys((_TCP, _INSTCAP) + cands))
    halves = trace_halves(base.capacity)
    bases = []
    for h in halves:
        d = duration if duration is not None else h.period_ms / 1000.0
        # each half has its own busiest ms, hence its own high rate (derived again)
        bases.append(base.with_(capacity=h, capacity_offset=None, duration=d, high_rate=_DEFAULT_HIGH_RATE,
                                warmup=min(base.warmup, d / 10.0)))
    from ..sim.driver import replication_pool

    with replication_pool(workers) as pool:
        # both halves' designs in the pool at once, then both replays on the other halves
        subs = [submit(b, cands, replications=replications, seed=seed, pool=pool) for b in bases]
        designed = [_choose(finish(sub, analysis=analysis, progress=progress), max_p95_delay) for sub in subs]
        tests = [submit(bases[1 - k], _test_candidates(designed[k]), replications=replications, seed=seed + 1,
                        pool=pool) for k in (0, 1)]
        rounds = []
        for k in (0, 1):
            d, limit, src, best, beff = designed[k]
            t = finish(tests[k], analysis=False, progress=progress)
            rounds.append(HeldOutRound(halves[k].name, halves[1 - k].name, limit, src, d,
                                       best and best.candidate, beff and beff.candidate, t))
    return HeldOut(tuple(rounds))


def _choose(d: Design, max_p95_delay: float | None) -> tuple:
    """A held-out round's choice on its design half: ``(design with the limit's feasibility,
    limit, where the limit comes from, best point, best EFFCAP point)``; the limit is
    ``max_p95_delay`` or INSTCAP's p95 on the design half."""
    inst = next(p for p in d.points if p.candidate == _INSTCAP)
    limit, src = (max_p95_delay, "given") if max_p95_delay is not None else \
        (float(inst.p95_delay.mean), "INSTCAP's p95 on the design half")
    if not np.isfinite(limit):
        limit, src = None, "none: INSTCAP's p95 on the design half is undefined"
    best, beff = best_within(d.points, limit), best_within(d.points, limit, "effcap")
    pts = tuple(replace(p, feasible=bool(limit is None or p.p95_delay.mean <= limit)) for p in d.points)
    best = None if best is None else pts[d.points.index(best)]
    d = Design(points=pts, best=best, max_p95_delay=limit, evaluated_with=d.evaluated_with,
               replications=d.replications, seed=d.seed, scenario=d.scenario)
    return d, limit, src, best, beff


def _test_candidates(chosen: tuple) -> tuple:
    """What a round replays on the held-out half: its choices, INSTCAP and TCP alone."""
    _, _, _, best, beff = chosen
    return tuple(dict.fromkeys(c for c in (best and best.candidate, beff and beff.candidate, _INSTCAP, _TCP)
                               if c is not None))


@dataclass(frozen=True)
class PsiDesign:
    """:func:`design_over_psi`'s result: one :class:`Design` per psi, and the robust choice
    (highest worst-case throughput among the candidates within the limit at every psi)."""

    psis: tuple
    designs: tuple
    robust: Candidate | None
    robust_min_throughput: float | None
    max_p95_delay: float | None

    def to_dict(self) -> dict:
        return {"psi": list(self.psis), "max_p95_delay_s": self.max_p95_delay,
                "robust": None if self.robust is None else self.robust.label,
                "robust_min_throughput": self.robust_min_throughput,
                "per_psi": [{"psi": s, **d.to_dict()} for s, d in zip(self.psis, self.designs)]}

    def lines(self) -> list:
        cands = [p.candidate for p in self.designs[0].points]
        head = "".join(f" psi={s:<20g}" for s in self.psis)
        lim = "none" if self.max_p95_delay is None else f"{1e3 * self.max_p95_delay:g} ms"
        out = [f"robust design over psi (worst case), p95 limit {lim}; throughput / p95 ms per psi "
               "(simulator)", f"  {'candidate':28s}{head}  worst"]
        for i, c in enumerate(cands):
            pts = [d.points[i] for d in self.designs]
            cells = "".join(f" {p.throughput.mean:.4f} / {1e3 * p.p95_delay.mean:<11.4g}" for p in pts)
            worst = min(p.throughput.mean for p in pts)
            mark = ">" if c == self.robust else " "
            out.append(f"{mark} {c.label:28s}{cells}  {worst:.4f}")
        for i, c in enumerate(cands):
            pts = [d.points[i] for d in self.designs]
            if any(p.analysis is not None and "error" not in p.analysis for p in pts):
                cells = "".join(" " + ("-" if p.analysis is None or "error" in p.analysis else
                                       f"{p.analysis['throughput']:.4f} ({'holds' if p.analysis['holds'] else 'not valid'})")
                                for p in pts)
                out.append(f"  analysis beside {c.label} (throughput, no p95):{cells}")
        out.append(f"robust design: {'none within the limit at every psi' if self.robust is None else self.robust.label}"
                   + ("" if self.robust is None else f" (worst-case throughput {self.robust_min_throughput:.4f})"))
        return out


def design_over_psi(bases, psis, candidates=None, *, replications: int = 3, seed: int = 0, workers: int = 1,
                    max_p95_delay: float | None = None, analysis: bool = True, progress=None) -> PsiDesign:
    """Design every candidate on each of ``bases`` (one :class:`Scenario` per value of
    ``psis``, the same candidates and seed) and choose the max-min design: among the
    candidates whose mean p95 delay is within ``max_p95_delay`` (seconds; None: no limit)
    at every psi, the one with the highest smallest throughput."""
    bases, psis = tuple(bases), tuple(float(x) for x in psis)
    if not bases or len(bases) != len(psis):
        raise ValueError(f"psis={list(psis)!r} is invalid: need one scenario per psi, got {len(bases)}")
    cands = candidate_grid() if candidates is None else tuple(candidates)
    workers = _workers(workers)
    if max_p95_delay is not None:
        max_p95_delay = check_real("max_p95_delay", max_p95_delay, 0.0, low_open=True)
    from ..sim.driver import replication_pool

    with replication_pool(workers) as pool:     # every psi's replications in one pool
        subs = [submit(b, cands, replications=replications, seed=seed, pool=pool) for b in bases]
        ds = tuple(finish(sub, max_p95_delay=max_p95_delay, analysis=analysis, progress=progress) for sub in subs)
    best, val = None, None
    for i, c in enumerate(cands):
        pts = [d.points[i] for d in ds]
        if not all(p.feasible and np.isfinite(p.throughput.mean) for p in pts):
            continue
        worst = min(p.throughput.mean for p in pts)
        if val is None or worst > val:
            best, val = c, worst
    return PsiDesign(psis, ds, best, val, max_p95_delay)
