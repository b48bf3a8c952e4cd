"""``service.abr_held_occupancy`` computes the held backlog only at the states that can lose and, per
next level, at those that can go there (benchmarks/README.md, "EFFCAP per round trip in the trace
study"): the same numbers, bit for bit, as the loop over every state and every level."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tcpabr_model.markov.service import _held_area, _held_path, _linear_drain, abr_held_occupancy


def _every_state(p, ri, a_end, t_a, room, P, served, src, bmax, curves=None):
    """The loop as it was: every state, every next level with any transition."""
    lost = p > 0
    room = np.maximum(room, 0.0)
    hold = np.clip(t_a, 0.0, room)
    c = served[ri]
    q_area, a_area = np.zeros(p.shape[0]), np.zeros(p.shape[0])
    for lvl in range(P.shape[0]):
        pl = P[ri, lvl]
        if not np.any(pl > 0):
            continue
        s_next = max(float(src[lvl]), 1e-12)
        tau_a = a_end / s_next
        a_lvl = a_end * hold + _linear_drain(a_end, tau_a, room - hold)
        t_h = np.minimum(hold + tau_a, room)
        held, qh = (_held_area(bmax, np.maximum(served[lvl] - c, 0.0), t_h) if curves is None
                    else _held_path(bmax, c, curves[lvl], t_h))
        tau_q = qh / max(float(served[lvl]), 1e-12)
        q_area += pl * (held + _linear_drain(qh, tau_q, room - t_h))
        a_area += pl * a_lvl
    return np.where(lost, p * q_area, 0.0), np.where(lost, p * a_area, 0.0)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(1, 6), n=st.integers(1, 40), patterns=st.booleans())
def test_the_subset_gives_the_loop_over_every_state_bit_for_bit(seed, k, n, patterns):
    rng = np.random.default_rng(seed)
    P = rng.random((k, k)) * (rng.random((k, k)) < 0.6)            # zeros: levels a state cannot reach
    P[np.arange(k), rng.integers(0, k, k)] += 0.1
    P /= P.sum(axis=1, keepdims=True)
    p = np.where(rng.random(n) < 0.5, rng.random(n), 0.0)             # states that cannot lose
    ri = rng.integers(0, k, n)
    a_end = np.floor(rng.random(n) * 30)
    t_a = rng.random(n) * 4
    room = rng.random(n) * 5 - 0.5
    served = np.floor(rng.random(k) * 20) + rng.integers(0, 2, k)       # an outage level serves 0
    src = np.floor(rng.random(k) * 20)
    curves = None
    if patterns:
        curves = np.cumsum(rng.random((k, 65)), axis=1)
        curves = np.hstack([np.zeros((k, 1)), curves[:, :-1]]) * (served[:, None] / np.maximum(curves[:, -2:-1], 1e-9))
    got = abr_held_occupancy(p, ri, a_end, t_a, room, P, served, src, 10.0, curves)
    want = _every_state(p, ri, a_end, t_a, room, P, served, src, 10.0, curves)
    for g, w in zip(got, want):
        assert np.array_equal(g, w)
    assert not np.any(got[0][p == 0]) and not np.any(got[1][p == 0])


def _old_levels(C, P, r0, ahead, c, served, bmax, room, curves):
    """``_recovery_levels`` as it was: every state for every next level with any transition."""
    from tcpabr_model.markov.service import _dup_ack_time
    for lvl in range(P.shape[0]):
        p = P[r0, lvl]
        if not np.any(p > 0):
            continue
        c1 = served[lvl]
        t_a = _dup_ack_time(C, ahead, c, lvl)
        t_h = t_a if room is None else np.minimum(t_a, room)
        held, q0 = (_held_area(bmax, np.maximum(c1 - c, 0.0), t_h, t_a) if curves is None
                    else _held_path(bmax, c, curves[lvl], t_h, t_a))
        yield p, c1, t_a, t_h, held, q0, (1.0 if room is None else np.clip(room - t_a, 0.0, 1.0))


def _old_recovery(C, P, ri, ahead, wbar, a_end, p_fr, served, bmax, delta, room, curves, abr):
    """``recovery_queue_area`` (``abr`` False) and ``abr_recovery_occupancy`` as they were."""
    from tcpabr_model.markov.service import _prr_area
    q_out, a_out = np.zeros(p_fr.shape[0]), np.zeros(p_fr.shape[0])
    idx = np.nonzero(p_fr > 0)[0]
    if idx.size == 0:
        return q_out, a_out
    r0, ah = ri[idx], ahead[idx]
    half = np.ceil(wbar[idx] / 2.0)
    c = served[r0]
    q_area, a_area = np.zeros(idx.size), np.zeros(idx.size)
    rm = None if room is None else room[idx]
    for p, c1, t_a, t_h, held, q0, frac in _old_levels(C, P, r0, ah, c, served, bmax, rm, curves):
        length = delta * frac
        if not abr:
            q_end = np.clip(half - c1, 0.0, bmax)
            q_area += p * (delta * held + _prr_area(q0, q_end, np.full(idx.size, delta / max(c1, 1.0)), length))
            continue
        a0 = a_end[idx]
        r1 = np.full(idx.size, delta / max(c1, 1.0))
        x_end = np.maximum(half - c1, 0.0)
        total = _prr_area(a0 + q0, x_end, r1, length)
        src = _prr_area(a0, np.maximum(x_end - q0, 0.0), r1, length)
        q_area += p * (delta * held + np.maximum(total - src, 0.0))
        a_area += p * (delta * a0 * t_h + src)
    q_out[idx], a_out[idx] = p_fr[idx] * q_area, p_fr[idx] * a_area
    return q_out, a_out


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(1, 6), n=st.integers(1, 40), patterns=st.booleans(),
       cut=st.booleans())
def test_the_fast_recovery_subset_gives_the_loop_over_every_state_bit_for_bit(seed, k, n, patterns, cut):
    """``service.recovery_queue_area`` (TCP alone) and ``abr_recovery_occupancy`` (over ABR), ``tcp='sack'``:
    per next level only at the states that go there, the same numbers as over every state."""
    from tcpabr_model.markov.service import _service_sums, abr_recovery_occupancy, recovery_queue_area
    rng = np.random.default_rng(seed)
    P = rng.random((k, k)) * (rng.random((k, k)) < 0.6)
    P[np.arange(k), rng.integers(0, k, k)] += 0.1
    P /= P.sum(axis=1, keepdims=True)
    served = np.floor(rng.random(k) * 20) + rng.integers(0, 2, k)
    C = _service_sums(P, served, 12)
    p_fr = np.where(rng.random(n) < 0.5, rng.random(n), 0.0)
    ri = rng.integers(0, k, n)
    ahead = np.floor(rng.random(n) * 40)
    wbar = ahead + np.floor(rng.random(n) * 40)
    a_end = np.floor(rng.random(n) * 30)
    room = rng.random(n) * 5 - 0.5
    curves = None
    if patterns:
        curves = np.cumsum(rng.random((k, 65)), axis=1)
        curves = np.hstack([np.zeros((k, 1)), curves[:, :-1]]) * (served[:, None] / np.maximum(curves[:, -2:-1], 1e-9))
    got = recovery_queue_area(C, P, ri, ahead, wbar, p_fr, served, 10.0, 20.0, room if cut else None, curves)
    want = _old_recovery(C, P, ri, ahead, wbar, a_end, p_fr, served, 10.0, 20.0, room if cut else None, curves, False)
    assert np.array_equal(got, want[0])
    got = abr_recovery_occupancy(C, P, ri, ahead, wbar, a_end, p_fr, served, 10.0, 20.0, room, curves)
    want = _old_recovery(C, P, ri, ahead, wbar, a_end, p_fr, served, 10.0, 20.0, room, curves, True)
    for g, w in zip(got, want):
        assert np.array_equal(g, w)
    assert not np.any(got[0][p_fr == 0]) and not np.any(got[1][p_fr == 0])


def _curve(rng, steps=64):
    return np.concatenate([[0.0], np.cumsum(rng.random(steps) * rng.uniform(0.0, 3.0))])


def _held_path_numpy(bmax: float, c: np.ndarray, curve: np.ndarray, t_h: np.ndarray, t_a: np.ndarray | None = None
                     ) -> tuple[np.ndarray, np.ndarray]:
    """``service._held_path`` as it was: step by step over every state at once, in numpy (the reference)."""
    t_a = t_h if t_a is None else t_a
    steps = curve.shape[0] - 1
    q = np.full(c.shape[0], float(bmax))
    area = np.zeros(c.shape[0])
    q_at = np.where(t_a <= 0.0, q, 0.0)
    for j in range(steps):
        q1 = np.clip(q + c / steps - (curve[j + 1] - curve[j]), 0.0, bmax)
        f = np.clip(t_h * steps - j, 0.0, 1.0)
        area += f * (q + 0.5 * f * (q1 - q)) / steps
        fa = np.clip(t_a * steps - j, 0.0, 1.0)
        q_at = np.where((t_a > j / steps) & (t_a <= (j + 1) / steps), q + fa * (q1 - q), q_at)
        q = q1
    return area + np.maximum(t_h - 1.0, 0.0) * q, np.where(t_a > 1.0, q, q_at)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 300), with_t_a=st.booleans())
def test_the_held_path_kernel_is_the_numpy_steps_bit_for_bit(seed, n, with_t_a):
    """``_held_path`` (numba, element by element) against its first form over every state at once,
    including times on the steps' grid, at 0, at 1 and beyond the first interval."""
    rng = np.random.default_rng(seed)
    curve = _curve(rng)
    c = rng.uniform(0.0, 30.0, n)
    c[rng.random(n) < 0.2] = 0.0
    grid = lambda x: np.where(rng.random(n) < 0.3, np.round(x * 64) / 64, x)  # noqa: E731
    t_h = grid(rng.uniform(-0.5, 4.0, n))
    t_a = grid(rng.uniform(-0.5, 4.0, n))
    t_a[rng.random(n) < 0.1] = 0.0
    t_a[rng.random(n) < 0.1] = 1.0
    bmax = float(rng.integers(1, 60))
    ta = t_a if with_t_a else None
    got, want = _held_path(bmax, c, curve, t_h, ta), _held_path_numpy(bmax, c, curve, t_h, ta)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(1, 6), n=st.integers(1, 60), patterns=st.booleans())
def test_the_held_queue_weight_at_the_loss_states_is_the_loop_over_every_state(seed, k, n, patterns):
    """``held_queue_weight`` evaluates only where ``p > 0``: the same numbers as over every state."""
    from tcpabr_model.markov.service import held_queue_weight

    rng = np.random.default_rng(seed)
    p = np.where(rng.random(n) < 0.5, rng.random(n), 0.0)
    ri = rng.integers(0, k, n)
    P = rng.random((k, k)) * (rng.random((k, k)) < 0.6)
    P[np.arange(k), np.arange(k)] += 0.1
    P /= P.sum(axis=1, keepdims=True)
    served = rng.uniform(0.0, 20.0, k)
    t_a, t_e = rng.uniform(0.0, 5.0, n), rng.uniform(0.0, 8.0, n)
    bmax = float(rng.integers(1, 40))
    curves = np.stack([_curve(rng) for _ in range(k)]) if patterns else None
    tail = np.maximum(t_e - 1.0, 0.0)
    hold = np.clip(t_a, 0.0, tail)
    c = served[ri]
    area = np.zeros(n)
    for lvl in range(k):          # the loop as it was: every state
        pl = P[ri, lvl]
        if not np.any(pl > 0):
            continue
        held, qh = (_held_area(bmax, np.maximum(served[lvl] - c, 0.0), hold) if curves is None
                    else _held_path(bmax, c, curves[lvl], hold))
        area += pl * (held + 0.5 * qh * (tail - hold))
    want = np.where(p > 0, p * area * (2.0 / bmax), 0.0)
    assert np.array_equal(held_queue_weight(p, t_a, t_e, ri, P, served, bmax, curves), want)
