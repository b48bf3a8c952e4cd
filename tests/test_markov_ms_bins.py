"""Coincident opportunities are served through their millisecond (issue 23, docs/model.md sec. 11):
``capacity.service_instants`` by hand and by its invariants, and the analysis of a link that serves
in bursts of several opportunities per millisecond against the simulator's replay of it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcpabr_model.capacity import read_trace, service_instants
from tcpabr_model.sim import Scenario, TcpConfig, simulate
from tcpabr_model.trace_study import PAYLOAD_BYTES, analyze_link, fit_link


def test_service_instants_by_hand():
    ms = np.array([8, 8, 8, 8, 18, 18, 19]) / 1000.0
    assert np.allclose(service_instants(ms) * 1000.0, [7.25, 7.5, 7.75, 8.0, 17.5, 18.0, 19.0], rtol=0, atol=1e-12)
    # lone opportunities keep their times, bit for bit
    lone = np.array([0.001, 0.004, 0.0195])
    assert np.array_equal(service_instants(lone), lone)
    assert service_instants(np.zeros(0)).size == 0
    # a previous distinct time inside the millisecond bounds the spread: 10.5 ms, then two at 10.7 ms
    got = service_instants(np.array([10.5, 10.7, 10.7]) / 1000.0) * 1000.0
    assert np.allclose(got, [10.5, 10.6, 10.7], rtol=0, atol=1e-12)
    # a time below one millisecond spreads from 0
    assert np.allclose(service_instants(np.array([0.0005, 0.0005])) * 1000.0, [0.25, 0.5], rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="sorted"):
        service_instants(np.array([0.002, 0.001]))
    with pytest.raises(ValueError, match="resolution"):
        service_instants(np.array([0.002, 0.002]), resolution=0.0)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 40), max_size=40).map(sorted))
def test_service_instants_keep_each_millisecond_bin(ms):
    t = np.asarray(ms, dtype=float) / 1000.0
    u = service_instants(t)
    assert u.shape == t.shape
    assert np.all(np.diff(u) >= 0)
    # every opportunity stays in its bin (t - 1 ms, t], the bin the simulator serves it in
    assert np.all(u <= t + 1e-15) and np.all(u > t - 1e-3 - 1e-15)
    # the last of each group keeps the measured time; groups are strictly increasing inside
    for v in set(ms):
        g = u[np.asarray(ms) == v]
        assert g[-1] == pytest.approx(v / 1000.0, abs=1e-15)
        assert np.all(np.diff(g) > 0)


def _burst_trace(tmp_path, per_burst=4, every_ms=10, phase_ms=8, seconds=60):
    p = tmp_path / "bursts.trace"
    with open(p, "w") as f:
        for k in range(0, seconds * 1000, every_ms):
            f.write(f"{k + phase_ms}\n" * per_burst)
    return read_trace(p)


@pytest.mark.parametrize("bmax", [4, 8])
def test_bursts_of_one_millisecond_match_the_simulator(tmp_path, bmax):
    """Four opportunities at one millisecond every 10 ms, RTT 20 ms, TCP alone.  Read as four
    services at one instant, every ACK-clocked burst of arrivals missed them and waited 10 ms:
    the prediction was 0.320 at B_max 4 against the simulator's 0.712 (docs/model.md sec. 11)."""
    trace = _burst_trace(tmp_path)
    link = fit_link(trace, 0.02)
    a = analyze_link(link, bmax, "none")
    sc = Scenario(feedback="none", rtt=0.02, buffer_packets=bmax, payload_bytes=PAYLOAD_BYTES, capacity=trace,
                  duration=20.0, warmup=2.0, tcp=TcpConfig(wmax=a.wmax, variant="timeout-only"))
    s = simulate(sc, replications=1, seed=1, ci_method="batch").efficiency_wire
    assert a.prediction == pytest.approx(s.mean, rel=0.03)
    assert a.conservative <= a.prediction <= a.optimistic
