"""The study on measured links (``tcpabr_model.trace_study``, ``analytics/traces.py``) on the
shipped traces: a constant trace, whose fitted chain is the trace, and a 3-level trace with an
outage."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest

from tcpabr_model.capacity import read_trace
from tcpabr_model.trace_study import StudyPoint, fit_for_rtt, study_point, window_packets

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).resolve().parent.parent


def test_window_rule():
    # 2 x (peak rate x rtt + bmax), at least 16 packets
    assert window_packets(1000.0, 0.05, 10) == 120
    assert window_packets(10.0, 0.01, 1) == 16


def test_fit_is_at_the_round_trip():
    fit = fit_for_rtt(read_trace(DATA / "markov3_outage.down"), 0.1)
    assert fit.epoch == 0.1 and fit.states >= 2
    with pytest.raises(ValueError, match="rtt"):
        fit_for_rtt(read_trace(DATA / "markov3_outage.down"), 0.0)


def test_constant_trace_fitted_chain_equals_the_trace():
    # one level: the fitted chain is the constant link the trace is, so both simulations see
    # the same capacity (only the trace's 1-ms granularity differs: none at one packet per ms)
    trace = read_trace(DATA / "constant_1000pps.down")
    fit = fit_for_rtt(trace, 0.05)
    assert fit.states == 1 and fit.model.levels[0] == pytest.approx(1000.0)
    p = study_point(trace, fit, 0.05, 25, "none", replications=1, duration=10.0, seed=3)
    assert isinstance(p, StudyPoint)
    assert p.fitted == pytest.approx(p.trace, rel=0.02)
    assert 0.5 < p.trace <= 1.0
    assert abs(p.fitted_rel_error) < 0.02


def test_effcap_has_no_analysis_and_the_row_is_complete():
    trace = read_trace(DATA / "markov3_outage.down")
    fit = fit_for_rtt(trace, 0.1)
    p = study_point(trace, fit, 0.1, 20, "effcap", replications=2, duration=10.0, seed=1)
    assert p.analysis_conservative is None and "EFFCAP" in p.analysis_note
    d = p.to_dict()
    assert set(d) >= {"fitted", "trace", "fitted_rel_error", "analysis_note", "states", "wmax"}
    assert 0.0 <= p.fitted <= 1.0 and 0.0 <= p.trace <= 1.0
    assert math.isfinite(p.fitted_half_width) and math.isfinite(p.trace_half_width)


def test_study_point_refuses_bad_input():
    trace = read_trace(DATA / "markov3_outage.down")
    fit = fit_for_rtt(trace, 0.1)
    with pytest.raises(ValueError, match="feedback='ubr' is invalid"):
        study_point(trace, fit, 0.1, 20, "ubr")
    with pytest.raises(ValueError, match="bmax"):
        study_point(trace, fit, 0.1, 0, "none")


def test_analytics_script_quick(tmp_path):
    out = subprocess.run([sys.executable, str(ROOT / "analytics" / "traces.py"), "--quick", "--workers", "1",
                          "--out", str(tmp_path)], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-3000:]
    assert (tmp_path / "traces_study.csv").is_file() and (tmp_path / "traces_study.md").is_file()
    assert "fitted chain within 5 % of the trace replay" in out.stdout


@pytest.mark.parametrize("feedback", ["none", "instcap"])
def test_constant_trace_analysis_is_the_constant_link(feedback):
    # a trace of constant opportunities fits one level; the K-state engine on it gives the
    # constant-capacity results of the two-state engine with rate_ratio = 1 (issue 15 item 7)
    from tcpabr_model.markov import Scenario as MScenario, analyze
    from tcpabr_model.trace_study import analysis_band

    fit = fit_for_rtt(read_trace(DATA / "constant_1000pps.down"), 0.05)
    lo, hi, note = analysis_band(fit.model, 0.05, 25, 150, feedback)
    ref = analyze(MScenario(delta=50, bmax=25, wmax=150, feedback=feedback, rate_ratio=1.0, psi=20))
    assert lo == pytest.approx(ref.conservative, abs=1e-12) and hi == pytest.approx(ref.optimistic, abs=1e-12)
    assert "states" in note and "outage" not in note


def test_outage_level_is_lifted_for_the_analysis_only():
    from tcpabr_model.trace_study import analysis_band

    fit = fit_for_rtt(read_trace(DATA / "markov3_outage.down"), 0.1)
    assert fit.model.levels.min() == 0.0
    lo, hi, note = analysis_band(fit.model, 0.1, 20, 200, "none")
    assert 0.0 < lo <= hi <= 1.0 + 1e-12
    assert "lifted to 10 packets/s" in note          # one packet per 0.1 s round trip
