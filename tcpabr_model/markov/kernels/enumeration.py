"""Enumeration of the reachable embedded states and their psi-independent transitions
(docs/model.md sections 5 and 5a; numba kernels, plain arrays out).

Everything here depends on (Delta, B_max, rate levels, W_max, feedback) but not on psi:
for each state x and window increment N we know the next (A, B, D) or the loss and its
loss-window law; the rate chain (which carries psi) only multiplies in later
(``assemble.py``).  :func:`build_skeleton` walks the states breadth-first from X_0 and
costs O(nonzeros): the interval outcome of every (state, N) comes in O(1) over ABR and
O(log d) for TCP alone, and the window laws only on their significant range (both in
``interval.py``).  States are indexed by an open-addressing hash set of int64 keys.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .occupancy import abr_queue_integral, pattern_abr_queue_integral, tcp_alone_queue_integral
from .interval import (EPS, MODE_ABR, abr_table_entry, add_loss_mass, add_loss_windows, growth_window,
                        increment_law, loss_window_moments, pattern_abr_entry, silence_at, tcp_alone_first_loss,
                        tcp_alone_outcome)
from .patterns import ack_opportunity_table, pattern_tcp_alone_prefix, pattern_tcp_alone_resume
from .recovery import (DUPTHRESH, N_CODE_KINDS, abr_after_loss, abr_go_back_n_copies, add_recovery_windows, code_m,
                       go_back_n_copies, loss_interval_counts, pattern_loss_counts, pattern_tcp_alone_loss_prefix,
                       pattern_tcp_alone_loss_resume, tcp_alone_after_loss)
from .stateset import (_add_state, _allowed_pairs, _fill_tail, _grow, _grow2n, _known_regenerations, _over_budget,
                       _put_state, _rehash_for, _slot, _zkey)


MW_CAP = 1 << 20     # entries of the per-state (J, N) loss-window cache at most (else computed at each use)
POOL_CAP = 1 << 22   # terms of the per-state binomial cache at most (else computed at each use)


@njit(cache=True, nogil=True)
def build_skeleton(mode, constant_s, delta, bmax, wmax, r_vals, s_vals, a0, b0, d0, max_states,
                   count_only=False, progress=None, ack_phase=0.0, pat_ptr=None, pat_w=None, opp_ptr=None,
                   opp_t=None, fast_recovery=False, mem=None, burst=False, counter=False, allow=None, spread=False,
                   silence=None):
    """Breadth-first enumeration from X_0 = (a0, b0, d0, level 0, S index 0).

    ``r_vals``: bottleneck service time per level (K = ``len(r_vals)``); ``s_vals``: source service time per
    S index (r_vals for INSTCAP / TCP alone; all 1/mu for a constant source, ``constant_s``, S always 0).

    Returns the arrays of ``Skeleton`` (skeleton.py), an overflow flag, the numbers of (state, N) loss-free
    and (state, m) loss entries; ``count_only=True`` stores no transitions (the count is exact).  ``progress``
    (int64[2]): states processed and found, for a bar polled from another thread (the kernel releases the GIL).
    ``ack_phase`` (TCP alone): ACKs at ``(i + ack_phase) g`` (sec. 3); ``spread``: ``g = Delta / d`` whatever S,
    and no ACK pattern (``ack_clock='spread'``, sec. 3a).

    Service inside the interval (``pat_ptr`` given; docs/model.md sec. 11): level ``k`` serves at the
    times of its patterns ``pat_ptr[k]..pat_ptr[k + 1] - 1`` (weights ``pat_w``, times ``opp_t[opp_ptr[p]:
    opp_ptr[p + 1]]``); each (state, N, pattern) is one entry, ``ev_j`` holds E[J 1{loss}] and, for TCP
    alone, ``occ_q`` the queue's integral (sec. 13).  Without patterns: sections 5-5a, number for number.

    ``fast_recovery`` (``tcp='sack'``, sec. 12): each loss outcome is replayed to the end of its interval
    and split into fast-recovery and timeout cycles; ``ls_m`` holds loss-event codes (``code_m``,
    ``code_u``) and a per-state array ``fr`` is returned, its columns P(FR | x), E[c 1{FR} | x] for the
    conservative, prediction and optimistic credits c of sec. 12 and E[J 1{FR} | x] (sec. 13).

    ``mem`` (float64[5], optional; docs/model.md sec. 5a item 10): the build stops (``overflow``) before a
    state whose processing starts above the memory budget (``stateset._over_budget``).  ``burst`` (the
    timeout-only TCP alone under ``loss_cycle='timer'``, docs/model.md sec. 15b): the loss interval is
    replayed to its end as with ``fast_recovery``; ``fr``'s first column holds E[1{L >= B_max} 1{loss} | x],
    L the arrivals lost in the loss interval.  ``counter``: an ACK counter for eq. 1's coins (sec. 18).  ``allow``
    (bool[K, K]; sec. 10): no state ``(R, S)`` where not ``allow[S, R]`` (``stateset._fill_tail``).  ``silence``
    (float64[n_S], patterns only; sec. 11b): P(timeout | z = 1, d > 0) per S, a silence of two round trips.
    """
    nlev = r_vals.shape[0]
    patterned = pat_ptr is not None
    mmax = (wmax + 1) // 2
    ncodes = N_CODE_KINDS * mmax if fast_recovery else mmax
    cap = 1024
    hkeys = np.full(4096, -1, dtype=np.int64)
    hvals = np.empty(4096, dtype=np.int64)
    st = np.zeros((cap, 6), dtype=np.int64)   # A, B, D, R, S and z (service patterns: no ACK last interval)
    reg = -np.ones((mmax + 1, nlev, nlev), dtype=np.int64)

    k0 = _zkey(a0, b0, d0, 0, 0, 0, bmax, wmax, nlev, patterned)
    st, hkeys, hvals = _add_state(st, hkeys, hvals, _slot(hkeys, k0), k0, 0, a0, b0, d0, 0, 0)
    n_states = 1

    store = not count_only
    ncap = 4096 if store else 1
    nl_prob = np.empty(ncap, dtype=np.float64)
    # loss-free targets (sec. 5a item 10): an entry's next states differ only in the next level R', so an
    # entry stores the int32 id of its tail (A', B', D', S', z); tail_tab[tail, R'] is the state index
    nl_tail = np.empty(ncap, dtype=np.int32)
    tail_tab = np.empty((1024 if store else 1, nlev), dtype=np.int32)
    tkeys = np.full(4096, -1, dtype=np.int64)
    tvals = np.empty(4096, dtype=np.int64)
    n_tails = 0
    nl_ptr = np.zeros(cap + 1 if store else 1, dtype=np.int64)
    n_nl = 0
    ls_prob = np.empty(ncap, dtype=np.float64)
    ls_m = np.empty(ncap, dtype=np.int64)
    ls_ptr = np.zeros(cap + 1 if store else 1, dtype=np.int64)
    n_ls = 0
    p_loss = np.zeros(cap if store else 1, dtype=np.float64)
    ev_post = np.zeros(cap if store else 1, dtype=np.float64)
    ev_ss = np.zeros(cap if store else 1, dtype=np.float64)
    eu = np.zeros(cap if store else 1, dtype=np.float64)
    ev_j = np.zeros(cap if store else 1, dtype=np.float64)
    q_exact = store    # E[integral of B over the interval 1{no loss} | x] (sec. 13)
    occ_q = np.zeros((cap if q_exact else 1, 2), dtype=np.float64)   # and E[D 1{timeout} | x] (sec. 15d)
    tail = fast_recovery or burst      # replay the loss interval to its end (J2, L)
    fcap = cap if (store and tail) else 1
    fr = np.zeros((fcap, 5), dtype=np.float64)   # P(FR | x), E[c 1{FR} | x] for the three credits, E[J 1{FR} | x]

    pmf_n = np.empty(wmax + 2, dtype=np.float64)
    pmf_k = np.empty(4 * wmax + int(delta) + bmax + 8, dtype=np.float64)
    lossm = np.zeros(ncodes + 1, dtype=np.float64)
    work = np.empty(int(math.floor(delta / min(r_vals.min(), s_vals.min()) + EPS)) + 2 * wmax + 8
                    if tail else 1)
    n_rs = 1 if constant_s else nlev
    pair_r, pair_s = _allowed_pairs(allow, nlev, n_rs)   # the (R, S) a regeneration state can have
    # ABR: (i_L, K) per (b, R level, S index), filled on first use
    tab_il = np.full((bmax + 1, nlev, n_rs), -2, dtype=np.int64)
    tab_k = np.zeros((bmax + 1, nlev, n_rs), dtype=np.int64)
    # fast recovery over ABR: the next departure after the first loss, filled with (i_L, K)
    tab_nd = np.full((bmax + 1, nlev, n_rs) if fast_recovery else (1, 1, 1), np.inf)
    # early refusal (docs/model.md sec. 5): a saturated ABR state whose successor keeps its
    # (B, D, R, S) pattern proves the whole run a1..W_max - b - d of that pattern reachable
    steady_a = np.full((bmax + 1, nlev, n_rs), -1, dtype=np.int64)
    n_proven = 0
    npat = pat_w.shape[0] if patterned else 1
    cur_key = np.empty(256, dtype=np.int64)
    ptab_il = np.full((bmax + 1, npat, n_rs), -2, dtype=np.int64)
    ptab_k = np.zeros((bmax + 1, npat, n_rs), dtype=np.int64)
    # TCP alone with patterns: per ACK pattern of the current (state, pattern), the replay of the single ACKs
    # shared by every N (patterns.pattern_tcp_alone_prefix)
    nq = 1
    if patterned and mode != MODE_ABR:
        for lv in range(nlev):
            if pat_ptr[lv + 1] - pat_ptr[lv] > nq:
                nq = pat_ptr[lv + 1] - pat_ptr[lv]
    pre = np.empty((nq, wmax + 2 if (patterned and mode != MODE_ABR) else 1, 3), dtype=np.int64)
    pre_loss = np.empty(nq, dtype=np.int64)
    # TCP alone with patterns: ACK times, the queue's integral before each ACK, opportunity time sums
    at_t = np.empty((nq, wmax + 1 if (patterned and mode != MODE_ABR) else 1), dtype=np.float64)
    pre_area = np.empty((nq, wmax + 2 if (patterned and mode != MODE_ABR) else 1), dtype=np.float64)
    cs = np.zeros(1, dtype=np.float64)
    atab = np.empty((0, 0, 0), dtype=np.int64)
    if opp_t is not None:
        cs = np.concatenate((np.zeros(1), np.cumsum(opp_t)))
        atab = ack_opportunity_table(opp_ptr, opp_t, mode != MODE_ABR)   # TCP alone: ACK times merged once
    jt = np.empty((nq, wmax + 1 if (patterned and mode != MODE_ABR) else 1), dtype=np.int64)
    # fast recovery: the same for the whole loss interval (recovery.pattern_tcp_alone_loss_prefix)
    pre2 = np.empty((nq, wmax + 2 if (patterned and mode != MODE_ABR and tail) else 1, 5), dtype=np.int64)
    pre2_ok = np.zeros(nq, dtype=np.bool_)
    # per state, filled on first use, valid while the stamp is the state's index (the numbers of every use):
    # the law of Binomial(b + J, 1/W) by b + J (bpool[bc_off + k], k = bc_lo..bc_hi), the loss-window laws
    # by (J, N) (timeouts only: interval.loss_window_moments), the loss-free entries by (A, B, D) (patterns)
    bc_stamp = np.full(bmax + 2 * wmax + 8, -1, dtype=np.int64)   # b + J <= bmax + wmax
    bc_off = np.empty(bc_stamp.shape[0], dtype=np.int64)
    bc_lo = np.empty(bc_stamp.shape[0], dtype=np.int64)
    bc_hi = np.empty(bc_stamp.shape[0], dtype=np.int64)
    bpool = np.empty(min(4096, POOL_CAP), dtype=np.float64)
    mw_stamp = np.full(min(4096, MW_CAP), -1, dtype=np.int64)
    mw_f = np.empty((mw_stamp.shape[0], 3), dtype=np.float64)
    mw_m = np.empty((mw_stamp.shape[0], 2), dtype=np.int64)
    mk_keys = np.full(256, -1, dtype=np.int64)
    mk_val = np.empty(256, dtype=np.int64)
    cur_slot = np.empty(256, dtype=np.int64)

    i = 0
    overflow = False
    while i < n_states:
        if mem is not None and _over_budget(mem, n_states, n_nl, n_ls):
            overflow = True    # stopped at the memory budget (mem[4] = 1): the caller refuses the chain
            break
        if store and i + 1 >= nl_ptr.shape[0]:
            newcap = 2 * nl_ptr.shape[0]
            nl_ptr = _grow(nl_ptr, newcap)
            ls_ptr = _grow(ls_ptr, newcap)
            p_loss = _grow(p_loss, newcap)
            ev_post = _grow(ev_post, newcap)
            ev_ss = _grow(ev_ss, newcap)
            eu = _grow(eu, newcap)
            ev_j = _grow(ev_j, newcap)
            if q_exact:
                occ_q = _grow2n(occ_q, newcap)
            if tail:
                fr = _grow2n(fr, newcap)
        a, b, d, ri, si, z = st[i, 0], st[i, 1], st[i, 2], st[i, 3], st[i, 4], st[i, 5]
        w0 = a + b + d
        r = r_vals[ri]
        s = delta + 1.0 if spread and mode != MODE_ABR else s_vals[si]   # spread: d s > Delta, g = Delta / d
        pinc = 1.0 / w0
        nlo, nhi = increment_law(d, w0, wmax, pmf_n, counter)
        nn = nhi - nlo + 1
        bp_n = 0

        mlo = ncodes + 1  # loss-event codes touched: lossm[mlo..mhi] (lossm is zero elsewhere)
        mhi = 0
        pl = v_post = v_ss = u_loss = v_j = v_q = 0.0
        klo = 0
        khi = -1
        f_p = f_cons = f_pred = f_opt = f_j = 0.0
        v_dup = 0.0   # sec. 15d: go-back-N's duplicates after the timeouts, E[D 1{timeout} | x]
        p_lo = pat_ptr[ri] if patterned else 0
        p_hi = pat_ptr[ri + 1] if patterned else 1
        z1 = 1 if (patterned and d == 0) else 0   # no ACK returns in this interval
        ent0 = n_nl         # this state's loss-free entries start here (merged by (A, B, D), sec. 11)
        n_cur = 0
        # sec. 11: a second round trip without an ACK: the retransmission timer (2 RTT) expires; a loss of
        # window w = W (no ACK, no growth) and its timeout cycle; sec. 11b: with probability silence[S] where
        # ACKs return after one round trip without (the silence across the epochs is two round trips long)
        qs = (1.0 if d == 0 else silence_at(silence, si)) if (patterned and z == 1) else 0.0
        if qs > 0.0:
            pmf_k[0] = 1.0
            ew, ess, eul, mlo, mhi = add_loss_windows(qs, pmf_k, 0, 0, w0, wmax, lossm, mlo, mhi)
            pl, v_post, v_ss, u_loss, v_dup = qs, qs * ew, qs * ess, qs * eul, qs * w0   # sec. 15d: D = W
            if d == 0:
                p_hi = p_lo           # no interval outcome
        ack_patterned = patterned and mode != MODE_ABR and not spread   # TCP alone: S is the ACK clock
        q_lo = pat_ptr[si] if ack_patterned else 0
        q_hi = pat_ptr[si + 1] if ack_patterned else 1
        nout = (p_hi - p_lo) * nn * (q_hi - q_lo)   # room for every outcome, grown here, not in the loops
        if store and n_nl + nout + 2 > nl_prob.shape[0]:
            nl_prob = _grow(nl_prob, n_nl + nout + 2)
            nl_tail = _grow(nl_tail, nl_prob.shape[0])
        if store and n_tails + nout > tail_tab.shape[0]:
            tail_tab = _grow2n(tail_tab, n_tails + nout)
        tkeys, tvals = _rehash_for(tkeys, tvals, n_tails + nout)
        if patterned and nout > cur_key.shape[0]:
            cur_key = _grow(cur_key, nout)
            cur_slot = _grow(cur_slot, nout)
        if patterned and 2 * (nout + 1) > mk_keys.shape[0]:
            sz = mk_keys.shape[0]
            while 2 * (nout + 1) > sz:
                sz *= 2
            mk_keys = np.full(sz, -1, dtype=np.int64)
            mk_val = np.empty(sz, dtype=np.int64)
        if n_states + nout * nlev > st.shape[0]:
            st = _grow2n(st, n_states + nout * nlev)
        hkeys, hvals = _rehash_for(hkeys, hvals, n_states + nout * nlev)
        # the caches of the loss windows: J <= jl_max in this state (a + d + N packets sent)
        jl_max = a + d + nhi
        need = (jl_max + 1) * nn
        if need > mw_stamp.shape[0] and need <= MW_CAP:
            mw_stamp = np.full(need, -1, dtype=np.int64)
            mw_f = np.empty((need, 3), dtype=np.float64)
            mw_m = np.empty((need, 2), dtype=np.int64)
        mw_ok = need <= mw_stamp.shape[0]
        need = (jl_max + 1) * (b + jl_max + 1)
        if need > bpool.shape[0] and bpool.shape[0] < POOL_CAP:
            bpool = np.empty(min(need, POOL_CAP), dtype=np.float64)
        for pp in range(p_lo, p_hi):
            qw = pat_w[pp] * (1.0 - qs) if patterned else 1.0
            # per-(state, pattern) interval data shared by every N
            if mode == MODE_ABR and patterned:
                m_arr = int(math.floor(delta / s + EPS))
                il = ptab_il[b, pp, si]
                if il == -2:
                    il, kk_dep = pattern_abr_entry(b, opp_t, opp_ptr[pp], opp_ptr[pp + 1], s, bmax, delta)
                    ptab_il[b, pp, si] = il
                    ptab_k[b, pp, si] = kk_dep
                kdep = ptab_k[b, pp, si]
                lost_single = 0
                g = 0.0
            elif mode == MODE_ABR:
                m_arr = int(math.floor(delta / s + EPS))
                il = tab_il[b, ri, si]
                if il == -2:
                    il, kk_dep, nd = abr_table_entry(b, r, s, bmax, delta)
                    tab_il[b, ri, si] = il
                    tab_k[b, ri, si] = kk_dep
                    if fast_recovery:
                        tab_nd[b, ri, si] = nd
                kdep = tab_k[b, ri, si]
                lost_single = 0
                g = 0.0
            else:
                m_arr = 0
                il = -1
                kdep = 0
                g = s
                if d * s > delta + EPS:
                    g = delta / d
                lost_single = 0 if patterned else tcp_alone_first_loss(b, d, g, r, bmax, ack_phase)
                if patterned:
                    for qq in range(q_lo, q_hi):
                        a_lo, a_hi = (opp_ptr[qq], opp_ptr[qq + 1]) if ack_patterned else (0, 0)   # no ACK pattern
                        pre_loss[qq - q_lo] = pattern_tcp_alone_prefix(b, d, g, opp_t, opp_ptr[pp], opp_ptr[pp + 1],
                                                                       bmax, ack_phase, a_lo, a_hi,
                                                                       d - nhi, d - nlo, pre, jt, qq - q_lo, at_t,
                                                                       pre_area, cs, atab, (pp, qq))
                        pre2_ok[qq - q_lo] = False      # the loss interval's prefix: on its first loss

            for ninc in range(nlo, nhi + 1):
                pn0 = pmf_n[ninc] * qw
                if pn0 == 0.0:
                    continue
                for qq in range(q_lo, q_hi):
                    # TCP alone with patterns: the ACKs come back at the opportunity times of a
                    # pattern of the previous level S (sec. 11), drawn with its weight
                    pn = pn0 * pat_w[qq] if ack_patterned else pn0
                    if mode == MODE_ABR:
                        n = a + d + ninc
                        if n > m_arr:
                            n = m_arr
                        if il >= 0 and n > il:
                            lost = True
                            jl = il
                            a1 = 0
                            b1 = 0
                            d1 = 0
                        else:
                            lost = False
                            jl = -1
                            d1 = b + n if b + n < kdep else kdep
                            b1 = b + n - d1
                            a1 = a + d + ninc - n
                            if not patterned and b1 == b and d1 == d and d == m_arr and (constant_s or si == ri):
                                sa = steady_a[b, ri, si]
                                if sa < 0:
                                    n_proven += wmax - b - d - a1 + 1
                                    steady_a[b, ri, si] = a1
                                elif a1 < sa:
                                    n_proven += sa - a1
                                    steady_a[b, ri, si] = a1
                                if n_proven > max_states:
                                    overflow = True
                                    return (st[:n_states, :5].copy(), nl_ptr, nl_prob, (nl_tail, tail_tab), ls_ptr,
                                            ls_m, ls_prob, p_loss, ev_post, ev_ss, eu, reg, overflow, n_nl, n_ls, ev_j,
                fr, occ_q)
                    elif patterned:
                        # interval.pattern_tcp_alone_outcome, the d - N single ACKs from the prefix
                        ll = d - ninc
                        row = qq - q_lo
                        if pre_loss[row] < ll:
                            lost = True
                            jl = pre_loss[row]
                            b1 = 0
                            d1 = 0
                        else:
                            lost, jl, b1, d1, area = pattern_tcp_alone_resume(
                                d, ll, opp_ptr[pp + 1], bmax, pre[row, ll, 0], pre[row, ll, 1], pre[row, ll, 2],
                                jt, row, pre_area[row, ll], at_t, cs, delta)
                            v_q += 0.0 if lost else pn * area      # the queue's exact integral (sec. 13)
                        a1 = 0
                    else:
                        lost, jl, b1, d1 = tcp_alone_outcome(b, d, ninc, g, r, bmax, delta, lost_single,
                                                             ack_phase)
                        a1 = 0
                    if not lost:
                        if store and mode == MODE_ABR:   # the queue's integral over the interval (sec. 13)
                            v_q += pn * (pattern_abr_queue_integral(b, n, s, opp_t, opp_ptr[pp], opp_ptr[pp + 1],
                                                                    delta, EPS) if patterned
                                         else abr_queue_integral(b, n, r, s, delta))
                        elif store and not patterned:
                            v_q += pn * tcp_alone_queue_integral(b, d, ninc, g, r, delta, ack_phase)
                        merged = False
                        okey = 0
                        jm = 0
                        if patterned:
                            # sec. 11: (N, pattern) pairs often lead to the same (A, B, D): one entry each
                            okey = (a1 * (bmax + 1) + b1) * (wmax + 1) + d1
                            jm = _slot(mk_keys, okey)
                            if mk_keys[jm] == okey:
                                if store:
                                    nl_prob[ent0 + mk_val[jm]] += pn
                                merged = True
                        if not merged:
                            if store:
                                nl_prob[n_nl] = pn
                            si1 = 0 if constant_s else ri
                            tk = _zkey(a1, b1, d1, 0, si1, z1, bmax, wmax, nlev, patterned)
                            jt_ = _slot(tkeys, tk)
                            if tkeys[jt_] == tk:      # a known tail: its K states exist
                                tid = tvals[jt_]
                            else:
                                # a new tail: its states in the order of R' (looked up, else added),
                                # the same states in the same order as without the tail index
                                tid = n_tails
                                for rj in range(nlev):
                                    if allow is not None and not allow[si1, rj]:
                                        continue
                                    kk = _zkey(a1, b1, d1, rj, si1, z1, bmax, wmax, nlev, patterned)
                                    j = _slot(hkeys, kk)
                                    if hkeys[j] == kk:
                                        tgt = hvals[j]
                                    else:
                                        if n_states >= max_states:
                                            overflow = True
                                            return (st[:n_states, :5].copy(), nl_ptr, nl_prob, (nl_tail, tail_tab),
                                                    ls_ptr, ls_m, ls_prob, p_loss, ev_post, ev_ss, eu, reg, overflow,
                                                    n_nl, n_ls, ev_j, fr, occ_q)
                                        tgt = n_states
                                        _put_state(st, hkeys, hvals, j, kk, tgt, a1, b1, d1, rj, si1, z1)
                                        n_states += 1
                                    if store:
                                        tail_tab[tid, rj] = tgt
                                if allow is not None and store:
                                    _fill_tail(tail_tab, tid, allow[si1])
                                tkeys[jt_] = tk
                                tvals[jt_] = tid
                                n_tails += 1
                            if store:
                                nl_tail[n_nl] = tid
                            n_nl += 1
                            if patterned:
                                cur_key[n_cur] = okey
                                mk_keys[jm] = okey
                                mk_val[jm] = n_cur
                                cur_slot[n_cur] = jm
                                n_cur += 1
                    else:
                        # loss: window achieved w = W + N + Bin(b + J, 1/W), capped at W_max (alpha(x; w))
                        pl += pn
                        nack = b + jl
                        # the law of Binomial(b + J, 1/W): cached in bpool, or in pmf_k (uncached)
                        # where the pool is full
                        in_k = False
                        if bc_stamp[nack] == i:
                            boff = bc_off[nack]
                            klo = bc_lo[nack]
                            khi = bc_hi[nack]
                        else:
                            klo, khi = growth_window(nack, pinc, pmf_k, counter)
                            if bp_n + khi - klo + 1 <= bpool.shape[0]:
                                for k in range(klo, khi + 1):
                                    bpool[bp_n + k - klo] = pmf_k[k]
                                boff = bp_n - klo
                                bc_off[nack] = boff
                                bc_lo[nack] = klo
                                bc_hi[nack] = khi
                                bc_stamp[nack] = i
                                bp_n += khi - klo + 1
                            else:
                                boff = 0
                                in_k = True
                        j2 = 0
                        n_lost = 0
                        if tail:    # sec. 12: the whole loss interval (J2 and the arrivals lost, L)
                            if ack_patterned:   # TCP alone over patterns: from the shared prefix (sec. 11)
                                ll = d - ninc
                                row = qq - q_lo
                                if not pre2_ok[row]:
                                    i0 = max(min(pre_loss[row], d - nhi), 0)   # no loss before it
                                    pattern_tcp_alone_loss_prefix(i0, pre[row, i0, 0], pre[row, i0, 1], bmax, d - nhi,
                                                                  d - nlo, pre2, jt, row)
                                    pre2_ok[row] = True
                                _, j2, n_lost = pattern_tcp_alone_loss_resume(d, ll, bmax, pre2[row, ll, 0],
                                                                              pre2[row, ll, 1], pre2[row, ll, 2],
                                                                              pre2[row, ll, 3], pre2[row, ll, 4],
                                                                              jt, row)
                            elif patterned:      # service at the pattern's opportunities (sec. 11): replayed
                                _, j2, n_lost = pattern_loss_counts(mode, a, b, d, ninc, s, g, opp_t, opp_ptr[pp],
                                                                    opp_ptr[pp + 1], bmax, delta, ack_phase,
                                                                    opp_ptr[qq] if ack_patterned else 0,
                                                                    opp_ptr[qq + 1] if ack_patterned else 0, work)
                            elif mode == MODE_ABR and bmax > 1:   # O(1) (recovery.abr_after_loss)
                                j2, n_lost = abr_after_loss(n, jl, r, s, tab_nd[b, ri, si])
                            elif mode == MODE_ABR:
                                _, j2, n_lost, _ = loss_interval_counts(mode, a, b, d, ninc, r, s, bmax, delta,
                                                                       work, ack_phase)
                            else:      # TCP alone: O(log d + N) (recovery.tcp_alone_after_loss)
                                _, j2, n_lost = tcp_alone_after_loss(b, d, ninc, g, r, bmax, delta, lost_single,
                                                                     ack_phase, work)
                        if burst and n_lost >= bmax:   # sec. 15b: go-back-N's burst overflows the slow start
                            f_p += pn
                        if burst:      # sec. 15d: the segments between the holes, sent again
                            v_dup += pn * go_back_n_copies(j2, n_lost)
                        elif mode == MODE_ABR:
                            v_dup += pn * abr_go_back_n_copies(n, jl, s, r, opp_t, opp_ptr[pp] if patterned else 0,
                                                               opp_ptr[pp + 1] if patterned else 0)
                        if fast_recovery:   # fast retransmit or timeout (sec. 12)
                            kind = 1 if j2 >= DUPTHRESH else 2
                            # (M8') over ABR the retransmission queues behind the a1 packets left in
                            # the segmentation buffer; the next source rate is R_k (III-A.8)
                            if mode == MODE_ABR and (a + d + ninc - n) * s_vals[0 if constant_s else ri] > delta + EPS:
                                kind = 0
                            if in_k:
                                q_fr, ew_fr, q_to, ew_to, ess, eul, mlo, mhi = add_recovery_windows(
                                    pn, pmf_k, klo, khi, w0 + ninc, wmax, lossm, mlo, mhi, mmax, n_lost, kind)
                            else:   # the pool's terms k = klo.. from index boff + klo: the same w and pk
                                q_fr, ew_fr, q_to, ew_to, ess, eul, mlo, mhi = add_recovery_windows(
                                    pn, bpool[boff + klo:], 0, khi - klo, w0 + ninc + klo, wmax, lossm, mlo, mhi,
                                    mmax, n_lost, kind)
                            v_post += pn * (q_to * jl + ew_to)
                            v_j += pn * q_to * jl
                            v_ss += pn * ess
                            u_loss += pn * eul
                            f_p += pn * q_fr
                            f_cons += pn * q_fr * (b + jl + j2)
                            f_pred += pn * (q_fr * (b + jl - n_lost) + ew_fr)
                            f_opt += pn * (q_fr * (b + jl) + ew_fr)
                            f_j += pn * q_fr * jl
                        else:
                            if in_k:       # uncached law (pool full): add_loss_windows itself
                                ew, ess, eul, mlo, mhi = add_loss_windows(pn, pmf_k, klo, khi, w0 + ninc, wmax,
                                                                          lossm, mlo, mhi)
                            elif not mw_ok:   # no room for the (J, N) cache: the same on the pool's terms
                                ew, ess, eul, mlo, mhi = add_loss_windows(pn, bpool[boff + klo:], 0, khi - klo,
                                                                          w0 + ninc + klo, wmax, lossm, mlo, mhi)
                            else:
                                # add_loss_windows, its expectations computed once per (J, N)
                                mkey = jl * nn + ninc - nlo
                                if mw_stamp[mkey] != i:
                                    ew, ess, eul, ml, mh = loss_window_moments(bpool, boff, klo, khi, w0 + ninc, wmax)
                                    mw_f[mkey, 0] = ew
                                    mw_f[mkey, 1] = ess
                                    mw_f[mkey, 2] = eul
                                    mw_m[mkey, 0] = ml
                                    mw_m[mkey, 1] = mh
                                    mw_stamp[mkey] = i
                                ew = mw_f[mkey, 0]
                                ess = mw_f[mkey, 1]
                                eul = mw_f[mkey, 2]
                                add_loss_mass(pn, bpool, boff, klo, khi, w0 + ninc, wmax, lossm)
                                if mw_m[mkey, 1] >= mw_m[mkey, 0]:
                                    if mw_m[mkey, 0] < mlo:
                                        mlo = mw_m[mkey, 0]
                                    if mw_m[mkey, 1] > mhi:
                                        mhi = mw_m[mkey, 1]
                            v_post += pn * (jl + ew)
                            v_j += pn * jl
                            v_ss += pn * ess
                            u_loss += pn * eul
        # normalise loss mass lost to the dropped tail terms
        lt = 0.0
        for m in range(mlo, mhi + 1):
            lt += lossm[m]
        if pl > 0.0:
            for m in range(mlo, mhi + 1):
                lossm[m] *= pl / lt
        if store:
            p_loss[i] = pl
            ev_post[i] = v_post
            ev_ss[i] = v_ss
            eu[i] = (1.0 - pl) + u_loss
            ev_j[i] = v_j
            if q_exact:
                occ_q[i, 0] = v_q
                occ_q[i, 1] = v_dup
            if tail:
                fr[i, 0] = f_p
                fr[i, 1] = f_cons
                fr[i, 2] = f_pred
                fr[i, 3] = f_opt
                fr[i, 4] = f_j
        ncod = mhi - max(mlo, 1) + 1      # room for every loss code and its regeneration states
        if store and ncod > 0 and n_ls + ncod + 1 > ls_prob.shape[0]:
            ls_prob = _grow(ls_prob, n_ls + ncod + 1)
            ls_m = _grow(ls_m, n_ls + ncod + 1)
        if ncod > 0 and n_states + ncod * pair_r.shape[0] > st.shape[0]:
            st = _grow2n(st, n_states + ncod * pair_r.shape[0])
        if ncod > 0:
            hkeys, hvals = _rehash_for(hkeys, hvals, n_states + ncod * pair_r.shape[0])
        for c in range(max(mlo, 1), mhi + 1):
            if lossm[c] <= 0.0:
                continue
            if store:
                ls_prob[n_ls] = lossm[c]
                ls_m[n_ls] = c
            n_ls += 1
            m = code_m(c, mmax)
            for q in range(pair_r.shape[0]):
                ri2, si2 = pair_r[q], pair_s[q]
                if reg[m, ri2, si2] >= 0:
                    continue
                kk = _zkey(0, 0, m, ri2, si2, 0, bmax, wmax, nlev, patterned)
                j = _slot(hkeys, kk)
                if hkeys[j] == kk:
                    reg[m, ri2, si2] = hvals[j]
                    continue
                if n_states >= max_states:
                    overflow = True
                    return (st[:n_states, :5].copy(), nl_ptr, nl_prob, (nl_tail, tail_tab), ls_ptr, ls_m, ls_prob,
                            p_loss, ev_post, ev_ss, eu, reg, overflow, n_nl, n_ls, ev_j, fr, occ_q)
                _put_state(st, hkeys, hvals, j, kk, n_states, 0, 0, m, ri2, si2, 0)
                reg[m, ri2, si2] = n_states
                n_states += 1
        for m in range(mlo, mhi + 1):
            lossm[m] = 0.0
        for e in range(n_cur):
            mk_keys[cur_slot[e]] = -1
        if store:
            nl_ptr[i + 1] = n_nl
            ls_ptr[i + 1] = n_ls
        i += 1
        if progress is not None:
            progress[0] = i
            progress[1] = n_states
    _known_regenerations(reg, hkeys, hvals, bmax, wmax, nlev, patterned)
    n = n_states
    if not store:
        return (st[:n, :5].copy(), nl_ptr, nl_prob, (nl_tail, tail_tab), ls_ptr, ls_m, ls_prob, p_loss, ev_post,
                ev_ss, eu, reg, overflow, n_nl, n_ls, ev_j, fr, occ_q)
    nf = n if tail else 1
    # copies, not views: the growth's spare room (up to half of each array) is freed
    return (st[:n, :5].copy(), nl_ptr[: n + 1].copy(), nl_prob[:n_nl].copy(),
            (nl_tail[:n_nl].copy(), tail_tab[:n_tails].copy()), ls_ptr[: n + 1].copy(), ls_m[:n_ls].copy(),
            ls_prob[:n_ls], p_loss[:n], ev_post[:n], ev_ss[:n], eu[:n], reg, overflow, n_nl, n_ls, ev_j[:n],
            fr[:nf], occ_q[: (n if q_exact else 1)])
