"""Go-back-N's burst in the slow start of a timeout cycle (docs/model.md sec. 15b): the loss entries
of a :class:`~.skeleton.Skeleton` split by whether the slow start after the timeout overflows the
buffer when the cumulative ACK jumps over the segments received behind the holes.  Plain numpy on
the skeleton's arrays."""

from __future__ import annotations

import dataclasses

import numpy as np

from .skeleton import slow_start_failure, slow_start_pipe


def fail_last_round(sk, P: np.ndarray, q: np.ndarray):
    """``sk`` with each loss entry's slow start failing in its last round (``L + 1``,
    ``L = ceil(log2 m)``) with probability ``q[e]`` (one per entry): sec. 15's failure terms with
    ``k = L + 1``, i.e. the timer ``B_max / c + 3`` round trips later, ssthresh ``m' = max(2,
    floor(m / 2))``, the round's credit capped at a round trip of service and a full buffer, and the
    new slow start's.  The failed mass moves to code ``m'`` (entries merged by code, sorted); each
    state's loss mass is unchanged; ``u``, ``ss`` and ``slow_start_time`` take the expected
    differences.  ``P``: the rate chain per interval."""
    q = np.asarray(q, dtype=float)
    c = np.flatnonzero(q > 0.0)                  # the entries that can fail (few of the chain's)
    if not c.size:
        return sk
    mmax = sk.reg.shape[0] - 1
    n = sk.n_states
    rows_all = np.repeat(np.arange(n), np.diff(sk.ls_ptr))
    rows = rows_all[c]
    m = sk.ls_m[c].astype(np.int64)
    L = np.frexp(np.maximum(m, 1) - 1.0)[1].astype(np.int64)            # ceil(log2 m)
    pipe, rbar = slow_start_pipe(sk, P, sk.states[rows, 3], L)
    new_m = np.maximum(2, m // 2)
    d_u, credit, beyond = slow_start_failure(L + 1, L, new_m, pipe, rbar, float(sk.scenario_key[1]))
    w = sk.ls_prob[c] * q[c]
    keep_p = sk.ls_prob.copy()
    keep_p[c] -= w
    # merge: each state's entries by code, increasing (a code the state has gets the mass added)
    span_m = mmax + 1
    key = np.concatenate([rows_all * span_m + sk.ls_m, rows * span_m + new_m])
    uk, inv = np.unique(key, return_inverse=True)
    mass = np.bincount(inv, np.concatenate([keep_p, w]), minlength=uk.size)
    keep = mass > 0
    uk, mass = uk[keep], mass[keep]
    ptr = np.concatenate([[0], np.cumsum(np.bincount(uk // span_m, minlength=n))]).astype(sk.ls_ptr.dtype)
    sst = sk.slow_start_time if sk.slow_start_time is not None else np.zeros(n)
    return dataclasses.replace(
        sk, ls_ptr=ptr, ls_m=(uk % span_m).astype(sk.ls_m.dtype), ls_prob=mass,
        u=sk.u + np.bincount(rows, w * d_u, minlength=n), ss=sk.ss + np.bincount(rows, w * credit, minlength=n),
        slow_start_time=sst + np.bincount(rows, w * beyond, minlength=n))


def burst_failure(before, after) -> np.ndarray:
    """Per loss entry of ``before``, the probability that go-back-N's burst fails its slow start
    (docs/model.md sec. 15b): ``P(L >= B_max | loss, x)`` (the build's ``burst_loss`` over ``p_loss``)
    where ``m > B_max``, sec. 15's rule passes the entry (``after = before.with_slow_start_loss(P)``
    keeps its code) and ``(0, 0, floor(m / 2))`` is a state; 0 elsewhere or without ``burst_loss``
    (**choice**: independent of ``m`` given the state)."""
    if before.burst_loss is None:
        return np.zeros(before.ls_m.size)
    p = before.p_loss
    share = np.where(p > 0, before.burst_loss / np.where(p > 0, p, 1.0), 0.0)
    rows = np.repeat(np.arange(before.n_states), np.diff(before.ls_ptr))
    m = before.ls_m.astype(np.int64)
    has_reg = np.all(before.reg.reshape(before.reg.shape[0], -1) >= 0, axis=1)   # (0, 0, m') is a state
    passed = (after.ls_m == before.ls_m) & (m > int(before.scenario_key[1])) & has_reg[np.maximum(m // 2, 2)]
    return np.where(passed, np.minimum(share[rows], 1.0), 0.0)


def with_go_back_n_burst(before, after, P: np.ndarray):
    """``after`` (= ``before.with_slow_start_loss(P)``) with the slow starts that go-back-N's burst
    overflows (docs/model.md sec. 15b).  A loss of ``L`` arrivals in the loss interval leaves ``L``
    holes; after the timeout each filled hole is a new ACK (the window grows by one), and when the
    last one is filled the cumulative ACK jumps over the segments received behind it, so the sender
    sends a whole window of ``min(L + 1, m)`` packets back to back.  It overflows when that exceeds
    ``B_max``: with the probability :func:`burst_failure`, the slow start fails in its last round
    (:func:`fail_last_round`)."""
    if before.burst_loss is None:
        return after
    return fail_last_round(after, P, burst_failure(before, after))
