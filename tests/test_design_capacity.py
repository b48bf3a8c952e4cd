"""The designer's analysis on a K-level capacity model (``tcpabr design --capacity``; issue 26:
"evaluate with the analysis where its validity map says it holds, and say which").

The analysis beside TCP alone and INSTCAP is :func:`tcpabr_model.markov.analyze` of the
scenario the designer maps the model to (docs/model.md sec. 10: the round trip in packet times
at the peak level, ``delta = rtt / time_unit x c_max``); a model the engine cannot take is
reported with a one-line reason, never a traceback or a NaN.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import tcpabr_model.cli as cli
from tcpabr_model.capacity import CapacityModel, save_model
from tcpabr_model.design import Candidate, design
from tcpabr_model.design import analysis as dan
from tcpabr_model.design.analysis import analysis_beside
from tcpabr_model.markov import Scenario as MScenario, analyze
from tcpabr_model.sim import Scenario, TcpConfig

P3 = np.array([[0.9, 0.08, 0.02], [0.05, 0.9, 0.05], [0.02, 0.08, 0.9]])
RTT, BMAX, WMAX = 0.05, 10, 64


def _model(levels=(200.0, 400.0, 600.0), epoch=RTT) -> CapacityModel:
    """Levels in packets/s of 1500 B, a step per round trip: a fitted trace's kind of model."""
    return CapacityModel(list(levels), transition=P3, epoch=epoch, time_unit=1.0, packet_bytes=1500)


def _base(model, rtt=RTT) -> Scenario:
    return Scenario(feedback="instcap", rtt=rtt, buffer_packets=BMAX, payload_bytes=1460, capacity=model,
                    duration=20.0, warmup=2.0, tcp=TcpConfig(wmax=WMAX))


@pytest.mark.parametrize("feedback", ["none", "instcap"])
def test_analysis_on_a_model_is_markov_analyze_of_the_same_scenario(feedback):
    m = _model()
    a = analysis_beside(_base(m), Candidate(feedback))
    r = analyze(MScenario(delta=RTT * 600.0, bmax=BMAX, wmax=WMAX, feedback=feedback, capacity=m))
    assert a["throughput"] == r.prediction
    assert a["band"] == [r.conservative, r.optimistic]
    # engine time unit: one packet time at the peak level, 1/600 s
    assert a["mean_queueing_delay_s"] == pytest.approx(r.mean_queueing_delay / 600.0, rel=1e-12)
    assert a["mean_delay_s"] == pytest.approx((r.mean_queueing_delay + r.mean_source_delay) / 600.0, rel=1e-12)
    # each level lasts 1 / (1 - 0.9) = 10 round trips: above the two-state map's psi > 5
    if feedback == "none":
        assert a["holds"] and "10 round trips > 5" in a["validity"] and "3-level model" in a["validity"]
    else:   # the simulated INSTCAP (s 30 ms, fed back one RTT of 50 ms later) is 1.6 round trips old
        assert not a["holds"] and "10 round trips > 5" in a["validity"] and "1.6 round trips old" in a["validity"]
        alone = analysis_beside(_base(m), Candidate(feedback), simulated=False)
        assert alone["holds"] and alone["throughput"] == r.prediction and "round trips old" not in alone["validity"]


def test_model_in_the_papers_unit_and_a_continuous_model():
    # largest level 1, no time_unit: one time unit is the scenario's packet time, delta in it
    mu = CapacityModel([0.25, 0.5, 1.0], transition=P3, epoch=40)
    base = Scenario.from_normalized(delta=40, bmax=BMAX, feedback="instcap", capacity=mu, duration_units=1000,
                                    tcp=TcpConfig(wmax=WMAX))
    a = analysis_beside(base, Candidate("none"))
    r = analyze(MScenario(delta=40, bmax=BMAX, wmax=WMAX, feedback="none", capacity=mu))
    assert a["throughput"] == r.prediction
    assert a["mean_delay_s"] == pytest.approx(r.mean_queueing_delay * base.time_unit, rel=1e-12)
    # a generator is sampled every round trip; fast switching (sojourn 0.5-1 round trips) does not hold
    g = np.array([[-40.0, 20.0, 20.0], [20.0, -40.0, 20.0], [10.0, 10.0, -20.0]])
    mc = CapacityModel([200.0, 400.0, 600.0], generator=g, time_unit=1.0, packet_bytes=1500)
    a = analysis_beside(_base(mc), Candidate("instcap"))
    r = analyze(MScenario(delta=RTT * 600.0, bmax=BMAX, wmax=WMAX, feedback="instcap", capacity=mc))
    assert a["throughput"] == r.prediction and not a["holds"] and "<= 5" in a["validity"]


@pytest.mark.parametrize("model, rtt, reason", [
    (_model((0.0, 400.0, 600.0)), RTT, "outage level (levels[0] = 0)"),
    (_model((10.0, 400.0, 600.0)), RTT, "lowest level carries 0.5 packets per round trip"),
    (_model(epoch=0.1), RTT, "epoch (0.1 s) is not the round trip (0.05 s) over an integer"),
])
def test_a_model_the_engine_cannot_take_is_refused_with_the_reason(model, rtt, reason):
    base = _base(model, rtt)
    for fb in ("none", "instcap"):
        a = analysis_beside(base, Candidate(fb))
        assert set(a) == {"error", "seconds"} and reason in a["error"] and "\n" not in a["error"]


def test_a_chain_beyond_the_budget_is_refused(monkeypatch):
    monkeypatch.setattr(dan, "MAX_STATES", 50)
    a = analysis_beside(_base(_model()), Candidate("instcap"))
    assert "beyond the designer's budget (more than 50 states" in a["error"]


def test_design_on_a_model_reports_the_analysis_or_the_reason():
    cands = (Candidate("none"), Candidate("instcap"), Candidate("effcap", m=2, n=1))
    d = design(_base(_model()), cands, replications=2, seed=1)
    assert [p.evaluated_by for p in d.points] == ["simulator; analysis beside (throughput, mean delay)"] * 2 + [
        "simulator"]
    assert d.points[0].analysis["throughput"] == analysis_beside(_base(_model()), cands[0])["throughput"]
    out = design(_base(_model((0.0, 400.0, 600.0))), cands[:2], replications=2, seed=1)
    assert all(p.evaluated_by == "simulator" and "outage level" in p.analysis["error"] for p in out.points)
    assert all(np.isfinite(p.throughput.mean) for p in out.points)
    assert sum("not computed (the capacity model has an outage level" in x for x in out.lines()) == 2


@pytest.fixture
def main(monkeypatch):
    monkeypatch.setattr(cli, "_COMMAND_MODULES", ("tcpabr_model.design.cli",))
    return cli.main


def test_cli_capacity_analysis_only_and_outage(main, capsys, tmp_path):
    good, bad = tmp_path / "k3.json", tmp_path / "k3_outage.json"
    save_model(_model(), str(good))
    save_model(_model((0.0, 400.0, 600.0)), str(bad))
    assert main(["design", "--capacity", str(good), "--rtt", str(RTT), "--bmax", str(BMAX), "--wmax", str(WMAX),
                 "--analysis-only", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    r = analyze(MScenario(delta=RTT * 600.0, bmax=BMAX, wmax=WMAX, feedback="instcap", capacity=_model()))
    assert [x["candidate"] for x in d["points"]] == ["TCP alone", "INSTCAP"]
    assert d["points"][1]["throughput"] == r.prediction and d["points"][1]["holds"]
    assert main(["design", "--capacity", str(bad), "--rtt", str(RTT), "--bmax", str(BMAX), "--analysis-only"]) == 0
    cap = capsys.readouterr()
    lines = [x for x in cap.out.splitlines() if "not computed: the capacity model has an outage level" in x]
    assert len(lines) == 2 and "Traceback" not in cap.err and "nan" not in cap.out.lower()
