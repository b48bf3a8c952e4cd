"""The growable arrays and the state index of the chain build (``enumeration.build_skeleton``;
numba kernels): an open-addressing hash set of int64 keys (state -> index; Fibonacci hashing,
linear probing, docs/model.md sec. 5a item 4) and the copies that grow the build's arrays.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# --- open-addressing hash set of int64 keys (state -> index) ---------------------------

@njit(cache=True, inline="always")
def _slot(keys, key):
    mask = keys.shape[0] - 1
    h = (key * -7046029254386353131) & 0x7FFFFFFFFFFFFFFF  # Fibonacci hashing
    j = (h >> 17) & mask
    while keys[j] != -1 and keys[j] != key:
        j = (j + 1) & mask
    return j


@njit(cache=True)
def _rehash(keys, vals):
    nk = np.full(2 * keys.shape[0], -1, dtype=np.int64)
    nv = np.empty(2 * keys.shape[0], dtype=np.int64)
    for j in range(keys.shape[0]):
        if keys[j] != -1:
            s = _slot(nk, keys[j])
            nk[s] = keys[j]
            nv[s] = vals[j]
    return nk, nv


@njit(cache=True)
def _key(a, b, d, ri, si, bmax, wmax, nlev):
    return (((a * (bmax + 1) + b) * (wmax + 1) + d) * nlev + ri) * nlev + si


@njit(cache=True, inline="always")
def _zkey(a, b, d, ri, si, z, bmax, wmax, nlev, patterned):
    """The state's key; with service patterns the silence flag ``z`` doubles it (sec. 11)."""
    k = _key(a, b, d, ri, si, bmax, wmax, nlev)
    return 2 * k + z if patterned else k


@njit(cache=True)
def _grow(x, n):
    """A copy of the 1-d array ``x`` with room for max(n, 2 len(x)) entries."""
    y = np.empty(max(n, 2 * x.shape[0]), dtype=x.dtype)
    y[: x.shape[0]] = x
    return y


@njit(cache=True)
def _grow2(x):
    y = np.empty((2 * x.shape[0], x.shape[1]), dtype=x.dtype)
    y[: x.shape[0]] = x
    return y


@njit(cache=True)
def _grow2n(x, n):
    """A copy of the 2-d array ``x`` with room for max(n, 2 len(x)) rows."""
    y = np.empty((max(n, 2 * x.shape[0]), x.shape[1]), dtype=x.dtype)
    y[: x.shape[0]] = x
    return y


@njit(cache=True)
def _rehash_for(keys, vals, n):
    """The hash set ``(keys, vals)``, rehashed into a table of at least ``2 n`` slots."""
    while 2 * n > keys.shape[0]:
        keys, vals = _rehash(keys, vals)
    return keys, vals


@njit(cache=True, inline="always")
def _put_state(st, hkeys, hvals, j, key, n, a, b, d, ri, si, z):
    """:func:`_add_state` where ``st`` and the hash set are known to have room (the build
    grows them before each state's loops: an array reassigned inside a numba loop costs
    reference counting at every iteration)."""
    hkeys[j] = key
    hvals[j] = n
    st[n, 0] = a
    st[n, 1] = b
    st[n, 2] = d
    st[n, 3] = ri
    st[n, 4] = si
    st[n, 5] = z


@njit(cache=True, inline="always")
def _add_state(st, hkeys, hvals, j, key, n, a, b, d, ri, si):
    """Store state number ``n`` = (a, b, d, ri, si) under ``key`` at the free hash slot
    ``j``; returns ``(st, hkeys, hvals)``, grown or rehashed when full."""
    if n >= st.shape[0]:
        st = _grow2(st)
    hkeys[j] = key
    hvals[j] = n
    if 2 * n > hkeys.shape[0]:
        hkeys, hvals = _rehash(hkeys, hvals)
    st[n, 0] = a
    st[n, 1] = b
    st[n, 2] = d
    st[n, 3] = ri
    st[n, 4] = si
    return st, hkeys, hvals


@njit(cache=True, inline="always")
def _over_budget(mem, n_states, n_nl, n_ls):
    """Whether the chain built so far passes the byte budget ``mem[3]`` at ``mem[0]`` bytes per
    state, ``mem[1]`` per loss-free and ``mem[2]`` per loss entry (``estimate.memory_budget``);
    sets ``mem[4] = 1`` when it does (the build stops, docs/model.md sec. 5a item 10)."""
    if mem[0] * n_states + mem[1] * n_nl + mem[2] * n_ls > mem[3]:
        mem[4] = 1.0
        return True
    return False


@njit(cache=True, inline="always")
def _known_regenerations(reg, hkeys, hvals, bmax, wmax, nlev, patterned):
    """``reg[m, R, S]`` for the regeneration states ``(0, 0, m, R, S)`` that were reached
    before any loss led to them (found in the state index after the build)."""
    for m in range(1, reg.shape[0]):
        for ri2 in range(nlev):
            for si2 in range(reg.shape[2]):
                if reg[m, ri2, si2] < 0:
                    kk = _zkey(0, 0, m, ri2, si2, 0, bmax, wmax, nlev, patterned)
                    j = _slot(hkeys, kk)
                    if hkeys[j] == kk:
                        reg[m, ri2, si2] = hvals[j]


@njit(cache=True, inline="always")
def _fill_tail(tail_tab, tid, allowed):
    """A new tail's entries at the next levels its source cannot reach (``allowed`` false; docs/model.md
    sec. 10, "States never entered"): the tail's first allowed state, which has the same (A, B, D)."""
    first = -1
    for rj in range(allowed.shape[0]):
        if allowed[rj]:
            first = tail_tab[tid, rj]
            break
    for rj in range(allowed.shape[0]):
        if not allowed[rj]:
            tail_tab[tid, rj] = first


@njit(cache=True)
def _allowed_pairs(allow, nlev, n_rs):
    """The ``(R, S)`` pairs a state can have, ``R`` major: every pair, or those with ``allow[S, R]``
    (docs/model.md sec. 10).  The build's regeneration states loop over these, in the order of the
    full double loop, instead of over all ``nlev x n_rs`` (an EFFCAP history chain of 2,824 levels
    has 5,648 of its 8 million)."""
    n = 0
    for ri in range(nlev):
        for si in range(n_rs):
            if allow is None or allow[si, ri]:
                n += 1
    pr = np.empty(n, dtype=np.int64)
    ps = np.empty(n, dtype=np.int64)
    n = 0
    for ri in range(nlev):
        for si in range(n_rs):
            if allow is None or allow[si, ri]:
                pr[n] = ri
                ps[n] = si
                n += 1
    return pr, ps
