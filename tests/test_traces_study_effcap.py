"""The trace study's EFFCAP column sampled once per round trip (``analytics/traces.py
--effcap-analysis M:N``, docs/traces.md sec. 7.2v): analysed on INSTCAP's chain and patterns with
the history chain of docs/model.md sec. 20, simulated with the same estimator, scored apart."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tcpabr_model import trace_study
from tcpabr_model.capacity import read_trace

from _scripts import load_script

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).resolve().parent.parent
SMALL = dict(replications=1, duration=5.0, seed=1, workers=1, fitted_sim=False, in_sample=False,
             log=lambda *a, **k: None)


def _analytics():
    return load_script("analytics/traces.py", "analytics_traces")


@pytest.fixture
def recorded(monkeypatch):
    """``(module, jobs, simulations)``: holdout's analyses and simulations recorded, not run."""
    tr = _analytics()
    jobs, sims = [], []

    def fake_jobs(todo, concurrency, timeout, log=print):
        jobs.extend(todo)
        return {}

    def fake_sim(capacity, rtt, bmax, wmax, feedback, replications, duration, seed, workers, variant="timeout-only",
                 instcap_timing="round-trip", effcap=None):
        sims.append((feedback, effcap))
        return 0.5, 0.01

    monkeypatch.setattr(tr, "run_analyses", fake_jobs)
    monkeypatch.setattr(trace_study, "_simulate", fake_sim)
    return tr, jobs, sims


def test_effcap_column_is_analysed_on_instcaps_chain_with_its_own_limit(recorded):
    tr, jobs, sims = recorded
    df = tr.holdout([str(DATA / "markov3_outage.down")], [0.1], [0.5], effcap_analysis=(2, 1),
                    state_limit_effcap=12_345, **SMALL)
    by = {args[2]: args for _, args in jobs}
    assert set(by) == {"none", "instcap", tr.EFFCAP_RTT}
    e, i = by[tr.EFFCAP_RTT], by["instcap"]
    assert e[10] == (2, 1) and i[10] is None and by["none"][10] is None    # only the new row gets M, N
    assert e[0].service is i[0].service and e[0].fit is i[0].fit            # the same chain and patterns
    assert min(e[4], e[5]) == 12_345
    rows = df[df.feedback == tr.EFFCAP_RTT]
    assert len(rows) == 2 and (rows.effcap_m == 2).all() and (rows.effcap_n == 1).all()
    assert (rows.patterns == tr.PATTERNS["instcap"]).all()
    # simulated as the simulator's EFFCAP with the round-trip estimator; the other rows without M, N
    assert sims.count(("effcap", (2, 1))) == 2 and sims.count(("effcap", None)) == 2
    assert sims.count(("instcap", None)) == 2 and sims.count(("none", None)) == 2


def test_without_the_option_the_study_has_its_three_rows(recorded):
    tr, jobs, sims = recorded
    df = tr.holdout([str(DATA / "markov3_outage.down")], [0.1], [0.5], **SMALL)
    assert set(df.feedback) == {"none", "instcap", "effcap"}
    assert {args[2] for _, args in jobs} == {"none", "instcap"}
    assert all(e is None for _, e in sims)


def test_the_simulation_uses_the_estimator_the_analysis_models():
    tr = read_trace(DATA / "markov3_outage.down")
    r = trace_study._simulation(tr, 0.1, 4, 40, "effcap", 1, 2.0, 1, 1, effcap=(2, 1))
    sc = r.scenario
    assert sc.interval == pytest.approx(0.1) and tuple(sc.feedback_delay) == (0.0,)
    assert tuple(sc.m) == (2,) and tuple(sc.n) == (1,)
    # INSTCAP ignores it (its own round-trip timing)
    r = trace_study._simulation(tr, 0.1, 4, 40, "instcap", 1, 2.0, 1, 1, effcap=(2, 1))
    assert r.scenario.interval == pytest.approx(0.1) and r.scenario.feedback == "instcap"


def test_reused_effcap_rows_need_the_same_m_and_n():
    tr = _analytics()
    old = pd.DataFrame([{"trace_file": "t.down", "rtt_ms": 50, "fit_half": "A", "bmax": 5, "wmax": 40,
                         "feedback": tr.EFFCAP_RTT, "duration": 70.0, "effcap_m": 2, "effcap_n": 1, "replay": 0.4}])
    p = {"trace_file": "t.down", "rtt_ms": 50, "fit_half": "A", "bmax": 5, "wmax": 40, "feedback": tr.EFFCAP_RTT,
         "effcap_m": 2, "effcap_n": 1}
    assert tr._reused(old, p, "timeout-only", 70.0).replay == 0.4
    assert tr._reused(old, {**p, "effcap_n": 2}, "timeout-only", 70.0) is None
    assert tr._reused(old.drop(columns=["effcap_m", "effcap_n"]), p, "timeout-only", 70.0) is None


def _scored(rows):
    df = pd.DataFrame(rows)
    df["prediction_rel_error"] = (df.prediction - df.replay) / df.replay
    df["in_sample_rel_error"] = (df.prediction - df.replay_fitted_half) / df.replay_fitted_half
    df["fitted"] = df["fitted_half_width"] = df["fitted_rel_error"] = np.nan
    df["conservative_holds"] = np.where(df.conservative.notna(), df.conservative <= df.replay + df.replay_half_width,
                                        np.nan)
    df["optimistic_holds"] = np.where(df.optimistic.notna(), df.optimistic >= df.replay - df.replay_half_width, np.nan)
    return df


def test_effcap_targets_score_the_rows_and_the_sign_against_instcap():
    tr = _analytics()
    base = {"trace_file": "t", "rtt_ms": 50, "fit_half": "A", "replay_half": "B", "bmax": 5, "states": 2,
            "analysis_states": 10, "analysis_seconds": 1.0, "analysis_peak_gb": 0.1, "refused": "",
            "replay_half_width": 0.01, "replay_fitted_half_hw": 0.01, "effcap_m": np.nan, "effcap_n": np.nan}
    eff = {**base, "feedback": tr.EFFCAP_RTT, "effcap_m": 2, "effcap_n": 1}
    rows = [  # buffer 0.5: INSTCAP 0.60, EFFCAP 0.50 in the replays (separated); predictions 0.55 and 0.52: right
        {**base, "buffer_bdp": 0.5, "feedback": "instcap", "prediction": 0.55, "conservative": 0.5, "optimistic": 0.56,
         "replay": 0.60, "replay_fitted_half": 0.58},
        {**eff, "buffer_bdp": 0.5, "prediction": 0.52, "conservative": 0.45, "optimistic": 0.53, "replay": 0.50,
         "replay_fitted_half": 0.51},
        # buffer 2: replays 0.80 and 0.85 (separated, EFFCAP higher); the predictions say INSTCAP: wrong
        {**base, "buffer_bdp": 2.0, "feedback": "instcap", "prediction": 0.82, "conservative": 0.8, "optimistic": 0.83,
         "replay": 0.80, "replay_fitted_half": 0.80},
        {**eff, "buffer_bdp": 2.0, "prediction": 0.81, "conservative": 0.79, "optimistic": 0.82, "replay": 0.85,
         "replay_fitted_half": 0.84},
        # a refused EFFCAP point
        {**eff, "buffer_bdp": 4.0, "prediction": np.nan, "conservative": np.nan, "optimistic": np.nan,
         "replay": 0.9, "replay_fitted_half": 0.9, "refused": "more than 5 states"},
    ]
    text = "\n".join(tr.effcap_targets(_scored(rows)))
    assert "EFFCAP(2, 1) sampled once per round trip" in text and "3 points, analysed 2, refused 1" in text
    assert "prediction within 10 % at 2 of 2 (100 %)" in text            # +4 % and -4.7 %
    assert "(2 of 2 pairs; EFFCAP higher at 1): the prediction has it right at 1 of 2 (50 %)" in text
    assert "refused: t 50 ms A->B 4 BDP (5): more than 5 states" in text
    md = tr.holdout_markdown(_scored(rows))
    assert "| EFFCAP(2, 1) per RTT |" in md and "refused: more than 5 states" in md


@pytest.mark.parametrize("bad", ["2", "0:1", "a:b", "2:1:3"])
def test_a_bad_pair_is_one_line_and_exit_2(bad):
    out = subprocess.run([sys.executable, str(ROOT / "analytics" / "traces.py"), "--effcap-analysis", bad],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.strip().splitlines() == [f"error: --effcap-analysis={bad!r} is invalid: must be M:N with "
                                               "integers M, N >= 1 (round trips, e.g. 2:1)"]
