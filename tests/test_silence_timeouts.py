"""analytics/silence_timeouts.py: the study's points solved with both timeout rules for want of ACKs
(docs/model.md sec. 11b, docs/traces.md sec. 7.2z)."""

from __future__ import annotations

import pandas as pd
import pytest

from _scripts import ROOT, load_script

from tcpabr_model.capacity import read_trace
from tcpabr_model.trace_study import analyze_link, fit_link, trace_halves

DATA = ROOT / "tests" / "data"
SCRIPT = "analytics/silence_timeouts.py"


def test_one_point_both_rules(tmp_path):
    st = load_script(SCRIPT, "silence_timeouts")
    name, rtt, bmax, wmax = "markov3_outage.down", 0.1, 6, 40
    link = fit_link(trace_halves(read_trace(DATA / name))[0], rtt, patterns=4)
    ep = analyze_link(link, bmax, "instcap", wmax=wmax)
    pat = analyze_link(link, bmax, "instcap", wmax=wmax, silence="patterns")
    study = pd.DataFrame([{"trace_file": name, "rtt": rtt, "rtt_ms": 100, "fit_half": "A", "patterns": 4,
                           "buffer_bdp": 0.5, "bmax": bmax, "wmax": wmax, "feedback": "instcap", "loss_cycle": "timer",
                           "prediction": ep.prediction, "analysis_states": ep.n_states,
                           "replay_fitted_half": 0.5, "replay": 0.4},
                          {"trace_file": name, "rtt": rtt, "rtt_ms": 100, "fit_half": "A", "patterns": 4,
                           "buffer_bdp": 0.5, "bmax": bmax, "wmax": wmax, "feedback": "instcap", "loss_cycle": "timer",
                           "prediction": ep.prediction, "analysis_states": 10**9,      # above the limit: left out
                           "replay_fitted_half": 0.5, "replay": 0.4}])
    df = st.run(study, DATA, state_limit=10**6, log=lambda *a, **k: None)
    assert len(df) == 1
    r = df.iloc[0]
    assert r.prediction == pytest.approx(ep.prediction, rel=1e-12)
    assert r.prediction_silence == pytest.approx(pat.prediction, rel=1e-12)
    assert r.change == pytest.approx(pat.prediction / ep.prediction - 1.0, rel=1e-9)
    text = st.summary(df)
    assert "| instcap | 100 | 1 |" in text and "out of sample" in text


def test_missing_study_exits_2(tmp_path, capsys):
    assert load_script(SCRIPT, "silence_timeouts").main(["--study", str(tmp_path / "nope.csv")]) == 2
    assert "no such file" in capsys.readouterr().err
