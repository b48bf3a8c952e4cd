"""Communicating classes of the embedded chain (numba kernels; docs/model.md sec. 5a item 9
and sec. 8): Tarjan's strongly connected components of the graph of P = T + L_E G read from
the skeleton without building it (the loss events as pass-through nodes), and which classes
are closed (on that graph, or on an assembled CSR matrix)."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, inline="always")
def _visit(w, counter, sp_, index, low, stack, onstack):
    """Tarjan's first visit of ``w``: number it and push it on the SCC stack; returns the
    next number and the new stack height."""
    index[w] = counter
    low[w] = counter
    stack[sp_] = w
    onstack[w] = True
    return counter + 1, sp_ + 1


@njit(cache=True, inline="always")
def _f_degree(v, n, nlev, nl_ptr, ls_ptr, g_ptr):
    """Edges of node ``v`` of the factored graph (:func:`factored_scc`), skipped ones included."""
    if v < n:
        return nlev * (nl_ptr[v + 1] - nl_ptr[v]) + ls_ptr[v + 1] - ls_ptr[v]
    return g_ptr[v - n + 1] - g_ptr[v - n]


@njit(cache=True)
def factored_scc(st, nl_ptr, nl_t, Q, ls_ptr, e_idx, g_ptr, g_st):
    """Iterative Tarjan on the graph of P = T + L_E G with the loss events as pass-through
    nodes (states 0..n-1, events n..n+E-1; E = ``g_ptr.shape[0] - 1``, G in CSR by event),
    read from the skeleton without building it (docs/model.md sec. 5a item 9): state ``x``
    has T's edges (entry by entry, next level by level, where ``Q > 0``) then its loss
    events ``n + e_idx``; an event has G's targets ``g_st``.  Its closed classes over the
    states are those of P.  ``Q`` all ones and no loss entries (``ls_ptr`` zeros, ``g_ptr``
    ``[0]``) give the structural loss-free graph.  Returns (order, ptr) with the SCCs in
    reverse topological order (every SCC after all SCCs reachable from it)."""
    n = st.shape[0]
    nn = n + g_ptr.shape[0] - 1
    nlev = Q.shape[0]
    tail, tab = nl_t   # the skeleton's pair (docs/model.md sec. 5a item 9)
    index = -np.ones(nn, dtype=np.int64)
    low = np.zeros(nn, dtype=np.int64)
    onstack = np.zeros(nn, dtype=np.bool_)
    stack = np.empty(nn, dtype=np.int64)
    sp_ = 0
    call_v = np.empty(nn, dtype=np.int64)
    call_e = np.empty(nn, dtype=np.int64)
    order = np.empty(nn, dtype=np.int64)
    ptr = np.zeros(nn + 1, dtype=np.int64)
    n_out = 0
    n_scc = 0
    counter = 0
    for root in range(nn):
        if index[root] >= 0:
            continue
        depth = 0
        call_v[0] = root
        call_e[0] = 0
        counter, sp_ = _visit(root, counter, sp_, index, low, stack, onstack)
        while depth >= 0:
            v = call_v[depth]
            e = call_e[depth]
            if e < _f_degree(v, n, nlev, nl_ptr, ls_ptr, g_ptr):
                call_e[depth] = e + 1
                # edge e of v, written out: the same in a helper function, even inlined, ran
                # 5x slower (numba)
                if v < n:
                    k_t = nlev * (nl_ptr[v + 1] - nl_ptr[v])
                    if e < k_t:
                        rj = e % nlev
                        if Q[st[v, 3], rj] <= 0.0:
                            continue      # no such level change
                        w = np.int64(tab[tail[nl_ptr[v] + e // nlev], rj])
                    else:
                        w = n + np.int64(e_idx[ls_ptr[v] + e - k_t])
                else:
                    w = g_st[g_ptr[v - n] + e]
                if index[w] < 0:
                    counter, sp_ = _visit(w, counter, sp_, index, low, stack, onstack)
                    depth += 1
                    call_v[depth] = w
                    call_e[depth] = 0
                elif onstack[w]:
                    if index[w] < low[v]:
                        low[v] = index[w]
            else:
                if low[v] == index[v]:
                    while True:
                        sp_ -= 1
                        w = stack[sp_]
                        onstack[w] = False
                        order[n_out] = w
                        n_out += 1
                        if w == v:
                            break
                    n_scc += 1
                    ptr[n_scc] = n_out
                depth -= 1
                if depth >= 0:
                    u = call_v[depth]
                    if low[v] < low[u]:
                        low[u] = low[v]
    return order, ptr[: n_scc + 1]


@njit(cache=True)
def factored_leaving(st, nl_ptr, nl_t, Q, ls_ptr, e_idx, g_ptr, g_st, lab, n_classes):
    """``out[c]``: class ``c`` of the labelling ``lab`` of the factored graph
    (:func:`factored_scc`) has an edge to another class, i.e. it is not closed."""
    n = st.shape[0]
    nn = n + g_ptr.shape[0] - 1
    nlev = Q.shape[0]
    tail, tab = nl_t
    out = np.zeros(n_classes, dtype=np.bool_)
    for v in range(nn):
        lv = lab[v]
        if out[lv]:
            continue
        if v >= n:
            for e in range(g_ptr[v - n], g_ptr[v - n + 1]):
                if lab[g_st[e]] != lv:
                    out[lv] = True
                    break
            continue
        ri = st[v, 3]
        for en in range(nl_ptr[v], nl_ptr[v + 1]):
            te = tail[en]
            for rj in range(nlev):
                if Q[ri, rj] > 0.0 and lab[tab[te, rj]] != lv:
                    out[lv] = True
                    break
            if out[lv]:
                break
        if not out[lv]:
            for e in range(ls_ptr[v], ls_ptr[v + 1]):
                if lab[n + e_idx[e]] != lv:
                    out[lv] = True
                    break
    return out


@njit(cache=True)
def leaving_classes(indptr, indices, data, lab, n_classes):
    """``out[c]``: class ``c`` of the labelling ``lab`` has an edge (of positive weight, if
    ``data`` is not empty) to another class, i.e. it is not closed.  O(nnz), no copy of
    the graph."""
    out = np.zeros(n_classes, dtype=np.bool_)
    weighted = data.shape[0] > 0
    for i in range(indptr.shape[0] - 1):
        li = lab[i]
        if out[li]:
            continue
        for e in range(indptr[i], indptr[i + 1]):
            if lab[indices[e]] != li and (not weighted or data[e] > 0.0):
                out[li] = True
                break
    return out


@njit(cache=True)
def structural_self_loops(st, nl_ptr, nl_t, nlev):
    """Which states have a loss-free entry back to themselves at some next level (whatever the
    rate chain's matrix: every level counted): a state without one has ``T[x, x] = 0`` for every
    ``Q``, so its singleton SCC is left with all its mass and ``1 / (1 - T[x, x])`` is 1."""
    tail, tab = nl_t
    out = np.zeros(st.shape[0], dtype=np.bool_)
    for x in range(st.shape[0]):
        for e in range(nl_ptr[x], nl_ptr[x + 1]):
            te = tail[e]
            for rj in range(nlev):
                if tab[te, rj] == x:
                    out[x] = True
                    break
            if out[x]:
                break
    return out


@njit(cache=True)
def renumbered_rows(order, nl_ptr, nl_prob, tail):
    """The skeleton's loss-free entries with state ``order[i]`` numbered ``i``: ``(nl_ptr,
    nl_prob, nl_tail)`` of the renumbered states, each state's entries in their stored order."""
    n = order.shape[0]
    ptr2 = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        x = order[i]
        ptr2[i + 1] = ptr2[i] + nl_ptr[x + 1] - nl_ptr[x]
    prob2 = np.empty(ptr2[n])
    tail2 = np.empty(ptr2[n], dtype=tail.dtype)
    for i in range(n):
        x = order[i]
        q = ptr2[i]
        for e in range(nl_ptr[x], nl_ptr[x + 1]):
            prob2[q] = nl_prob[e]
            tail2[q] = tail[e]
            q += 1
    return ptr2, prob2, tail2
