"""Cell-level kernel: exact answers, conservation, forced loss, EFFCAP eq. (28), determinism."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst

from tcpabr_model.errors import ModelError  # noqa: F401  (documented failure type)
from tcpabr_model.closed_forms import jain_index
from tcpabr_model.sim import Scenario, TcpConfig, effcap_reference, simulate
from tcpabr_model.sim.kernels import fast_path as K
from tcpabr_model.sim.capacity import capacity_integral
from tcpabr_model.sim.driver import run_replication


def _constant(feedback="instcap", **kw):
    # rate_ratio = 1: both states have the full rate, i.e. constant capacity
    base = dict(delta=40, bmax=200, psi=20, rate_ratio=1.0, feedback=feedback,
                duration=60.0, warmup=5.0)
    base.update(kw)
    return Scenario.from_normalized(**base)


def _run(sc, seed=0, force=()):
    out, _, (g, gf, cp, cf, ptimes, s0) = run_replication(sc, np.random.default_rng(seed), force)
    return out, g, ptimes, s0


def test_constant_capacity_no_loss_efficiency_is_overhead_factor():
    sc = _constant(wmax=64)  # buffer (200 packets) larger than the window
    res = simulate(sc, replications=2, seed=1)
    c = res.counters
    assert c["cells_dropped"] == 0 and c["timeouts"] == 0 and c["retransmissions"] == 0
    # link saturated after slow start: one frame per 12 cell slots; only the frame in
    # progress at each end of the measured window is uncertain (2 frames).
    win_slots = (sc.total_slots - round(sc.warmup / sc.slot_seconds))
    tol = sc.overhead_factor * 2 * sc.cells_per_frame / win_slots
    assert abs(res.efficiency.mean - sc.overhead_factor) <= tol
    assert abs(res.efficiency_wire.mean - 1.0) <= 2 * sc.cells_per_frame / win_slots


def test_tcp_alone_constant_capacity_no_loss_full_efficiency():
    sc = _constant(feedback="none", wmax=64)
    res = simulate(sc, replications=1, seed=2)
    assert res.counters["cells_dropped"] == 0 and res.counters["timeouts"] == 0
    win_slots = (sc.total_slots - round(sc.warmup / sc.slot_seconds))
    # one IP packet (540 B) every 540/53 slots; 2 packets of end effects
    assert abs(res.efficiency.mean - 1.0) <= 2 * (540 / 53) / win_slots
    assert res.efficiency.mean == res.efficiency_wire.mean


@pytest.mark.parametrize("feedback, psi, tcp", [
    ("instcap", 1.0, dict()),
    ("effcap", 0.2, dict(variant="reno")),
    ("none", 5.0, dict(variant="reno")),
    ("instcap", 2.0, dict(variant="reno", rto="estimator", delayed_ack=True)),
    ("none", 0.5, dict(rto="estimator", granularity=0.1, delayed_ack=True)),
])
def test_conservation_of_cells_and_packets(feedback, psi, tcp):
    sc = Scenario.from_normalized(delta=(40, 60), bmax=10, psi=psi, feedback=feedback,
                                  tcp=TcpConfig(**tcp), duration=120.0, warmup=5.0)
    (st, fs, gout, *_), g, _, _ = _run(sc, seed=5)
    upf = g[K.G_UPF]
    # every cell sent is served, dropped, or still in the bottleneck
    assert st[:, K.S_CSENT].sum() == st[:, K.S_CSERVED].sum() + st[:, K.S_CDROP].sum() + gout[K.O_QEND]
    # every segment handed to the source is sent as upf cells or still waiting there
    np.testing.assert_array_equal(st[:, K.S_SEGSENT] * upf, st[:, K.S_CSENT] + st[:, K.S_SQCELLS])
    assert st[:, K.S_CDROP].sum() > 0  # the scenario does lose cells
    for c in range(2):
        # in-order delivery counted once; receiver between snd_una and snd_max
        assert st[c, K.S_GOODALL] == st[c, K.S_RCVNXT]
        assert st[c, K.S_UNA] <= st[c, K.S_RCVNXT] <= st[c, K.S_MAX]
        assert st[c, K.S_GOODALL] <= st[c, K.S_FDELIV]
        # frames: reassembled + dropped <= sent <= that + frames still in the network
        done = st[c, K.S_FDELIV] + st[c, K.S_FDROP]
        assert done <= st[c, K.S_FSENT] <= done + g[K.G_BUF] // upf + 2
        assert st[c, K.S_CDROP] >= st[c, K.S_FDROP]


@pytest.mark.parametrize("variant", ["timeout-only", "reno"])
def test_single_forced_loss(variant):
    sc = _constant(wmax=32, tcp=TcpConfig(wmax=32, variant=variant), duration=30.0)
    res = simulate(sc, replications=1, seed=0, force_drops=[(0, 100)], trace=True)
    c = res.counters
    assert c["frames_dropped"] == 1 and c["cells_dropped"] == sc.cells_per_frame
    (st, fs, *_), _, _, _ = _run(sc, force=[(0, 100)])
    # cwnd had reached wmax = 32 before segment 100: ssthresh = 32 / 2
    assert fs[0, K.F_SSTH] == 16.0
    assert st[0, K.S_GOODALL] == st[0, K.S_RCVNXT]
    cw = res.trace.cwnd[:, 0]
    if variant == "timeout-only":
        assert c["timeouts"] == 1 and c["fast_retransmits"] == 0
        # after the timeout: cwnd = 1, then slow start (doubling per RTT) up to ssthresh
        i = int(np.argmax(cw[10:] <= 2.0)) + 10
        assert cw[i] <= 2.0 and cw.max() == 32.0 and cw[-1] == 32.0
        assert np.all(np.diff(cw[i:i + 5]) >= 0)
    else:
        assert c["timeouts"] == 0 and c["fast_retransmits"] == 1
        after = np.nonzero(res.trace.ssthresh[:, 0] == 16.0)[0]
        assert after.size and cw[after].min() >= 16.0  # fast recovery: never below ssthresh


def test_effcap_feedback_matches_eq28_computed_directly():
    sc = Scenario.from_normalized(delta=(40, 60), psi=1.0, feedback="effcap", m=(7, 3), n=(49, 5),
                                  duration=60.0, warmup=0.0)
    (st, fs, gout, meas, fbv, *_), g, ptimes, s0 = _run(sc, seed=9)
    assert meas.size == g[K.G_NSLOTS] // g[K.G_MEAS]
    for c, (m, n) in enumerate(zip(sc.m, sc.n)):
        np.testing.assert_array_equal(fbv[c], effcap_reference(meas, m, n))
    # the measurements are the average available capacity of each interval s
    L = g[K.G_MEAS]
    ref = np.array([capacity_integral(ptimes, s0, sc.rate_ratio, k * L, (k + 1) * L) / L
                    for k in range(meas.size)])
    np.testing.assert_allclose(meas, ref, rtol=1e-12, atol=1e-12)


def test_source_rate_follows_feedback_after_the_delay():
    sc = Scenario.from_normalized(psi=2.0, feedback="effcap", duration=30.0, warmup=0.0)
    res = simulate(sc, replications=1, seed=4, trace=True)
    tr = res.trace
    L = sc.to_slots(sc.interval)
    d = sc.to_slots(sc.feedback_delay[0])
    slots = np.rint(tr.time / sc.slot_seconds).astype(int)
    arrive = L * (np.arange(tr.feedback.shape[0]) + 1) + d   # measurement k reaches the source
    for j, t in enumerate(slots):
        k = np.searchsorted(arrive, t, side="left") - 1    # latest arrival strictly before t
        expect = 1.0 if k < 0 else tr.feedback[k, 0]
        # stored as (value * share * 53 B) / 53 B: equal up to one rounding
        np.testing.assert_allclose(tr.source_rate[j, 0], expect, rtol=2e-16, atol=0)


def test_embedded_mode_reproduces_the_analysis_rate_rule():
    # capacity changes only at multiples of Delta, INSTCAP sampled once per Delta and
    # applied at once: the source rate in [k Delta, (k+1) Delta) is the link rate of
    # [(k-1) Delta, k Delta), i.e. S_t = R_{t - Delta} (Section III-A, assumption 8).
    sc = Scenario.from_normalized(psi=3.0, capacity_mode="embedded", interval=0.2, feedback_delay=0.0,
                                  duration=200.0, warmup=0.0)
    res = simulate(sc, replications=1, seed=8, trace=True)
    (_, _, _, _, _, _, _, smp_g), g, ptimes, s0 = _run(sc, seed=np.random.SeedSequence(8).spawn(1)[0])
    P = sc.to_slots(sc.period)
    fin = ptimes[np.isfinite(ptimes)]
    assert np.all(np.mod(fin, P) == 0)
    state = lambda k: (s0 + np.searchsorted(fin, k * P, side="right")) % 2  # noqa: E731
    rate = res.trace.source_rate[:, 0]
    assert rate[1] == 1.0
    for j in range(2, rate.size):
        assert rate[j] == (1.0 if state(j - 2) == 0 else sc.rate_ratio)


def test_instcap_equals_effcap_with_m_n_one():
    a = simulate(Scenario.from_normalized(psi=1.0, feedback="instcap", duration=100.0), 2, seed=3)
    b = simulate(Scenario.from_normalized(psi=1.0, feedback="effcap", m=1, n=1, duration=100.0), 2, seed=3)
    assert a.counters == b.counters
    assert a.efficiency == b.efficiency


def test_deterministic_per_seed():
    sc = Scenario.from_normalized(psi=0.5, feedback="effcap", duration=100.0)
    a = simulate(sc, 3, seed=42).to_dict()
    b = simulate(sc, 3, seed=42).to_dict()
    a.pop("speed"), b.pop("speed")
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    c = simulate(sc, 3, seed=43)
    assert c.counters != a["counters"]
    # recording a trace changes nothing
    t = simulate(sc.with_(discard="epd"), 2, seed=42, trace=True)
    u = simulate(sc.with_(discard="epd"), 2, seed=42, trace=False)
    assert t.counters == u.counters and t.efficiency == u.efficiency


def test_replications_are_independent_of_grouping():
    sc = Scenario.from_normalized(psi=5.0, duration=50.0)
    one = simulate(sc, 4, seed=7)
    grouped = simulate(sc, 2, seed=7, target_rel_halfwidth=1e-9, max_replications=4)
    assert grouped.replications == 4
    assert one.counters == grouped.counters


def test_batch_means_and_result_dict():
    sc = Scenario.from_normalized(psi=5.0, delta=(40, 60), feedback="effcap", duration=200.0)
    res = simulate(sc, 1, seed=1, ci_method="batch", batches=10, trace=True)
    assert res.efficiency.n == 10 and res.efficiency.half_width > 0
    d = json.loads(json.dumps(res.to_dict(include_trace=True)))
    for key in ("efficiency", "efficiency_wire", "per_connection_efficiency", "goodput_bps", "fairness",
                "cell_loss_ratio", "frame_loss_ratio", "counters", "speed", "trace", "overhead_factor"):
        assert key in d
    assert 0.5 <= d["fairness"]["mean"] <= 1.0
    assert d["speed"]["cells_per_second"] > 0
    assert sum(e["mean"] for e in d["per_connection_efficiency"]) == pytest.approx(d["efficiency"]["mean"])


def test_epd_discards_whole_frames():
    sc = Scenario.from_normalized(psi=1.0, discard="epd", duration=100.0)
    (st, *_), g, _, _ = _run(sc, seed=2)
    assert g[K.G_EPD] == (sc.buffer_packets - 1) * sc.cells_per_frame
    assert st[0, K.S_FDROP] > 0


def test_bad_simulate_inputs():
    sc = Scenario.from_normalized(duration=10.0)
    with pytest.raises(ValueError, match="replications=0 is invalid"):
        simulate(sc, replications=0)
    with pytest.raises(ValueError, match="scenario=.* is invalid"):
        simulate({"psi": 1})
    with pytest.raises(ValueError, match="seed=-1 is invalid"):
        simulate(sc, seed=-1)
    with pytest.raises(ValueError, match="force_drops entry"):
        simulate(sc, force_drops=[(3, 1)])
    with pytest.raises(ValueError, match="ci_method='x' is invalid"):
        simulate(sc, ci_method="x")


_NOJIT_SCRIPT = """
import json, numpy as np
from tcpabr_model.sim import Scenario, TcpConfig
from tcpabr_model.sim.driver import run_replication
sc = Scenario.from_normalized(delta=(40, 60), psi=0.5, feedback="effcap", duration=4.0, warmup=1.0,
                              tcp=TcpConfig(variant="reno", delayed_ack=True))
st, fs, gout, meas, fbv, *_ = run_replication(sc, np.random.default_rng(5), [(1, 7)])[0]
print(json.dumps([st.tolist(), fs.tolist(), gout.tolist(), meas.tolist(), fbv.tolist()]))
"""


def test_jit_and_pure_python_kernels_agree_exactly():
    # the same kernel interpreted by Python (NUMBA_DISABLE_JIT=1) and compiled
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, NUMBA_DISABLE_JIT="1", PYTHONPATH=root)
    ref = subprocess.run([sys.executable, "-c", _NOJIT_SCRIPT], env=env, capture_output=True,
                         text=True, check=True, cwd=root)
    env["NUMBA_DISABLE_JIT"] = "0"
    jit = subprocess.run([sys.executable, "-c", _NOJIT_SCRIPT], env=env, capture_output=True,
                         text=True, check=True, cwd=root)
    assert json.loads(ref.stdout) == json.loads(jit.stdout)


@settings(deadline=None, max_examples=12, derandomize=True)
@given(psi=hst.floats(0.05, 50.0), bmax=hst.integers(2, 30), ratio=hst.floats(0.2, 1.0),
       feedback=hst.sampled_from(["instcap", "effcap", "none"]), nconn=hst.integers(1, 3))
def test_physical_invariants(psi, bmax, ratio, feedback, nconn):
    sc = Scenario.from_normalized(delta=tuple(30.0 + 10 * i for i in range(nconn)), bmax=bmax, psi=psi,
                                  rate_ratio=ratio, feedback=feedback, duration=40.0, warmup=2.0)
    res = simulate(sc, 2, seed=0)
    ceiling = 1.0 if feedback == "none" else sc.overhead_factor
    # goodput cannot exceed the available capacity (one frame of end effect)
    slack = 2.0 * sc.cells_per_frame * sc.n_connections / round(sc.duration / sc.slot_seconds)
    assert 0.0 <= res.efficiency.mean <= ceiling * (1 + slack)
    assert 1.0 / nconn - 1e-12 <= res.fairness.mean <= 1.0 + 1e-12
    # with one replication the fairness is Jain's index of the connections' goodputs
    one = simulate(sc, 1, seed=0)
    assert one.fairness.mean == pytest.approx(jain_index([g.mean for g in one.goodput_bps]), rel=1e-12)
    assert 0.0 <= res.cell_loss_ratio.mean <= 1.0
    c = res.counters
    assert c["cells_sent"] >= c["cells_served"] + c["cells_dropped"] - 0


def test_more_than_a_thousand_replications_need_no_max_replications():
    """issue 24: ``--replications 1001`` was refused as ``max_replications=1000 is invalid``; the
    default cap of target_rel_halfwidth is now never below the count asked for."""
    from tcpabr_model.sim import Scenario, simulate

    sc = Scenario(duration=0.5, warmup=0.1)
    assert simulate(sc, replications=1001, seed=1).replications == 1001
    with pytest.raises(ValueError, match="max_replications=5 is invalid"):
        simulate(sc, replications=10, max_replications=5)
