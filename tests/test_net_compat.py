"""The single-bottleneck system expressed as a network reproduces tcpabr_model.sim exactly."""

import numpy as np
import pytest

from tcpabr_model.sim import from_sim_scenario, simulate_network
from tcpabr_model.sim.arrays import layout as L
from tcpabr_model.sim.driver import run_network_replication
from tcpabr_model.sim import Scenario, TcpConfig, simulate
from tcpabr_model.sim.kernels import fast_path as K
from tcpabr_model.sim.driver import run_replication

OLD = [K.S_GOOD, K.S_GOODALL, K.S_CSENT, K.S_CDROP, K.S_FDROP, K.S_FSENT, K.S_TIMEOUTS, K.S_ACKS,
       K.S_FASTRTX, K.S_RETX, K.S_SEGSENT, K.S_FDELIV]
NEW = [L.S_GOOD, L.S_GOODALL, L.S_CSENT, L.S_CDROP, L.S_FDROP, L.S_FSENT, L.S_TIMEOUTS, L.S_ACKS,
       L.S_FASTRTX, L.S_RETX, L.S_SEGSENT, L.S_FDELIV]

CASES = [
    dict(delta=40, bmax=10, psi=20, feedback="instcap"),
    dict(delta=40, bmax=10, psi=1, feedback="effcap"),
    dict(delta=40, bmax=10, psi=20, feedback="none"),
    dict(delta=[40, 80], bmax=10, psi=5, feedback="effcap", discard="epd"),
    dict(delta=[40, 80], bmax=10, psi=5, feedback="none",
         tcp=TcpConfig(variant="reno", rto="estimator", delayed_ack=True)),
    dict(delta=40, bmax=3, psi=2, feedback="instcap", tcp=TcpConfig(variant="reno", delayed_ack=True)),
    dict(delta=40, bmax=1, psi=2, feedback="constant", initial_rate=0.7, discard="epd"),
]


@pytest.mark.parametrize("kw", CASES)
def test_network_kernel_reproduces_single_bottleneck_counters(kw):
    sc = Scenario.from_normalized(duration=300.0, **kw)
    net = from_sim_scenario(sc)
    assert net.slot_seconds == pytest.approx(sc.slot_seconds, rel=1e-12)
    assert net.total_slots == sc.total_slots
    child = np.random.SeedSequence(5).spawn(1)[0]
    new, _, _ = run_network_replication(net, np.random.default_rng(child))
    old, _, _ = run_replication(sc, np.random.default_rng(child), trace=False)
    np.testing.assert_array_equal(new[0][:, NEW], old[0][:, OLD])
    np.testing.assert_array_equal(new[1][:, L.F_CWND], old[1][:, K.F_CWND])


def test_efficiency_and_loss_estimates_agree_with_sim_simulate():
    sc = Scenario.from_normalized(delta=[40, 60], bmax=8, psi=4, feedback="effcap", duration=200.0)
    a = simulate(sc, replications=3, seed=11)
    b = simulate_network(from_sim_scenario(sc), replications=3, seed=11)
    assert b.efficiency_ip.mean == pytest.approx(a.efficiency.mean, rel=1e-12)
    assert b.efficiency_ip.half_width == pytest.approx(a.efficiency.half_width, rel=1e-9)
    assert b.fairness.mean == pytest.approx(a.fairness.mean, rel=1e-12)
    assert b.cell_loss_ratio.mean == pytest.approx(a.cell_loss_ratio.mean, rel=1e-12)
    assert b.frame_loss_ratio.mean == pytest.approx(a.frame_loss_ratio.mean, rel=1e-12)
    for k in ("timeouts", "cells_sent", "cells_dropped", "delivered_segments"):
        assert b.counters[k] == a.counters[k]
