"""TM 4.0 minimum cell rate (MCR) of the INSTCAP / EFFCAP source (issue 23 item 5).

The rule (TM 4.0 SES-1, ``MCR <= ACR``): the source's allowed rate is max(fed-back value x
share, MCR), at all times, the initial rate included; both kernels apply it in the one shared
``switch.rate_allocation.receive_feedback``.  MCR is a fraction of the high rate (the unit of
``initial_rate``); its default, TM 4.0's, is 0, where every counter is today's bit for bit
(``tests/test_sim_golden.py`` untouched, and the outage scenarios pinned below, captured on the
tree before MCR existed).  On a link with outages EFFCAP's eq. 28 is 0 after any empty
measurement block and the source stopped (0.2044 of the trace's capacity below); an MCR keeps
it sending.
"""

import math
from pathlib import Path

import numpy as np
import pytest

from tcpabr_model.capacity import from_arrays, read_trace
from tcpabr_model.sim import Network, Port, Scenario, TcpConfig, Vc, simulate
from tcpabr_model.sim.abr.source import AbrSourceParams
from tcpabr_model.sim.arrays import layout as L
from tcpabr_model.sim.switch.rate_allocation import receive_feedback

from _kernels import fast_vs_general
from _simulate_cli import run_cli as _run, simulate_main  # noqa: F401  (fixture 'main')

OUTAGE = Path(__file__).parent / "data" / "markov3_outage.down"   # levels 0 / 200 / 600 packets/s
OUTAGE_MODEL = from_arrays([0.0, 0.4, 1.0], [[0.7, 0.3, 0.0], [0.1, 0.8, 0.1], [0.0, 0.2, 0.8]], epoch=40.0)


def _scenarios(**kw):
    return {
        "effcap-trace": Scenario(feedback="effcap", rtt=0.1, buffer_packets=10, payload_bytes=1460,
                                 capacity=read_trace(OUTAGE), duration=20.0, warmup=1.0, **kw),
        "effcap-kstate": Scenario.from_normalized(delta=40, bmax=10, feedback="effcap", capacity=OUTAGE_MODEL,
                                                  duration=100.0, warmup=2.0, **kw),
        "instcap-kstate": Scenario.from_normalized(delta=40, bmax=10, feedback="instcap", capacity=OUTAGE_MODEL,
                                                   duration=100.0, warmup=2.0, **kw),
    }


# simulate(sc, replications=2, seed=3) on the tree before MCR (commit ae9ecf0), updated once on
# purpose since: a repeated timeout keeps ssthresh (RFC 5681 Sec. 3.1; tests/test_sim_golden.py)
BEFORE_MCR = {
    "effcap-kstate": {"counters": {"acks_sent": 6194, "cells_dropped": 2041, "cells_sent": 76747,
                                    "cells_served": 74586, "delivered_segments": 5730,
                                    "delivered_segments_measured": 5624, "fast_retransmits": 0,
                                    "frames_dropped": 191, "frames_reassembled": 6194, "frames_sent": 6396,
                                    "retransmissions": 641, "segments_sent": 6397, "timeouts": 233},
                      "efficiency": "0x1.f8ba53b7dcf5ap-3"},
    "effcap-trace": {"counters": {"acks_sent": 2002, "cells_dropped": 2239, "cells_sent": 66457,
                                    "cells_served": 64215, "delivered_segments": 1793,
                                    "delivered_segments_measured": 1650, "fast_retransmits": 0,
                                    "frames_dropped": 74, "frames_reassembled": 2002, "frames_sent": 2078,
                                    "retransmissions": 291, "segments_sent": 2104, "timeouts": 99},
                     "efficiency": "0x1.5431e91c453b4p-3"},
    "instcap-kstate": {"counters": {"acks_sent": 10352, "cells_dropped": 4064, "cells_sent": 129055,
                                    "cells_served": 124872, "delivered_segments": 9954,
                                    "delivered_segments_measured": 9819, "fast_retransmits": 0,
                                    "frames_dropped": 392, "frames_reassembled": 10352,
                                    "frames_sent": 10755, "retransmissions": 782, "segments_sent": 10759,
                                    "timeouts": 95},
                       "efficiency": "0x1.b7220779b2845p-2"},
}


@pytest.mark.parametrize("key", sorted(BEFORE_MCR))
@pytest.mark.parametrize("mcr", [None, 0.0, (0.0,)])
def test_mcr_zero_reproduces_the_counters_of_before(key, mcr):
    kw = {} if mcr is None else {"mcr": mcr}
    sc = _scenarios(**kw)[key]
    assert sc.mcr == (0.0,)
    r = simulate(sc, replications=2, seed=3)
    assert {k: r.counters[k] for k in BEFORE_MCR[key]["counters"]} == BEFORE_MCR[key]["counters"]
    assert r.efficiency.mean.hex() == BEFORE_MCR[key]["efficiency"]


def test_effcap_no_longer_starves_after_an_empty_block():
    """The outage trace: EFFCAP feeds back 0 in 29 % of the intervals; without an MCR the source
    then stops (ACR 0), with MCR = 0.1 of the peak it never falls below it and carries more."""
    sc = _scenarios()["effcap-trace"].with_(duration=30.0, warmup=2.0)
    out = {}
    for mcr in (0.0, 0.1):
        r = simulate(sc.with_(mcr=mcr), replications=3, seed=1, trace=True)
        out[mcr] = r
        assert np.mean(r.trace.feedback[:, 0] == 0.0) > 0.25       # empty blocks, eq. 28 = 0
    assert np.mean(out[0.0].trace.source_rate[:, 0] == 0.0) > 0.25  # starved
    assert out[0.1].trace.source_rate[:, 0].min() == pytest.approx(0.1, rel=1e-12)  # never below MCR
    low, high = out[0.0].efficiency_wire, out[0.1].efficiency_wire
    assert high.low > low.high                                      # 0.344 +/- 0.037 against 0.204 +/- 0.042
    assert out[0.1].counters["timeouts"] < out[0.0].counters["timeouts"]


def test_effcap_on_a_kstate_model_with_an_outage_level_gains_from_mcr():
    sc = _scenarios()["effcap-kstate"]
    e0 = simulate(sc, replications=3, seed=1).efficiency_wire
    e1 = simulate(sc.with_(mcr=0.2), replications=3, seed=1).efficiency_wire
    assert e1.mean > e0.mean + 0.15            # 0.424 against 0.211


@pytest.mark.parametrize("key", ["effcap-trace", "effcap-kstate", "instcap-kstate"])
def test_both_kernels_apply_mcr_alike(key):
    """Fast path and general kernel: identical counters and final windows with MCR > 0."""
    sc = _scenarios(mcr=0.15)[key]
    out = fast_vs_general(sc.with_(duration=min(sc.duration, 20.0)), 5)
    assert out[0][:, L.S_GOOD].sum() > 0


def test_two_connections_get_their_own_mcr():
    sc = Scenario.from_normalized(delta=[40, 80], bmax=10, feedback="effcap", capacity=OUTAGE_MODEL,
                                  duration=50.0, warmup=1.0, mcr=[0.05, 0.2])
    assert sc.mcr == (0.05, 0.2)
    assert [v.mcr for v in sc.to_network().vcs] == [0.05, 0.2]
    r = simulate(sc, replications=1, seed=2, trace=True)
    mins = r.trace.source_rate.min(axis=0)
    assert mins == pytest.approx([0.05, 0.2], rel=1e-12)
    fast_vs_general(sc, 2)


def test_the_initial_rate_respects_mcr():
    sc = _scenarios()["effcap-kstate"].with_(initial_rate=0.01, mcr=0.3)
    r = simulate(sc, replications=1, seed=1, trace=True)
    assert r.trace.source_rate[0, 0] == pytest.approx(0.3, rel=1e-12)


# ---------------------------------------------------------------------- the rule on bare arrays
@pytest.mark.parametrize("fb, share, mcr, acr", [
    (0.0, 1.0, 0.0, 0.0),        # empty block, no MCR: the source stops (the paper)
    (0.0, 1.0, 0.1, 0.1),        # empty block: MCR
    (0.05, 0.5, 0.1, 0.1),       # fb x share below MCR
    (0.8, 0.5, 0.1, 0.4),        # above it: the fed-back share
    (0.2, 0.5, 0.1, 0.1),        # equal
])
def test_receive_feedback_decision_table(fb, share, mcr, acr):
    state = np.zeros((1, 2), dtype=np.int64)
    state[0, 1] = 1                               # one value on the ring (head 0, count 1)
    fb_t = np.array([[5, 0]], dtype=np.int64)
    fb_v = np.array([[fb, 0.0]])
    out = np.zeros((1, 1))
    nxt = receive_feedback(0, 5, state, 0, 1, fb_t, fb_v, out, 0, share, mcr, 53.0, 1.0)
    assert nxt == 2**62 and state[0, 1] == 0
    assert out[0, 0] == pytest.approx(acr * 53.0, rel=1e-15)


def test_mcr_zero_is_the_old_product_bit_for_bit():
    rng = np.random.default_rng(0)
    for fb, share, slotb, rate in rng.uniform(0.0, 1.0, size=(200, 4)):
        state = np.array([[0, 1]], dtype=np.int64)
        out = np.zeros((1, 1))
        receive_feedback(0, 1, state, 0, 1, np.array([[1]], dtype=np.int64), np.array([[fb]]), out, 0, share, 0.0,
                         slotb, rate)
        assert out[0, 0] == fb * share * slotb * rate


# ---------------------------------------------------------------------- validation
@pytest.mark.parametrize("kw, msg", [
    ({"mcr": -1.0}, r"mcr=-1.0 is invalid: must be in \[0.0, 1.0\]"),
    ({"mcr": math.nan}, r"mcr=nan is invalid: must be a finite number in \[0.0, 1.0\]"),
    ({"mcr": 1.5}, r"mcr=1.5 is invalid"),
    ({"mcr": (0.1, 0.2)}, r"mcr=\(0.1, 0.2\) is invalid: must have one entry per connection \(1\)"),
    ({"mcr": "x"}, r"mcr='x' is invalid: must be a real number"),
    ({"mcr": 0.1, "feedback": "none"}, r"mcr=0.1 is invalid with feedback='none': the minimum cell rate applies"),
    ({"mcr": 0.1, "feedback": "constant"}, r"mcr=0.1 is invalid with feedback='constant'"),
])
def test_scenario_validates_mcr(kw, msg):
    with pytest.raises(ValueError, match=msg):
        Scenario(**kw)


def test_vc_validates_mcr():
    assert Vc(category="abr", feedback="effcap", mcr=0.2).mcr == 0.2
    with pytest.raises(ValueError, match=r"mcr=-0.1 is invalid: must be in \[0.0, 1.0\]"):
        Vc(category="abr", feedback="instcap", mcr=-0.1)
    with pytest.raises(ValueError, match="mcr=0.1 is invalid with feedback='none'"):
        Vc(mcr=0.1)
    with pytest.raises(ValueError, match=r"takes its MCR from abr=AbrSourceParams\(mcr=...\), cells/s"):
        Vc(category="abr", feedback="rm", abr=AbrSourceParams(pcr=1000.0), mcr=0.1)
    Network(ports=(Port(),), vcs=(Vc(category="abr", feedback="effcap", mcr=0.1),))


def test_to_dict_and_the_sweep_carry_mcr():
    from tcpabr_model.sweep._methods import build_sim_scenario

    assert Scenario(feedback="effcap", mcr=0.1).to_dict()["mcr"] == [0.1]
    assert Scenario().to_dict()["mcr"] == [0.0]
    sc = build_sim_scenario({"delta": [40, 80], "feedback": "effcap", "mcr": [0.1, 0.2]})
    assert sc.mcr == (0.1, 0.2)
    assert build_sim_scenario({"feedback": "instcap", "mcr": 0.05}).mcr == (0.05,)


# ---------------------------------------------------------------------- tcpabr simulate --mcr
@pytest.mark.parametrize("argv, msg", [
    (["--mcr", "-1"], "--mcr=-1.0 is invalid: must be in [0.0, 1.0]"),
    (["--mcr", "nan"], "--mcr=nan is invalid: must be a finite number in [0.0, 1.0]"),
    (["--mcr", "inf"], "--mcr=inf is invalid: must be a finite number"),
    (["--mcr", "2"], "--mcr=2.0 is invalid: must be in [0.0, 1.0]"),
    (["--mcr", "0.1", "0.2"], "--mcr=(0.1, 0.2) is invalid: must have one entry per connection (1)"),
    (["--mcr", "x"], "argument --mcr: invalid float value: 'x'"),
    (["--mcr", "0.1", "--feedback", "none"], "--mcr applies to --feedback instcap or effcap only"),
    (["--mcr", "0.1", "--feedback", "constant", "--source-rate", "0.5"], "--mcr applies to --feedback instcap"),
])
def test_cli_bad_mcr_is_one_line_exit_2(main, capsys, argv, msg):
    code, out, err = _run(main, capsys, ["simulate", *argv, "--duration", "1"])
    assert code == 2 and out == ""
    assert msg in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_cli_mcr_runs_and_reports(main, capsys):
    import json

    argv = ["simulate", "--feedback", "effcap", "--capacity-trace", str(OUTAGE), "--rtt", "0.1", "--duration", "5",
            "--warmup", "0.5", "--replications", "2", "--seed", "1"]
    code, out, err = _run(main, capsys, argv + ["--mcr", "0.1", "--json"])
    assert code == 0, err
    d = json.loads(out)
    assert d["scenario"]["mcr"] == [0.1]
    # the CLI's window (2 x (peak BDP + buffer), docs/simulator.md): with ssthresh held at a
    # repeated timeout (RFC 5681 Sec. 3.1) the window reaches the cap, so it must be the same
    sc = Scenario(feedback="effcap", rtt=0.1, payload_bytes=1460, capacity=read_trace(OUTAGE), duration=5.0,
                  warmup=0.5, mcr=0.1, tcp=TcpConfig(wmax=d["scenario"]["tcp"]["wmax"]))
    assert d["efficiency"]["mean"] == simulate(sc, replications=2, seed=1).efficiency_wire.mean
    code, out, err = _run(main, capsys, argv + ["--mcr", "0.1"])
    assert code == 0, err
    assert "MCR=[0.1] of the high rate ([129127.4] B/s of payload)" in out.splitlines()[0]
    code, out, err = _run(main, capsys, argv)
    assert code == 0 and "MCR" not in out.splitlines()[0]


def test_cli_help_states_the_mcr_default(main, capsys):
    code, out, _ = _run(main, capsys, ["simulate", "--help"])
    assert "(default 0, TM 4.0's default and the paper's source)" in " ".join(out.split())
