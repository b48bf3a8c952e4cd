"""``Scenario(loss_cycle='timer')`` (docs/model.md sec. 15, issue 23): the drained timeout cycle
in continuous time -- the timer restarted by the ACK of the last packet ahead of the loss, each
slow-start round one packet's service longer than the round trip, and the round of the
regeneration window that eq. 20 leaves out."""

import numpy as np
import pytest

from tcpabr_model import markov
from tcpabr_model.markov.skeleton import _served_by, _service_time, skeleton_for


def _sc(**kw):
    base = dict(delta=26, bmax=15, rate_ratio=0.5, psi=20, wmax=128, feedback="none")
    base.update(kw)
    return markov.Scenario(**base)


def test_service_time_inverts_the_served_packets():
    """S_i(t) joins C[:, i] linearly; _service_time is its least inverse and whole t reads C."""
    C = np.array([[0.0, 0.0], [10.0, 2.0], [20.0, 4.0], [30.0, 14.0]])
    ri = np.array([0, 1, 1, 0])
    need = np.array([15.0, 3.0, 9.0, 0.0])
    t = _service_time(C, ri, need)
    np.testing.assert_allclose(t, [1.5, 1.5, 2.5, 0.0])
    np.testing.assert_allclose(_served_by(C, ri, t), need)
    np.testing.assert_array_equal(_served_by(C, ri, np.array([1, 2, 3, 0])), C[[1, 2, 3, 0], ri])


def test_timer_extra_round_trips_by_hand():
    """Constant capacity, Delta 26, B_max 15 (26 packets per interval): T_a = (b + J) / 26, behind
    = min(w - 1, 26 + 15), T_e = (b + J + behind) / 26, L = ceil(log2 ceil(w / 2)), and
    E = max(T_a, T_e - 3) + 1 + (L + 1) / 26; the queue after the loss interval, in units of
    B_max Delta / 2, is T_e - 1 + min(T_a, T_e - 1)."""
    sk = skeleton_for(_sc(rate_ratio=1.0))
    C = np.repeat(np.arange(0, 400, dtype=float)[:, None] * 26.0, 2, axis=1)
    extra, behind, draining = sk.timer_terms(C)
    lost = sk.p_loss > 0
    p = sk.p_loss[lost]
    ahead = sk.states[lost, 1] + sk.j_loss[lost] / p
    wbar = (sk.post[lost] - sk.j_loss[lost]) / p
    beh = np.clip(np.minimum(wbar - 1.0, 26.0 + 15.0), 0.0, None)
    t_a, t_e = ahead / 26.0, (ahead + beh) / 26.0
    rounds = np.ceil(np.log2(np.ceil(wbar / 2.0))) + 1
    np.testing.assert_allclose(extra[lost], np.maximum(t_a, t_e - 3.0) + 1.0 + rounds / 26.0, rtol=1e-12)
    np.testing.assert_allclose(behind[lost], p * beh, rtol=1e-12)
    # sec. 13: the queue is held at B_max until T_a + 1 (TCP alone's ACK clock), then drains to T_e
    tail = np.maximum(t_e - 1.0, 0.0)
    np.testing.assert_allclose(draining[lost], p * (tail + np.clip(t_a, 0.0, tail)), rtol=1e-12)
    assert (extra[~lost] == 0).all()
    assert extra[lost].min() > 1.0                 # the regeneration round at least


@pytest.mark.parametrize("kw", [dict(), dict(rate_ratio=0.1), dict(rate_ratio=1.0), dict(bmax=6, psi=2),
                                dict(feedback="instcap", bmax=10, delta=40)])
def test_timer_band_is_ordered_and_below_the_paper_cycle(kw):
    """The timer's cycle is at least one interval longer than III-B.4's, so its conservative bound
    is below the paper cycle's; the band stays ordered and at most 1."""
    t = markov.analyze(_sc(loss_cycle="timer", **kw))
    p = markov.analyze(_sc(**kw))
    assert 0.0 < t.conservative <= t.prediction <= t.optimistic <= 1.0
    assert t.conservative < p.conservative
    assert t.mean_cycle_length > p.mean_cycle_length


@pytest.mark.parametrize("rr,psi,bmax,sim", [(1.0, 20, 15, 0.8242), (0.5, 20, 15, 0.8137), (0.5, 2, 15, 0.7378)])
def test_timer_prediction_against_the_simulator(rr, psi, bmax, sim):
    """TCP alone, Delta 26, wmax 128, buffers above a third of the pipe (no loss in slow start,
    docs/validity.md mechanism 4): the cell simulator gives 0.8242 (constant capacity),
    0.8137 (rate ratio 0.5, psi 20) and 0.7378 (psi 2) (`tcpabr simulate --delta 26 --bmax 15
    --rate-ratio RR --psi PSI --wmax 128 --feedback none`, 4 x 2000 s, seed 0; half-widths
    0.000-0.004).  III-B.4's prediction is 2.2-5.3 % above; the timer's is within 1.5 %
    (docs/model.md sec. 15)."""
    r = markov.analyze(_sc(rate_ratio=rr, psi=psi, bmax=bmax, loss_cycle="timer"))
    paper = markov.analyze(_sc(rate_ratio=rr, psi=psi, bmax=bmax))
    assert abs(r.prediction - sim) / sim < 0.015
    assert abs(r.prediction - sim) < abs(paper.prediction - sim)


def test_slow_start_loss_remaps_the_regeneration_window():
    """Constant capacity, Delta 26, B_max 6 (below a third of the pipe): slow start to m = 17 sends
    rounds of 1, 2, 4, 8, 16; the round of 16 doubles 8 ACKs, a queue of 8 > 6, so it loses and
    regenerates at m' = 8 (whose last doubling, 4, fits).  With B_max 15 no window below 32 is
    remapped."""
    sc = _sc(rate_ratio=1.0, bmax=6, loss_cycle="timer")
    sk = skeleton_for(sc)
    sk2 = sk.with_slow_start_loss(sc.rate_matrix)
    changed = sk2.ls_m != sk.ls_m
    assert changed.any() and sk2.slow_start_time is not None
    pairs = set(zip(sk.ls_m[changed].tolist(), sk2.ls_m[changed].tolist()))
    assert (17, 8) in pairs
    for m, mp in pairs:
        L = int(np.ceil(np.log2(m)))
        first_fail = next(k for k in range(2, L + 2)
                          if (2 ** (k - 2) if k <= L else m - 2 ** (L - 1)) > 6)
        assert mp == max(2, 2 ** (first_fail - 2) if first_fail <= L else m // 2)
    assert (sk2.ls_m[~changed] == sk.ls_m[~changed]).all()
    big = _sc(rate_ratio=1.0, bmax=15, loss_cycle="timer")     # only windows m >= 32 overflow 15
    a, b = skeleton_for(big), skeleton_for(big).with_slow_start_loss(big.rate_matrix)
    assert a.ls_m[a.ls_m != b.ls_m].min() >= 32 and (a.ls_m[a.ls_m < 32] == b.ls_m[a.ls_m < 32]).all()


def test_slow_start_loss_against_the_simulator():
    """TCP alone at constant capacity, Delta 26, B_max 6: the cell simulator gives 0.5453, half of
    its timeouts in slow start (`tcpabr simulate --delta 26 --bmax 6 --rate-ratio 1 --wmax 128
    --feedback none --replications 4 --duration 2000`, seed 0).  III-B.4 says 0.7159 (+31 %); the
    timer cycle with the loss in slow start is within 3 %.  Over INSTCAP the ABR source paces
    slow start (docs/validity.md mechanism 4) and the rule is not applied."""
    r = markov.analyze(_sc(rate_ratio=1.0, bmax=6, loss_cycle="timer"))
    assert abs(r.prediction - 0.5453) / 0.5453 < 0.03
    assert r.conservative <= r.prediction <= r.optimistic
    sc = _sc(rate_ratio=1.0, bmax=6, feedback="instcap", loss_cycle="timer")
    assert markov.analyze(sc).prediction > 0.0


def test_timer_is_refused_with_sack():
    with pytest.raises(ValueError, match="loss_cycle='timer' is invalid with tcp='sack'"):
        _sc(loss_cycle="timer", tcp="sack")


def _slow_start_queue_replay(m: int) -> float:
    """The queue integral of slow start to ``m`` by a unit-time FIFO replay (service time 1):
    round 1 sends one packet; each ACK of a round releases two packets while the window is
    below ``m`` and one after; the ACKs of a round return one service time apart."""
    area, cwnd = 1.0, 1          # round 1: the retransmission alone, served in one unit
    acks = 1
    while cwnd < m:
        q = 0
        for j in range(acks):    # the ACK at time j: +2 (or +1 once cwnd reaches m), then one unit served
            add = 2 if cwnd < m else 1
            cwnd += add - 1
            q += add
            area += q            # the queue (service included) over [j, j + 1)
            q -= 1
        while q > 0:             # no more arrivals this round: the queue drains
            area += q
            q -= 1
        acks = cwnd
    return area


@pytest.mark.parametrize("m", [1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 26, 33, 64, 100])
def test_the_slow_start_queue_is_the_replay(m):
    """docs/model.md sec. 13 (timer cycle): the closed form of the slow-start rounds' queue
    equals a FIFO replay of the rounds (ACKs one service time apart, pairs while doubling)."""
    from tcpabr_model.markov.skeleton import slow_start_queue_area

    assert float(slow_start_queue_area(m)) == pytest.approx(_slow_start_queue_replay(m), abs=1e-9)


def test_the_slow_start_queue_goes_to_the_bottleneck_alone_and_to_the_source_over_instcap(monkeypatch):
    """docs/model.md sec. 13 (timer cycle): TCP alone's slow-start pairs queue at the
    bottleneck (``mean_queue`` grows, no source buffer); over INSTCAP they queue in the
    segmentation buffer (``mean_source_buffer`` grows, ``mean_queue`` does not); throughputs
    do not move."""
    from tcpabr_model.markov import skeleton as skmod

    def run(feedback, zero):
        skmod._CACHE.clear()
        if zero:
            monkeypatch.setattr(skmod.Skeleton, "slow_start_queue", lambda self, C: np.zeros(self.n_states))
        else:
            monkeypatch.undo()
        r = markov.analyze(markov.Scenario(delta=26, bmax=6, psi=20, rate_ratio=0.5, wmax=128,
                                           feedback=feedback, loss_cycle="timer"))
        assert r.loss_probability > 0
        return r

    for fb in ("none", "instcap"):
        without, with_ = run(fb, True), run(fb, False)
        assert with_.prediction == without.prediction and with_.optimistic == without.optimistic
        if fb == "none":
            assert with_.mean_queue > without.mean_queue and with_.mean_source_buffer == without.mean_source_buffer == 0
        else:
            assert with_.mean_source_buffer > without.mean_source_buffer and with_.mean_queue == without.mean_queue


@pytest.mark.parametrize("bmax", [10, 12, 20])
def test_timer_sojourn_at_constant_capacity_matches_the_cell_simulator(bmax):
    """TCP alone (timeout-only), constant capacity: one deterministic sawtooth, so one replication
    is exact.  The timer cycle's mean sojourn at the bottleneck (sec. 13: the loss interval, the
    queue held at B_max while the ACKs of the packets ahead of the loss keep arriving, its drain,
    the slow-start rounds) is within 3 % of the simulator's per-packet queueing delay (measured
    -1.0 / +0.2 / +0.2 % at B_max 10 / 12 / 20; -7.1 / -5.7 / -4.2 % with the queue drained
    linearly from the loss interval's end).  III-B.4's cycle (the default), with the same queue cut to
    its timeline, within 10 % (measured +3.4 / +1.8 / +2.5 % since it counts its L slow-start rounds and
    not the round of m, for which U = 3 + L has no time; +9.5 / +6.8 / +5.1 % with that round; -15.6 /
    -15.0 / -9.5 % when it counted nothing after the loss interval)."""
    from tcpabr_model.sim import TcpConfig, simulate
    from tcpabr_model.validity import embedded_sim_scenario

    a = markov.analyze(markov.Scenario(delta=40, bmax=bmax, psi=1e6, rate_ratio=1.0, feedback="none",
                                       loss_cycle="timer"))
    sc = embedded_sim_scenario(delta=40, bmax=bmax, psi=1e6, wmax=128, feedback="none", rate_ratio=1.0,
                               duration_units=2e4, tcp=TcpConfig(wmax=128))
    sim = simulate(sc, replications=1, seed=1).delay.queue.mean.mean / (500 / 100e3)
    assert a.mean_queueing_delay == pytest.approx(sim, rel=0.03)
    paper = markov.analyze(markov.Scenario(delta=40, bmax=bmax, psi=1e6, rate_ratio=1.0, feedback="none"))
    assert paper.mean_queueing_delay == pytest.approx(sim, rel=0.10)


# ------------------------------------------------ the held queue follows the next level (docs/model.md sec. 13)
def test_held_queue_weight_is_the_one_level_rule_when_the_level_stays():
    from tcpabr_model.markov.service import drain_queue_weight, held_queue_weight

    rng = np.random.default_rng(3)
    p = rng.uniform(0.0, 1.0, 50) * (rng.uniform(size=50) > 0.2)
    t_a, t_e = rng.uniform(0.0, 3.0, 50), rng.uniform(0.0, 4.0, 50)
    ri = rng.integers(0, 2, 50)
    got = held_queue_weight(p, t_a, t_e, ri, np.eye(2), np.array([40.0, 20.0]), 10.0)
    np.testing.assert_allclose(got, drain_queue_weight(p, t_a, t_e, True), rtol=1e-12, atol=1e-12)


def test_held_queue_weight_by_hand():
    """Loss interval at the low level (20 packets per interval), B_max 10, T_a 1.5, T_e 2.5: with the
    next level low (P 0.75) the queue is full for 1.5 intervals and falls linearly to 0 over the last
    0 (T_e - 1 = 1.5): 15 packet-intervals; with the next level high (P 0.25, 40 packets per interval)
    it falls by 20 per interval and is empty after half of one (2.5) and stays so: 2.5.  In units of
    B_max Delta / 2 = 5 packet-intervals: 0.75 x 3 + 0.25 x 0.5."""
    from tcpabr_model.markov.service import held_queue_weight

    P = np.array([[0.5, 0.5], [0.25, 0.75]])
    got = held_queue_weight(np.array([1.0]), np.array([1.5]), np.array([2.5]), np.array([1]), P,
                            np.array([40.0, 20.0]), 10.0)
    np.testing.assert_allclose(got, [0.75 * 3.0 + 0.25 * 0.5], rtol=0, atol=1e-12)


@pytest.mark.parametrize("cycle", ["paper", "timer"])
def test_the_next_level_moves_the_queue_and_not_the_throughput(cycle, monkeypatch):
    """Timeout-only TCP alone at psi 2: the held queue falls when the level rises, so the mean queue is
    lower than with the one-level rule (the rate chain not passed), and the bounds do not move."""
    from tcpabr_model.markov import skeleton as skm

    sc = _sc(loss_cycle=cycle, psi=2.0)
    a = markov.analyze(sc)
    sk = skeleton_for(sc)
    P = sk.chain(sc.rate_matrix, None)
    t_a, _, t_e = sk.recovery_times(sk.drain_sums(P, sk._served(), 8))
    lost = sk.p_loss > 0
    one, two = sk._queue_weight(sk.p_loss, t_a, t_e, None), sk._queue_weight(sk.p_loss, t_a, t_e, P)
    assert np.all(two[lost] <= one[lost] + 1e-12) and np.any(two[lost] < one[lost] - 1e-6)
    orig = skm.Skeleton._queue_weight
    monkeypatch.setattr(skm.Skeleton, "_queue_weight", lambda self, p, ta, te, P: orig(self, p, ta, te, None))
    b = markov.analyze(_sc(loss_cycle=cycle, psi=2.0, bmax=15))
    assert (a.optimistic, a.conservative, a.prediction) == (b.optimistic, b.conservative, b.prediction)
    assert b.mean_queue > a.mean_queue


def test_paper_cycle_over_abr_counts_the_slow_starts_pairs_in_the_source_buffer():
    """III-B.4's cycle over INSTCAP (timeout-only): the source buffer's time average is the timer
    cycle's slow-start pairs (analysis.slow_start_source) and the backlog held after the loss interval
    (analysis.abr_held_backlog) added to the loss-free and loss-interval trapezoids, renewal reward over
    the same cycles; the bounds do not depend on it."""
    from tcpabr_model.markov.analysis import abr_held_backlog, slow_start_source, stationary_distribution

    sc = _sc(feedback="instcap", psi=2.0, bmax=10, delta=40)
    a = markov.analyze(sc)
    sk = skeleton_for(sc)
    pi = stationary_distribution(sk, sc.rate_matrix).pi
    extra = slow_start_source(sk, sc.rate_matrix)
    assert np.all(extra >= 0.0) and np.all(extra[sk.p_loss == 0] == 0.0) and extra.max() > 0.0
    held = abr_held_backlog(sk, sc.rate_matrix, timer=False)[1]
    assert np.all(held >= 0.0) and np.all(held[sk.p_loss == 0] == 0.0) and held.max() > 0.0
    extra = extra + held
    base = float(pi @ sk.occupancy_rewards()["source"])
    want = (base + float(pi @ extra)) / (float(pi @ sk.u) * sc.epoch)
    assert a.mean_source_buffer == pytest.approx(want, rel=1e-9)
    assert a.mean_source_buffer > base / (float(pi @ sk.u) * sc.epoch)


@pytest.mark.parametrize("m", [1, 2, 3, 5, 8, 9, 26, 64, 100])
def test_iii_b4s_cycle_counts_its_l_rounds_only(m):
    """III-B.4's cycle (U = 3 + L) has no time for the round of window m: its slow-start queue is the
    replay's rounds up to window 2^(L-1), the timer cycle's L + 1 rounds less the last; for m a power
    of two that last round is the doubling to m itself."""
    from tcpabr_model.markov.skeleton import slow_start_queue_area

    L = int(np.ceil(np.log2(m))) if m > 1 else 0
    want = _slow_start_queue_replay(2 ** (L - 1)) if L >= 1 else 1.0
    assert float(slow_start_queue_area(m, last_round=False)) == pytest.approx(want, abs=1e-9)
    assert float(slow_start_queue_area(m, last_round=False)) <= float(slow_start_queue_area(m))


def test_paper_cycle_over_abr_with_fast_recovery_holds_then_prr():
    """III-B.4's cycle over INSTCAP with fast recovery (docs/model.md sec. 13, "Over ABR, the backlog
    held"): its timeouts' bottleneck drains from full at the loss interval's level, p B_max^2 r / 2
    (analysis.abr_loss_drain; r = 1 / 0.5 = 2 time units at the low level, 1 at the high) for their
    share of the losses; its fast recoveries hold both buffers and then PRR takes them down
    (service.abr_recovery_occupancy); both added to the renewal rewards of the two buffers."""
    from tcpabr_model.markov.analysis import abr_held_backlog, abr_loss_drain, stationary_distribution

    sc = _sc(feedback="instcap", psi=10.0, bmax=10, delta=40, tcp="sack")
    sk = skeleton_for(sc)
    r = np.where(sk.states[:, 3] == 0, 1.0, 2.0)
    np.testing.assert_allclose(abr_loss_drain(sk), sk.p_loss * 50.0 * r, rtol=1e-12)
    q, src = abr_held_backlog(sk, sc.rate_matrix, timer=False)
    assert np.all(q >= 0) and np.all(src >= 0) and np.all(q[sk.p_loss == 0] == 0) and src.max() > 0
    pi = stationary_distribution(sk, sc.rate_matrix).pi
    a = markov.analyze(sc)
    occ = sk.occupancy_rewards()
    norm = float(pi @ sk.u) * sc.epoch
    assert a.mean_queue == pytest.approx((float(pi @ occ["queue"]) + float(pi @ q)) / norm, rel=1e-9)
    assert a.mean_source_buffer == pytest.approx((float(pi @ occ["source"]) + float(pi @ src)) / norm, rel=1e-9)


def test_abr_recovery_occupancy_by_hand():
    """One level serving 20 packets per interval (Delta 20, B_max 10): 30 packets ahead of the lost one
    leave by T_a = 1.5; the segmentation buffer holds 4 and the bottleneck 10 until then; PRR takes the
    backlog 14 towards ceil(40 / 2) - 20 = 0 at half the service rate over the 10 time units left
    before the cycle's end (room 2): the source buffer first (empty after 8), then the bottleneck
    (10 -> 9)."""
    from tcpabr_model.markov.service import _service_sums, abr_recovery_occupancy

    P, served = np.array([[1.0]]), np.array([20.0])
    C = _service_sums(P, served, 8)
    one = np.array([1.0])
    q, a = abr_recovery_occupancy(C, P, np.array([0]), np.array([30.0]), np.array([40.0]), np.array([4.0]),
                                  0.5 * one, served, 10.0, 20.0, np.array([2.0]))
    assert q[0] == pytest.approx(0.5 * (20 * 10 * 1.5 + 10 * 8 + 0.5 * (10 + 9) * 2))
    assert a[0] == pytest.approx(0.5 * (20 * 4 * 1.5 + 0.5 * 4 * 8))


def test_abr_held_occupancy_by_hand():
    """docs/model.md sec. 13, "Over ABR, the backlog held": one level serving 20 packets per interval,
    the source sending 20; a_end = 5 held for T_a = 1.5 intervals then drained in 5 / 20 = 0.25, the
    bottleneck full (B_max 10) until the source stops (1.75) and drained in 10 / 20 = 0.5; areas in
    Delta x packets, times p = 0.5, and cut at the retransmission's service (``room``)."""
    from tcpabr_model.markov.service import abr_held_occupancy

    one = np.array([[1.0]])
    args = (np.array([0.5, 0.0]), np.array([0, 0]), np.array([5.0, 5.0]), np.array([1.5, 1.5]))
    q, a = abr_held_occupancy(*args, np.array([10.0, 10.0]), one, np.array([20.0]), np.array([20.0]), 10.0)
    assert a[0] == pytest.approx(0.5 * (5 * 1.5 + 25 / 40)) and a[1] == 0.0
    assert q[0] == pytest.approx(0.5 * (10 * 1.75 + 0.5 * 10 * 0.5)) and q[1] == 0.0
    q, a = abr_held_occupancy(*args, np.array([1.6, 1.6]), one, np.array([20.0]), np.array([20.0]), 10.0)
    assert a[0] == pytest.approx(0.5 * (5 * 1.5 + 5 * 0.1 - 0.5 * 5 * 0.01 / 0.25))   # cut in the drain
    assert q[0] == pytest.approx(0.5 * 10 * 1.6)                                        # cut while held
    # the next level twice as fast: the bottleneck (from the low level, 10 per interval) loses 10 in
    # the first interval and is empty from then on; the source buffer drains at 20 per interval
    P = np.array([[1.0, 0.0], [1.0, 0.0]])
    q, a = abr_held_occupancy(np.array([1.0]), np.array([1]), np.array([5.0]), np.array([1.5]), np.array([10.0]),
                              P, np.array([20.0, 10.0]), np.array([20.0, 10.0]), 10.0)
    assert q[0] == pytest.approx(0.5 * 10 * 1.0) and a[0] == pytest.approx(5 * 1.5 + 25 / 40)


@pytest.mark.parametrize("cycle, tcp", [("paper", "timeout-only"), ("timer", "timeout-only"), ("paper", "sack")])
def test_abr_held_backlog_moves_the_occupancy_only(cycle, tcp, monkeypatch):
    """Over INSTCAP the held backlog raises both buffers' time averages and leaves every throughput
    and bound unchanged (docs/model.md sec. 13)."""
    from tcpabr_model.markov import analysis as an

    sc = _sc(feedback="instcap", psi=3.0, bmax=10, delta=20, wmax=48, loss_cycle=cycle, tcp=tcp)
    a = markov.analyze(sc)
    monkeypatch.setattr(an, "abr_held_backlog", lambda sk, rates, timer: (np.zeros(sk.n_states),) * 2)
    b = markov.analyze(sc)
    assert (a.optimistic, a.conservative, a.prediction) == (b.optimistic, b.conservative, b.prediction)
    assert a.mean_queue > b.mean_queue and a.mean_source_buffer > b.mean_source_buffer


@pytest.mark.parametrize("kw", [dict(delta=26, bmax=15, psi=20, rate_ratio=0.1, wmax=128),
                                dict(delta=20, bmax=5, psi=50, rate_ratio=0.5, wmax=48, feedback="instcap"),
                                dict(delta=10, bmax=3, psi=5, rate_ratio=0.2, wmax=24)])
def test_recovery_times_once_per_loss_state_and_level_b_pair_are_every_states(kw):
    """``Skeleton.recovery_times`` evaluates each loss state and each (level, b) of the others once: the
    same numbers, bit for bit, as :func:`.service.recovery_times` over every state."""
    from tcpabr_model.markov.analysis import solved_skeleton
    from tcpabr_model.markov.service import recovery_times

    sc = markov.Scenario(loss_cycle="timer", **kw)
    sk = solved_skeleton(sc, skeleton_for(sc))
    C = sk.drain_sums(sk.chain(sc.rate_matrix, None), sk._served(), 16)
    _, lost, ri, wbar, ahead = sk._loss_expectations()
    assert 0 < lost.sum() < sk.n_states
    want = recovery_times(C, ri, ahead, wbar, float(sc.bmax), sk.outage_wait)
    for got, w in zip(sk.recovery_times(C), want):
        assert np.array_equal(got, w)
