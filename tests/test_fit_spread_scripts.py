"""analytics/fit_spread.py (the jackknife over the fitted half, docs/traces.md sec. 7.2zd) and
analytics/combined_options.py (the corrections together, sec. 7.2zc) on one small point."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from _scripts import ROOT, load_script

from tcpabr_model.capacity import read_trace
from tcpabr_model.trace_study import analyze_link, fit_link, jackknife_link, trace_halves

DATA = ROOT / "tests" / "data"
NAME, RTT, BMAX, WMAX = "markov3_outage.down", 0.1, 6, 40


def _study(ep) -> pd.DataFrame:
    return pd.DataFrame([{"trace_file": NAME, "rtt": RTT, "rtt_ms": 100, "fit_half": "A", "patterns": 4,
                          "buffer_bdp": 0.5, "bmax": BMAX, "wmax": WMAX, "feedback": "none", "loss_cycle": "timer",
                          "prediction": ep.prediction, "conservative": ep.conservative, "optimistic": ep.optimistic,
                          "analysis_states": ep.n_states, "states": 3, "replay_fitted_half": ep.prediction,
                          "replay_fitted_half_hw": 0.01, "replay": 0.5 * ep.prediction, "replay_half_width": 0.01}])


def test_fit_spread_is_the_package_jackknife():
    fs = load_script("analytics/fit_spread.py", "fit_spread")
    half = trace_halves(read_trace(DATA / NAME))[0]
    ep = analyze_link(fit_link(half, RTT, patterns=4), BMAX, "none", wmax=WMAX)
    df = fs.run(_study(ep), DATA, state_limit=10**6, blocks=3, simulate=0, log=lambda *a, **k: None)
    jk = jackknife_link(half, RTT, BMAX, "none", blocks=3, wmax=WMAX, fit={"patterns": 4}, loss_cycle="timer")
    r = df.iloc[0]
    assert [r[f"prediction_less_{j}"] for j in range(3)] == list(jk.predictions)
    assert r.se == pytest.approx(jk.standard_error / ep.prediction, rel=1e-12)
    assert r.conservative_se == pytest.approx(jk.conservative_se, rel=1e-12)
    assert bool(r.in_sample_met) and not bool(r.out_of_sample_met)   # the replays above: at the prediction, and half
    text = fs.summary(df)
    assert "| k = 2 | 1 / 1 (1 both) of 1 |" in text


def test_combined_options_one_point():
    co = load_script("analytics/combined_options.py", "combined_options")
    half = trace_halves(read_trace(DATA / NAME))[0]
    link = fit_link(half, RTT, patterns=4)
    ep = analyze_link(link, BMAX, "none", wmax=WMAX)
    p = _study(ep).iloc[0].to_dict()
    row = co._one((p, DATA, ("base", "o1-gbn"), 10**6))
    gbn = analyze_link(link, BMAX, "none", wmax=WMAX, loss_cycle="timer", duplicates="go-back-n")
    assert row["prediction_base"] == ep.prediction
    assert row["prediction_o1-gbn"] == gbn.prediction and row["conservative_o1-gbn"] == gbn.conservative
    text = co.summary(pd.DataFrame([row]))
    e = (ep.prediction - p["replay"]) / p["replay"]
    assert f"{100 * abs(e):.1f} % ({100 * e:+.1f} %) [0]" in text and math.isfinite(e)


def test_bad_arguments_exit_2(tmp_path, capsys):
    fs = load_script("analytics/fit_spread.py", "fit_spread")
    assert fs.main(["--study", str(tmp_path / "nope.csv")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert fs.main(["--study", str(tmp_path / "nope.csv"), "--jackknife", "1"]) == 2
    assert "--jackknife=1 is invalid" in capsys.readouterr().err
    co = load_script("analytics/combined_options.py", "combined_options")
    assert co.main(["--study", str(tmp_path / "nope.csv"), "--configs", "base,o3"]) == 2
    assert "--configs 'o3' is invalid" in capsys.readouterr().err
