"""Sweep progress weighted by expected costs; the ETA ignores each worker's warm-up point."""

import pytest

import tcpabr_model.sweep._progress as prog
from tcpabr_model.sweep._progress import Progress, expected_cost


def test_expected_cost_simulation_is_replications_times_simulated_time():
    assert expected_cost("simulation", {"replications": 6, "duration": 500, "warmup": 20}, {}) == 6 * 520
    assert expected_cost("simulation", {"duration": 500}, {"replications": 2}) == 2 * 520
    assert expected_cost("simulation", {}, {}) == 10 * 2020                    # the simulator's defaults
    assert expected_cost("simulation", {"replications": 1, "duration_units": 1000, "warmup_units": 0}, {}) == \
        pytest.approx(5.0)                                                    # 5 ms per time unit
    assert expected_cost("analysis", {"psi": 2}, {}) == 1.0


def test_eta_settles_after_warm_up(monkeypatch):
    now = [0.0]
    monkeypatch.setattr(prog.time, "monotonic", lambda: now[0])
    p = Progress({0: 10.0, 1: 10.0, 2: 10.0, 3: 10.0, 4: 60.0}, "t", disable=True, workers=2)
    assert p.eta() is None
    now[0] = 100.0          # both workers' first points take the compile time
    p.update(0)
    assert p.eta() is None
    now[0] = 101.0
    p.update(1)             # warm-up over: the clock of the rate starts here
    assert p.eta() is None
    now[0] = 111.0
    p.update(2)             # 10 cost units in 10 s -> 1 unit/s; 70 to go
    assert p.eta() == pytest.approx(70.0)
    now[0] = 116.0
    p.update(3)             # 20 units in 15 s
    assert p.eta() == pytest.approx(60 / (20 / 15))
    assert p.done == 4 and p.done_cost == 40.0
    p.close()


def test_single_worker_warm_up_is_its_first_point(monkeypatch):
    now = [0.0]
    monkeypatch.setattr(prog.time, "monotonic", lambda: now[0])
    p = Progress({7: 1.0, 9: 3.0}, "t", disable=True, workers=1)
    now[0] = 50.0
    p.update(9)
    assert p.eta() is None and p.done_cost == 3.0
    p.close()
