"""Small dedicated simulators for the validation report.

They are written from the system descriptions, not from the closed forms they check:
nothing here imports :mod:`tcpabr_model.closed_forms`.  Each kernel seeds numba's own
generator from an explicit ``seed`` argument (``np.random.seed`` inside the jitted code;
seeding outside jit would not reach numba).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _markov_step(state, cum_rows):
    u = np.random.random()
    n = cum_rows.shape[1]
    for j in range(n):
        if u < cum_rows[state, j]:
            return j
    return n - 1


@njit(cache=True)
def mm_queue_loss(cum_rows, c, gamma, buffers, n_slots, seed, out_lost):
    """Constant-rate source into finite fluid buffers with Markov-modulated service.

    Each slot: ``Q <- min(max(Q + gamma - c[X], 0), B)``; the excess over ``B`` is lost.
    All buffers in ``buffers`` share the same service path.  ``out_lost[k]`` receives the
    lost amount for buffer k; the offered amount is ``gamma * n_slots``.  The chain starts
    from state 0 and the first 1 % of slots are a warm-up (not counted).
    """
    np.random.seed(seed)
    nb = buffers.size
    q = np.zeros(nb)
    for k in range(nb):
        out_lost[k] = 0.0
    x = 0
    warm = n_slots // 100
    for t in range(n_slots + warm):
        inc = gamma - c[x]
        for k in range(nb):
            v = q[k] + inc
            if v < 0.0:
                v = 0.0
            elif v > buffers[k]:
                if t >= warm:
                    out_lost[k] += v - buffers[k]
                v = buffers[k]
            q[k] = v
        x = _markov_step(x, cum_rows)


@njit(cache=True)
def markov_path(cum_rows, c, n, seed, out):
    """out[i] = c[X_i] for a path of the chain started from its state 0 after 1000 steps."""
    np.random.seed(seed)
    x = 0
    for _ in range(1000):
        x = _markov_step(x, cum_rows)
    for i in range(n):
        out[i] = c[x]
        x = _markov_step(x, cum_rows)


@njit(cache=True)
def fifo_window_flows(windows, prop_delay, serve_prob, n_slots, seed, out_departs, out_occ):
    """Window-limited flows sharing one FIFO buffer and one link (closed loop).

    Flow i keeps ``windows[i]`` packets outstanding.  Each slot the link serves the head
    packet with probability ``serve_prob`` (a randomly available link); a served packet's
    ACK returns ``prop_delay`` slots later and releases a new packet of the same flow to
    the tail of the FIFO.  Records per-flow departures and the time-sum of per-flow buffer
    occupancy (after a 10 % warm-up).
    """
    np.random.seed(seed)
    nf = windows.size
    total = 0
    for i in range(nf):
        total += windows[i]
    cap = total + 1
    fifo = np.empty(cap, np.int64)
    head = 0
    size = 0
    occ = np.zeros(nf, np.int64)
    # interleave initial packets
    left = windows.copy()
    while size < total:
        for i in range(nf):
            if left[i] > 0:
                fifo[(head + size) % cap] = i
                size += 1
                occ[i] += 1
                left[i] -= 1
    # propagation pipe: ring of length prop_delay, each slot holds at most one ACK (-1 none)
    pipe = np.full(prop_delay, -1, np.int64)
    pp = 0
    for i in range(nf):
        out_departs[i] = 0
        out_occ[i] = 0.0
    warm = n_slots // 10
    for t in range(n_slots + warm):
        # ACK arriving now releases a new packet of that flow
        a = pipe[pp]
        if a >= 0:
            fifo[(head + size) % cap] = a
            size += 1
            occ[a] += 1
            pipe[pp] = -1
        served = -1
        if size > 0 and np.random.random() < serve_prob:
            served = fifo[head]
            head = (head + 1) % cap
            size -= 1
            occ[served] -= 1
        pipe[pp] = served
        pp = (pp + 1) % prop_delay
        if t >= warm:
            for i in range(nf):
                out_occ[i] += occ[i]
            if served >= 0:
                out_departs[served] += 1


@njit(cache=True)
def ca_sawtooth_flow(w_max, prop_delay, n_slots, out):
    """One TCP flow in congestion avoidance through an uncongested link (deterministic).

    Link: one packet per slot; ACKs return ``prop_delay`` slots after service, so the
    round trip of a packet is ``prop_delay + 1`` slots (no queueing while cwnd <= the
    pipe).  Per ACK: ``cwnd += 1/cwnd``; when the integer window would exceed ``w_max``
    the flow is cut to ``w_max / 2`` (a single drop at the threshold with ideal recovery,
    seed 002 Section 2).  ``out`` = [time-sum of floor(cwnd), acked packets, time-sum of
    packets in flight, sum of per-packet RTTs, number of RTT samples, slots].
    """
    cwnd = w_max / 2.0
    inflight = 0
    cap = 4 * (w_max + prop_delay + 2)
    ring = np.full(prop_delay + 1, -1, np.int64)  # ACKs in flight: index = arrival slot mod
    queue = 0  # packets waiting for the link (sender side)
    qtimes = np.zeros(cap, np.int64)
    qh = 0
    warm = n_slots // 10
    sum_w = 0.0
    acked = 0.0
    sum_inflight = 0.0
    sum_rtt = 0.0
    n_rtt = 0.0
    for t in range(n_slots + warm):
        slot = t % (prop_delay + 1)
        if ring[slot] >= 0:
            st = ring[slot]
            ring[slot] = -1
            inflight -= 1
            if t >= warm:
                acked += 1
                sum_rtt += t - st
                n_rtt += 1
            cwnd += 1.0 / cwnd
            if np.floor(cwnd) > w_max:
                cwnd = w_max / 2.0
        # send while window allows
        while inflight < np.floor(cwnd):
            qtimes[(qh + queue) % cap] = t
            queue += 1
            inflight += 1
        # link serves one packet per slot
        if queue > 0:
            st = qtimes[qh]
            qh = (qh + 1) % cap
            queue -= 1
            ring[(t + prop_delay) % (prop_delay + 1)] = st
        if t >= warm:
            sum_w += np.floor(cwnd)
            sum_inflight += inflight
    out[0] = sum_w
    out[1] = acked
    out[2] = sum_inflight
    out[3] = sum_rtt
    out[4] = n_rtt
    out[5] = n_slots
