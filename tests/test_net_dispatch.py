"""``simulate_network`` runs the single-bottleneck fast path on the networks it models exactly
(``kernel='auto'``, the default) and gets the general kernel's results bit for bit; every
other network goes to the general kernel."""

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_sim_fastpath import scenarios     # the fast path's configurations (hypothesis)

from tcpabr_model.sim import Scenario, simulate_network
from tcpabr_model.sim.arrays import layout as L
from tcpabr_model.sim import driver as NR
from tcpabr_model.sim.kernel_inputs import fast_path_inputs
from tcpabr_model.sim.network import DropPolicy, Port, VbrSource

ST_COUNTERS = [L.S_GOOD, L.S_GOODALL, L.S_CSENT, L.S_CDROP, L.S_FDROP, L.S_FSENT, L.S_TIMEOUTS, L.S_ACKS,
               L.S_FASTRTX, L.S_RETX, L.S_SEGSENT, L.S_FDELIV, L.S_STARTED]
V_COUNTERS = [L.V_CSENT, L.V_CDROP, L.V_CDELIV, L.V_FCORR, L.V_VBRSENT, L.V_VBRDELIV]
PF_COUNTERS = [L.PFS_CAPTOT, L.PFS_CAPWIN, L.PFS_QINT]


def _assert_same(a, b):
    np.testing.assert_array_equal(a[0][:, ST_COUNTERS], b[0][:, ST_COUNTERS])
    np.testing.assert_array_equal(a[2][:, V_COUNTERS], b[2][:, V_COUNTERS])
    np.testing.assert_array_equal(a[4], b[4])                           # every port counter
    np.testing.assert_array_equal(a[5][:, PF_COUNTERS], b[5][:, PF_COUNTERS])
    np.testing.assert_array_equal(a[6][[L.O_ERR, L.O_NMEAS]], b[6][[L.O_ERR, L.O_NMEAS]])
    np.testing.assert_array_equal(a[7], b[7])                           # cells left in flight


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sc=scenarios(), seed=st.integers(0, 2**32))
def test_fast_path_in_simulate_network_gives_the_general_kernels_outputs(sc, seed):
    net = sc.to_network()
    child = np.random.SeedSequence(seed).spawn(1)[0]
    gen, _, kin = NR.run_network_replication(net, np.random.default_rng(child), kernel="general")
    assert fast_path_inputs(net, kin) is not None
    auto, _, _ = NR.run_network_replication(net, np.random.default_rng(child), kernel="auto")
    _assert_same(auto, gen)


def test_simulate_network_results_are_the_same_with_either_kernel(monkeypatch):
    net = Scenario.from_normalized(delta=[20, 40], bmax=6, psi=1.0, feedback="effcap", duration=20.0,
                                   warmup=2.0, discard="epd").to_network()
    gen = simulate_network(net, replications=2, seed=5, kernel="general")

    def refuse(*args):
        raise AssertionError("the general kernel ran on a network the fast path models")

    monkeypatch.setattr(NR, "simulate_network_kernel", refuse)
    auto = simulate_network(net, replications=2, seed=5)
    assert auto.counters == gen.counters
    assert auto.cells_simulated == gen.cells_simulated
    assert auto.queue_max == gen.queue_max
    assert auto.samples.keys() == gen.samples.keys()
    for k in gen.samples:
        np.testing.assert_array_equal(auto.samples[k], gen.samples[k])


def _base():
    return Scenario.from_normalized(delta=20, bmax=6, psi=1.0, feedback="instcap", duration=2.0).to_network()


@pytest.mark.parametrize("change", [
    lambda n: replace(n, vbr=(VbrSource(route=(0,), rate=0.1, on=0.1, off=0.1),)),
    lambda n: replace(n, ports=n.ports + (Port(),), vcs=tuple(replace(v, route=(0, 1)) for v in n.vcs)),
    lambda n: replace(n, ports=(replace(n.ports[0], abr_policy=DropPolicy("tail")),)),
    lambda n: replace(n, vcs=tuple(replace(v, tagged=True) for v in n.vcs)),
    lambda n: replace(n, vcs=tuple(replace(v, connections=2) for v in n.vcs)),
    lambda n: replace(n, start_jitter=0.5),
], ids=["vbr", "two-ports", "tail-drop", "tagged", "two-connections-per-vc", "start-jitter"])
def test_networks_the_fast_path_does_not_model_go_to_the_general_kernel(change):
    net = change(_base())
    _, _, kin = NR.run_network_replication(net, np.random.default_rng(1), kernel="general")
    assert fast_path_inputs(net, kin) is None


def test_kernel_argument_is_checked():
    with pytest.raises(ValueError, match="kernel='fast'"):
        simulate_network(_base(), replications=1, kernel="fast")


@pytest.mark.parametrize("kind", ["chain", "trace"])
def test_fast_path_in_simulate_network_with_a_k_state_chain_or_a_trace(kind):
    # the capacity path is one representation for both kernels (issue 15): a port with a
    # K-state chain or a replayed trace qualifies for the fast path and gives the same outputs
    from pathlib import Path

    from tcpabr_model.capacity import from_arrays, read_trace

    if kind == "trace":
        cap = read_trace(Path(__file__).parent / "data" / "markov3_outage.down")
    else:
        cap = from_arrays([100.0, 300.0, 600.0], [[0.8, 0.2, 0.0], [0.1, 0.8, 0.1], [0.0, 0.3, 0.7]],
                          epoch=0.05, time_unit=1.0, packet_bytes=1500)
    for fb in ("instcap", "none"):
        net = Scenario(feedback=fb, rtt=0.05, buffer_packets=12, capacity=cap, duration=8.0, warmup=1.0).to_network()
        child = np.random.SeedSequence(11).spawn(1)[0]
        gen, _, kin = NR.run_network_replication(net, np.random.default_rng(child), kernel="general")
        assert fast_path_inputs(net, kin) is not None
        auto, _, _ = NR.run_network_replication(net, np.random.default_rng(child), kernel="auto")
        _assert_same(auto, gen)
