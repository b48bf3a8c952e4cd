"""The slow start of a timeout cycle, beyond III-B.3's loss-free one: the loss entries of a
:class:`~.skeleton.Skeleton` split by the round of the slow start that an outage level first
reaches (docs/model.md sec. 15a: :func:`with_slow_start_outage`), and by whether the slow start
overflows the buffer when go-back-N's cumulative ACK jumps over the segments received behind the
holes (sec. 15b: :func:`with_go_back_n_burst`).  Plain numpy on the skeleton's arrays."""

from __future__ import annotations

import dataclasses

import numpy as np

from .service import _service_sums, slow_start_failure, slow_start_pipe

# --------------------------------------------------------------------------------------------
# An outage in the slow start (sec. 15a)
# --------------------------------------------------------------------------------------------


def first_outage(P: np.ndarray, out: np.ndarray, start: int, rounds: int):
    """The first outage of a slow start whose round 1 is served at interval ``start`` (the level
    there one that serves), from level ``i`` at ``T_k``; round ``k`` is interval
    ``start + k - 1``.  Returns ``(f, f2, g1)``: ``f[i, k]`` the probability that the first
    interval at an outage level (``out``) is round ``k``'s, ``k = 2..rounds``; ``f2[i, k]`` that
    and the interval after it at an outage level too (a spell of two or more); ``g1[i, k, j]``
    that and the next interval at level ``j`` (a spell of one).  ``P``: the rate chain per
    interval; the columns ``k < 2`` are 0."""
    K = P.shape[0]
    keep = (~out).astype(float)
    a = np.linalg.matrix_power(P, start) * keep
    tot = a.sum(axis=1, keepdims=True)
    a = np.where(tot > 0, a / np.where(tot > 0, tot, 1.0), 0.0)
    f = np.zeros((K, rounds + 1))
    f2 = np.zeros((K, rounds + 1))
    g1 = np.zeros((K, rounds + 1, K))
    for k in range(2, rounds + 1):
        a = a @ P
        ao = a * out
        f[:, k] = ao.sum(axis=1)
        nxt = ao @ P
        f2[:, k] = (nxt * out).sum(axis=1)
        g1[:, k, :] = nxt * keep
        a = a * keep
    return f, f2, g1


def first_service(sk) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(level, phi, weight)`` over the non-empty patterns: each pattern's level, the time of its
    first opportunity as a fraction of the interval, and its weight: how long an interval at
    that level keeps its first ACK-clocked packet waiting."""
    pat_ptr, pat_w, opp_ptr, opp_t = sk.scenario_key[7]
    delta = float(sk.scenario_key[0])
    lev, phi, w = [], [], []
    for j in range(len(pat_ptr) - 1):
        for pp in range(pat_ptr[j], pat_ptr[j + 1]):
            if opp_ptr[pp + 1] > opp_ptr[pp]:
                lev.append(j)
                phi.append(opp_t[opp_ptr[pp]] / delta)
                w.append(pat_w[pp])
    return np.array(lev, dtype=np.int64), np.array(phi), np.array(w)


def _recovery_start(sk, P: np.ndarray, served: np.ndarray) -> np.ndarray:
    """The interval of the retransmission's service per state, ``max(3, ceil(max(T_a + 3, T_e)))``
    (:meth:`~.skeleton.Skeleton.recovery_times`, over as many intervals as every drain needs)."""
    t_a, _, t_e = sk.recovery_times(sk.drain_sums(P, served, 16))
    return np.maximum(3, np.ceil(np.maximum(t_a + 3.0, t_e) - 1e-9)).astype(np.int64)


def with_slow_start_outage(sk, P: np.ndarray):
    """``loss_cycle='timer'``, TCP alone, a chain with a level that serves nothing (docs/model.md
    sec. 15a): the skeleton whose loss entries follow the first outage of their slow start.

    Slow start to ``m`` (the entry's code, after :meth:`~.skeleton.Skeleton.with_slow_start_loss`)
    sends round ``k`` (window ``2^(k-1)``, ``m`` in the last of its ``L + 1`` rounds) in the
    ``k``-th interval from the retransmission's service, ``max(T_a + 3, T_e)`` of sec. 15, at
    whose interval the link serves (**choice**).  When an outage level first comes in round
    ``k >= 2`` and the ``2^(k-2)`` ACKs that sent the round are fewer than the pipe (the expected
    packets per interval over the slow start, as in ``with_slow_start_loss``), the round's packets
    wait out the outage.  The timer expires when the ACK gap passes two round trips: an outage of
    two intervals or more, or of one when the first opportunity after it (:func:`first_service`)
    comes later than the last ACK of round ``k - 1`` came in its interval, ``2^(k-2) rbar``; the
    probability of that is ``p_k``.  Then ssthresh becomes half the window ``2^(k-1)`` and the
    connection regenerates at ``(0, 0, m')``, ``m' = max(2^(k-2), 2)``, where ``m' < m`` and the
    chain has that code.  The entry's probability ``q`` splits: ``q (1 - sum_k p_k)`` keeps ``m``,
    ``q p_k`` goes to ``m'`` with
    ``k`` rounds in place of ``L + 1`` (eq. 20's ``U`` of ``m'`` and the time beyond it as
    ``with_slow_start_loss`` counts them) and the ``2^k - 1`` packets of rounds ``1..k`` in place
    of eq. 17's ``2^L - 1``; the timeout is spurious, and go-back-N sends round ``k``'s ``2^(k-1)``
    packets again (:attr:`~.skeleton.Skeleton.duplicates`, sec. 15d).  The outage's own time is the
    chain's, at the outage level's intervals: the cycle does not add it (**choice**: the regeneration law
    stays ``Q^U``, which knows nothing of a wait).  Outages after the first, an outage in round 1 (the
    timer fires again with ssthresh held) and rounds above the pipe change nothing (**flags**).
    Unchanged where no level serves nothing.
    """
    served = sk._served()
    out = served <= 0.0
    if not out.any() or out.all() or sk.recovery is not None or sk.ls_m.size == 0:
        return sk
    n, K = sk.n_states, sk.n_levels
    counts = np.diff(sk.ls_ptr)
    rows = np.repeat(np.arange(n, dtype=np.int32), counts)
    m = sk.ls_m
    L = np.frexp(np.maximum(m, 1) - 1.0)[1].astype(np.int16)              # ceil(log2 m)
    R = int(L.max(initial=0)) + 1
    # per (level, L): the pipe and rbar; per (start interval, level): the first-outage law; an
    # entry reads them through one small index (the arrays per entry stay few: chains of
    # millions of states carry tens of millions of loss entries)
    C = _service_sums(P, served, R + 4)
    Ls = np.arange(R)
    pipe = np.maximum((C[np.minimum(4 + Ls, R + 4)] - C[3]).T / (Ls + 1), 1e-3)          # [K, R]
    rbar = np.minimum(1.0 / pipe, 1.0)
    starts, su = np.unique(_recovery_start(sk, P, served), return_inverse=True)
    laws = [first_outage(P, out, int(n0), R) for n0 in starts]
    f2 = np.stack([x[1] for x in laws]).reshape(-1, R + 1)                 # [start * K + level, k]
    g1 = np.stack([x[2] for x in laws])                                    # [start, level, k, next level]
    lev, phi, wphi = first_service(sk)
    g = np.repeat((su.ravel() * K + sk.states[:, 3]).astype(np.int32), counts)
    lvl = np.repeat(sk.states[:, 3].astype(np.int16), counts)
    keep_p = sk.ls_prob.copy()
    code_list = sorted({max(2 ** (k - 2), 2) for k in range(2, R + 1)})
    new_mass = np.zeros(n * len(code_list))
    d_u, d_ss, d_t, d_dup = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)
    has_reg = sk.regenerations()
    for k in range(2, R + 1):
        mk = max(2 ** (k - 2), 2)
        if mk >= sk.reg.shape[0] or not has_reg[mk]:   # (0, 0, m') must be a state
            continue
        # a spell of two or more outage intervals times out; a spell of one only where the first
        # opportunity after it comes later than the last ACK of round k - 1 came in its interval
        wait = 2.0 ** (k - 2) * rbar                                        # [K, R]: that ACK's time
        late = np.zeros((K, K, R))                                          # [next level, level, L]
        np.add.at(late, lev, wphi[:, None, None] * (phi[:, None, None] > wait[None, :, :]))
        tk = f2[:, k].reshape(-1, K)[:, :, None] + np.einsum("uij,jir->uir", g1[:, :, k, :], late)
        c = np.flatnonzero((k <= L + 1) & (mk < m) & (2.0 ** (k - 2) < pipe[lvl, L]))
        fk = tk.reshape(-1, R)[g[c], L[c]]
        c, fk = c[fk > 0], fk[fk > 0]
        if not c.size:
            continue
        pk = sk.ls_prob[c] * fk
        keep_p[c] -= pk
        Lc, rb, rc = L[c], rbar[lvl[c], L[c]], rows[c]
        du = (3 + int(np.frexp(mk - 1.0)[1])) - (3 + Lc)                     # U(m') - U(m), eq. 20
        d_u += np.bincount(rc, pk * du, minlength=n)
        d_t += np.bincount(rc, pk * (k * (1 + rb) - (Lc + 1) * (1 + rb) - du), minlength=n)
        d_ss += np.bincount(rc, pk * ((2.0 ** k - 1) - (2.0 ** Lc - 1)), minlength=n)
        d_dup += np.bincount(rc, pk * 2.0 ** (k - 1), minlength=n)    # sec. 15d: round k, delivered, sent again
        new_mass += np.bincount(rc.astype(np.int64) * len(code_list) + code_list.index(mk), pk,
                                minlength=new_mass.size)
    nz = np.flatnonzero(new_mass > 0)
    if not nz.size:
        return sk
    # merge the new (state, code) masses into the entries, each state's codes in increasing order;
    # a code the state already has gets the mass added (one regeneration law per code)
    span = int(max(int(m.max()), code_list[-1])) + 1
    old_key = rows.astype(np.int64) * span + m
    if np.any(np.diff(old_key) < 0):    # with_slow_start_loss remaps codes in place: sort each state's
        order = np.argsort(old_key, kind="stable")
        old_key, m, keep_p = old_key[order], m[order], keep_p[order]
    new_rows = nz // len(code_list)
    new_key = new_rows * span + np.asarray(code_list)[nz % len(code_list)]
    pos = np.searchsorted(old_key, new_key)
    hit = (pos < old_key.size) & (old_key[np.minimum(pos, old_key.size - 1)] == new_key)
    np.add.at(keep_p, pos[hit], new_mass[nz[hit]])
    ins = ~hit
    ls_m = np.insert(m, pos[ins], (new_key[ins] % span).astype(m.dtype))
    ls_prob = np.insert(keep_p, pos[ins], new_mass[nz[ins]])
    ls_ptr = sk.ls_ptr + np.concatenate([[0], np.cumsum(np.bincount(new_rows[ins], minlength=n))]).astype(
        sk.ls_ptr.dtype)
    return dataclasses.replace(
        sk, ls_ptr=ls_ptr, ls_m=ls_m, ls_prob=ls_prob, u=sk.u + d_u, ss=sk.ss + d_ss,
        slow_start_time=d_t if sk.slow_start_time is None else sk.slow_start_time + d_t,
        duplicates=None if sk.duplicates is None else sk.duplicates + d_dup)


# --------------------------------------------------------------------------------------------
# Go-back-N's burst in the slow start (sec. 15b)
# --------------------------------------------------------------------------------------------


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
    has_reg = before.regenerations()   # (0, 0, m') is a state
    half = np.maximum(m // 2, 2)
    # a regeneration threshold beyond the chain's (W_max of 1 or 2: thresholds up to 1) is no state
    reg = (half < has_reg.size) & has_reg[np.minimum(half, has_reg.size - 1)]
    passed = (after.ls_m == before.ls_m) & (m > int(before.scenario_key[1])) & reg
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


def with_outage_wait(sk, P: np.ndarray):
    """``loss_cycle='timer'`` on a chain with a level that serves nothing (docs/model.md sec. 15c): the
    skeleton whose timeout cycles wait out an outage in their own time and regenerate from the first
    level that serves (``outage_wait``); the skeleton itself where no level is an outage."""
    from .service import first_serving

    F, h = first_serving(P, sk._served())
    return sk if not h.any() else dataclasses.replace(sk, outage_wait=(F, h))
