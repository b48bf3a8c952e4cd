"""A straightforward pure-Python event-heap simulator of the same system (benchmark baseline).

One event per cell transmission at the source and per cell departure at the bottleneck,
plus ACK, feedback, timer, capacity-change and measurement events, all on a ``heapq``.
It implements the same model as :mod:`tcpabr_model.sim` for one connection (TCP without
fast retransmit, RTO fixed at 2 x RTT, ABR source following INSTCAP/EFFCAP feedback with
partial packet discard, or TCP alone), but in continuous time: a cell's service time is
``1 / rate`` at the instant it starts, instead of the kernel's slot credits.  Its
efficiency therefore agrees with the kernel statistically, not bit for bit.  It exists
to measure how many cells per second a plain event loop manages.
"""

from __future__ import annotations

import heapq
import math
import time
from collections import deque

import numpy as np

from tcpabr_model.sim import Scenario
from tcpabr_model.sim.capacity import capacity_path


def run_baseline(sc: Scenario, seed: int = 0) -> dict:
    """Simulate ``sc`` (one connection) with an event heap; returns efficiency and speed."""
    if sc.n_connections != 1:
        raise ValueError("the baseline handles one connection")
    atm = sc.feedback != "none"
    upf = sc.cells_per_frame if atm else 1
    unit = 53.0 if atm else float(sc.ip_packet_bytes)
    svc_high = unit / sc.slot_bytes             # slots per unit at the high rate (units.slot_bytes)
    bufcap = sc.buffer_packets * upf
    delta = sc.to_slots(sc.rtt[0])
    fbdelay = sc.to_slots(sc.feedback_delay[0])
    meas = sc.to_slots(sc.interval)
    rto = round(sc.tcp.rto_rtt_factor * sc.rtt[0] / sc.slot_seconds)
    wmax = sc.tcp.wmax
    m, n = sc.m[0], sc.n[0]
    end = float(sc.total_slots)
    warm = round(sc.warmup / sc.slot_seconds)
    low = sc.rate_ratio
    rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
    ptimes, s0 = capacity_path(rng, end + 1, sc.tau / sc.slot_seconds, sc.capacity_mode,
                               sc.period / sc.slot_seconds, sc.initial_state)

    ev = []
    seqno = 0

    def push(t, kind, data=None):
        nonlocal seqno
        heapq.heappush(ev, (t, seqno, kind, data))
        seqno += 1

    cap_state = s0
    for tc in ptimes[np.isfinite(ptimes)]:
        push(float(tc), "cap")
    push(float(meas), "meas")
    rate = 1.0 if atm else sc.host_rate_factor          # source cells per slot (normalised)
    segq = deque()                                       # (seq, txid) frames at the source
    cell_idx = 0
    src_busy = False
    bq = deque()                                         # (seq, txid, eom) at the bottleneck
    link_busy = False
    ppd_tx = -1
    ra_tx, ra_got = -1, 0
    una = nxt = smax = 0
    cwnd, ssth = 1.0, float(wmax)
    rto_exp = math.inf
    txid = 0
    rcv_nxt = 0
    ooo = set()
    good = 0
    cells = 0
    hist, avgs = deque(maxlen=m), deque(maxlen=n)
    acc, last_t = 0.0, 0.0
    cap_win = 0.0

    def cap_now():
        return 1.0 if cap_state == 0 else low

    def integrate(t):
        nonlocal acc, last_t, cap_win
        c = cap_now()
        acc += c * (t - last_t)
        lo = max(last_t, warm)
        if t > lo:
            cap_win += c * (t - lo)
        last_t = t

    def try_send(t):
        nonlocal nxt, smax, txid, rto_exp, src_busy
        w = max(1, int(math.floor(min(cwnd, wmax) + 1e-9)))
        while nxt < una + w:
            segq.append((nxt, txid))
            txid += 1
            smax = max(smax, nxt + 1)
            nxt += 1
            if rto_exp == math.inf:
                rto_exp = t + rto
                push(rto_exp, "rto", rto_exp)
        if not src_busy and segq:
            src_busy = True
            push(t + 1.0 / rate * svc_high, "src")

    try_send(0.0)
    t0 = time.perf_counter()
    while ev:
        t, _, kind, data = heapq.heappop(ev)
        if t >= end:
            break
        if kind == "cap":
            integrate(t)
            cap_state = 1 - cap_state
        elif kind == "meas":
            integrate(t)
            hist.append(acc / meas)
            acc = 0.0
            avgs.append(sum(hist) / len(hist))
            if atm:
                push(t + fbdelay, "fb", min(avgs) * sc.share[0])
            push(t + meas, "meas")
        elif kind == "fb":
            rate = data
        elif kind == "src":
            seq, tx = segq[0]
            eom = cell_idx == upf - 1
            cell_idx += 1
            if eom:
                segq.popleft()
                cell_idx = 0
            cells += 1
            if ppd_tx != tx:
                if len(bq) >= bufcap:
                    ppd_tx = tx
                    cells += 1
                else:
                    bq.append((seq, tx, eom))
                    if not link_busy:
                        link_busy = True
                        push(t + svc_high / cap_now(), "dep")
            else:
                cells += 1
            if segq:
                push(t + svc_high / rate, "src")
            else:
                src_busy = False
        elif kind == "dep":
            seq, tx, eom = bq.popleft()
            cells += 1
            if ra_tx != tx:
                ra_tx, ra_got = tx, 0
            ra_got += 1
            if eom and ra_got == upf:
                if seq == rcv_nxt:
                    rcv_nxt += 1
                    adv = 1
                    while rcv_nxt in ooo:
                        ooo.discard(rcv_nxt)
                        rcv_nxt += 1
                        adv += 1
                    if t >= warm:
                        good += adv
                elif seq > rcv_nxt:
                    ooo.add(seq)
                push(t + delta, "ack", rcv_nxt)
            if bq:
                push(t + svc_high / cap_now(), "dep")
            else:
                link_busy = False
        elif kind == "ack":
            a = data
            if a > una:
                cwnd = cwnd + 1.0 if cwnd < ssth else cwnd + 1.0 / cwnd
                cwnd = min(cwnd, float(wmax))
                una = a
                nxt = max(nxt, una)
                rto_exp = t + rto if una < smax else math.inf
                if rto_exp < math.inf:
                    push(rto_exp, "rto", rto_exp)
            try_send(t)
        elif kind == "rto":
            if data != rto_exp:
                continue                                 # a restarted timer: stale event
            ssth = max(math.floor(min(cwnd, wmax) / 2), 2)
            cwnd = 1.0
            nxt = una
            rto_exp = math.inf
            try_send(t)
    integrate(end)
    wall = time.perf_counter() - t0
    capb = cap_win * sc.slot_bytes
    return {"efficiency": good * sc.ip_packet_bytes / capb, "cells": cells, "seconds": wall,
            "cells_per_second": cells / wall}
