"""The feedback designer (issue 26 item 3, first part): candidates, the Pareto front, the
simulator's evaluation and ``tcpabr design``."""

from __future__ import annotations

import json

import numpy as np
import pytest

import tcpabr_model.cli as cli
from tcpabr_model.design import Candidate, candidate_grid, design, pareto_front
from tcpabr_model.sim import Scenario, simulate


def test_pareto_front_by_hand():
    th = [0.5, 0.6, 0.55, 0.6, np.nan, 0.4]
    p95 = [10.0, 20.0, 30.0, 15.0, 1.0, 10.0]
    # (0.6, 20) is dominated by (0.6, 15); (0.55, 30) by both; (0.4, 10) by (0.5, 10); NaN never
    np.testing.assert_array_equal(pareto_front(th, p95), [True, False, False, True, False, False])
    with pytest.raises(ValueError, match="throughput and delay are invalid"):
        pareto_front([1.0, 2.0], [1.0])


@pytest.mark.parametrize("kw, msg", [
    ({"feedback": "instcap", "m": 3}, "M and N are EFFCAP's"),
    ({"feedback": "effcap", "m": 0}, "m=0 is invalid"),
    ({"feedback": "instcap", "utilisation": 0.0}, "utilisation=0.0 is invalid"),
    ({"feedback": "effcap", "mcr": 1.5}, "mcr=1.5 is invalid"),
    ({"feedback": "none", "mcr": 0.1}, "takes no mcr"),
    ({"feedback": "erica"}, "feedback='erica' is invalid"),
])
def test_candidate_refuses_bad_values(kw, msg):
    with pytest.raises(ValueError, match=msg):
        Candidate(**kw)


def test_grid_and_scenarios():
    g = candidate_grid(m=(1, 2), n=(8,), utilisation=(0.9, 1.0))
    labels = [c.label for c in g]
    assert labels == ["TCP alone", "INSTCAP", "EFFCAP paper rule", "EFFCAP M=1 N=8", "EFFCAP M=2 N=8",
                      "INSTCAP u=0.9"]
    base = Scenario(rtt=(0.1, 0.2), duration=10.0)
    sc = Candidate("instcap", utilisation=0.9).scenario(base)
    assert sc.feedback == "instcap" and sc.share == (0.45, 0.45)
    e = Candidate("effcap", m=3, n=12, interval=0.05, mcr=0.1).scenario(base)
    assert e.m == (3, 3) and e.n == (12, 12) and e.interval == 0.05 and e.mcr == (0.1, 0.1)
    rule = Candidate("effcap").scenario(base)
    ref = Scenario(rtt=(0.1, 0.2), duration=10.0, feedback="effcap")
    assert rule.m == ref.m and rule.n == ref.n
    assert Candidate("none").scenario(e).feedback == "none"


def test_design_evaluates_with_the_simulator():
    base = Scenario.from_normalized(delta=40, bmax=10, psi=1, duration_units=2000)
    cands = (Candidate("none"), Candidate("instcap"), Candidate("effcap", m=1, n=4))
    d = design(base, cands, replications=2, seed=3)
    assert d.evaluated_with == "simulator" and len(d.points) == 3
    # the numbers are simulate's, same seed for every candidate
    r = simulate(cands[2].scenario(base), replications=2, seed=3)
    assert d.points[2].p95_delay == r.delay.total.p95
    assert d.points[2].throughput == r.efficiency_wire
    th = [p.throughput.mean for p in d.points]
    p95 = [p.p95_delay.mean for p in d.points]
    np.testing.assert_array_equal([p.on_front for p in d.points], pareto_front(th, p95))
    assert d.best.throughput.mean == max(th)
    assert all(p.on_front for p in d.front)
    # a limit below every p95 leaves no feasible design
    tight = design(base, cands[:2], replications=2, seed=3, max_p95_delay=1e-9)
    assert tight.best is None and not any(p.feasible for p in tight.points)
    with pytest.raises(ValueError, match="max_p95_delay=0 is invalid"):
        design(base, cands, max_p95_delay=0)


@pytest.fixture
def main(monkeypatch):
    monkeypatch.setattr(cli, "_COMMAND_MODULES", ("tcpabr_model.design.cli",))
    return cli.main


def test_cli_json(main, capsys):
    rc = main(["design", "--delta", "40", "--bmax", "10", "--psi", "1", "--duration", "100", "--m", "2",
               "--n", "8", "--utilisation", "0.9", "--replications", "2", "--json"])
    assert rc == 0
    d = json.loads(capsys.readouterr().out)
    assert [p["candidate"]["label"] for p in d["points"]] == ["TCP alone", "INSTCAP", "EFFCAP paper rule",
                                                              "EFFCAP M=2 N=8", "INSTCAP u=0.9"]
    assert d["evaluated_with"] == "simulator" and d["best"] is not None and d["front"]
    assert all(p["p95_delay_s"]["n"] == 2 for p in d["points"])


@pytest.mark.parametrize("argv, msg", [
    (["--preset", "x"], "--preset is not used by tcpabr design"),
    (["--feedback", "effcap"], "--feedback is not used by tcpabr design"),
    (["--utilisation", "0"], "utilisation=0.0 is invalid"),
])
def test_cli_refusals_exit_2(main, capsys, argv, msg):
    assert main(["design", "--duration", "5", *argv]) == 2
    err = capsys.readouterr().err
    assert msg in err and len(err.strip().splitlines()) == 1
