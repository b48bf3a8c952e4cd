"""The simulator driven by a K-state capacity chain and by a replayed Mahimahi trace (issue 15
item 4): path generators, units, the fast path against the general kernel, outages, the
wrap-around of a trace, reproducibility, validation and ``tcpabr simulate --capacity /
--capacity-trace``.

The two-state process now reaches both kernels through the same K-level representation;
its counters are pinned unchanged by ``tests/test_sim_golden.py`` and
``tests/test_sim_fastpath.py``.  A two-state *model* goes through the general K-state
generator, which draws its random numbers differently (one uniform per jump and a
geometric / exponential per sojourn), so it is compared with the old process statistically.
"""

import json
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hst
from scipy import stats

from tcpabr_model.capacity import Trace, constant, from_arrays, read_trace, save_model, two_state
from tcpabr_model.sim import Network, Port, Scenario, TcpConfig, Vc, simulate, simulate_network
from tcpabr_model.sim.arrays import layout as L
from tcpabr_model.sim.capacity import (
    build_path,
    capacity_path,
    chain_path_slots,
    path_integral,
    trace_path_slots,
)
from tcpabr_model.sim.driver import run_network_replication
from tcpabr_model.sim.driver import run_replication, scenario_path

from _kernels import fast_vs_general
from _simulate_cli import run_cli as _run, simulate_main  # noqa: F401  (fixture 'main')

DATA = Path(__file__).parent / "data"
OUTAGE = DATA / "markov3_outage.down"       # levels 0 / 200 / 600 packets/s, 40 s period
CONST = DATA / "constant_1000pps.down"      # one opportunity per ms, 2 s period
SHARED = Path("/work/shared/traces")



def _onoff(on_ms=30, off_ms=20, per_ms=2, cycles=3):
    """A trace with ``per_ms`` opportunities in each of ``on_ms`` ms, then ``off_ms`` ms of outage."""
    t = []
    for c in range(cycles):
        base = c * (on_ms + off_ms)
        for m in range(1, on_ms + 1):
            t += [base + m] * per_ms
    # the period is the last time: end the cycle with one opportunity at its last ms
    t.append(cycles * (on_ms + off_ms))
    return Trace(np.array(t), name="onoff")


# ---------------------------------------------------------------------- path generators
def test_two_state_model_path_is_the_paper_process_statistically():
    """Continuous two-state model (generator) vs capacity_path: sojourns exponential with the same
    mean (KS test) and half the time in each state.  Different draws, same law."""
    tau = 200.0
    m = two_state(0.5, 5.0, 40.0, time="continuous")       # tau = psi * delta = 200 time units
    p = chain_path_slots(m, np.random.default_rng(3), 2e6, 1.0, 1.0)
    soj = np.diff(np.concatenate([[0.0], p.times[np.isfinite(p.times)]]))[1:]
    old, _ = capacity_path(np.random.default_rng(3), 2e6, tau)
    soj_old = np.diff(old[np.isfinite(old)])
    assert np.array_equal(p.levels, [1.0, 0.5])
    assert np.all(p.states[:-1][1:] != p.states[:-1][:-1])     # K = 2: every change toggles
    assert stats.ks_2samp(soj, soj_old).pvalue > 1e-3
    assert stats.kstest(soj / tau, "expon").pvalue > 1e-3
    # the fraction of time in the low state: within 5 standard errors of 1/2 (about 1e4 sojourns)
    low = path_integral(p, 0, 2e6)
    frac_low = (2e6 - low) / (2e6 * 0.5)
    assert abs(frac_low - 0.5) < 5 * np.sqrt(0.25 / (soj.size / 2))


@pytest.mark.parametrize("mode", ["continuous", "embedded"])
def test_two_state_model_gives_the_paper_process_efficiency(mode):
    """The same scenario driven by the two-state process and by ``two_state(...)`` through the
    K-state generator (different draws): the replication means of efficiency agree (Welch
    t-test; a false alarm has probability 1e-3)."""
    kw = dict(delta=40, bmax=10, psi=5.0, rate_ratio=0.5, duration=500.0, warmup=5.0)
    old = Scenario.from_normalized(capacity_mode=mode, **kw)
    model = two_state(0.5, 5.0, 40.0, time="continuous" if mode == "continuous" else "discrete")
    new = Scenario.from_normalized(capacity=model, **kw)
    a = [simulate(old, replications=1, seed=s).efficiency.mean for s in range(30)]
    b = [simulate(new, replications=1, seed=100 + s).efficiency.mean for s in range(30)]
    assert stats.ttest_ind(a, b, equal_var=False).pvalue > 1e-3


def test_discrete_model_changes_on_epochs_with_geometric_sojourns():
    P = [[0.9, 0.1, 0.0], [0.05, 0.9, 0.05], [0.0, 0.2, 0.8]]
    m = from_arrays([0.0, 2.0, 6.0], P, epoch=4.0)
    p = chain_path_slots(m, np.random.default_rng(5), 4e5, 2.5, 6.0)   # epoch = 10 slots
    fin = p.times[np.isfinite(p.times)]
    assert np.allclose(fin / 10.0, np.round(fin / 10.0))
    assert np.array_equal(p.levels, [0.0, 2.0 / 6.0, 1.0])
    st = np.concatenate([[p.state0], p.states[:fin.size]])
    assert np.all(st[1:] != st[:-1])
    assert not np.any(np.abs(np.diff(st)) == 2)        # P[0, 2] = P[2, 0] = 0
    # empirical jump chain from state 1: to 0 and 2 with 1/2 each (about 2000 jumps)
    nxt = st[1:][st[:-1] == 1]
    assert abs(np.mean(nxt == 0) - 0.5) < 5 * np.sqrt(0.25 / nxt.size)
    # occupancy against the stationary law, to 5 binomial standard errors per state of ~4e4 epochs
    dur = np.diff(np.concatenate([[0.0], fin, [4e5]]))
    for k in range(3):
        occ = dur[st == k].sum() / 4e5
        assert abs(occ - m.stationary[k]) < 0.05


def test_trace_path_wraps_around_with_its_period():
    tr = _onoff()
    T = tr.period_ms
    ms = 7.25
    p = trace_path_slots(tr, 5 * T * ms, ms, 0)
    per = [path_integral(p, k * T * ms, (k + 1) * T * ms) / ms for k in range(5)]
    # each period carries all its opportunities, in units of the busiest ms (2 per ms)
    assert per == pytest.approx([tr.n_opportunities / 2] * 5, rel=1e-12)
    # an offset is a shift: the path from offset o is the offset-0 path moved by o ms
    q = trace_path_slots(tr, 5 * T * ms, ms, 17)
    for a in (0.0, 3.3, 40.0, T - 2.0, 2 * T + 11.0):
        assert path_integral(q, a * ms, (a + 9) * ms) == pytest.approx(
            path_integral(p, (a + 17) * ms, (a + 26) * ms), abs=1e-9)
    # outage ms are served at level 0
    assert path_integral(p, 31 * ms, 49 * ms) == 0.0


def test_build_path_offset_choice():
    tr = read_trace(OUTAGE)
    a = build_path(tr, np.random.default_rng(1), 1e5, 1e4, offset=None)
    b = build_path(tr, np.random.default_rng(2), 1e5, 1e4, offset=None)
    c = build_path(tr, np.random.default_rng(1), 1e5, 1e4, offset=None)
    assert not np.array_equal(a.times, b.times)     # random offset: replications differ
    np.testing.assert_array_equal(a.times, c.times)  # ... reproducibly
    f1 = build_path(tr, np.random.default_rng(1), 1e5, 1e4, offset=1.5)
    f2 = build_path(tr, np.random.default_rng(2), 1e5, 1e4, offset=1.5)
    np.testing.assert_array_equal(f1.times, f2.times)


# ---------------------------------------------------------------------- units
def test_trace_fixes_the_peak_rate_and_the_slot():
    tr = read_trace(CONST)      # 1 opportunity of 1500 B per ms: 1.5e6 B/s on the link
    sc = Scenario.from_normalized(delta=40, bmax=10, capacity=tr, duration=1.0, warmup=0.0)
    assert sc.slot_seconds == pytest.approx(53 / 1.5e6, rel=1e-12)       # one cell at the peak
    assert sc.high_rate == pytest.approx(1.5e6 * 500 / 636, rel=1e-12)
    none = Scenario.from_normalized(delta=40, bmax=10, capacity=tr, feedback="none", duration=1.0)
    assert none.slot_bytes / none.slot_seconds == pytest.approx(1.5e6, rel=1e-12)  # IP bytes/s
    # delta in packet times at the peak: 40 frames of 636 B at 1.5 MB/s
    assert sc.rtt[0] == pytest.approx(40 * 636 / 1.5e6, rel=1e-12)


# ---------------------------------------------------------------------- kernels
@pytest.mark.parametrize("feedback", ["instcap", "effcap", "none"])
def test_fast_path_equals_general_kernel_with_a_trace(feedback):
    tr = read_trace(OUTAGE)
    sc = Scenario.from_normalized(delta=[40, 120], bmax=10, feedback=feedback, capacity=tr, duration=30.0,
                                  warmup=2.0)
    out = fast_vs_general(sc, 11)
    assert out[0][:, L.S_GOOD].sum() > 0


@pytest.mark.parametrize("time", ["discrete", "continuous"])
def test_fast_path_equals_general_kernel_with_a_k_state_model(time):
    P = [[0.6, 0.4, 0.0], [0.1, 0.8, 0.1], [0.0, 0.2, 0.8]]
    m = from_arrays([0.0, 0.4, 1.0], P, epoch=40.0)     # the paper's unit, epoch = Delta
    if time == "continuous":
        m = from_arrays([0.0, 0.4, 1.0], generator=[[-0.02, 0.02, 0.0], [0.01, -0.02, 0.01],
                                                    [0.0, 0.01, -0.01]])
    sc = Scenario.from_normalized(delta=40, bmax=10, capacity=m, duration_units=20000, warmup_units=400)
    fast_vs_general(sc, 5)
    m2 = from_arrays([200.0, 600.0, 1000.0], P, epoch=0.1, time_unit=1.0, packet_bytes=1500)
    sc2 = Scenario.from_normalized(delta=40, bmax=10, capacity=m2, duration=20.0, warmup=1.0)
    assert sc2.high_rate == pytest.approx(1000 * 1500 * 500 / 636)
    fast_vs_general(sc2, 6)


@hst.composite
def _capacities(draw):
    """A K-state model in the paper's unit (K 1..4, levels in [0, 1] with max 1, possibly an
    outage) or a random small trace (1..3 opportunities in some ms, outages included)."""
    if draw(hst.booleans()):
        k = draw(hst.integers(1, 4))
        lv = [draw(hst.sampled_from([0.0, 0.2, 0.5, 0.9])) for _ in range(k - 1)] + [1.0]
        raw = np.array([[draw(hst.floats(0.05, 1.0)) for _ in range(k)] for _ in range(k)])
        if draw(hst.booleans()):
            return from_arrays(lv, raw / raw.sum(axis=1, keepdims=True), epoch=draw(hst.sampled_from([8.0, 40.0])))
        q = raw / draw(hst.sampled_from([20.0, 200.0]))
        np.fill_diagonal(q, 0.0)
        return from_arrays(lv, generator=q - np.diag(q.sum(axis=1)))
    per = draw(hst.lists(hst.integers(0, 3), min_size=5, max_size=60))
    per[-1] = max(per[-1], 1)
    return Trace(np.repeat(np.arange(1, len(per) + 1), per), name="random")


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cap=_capacities(), fb=hst.sampled_from(["instcap", "effcap", "none", "constant"]),
       variant=hst.sampled_from(["timeout-only", "reno", "newreno"]), seed=hst.integers(0, 2**32))
def test_fast_path_equals_general_kernel_over_random_capacities(cap, fb, variant, seed):
    kw = {"initial_rate": 0.5} if fb == "constant" else {}
    sc = Scenario.from_normalized(delta=[20, 60], bmax=8, feedback=fb, capacity=cap,
                                  tcp=TcpConfig(variant=variant, wmax=32), duration_units=3000,
                                  warmup_units=100, **kw)
    fast_vs_general(sc, seed)


def test_measured_capacity_is_the_path_integral_and_service_never_exceeds_it():
    """With outages: the kernel's capacity integral is the replayed path's, cells are conserved
    (sent = served + dropped + queued at the end) and the server never beats the capacity."""
    tr = _onoff(cycles=4)
    sc = Scenario.from_normalized(delta=40, bmax=10, capacity=tr, duration=3.0, warmup=0.0, capacity_offset=0.0)
    (st, fs, gout, *_), _, (g, *_rest) = run_replication(sc, np.random.default_rng(0), trace=False)
    path = scenario_path(sc, np.random.default_rng(0), float(g[L.G_NSLOTS]) + 1.0)
    ref = path_integral(path, 0, float(g[L.G_NSLOTS]))
    assert gout[L.O_CAPTOT] == pytest.approx(ref, rel=1e-9)
    served = st[:, L.S_CSERVED].sum()
    assert st[:, L.S_CSENT].sum() == served + st[:, L.S_CDROP].sum() + gout[L.O_QEND]
    assert served <= gout[L.O_CAPTOT] + 1
    assert served > 0
    # the general kernel's own per-port counters: served cells against the same capacity
    net = sc.to_network()
    out, _, _ = run_network_replication(net, np.random.default_rng(0))
    pst = out[4]
    served_g = pst[0, L.PS_SERVED0:L.PS_SERVED0 + 3].sum()
    assert served_g == served


def test_outage_queue_never_drains_during_an_outage():
    tr = _onoff(on_ms=40, off_ms=60, per_ms=1, cycles=2)
    sc = Scenario.from_normalized(delta=40, bmax=20, capacity=tr, duration=2.0, warmup=0.0, capacity_offset=0.0,
                                  interval=0.001)
    res = simulate(sc, replications=1, seed=0, trace=True)
    t = res.trace.time * 1000.0       # ms, sampled every interval (1 ms)
    q = res.trace.queue
    cap = res.trace.capacity          # level index: 0 outage, 1 on
    ph = np.mod(t, 100.0)
    inside = (ph > 41) & (ph < 99)    # strictly inside an outage (the trace's 100-ms cycle)
    assert np.all(cap[inside] == 0)
    idx = np.flatnonzero(inside[1:] & inside[:-1]) + 1
    assert np.all(q[idx] >= q[idx - 1])   # nothing is served while the capacity is 0


def test_constant_trace_is_the_constant_capacity_result():
    """One opportunity every ms: the same counters as the two-state process pinned at its high
    state (rate_ratio 1, no change within the run) at the same peak rate."""
    tr = read_trace(CONST)
    sc = Scenario.from_normalized(delta=40, bmax=10, capacity=tr, duration=5.0, warmup=0.5)
    ref = Scenario.from_normalized(delta=40, bmax=10, high_rate=sc.high_rate, rate_ratio=1.0, psi=1e9,
                                   initial_state="high", duration=5.0, warmup=0.5)
    assert ref.slot_seconds == sc.slot_seconds
    a = simulate(sc, replications=1, seed=2)
    b = simulate(ref, replications=1, seed=2)
    assert a.counters == b.counters
    assert a.efficiency.mean == b.efficiency.mean
    # and the one-level model in the paper's unit
    c = simulate(sc.with_(capacity=constant(1.0), capacity_offset=None, high_rate=sc.high_rate),
                 replications=1, seed=2)
    assert c.counters == b.counters


def test_seeded_reproducibility_and_replications_differ():
    tr = read_trace(OUTAGE)
    sc = Scenario.from_normalized(delta=40, bmax=10, capacity=tr, duration=10.0, warmup=1.0)
    a = simulate(sc, replications=3, seed=4)
    b = simulate(sc, replications=3, seed=4)
    assert a.counters == b.counters and a.efficiency == b.efficiency
    assert a.efficiency.half_width > 0      # random offsets: the replications are different runs
    c = simulate(sc, replications=3, seed=5)
    assert c.counters != a.counters


def test_deterministic_capacity_refuses_identical_replications():
    sc = Scenario.from_normalized(delta=40, capacity=read_trace(OUTAGE), capacity_offset=2.0, duration=5.0)
    with pytest.raises(ValueError, match="replications=3 is invalid for this scenario"):
        simulate(sc, replications=3)
    assert simulate(sc, replications=1, ci_method="batch", batches=5).replications == 1
    with pytest.raises(ValueError, match="every replication is the same run"):
        simulate(sc.with_(capacity=read_trace(CONST), capacity_offset=None), replications=2)


def test_network_port_replays_a_trace_at_its_rate():
    tr = read_trace(OUTAGE)
    port = Port(rate=1.0, capacity=tr, abr_buffer=120)
    net = Network(ports=(port,), vcs=(Vc(route=(0,), category="abr", feedback="instcap", ack_delay=0.01),),
                  link_rate_bps=12e6, duration=5.0)
    assert net.is_random
    r = simulate_network(net, replications=2, seed=1)
    assert 0 < r.efficiency.mean < 1
    fixed = Network(ports=(Port(rate=1.0, capacity=tr, capacity_offset=0.0),), vcs=net.vcs,
                    link_rate_bps=12e6, duration=5.0)
    assert not fixed.is_random
    with pytest.raises(ValueError, match="replications=2 is invalid for network"):
        simulate_network(fixed, replications=2)
    json.dumps(net.to_dict())     # the trace is described, not dumped as an array
    assert net.to_dict()["ports"][0]["capacity"]["period_ms"] == 40000
    model = from_arrays([0.0, 5.0], [[0.5, 0.5], [0.5, 0.5]], epoch=0.01, time_unit=1.0)
    d = Network(ports=(Port(capacity=model),), vcs=net.vcs).to_dict()
    assert d["ports"][0]["capacity"]["levels"] == [0.0, 5.0]


def test_every_port_of_a_network_replays_its_own_capacity():
    """Three ports in tandem: the two-state process, a 3-level chain and a trace (different
    numbers of levels in one padded array); each port's measured capacity integral is its own
    path's, drawn in port order from the replication's generator."""
    from tcpabr_model.sim import CapacityProcess
    from tcpabr_model.sim.capacity import two_state_path

    m3 = from_arrays([0.0, 0.5, 2.0], [[0.6, 0.4, 0.0], [0.1, 0.8, 0.1], [0.0, 0.2, 0.8]], epoch=0.02, time_unit=1.0)
    tr = read_trace(OUTAGE)
    ports = (Port(capacity=CapacityProcess(tau=0.05, rate_ratio=0.3), link_delay=0.002),
             Port(capacity=m3, link_delay=0.002), Port(rate=0.8, capacity=tr))
    net = Network(ports=ports, vcs=(Vc(route=(0, 1, 2), category="ubr", ack_delay=0.01, pcr=2.0),),
                  atm=True, link_rate_bps=12e6, duration=2.0, bottleneck=2)
    out, _, kin = run_network_replication(net, np.random.default_rng(7))
    pfs = out[5]
    n = float(kin["gpar"][L.G_NSLOTS])
    rng = np.random.default_rng(7)
    paths = [two_state_path(rng, n + 1.0, 0.05 / net.slot_seconds, "continuous", 1.0 / net.slot_seconds,
                            "stationary", 0.3),
             build_path(m3, rng, n + 1.0, net.link_rate_bps / 424),
             build_path(tr, rng, n + 1.0, net.link_rate_bps / 424)]
    assert [p.levels.size for p in paths] == [2, 3, 2]
    for p, path in enumerate(paths):
        assert pfs[p, L.PFS_CAPTOT] == pytest.approx(path_integral(path, 0.0, n), rel=1e-9)
        assert kin["ppar"][p, L.PP_INITSTATE] == path.state0
    assert out[0][0, L.S_GOODALL] > 0


# ---------------------------------------------------------------------- validation
def test_validation_names_the_parameter():
    with pytest.raises(ValueError, match="capacity='x' is invalid"):
        Scenario(capacity="x")
    with pytest.raises(ValueError, match="the largest level must be 1"):
        Scenario(capacity=from_arrays([1.0, 2.0], [[0.5, 0.5], [0.5, 0.5]], epoch=1.0))
    with pytest.raises(ValueError, match="high_rate=5000.0 is invalid with this capacity"):
        Scenario(capacity=read_trace(CONST), high_rate=5000.0)
    with pytest.raises(ValueError, match="capacity_offset=1.0 is invalid: only used with a trace"):
        Scenario(capacity_offset=1.0)
    with pytest.raises(ValueError, match="capacity_offset=-1.0 is invalid"):
        Scenario(capacity=read_trace(CONST), capacity_offset=-1.0)
    with pytest.raises(ValueError, match="capacity.time_unit=None is invalid for a Port"):
        Port(capacity=two_state(0.5, 2.0, 1.0))
    with pytest.raises(ValueError, match="capacity=3 is invalid"):
        Port(capacity=3)


def test_scenario_to_dict_describes_the_capacity():
    d = Scenario(capacity=read_trace(OUTAGE)).to_dict()
    assert d["capacity"]["period_ms"] == 40000 and d["capacity"]["opportunities"] == 10380
    assert Scenario(capacity=two_state(0.5, 2.0, 40.0)).to_dict()["capacity"]["levels"] == [1.0, 0.5]
    assert Scenario().to_dict()["capacity"] is None


# ---------------------------------------------------------------------- CLI and sweep
@pytest.mark.parametrize("argv, msg", [
    (["--capacity", "/nonexistent_i15/m.json"], "/nonexistent_i15/m.json: cannot read the model file"),
    (["--capacity-trace", "/nonexistent_i15/t.down"], "/nonexistent_i15/t.down: cannot read the trace"),
    (["--capacity", "MODEL", "--capacity-trace", str(OUTAGE)], "--capacity and --capacity-trace are exclusive"),
    (["--capacity", "MODEL", "--psi", "3"], "--psi is ignored with --capacity"),
    (["--capacity-trace", str(OUTAGE), "--rate-ratio", "0.2", "--capacity-mode", "embedded"],
     "--rate-ratio, --capacity-mode are ignored with --capacity-trace"),
    (["--capacity-offset", "2"], "--capacity-offset is ignored without --capacity-trace"),
    (["--rtt", "0.1", "--delta", "20"], "--rtt and --delta are exclusive"),
    (["--rtt", "-0.1"], "--rtt=-0.1 is invalid: must be in (0, 100] seconds"),
    (["--capacity", "BAD"], "is invalid: not a JSON file"),
    (["--capacity-trace", "BADTRACE"], "line 2: 'x' is invalid: not an integer"),
    (["--capacity-trace", str(OUTAGE), "--capacity-offset", "1", "--replications", "2"],
     "replications=2 is invalid for this scenario"),
])
def test_cli_bad_capacity_input_is_one_line_exit_2(main, capsys, tmp_path, argv, msg):
    model = tmp_path / "m.json"
    save_model(two_state(0.5, 5.0, 40.0), model)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    badtr = tmp_path / "bad.down"
    badtr.write_text("1\nx\n")
    subst = {"MODEL": str(model), "BAD": str(bad), "BADTRACE": str(badtr)}
    argv = ["simulate", "--duration", "1"] + [subst.get(a, a) for a in argv]
    code, out, err = _run(main, capsys, argv)
    assert code == 2
    assert msg in err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_cli_runs_a_model_file_and_a_trace(main, capsys, tmp_path):
    model = tmp_path / "m.toml"
    save_model(two_state(0.5, 5.0, 40.0), model)
    code, out, err = _run(main, capsys, ["simulate", "--capacity", str(model), "--duration", "20",
                                         "--warmup", "1", "--replications", "2", "--json"])
    assert code == 0, err
    d = json.loads(out)
    assert d["scenario"]["capacity"]["levels"] == [1.0, 0.5] and d["replications"] == 2
    code, out, err = _run(main, capsys, ["simulate", "--capacity-trace", str(OUTAGE), "--duration", "5",
                                         "--warmup", "0.5", "--replications", "2"])
    assert code == 0, err
    assert "capacity-trace=" in out and "efficiency" in out
    code, out, err = _run(main, capsys, ["simulate", "--capacity-trace", str(OUTAGE), "--rtt", "0.1", "0.3",
                                         "--duration", "3", "--warmup", "0.5", "--replications", "2", "--json"])
    assert code == 0, err
    assert json.loads(out)["scenario"]["rtt"] == pytest.approx([0.1, 0.3], rel=1e-12)


def test_sweep_simulation_method_accepts_capacity_files(tmp_path):
    from tcpabr_model.sweep._methods import build_sim_scenario, simulation_point

    model = tmp_path / "m.json"
    save_model(two_state(0.5, 5.0, 40.0), model)
    sc = build_sim_scenario({"delta": 40, "bmax": 10, "capacity": str(model)})
    assert sc.capacity_kind == "model" and sc.capacity.n_levels == 2
    r = simulation_point({"delta": 40, "bmax": 10, "capacity_trace": str(OUTAGE), "duration": 3.0,
                          "warmup": 0.5}, seed=1, replications=2)
    assert 0 < r["efficiency"] < 1
    with pytest.raises(ValueError, match="capacity/capacity_trace is invalid"):
        build_sim_scenario({"capacity": str(model), "capacity_trace": str(OUTAGE)})


# ---------------------------------------------------------------------- the shared traces
@pytest.mark.skipif(not SHARED.is_dir(), reason="the shared measured traces are not in this checkout")
@pytest.mark.parametrize("name", ["TMobile-LTE-short.down", "Verizon-LTE-short.down"])
def test_shared_trace_replay_fast_equals_general(name):
    p = SHARED / name
    if not p.exists():
        pytest.skip(f"{p} missing")
    tr = read_trace(p)
    sc = Scenario.from_normalized(delta=40, bmax=20, capacity=tr, duration=2.0, warmup=0.2)
    out = fast_vs_general(sc, 3)
    assert out[0][:, L.S_GOOD].sum() > 0
    assert os.path.basename(sc.capacity.name) == name
