"""Fast retransmit and recovery in the Markov renewal engine (Scenario(tcp='sack'),
docs/model.md sec. 12, issue 25)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _embedded_mc import assert_agrees_with_embedded_mc
from tcpabr_model.capacity import from_arrays
from tcpabr_model.closed_forms import reno_efficiency
from tcpabr_model.markov import Scenario, analyze, skeleton_for
from tcpabr_model.markov.kernels.interval import MODE_ABR, MODE_TCP_ALONE, interval_outcome
from tcpabr_model.markov.kernels.recovery import add_recovery_windows, code_m, code_u, loss_interval_counts
from tcpabr_model.markov.solvers import stationary_distribution

Q3 = np.array([[0.8, 0.15, 0.05], [0.1, 0.8, 0.1], [0.05, 0.25, 0.7]])


def test_timeout_only_is_the_papers_engine_to_the_last_bit():
    """The default TCP is unchanged by the fast-recovery code (sec. 12.5)."""
    r = analyze(Scenario(delta=40, bmax=10, psi=20))
    # stored values; 1e-12 (issue 23): the solve's last bits depend on the CPU's BLAS kernels
    assert r.optimistic == pytest.approx(0.8998547915483416, rel=1e-12, abs=0)
    assert r.conservative == pytest.approx(0.8528197848199813, rel=1e-12, abs=0)
    assert r.fast_recovery_share is None and r.scenario["tcp"] == "timeout-only"


def test_a_recovery_the_timer_interrupts_regenerates_at_half_its_window():
    """(M8''), docs/model.md sec. 12.1: with enough duplicate ACKs but the retransmission behind
    the segmentation buffer (kind 0), the recovery sets ssthresh = floor(w / 2) and the timer then
    halves that: code ceil(floor(w / 2) / 2) with eq. 12's cycle; without enough duplicate ACKs
    the paper's timeout, ceil(w / 2); kind 1 is fast recovery, floor(w / 2) in two round trips."""
    mmax = 64
    pmf = np.zeros(8)
    pmf[0] = 1.0      # k = 0: the window reached is w_base
    for w, n_lost, kind, want in [(21, 5, 0, 5), (20, 5, 0, 5), (3, 0, 0, 1), (2, 0, 0, 1), (21, 19, 0, 11),
                                  (21, 5, 1, mmax + 10), (64, 10, 0, 16), (64, 62, 0, 32)]:
        lossm = np.zeros(3 * mmax + 1)
        q_fr, ew_fr, q_to, ew_to, ess, eul, mlo, mhi = add_recovery_windows(
            1.0, pmf, 0, 0, w, 128, lossm, 10**9, -1, mmax, n_lost, kind)
        assert np.flatnonzero(lossm).tolist() == [want], (w, n_lost, kind)
        assert mlo == mhi == want
        assert eul == code_u(want, mmax)
        assert (q_fr, q_to) == ((1.0, 0.0) if kind else (0.0, 1.0))


def test_loss_codes_give_window_and_cycle_length():
    mmax = 64
    assert [code_m(m, mmax) for m in (1, 5, 64)] == [1, 5, 64]
    assert [code_u(m, mmax) for m in (1, 2, 5, 64)] == [3, 4, 6, 9]     # 3 + ceil(log2 m), eq. 12
    assert (code_m(mmax + 7, mmax), code_u(mmax + 7, mmax)) == (7, 2)     # fast recovery, 2 round trips
    assert (code_m(2 * mmax + 64, mmax), code_u(2 * mmax + 64, mmax)) == (64, 3)


@settings(max_examples=150, deadline=None)
@given(abr=st.booleans(), a=st.integers(0, 20), b=st.integers(0, 12), d=st.integers(0, 40), n=st.integers(0, 6),
       slow=st.booleans(), fast_src=st.booleans(), bmax=st.integers(1, 12))
def test_loss_interval_conserves_the_window(abr, a, b, d, n, slow, fast_src, bmax):
    """b + J + J2 + L + a1 = W + N, and J is the first loss of the reference replay."""
    delta = 20.0
    b = min(b, bmax)
    mode = MODE_ABR if abr else MODE_TCP_ALONE
    if not abr:
        a = 0
    n = min(n, d)
    if a + b + d == 0:
        d = 1
    r = 2.0 if slow else 1.0
    s = 1.0 if fast_src else 2.0
    work = np.empty(400)
    j, j2, lost, a1 = loss_interval_counts(mode, a, b, d, n, r, s, bmax, delta, work, 0.0)
    assert b + j + j2 + lost + a1 == a + b + d + n
    assert min(j, j2, lost, a1) >= 0
    hit, jl, *_ = interval_outcome(mode, a, b, d, n, r, s, bmax, delta, work, 0.0)
    assert hit == (lost > 0)
    if hit:
        assert jl == j


@pytest.mark.parametrize("fb", ["instcap", "none", "constant"])
def test_sack_chain_is_stochastic_and_solvers_agree(fb):
    extra = {"source_rate": 0.8} if fb == "constant" else {}
    sc = Scenario(delta=20, bmax=6, psi=4, wmax=48, feedback=fb, tcp="sack", **extra)
    sk = skeleton_for(sc)
    P = sk.transition_matrix(sc.rate_matrix)   # raises ModelError unless every row sums to 1
    assert P.data.min() >= 0
    a = stationary_distribution(sk, sc.rate_matrix, method="structured")
    b = stationary_distribution(sk, sc.rate_matrix, method="sparse-direct")
    assert np.abs(a.pi - b.pi).sum() < 1e-10
    assert sk.ls_m.max() > sk.mmax   # some losses are recovered by fast retransmit


@pytest.mark.parametrize("feedback,psi", [("instcap", 1.5), ("instcap", 8.0), ("instcap", 20.0), ("none", 3.0)])
def test_sack_agrees_with_embedded_monte_carlo(feedback, psi):
    """The Monte Carlo samples the process with its own loss replay and never reads the
    matrix: the uncapped optimistic and the conservative rewards within 4 half-widths."""
    assert_agrees_with_embedded_mc(Scenario(delta=40, bmax=10, psi=psi, feedback=feedback, tcp="sack"),
                                   n_cycles=200_000, seed=7)


@pytest.mark.parametrize("fb", ["instcap", "none"])
def test_sack_three_levels_agree_with_embedded_monte_carlo(fb):
    sc = Scenario(delta=10, bmax=3, wmax=16, capacity=from_arrays([1.0, 0.6, 0.3], Q3, epoch=10.0),
                  feedback=fb, tcp="sack")
    assert_agrees_with_embedded_mc(sc, n_cycles=100_000, seed=3)


@pytest.mark.parametrize("delta", [40, 80])
@pytest.mark.parametrize("beta", [0.25, 0.5, 0.75, 1.0])
def test_constant_capacity_matches_lakshman_madhow(delta, beta):
    """TCP alone at constant capacity: the prediction within 3 % of Lakshman-Madhow's
    fast-recovery efficiency and the band around it (measured: within 1.5 %)."""
    bmax = int(round(beta * delta))
    r = analyze(Scenario(delta=delta, bmax=bmax, psi=20, rate_ratio=1.0, feedback="none", tcp="sack",
                         wmax=4 * delta))
    lm = reno_efficiency(pipe=delta, buffer=bmax, wmax=4 * delta)
    assert abs(r.prediction - lm) <= 0.03 * lm
    assert r.conservative - 1e-9 <= lm <= r.optimistic + 0.005
    assert r.fast_recovery_share > 0.99


@settings(max_examples=12, deadline=None)
@given(psi=st.sampled_from([1.5, 3.0, 10.0, 50.0]), bmax=st.integers(2, 8), fb=st.sampled_from(["instcap", "none"]))
def test_sack_bounds_are_ordered(psi, bmax, fb):
    r = analyze(Scenario(delta=12, bmax=bmax, psi=psi, wmax=32, feedback=fb, tcp="sack"))
    assert 0.0 < r.conservative <= r.prediction + 1e-12 <= r.optimistic + 2e-12 <= 1.0 + 2e-12
    assert 0.0 <= r.fast_recovery_share <= 1.0


def test_sack_is_refused_where_it_is_not_modelled():
    with pytest.raises(ValueError, match="tcp='reno' is invalid"):
        Scenario(tcp="reno")


# --- occupancy and delay (docs/model.md sec. 13, issue 26 item 2) -----------------------------

@settings(max_examples=10, deadline=None)
@given(psi=st.sampled_from([1.5, 5.0, 50.0]), bmax=st.integers(2, 8), fb=st.sampled_from(["instcap", "none"]),
       tcp=st.sampled_from(["timeout-only", "sack"]))
def test_occupancy_is_within_the_buffers_and_littles_law_holds(psi, bmax, fb, tcp):
    r = analyze(Scenario(delta=12, bmax=bmax, psi=psi, wmax=32, feedback=fb, tcp=tcp))
    assert 0.0 <= r.mean_queue <= bmax
    assert 0.0 <= r.mean_source_buffer <= 32
    if fb == "none":
        assert r.mean_source_buffer == 0.0 and r.mean_source_delay == 0.0
    thr = r.prediction * r.mean_capacity
    assert r.mean_queueing_delay == pytest.approx(r.mean_queue / thr, rel=1e-12)


def test_rate_feedback_moves_the_queue_into_the_source():
    """Over INSTCAP the window that TCP alone keeps in the bottleneck waits in the ABR
    source instead (the paper's point, Sec. V): more in A, less in B."""
    alone = analyze(Scenario(delta=40, bmax=10, psi=200, feedback="none"))
    abr = analyze(Scenario(delta=40, bmax=10, psi=200, feedback="instcap"))
    assert abr.mean_waiting_delay < 0.1 * alone.mean_waiting_delay   # B holds about the one in service
    assert abr.mean_source_buffer > 10 * alone.mean_queue


def test_no_loss_constant_source_below_the_link_keeps_the_bottleneck_empty():
    """A constant ABR source below the low rate never queues at the bottleneck: at each epoch
    at most the packet in service is there, and the delay through it is under one service time."""
    r = analyze(Scenario(delta=20, bmax=4, psi=5, wmax=16, feedback="constant", source_rate=0.5))
    assert r.loss_probability == 0.0
    assert r.mean_queue <= 1.0
    assert r.mean_queueing_delay <= 2.0   # one service time at the low rate (2 time units)


@settings(max_examples=300, deadline=None)
@given(a=st.integers(0, 30), b=st.integers(0, 12), d=st.integers(0, 40), n=st.integers(0, 6),
       r=st.sampled_from([0.5, 1.0, 2.0, 3.0]), s=st.sampled_from([0.5, 1.0, 2.0]), bmax=st.integers(1, 12),
       delta=st.sampled_from([10.0, 20.0, 37.0]))
def test_abr_after_loss_closed_form_is_the_replay(a, b, d, n, r, s, bmax, delta):
    """The O(1) form the enumeration uses over ABR equals the replay of the whole interval."""
    from tcpabr_model.markov.kernels.interval import fill_arrivals
    from tcpabr_model.markov.kernels.recovery import abr_after_loss, abr_departure_at_loss

    b = min(b, bmax)
    n = min(n, d)
    if a + b + d == 0:
        a = 1
    work = np.empty(400)
    j, j2, lost, _ = loss_interval_counts(MODE_ABR, a, b, d, n, r, s, bmax, delta, work, 0.0)
    if lost == 0 or bmax < 2:   # one place: the enumeration replays (the server idles after each departure)
        return
    arrivals = fill_arrivals(MODE_ABR, a, d, n, s, delta, work, 0.0)
    tau0 = abr_departure_at_loss(b, r, s, bmax, delta)
    assert abr_after_loss(arrivals, j, r, s, tau0) == (j2, lost)


@settings(max_examples=400, deadline=None)
@given(b=st.integers(0, 12), d=st.integers(1, 40), n=st.integers(0, 6), r=st.sampled_from([0.5, 1.0, 2.0, 3.0]),
       s=st.sampled_from([0.5, 1.0, 2.0]), bmax=st.integers(1, 12), delta=st.sampled_from([10.0, 20.0, 37.0]),
       phase=st.sampled_from([0.0, 1.0]))
def test_tcp_alone_after_loss_is_the_replay(b, d, n, r, s, bmax, delta, phase):
    """The O(log d + N) form the enumeration uses for TCP alone equals the full replay."""
    from tcpabr_model.markov.kernels.interval import tcp_alone_first_loss
    from tcpabr_model.markov.kernels.recovery import tcp_alone_after_loss

    b = min(b, bmax)
    n = min(n, d)
    g = s if d * s <= delta + 1e-9 else delta / d
    work = np.empty(400)
    j, j2, lost, _ = loss_interval_counts(MODE_TCP_ALONE, 0, b, d, n, r, s, bmax, delta, work, phase)
    if lost == 0:
        return
    first = tcp_alone_first_loss(b, d - n, g, r, bmax, phase)
    assert tcp_alone_after_loss(b, d, n, g, r, bmax, delta, first, phase, work) == (j, j2, lost)


def _brute_queue_integral(b, arrivals, r, delta):
    """Time in the bottleneck within (0, Delta] summed over packets (FIFO Lindley recursion)."""
    c = 0.0
    total = 0.0
    for _ in range(b):
        c += r
        total += min(c, delta)
    for t in arrivals:
        c = max(c, t) + r
        total += min(c, delta) - t
    return total


@settings(max_examples=300, deadline=None)
@given(abr=st.booleans(), a=st.integers(0, 30), b=st.integers(0, 14), d=st.integers(1, 50), n=st.integers(0, 6),
       r=st.sampled_from([0.5, 1.0, 2.0, 3.0, 1 / 0.3, 1 / 0.7]), s=st.sampled_from([0.5, 1.0, 2.0, 1 / 0.3, 1 / 0.7]),
       delta=st.sampled_from([10.0, 20.0, 37.0, 40.0]), phase=st.sampled_from([0.0, 1.0]))
def test_queue_integral_closed_forms_are_the_replay(abr, a, b, d, n, r, s, delta, phase):
    """docs/model.md sec. 13: the O(1) / O(N) integrals of B over a loss-free interval equal the
    FIFO replay of the same arrivals (no buffer limit: the integral is needed without loss)."""
    from tcpabr_model.markov.kernels.interval import fill_arrivals
    from tcpabr_model.markov.kernels.occupancy import abr_queue_integral, tcp_alone_queue_integral

    n = min(n, d)
    work = np.empty(400)
    if abr:
        k = fill_arrivals(MODE_ABR, a, d, n, s, delta, work, 0.0)
        got = abr_queue_integral(b, k, r, s, delta)
    else:
        k = fill_arrivals(MODE_TCP_ALONE, 0, d, n, s, delta, work, phase)
        g = s if d * s <= delta + 1e-9 else delta / d
        got = tcp_alone_queue_integral(b, d, n, g, r, delta, phase)
    assert got == pytest.approx(_brute_queue_integral(b, work[:k], r, delta), rel=1e-9, abs=1e-9)


# ------------------------------------------------- the queue a fast recovery keeps (docs/model.md sec. 13)
def test_recovery_queue_area_by_hand():
    from tcpabr_model.markov.service import recovery_queue_area

    C = 40.0 * np.arange(9.0)[:, None]          # one level, 40 packets per interval: r = 1 time unit
    ri = np.zeros(3, dtype=np.int64)
    # T_a = 20 / 40 = 0.5: B_max Delta T_a = 10 x 40 x 0.5 = 200; w / 2 = 25 < the pipe 40, so the
    # queue drains from 10 to 0 at 1/2 per time unit over tau = 20: 10 x 20 - 20^2 / 4 = 100
    got = recovery_queue_area(C, np.ones((1, 1)), ri, np.array([20.0, 20.0, 20.0]), np.array([50.0, 50.0, 96.0]),
                              np.array([0.3, 0.0, 1.0]), np.array([40.0]), 10.0, 40.0)
    # w / 2 = 48: q_end = 8, tau = 2 x (10 - 8) = 4: 200 + 40 - 4 + 8 x 36 = 524
    np.testing.assert_allclose(got, [0.3 * 300.0, 0.0, 524.0], rtol=0, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(bmax=st.integers(1, 60), pipe=st.integers(1, 80), w=st.floats(2.0, 300.0), ahead=st.floats(0.0, 150.0))
def test_recovery_queue_area_is_the_integral_of_its_path(bmax, pipe, w, ahead):
    from tcpabr_model.markov.service import recovery_queue_area

    delta = 40.0
    C = float(pipe) * np.arange(201.0)[:, None]
    r = delta / pipe
    t_a = ahead / pipe
    q_end = min(max(math.ceil(w / 2.0) - pipe, 0.0), bmax)
    t = (np.arange(200_000) + 0.5) * (delta / 200_000)          # midpoint rule over the recovery's round trip
    path = np.maximum(bmax - t / (2.0 * r), q_end)
    want = bmax * delta * t_a + path.sum() * (delta / 200_000)
    got = recovery_queue_area(C, np.ones((1, 1)), np.zeros(1, dtype=np.int64), np.array([ahead]), np.array([w]),
                              np.array([1.0]), np.array([float(pipe)]), float(bmax), delta)[0]
    assert got == pytest.approx(want, rel=1e-6, abs=1e-6)
    assert 0.0 <= got <= bmax * delta * (t_a + 1.0) + 1e-9


def test_recovery_queue_reads_j_and_w_of_the_fast_recovery():
    """At constant capacity (Delta 40, B_max 10) the chain's only loss state is (0, 9, 40): the loss comes
    with the last of the interval's 40 ACKs, so J = 40 packets are admitted ahead of it and the window
    reached is 51.  The recovery's queue must read those (it once read the timeout share's J and w,
    which are 0 when every loss is a fast recovery, and kept the full queue 0.2 instead of 1.2 intervals)."""
    from tcpabr_model.markov.service import recovery_expectations

    sk = skeleton_for(Scenario(delta=40, bmax=10, psi=1e6, rate_ratio=1.0, feedback="none", tcp="sack",
                               ca_increment="counter"))
    ahead, wbar = recovery_expectations(sk.states[:, 1], sk.recovery, sk.recovery_j)
    lossy = np.nonzero(sk.recovery[0] > 0.5)[0]
    assert lossy.size and all(tuple(sk.states[i, :3]) == (0, 9, 40) for i in lossy)
    np.testing.assert_allclose(ahead[lossy], 49.0, rtol=0, atol=1e-9)
    np.testing.assert_allclose(wbar[lossy], 51.0, rtol=0, atol=1e-9)
    assert np.all(ahead[sk.recovery[0] == 0] == sk.states[sk.recovery[0] == 0, 1])


def test_recovery_queue_drains_when_the_next_level_is_faster_by_hand():
    """Loss interval at the low level (20 packets per interval, r = 2), B_max 10, 30 packets ahead:
    next level low (P 0.75): T_a = 1.5, the queue full for 1.5 intervals (600) and PRR's drain from
    10 to 0 at 1/4 per time unit over 40 (10 x 40 - 40^2 / 8 = 200); next level high (P 0.25, 40
    packets per interval): T_a = 1 + 10 / 40 = 1.25, the queue falls by 20 packets per interval (1/2 per
    time unit) and is empty after half of one (10 x 20 / 2 = 100), and PRR starts from an empty queue at the high
    level, whose pipe holds half the window (0)."""
    from tcpabr_model.markov.service import _service_sums, recovery_queue_area

    P = np.array([[0.5, 0.5], [0.25, 0.75]])
    served = np.array([40.0, 20.0])
    C = _service_sums(P, served, 16)
    got = recovery_queue_area(C, P, np.array([1]), np.array([30.0]), np.array([36.0]), np.array([1.0]), served,
                              10.0, 40.0)
    np.testing.assert_allclose(got, [0.75 * (600.0 + 200.0) + 0.25 * 100.0], rtol=0, atol=1e-9)


@settings(max_examples=60, deadline=None)
@given(bmax=st.integers(1, 40), c0=st.integers(1, 60), c1=st.integers(1, 60), w=st.floats(2.0, 200.0),
       ahead=st.floats(0.0, 150.0))
def test_recovery_queue_is_the_integral_of_its_path_on_two_levels(bmax, c0, c1, w, ahead):
    """Loss interval at level 0, every later interval at level 1 (P = [[0, 1], [0, 1]]): the area is the
    integral of the path q(t) = min(B_max, W - departures in (t - Delta, t]) with W = B_max + c0 (the
    window the ACK clock keeps) until the duplicate ACKs return, then PRR towards ceil(w / 2) - c1."""
    from tcpabr_model.markov.service import _service_sums, recovery_queue_area

    delta, n = 40.0, 100_000
    P = np.array([[0.0, 1.0], [0.0, 1.0]])
    served = np.array([float(c0), float(c1)])
    C = _service_sums(P, served, 200)
    t_a = ahead / c0 if ahead <= c0 else 1.0 + (ahead - c0) / c1
    dt = delta * t_a / n
    t = (np.arange(n) + 0.5) * dt
    q = np.clip(bmax - np.maximum(c1 - c0, 0) * np.minimum(t / delta, 1.0), 0.0, bmax)   # the held queue
    q0 = np.clip(bmax - np.maximum(c1 - c0, 0) * min(t_a, 1.0), 0.0, bmax)
    r1, q_end = delta / c1, min(max(math.ceil(w / 2.0) - c1, 0.0), bmax)
    u = (np.arange(n) + 0.5) * (delta / n)
    prr = np.maximum(q0 - u / (2 * r1), q_end) if q0 >= q_end else np.minimum(q0 + u / r1, q_end)
    want = q.sum() * dt + prr.sum() * (delta / n)
    got = recovery_queue_area(C, P, np.zeros(1, dtype=np.int64), np.array([ahead]), np.array([w]), np.array([1.0]),
                              served, float(bmax), delta)[0]
    assert got == pytest.approx(want, rel=1e-4, abs=1e-3)


def test_recovery_queue_is_cut_to_the_cycles_timeline_by_hand():
    """One level, 40 packets per interval (r = 1), B_max 10, 48 packets ahead: T_a = 1.2; w = 96, so
    PRR takes the queue to q_end = 48 - 40 = 8 in 2 x (10 - 8) = 4 time units (area 10 x 4 - 4^2 / 4 =
    36) and holds it.  With the cycle's U = 3 (room 2) the queue is full for 1.2 intervals (480) and PRR
    runs for 0.8 of its round trip, 32 time units (36 + 8 x 28 = 260); with room 1 the path stops at the
    cycle's end, full for 1 interval (400); with room 1.2, 480; without room the whole round trip
    (480 + 36 + 8 x 36 = 804)."""
    from tcpabr_model.markov.service import recovery_queue_area

    C = 40.0 * np.arange(9.0)[:, None]
    args = (C, np.ones((1, 1)), np.zeros(3, dtype=np.int64), np.full(3, 48.0), np.full(3, 96.0), np.ones(3),
            np.array([40.0]), 10.0, 40.0)
    np.testing.assert_allclose(recovery_queue_area(*args, np.array([2.0, 1.0, 1.2])), [740.0, 400.0, 480.0],
                               rtol=0, atol=1e-9)
    np.testing.assert_allclose(recovery_queue_area(*args), [804.0] * 3, rtol=0, atol=1e-9)


def test_recovery_room_is_the_cycles_rounds_after_the_loss_interval():
    """At constant capacity (Delta 40, B_max 10) the loss comes with the interval's last ACK, so no
    packet is admitted behind the hole (J2 = 0) and the recovery takes U = 3 round trips, (M9): 2
    after the loss interval; 0 where no fast recovery follows."""
    sk = skeleton_for(Scenario(delta=40, bmax=10, psi=1e6, rate_ratio=1.0, feedback="none", tcp="sack",
                               ca_increment="counter"))
    room = sk.recovery_room()
    lossy = sk.recovery[0] > 0.5
    np.testing.assert_allclose(room[lossy], 2.0, rtol=0, atol=1e-12)
    assert np.all(room[sk.recovery[0] == 0] == 0.0)
    assert np.all((room >= 0.0) & (room <= 2.0))


@pytest.mark.parametrize("bmax", [10, 12])
def test_sack_sojourn_at_constant_capacity_matches_the_cell_simulator(bmax):
    """TCP alone, constant capacity: the simulated `sack` runs one deterministic sawtooth, so one
    replication is exact.  The analysis' mean sojourn at the bottleneck (sec. 13, the fast recovery's
    queue included) is within 5 % of the simulator's per-packet queueing delay (measured: -0.5 % at
    B_max 10, 0.0 % at 12; -11.5 % and -9.8 % before the recovery's queue read J and w)."""
    from tcpabr_model.sim import TcpConfig, simulate
    from tcpabr_model.validity import embedded_sim_scenario

    a = analyze(Scenario(delta=40, bmax=bmax, psi=1e6, rate_ratio=1.0, feedback="none", tcp="sack"))
    sc = embedded_sim_scenario(delta=40, bmax=bmax, psi=1e6, wmax=128, feedback="none", rate_ratio=1.0,
                               duration_units=2e4, tcp=TcpConfig(variant="sack", wmax=128))
    r = simulate(sc, replications=1, seed=1)
    unit = 500 / 100e3
    sim = r.delay.queue.mean.mean / unit
    assert a.mean_queueing_delay == pytest.approx(sim, rel=0.05)


def _replay_queue_area(b, n, s, r, bmax, delta):
    """Integral over (0, Delta] of a FIFO queue (service r, B_max places with the packet in service)
    holding b at 0 and offered arrivals at 0, s, 2s, ... (n of them); arrivals to a full queue are
    dropped.  Returns (area, index of the first drop or -1)."""
    deps = [r * (k + 1) for k in range(b)]          # departure times of the packets present
    area, first = 0.0, -1
    for i in range(n):
        t = i * s
        deps = [c for c in deps if c > t + 1e-12]
        if len(deps) >= bmax:
            first = i if first < 0 else first
            continue
        deps.append((deps[-1] if deps else t) + r)
        area += min(deps[-1], delta) - t
    return area + sum(min(r * (k + 1), delta) for k in range(b)), first


@pytest.mark.parametrize("b,bmax,s,r", [(0, 10, 1.0, 2.0), (4, 10, 1.0, 2.0), (2, 12, 0.5, 1.0), (0, 5, 1.0, 4.0)])
def test_loss_interval_queue_fills_and_stays_full(b, bmax, s, r):
    """Over ABR a loss interval's queue rises from b to B_max at the first drop, t_l = J s, and stays
    full to the interval's end (arrivals faster than service): Delta B_max - t_l (B_max - b) / 2, the
    replay's integral to within the staircase (one packet over the rise); the trapezoid that the rule
    replaced, Delta (b + B_max) / 2, is short by (Delta - t_l)(B_max - b) / 2."""
    delta = 40.0
    n = int(delta / s)
    area, first = _replay_queue_area(b, n, s, r, bmax, delta)
    assert first >= 0
    t_l = first * s
    rule = delta * bmax - 0.5 * t_l * (bmax - b)
    assert abs(rule - area) <= t_l + r + 1e-9
    assert rule - 0.5 * delta * (b + bmax) == pytest.approx(0.5 * (delta - t_l) * (bmax - b))


@pytest.mark.parametrize("kw", [dict(feedback="instcap"), dict(feedback="none"), dict(feedback="none", tcp="sack"),
                                dict(feedback="none", tcp="sack", ack_clock="spread"),
                                dict(feedback="instcap", switch_time="uniform"),
                                dict(feedback="none", switch_time="uniform")])
def test_loss_interval_queue_is_between_the_trapezoid_and_a_full_queue(kw):
    """Every feedback and TCP, with and without service patterns ('uniform': the patterns' mean spacings)."""
    sk = skeleton_for(Scenario(delta=40, bmax=10, psi=5, **kw))
    lost = sk.p_loss > 0
    b = sk.states[:, 1].astype(float)
    got = sk._loss_interval_queue()
    trap = 0.5 * 40.0 * (b + 10.0)
    assert np.all(got[lost] >= trap[lost] - 1e-9) and np.all(got[lost] <= 400.0 + 1e-9)
    assert np.any(got[lost] > trap[lost] + 1.0)         # some losses come early in the interval


@settings(max_examples=40, deadline=None)
@given(bmax=st.integers(1, 30), c0=st.floats(0.0, 60.0), c1=st.floats(0.0, 60.0), t_a=st.floats(0.0, 3.0))
def test_held_path_on_an_even_curve_is_the_closed_form(bmax, c0, c1, t_a):
    """The held queue stepped along the next interval's service curve (service patterns) equals the
    closed form of an even rate when the curve is a line, to the grid's step."""
    from tcpabr_model.markov.service import _held_area, _held_path

    steps = 512
    curve = c1 * np.linspace(0.0, 1.0, steps + 1)
    a_path, q_path = _held_path(float(bmax), np.array([c0]), curve, np.array([t_a]))
    a_form, q_form = _held_area(float(bmax), np.array([max(c1 - c0, 0.0)]), np.array([t_a]))
    assert a_path[0] == pytest.approx(a_form[0], abs=2.0 * bmax / steps + 1e-9)
    assert q_path[0] == pytest.approx(q_form[0], abs=1e-6 + abs(c1 - c0) / steps)


def test_held_path_waits_for_the_switch_inside_the_next_interval():
    """A next interval that serves at the low level's 20 packets per interval until its middle and at 40
    after: from B_max 10 with the loss interval's 20 leaving the window, the queue stays full for half an
    interval and then falls by 20 per interval, empty at its end: 10 x 0.5 + 10 x 0.5 / 2 = 7.5 less up to
    half a packet over the interval, the staircase of whole opportunities (each takes one packet that the
    arrivals put back before the next); an even rate of 30 would give 10 x 1 / 2 = 5."""
    from tcpabr_model.markov.service import _held_path, service_curves

    opp = np.r_[np.arange(10) * 2.0 + 1.0, 20.0 + np.arange(20) * 1.0 + 0.5]     # 10 in the first half, 20 after
    curves = service_curves(((0, 1), (1.0,), (0, opp.size), tuple(opp)), 40.0, 400)
    area, q = _held_path(10.0, np.array([20.0]), curves[0], np.array([1.0]))
    assert 7.0 <= area[0] <= 7.5 and 0.0 <= q[0] <= 0.5
