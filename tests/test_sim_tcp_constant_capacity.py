"""The simulator's TCP at constant capacity against Lakshman and Madhow (issue 25).

TCP alone, rate ratio 1 (the link never changes), the default window cap wmax = 128.
Before issue 25 the cap, anchored at snd_una, stopped every fast recovery half-way (a
window of about 102 at Delta 80 needs up to 150 segments past snd_una during recovery), and
the deficit came back after it as a burst (SACK, Reno: 25 segments back to back into a
20-packet buffer) or a slow start from flight + 1 (NewReno): a second halving about one
second after every loss, SACK 0.739 and NewReno 0.579 at Delta 80, Bmax 20.
"""

import numpy as np
import pytest

from tcpabr_model.closed_forms import reno_efficiency
from tcpabr_model.sim import Scenario, TcpConfig, simulate

FAST_RECOVERY = ("reno", "newreno", "sack", "newreno-steady")


def _run(variant, delta, bmax, duration=1000.0, warmup=60.0):
    sc = Scenario.from_normalized(delta=delta, bmax=bmax, psi=20, rate_ratio=1.0, feedback="none",
                                  tcp=TcpConfig(variant=variant), duration=duration, warmup=warmup,
                                  interval=0.01)
    assert sc.tcp.wmax == 128
    return sc, simulate(sc, replications=1, seed=1, trace=True)


@pytest.mark.parametrize("variant", FAST_RECOVERY)
def test_one_halving_per_loss_episode_below_the_window_cap(variant):
    # Delta 80, Bmax 20: the window reaches P + B = 100 < wmax and every loss halves it once,
    # ssthresh = flight / 2 = 50 or 51 (a cycle of W / 2 = 50 round trips, about 21 s).  A
    # second halving in the same episode would set ssthresh to about 25 (before the fix:
    # 51 -> 25 one second after every loss).  Counted: fast retransmits + timeouts after
    # the warm-up = reductions, each leaving ssthresh >= (P + B) / 2 - 2.
    # warm-up 150 s: the first slow start overshoots (cwnd doubles towards 128 and loses
    # dozens of segments), its recovery can leave ssthresh at 4-11, and congestion avoidance
    # climbs back to 100 in up to 100 round trips
    sc, r = _run(variant, 80, 20, warmup=150.0)
    tr = r.trace
    keep = tr.time >= sc.warmup
    ss = tr.ssthresh[keep, 0]
    assert ss.min() >= (80 + 20) / 2 - 2
    reductions = r.counters["fast_retransmits"] + r.counters["timeouts"]
    assert 35 <= reductions <= 65                  # about 50 cycles in 1150 s + the initial slow start
    assert r.counters["timeouts"] <= 2             # the initial slow start's overshoot at most


@pytest.mark.parametrize("delta, bmax", [(80, 20), (80, 40), (160, 40)])
@pytest.mark.parametrize("variant", FAST_RECOVERY)
def test_fast_recovery_variants_within_3_percent_of_lakshman_madhow(variant, delta, bmax):
    # beta = B / P = 0.25 and 0.5 at Delta 80 (losses); at Delta 160 the cap 128 < P: no loss
    # after slow start, efficiency 128 / 160.  Measured after the fix: -1.0 to -2.7 %.
    _, r = _run(variant, delta, bmax, duration=2000.0, warmup=20.0)
    lm = reno_efficiency(delta, bmax, 128)
    assert r.efficiency.mean == pytest.approx(lm, rel=0.03)


def test_lakshman_madhow_reno_formula_values():
    from tcpabr_model.closed_forms import slow_start_overflows

    # 3/4 (1 + b)^2 / (1 + b + b^2): the sawtooth W/2..W with no buffer, full use from beta = 1
    assert reno_efficiency(80, 0) == pytest.approx(0.75)
    assert reno_efficiency(80, 40) == pytest.approx(0.75 * 2.25 / 1.75)
    assert reno_efficiency(80, 80) == 1.0 and reno_efficiency(80, 200) == 1.0
    assert reno_efficiency(160, 40, wmax=128) == pytest.approx(0.8)     # the cap avoids every loss
    assert reno_efficiency(80, 20, wmax=128) == reno_efficiency(80, 20)
    assert slow_start_overflows(90, 29.9) and not slow_start_overflows(90, 30)
    with pytest.raises(ValueError, match="pipe=0"):
        reno_efficiency(0, 10)


def _slow_start_loses(delta, bmax):
    """Timeout-only TCP alone at constant capacity: whether slow start after a timeout loses
    (a second, lower ssthresh value after the warm-up: W/4 instead of W/2)."""
    sc = Scenario.from_normalized(delta=delta, bmax=bmax, psi=20, rate_ratio=1.0, feedback="none",
                                  tcp=TcpConfig(wmax=1000), duration=800.0, warmup=100.0, interval=0.01)
    r = simulate(sc, replications=1, seed=1, trace=True)
    ss = np.unique(r.trace.ssthresh[r.trace.time > sc.warmup, 0])
    assert r.counters["timeouts"] > 5                      # losses every cycle, at W = P + B + 1
    return len(ss) > 1


@pytest.mark.parametrize("delta", [40, 48, 80, 96])
def test_slow_start_loss_point_is_the_integer_doubling(delta):
    # issue 25: the loss point is slow start's integer arithmetic (closed_forms.slow_start_peak_queue),
    # not the fluid pipe / 3: P = 40 -> B = 10 (0.25 P), 48 -> 17, 80 -> 18 (0.225 P), 96 -> 33
    from tcpabr_model.closed_forms import slow_start_peak_queue

    point = min(b for b in range(1, delta) if slow_start_peak_queue(delta, b) <= b)
    assert _slow_start_loses(delta, point - 1) and not _slow_start_loses(delta, point)


def test_slow_start_loss_point_near_a_third_where_ssthresh_is_a_power_of_two():
    # P = 96: at B = P / 3 = 32, ssthresh = floor(129 / 2) = 64 = 2^6, where the fluid rule is exact
    assert _slow_start_loses(96, 32) and not _slow_start_loses(96, 33)
    assert 33 / 96 == pytest.approx(1 / 3, rel=0.04)
