"""A sweep's options, size and compute time, checked before its first point (issue 24).

* :func:`check_options` -- every method option must be a keyword of the method (a
  misspelt ``--option`` failed at every point, once per point);
* :func:`estimate_seconds` -- compute seconds of the whole grid, summed over workers, from
  up to :data:`SAMPLE` points spread over the grid: ``simulation`` the simulator's own
  kernel-time estimate (``sim.driver.estimated_kernel_seconds``, cells at the measured
  rate) times the replications; ``analysis`` the chain estimate
  (``markov.estimate_chain``: build and solve time from the counted entries, the count
  stopped at :data:`ANALYSIS_PROBE` states and scaled to the proven count beyond);
  ``effective_capacity`` and ``effcap_design`` :data:`CLOSED_FORM_SECONDS` a point;
  ``network`` and other methods: unknown (None).  Rough (the constants are this VM's),
  for the decision below only, never asserted;
* :func:`needs_confirmation` -- CHOICE: a sweep of more than :data:`CONFIRM_POINTS`
  points or more than :data:`CONFIRM_SECONDS` of estimated wall time (compute seconds /
  workers) runs only with ``--yes`` (or a "y" typed at a terminal).  The points are all
  the grid's, before the cache serves any.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping

__all__ = ["CONFIRM_POINTS", "CONFIRM_SECONDS", "check_options", "estimate_seconds", "needs_confirmation",
           "describe"]

#: more points than this need --yes
CONFIRM_POINTS = 10_000
#: more estimated wall seconds than this need --yes
CONFIRM_SECONDS = 3600.0
#: points of the grid whose cost is estimated (evenly spread, first and last included)
SAMPLE = 8
#: states counted per sampled analysis point
ANALYSIS_PROBE = 200_000
#: seconds of one closed-form point (eq. 23 / the M, N rule: milliseconds)
CLOSED_FORM_SECONDS = 0.01


def check_options(name: str, func: Callable, options: Mapping, flag: str = "method_options") -> None:
    """``ValueError`` naming the first option that ``func`` (a method ``f(params, seed, **options)``)
    does not take; a method with ``**kwargs`` takes any."""
    try:
        params = list(inspect.signature(func).parameters.values())[2:]
    except (TypeError, ValueError):   # a builtin or C callable: nothing to check against
        return
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return
    taken = [p.name for p in params if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                                   inspect.Parameter.KEYWORD_ONLY)]
    for key, value in options.items():
        if key not in taken:
            takes = f"takes {', '.join(taken)}" if taken else "takes no option"
            raise ValueError(f"{flag} {key}={value!r} is invalid: the {name} method {takes}")


def _sample(points: list) -> list:
    n = len(points)
    if n <= SAMPLE:
        return list(points)
    return [points[round(i * (n - 1) / (SAMPLE - 1))] for i in range(SAMPLE)]


def _simulation_seconds(p: dict, options: Mapping) -> float:
    from ..sim.driver import estimated_kernel_seconds
    from ._methods import SIMULATION_KEYS, build_sim_scenario

    reps = p.get("replications", options.get("replications", 10))
    sc = build_sim_scenario({k: v for k, v in p.items() if k not in SIMULATION_KEYS})
    return estimated_kernel_seconds(sc) * float(reps)


def _analysis_seconds(p: dict) -> float:
    import dataclasses

    from ..markov import Scenario
    from ..markov.estimate import estimate_chain

    p = {k: v for k, v in p.items() if k != "solver"}
    if isinstance(p.get("capacity"), str):
        from ..capacity import load_model
        p["capacity"] = load_model(p["capacity"])
    p = {k: v for k, v in p.items() if k in {f.name for f in dataclasses.fields(Scenario)}}
    est = estimate_chain(Scenario(**p), limit=ANALYSIS_PROBE)
    scale = 1.0 if est.complete else est.n_states / max(1, est.states_found)
    return (est.seconds + est.count_seconds) * scale


def estimate_seconds(name: str, points: list, options: Mapping) -> float | None:
    """Estimated compute seconds of every point (summed over workers), or None when unknown.

    A sampled point that cannot be built (bad parameters) is skipped: it fails at once when run.
    """
    if name in ("effective_capacity", "effcap_design"):
        return CLOSED_FORM_SECONDS * len(points)
    if name not in ("simulation", "analysis") or not points:
        return None
    costs = []
    for p in _sample(points):
        try:
            costs.append(_simulation_seconds(p, options) if name == "simulation" else _analysis_seconds(p))
        except Exception:  # noqa: BLE001 - a point that cannot be built costs nothing; it fails when run
            continue
    if not costs:
        return None
    return sum(costs) / len(costs) * len(points)


def needs_confirmation(n_points: int, seconds: float | None, workers: int) -> bool:
    """Whether a sweep is above the thresholds (:data:`CONFIRM_POINTS`, :data:`CONFIRM_SECONDS`)."""
    wall = None if seconds is None else seconds / max(1, workers)
    return n_points > CONFIRM_POINTS or (wall is not None and wall > CONFIRM_SECONDS)


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def describe(n_points: int, seconds: float | None, workers: int) -> str:
    """``"20,000 points, about 3.1 h on 2 workers"`` (time: "time unknown" for other methods)."""
    if seconds is None:
        return f"{n_points:,} points (time unknown for this method)"
    return f"{n_points:,} points, about {_duration(seconds / max(1, workers))} on {workers} worker" + \
        ("s" if workers != 1 else "")
