"""Reference copy of the pre-issue-16 skeleton builder (tcpabr_model/markov/_skeleton.py on
main at 79585da), kept unchanged as the oracle of tests/test_markov_builder.py and of
benchmarks/bench_markov_scale.py.  It steps through every interval packet by packet for
every (state, window increment) pair, so its cost grows with Delta per nonzero.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, types
from numba.typed import Dict

from tcpabr_model.markov.kernels.interval import binomial_pmf, ceil_log2, interval_outcome

PMF_TAIL = 1e-17  # binomial terms below this are dropped and the rest renormalised


@njit(cache=True)
def _key(a, b, d, ri, si, bmax, wmax):
    return (((a * (bmax + 1) + b) * (wmax + 1) + d) * 2 + ri) * 2 + si


@njit(cache=True)
def _grow(x, n):
    """A copy of the 1-d array ``x`` with room for max(n, 2 len(x)) entries."""
    y = np.empty(max(n, 2 * x.shape[0]), dtype=x.dtype)
    y[: x.shape[0]] = x
    return y


@njit(cache=True)
def build_skeleton(mode, constant_s, delta, bmax, wmax, r_vals, s_vals, a0, b0, d0, max_states):
    """Breadth-first enumeration from X_0 = (a0, b0, d0, r0, r0).

    ``r_vals``: bottleneck service times (r0, r1).  ``s_vals``: source service times
    indexed by the state's S component (equal to r_vals for INSTCAP / TCP alone; both
    equal to 1/mu for a constant-rate source, in which case ``constant_s`` is True and
    the S component is always 0).

    Returns a tuple of arrays (see ``Skeleton`` in skeleton.py) and an overflow flag.
    """
    mmax = (wmax + 1) // 2
    index = Dict.empty(key_type=types.int64, value_type=types.int64)
    cap = 1024
    st = np.empty((cap, 5), dtype=np.int64)
    n_states = 0
    # regeneration states (0, 0, m, i, j) index, -1 if absent
    reg = -np.ones((mmax + 1, 2, 2), dtype=np.int64)

    k0 = _key(a0, b0, d0, 0, 0, bmax, wmax)
    index[k0] = 0
    st[0, 0] = a0
    st[0, 1] = b0
    st[0, 2] = d0
    st[0, 3] = 0
    st[0, 4] = 0
    n_states = 1

    nl_prob = np.empty(4096, dtype=np.float64)
    nl_t = np.empty((4096, 2), dtype=np.int64)
    nl_ptr = np.zeros(cap + 1, dtype=np.int64)
    n_nl = 0
    ls_prob = np.empty(4096, dtype=np.float64)
    ls_m = np.empty(4096, dtype=np.int64)
    ls_ptr = np.zeros(cap + 1, dtype=np.int64)
    n_ls = 0
    p_loss = np.zeros(cap, dtype=np.float64)
    ev_post = np.zeros(cap, dtype=np.float64)
    ev_ss = np.zeros(cap, dtype=np.float64)
    eu = np.zeros(cap, dtype=np.float64)

    nwork = int(math.floor(delta / min(r_vals[0], s_vals[0], s_vals[1]) + 2)) + 2 * wmax + 4
    work = np.empty(nwork, dtype=np.float64)
    pmf_n = np.empty(wmax + 2, dtype=np.float64)
    pmf_k = np.empty(4 * wmax + int(delta) + bmax + 8, dtype=np.float64)
    lossm = np.zeros(mmax + 1, dtype=np.float64)
    n_rs = 1 if constant_s else 2

    i = 0
    overflow = False
    while i < n_states:
        if i + 1 >= nl_ptr.shape[0]:
            newcap = 2 * nl_ptr.shape[0]
            nl_ptr = _grow(nl_ptr, newcap)
            ls_ptr = _grow(ls_ptr, newcap)
            p_loss = _grow(p_loss, newcap)
            ev_post = _grow(ev_post, newcap)
            ev_ss = _grow(ev_ss, newcap)
            eu = _grow(eu, newcap)
        a = st[i, 0]
        b = st[i, 1]
        d = st[i, 2]
        ri = st[i, 3]
        si = st[i, 4]
        w0 = a + b + d
        r = r_vals[ri]
        s = s_vals[si]
        pinc = 1.0 / w0
        binomial_pmf(d, pinc, pmf_n)
        room = wmax - w0
        # lump the mass above the window cap into N = room (N = min(N~, W_max - W))
        if d > room:
            extra = 0.0
            for k in range(room + 1, d + 1):
                extra += pmf_n[k]
                pmf_n[k] = 0.0
            pmf_n[room] += extra
        nmax_inc = min(d, room)
        tot = 0.0
        for k in range(nmax_inc + 1):
            if pmf_n[k] < PMF_TAIL:
                pmf_n[k] = 0.0
            tot += pmf_n[k]
        for k in range(nmax_inc + 1):
            pmf_n[k] /= tot

        for m in range(mmax + 1):
            lossm[m] = 0.0
        pl = 0.0
        v_post = 0.0
        v_ss = 0.0
        u_loss = 0.0
        for ninc in range(nmax_inc + 1):
            pn = pmf_n[ninc]
            if pn == 0.0:
                continue
            lost, jl, a1, b1, d1 = interval_outcome(mode, a, b, d, ninc, r, s, bmax, delta, work)
            if not lost:
                if n_nl + 1 >= nl_prob.shape[0]:
                    nl_prob = _grow(nl_prob, 0)
                    nl_t2 = np.empty((nl_prob.shape[0], 2), dtype=np.int64)
                    nl_t2[:n_nl] = nl_t[:n_nl]
                    nl_t = nl_t2
                nl_prob[n_nl] = pn
                si1 = 0 if constant_s else ri
                for rj in range(2):
                    kk = _key(a1, b1, d1, rj, si1, bmax, wmax)
                    if kk in index:
                        tgt = index[kk]
                    else:
                        if n_states >= max_states:
                            overflow = True
                            return (st[:n_states], nl_ptr, nl_prob, nl_t, ls_ptr, ls_m, ls_prob,
                                    p_loss, ev_post, ev_ss, eu, reg, overflow)
                        if n_states >= st.shape[0]:
                            st2 = np.empty((2 * st.shape[0], 5), dtype=np.int64)
                            st2[:n_states] = st[:n_states]
                            st = st2
                        tgt = n_states
                        index[kk] = tgt
                        st[tgt, 0] = a1
                        st[tgt, 1] = b1
                        st[tgt, 2] = d1
                        st[tgt, 3] = rj
                        st[tgt, 4] = si1
                        n_states += 1
                    nl_t[n_nl, rj] = tgt
                n_nl += 1
            else:
                # loss: window achieved w = W + N + Bin(b + j, 1/W), capped at W_max (alpha(x; w))
                pl += pn
                nack = b + jl
                binomial_pmf(nack, pinc, pmf_k)
                ew = 0.0
                ess = 0.0
                eul = 0.0
                for k in range(nack + 1):
                    pk = pmf_k[k]
                    if pk < PMF_TAIL:
                        continue
                    w = w0 + ninc + k
                    if w > wmax:
                        w = wmax
                    m = (w + 1) // 2
                    lossm[m] += pn * pk
                    ew += pk * w
                    c = ceil_log2(m)
                    ess += pk * ((1 << c) - 1)
                    eul += pk * (3 + c)
                v_post += pn * (jl + ew)
                v_ss += pn * ess
                u_loss += pn * eul
        # normalise loss mass lost to the dropped tail terms
        lt = 0.0
        for m in range(mmax + 1):
            lt += lossm[m]
        if pl > 0.0:
            for m in range(mmax + 1):
                lossm[m] *= pl / lt
        p_loss[i] = pl
        ev_post[i] = v_post
        ev_ss[i] = v_ss
        eu[i] = (1.0 - pl) + u_loss
        for m in range(1, mmax + 1):
            if lossm[m] <= 0.0:
                continue
            if n_ls + 1 >= ls_prob.shape[0]:
                ls_prob = _grow(ls_prob, 0)
                ls_m = _grow(ls_m, 0)
            ls_prob[n_ls] = lossm[m]
            ls_m[n_ls] = m
            n_ls += 1
            for ri2 in range(2):
                for si2 in range(n_rs):
                    if reg[m, ri2, si2] >= 0:
                        continue
                    kk = _key(0, 0, m, ri2, si2, bmax, wmax)
                    if kk in index:
                        reg[m, ri2, si2] = index[kk]
                        continue
                    if n_states >= max_states:
                        overflow = True
                        return (st[:n_states], nl_ptr, nl_prob, nl_t, ls_ptr, ls_m, ls_prob,
                                p_loss, ev_post, ev_ss, eu, reg, overflow)
                    if n_states >= st.shape[0]:
                        st2 = np.empty((2 * st.shape[0], 5), dtype=np.int64)
                        st2[:n_states] = st[:n_states]
                        st = st2
                    index[kk] = n_states
                    reg[m, ri2, si2] = n_states
                    st[n_states, 0] = 0
                    st[n_states, 1] = 0
                    st[n_states, 2] = m
                    st[n_states, 3] = ri2
                    st[n_states, 4] = si2
                    n_states += 1
        nl_ptr[i + 1] = n_nl
        ls_ptr[i + 1] = n_ls
        i += 1
    # regeneration states that already existed before any loss reached them
    for m in range(1, mmax + 1):
        for ri2 in range(2):
            for si2 in range(n_rs):
                if reg[m, ri2, si2] < 0:
                    kk = _key(0, 0, m, ri2, si2, bmax, wmax)
                    if kk in index:
                        reg[m, ri2, si2] = index[kk]
    n = n_states
    return (st[:n], nl_ptr[: n + 1], nl_prob[:n_nl], nl_t[:n_nl], ls_ptr[: n + 1], ls_m[:n_ls],
            ls_prob[:n_ls], p_loss[:n], ev_post[:n], ev_ss[:n], eu[:n], reg, overflow)
