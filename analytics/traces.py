"""The paper's question on measured links: the Markov renewal analysis of a link fitted on one
half of a trace against the replay of the *other* half (issue 23 item 4), and the older
in-sample study and mechanisms of issue 15 item 6.

**Out of sample (the default, ``--holdout``).**  Each Mahimahi trace (default: the three
shared cellular traces in ``../shared/traces``; ``--traces FILE ...`` for your own) is split
in time into halves A and B (``trace_study.trace_halves``: times re-based to 0, each
repeating on its own).  For each round trip (``--rtts``, default 20, 50, 100 ms), each
direction (fit A -> replay B, fit B -> replay A), each buffer (``--buffers``, in mean
bandwidth-delay products *of the replayed half*, default 0.5 and 2) and each of TCP alone,
INSTCAP and EFFCAP:

1. **fit** on the fitting half: ``trace_study.fit_link(half, rtt, patterns=P)`` -- the
   K-level chain at epoch = RTT with ``P`` within-epoch service patterns per level;
2. **analysis** (TCP alone and INSTCAP; the simulator's EFFCAP, 30-ms samples applied a round trip late, has
   no chain: its history of M + N - 1 samples is far too long, docs/model.md sec. 20; ``--effcap-analysis M:N``
   adds a fourth row per point, EFFCAP(M, N) sampled once per round trip, analysed on INSTCAP's chain and
   patterns and simulated with that estimator, scored apart from issue 23's points):
   ``trace_study.analyze_link`` -> prediction and band ``[conservative, optimistic]``,
   efficiencies over the fitting half's mean capacity.  Each analysis runs in a child
   process (its seconds and peak resident memory are measured there, with a time limit);
   the chain's states are counted first (``markov.estimate_chain``) and a point above the
   state limit is recorded as refused with the count, never crashing the study;
3. **sim fitted** (optional, ``--no-fitted-sim`` to skip): the cell simulator on the fitted
   chain ``link.model`` (levels only, no within-epoch patterns);
4. **replay**: the cell simulator replaying the other half (random start per replication),
   ``efficiency_wire`` with its 95 % CI.

The window is ``trace_study.window_packets`` of the fitted chain's peak level, the same for
the analysis and both simulations.  Nothing is chosen by looking at the replay: the fit,
the pattern counts, the state limit and the time limit are fixed before any replay runs (the
pattern counts were made one for both feedbacks after the sign misses of a run were followed back
to them: docs/traces.md sec. 7.2q).
Writes ``traces_study.csv``, ``traces_study.md`` (the table) and ``traces_targets.md`` (the
agreement in the terms of issue 23's targets) to DIR.

**In sample** (``--in-sample``, issue 15 item 6): the chain fitted on the whole trace with the
outage lifted for the analysis (``trace_study.study_point``), against the replay of the same
trace; writes ``traces_in_sample.csv`` / ``.md``.  **Mechanisms** (``--mechanisms``): one
capacity process changed at a time, ``traces_mechanisms.csv``.

Units: one packet is one Mahimahi opportunity (1500 bytes: a 1460-byte segment with its 40
bytes of TCP/IP headers).  Efficiency is throughput / mean available capacity; for the
simulations over ATM it is ``efficiency_wire`` (frames counted whole on the wire, so the
cell tax 1500/1696 is not charged), which is the analysis' definition (whole packets over
the capacity in packets).  Relative errors are ``(x - replay) / replay`` per point.

Usage::

    python analytics/traces.py [--quick] [--holdout | --in-sample | --mechanisms]
        [--traces FILE ...] [--rtts 0.02,0.05,0.1] [--buffers 0.5,2] [--replications 5] [--tcp sack]
        [--duration S] [--workers 2] [--effcap-analysis M:N] [--out DIR]

``--quick``: one trace (the shipped ``tests/data/markov3_outage.down`` unless ``--traces``),
one RTT and buffer, 2 replications of 20 s (seconds).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import resource
import sys
import time
from multiprocessing.connection import wait as wait_for
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from tcpabr_model.capacity import fit_patterns, read_trace  # noqa: E402
from tcpabr_model.errors import ModelError  # noqa: E402
from tcpabr_model.markov.scenario import CA_INCREMENTS  # noqa: E402
from tcpabr_model.runtime.atomic import write_table, write_text  # noqa: E402
from tcpabr_model.trace_study import (  # noqa: E402
    FEEDBACKS,
    INSTCAP_TIMINGS,
    LINK_CA_INCREMENT,
    LINK_WINDOW_TAIL,
    LinkFit,
    analyze_link,
    fit_for_rtt,
    fit_labels,
    fit_link,
    lift_outage,
    link_loss_cycle,
    link_scenario,
    study_point,
    trace_halves,
    window_packets,
)

SHARED = ROOT.parent / "shared" / "traces"
SHARED_TRACES = ("Verizon-LTE-short.down", "TMobile-LTE-short.down", "TMobile-UMTS-driving.down")


def run(traces, rtts, buffers, replications, duration, seed, workers, max_states, log=print) -> pd.DataFrame:
    rows = []
    for path in traces:
        trace = read_trace(path)
        for rtt in rtts:
            fit = fit_for_rtt(trace, rtt)
            mean = float(fit.model.mean)
            peak = float(np.max(fit.model.levels))
            for bf in buffers:
                bmax = max(1, int(round(bf * mean * rtt)))
                wmax = window_packets(peak, rtt, bmax)
                for fb in FEEDBACKS:
                    t0 = time.perf_counter()
                    pt = study_point(trace, fit, rtt, bmax, fb, wmax=wmax, replications=replications,
                                     duration=duration, seed=seed, workers=workers, max_states=max_states)
                    row = {"trace_file": Path(path).name, "rtt_ms": round(rtt * 1000), "buffer_bdp": bf,
                           "mean_pps": mean, "peak_level_pps": peak, "ec_error": fit.ec_error, **pt.to_dict(),
                           "seconds": time.perf_counter() - t0}
                    rows.append(row)
                    log(f"{row['trace_file']:28s} rtt {row['rtt_ms']:3d} ms B {bmax:4d} {fb:8s} "
                        f"analysis {_band(pt.analysis_conservative, pt.analysis_optimistic):>13s}  "
                        f"fitted {pt.fitted:.3f} ± {pt.fitted_half_width:.3f}  "
                        f"trace {pt.trace:.3f} ± {pt.trace_half_width:.3f}  ({row['seconds']:.0f} s)", flush=True)
    return pd.DataFrame(rows)


def epoch_smoothed(trace, epoch: float):
    """The trace with its opportunities spread evenly inside each epoch of ``epoch`` s: the
    same count per epoch (the fit's data), none of the variation inside an epoch."""
    from tcpabr_model.capacity import Trace, bin_trace

    b = bin_trace(trace, epoch)
    e_ms = int(round(epoch * 1000))
    times = []
    for k, n in enumerate(b.counts):
        if n:
            times.append(k * e_ms + np.ceil(np.arange(1, n + 1) * e_ms / n).astype(np.int64))
    t = np.concatenate(times)
    if t[-1] < len(b.counts) * e_ms:       # keep the period a whole number of epochs
        t = np.append(t, len(b.counts) * e_ms)
    return Trace(t, name=f"{trace.name} smoothed to {epoch:g} s")


def mechanisms(traces, rtt, buffers, replications, duration, seed, workers, log=print,
               instcap_timing="round-trip") -> pd.DataFrame:
    """Where the fitted chain and the trace part: one capacity process changed at a time.

    trace -> trace smoothed inside each epoch (the variation the chain cannot see) -> the
    k-means chain (a Markov chain of the epoch sequence) -> the same with the outage lifted
    (the analysis' chain) ; and the HMM chain (better lag correlation, docs/traces.md sec. 4).
    """
    from tcpabr_model.capacity import fit_trace
    from tcpabr_model.trace_study import _simulate

    rows = []
    for path in traces:
        trace = read_trace(path)
        km = fit_for_rtt(trace, rtt)
        try:
            hmm = fit_trace(trace, epoch=rtt, method="hmm", states=km.states)
        except (ImportError, ValueError) as e:
            hmm = None
            log(f"no HMM fit: {e}")
        procs = [("trace", trace), ("smoothed to the epoch", epoch_smoothed(trace, rtt)),
                 ("k-means chain", km.model), ("k-means chain, outage lifted", lift_outage(km.model, rtt))]
        if hmm is not None:
            procs.append(("HMM chain", hmm.model))
        mean = float(km.model.mean)
        for bf in buffers:
            bmax = max(1, int(round(bf * mean * rtt)))
            wmax = window_packets(float(np.max(km.model.levels)), rtt, bmax)
            for fb in ("none", "instcap"):
                for name, proc in procs:
                    m, h = _simulate(proc, rtt, bmax, wmax, fb, replications, duration, seed, workers,
                                     instcap_timing=instcap_timing)
                    rows.append({"trace_file": Path(path).name, "rtt_ms": round(rtt * 1000), "buffer_bdp": bf,
                                 "bmax": bmax, "feedback": fb, "process": name, "efficiency": m, "half_width": h})
                    log(f"{Path(path).name:28s} B {bmax:4d} {fb:8s} {name:30s} {m:.3f} ± {h:.3f}", flush=True)
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------
# Out of sample (issue 23 item 4)
# --------------------------------------------------------------------------------------------

#: within-epoch patterns per level, the same for both feedbacks [choice]: the sign of INSTCAP minus
#: TCP alone compares the two analyses, so both take the same representatives of each level
#: (until 2026-11-27 TCP alone had 8 and INSTCAP 4; the two sign misses of that study were that
#: mismatch: docs/traces.md sec. 7.2q).  4, not 8, from the cost: INSTCAP's chains grow with the
#: patterns (the loss-free part scales with them) and at 8 take 1.5-4.8 times as long; the patterns
#: are a sample of each level's epochs, and going from 4 to 8 moves a prediction by a median
#: 1.7-1.9 % (at most 3 % at 2 BDP, 15-16 % at 0.5 BDP), TCP alone's from 8 to 16 by 1.2 % (at most
#: 5.7 %; ``analytics/pattern_count.py``).  Fixed from those shifts and costs, which need no replay.
#: ``tcpabr analyze --trace`` keeps 8 (one point can afford the finer sample).
PATTERNS = {"none": 4, "instcap": 4}
#: states counted before an analysis; above it the point is refused (time budget of the study)
#: [choice, from the measured cost]: 3 x 10^6 since the targets are stored once per entry and
#: the closed classes found without a copy of the graph (docs/model.md sec. 5a item 9; was
#: 200,000): every TCP-alone point of the shared traces then fits (the largest, 1.95 x 10^6
#: states, 362 s and 9.3 GB before the graph change; docs/traces.md sec. 7.2h)
STATE_LIMIT = 3_000_000
#: the same for INSTCAP [choice, from the measured cost, not from any result]: its chains cost
#: less per state than TCP alone's with 8 patterns and their ACK replays (Verizon-LTE half B,
#: 50 ms, 9 packets: 493,705 states in 16 s and 2.0 GB on the quiet VM, about 0.3 ms per state
#: for TCP alone), so more of them fit the study's time limit; the cost varies (up to 300 s for
#: 341,369 states at 20 ms on the loaded VM, 4.4 GB for 588,249 states: docs/traces.md sec. 7.2e),
#: and the time limit still applies.  20 x 10^6 since the large SCC blocks are solved by GMRES
#: instead of stored LU factors (docs/model.md sec. 5a item 11; was 3 x 10^6, above which the
#: factors passed the memory): the chains of 3-13 million states are then solved in 2-8 GB
#: (docs/traces.md sec. 7.2o); larger ones are refused by the memory estimate
STATE_LIMIT_INSTCAP = 20_000_000
#: seconds an analysis may run (count, build and solve) before it is stopped and refused
#: [choice]: 900 (was 600) so that the 13-million-state INSTCAP chain of Verizon-LTE at 100 ms
#: (726 s beside another analysis, docs/traces.md sec. 7.2o) is not refused for time
ANALYSIS_TIMEOUT = 900.0
#: the study's column of EFFCAP sampled once per round trip (``--effcap-analysis M:N``, docs/model.md
#: sec. 20): analysed and simulated with the same estimator (``trace_study.effcap_round_trip``)
EFFCAP_RTT = "effcap-rtt"
#: its state limit [choice, from the measured cost, not from any result]: the history chain of M + N
#: - 1 = 2 levels has 1.5-5 times INSTCAP's states and costs 25-40 us per state at 0.5-0.9 million
#: (docs/traces.md sec. 7.2u), so 5 x 10^6 states is about the 900 s of the time limit on the 2-core VM
STATE_LIMIT_EFFCAP = 5_000_000


def with_patterns(link: LinkFit, trace, patterns: int) -> LinkFit:
    """``link`` with ``patterns`` within-epoch patterns per level of the *same* chain."""
    labels = fit_labels(link.fit, trace, link.rtt)
    return LinkFit(fit=link.fit, service=fit_patterns(trace, link.rtt, labels, per_level=patterns), rtt=link.rtt,
                   mean_rate=link.mean_rate)


def _rss_gb() -> float:
    """Resident memory of this process now, GB (Linux; nan elsewhere)."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e9
    except (OSError, ValueError, IndexError):
        return float("nan")


def _analysis_child(conn, *args, **kwargs):
    """Runs in a child process: :func:`analysis_result` of ``args``, sent back as a dict."""
    conn.send(analysis_result(*args, **kwargs))
    conn.close()


def analysis_result(link, bmax, feedback, wmax, max_states, state_limit, tcp="timeout-only",
                    loss_cycle="paper", ca_increment=LINK_CA_INCREMENT, window_tail=LINK_WINDOW_TAIL,
                    effcap=None) -> dict:
    """One analysis of the study, with ``min(state_limit, max_states)`` as the chain's limit (the
    analysis counts or builds up to it and refuses above it), as a dict (a refusal says why).
    ``feedback`` :data:`EFFCAP_RTT` with ``effcap=(m, n)``: EFFCAP sampled once per round trip."""
    from tcpabr_model.errors import ChainTooLargeError

    t0 = time.perf_counter()
    out = {"n_states": None, "refused": ""}
    limit = min(state_limit, max_states)
    try:
        fb, kw = (("effcap", {"effcap_m": effcap[0], "effcap_n": effcap[1]}) if feedback == EFFCAP_RTT
                  else (feedback, {}))
        a = analyze_link(link, bmax, fb, wmax=wmax, max_states=limit, tcp=tcp, loss_cycle=loss_cycle,
                         ca_increment=ca_increment, window_tail=window_tail, **kw)
        out.update(prediction=a.prediction, conservative=a.conservative, optimistic=a.optimistic,
                   n_states=int(a.n_states), window_solved=a.window_solved,
                   window_tries=" ".join(f"{t['wmax']}:{t['states']}:{t['cap_share']:.1e}:{t['seconds']:.1f}"
                                         for t in a.window_tries or []),
                   strained="; ".join(a.validity["strained"]),
                   sojourn_rtts=a.validity["mean_sojourn_rtts_weighted"], outage_share=a.validity["outage_share"])
    except ChainTooLargeError as e:
        if f"max_states={limit}" in str(e):    # above the study's limit (counted or built)
            out["n_states"] = limit + 1
            out["refused"] = (f"more than {limit:,} states with {len(link.service.weights[0])} patterns per level "
                              f"(stopped after {time.perf_counter() - t0:.0f} s)")
        else:
            out["refused"] = f"{type(e).__name__}: {e}"
    except (ValueError, ModelError, MemoryError) as e:
        out["refused"] = f"{type(e).__name__}: {e}"
    out["seconds"] = time.perf_counter() - t0
    out["peak_gb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6   # kB on Linux
    return out


def run_analyses(jobs, concurrency: int, timeout: float, log=print) -> dict:
    """Run ``jobs`` (``(key, args of _analysis_child)``) in child processes, ``concurrency`` at
    a time, each stopped after ``timeout`` seconds; returns ``{key: result dict}``.  A child
    that dies or runs out of time gives a refusal with the reason, never an exception."""
    ctx = mp.get_context("fork")
    pending, running, results = list(jobs), {}, {}
    while pending or running:
        while pending and len(running) < concurrency:
            key, args = pending.pop(0)
            r, w = ctx.Pipe(duplex=False)
            p = ctx.Process(target=_analysis_child, args=(w, *args))
            p.start()
            w.close()
            running[key] = (p, r, time.perf_counter())
        wait_for([r for _, r, _ in running.values()], timeout=1.0)
        for key, (p, r, t0) in list(running.items()):
            res = None
            if r.poll():
                try:
                    res = r.recv()
                except EOFError:
                    p.join()
                    res = {"refused": f"the analysis process died (exit code {p.exitcode})"}
            elif time.perf_counter() - t0 > timeout:
                p.kill()
                res = {"refused": f"stopped after the time limit of {timeout:.0f} s"}
            if res is None:
                continue
            p.join()
            r.close()
            res.setdefault("seconds", time.perf_counter() - t0)
            res.setdefault("peak_gb", float("nan"))
            results[key] = res
            del running[key]
            log(f"  analysis {key}: " + (f"{res['prediction']:.3f} [{res['conservative']:.3f}, {res['optimistic']:.3f}]"
                                          if "prediction" in res else f"refused ({res['refused']})")
                + f"  {res.get('n_states')} states, {res['seconds']:.1f} s, peak {res['peak_gb']:.2f} GB", flush=True)
    return results


#: the links of :func:`warm_up`: one whose fit has an outage level and one without, the two kinds of
#: the study's links (the build's table of the level pairs a chain can enter was a second numba
#: specialisation for the second kind until docs/model.md sec. 5a item 15; whatever a kind alone still
#: takes is compiled before the fork)
WARM_UP_TRACES = ("markov3_outage.down", "constant_1000pps.down")


def warm_up(*studies: tuple) -> None:
    """Compile the analysis kernels once in this process, so that forked children inherit them
    instead of compiling their own (a child that did so spent 23-25 s of its analysis seconds on
    numba before, docs/traces.md sec. 7.2zf).  Each of ``studies`` is the tail of
    :func:`analysis_result`'s arguments after ``wmax`` for one feedback, ``(feedback, max_states,
    state_limit, tcp, loss_cycle, ca_increment, window_tail, effcap)``: each is analysed on both
    :data:`WARM_UP_TRACES` with a buffer of 2, as the study will call it; the defaults are analysed
    too, with and without a count first."""
    from tcpabr_model.markov import estimate_chain

    for name in WARM_UP_TRACES:
        link = fit_link(read_trace(ROOT / "tests" / "data" / name), 0.1, patterns=2)
        for fb in ("none", "instcap"):
            analyze_link(link, 2, fb)      # the build with its memory check (no count first)
            estimate_chain(link_scenario(link, 2, fb))   # the count (a chain stopped at the memory)
        for fb, *rest in studies:
            got = analysis_result(link, 2, fb, None, *rest)
            if "prediction" not in got:
                raise RuntimeError(f"the warm-up's analysis of {name} ({fb}) was refused: {got['refused']}")


def holdout(traces, rtts, buffers, replications, duration, seed, workers, *, max_states=None,
            state_limit=STATE_LIMIT, timeout=ANALYSIS_TIMEOUT, jobs=2, fitted_sim=True, in_sample=True,
            tcp="timeout-only", regimes=1, regime_window=None, reuse=None, state_limit_instcap=None,
            reuse_analyses=None, loss_cycle="paper", instcap_timing="round-trip", log=print,
            ca_increment=LINK_CA_INCREMENT, window_tail=LINK_WINDOW_TAIL, effcap_analysis=None,
            state_limit_effcap=STATE_LIMIT_EFFCAP, order=1) -> pd.DataFrame:
    """Fit on one half of each trace, replay the other, both ways (module docstring).  With
    ``in_sample``, the fitted half is replayed too at the same point (same buffer and window
    in packets): the prediction's error in sample, beside the out-of-sample one.  ``tcp``:
    the TCP of the analysis and of every simulation ('timeout-only' or 'sack').

    ``regimes > 1``: the analysis (and the fitted-chain simulation) use the two-timescale
    regime x level chain (``fit_link(..., regimes=)``); the window stays the one-timescale
    chain's (:func:`~tcpabr_model.trace_study.window_packets` of its peak level), so that every
    model is judged against the same replays.  ``reuse``: a DataFrame of an earlier run
    (``traces_study.csv``) whose replays are taken at the points with the same trace, RTT,
    halves, buffer, window, feedback and TCP instead of being simulated again (the replays
    do not depend on the model; same replications, duration and seed required).
    ``reuse_analyses``: the same for the analyses (prediction, band, states, seconds, refusal)
    of an earlier run with the same model, where only the simulator changed (or the engine
    changed no number, e.g. its storage); a point it lacks or refused is analysed.  ``loss_cycle``: the analysis' timeout cycle ('paper' or 'drain',
    docs/model.md sec. 14).  ``instcap_timing``: how every simulation times INSTCAP
    (:func:`~tcpabr_model.trace_study.feedback_timing`; INSTCAP replays are reused only from a run
    with the same timing, a run without the column being ``'testbed'``).  ``ca_increment``: the analysis'
    congestion-avoidance growth (docs/model.md sec. 18; analyses are reused only from a run with the same).
    ``effcap_analysis=(m, n)``: a fourth row per point, :data:`EFFCAP_RTT`, EFFCAP(m, n) sampled once per
    round trip, analysed (docs/model.md sec. 20, with ``state_limit_effcap``) and simulated with that
    estimator (``trace_study.effcap_round_trip``) on the same chain and patterns as INSTCAP.  ``order=2``:
    the second-order chain (``fit_link(..., order=2)``, docs/traces.md sec. 7.2x) in the analysis and the
    fitted-chain simulation; the window is the same (its levels are the first-order chain's)."""
    from tcpabr_model.trace_study import _simulate

    t0 = time.perf_counter()
    kinds = tuple(FEEDBACKS) + ((EFFCAP_RTT,) if effcap_analysis is not None else ())
    lim = {"none": state_limit, "instcap": state_limit if state_limit_instcap is None else state_limit_instcap,
           EFFCAP_RTT: state_limit_effcap}
    if max_states is None:    # the limits above decide (a fixed 3 x 10^6 here capped INSTCAP's 2 x 10^7)
        max_states = max(lim[k] for k in kinds if k != "effcap")
    warm_up(*[(k, max_states, lim[k], tcp, loss_cycle, ca_increment, window_tail,
               effcap_analysis if k == EFFCAP_RTT else None) for k in kinds if k != "effcap"])
    log(f"kernels ready in {time.perf_counter() - t0:.0f} s; baseline memory {_rss_gb():.2f} GB", flush=True)
    rows = []
    for path in traces:
        trace = read_trace(path)
        halves = dict(zip("AB", trace_halves(trace)))
        points = []
        for rtt in rtts:
            for fit_h, rep_h in (("A", "B"), ("B", "A")):
                tf = time.perf_counter()
                link = fit_link(halves[fit_h], rtt, patterns=PATTERNS["none"], regimes=regimes,
                                regime_window=regime_window, order=order)
                links = {"none": link, "instcap": link if PATTERNS["instcap"] == PATTERNS["none"]
                         else with_patterns(link, halves[fit_h], PATTERNS["instcap"])}
                links[EFFCAP_RTT] = links["instcap"]
                fit_seconds = time.perf_counter() - tf
                replay = halves[rep_h]
                # the window of the study: the one-timescale chain's peak, whatever the model
                peak = float(np.max((link.model if regimes == 1 else fit_for_rtt(halves[fit_h], rtt).model).levels))
                for bf in buffers:
                    bmax = max(1, int(round(bf * replay.mean_rate * rtt)))
                    wmax = window_packets(peak, rtt, bmax)
                    for fb in kinds:
                        em, en = effcap_analysis if fb == EFFCAP_RTT else (None, None)
                        points.append({"trace_file": Path(path).name, "rtt": rtt, "rtt_ms": round(rtt * 1000),
                                       "fit_half": fit_h, "replay_half": rep_h, "buffer_bdp": bf, "bmax": bmax,
                                       "wmax": wmax, "feedback": fb, "states": int(link.fit.states),
                                       "regimes": int(regimes), "order": int(order),
                                       "patterns": PATTERNS.get("instcap" if fb == EFFCAP_RTT else fb),
                                       "effcap_m": em, "effcap_n": en, "fit_mean_pps": link.mean_rate,
                                       "replay_mean_pps": replay.mean_rate, "fit_seconds": fit_seconds,
                                       "_link": links.get(fb), "_model": link.model, "_replay": replay,
                                       "_fitted_trace": halves[fit_h]})
        log(f"{Path(path).name}: halves of {halves['A'].period_ms / 1000:.0f} s and {halves['B'].period_ms / 1000:.0f} s "
            f"(mean {halves['A'].mean_rate:.0f} and {halves['B'].mean_rate:.0f} packets/s); "
            f"{sum(p['feedback'] != 'effcap' for p in points)} analyses", flush=True)
        res = {}
        for i, p in enumerate(points):
            old = (_reused(reuse_analyses, p, tcp, None, regimes, loss_cycle, ca_increment=ca_increment,
                           patterns=p["patterns"], order=order)
                   if p["feedback"] != "effcap" else None)
            refused = old is not None and isinstance(old["refused"], str) and old["refused"] != ""
            if old is not None and not refused:   # a refused point (size, time limit) is analysed again
                res[i] = {k: old[c] for k, c in _ANALYSIS_COLUMNS.items()
                          if c in old and not (isinstance(old[c], float) and np.isnan(old[c]))}
        todo = [(i, (p["_link"], p["bmax"], p["feedback"], p["wmax"], max_states, lim[p["feedback"]], tcp, loss_cycle,
                     ca_increment, window_tail, effcap_analysis if p["feedback"] == EFFCAP_RTT else None))
                for i, p in enumerate(points) if p["feedback"] != "effcap" and i not in res]
        res.update(run_analyses(todo, jobs, timeout, log=log))
        for i, p in enumerate(points):
            r = res.get(i, {"refused": "EFFCAP is simulated (its history chain, docs/model.md sec. 20, is too large here)"})
            replay, model, fitted_trace = p.pop("_replay"), p.pop("_model"), p.pop("_fitted_trace")
            p.pop("_link")
            d = duration if duration is not None else min(300.0, replay.period_ms / 1000.0)
            ts = time.perf_counter()
            old = _reused(reuse, p, tcp, d, instcap_timing=instcap_timing)
            if old is not None:
                m, h = old["replay"], old["replay_half_width"]
            else:
                m, h = _simulate(replay, p["rtt"], p["bmax"], p["wmax"], _sim_feedback(p), replications, d, seed,
                                 workers, tcp, instcap_timing, _sim_effcap(p))
            fm, fh = im, ih = (float("nan"), float("nan"))
            if old is not None and in_sample and p["feedback"] != "effcap":
                im, ih = old["replay_fitted_half"], old["replay_fitted_half_hw"]
            elif in_sample and p["feedback"] != "effcap":
                im, ih = _simulate(fitted_trace, p["rtt"], p["bmax"], p["wmax"], _sim_feedback(p), replications,
                                   duration if duration is not None else min(300.0, fitted_trace.period_ms / 1000.0),
                                   seed, workers, tcp, instcap_timing, _sim_effcap(p))
            if fitted_sim:
                fm, fh = _simulate(model, p["rtt"], p["bmax"], p["wmax"], _sim_feedback(p), replications, d, seed,
                                   workers, tcp, instcap_timing, _sim_effcap(p))
            row = {**p, "tcp": tcp, "loss_cycle": loss_cycle, "ca_increment": ca_increment,
                   "instcap_timing": instcap_timing if p["feedback"] == "instcap" else "", "prediction": r.get("prediction", np.nan), "conservative": r.get("conservative", np.nan),
                   "optimistic": r.get("optimistic", np.nan), "analysis_states": r.get("n_states"),
                   "analysis_window": r.get("window_solved", np.nan),
                   "analysis_window_tries": r.get("window_tries", ""),
                   "analysis_seconds": r.get("seconds", np.nan), "analysis_peak_gb": r.get("peak_gb", np.nan),
                   "refused": r.get("refused", ""), "strained": r.get("strained", ""),
                   "sojourn_rtts": r.get("sojourn_rtts", np.nan), "outage_share": r.get("outage_share", np.nan),
                   "fitted": fm, "fitted_half_width": fh, "replay": m, "replay_half_width": h,
                   "replay_fitted_half": im, "replay_fitted_half_hw": ih,
                   "duration": d, "sim_seconds": time.perf_counter() - ts}
            rows.append(row)
            log(f"{row['trace_file']:26s} {row['rtt_ms']:3d} ms {p['fit_half']}->{p['replay_half']} buffer {p['bmax']:4d} "
                f"{p['feedback']:8s} prediction {_num(row['prediction'])} band "
                f"{_band(row['conservative'], row['optimistic']):>13s}  fitted {_ci(fm, fh)}  replay {_ci(m, h)}  "
                f"(fitted half {_ci(im, ih)})  "
                f"({row['sim_seconds']:.0f} s)", flush=True)
    df = pd.DataFrame(rows)
    df["prediction_rel_error"] = (df.prediction - df.replay) / df.replay
    df["fitted_rel_error"] = (df.fitted - df.replay) / df.replay
    df["in_sample_rel_error"] = (df.prediction - df.replay_fitted_half) / df.replay_fitted_half
    df["conservative_holds"] = np.where(df.conservative.notna(), df.conservative <= df.replay + df.replay_half_width,
                                        np.nan)
    df["optimistic_holds"] = np.where(df.optimistic.notna(), df.optimistic >= df.replay - df.replay_half_width, np.nan)
    return df


def _sim_feedback(p: dict) -> str:
    """The simulator's feedback of a study point (:data:`EFFCAP_RTT` is the simulator's EFFCAP)."""
    return "effcap" if p["feedback"] == EFFCAP_RTT else p["feedback"]


def _sim_effcap(p: dict):
    """``(m, n)`` of an :data:`EFFCAP_RTT` point (sampled once per round trip), else None."""
    return (int(p["effcap_m"]), int(p["effcap_n"])) if p["feedback"] == EFFCAP_RTT else None


#: analysis result key -> traces_study.csv column (``--reuse-analyses``)
_ANALYSIS_COLUMNS = {"prediction": "prediction", "conservative": "conservative", "optimistic": "optimistic",
                     "n_states": "analysis_states", "seconds": "analysis_seconds", "peak_gb": "analysis_peak_gb",
                     "refused": "refused", "strained": "strained", "sojourn_rtts": "sojourn_rtts",
                     "outage_share": "outage_share", "window_solved": "analysis_window",
                     "window_tries": "analysis_window_tries"}


def _reused(reuse, p: dict, tcp: str, duration: float | None, regimes: int | None = None,
            loss_cycle: str | None = None, instcap_timing: str | None = None, ca_increment: str | None = None,
            patterns: int | None = None, order: int | None = None):
    """The row of ``reuse`` (an earlier traces_study.csv) at the same point, or None
    (``duration`` None: any duration; ``regimes``, ``loss_cycle``, ``patterns``: the same model too;
    ``instcap_timing``: an INSTCAP replay of the same timing, ``'testbed'`` in runs before it had one)."""
    if reuse is None:
        return None
    rtcp = reuse.tcp if "tcp" in reuse.columns else "timeout-only"   # runs before issue 25 had one TCP
    keep = ((reuse.trace_file == p["trace_file"]) & (reuse.rtt_ms == p["rtt_ms"]) & (reuse.fit_half == p["fit_half"])
            & (reuse.bmax == p["bmax"]) & (reuse.wmax == p["wmax"]) & (reuse.feedback == p["feedback"])
            & (rtcp == tcp))
    if duration is not None:
        keep &= np.isclose(reuse.duration, duration)
    if regimes is not None:
        keep &= (reuse.regimes if "regimes" in reuse.columns else 1) == regimes
    if loss_cycle is not None:   # runs before the drained cycle had one
        keep &= (reuse.loss_cycle if "loss_cycle" in reuse.columns else "paper") == loss_cycle
    if ca_increment is not None:   # runs before the counter grew the window by eq. 1's coins
        keep &= (reuse.ca_increment if "ca_increment" in reuse.columns else "binomial") == ca_increment
    if order is not None:   # runs before the second-order chain had the first-order one
        keep &= (reuse.order if "order" in reuse.columns else 1) == order
    if patterns is not None:   # within-epoch patterns per level of the analysed chain (none recorded: no match)
        keep &= (reuse.patterns if "patterns" in reuse.columns else np.nan) == patterns
    if p["feedback"] == EFFCAP_RTT:   # EFFCAP per round trip: the same M and N (runs without them: no match)
        for c in ("effcap_m", "effcap_n"):
            keep &= (reuse[c] if c in reuse.columns else np.nan) == p[c]
    if instcap_timing is not None and p["feedback"] == "instcap":
        keep &= (reuse.instcap_timing.fillna("testbed") if "instcap_timing" in reuse.columns else "testbed") \
            == instcap_timing
    m = reuse[keep]
    return None if m.empty else m.iloc[0]


def _oracle_error(df: pd.DataFrame) -> pd.Series:
    """|replay of the fitted half - replay of the other half| / the latter: the out-of-sample error of
    a prediction that equals the fitted half's replay (a model exact in sample)."""
    return ((df.replay_fitted_half - df.replay) / df.replay).abs()


def _num(x) -> str:
    return "-" if x is None or pd.isna(x) else f"{x:.3f}"


def _ci(m, h) -> str:
    return "-" if m is None or pd.isna(m) else f"{m:.3f} ± {h:.3f}"


def _band(lo, hi) -> str:
    return "-" if lo is None or pd.isna(lo) else f"{lo:.3f}-{hi:.3f}"


def markdown(df: pd.DataFrame) -> str:
    out = ["| trace | RTT ms | buffer (BDP, packets) | feedback | K | analysis band | sim fitted | sim trace | fitted vs trace |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in df.itertuples():
        name = {"none": "TCP alone"}.get(r.feedback, r.feedback.upper())
        out.append(f"| {r.trace_file} | {r.rtt_ms} | {r.buffer_bdp:g} ({r.bmax}) | {name} | {r.states} | "
                   f"{_band(r.analysis_conservative, r.analysis_optimistic)} | "
                   f"{r.fitted:.3f} ± {r.fitted_half_width:.3f} | {r.trace:.3f} ± {r.trace_half_width:.3f} | "
                   f"{100 * r.fitted_rel_error:+.1f} % |")
    return "\n".join(out)


FEEDBACK_NAMES = {"none": "TCP alone", "instcap": "INSTCAP", "effcap": "EFFCAP", EFFCAP_RTT: "EFFCAP per RTT"}


def _feedback_name(r) -> str:
    """A row's feedback as the tables print it: EFFCAP per round trip with its M and N."""
    if r.feedback == EFFCAP_RTT:
        return f"EFFCAP({int(r.effcap_m)}, {int(r.effcap_n)}) per RTT"
    return FEEDBACK_NAMES[r.feedback]


def holdout_markdown(df: pd.DataFrame) -> str:
    """The out-of-sample table, one row per point."""
    out = ["| trace | RTT ms | fit -> replay | buffer (BDP, packets) | feedback | K | prediction | band | "
           "sim fitted | replay | prediction vs replay | in sample | analysis |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in df.itertuples():
        if pd.notna(r.prediction):
            an = f"{int(r.analysis_states):,} states, {r.analysis_seconds:.0f} s, {r.analysis_peak_gb:.1f} GB"
            err = f"{100 * r.prediction_rel_error:+.1f} %"
        else:
            an, err = ("-" if r.feedback == "effcap" else f"refused: {r.refused}"), "-"
        ins = "-" if pd.isna(r.in_sample_rel_error) else f"{100 * r.in_sample_rel_error:+.1f} %"
        out.append(f"| {r.trace_file.replace('.down', '')} | {r.rtt_ms} | {r.fit_half} -> {r.replay_half} | "
                   f"{r.buffer_bdp:g} ({r.bmax}) | {_feedback_name(r)} | {r.states} | {_num(r.prediction)} | "
                   f"{_band(r.conservative, r.optimistic)} | {_ci(r.fitted, r.fitted_half_width)} | "
                   f"{_ci(r.replay, r.replay_half_width)} | {err} | {ins} | {an} |")
    return "\n".join(out)


def _within(err) -> str:
    """"within 10 % at n of N (x %), median |error| y %" of the absolute relative errors ``err``."""
    return f"within 10 % at {_share(err <= 0.10)}, median |error| {100 * err.median():.1f} %"


def _share(mask) -> str:
    mask = np.asarray(mask, dtype=bool)
    return f"{int(mask.sum())} of {mask.size} ({100 * mask.mean():.0f} %)" if mask.size else "0 of 0"


def signs(df: pd.DataFrame) -> pd.DataFrame:
    """INSTCAP minus TCP alone per (trace, RTT, direction, buffer): replay (with whether the
    replay CIs separate them), prediction and fitted-chain simulation."""
    keys = ["trace_file", "rtt_ms", "fit_half", "buffer_bdp"]
    j = pd.merge(df[df.feedback == "none"], df[df.feedback == "instcap"], on=keys, suffixes=("_none", "_instcap"))
    out = pd.DataFrame({
        "replay_diff": j.replay_instcap - j.replay_none,
        "separated": (j.replay_instcap - j.replay_none).abs() > j.replay_half_width_instcap + j.replay_half_width_none,
        "prediction_diff": j.prediction_instcap - j.prediction_none,
        "fitted_diff": j.fitted_instcap - j.fitted_none})
    return pd.concat([j[keys], out], axis=1)


def targets(df: pd.DataFrame) -> str:
    """The agreement of the out-of-sample study in the terms of issue 23's targets."""
    pts = df[df.feedback.isin(["none", "instcap"])]
    ok = pts[pts.prediction.notna()]
    err = ok.prediction_rel_error.abs()
    lines = [f"Points (trace x RTT x buffer x direction, TCP alone and INSTCAP): {len(pts)}; "
             f"analysed {len(ok)}, refused {len(pts) - len(ok)}.", ""]
    if len(ok):
        c, o = ok.conservative_holds.astype(bool), ok.optimistic_holds.astype(bool)
        lines += [
            f"- conservative bound at or below the replay (within its 95 % CI): {_share(c)} of the analysed points "
            f"(target >= 90 %); over all {len(pts)} points, refused counted as misses: {int(c.sum())} "
            f"({100 * c.sum() / len(pts):.0f} %)",
            f"- optimistic bound at or above the replay: {_share(o)} (target >= 90 %); replay inside the band: "
            f"{_share(c & o)}",
            f"- prediction within 10 % of the replay: {_share(err <= 0.10)} (target >= 80 %); over all points: "
            f"{int((err <= 0.10).sum())} of {len(pts)} ({100 * (err <= 0.10).sum() / len(pts):.0f} %)",
            f"- median |prediction - replay| / replay: {100 * err.median():.1f} % (target <= 5 %); "
            f"median signed error {100 * ok.prediction_rel_error.median():+.1f} %",
        ]
        for name, g in ok.groupby("feedback", sort=False):
            e = g.prediction_rel_error.abs()
            lines.append(f"  - {FEEDBACK_NAMES[name]}: {_within(e)}, band holds at {_share(g.conservative_holds.astype(bool) & g.optimistic_holds.astype(bool))}")
        for bf, g in ok.groupby("buffer_bdp"):
            e = g.prediction_rel_error.abs()
            lines.append(f"  - buffer {bf:g} BDP: {_within(e)}, median signed {100 * g.prediction_rel_error.median():+.1f} %, conservative holds at "
                         f"{_share(g.conservative_holds.astype(bool))}, optimistic at {_share(g.optimistic_holds.astype(bool))}")
        for rtt, g in ok.groupby("rtt_ms"):
            e = g.prediction_rel_error.abs()
            lines.append(f"  - RTT {rtt} ms: {_within(e)}, median signed {100 * g.prediction_rel_error.median():+.1f} %")
        for tr, g in ok.groupby("trace_file", sort=False):
            e = g.prediction_rel_error.abs()
            lines.append(f"  - {tr}: {_within(e)}")
    if len(ok) and "replay_fitted_half" in ok and ok.replay_fitted_half.notna().any():
        ins = ok[ok.replay_fitted_half.notna()]
        e = ins.in_sample_rel_error.abs()
        cin = ins.conservative <= ins.replay_fitted_half + ins.replay_fitted_half_hw
        oin = ins.optimistic >= ins.replay_fitted_half - ins.replay_fitted_half_hw
        shift = ((ins.replay - ins.replay_fitted_half) / ins.replay_fitted_half).abs()
        lines += [f"- in sample (the same points against the replay of the *fitted* half, same buffer and window): "
                  f"prediction within 10 % at {_share(e <= 0.10)}, median |error| {100 * e.median():.1f} % "
                  f"(signed {100 * ins.in_sample_rel_error.median():+.1f} %); conservative at or below at {_share(cin)}, "
                  f"optimistic at or above at {_share(oin)}",
                  f"- the halves as different links: |replay of the other half - replay of the fitted half| / the "
                  f"latter, same point: median {100 * shift.median():.1f} %, max {100 * shift.max():.1f} %",
                  # the out-of-sample ceiling: a model exact on the half it was fitted to, judged on the other
                  f"- an oracle exact on the fitted half (its prediction = the fitted half's replay) would be within "
                  f"10 % of the other half's replay at {_share(_oracle_error(ins) <= 0.10)}, median |error| "
                  f"{100 * _oracle_error(ins).median():.1f} %: what a model right on the half it was fitted to scores out of "
                  f"sample (target 80 %)"]
    sg = signs(df)
    sep = sg[sg.separated]
    if len(sep):
        have = sep[sep.prediction_diff.notna()]
        right = np.sign(have.prediction_diff) == np.sign(have.replay_diff)
        fr = np.sign(sep.fitted_diff) == np.sign(sep.replay_diff)
        lines.append(f"- sign of INSTCAP minus TCP alone where the replay CIs separate them ({len(sep)} of {len(sg)} "
                     f"pairs; the replay says INSTCAP higher at {int((sep.replay_diff > 0).sum())}): the prediction has it "
                     f"right at {_share(right)} of the pairs with both analyses (target: all); the fitted-chain "
                     f"simulation at {_share(fr[sep.fitted_diff.notna()])}")
    ref = pts[pts.prediction.isna()]
    if len(ref):
        lines.append(f"- refused: {len(ref)} points (target: none)")
        for r in ref.itertuples():
            lines.append(f"  - {r.trace_file} {r.rtt_ms} ms {r.fit_half}->{r.replay_half} {r.buffer_bdp:g} BDP "
                         f"({r.bmax}) {FEEDBACK_NAMES[r.feedback]}: {r.refused}")
    if len(ok):
        sec, gb = ok.analysis_seconds, ok.analysis_peak_gb
        lines.append(f"- seconds per analysis (states counted, built, solved; one process each, two at a time on "
                     f"2 cores): median {sec.median():.1f}, max {sec.max():.1f}; <= 10 s at {_share(sec <= 10)} "
                     f"(target: all); peak resident memory of the analysis process median {gb.median():.2f} GB, "
                     f"max {gb.max():.2f} GB (<= 4 GB at {_share(gb <= 4)})")
    if (df.feedback == EFFCAP_RTT).any():
        lines += effcap_targets(df)
    f = df[df.fitted.notna()]
    if len(f):
        e = f.fitted_rel_error.abs()
        lines.append(f"- fitted chain (levels only) simulated against the replay: within 10 % at {_share(e <= 0.10)}, "
                     f"median |error| {100 * e.median():.1f} % (all feedbacks, EFFCAP included)")
    return "\n".join(lines)


def effcap_targets(df: pd.DataFrame) -> list:
    """The :data:`EFFCAP_RTT` rows in the same terms (not among issue 23's points, which are TCP alone and
    INSTCAP), and the sign of EFFCAP minus INSTCAP where the replays' CIs separate them."""
    ef = df[df.feedback == EFFCAP_RTT]
    ok = ef[ef.prediction.notna()]
    first = ef.iloc[0]
    lines = [f"- EFFCAP({int(first.effcap_m)}, {int(first.effcap_n)}) sampled once per round trip (docs/model.md "
             f"sec. 20; analysed and simulated with that estimator): {len(ef)} points, analysed {len(ok)}, refused "
             f"{len(ef) - len(ok)}"]
    if len(ok):
        e = ok.prediction_rel_error.abs()
        c, o = ok.conservative_holds.astype(bool), ok.optimistic_holds.astype(bool)
        lines.append(f"  - out of sample: prediction {_within(e)} (signed {100 * ok.prediction_rel_error.median():+.1f} %); conservative at "
                     f"or below at {_share(c)}, optimistic at or above at {_share(o)}")
        ins = ok[ok.replay_fitted_half.notna()]
        if len(ins):
            ei = ins.in_sample_rel_error.abs()
            lines.append(f"  - in sample: {_within(ei)} (signed {100 * ins.in_sample_rel_error.median():+.1f} %)")
        for bf, g in ok.groupby("buffer_bdp"):
            lines.append(f"  - buffer {bf:g} BDP: {_within(g.prediction_rel_error.abs())}")
        sec, gb = ok.analysis_seconds, ok.analysis_peak_gb
        lines.append(f"  - seconds per analysis median {sec.median():.1f}, max {sec.max():.1f}; states median "
                     f"{ok.analysis_states.median():,.0f}, max {ok.analysis_states.max():,.0f}; peak memory max "
                     f"{gb.max():.2f} GB")
    keys = ["trace_file", "rtt_ms", "fit_half", "buffer_bdp"]
    j = pd.merge(df[df.feedback == "instcap"], ef, on=keys, suffixes=("_i", "_e"))
    if len(j):
        diff = j.replay_e - j.replay_i
        sep = diff.abs() > j.replay_half_width_e + j.replay_half_width_i
        both = sep & j.prediction_e.notna() & j.prediction_i.notna()
        right = np.sign(j.prediction_e - j.prediction_i) == np.sign(diff)
        lines.append(f"  - sign of EFFCAP minus INSTCAP where the replays' CIs separate them ({int(sep.sum())} of "
                     f"{len(j)} pairs; EFFCAP higher at {int((sep & (diff > 0)).sum())}): the prediction has it right at "
                     f"{_share(right[both])} of the pairs with both analyses")
    for r in ef[ef.prediction.isna()].itertuples():
        lines.append(f"  - refused: {r.trace_file} {r.rtt_ms} ms {r.fit_half}->{r.replay_half} {r.buffer_bdp:g} BDP "
                     f"({r.bmax}): {r.refused}")
    return lines


def _effcap_pair(text: str):
    """``--effcap-analysis M:N`` -> ``(M, N)``."""
    try:
        m, n = (int(v) for v in text.split(":"))
        if m < 1 or n < 1:
            raise ValueError
    except ValueError:
        raise ValueError(f"--effcap-analysis={text!r} is invalid: must be M:N with integers M, N >= 1 "
                         "(round trips, e.g. 2:1)") from None
    return m, n


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="one trace, RTT and buffer; 2 x 20 s")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--holdout", action="store_true",
                      help="(default) fit on one half of each trace, replay the other, both ways (issue 23)")
    mode.add_argument("--in-sample", action="store_true",
                      help="issue 15's study: the chain fitted on the whole trace, outage lifted, against its replay")
    mode.add_argument("--mechanisms", action="store_true",
                      help="only the decomposition of the fitted-vs-trace gap at the last RTT "
                      "(trace, smoothed trace, k-means chain, outage lifted, HMM chain; HMM needs hmmlearn)")
    ap.add_argument("--traces", nargs="+", help="Mahimahi trace files (default: the shared traces)")
    ap.add_argument("--rtts", default="0.02,0.05,0.1", help="round trips, seconds, comma-separated")
    ap.add_argument("--buffers", default="0.5,2", help="buffers in mean bandwidth-delay products")
    ap.add_argument("--replications", type=int, default=5)
    ap.add_argument("--duration", type=float, default=None, help="simulated seconds per replication "
                    "(default: the replayed trace's period, at most 300 s)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tcp", choices=("timeout-only", "sack"), default="timeout-only",
                    help="holdout: the TCP of the analysis and of every simulation (docs/model.md sec. 12)")
    ap.add_argument("--workers", type=int, default=2, help="simulation processes")
    ap.add_argument("--max-states", type=int, default=None,
                    help="holdout: the engine's state limit on top of --state-limit and --state-limit-instcap "
                         "(default: none beyond them)")
    ap.add_argument("--state-limit", type=int, default=STATE_LIMIT,
                    help="holdout: states counted before an analysis; above it the point is refused")
    ap.add_argument("--state-limit-instcap", type=int, default=STATE_LIMIT_INSTCAP,
                    help="holdout: the same for INSTCAP's chains (cheaper per state)")
    ap.add_argument("--timeout", type=float, default=ANALYSIS_TIMEOUT, help="holdout: seconds per analysis")
    ap.add_argument("--jobs", type=int, default=2, help="holdout: analyses at a time (one process each)")
    ap.add_argument("--no-fitted-sim", action="store_true", help="holdout: skip the simulation of the fitted chain")
    ap.add_argument("--no-in-sample", action="store_true",
                    help="holdout: skip the replay of the fitted half (the in-sample reference)")
    ap.add_argument("--regimes", type=int, default=1,
                    help="holdout: the two-timescale regime x level chain with this many regimes (default 1: the "
                         "one-timescale chain; docs/traces.md sec. 4a)")
    ap.add_argument("--order", type=int, choices=(1, 2), default=1,
                    help="holdout: 2 analyses the second-order chain, states = (previous, current) level "
                         "(docs/traces.md sec. 7.2x; default 1: the first-order chain)")
    ap.add_argument("--loss-cycle", choices=("paper", "drain", "timer"), default=None,
                    help="holdout: the analysis' timeout cycle (docs/model.md secs. 14-15; default "
                         "trace_study.link_loss_cycle: 'timer' for the timeout-only TCP, 'paper' with --tcp sack)")
    ap.add_argument("--ca-increment", choices=CA_INCREMENTS, default=LINK_CA_INCREMENT,
                    help="holdout: the analysis' congestion-avoidance growth (docs/model.md sec. 18; default "
                         "trace_study.LINK_CA_INCREMENT, counter: one packet per W ACKs, as the simulated TCP; "
                         "binomial: the paper's coin per ACK, eq. 1)")
    ap.add_argument("--window-tail", type=float, default=LINK_WINDOW_TAIL,
                    help="holdout: the analysis' window search (docs/model.md sec. 19; default "
                         "trace_study.LINK_WINDOW_TAIL, 1e-12; 0: the chain of the study's wmax itself)")
    ap.add_argument("--reuse-replays", metavar="CSV", default=None,
                    help="holdout: take the replays from an earlier traces_study.csv at the same points (same "
                         "seed, replications and duration) instead of simulating them again")
    ap.add_argument("--reuse-analyses", metavar="CSV", default=None,
                    help="holdout: take the analyses from an earlier traces_study.csv of the same model at the "
                         "same points (when only the simulator changed) instead of running them again")
    ap.add_argument("--instcap-timing", choices=INSTCAP_TIMINGS, default="round-trip",
                    help="how the simulations time INSTCAP: 'round-trip' (default) measures each round trip and "
                         "applies it over the next, the analysis' INSTCAP; 'testbed' the simulator's defaults "
                         "(s = 30 ms, applied one round trip later; docs/model.md sec. 16)")
    ap.add_argument("--effcap-analysis", metavar="M:N", default=None,
                    help="holdout: a fourth row per point, EFFCAP(M, N) sampled once per round trip, analysed "
                         "(docs/model.md sec. 20) and simulated with that estimator (default: none)")
    ap.add_argument("--state-limit-effcap", type=int, default=STATE_LIMIT_EFFCAP,
                    help="holdout: states above which an --effcap-analysis point is refused")
    ap.add_argument("--out", default=str(ROOT / "out" / "traces"))
    a = ap.parse_args(argv)
    try:
        effcap_analysis = _effcap_pair(a.effcap_analysis) if a.effcap_analysis else None
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    rtts = [float(x) for x in a.rtts.split(",")]
    buffers = [float(x) for x in a.buffers.split(",")]
    if a.traces:
        traces = a.traces
    elif a.quick or not SHARED.is_dir():
        traces = [str(ROOT / "tests" / "data" / "markov3_outage.down")]
    else:
        traces = [str(SHARED / f) for f in SHARED_TRACES]
    reps, dur = a.replications, a.duration
    if a.quick:
        rtts, buffers, reps, dur = rtts[-1:], buffers[:1], 2, dur or 20.0
    t0 = time.perf_counter()
    os.makedirs(a.out, exist_ok=True)
    if a.mechanisms:
        d = dur or 140.0
        df = mechanisms(traces, rtts[-1] if a.quick else 0.05, buffers, reps, d, a.seed, a.workers,
                        instcap_timing=a.instcap_timing)
        write_table(df, os.path.join(a.out, "traces_mechanisms.csv"))
        print(df.pivot_table(index=["trace_file", "buffer_bdp", "feedback"], columns="process",
                             values="efficiency", sort=False).round(3).to_string())
        print(f"{time.perf_counter() - t0:.0f} s; table in {a.out}/traces_mechanisms.csv")
        return 0
    if a.in_sample:
        frames = []
        for path in traces:
            d = dur
            if d is None:
                d = min(300.0, read_trace(path).period_ms / 1000.0)
            frames.append(run([path], rtts, buffers, reps, d, a.seed, a.workers, a.max_states or STATE_LIMIT))
        df = pd.concat(frames, ignore_index=True)
        write_table(df, os.path.join(a.out, "traces_in_sample.csv"))
        md = markdown(df)
        write_text(Path(a.out, "traces_in_sample.md"), md + "\n")
        print()
        print(md)
        within = df[np.abs(df.fitted_rel_error) <= 0.05]
        print(f"\nfitted chain within 5 % of the trace replay at {len(within)} of {len(df)} points; "
              f"{time.perf_counter() - t0:.0f} s; tables in {a.out}/")
        return 0
    df = holdout(traces, rtts, buffers, reps, dur, a.seed, a.workers, max_states=a.max_states,
                 state_limit=a.state_limit, timeout=a.timeout, jobs=a.jobs, fitted_sim=not a.no_fitted_sim,
                 in_sample=not a.no_in_sample, tcp=a.tcp, regimes=a.regimes,
                 state_limit_instcap=a.state_limit_instcap,
                 reuse=pd.read_csv(a.reuse_replays) if a.reuse_replays else None,
                 reuse_analyses=pd.read_csv(a.reuse_analyses, keep_default_na=False, na_values=[""])
                 if a.reuse_analyses else None, loss_cycle=link_loss_cycle(a.loss_cycle, a.tcp),
                 instcap_timing=a.instcap_timing, ca_increment=a.ca_increment, window_tail=a.window_tail or None,
                 effcap_analysis=effcap_analysis, state_limit_effcap=a.state_limit_effcap, order=a.order)
    wall = time.perf_counter() - t0
    write_table(df, os.path.join(a.out, "traces_study.csv"))
    md = holdout_markdown(df)
    write_text(Path(a.out, "traces_study.md"), md + "\n")
    tg = targets(df) + f"\n- wall time of the whole study: {wall:.0f} s ({wall / 60:.1f} min)"
    write_text(Path(a.out, "traces_targets.md"), tg + "\n")
    print()
    print(md)
    print()
    print(tg)
    if df.fitted.notna().any():
        within = df[np.abs(df.fitted_rel_error) <= 0.05]
        print(f"\nfitted chain within 5 % of the trace replay at {len(within)} of {len(df)} points "
              f"(out of sample); {wall:.0f} s; tables in {a.out}/")
    else:
        print(f"\n{wall:.0f} s; tables in {a.out}/")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
