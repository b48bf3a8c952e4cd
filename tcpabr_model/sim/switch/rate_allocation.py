"""Per-port rate allocation, called at the end of every measurement interval (private).

This is the hook "(c)" of ``docs/network.md`` (Extension points for ABR): at each
boundary ``t = k s`` the kernel calls :func:`port_interval` for every port with the
port's average available capacity over the interval just ended, ``x_k`` (normalised to
the port's high rate).  The implementation here is the core paper's explicit-rate
feedback (seed 004, Sections III-A and IV-A), exactly as :mod:`tcpabr_model.sim`:

INSTCAP
    feeds back ``x_k``;
EFFCAP, eq. (28)
    ``A_j = (x_{j-M+1} + ... + x_j) / M`` and ``fb_k = min(A_{k-N+1}, ..., A_k)``
    (fewer terms while the history is short; INSTCAP is M = N = 1).

Each VC whose source follows feedback from this port (``VP_SRCMODE == SRC_FEEDBACK``
and ``VP_FBPORT == p``) gets ``fb_k`` queued on its feedback ring; it reaches the source
``VP_FBDELAY`` slots later, which then sets ACR = max(fb x share, MCR) x port rate (TM 4.0's
SES-1, MCR <= ACR, with the source's minimum cell rate ``VF_MCR``; default 0, where the rule
is the paper's ACR = fb x share x port rate bit for bit).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..arrays.layout import SRC_FEEDBACK, V_FBCNT, V_FBHEAD, VP_FBDELAY, VP_FBPORT, VP_M, VP_N, VP_SRCMODE
from ..arrays.refcount import keep_alive

__all__ = ["port_interval", "effcap_update", "push_feedback", "receive_feedback"]


@njit(cache=True, error_model="numpy", inline="always")
def push_feedback(i, t, val, delay, state, head_col, cnt_col, fb_t, fb_v):
    """Queue the feedback value ``val`` (eq. 28) on source ``i``'s ring at slot ``t``; it
    arrives ``delay`` slots later.  The ring's head and count are ``state[i, head_col]``
    and ``state[i, cnt_col]`` (the fast path keeps them per connection, the network kernel
    per VC).  Returns the arrival slot, or -1 when the ring is full (error 3)."""
    cap = fb_t.shape[1]
    arrival = np.int64(-1)
    if state[i, cnt_col] < cap:
        pos = (state[i, head_col] + state[i, cnt_col]) % cap
        arrival = t + delay
        fb_t[i, pos] = arrival
        fb_v[i, pos] = val
        state[i, cnt_col] += 1
    keep_alive(state, fb_t, fb_v)     # see arrays/refcount.py
    return arrival


@njit(cache=True, error_model="numpy", inline="always")
def receive_feedback(i, t, state, head_col, cnt_col, fb_t, fb_v, acr, acr_col, share, mcr, slotb, rate):
    """Source ``i`` takes the feedback values that have reached it by slot ``t``: its ACR
    ``acr[i, acr_col]`` becomes max(newest value x ``share``, ``mcr``) x ``slotb`` x ``rate``
    (bytes per slot; ``mcr`` the minimum cell rate as a fraction of the port's high rate,
    ``rate`` the port's rate relative to one cell per slot, 1 on the fast path; Section
    III-A: the source sends at the rate fed back, TM 4.0 SES-1: never below MCR).  With
    ``mcr = 0`` ACR is the fed-back value x share x slotb x rate bit for bit (the value is
    >= 0).  Returns the arrival slot of the next value still on the ring, or ``2**62`` when
    it is empty."""
    cap = fb_t.shape[1]
    while state[i, cnt_col] > 0 and fb_t[i, state[i, head_col]] <= t:
        h = state[i, head_col]
        r = fb_v[i, h] * share
        if r < mcr:
            r = mcr
        acr[i, acr_col] = r * slotb * rate
        state[i, head_col] = (h + 1) % cap
        state[i, cnt_col] -= 1
    nxt = np.int64(2**62)
    if state[i, cnt_col] > 0:
        nxt = fb_t[i, state[i, head_col]]
    keep_alive(state, fb_t, fb_v, acr)
    return nxt


@njit(cache=True, error_model="numpy", inline="always")
def effcap_update(xh, avg, kmeas, m, n):
    """Eq. (28) after the ``kmeas``-th measurement (1-based; already stored in the ring ``xh``).

    Stores the mean of the last ``min(M, kmeas)`` measurements in the ring ``avg`` and
    returns the minimum of the last ``min(N, kmeas)`` such means: EFFCAP's value (INSTCAP
    is M = N = 1).  ``xh`` and ``avg`` are one VC's (or connection's) rings, 1-D.
    """
    mmax = xh.shape[0]
    nmax = avg.shape[0]
    cnt = m if m < kmeas else kmeas
    s = 0.0
    for i in range(kmeas - cnt, kmeas):
        s += xh[i % mmax]
    avg[(kmeas - 1) % nmax] = s / cnt
    cnt = n if n < kmeas else kmeas
    val = np.inf
    for j in range(kmeas - cnt, kmeas):
        a = avg[j % nmax]
        if a < val:
            val = a
    return val


@njit(cache=True, error_model="numpy")
def port_interval(p, t, kmeas, x, xh, avg, vpar, vst, fb_t, fb_v):
    """Record measurement ``x`` (the ``kmeas``-th, 1-based) of port ``p`` at slot ``t`` and
    queue eq. (28) feedback for the VCs it controls.

    Returns ``(error, earliest new feedback arrival)``; error 3 is a feedback ring overflow.
    """
    mmax = xh.shape[1]
    xh[p, (kmeas - 1) % mmax] = x
    err = 0
    nxt = np.int64(2**62)
    for v in range(vpar.shape[0]):
        if vpar[v, VP_SRCMODE] != SRC_FEEDBACK or vpar[v, VP_FBPORT] != p:
            continue
        val = effcap_update(xh[p], avg[v], kmeas, vpar[v, VP_M], vpar[v, VP_N])
        a = push_feedback(v, t, val, vpar[v, VP_FBDELAY], vst, V_FBHEAD, V_FBCNT, fb_t, fb_v)
        if a < 0:
            err = 3
        elif a < nxt:
            nxt = a
    return err, nxt
