"""The out-of-sample study (issue 23 item 4): the halves of a trace, the scenario that
``analyze_link`` solves, and the refusals and scoring of ``analytics/traces.py``."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tcpabr_model.capacity import Trace, read_trace
from tcpabr_model.trace_study import analyze_link, fit_link, link_scenario, trace_halves

from _scripts import load_script

DATA = Path(__file__).parent / "data"


def _analytics():
    return load_script("analytics/traces.py", "analytics_traces")


def test_halves_partition_the_trace():
    trace = read_trace(DATA / "markov3_outage.down")
    a, b = trace_halves(trace)
    T, S = trace.period_ms, a.period_ms
    assert a.n_opportunities + b.n_opportunities == trace.n_opportunities
    assert a.period_ms + b.period_ms == T and S >= T / 2
    # the split is at a line: the first half is the trace up to S, the second the rest shifted by -S
    np.testing.assert_array_equal(a.times_ms, trace.times_ms[trace.times_ms <= S])
    np.testing.assert_array_equal(b.times_ms, trace.times_ms[trace.times_ms > S] - S)
    assert b.times_ms[0] > 0


def test_line_at_zero_is_the_end_of_the_period():
    # Mahimahi: 0 and T are the same instant; it belongs to the second half, as bin_trace counts it
    a, b = trace_halves(Trace([0, 5, 10, 20]))
    assert a.times_ms.tolist() == [5, 10] and b.times_ms.tolist() == [10, 10]


@pytest.mark.parametrize("times", [[40], [1, 40]])
def test_a_trace_without_a_line_in_its_first_half_is_refused(times):
    with pytest.raises(ValueError, match="cannot split"):
        trace_halves(Trace(times))


def test_link_scenario_is_what_analyze_link_solves():
    from tcpabr_model.markov import analyze, estimate_chain

    link = fit_link(read_trace(DATA / "markov3_outage.down"), 0.1, patterns=2)
    sc = link_scenario(link, 4, "none")
    r, a = analyze(sc), analyze_link(link, 4, "none")
    assert estimate_chain(sc).n_states == r.n_states == a.n_states
    assert a.wmax == sc.wmax and a.bmax == 4
    cmax = float(np.max(link.model.levels))
    assert a.optimistic == pytest.approx(min(1.0, r.throughput_optimistic * cmax / link.mean_rate), abs=1e-14)


def test_refusals_are_recorded_not_raised():
    tr = _analytics()
    link = fit_link(read_trace(DATA / "markov3_outage.down"), 0.1, patterns=2)
    res = tr.run_analyses([(0, (link, 0, "none", None, 2_000_000, 1000)),     # bad buffer
                           (1, (link, 4, "instcap", None, 2_000_000, 10))],    # above the state limit
                          concurrency=2, timeout=120.0, log=lambda *a, **k: None)
    assert "prediction" not in res[0] and res[0]["refused"].startswith("ValueError: bmax=0")
    assert "prediction" not in res[1] and "more than 10 states" in res[1]["refused"]
    assert all(math.isfinite(r["seconds"]) for r in res.values())


def test_targets_score_the_band_against_the_replay_ci():
    tr = _analytics()
    base = {"trace_file": "t", "rtt_ms": 50, "fit_half": "A", "replay_half": "B", "buffer_bdp": 0.5, "bmax": 5,
            "states": 2, "analysis_states": 10, "analysis_seconds": 1.0, "analysis_peak_gb": 0.1, "refused": "",
            "fitted": np.nan, "fitted_half_width": np.nan}
    rows = [  # TCP alone: replay 0.50 +- 0.01, band [0.505, 0.60] holds (0.505 <= 0.51), prediction +4 %
        {**base, "feedback": "none", "prediction": 0.52, "conservative": 0.505, "optimistic": 0.60,
         "replay": 0.50, "replay_half_width": 0.01},
        # INSTCAP: replay 0.60 +- 0.01 (separated from TCP alone, INSTCAP higher); conservative 0.62 too high
        {**base, "feedback": "instcap", "prediction": 0.70, "conservative": 0.62, "optimistic": 0.80,
         "replay": 0.60, "replay_half_width": 0.01}]
    df = pd.DataFrame(rows)
    df["prediction_rel_error"] = (df.prediction - df.replay) / df.replay
    df["fitted_rel_error"] = np.nan
    df["conservative_holds"] = df.conservative <= df.replay + df.replay_half_width
    df["optimistic_holds"] = df.optimistic >= df.replay - df.replay_half_width
    text = tr.targets(df)
    assert "conservative bound at or below the replay (within its 95 % CI): 1 of 2 (50 %)" in text
    assert "prediction within 10 % of the replay: 1 of 2 (50 %)" in text
    assert "prediction has it right at 1 of 1 (100 %)" in text
    sg = tr.signs(df)
    assert bool(sg.separated.iloc[0]) and sg.replay_diff.iloc[0] == pytest.approx(0.10)


def test_targets_give_the_score_of_a_model_right_in_sample():
    """The out-of-sample ceiling: a prediction equal to the fitted half's replay, judged on the other half."""
    tr = _analytics()
    base = {"trace_file": "t", "rtt_ms": 50, "fit_half": "A", "replay_half": "B", "buffer_bdp": 0.5, "bmax": 5,
            "states": 2, "analysis_states": 10, "analysis_seconds": 1.0, "analysis_peak_gb": 0.1, "refused": "",
            "fitted": np.nan, "fitted_half_width": np.nan, "prediction": 0.5, "conservative": 0.4, "optimistic": 0.6,
            "replay_half_width": 0.01, "replay_fitted_half_hw": 0.01}
    rows = [{**base, "feedback": "none", "replay": 0.50, "replay_fitted_half": 0.52},     # 4 %: within
            {**base, "feedback": "instcap", "replay": 0.40, "replay_fitted_half": 0.50}]  # 25 %: not
    df = pd.DataFrame(rows)
    df["prediction_rel_error"] = (df.prediction - df.replay) / df.replay
    df["in_sample_rel_error"] = (df.prediction - df.replay_fitted_half) / df.replay_fitted_half
    df["fitted_rel_error"] = np.nan
    df["conservative_holds"] = df.conservative <= df.replay + df.replay_half_width
    df["optimistic_holds"] = df.optimistic >= df.replay - df.replay_half_width
    assert list(tr._oracle_error(df).round(12)) == [0.04, 0.25]
    text = tr.targets(df)
    assert "an oracle exact on the fitted half" in text
    assert "other half's replay at 1 of 2 (50 %), median |error| 14.5 %" in text


def test_reused_instcap_replays_need_the_same_timing():
    tr = _analytics()
    old = pd.DataFrame([{"trace_file": "t.down", "rtt_ms": 50, "fit_half": "A", "bmax": 5, "wmax": 40,
                         "feedback": "instcap", "duration": 70.0, "replay": 0.4, "replay_half_width": 0.01}])
    p = {"trace_file": "t.down", "rtt_ms": 50, "fit_half": "A", "bmax": 5, "wmax": 40, "feedback": "instcap"}
    # a run without the column simulated INSTCAP with the simulator's (testbed) timing
    assert tr._reused(old, p, "timeout-only", 70.0, instcap_timing="round-trip") is None
    assert tr._reused(old, p, "timeout-only", 70.0, instcap_timing="testbed").replay == 0.4
    old["instcap_timing"] = "round-trip"
    assert tr._reused(old, p, "timeout-only", 70.0, instcap_timing="round-trip").replay == 0.4
    # TCP alone's replays do not depend on it
    none = old.assign(feedback="none", instcap_timing="")
    assert tr._reused(none, {**p, "feedback": "none"}, "timeout-only", 70.0, instcap_timing="round-trip") is not None


def test_reused_replays_match_only_the_same_point():
    tr = _analytics()
    old = pd.DataFrame([{"trace_file": "t.down", "rtt_ms": 50, "fit_half": "A", "bmax": 5, "wmax": 40,
                         "feedback": "none", "duration": 70.0, "replay": 0.4, "replay_half_width": 0.01,
                         "replay_fitted_half": 0.5, "replay_fitted_half_hw": 0.02}])   # a run without a tcp column
    p = {"trace_file": "t.down", "rtt_ms": 50, "fit_half": "A", "bmax": 5, "wmax": 40, "feedback": "none"}
    assert tr._reused(old, p, "timeout-only", 70.0).replay == 0.4
    assert tr._reused(old, p, "sack", 70.0) is None
    assert tr._reused(old, {**p, "wmax": 41}, "timeout-only", 70.0) is None
    assert tr._reused(old, p, "timeout-only", 140.0) is None
    assert tr._reused(None, p, "timeout-only", 70.0) is None


#: a small holdout run: one replication of 5 s, no fitted-chain or in-sample simulation, silent
_SMALL_HOLDOUT = dict(replications=1, duration=5.0, seed=1, workers=1, fitted_sim=False, in_sample=False,
                      log=lambda *a, **k: None)


def test_holdout_with_regimes_keeps_the_one_timescale_window():
    """--regimes changes the analysed chain, never the replays' window (same points as R = 1)."""
    tr = _analytics()
    path = str(DATA / "markov3_outage.down")
    one = tr.holdout([path], [0.1], [0.5], **_SMALL_HOLDOUT)
    two = tr.holdout([path], [0.1], [0.5], regimes=2, reuse=one, **_SMALL_HOLDOUT)
    assert (two.wmax.values == one.wmax.values).all() and (two.replay.values == one.replay.values).all()
    assert (two.regimes == 2).all() and (one.regimes == 1).all()
    assert not np.array_equal(two.prediction.values[:2], one.prediction.values[:2])


def test_reused_analyses_match_only_the_same_model():
    """--reuse-analyses: the same point, any duration, and the same regimes and loss cycle (a run
    without those columns is R = 1 with III-B.4's cycle)."""
    tr = _analytics()
    old = pd.DataFrame([{"trace_file": "t.down", "rtt_ms": 50, "fit_half": "A", "bmax": 5, "wmax": 40,
                         "feedback": "none", "duration": 70.0, "prediction": 0.45}])
    p = {"trace_file": "t.down", "rtt_ms": 50, "fit_half": "A", "bmax": 5, "wmax": 40, "feedback": "none"}
    assert tr._reused(old, p, "timeout-only", None, 1, "paper").prediction == 0.45
    assert tr._reused(old, p, "timeout-only", None, 2, "paper") is None
    assert tr._reused(old, p, "timeout-only", None, 1, "drain") is None
    drained = old.assign(loss_cycle="drain", regimes=1)
    assert tr._reused(drained, p, "timeout-only", None, 1, "drain").prediction == 0.45


def test_holdout_reuses_analyses_and_resimulates_replays():
    tr = _analytics()
    path = str(DATA / "markov3_outage.down")
    one = tr.holdout([path], [0.1], [0.5], **_SMALL_HOLDOUT)
    fake = one.assign(prediction=one.prediction + 0.125)
    two = tr.holdout([path], [0.1], [0.5], reuse_analyses=fake, **_SMALL_HOLDOUT)
    got = two.prediction.dropna().values
    assert len(got) and np.allclose(got, one.prediction.dropna().values + 0.125)
    assert (two.replay.values == one.replay.values).all()                  # simulated again, same seed
    drained = tr.holdout([path], [0.1], [0.5], loss_cycle="drain", reuse=one, **_SMALL_HOLDOUT)
    assert (drained.loss_cycle == "drain").all() and (drained.replay.values == one.replay.values).all()


@pytest.fixture
def recorded_jobs(monkeypatch):
    """``(analytics module, list)``: holdout's analyses are not run but recorded in the list as
    ``(key, args of _analysis_child)``."""
    tr = _analytics()
    seen = []

    def fake(todo, jobs, timeout, log=print):
        seen.extend(todo)
        return {}

    monkeypatch.setattr(tr, "run_analyses", fake)
    return tr, seen


def test_holdout_state_limits_are_not_capped_by_a_default(recorded_jobs):
    """Each feedback's analyses get its own limit: INSTCAP's 2 x 10^7 (STATE_LIMIT_INSTCAP) was
    capped at 3 x 10^6 by a fixed default of max_states, so the study's default run refused the
    INSTCAP chains of 3-13 million states that docs/traces.md sec. 7.2o analyses."""
    tr, seen = recorded_jobs
    tr.holdout([str(DATA / "markov3_outage.down")], [0.1], [0.5], state_limit=1000, state_limit_instcap=50_000_000,
               **_SMALL_HOLDOUT)
    # each job's args: (link, bmax, feedback, wmax, max_states, state_limit, ...); the child uses the min
    assert {args[2]: min(args[4], args[5]) for _, args in seen} == {"none": 1000, "instcap": 50_000_000}
    seen.clear()
    tr.holdout([str(DATA / "markov3_outage.down")], [0.1], [0.5], state_limit=1000, state_limit_instcap=50_000_000,
               max_states=20_000, **_SMALL_HOLDOUT)
    assert {args[2]: min(args[4], args[5]) for _, args in seen} == {"none": 1000, "instcap": 20_000}


def test_reused_analyses_need_the_same_patterns():
    """An analysis with another count of within-epoch patterns per level is another chain: it is
    analysed again, never reused (the study's TCP alone went from 8 to 4 patterns)."""
    tr = _analytics()
    old = pd.DataFrame([{"trace_file": "t.down", "rtt_ms": 50, "fit_half": "A", "bmax": 5, "wmax": 40,
                         "feedback": "none", "duration": 70.0, "patterns": 8.0, "prediction": 0.45}])
    p = {"trace_file": "t.down", "rtt_ms": 50, "fit_half": "A", "bmax": 5, "wmax": 40, "feedback": "none"}
    assert tr._reused(old, p, "timeout-only", None, 1, "paper", patterns=4) is None
    assert tr._reused(old, p, "timeout-only", None, 1, "paper", patterns=8).prediction == 0.45
    assert tr._reused(old.drop(columns="patterns"), p, "timeout-only", None, 1, "paper", patterns=8) is None


def test_holdout_analyses_both_feedbacks_on_the_same_patterns(recorded_jobs):
    """The sign of INSTCAP minus TCP alone compares two analyses: both get the same chain and
    the same representatives of each level (docs/traces.md sec. 7.2q: the two sign misses of the
    study with 8 patterns for TCP alone and 4 for INSTCAP came from that mismatch)."""
    tr, seen = recorded_jobs
    df = tr.holdout([str(DATA / "markov3_outage.down")], [0.1], [0.5], **_SMALL_HOLDOUT)
    links = {args[2]: args[0] for _, args in seen}
    assert set(links) == {"none", "instcap"} and links["none"].service is links["instcap"].service
    assert len(set(tr.PATTERNS.values())) == 1
    assert set(df[df.feedback != "effcap"].patterns) == {tr.PATTERNS["none"]}


def test_pattern_count_shifts_are_between_consecutive_counts():
    pc = load_script("analytics/pattern_count.py", "analytics_pattern_count")
    df = pd.DataFrame([
        {"trace_file": "t", "rtt_ms": 50, "fit_half": "A", "buffer_bdp": 0.5, "feedback": "none", "patterns": p,
         "prediction": v, "seconds": s, "states": n}
        for p, v, s, n in ((2, 0.50, 1.0, 100), (4, 0.55, 3.0, 150), (8, 0.5445, 9.0, 300))])
    sh = pc.shifts(df).set_index("P")
    assert sh.loc["2 -> 4", "median abs shift %"] == pytest.approx(10.0)
    assert sh.loc["4 -> 8", "max abs shift %"] == pytest.approx(1.0)
    assert sh.loc["4 -> 8", "within 2 %"] == 1 and sh.loc["2 -> 4", "within 2 %"] == 0
    assert sh.loc["4 -> 8", "seconds ratio (median)"] == 3.0 and sh.loc["2 -> 4", "states ratio (median)"] == 1.5
    assert sh.loc["2 -> 8", "median abs shift %"] == pytest.approx(8.9)       # each P against the largest
    assert sh.loc["2 -> 8", "signed median %"] == pytest.approx(-8.17, abs=0.01)   # 0.50 / 0.5445 - 1
    assert "| feedback |" in pc.markdown(pc.shifts(df))


def _kernel_signatures() -> dict:
    """How many specialisations each numba kernel of the engine has compiled (or loaded) in this
    process."""
    import sys

    from numba.core.registry import CPUDispatcher

    return {f"{m.__name__}.{n}": len(f.signatures) for m in list(sys.modules.values())
            if getattr(m, "__name__", "").startswith("tcpabr_model.markov.kernels")
            for n, f in vars(m).items() if isinstance(f, CPUDispatcher)}


def test_warm_up_compiles_what_the_study_children_run():
    """The study's children are forked after :func:`warm_up`: a kernel specialisation it did not
    compile is compiled by a child inside its analysis seconds (23-25 s at the study's first INSTCAP
    points, docs/traces.md sec. 7.2zf: a link whose fit has no outage level builds without the table
    of the level pairs a chain can enter). After the warm-up, the study's analyses of a link without
    an outage compile nothing."""
    tr = _analytics()
    study = ("timeout-only", "timer", tr.LINK_CA_INCREMENT, tr.LINK_WINDOW_TAIL, None)
    tr.warm_up(*[(fb, 20_000_000, 20_000_000) + study for fb in ("none", "instcap")])
    before = _kernel_signatures()
    # two rates, 1 and 1/3 packets per ms, for 4 s each: no epoch of 0.1 s serves nothing
    times, t = [], 0
    for k in range(10):
        for step in (1, 3):
            times += list(range(t + step, t + 4000 + 1, step))
            t += 4000
    link = fit_link(Trace(times), 0.1, patterns=2)
    assert float(np.min(link.model.levels)) > 0
    for fb in ("none", "instcap"):
        got = tr.analysis_result(link, 3, fb, None, 20_000_000, 20_000_000, *study)
        assert "prediction" in got, got
    assert _kernel_signatures() == before
