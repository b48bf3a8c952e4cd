"""analytics/transmission_time.py: the engine against its modelled link with the round trip less the
transmission, and the chain fitted at epoch rtt (1 + tx) (docs/traces.md sec. 7.2y)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from _scripts import ROOT, load_script

from tcpabr_model.capacity import read_trace
from tcpabr_model.trace_study import analyze_link, fit_link, trace_halves

DATA = ROOT / "tests" / "data"


def _tt():
    return load_script("analytics/transmission_time.py", "transmission_time")


def test_one_point(tmp_path):
    tt = _tt()
    name, rtt, bmax, wmax = "markov3_outage.down", 0.05, 6, 32
    half = trace_halves(read_trace(DATA / name))[0]
    base = analyze_link(fit_link(half, rtt, patterns=2), bmax, "none", wmax=wmax)
    study = pd.DataFrame([{"trace_file": name, "rtt": rtt, "rtt_ms": 50, "fit_half": "A", "patterns": 2,
                           "buffer_bdp": 0.5, "bmax": bmax, "wmax": wmax, "feedback": "none",
                           "prediction": base.prediction, "analysis_states": base.n_states,
                           "replay_fitted_half": 0.5, "replay": 0.5}])
    df = tt.run(study, DATA, state_limit=10**6, replications=1, duration=30.0, workers=1, log=lambda *a, **k: None)
    r = df.iloc[0]
    assert 0.0 < r.tx < 1.0
    assert np.isfinite(r.model_link) and np.isfinite(r.model_link_rtt_less_tx)
    longer = analyze_link(fit_link(half, rtt, patterns=2, round_trip="transmission"), bmax, "none", wmax=wmax)
    assert r.prediction_epoch_tx == pytest.approx(longer.prediction, rel=1e-12)
    text = tt.summary(df)
    assert "engine: RTT less tx" in text and "| none | 50 | 1 |" in text


def test_missing_study_exits_2(tmp_path, capsys):
    assert _tt().main(["--study", str(tmp_path / "nope.csv")]) == 2
    assert "no such file" in capsys.readouterr().err
