"""analytics/engine_gap.py on the shipped 3-level trace: one point, the modelled link drawn ten
times as long as the fitted half (PATH_FACTOR), the study's INSTCAP timing by default."""

from __future__ import annotations

import numpy as np
import pandas as pd

from _scripts import ROOT, load_script


def _engine_gap():
    return load_script("analytics/engine_gap.py", "engine_gap")


def test_one_point_against_a_long_path_of_the_modelled_link():
    eg = _engine_gap()
    assert eg.PATH_FACTOR == 10
    study = pd.DataFrame([{"trace_file": "markov3_outage.down", "fit_half": "A", "rtt": 0.2, "rtt_ms": 200,
                           "buffer_bdp": 0.5, "bmax": 6, "wmax": 40, "feedback": "instcap", "tcp": "timeout-only",
                           "loss_cycle": "timer", "prediction": 0.5, "conservative": 0.45, "optimistic": 0.55,
                           "replay_fitted_half": 0.5, "analysis_states": 100}])
    seen = []
    df = eg.run(study, ROOT / "tests" / "data", 1, 5.0, 1, 1, log=lambda *a, **k: seen.append(a))
    assert len(df) == 1 and len(seen) == 1
    row = df.iloc[0]
    # the drawn path is long: its mean capacity is close to the chain's
    assert abs(row.model_link_mean_pps / row.fit_mean_pps - 1.0) < 0.05
    assert 0.0 < row.model_link <= 1.2 and 0.0 < row.replay_fitted_half <= 1.0
    assert np.isclose(row.engine_error, (0.5 - row.model_link) / row.model_link)
    assert 0.0 <= row.model_duplicate_share < 1.0 and 0.0 <= row.replay_duplicate_share < 1.0
    assert 0.0 <= row.model_timeouts_without_drop_per_s <= row.model_timeouts_fresh_per_s + 1e-12
    assert "engine" in eg.summary(df)


def test_the_modelled_link_has_the_patterns_the_study_analysed(monkeypatch):
    """The path is drawn with the study row's patterns per level (it drew fit_link's 8 when the study
    analysed INSTCAP with 4, so the engine was compared with another link than the one it solved)."""
    eg = _engine_gap()
    got = []
    real = eg.fit_link
    monkeypatch.setattr(eg, "fit_link", lambda half, rtt, **kw: got.append(kw.get("patterns")) or real(half, rtt, **kw))
    study = pd.DataFrame([{"trace_file": "markov3_outage.down", "fit_half": "A", "rtt": 0.2, "rtt_ms": 200,
                           "buffer_bdp": 0.5, "bmax": 6, "wmax": 40, "feedback": "none", "tcp": "timeout-only",
                           "loss_cycle": "timer", "prediction": 0.5, "conservative": 0.45, "optimistic": 0.55,
                           "replay_fitted_half": 0.5, "analysis_states": 100, "patterns": p} for p in (2, 3)])
    df = eg.run(study, ROOT / "tests" / "data", 1, 2.0, 1, 1, log=lambda *a, **k: None)
    assert got == [2, 3] and df.patterns.tolist() == [2, 3]


def test_the_modelled_link_is_the_studys_chain_order(monkeypatch):
    """A study run with --order 2 analysed the second-order chain: the modelled link is its path."""
    eg = _engine_gap()
    got = []
    real = eg.fit_link
    monkeypatch.setattr(eg, "fit_link", lambda half, rtt, **kw: got.append(kw.get("order")) or real(half, rtt, **kw))
    base = {"trace_file": "markov3_outage.down", "fit_half": "A", "rtt": 0.2, "rtt_ms": 200, "buffer_bdp": 0.5,
            "bmax": 6, "wmax": 40, "feedback": "none", "tcp": "timeout-only", "loss_cycle": "timer",
            "prediction": 0.5, "conservative": 0.45, "optimistic": 0.55, "replay_fitted_half": 0.5,
            "analysis_states": 100, "patterns": 2}
    df = eg.run(pd.DataFrame([{**base, "order": 2}, {**base}]), ROOT / "tests" / "data", 1, 2.0, 1, 1,
                log=lambda *a, **k: None)
    assert got == [2, 1] and df.order.tolist() == [2, 1]


def test_re_analysed_points_carry_the_chains_loss_events():
    """With --delay-states the analysis is redone: its loss events per second (loss probability per step
    over the mean step) beside the modelled link's timeouts by kind."""
    eg = _engine_gap()
    study = pd.DataFrame([{"trace_file": "markov3_outage.down", "fit_half": "A", "rtt": 0.2, "rtt_ms": 200,
                           "buffer_bdp": 0.5, "bmax": 6, "wmax": 40, "feedback": "none", "tcp": "timeout-only",
                           "loss_cycle": "timer", "prediction": 0.5, "conservative": 0.45, "optimistic": 0.55,
                           "replay_fitted_half": 0.5, "analysis_states": 5000, "patterns": 2}])
    df = eg.run(study, ROOT / "tests" / "data", 1, 20.0, 1, 1, log=lambda *a, **k: None, delay_states=10**6)
    x = float(df.analysis_loss_events_per_s.iloc[0])
    # at most one loss event per round trip (0.2 s), and some
    assert 0.0 < x <= 1.0 / 0.2
    assert "loss events per second" in eg.summary(df)


def test_silences_counts_gaps_of_two_round_trips_and_the_chains_empty_epochs():
    """A gap of two round trips times the fixed RTO out wherever it falls; the chain's rule (two epochs
    without an ACK) sees it only where it covers two whole epochs (docs/traces.md sec. 7.2z)."""
    eg = _engine_gap()
    # 20-ms epochs from 0: (0, 20] (20, 40] (40, 60] (60, 80] (80, 100]; one gap of 65 ms (30 -> 95)
    assert eg.silences([0, 5, 30, 95, 100], 0.02) == (10.0, 10.0)
    # a gap of 45 ms: two empty epochs when it starts at 19, one when it starts at 21
    assert eg.silences([0, 19, 64, 80], 0.02) == (12.5, 12.5)
    assert eg.silences([0, 21, 66, 80], 0.02) == (12.5, 0.0)
    # a gap of 39 ms is not a timeout; three empty epochs in a row are one run
    assert np.allclose(eg.silences([0, 1, 40, 110, 130], 0.02), (1 / 0.13, 1 / 0.13), rtol=1e-12)
    gaps, runs = eg.silences([0], 0.02)
    assert np.isnan(gaps) and np.isnan(runs)
