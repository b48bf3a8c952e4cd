"""RFC 6298's minimum RTO in the single-bottleneck simulator (issue 25): ``TcpConfig.rto_min``
defaults to 1 s (RFC 6298 (2.4)) and ``tcpabr simulate --rto-min`` sets it; the paper's fixed
RTO ignores it."""

import json

import numpy as np
import pytest

import tcpabr_model.cli as cli
from tcpabr_model.sim import Scenario, TcpConfig, simulate
from tcpabr_model.sim.arrays import layout as L
from tcpabr_model.sim.driver import run_replication
from tcpabr_model.sim.kernel_inputs import kernel_inputs


def _lossless(**tcp):
    # TCP alone at constant capacity, window 30 < pipe 40 and a buffer of 20 (slow start's last
    # doubling, 16 -> 30, queues 14): no loss, RTT samples of 0.2 s + a packet time
    return Scenario.from_normalized(delta=40, bmax=20, psi=20, rate_ratio=1.0, feedback="none",
                                    tcp=TcpConfig(wmax=30, rto="estimator", **tcp), duration=20.0, warmup=1.0)


def _final_rto_seconds(sc):
    (st, fs, *_), _, _ = run_replication(sc, np.random.default_rng(1), trace=False)
    assert st[0, L.S_TIMEOUTS] == 0 and fs[0, L.F_SRTT] > 0
    return fs[0, L.F_RTO] * sc.slot_seconds, fs[0, L.F_SRTT] * sc.slot_seconds


def test_default_minimum_is_one_second():
    assert TcpConfig().rto_min == 1.0
    sc = _lossless()
    assert kernel_inputs(sc.to_network())["gpar"][L.G_RTOMIN] == sc.to_slots(1.0)
    rto, srtt = _final_rto_seconds(sc)
    # SRTT about 0.2 s: SRTT + max(G, 4 RTTVAR) is far below 1 s, so the minimum is the RTO
    assert srtt < 0.25 and rto == pytest.approx(1.0, abs=1e-9)


def test_the_minimum_given_is_applied():
    rto0, _ = _final_rto_seconds(_lossless(rto_min=0.0))
    assert rto0 < 0.3                                   # the estimator's own value
    rto, _ = _final_rto_seconds(_lossless(rto_min=0.45))
    assert rto == pytest.approx(0.45, abs=1e-9)


def test_the_fixed_rto_ignores_the_minimum():
    sc = Scenario.from_normalized(delta=40, bmax=10, psi=2, feedback="instcap", duration=60.0, warmup=5.0)
    a = simulate(sc, replications=1, seed=3)
    b = simulate(sc.with_(tcp=TcpConfig(rto_min=0.2)), replications=1, seed=3)
    assert a.counters == b.counters and a.counters["timeouts"] > 0


@pytest.mark.parametrize("kw, msg", [(dict(rto_min=-0.1), "rto_min=-0.1 is invalid"),
                                     (dict(rto_min=100.0), "rto_max=60.0 is invalid: must be >= rto_min=100.0")])
def test_bad_minimum_is_refused(kw, msg):
    with pytest.raises(ValueError, match=msg):
        TcpConfig(**kw)


@pytest.fixture
def main(monkeypatch):
    monkeypatch.setattr(cli, "_COMMAND_MODULES", ("tcpabr_model.sim.cli",))
    return cli.main


def test_cli_rto_min(main, capsys):
    base = ["simulate", "--feedback", "none", "--duration", "5", "--replications", "1", "--json"]
    assert main(base + ["--rto", "estimator"]) == 0
    assert json.loads(capsys.readouterr().out)["scenario"]["tcp"]["rto_min"] == 1.0
    assert main(base + ["--rto", "estimator", "--rto-min", "0.5"]) == 0
    assert json.loads(capsys.readouterr().out)["scenario"]["tcp"]["rto_min"] == 0.5
    assert main(base + ["--rto-min", "0.5"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "tcpabr simulate: error: --rto-min is ignored without --rto estimator: drop it or add --rto estimator"
    assert main(base + ["--rto", "estimator", "--rto-min", "-1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("tcpabr simulate: error: --rto-min=-1.0 is invalid")


def test_a_repeated_timeout_keeps_ssthresh():
    """RFC 5681 Sec. 3.1 (and seed 004 Sec. III-A item 7, the threshold is half the window
    reached after the loss): when the timer fires again before ``snd_una`` moves, ssthresh is
    held.  TCP alone over a 2-BDP buffer at the paper's fixed RTO (2 RTT): after a loss at the low
    rate the retransmission waits behind about 40 queued packets (80 time units > RTO), so the
    timer fires a second time with cwnd 1; halving that window set ssthresh to 2 and the window
    then crept back by congestion avoidance (efficiency 0.912, ssthresh 2 after 11 of 26 loss
    events on this seed)."""
    sc = Scenario.from_normalized(delta=40, bmax=80, psi=20, rate_ratio=0.5, feedback="none", wmax=256,
                                  duration_units=60000, interval=0.005)
    r = simulate(sc, replications=1, seed=1, trace=True)
    cw, ss = r.trace.cwnd[:, 0], r.trace.ssthresh[:, 0]
    resets = int(np.sum((cw[1:] <= 1) & (cw[:-1] > 1)))
    assert resets >= 5 and r.counters["timeouts"] > resets      # repeated timeouts do happen here
    after_first = np.argmax(cw <= 1)
    assert ss[after_first:].min() >= 40                          # half of a window of 80 or more, never 2
