"""The Markov analysis beside the simulator in the designer (issue 26 item 3).

The analysis (:func:`tcpabr_model.markov.analyze`) covers TCP alone and INSTCAP feeding
back the whole capacity (target utilisation 1, no minimum rate, the paper's interval) for
one timeout-only connection, on the paper's two-state link, on a trace through the chain
fitted at epoch = RTT (:func:`tcpabr_model.trace_study.fit_link`), or on a K-level capacity
model (``tcpabr design --capacity``; docs/model.md sec. 10: the round trip in packet times at
the peak level, the model's chain per round trip).  It gives the throughput
(``prediction`` and the band) and the MEAN delays by Little's law (docs/model.md sec. 13),
no quantile: the designer keeps the simulator for the front (p95) and reports the analysis
beside the candidates it covers, saying whether its throughput holds there:

* two-state link: psi > 5 (docs/validity.md: the prediction is within CI + 5 % of the
  simulator at 52 of 56 points with psi > 5 and 2 of 32 with psi <= 5);
* trace: none of :func:`tcpabr_model.trace_study.link_validity`'s strained assumptions;
* capacity model: the occupancy-weighted mean sojourn of a level above 5 round trips (the
  two-state criterion, psi being that sojourn there; not measured on K-level models).  A
  model the engine cannot take (an outage level, under one packet per round trip at the
  lowest level, an epoch that is not the round trip over an integer, a chain beyond
  :data:`MAX_STATES` or :data:`MAX_SECONDS`) is reported with the reason, never analysed.

Its mean delays are Little's law on the chain's occupancies (docs/model.md sec. 13; docs/validity.md
"Delay": the total within CI + 5 % of the simulator at 52 of the 56 Fig. 8/9 points where the
throughput holds; on measured links TCP alone's queueing delay a median 1.02 of a simulation of
the modelled link, 0.44-1.20); every record says that they are means, without a p95.
"""

from __future__ import annotations

import time

import numpy as np

from ..capacity import Trace
from ..sim.scenario import Scenario

__all__ = ["analysable", "analysis_beside", "analysis_only", "analysis_only_refusal", "PSI_HOLDS", "MAX_STATES",
           "INSTCAP_LAG_HOLDS", "instcap_timing_strain"]

#: the designer's cap on the embedded chain (counting stops above it within seconds; a
#: larger chain is reported as not analysed, with the reason, and the simulator stands alone)
MAX_STATES = 20_000
#: and on its estimated build-and-solve time, seconds (:func:`tcpabr_model.markov.estimate_chain`)
MAX_SECONDS = 10.0

#: the two-state link's psi above which the throughput prediction holds (docs/validity.md)
PSI_HOLDS = 5.0
_DELAY_NOTE = ("mean delays by Little's law (docs/validity.md 'Delay': within CI + 5 % of the simulator at 52 "
               "of 56 points of the Fig. 8/9 grid where the throughput holds); no p95 from the analysis")


def analysable(base: Scenario, candidate) -> str | None:
    """None if the analysis covers ``candidate`` on ``base``, else the reason it does not."""
    if candidate.feedback == "effcap":
        # the engine's EFFCAP takes one sample per round trip (docs/model.md sec. 20): a candidate measuring
        # every s = RTT is that chain; other intervals are not
        s = base.interval if candidate.interval is None else candidate.interval
        if abs(s - base.rtt[0]) > 1e-9 * base.rtt[0]:
            return (f"the analysis' EFFCAP samples once per round trip (s = {base.rtt[0]:g} s), this candidate every "
                    f"{s:g} s (docs/model.md sec. 20)")
        if isinstance(base.capacity, Trace):
            return "on a fitted trace EFFCAP's history chain is too large for the designer (docs/model.md sec. 20)"
        if candidate.utilisation != 1.0 or candidate.mcr != 0.0:
            return "the analysis' EFFCAP feeds back eq. 28 of the whole capacity (utilisation 1, no mcr)"
    if candidate.feedback == "instcap" and (candidate.utilisation != 1.0 or candidate.mcr != 0.0
                                            or candidate.interval is not None):
        return "the analysis' INSTCAP feeds back the whole capacity each round trip (utilisation 1, no mcr)"
    if base.n_connections != 1:
        return "the analysis has one connection"
    if base.tcp.variant != "timeout-only":
        return f"TCP variant {base.tcp.variant!r}: the designer's analysis is the timeout-only engine"
    return None


def analysis_beside(base: Scenario, candidate, cache: dict | None = None, simulated: bool = True) -> dict | None:
    """The analysis of ``candidate`` on ``base`` as a JSON-ready dict, or None where it has none.

    Keys: ``throughput`` (efficiency, the prediction), ``band`` ([conservative, optimistic]),
    ``mean_delay_s`` (source + queueing, seconds; the propagation delay is not in it, as in the
    simulator's ``total``), ``mean_queueing_delay_s``, ``mean_source_delay_s``, ``holds``
    (whether the throughput prediction is in its validity region here), ``validity`` (why),
    ``delay_note``, ``seconds`` (the analysis' wall time, the fit of a trace's chain included).
    ``cache`` (a dict) keeps a trace's fitted chain between candidates.  Where the analysis
    covers the candidate but cannot be computed (a chain above :data:`MAX_STATES` states, a
    fit that fails), the dict has ``error`` (the reason) and ``seconds`` only.  ``simulated``
    (the analysis beside a simulation of the candidate): INSTCAP does not hold where the
    simulator feeds back a rate older than the analysis' round trip (:func:`instcap_timing_strain`);
    :func:`analysis_only` passes False.
    """
    from ..errors import ModelError

    if analysable(base, candidate) is not None:
        return None
    t0 = time.perf_counter()
    try:
        return _analysis(base, candidate, {} if cache is None else cache, t0, simulated)
    except (ModelError, ValueError, MemoryError) as e:
        return {"error": " ".join(str(e).split()), "seconds": time.perf_counter() - t0}


def _analysis(base: Scenario, candidate, cache: dict, t0: float, simulated: bool = True) -> dict:
    from ..markov import analyze, estimate_chain

    eff = _effcap_mn(base, candidate)
    if base.capacity is None:
        ms, unit, scale, holds, why = _two_state_scenario(base, candidate.feedback, **eff)
    elif isinstance(base.capacity, Trace):
        ms, unit, scale, holds, why = _trace_scenario(base, candidate.feedback, cache)
    else:
        ms, unit, scale, holds, why = _model_scenario(base, candidate.feedback, **eff)
    if eff and eff["effcap_n"] >= EFFCAP_N_HOLDS and not holds:   # the Fig. 8/9 map: a long minimum holds at any psi
        holds, why = True, (f"{why}, but EFFCAP's minimum spans N = {eff['effcap_n']} >= {EFFCAP_N_HOLDS} round trips "
                            "(docs/model.md sec. 20: within CI + 5 % at every psi of the Fig. 8/9 grid)")
    # beside a simulation of INSTCAP or EFFCAP, say where the simulated feedback is older than the analysis'
    late = (instcap_timing_strain(base, candidate.interval, candidate.feedback.upper())
            if (simulated and candidate.feedback in ("instcap", "effcap")) else None)
    if late is not None:
        holds, why = False, f"{why}; {late}"
    est = estimate_chain(ms, limit=MAX_STATES)
    if not est.complete or est.seconds > MAX_SECONDS:
        size = f"more than {MAX_STATES:,} states" if not est.complete else \
            f"{est.n_states:,} states, {est.nnz:,} nonzeros, about {est.seconds:.0f} s"
        raise ValueError(f"the embedded chain is beyond the designer's budget ({size}; at most {MAX_STATES:,} "
                         f"states and {MAX_SECONDS:g} s): tcpabr analyze computes it")
    r = analyze(ms)
    q, a = float(r.mean_queueing_delay) * unit, float(r.mean_source_delay) * unit
    if scale is None:
        eff = (r.prediction, r.conservative, r.optimistic)
    else:     # packets per time unit (1/cmax s) over the trace's mean rate, as analyze_link
        eff = tuple(min(1.0, x * scale) for x in (r.prediction * r.mean_capacity, r.throughput_conservative,
                                                   r.throughput_optimistic))
    return {"throughput": eff[0], "band": [eff[1], eff[2]],
            "mean_delay_s": q + a, "mean_queueing_delay_s": q, "mean_source_delay_s": a,
            "holds": bool(holds), "validity": why, "delay_note": _DELAY_NOTE,
            "seconds": time.perf_counter() - t0}


#: how much older than the analysis' one round trip (III-A.8) the simulated INSTCAP's feedback may
#: be before its analysis is said not to hold (the paper's testbed: s = 30 ms fed back one round trip
#: of 200 ms later, 1.15 round trips) **[choice]**
INSTCAP_LAG_HOLDS = 1.25


def instcap_timing_strain(base: Scenario, interval: float | None = None, name: str = "INSTCAP") -> str | None:
    """Why the analysis' INSTCAP (the rate of the previous round trip, III-A.8) is not the
    simulator's on ``base``, or None: the simulated feedback is ``feedback_delay + interval`` old
    (from the middle of its measurement to the middle of its use), against the analysis' one
    round trip (docs/model.md sec. 16).  ``interval``: a candidate's own s (default the base's);
    ``name``: the feedback named (EFFCAP's newest sample is timed as INSTCAP's, sec. 20)."""
    s = base.interval if interval is None else interval
    rtt, lag = base.rtt[0], base.feedback_delay[0] + s
    if lag <= INSTCAP_LAG_HOLDS * rtt:
        return None
    return (f"the simulated {name} measures over s = {s:g} s and applies it {base.feedback_delay[0]:g} s "
            f"later, a rate {lag / rtt:.2g} round trips old against the analysis' one (docs/model.md sec. 16)")


#: EFFCAP's N (round trips) from which the analysis is taken to hold at any psi [choice, from the Fig. 8/9
#: map of docs/model.md sec. 20: N = 8 and 12 within CI + 5 % at 44 of 44 points, psi 1.5-1000]
EFFCAP_N_HOLDS = 8


def _effcap_mn(base: Scenario, candidate) -> dict:
    """``{'effcap_m', 'effcap_n'}`` of an EFFCAP candidate measuring every round trip: its own M and N, or
    the simulator's defaults at s = RTT (``M : Delta``, ``N : 8 Delta``, :mod:`tcpabr_model.sim.feedback`),
    so that the analysis and the simulation run the same estimator; ``{}`` for other feedbacks."""
    if candidate.feedback != "effcap":
        return {}
    from ..sim.feedback import m_from_delta, n_from_k

    rtt = base.rtt[0]
    return {"effcap_m": m_from_delta(rtt, rtt) if candidate.m is None else candidate.m,
            "effcap_n": n_from_k(8, rtt, rtt) if candidate.n is None else candidate.n}


def _two_state_scenario(base: Scenario, feedback: str, **effcap) -> tuple:
    """``(markov scenario, seconds per engine time unit, None, holds, why)`` of the paper's
    two-state link: delta in packet times at the high rate, psi and the rate ratio as given."""
    from ..markov import Scenario as MScenario

    unit = base.time_unit
    ms = MScenario(delta=base.rtt[0] / unit, bmax=base.buffer_packets, psi=base.psi, rate_ratio=base.rate_ratio,
                   wmax=base.tcp.wmax, feedback=feedback, max_states=MAX_STATES, **effcap)
    holds = base.psi > PSI_HOLDS
    return ms, unit, None, holds, f"psi = {base.psi:.4g} {'>' if holds else '<='} {PSI_HOLDS:g} (docs/validity.md)"


def _trace_scenario(base: Scenario, feedback: str, cache: dict) -> tuple:
    """``(markov scenario, seconds per engine time unit, scale, holds, why)`` of a trace: the
    chain fitted at epoch = RTT (:func:`tcpabr_model.trace_study.fit_link`, kept in ``cache``)
    and its patterns; ``scale`` turns the engine's packets per time unit into an efficiency
    over the trace's mean rate (:func:`tcpabr_model.trace_study.analyze_link`)."""
    from ..trace_study import fit_link, link_scenario, link_validity

    key = (id(base.capacity), base.rtt[0])
    if key not in cache:
        cache[key] = fit_link(base.capacity, base.rtt[0])
    link = cache[key]
    ms = link_scenario(link, base.buffer_packets, feedback, wmax=base.tcp.wmax, max_states=MAX_STATES)
    cmax = float(np.max(link.model.levels))
    strained = link_validity(link, base.buffer_packets)["strained"]
    why = "the fitted chain strains: " + "; ".join(strained) if strained else \
        f"the chain fitted at epoch = RTT ({link.model.n_levels} levels) strains no assumption"
    # delta = rtt x cmax packet times at the peak level: one time unit is 1/cmax s
    return ms, 1.0 / cmax, cmax / link.mean_rate, not strained, why


def model_seconds(base: Scenario) -> float:
    """Seconds per time unit of ``base``'s capacity model: its ``time_unit``, or (a model in
    the paper's unit, largest level 1) the scenario's packet time at the high rate."""
    tu = base.capacity.time_unit
    return float(tu) if tu is not None else float(base.time_unit)


def model_sojourn_rtts(model, rtt_units: float) -> np.ndarray:
    """Mean sojourn of each level of ``model`` in round trips of ``rtt_units`` model time
    units: ``epoch / (1 - P_kk)`` (discrete time) or ``1 / -Q_kk`` (continuous), over the
    round trip; inf for a level never left (a one-level model)."""
    if model.time == "discrete":
        stay = np.clip(np.diag(np.asarray(model.transition)), 0.0, 1.0)
        with np.errstate(divide="ignore"):
            soj = float(model.epoch) / (1.0 - stay)
    else:
        with np.errstate(divide="ignore"):
            soj = 1.0 / -np.diag(np.asarray(model.generator))
    return soj / rtt_units


def model_refusal(base: Scenario) -> str | None:
    """Why the Markov engine cannot take ``base``'s capacity model as the designer gives it
    (docs/model.md sec. 10), or None: an outage level (no service time ``1/c_k``; the
    designer has no within-epoch patterns of a model), fewer than one packet per round trip
    at the lowest level, or a discrete-time epoch that is not the round trip over an integer."""
    cm = base.capacity
    if cm.has_outage:
        i = int(np.flatnonzero(cm.levels == 0.0)[0])
        return (f"the capacity model has an outage level (levels[{i}] = 0): the Markov engine needs a service time "
                "1/c_k at every level (docs/model.md sec. 10 item 3; the designer has no within-epoch service patterns of a model)")
    tu = model_seconds(base)
    rtt_units = base.rtt[0] / tu
    low = float(np.min(cm.levels)) * rtt_units
    if np.floor(low + 1e-9) < 1:
        return (f"the capacity model's lowest level carries {low:.3g} packets per round trip (rtt "
                f"{base.rtt[0]:g} s): the Markov engine needs at least 1 (docs/model.md sec. 10 item 3)")
    if cm.time == "discrete":
        n = rtt_units / float(cm.epoch)
        if round(n) < 1 or abs(n - round(n)) > 1e-9 * max(n, 1.0):
            return (f"the capacity model's epoch ({float(cm.epoch) * tu:g} s) is not the round trip ({base.rtt[0]:g} "
                    "s) over an integer: the embedded chain steps once per round trip (docs/model.md sec. 10 item 2)")
    return None


def _model_scenario(base: Scenario, feedback: str, **effcap) -> tuple:
    """``(markov scenario, seconds per engine time unit, None, holds, why)`` of a K-level
    capacity model (docs/model.md sec. 10): the round trip in packet times at the peak level
    (``delta = rtt / time_unit x c_max``, as :func:`tcpabr_model.trace_study.link_scenario`),
    the model's own chain; the efficiency is the engine's (throughput over the model's mean,
    which is what the simulator measures on the model).  Holds where the occupancy-weighted
    mean sojourn of a level exceeds :data:`PSI_HOLDS` round trips (the two-state map's psi
    > 5, docs/validity.md, applied to the model: psi is that sojourn on the two-state link).
    ValueError with the reason where the engine cannot take the model (:func:`model_refusal`)."""
    from ..markov import Scenario as MScenario

    why_not = model_refusal(base)
    if why_not is not None:
        raise ValueError(why_not)
    cm = base.capacity
    tu, cmax = model_seconds(base), float(np.max(cm.levels))
    rtt_units = base.rtt[0] / tu
    ms = MScenario(delta=rtt_units * cmax, bmax=base.buffer_packets, wmax=base.tcp.wmax, feedback=feedback,
                   capacity=cm, max_states=MAX_STATES, **effcap)
    sojourn = float(np.dot(cm.stationary, model_sojourn_rtts(cm, rtt_units)))
    holds = sojourn > PSI_HOLDS
    why = (f"mean sojourn of a level {sojourn:.4g} round trips {'>' if holds else '<='} {PSI_HOLDS:g} (the two-state "
           f"map's psi > {PSI_HOLDS:g}, docs/validity.md, applied to the {cm.n_levels}-level model; not measured "
           "on K-level models)")
    return ms, tu / cmax, None, holds, why


def analysis_only_refusal(base: Scenario, candidates, given: dict) -> str | None:
    """Why ``tcpabr design --analysis-only`` refuses to run, or None: the analysis covers no
    candidate at all, or a value the user gave (``given``: flag -> values, e.g. ``{'--m': [3]}``)
    has only candidates it does not cover (the rest of the default grid is listed with reasons)."""
    from dataclasses import replace

    why = {c: analysable(base, c) for c in candidates}
    if why and all(why.values()):
        first = next(iter(why.values()))
        return (f"--analysis-only evaluates no candidate here: {first}; drop --analysis-only (the simulator "
                "evaluates them)")
    rtt = base.rtt[0]
    for flag, values in given.items():
        field = flag.lstrip("-")
        carrying = {v: [c for c in candidates if getattr(c, field) == v] for v in values}
        bad = [v for v, cs in carrying.items() if cs and all(why[c] for c in cs)]
        if not bad:
            continue
        cs = carrying[bad[0]]
        c = next((x for x in cs if x.feedback == "effcap"), cs[0])
        # the reason that stays at s = RTT (EFFCAP's only analysed interval), or the interval itself
        after = analysable(base, replace(c, interval=rtt)) if c.feedback == "effcap" else why[c]
        hint = "drop it" if after is not None else \
            f"{'give' if flag == '--interval' else 'add'} --interval {rtt:g} (the round trip)"
        shown = " ".join(f"{v:g}" for v in bad)
        return (f"{flag} {shown} is not evaluated with --analysis-only: {why[c] if after is None else after}: {hint}, "
                "or drop --analysis-only (the simulator evaluates it)")
    return None


def analysis_only(base: Scenario, candidates) -> dict:
    """The analysis alone (no simulation): :func:`analysis_beside` for each candidate it covers,
    and the others listed with the reason.  Throughput and MEAN delays only: no p95, hence no
    front and no choice under a p95 limit (``tcpabr design --analysis-only``)."""
    t0 = time.perf_counter()
    cache, rows, skipped = {}, [], []
    for c in candidates:
        why = analysable(base, c)
        if why is not None:
            skipped.append({"candidate": c.label, "reason": why})
            continue
        rows.append({"candidate": c.label, "evaluated_by": "analysis (throughput, mean delay; no p95)",
                     **analysis_beside(base, c, cache, simulated=False)})
    return {"evaluated_with": "analysis", "points": rows, "not_analysed": skipped,
            "seconds": time.perf_counter() - t0}


def analysis_only_lines(res: dict) -> list:
    """A table of :func:`analysis_only`'s result."""
    out = [f"evaluated with the analysis only ({res['seconds']:.2f} s): throughput prediction and mean delay "
           "(Little's law); no p95, no front"]
    for r in res["points"]:
        if "error" in r:
            out.append(f"  {r['candidate']:28s} not computed: {r['error']}")
            continue
        out.append(f"  {r['candidate']:28s} throughput {r['throughput']:.4f} (band {r['band'][0]:.4f}-"
                   f"{r['band'][1]:.4f}; {'holds' if r['holds'] else 'does NOT hold'}: {r['validity']})  "
                   f"mean delay {1e3 * r['mean_delay_s']:.4g} ms")
    if res["not_analysed"]:     # grouped by reason, as the JSON's not_analysed lists them
        out.append("not analysed (the simulator evaluates them: drop --analysis-only):")
        by_reason: dict = {}
        for r in res["not_analysed"]:
            by_reason.setdefault(r["reason"], []).append(r["candidate"])
        out += [f"  {', '.join(names)}: {why}" for why, names in by_reason.items()]
    return out
