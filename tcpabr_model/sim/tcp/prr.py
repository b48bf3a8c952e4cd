"""SACK loss recovery's scoreboard and Proportional Rate Reduction (private; issue 25).

RFC 6675 SetPipe / IsLost on the sender's scoreboard ``sb`` (per segment: bit 0 SACKed,
bit 1 retransmitted) and RFC 6937 PRR-SSRB, the rate reduction Linux and ns-3 run during
a SACK recovery.  Used by :mod:`tcpabr_model.sim.tcp.connection` (variant ``sack``); the
state columns are ``S_PIPE``, ``S_LOSTEND``, ``S_PRRDEL``, ``S_PRROUT``, ``S_RECOVFS`` of
:mod:`tcpabr_model.sim.arrays.layout`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..arrays.layout import (
    F_CWND, F_SSTH, G_DUPTHRESH, S_LOSTEND, S_MAX, S_PIPE, S_PRRDEL, S_PRROUT, S_RECOVFS, S_UNA,
)

__all__ = ["sack_scoreboard", "prr_ack"]


@njit(cache=True, error_model="numpy")
def sack_scoreboard(c, st, gpar, sb):
    """RFC 6675 SetPipe and IsLost on the scoreboard, in one pass from the highest segment
    sent down to snd_una: ``S_PIPE`` = segments neither SACKed nor lost + retransmissions not
    SACKed; ``S_LOSTEND`` = the ``dupthresh``-th SACKed segment from the top (an unSACKed
    segment below it has ``dupthresh`` SACKed segments above: lost)."""
    cap = sb.shape[1]
    dupthresh = gpar[G_DUPTHRESH]
    una = st[c, S_UNA]
    nsacked = 0
    pipe = 0
    lostend = una
    for q in range(st[c, S_MAX] - 1, una - 1, -1):
        v = sb[c, q % cap]
        if v & 1:
            nsacked += 1
            if nsacked == dupthresh:
                lostend = q
        else:
            if nsacked < dupthresh:
                pipe += 1
            if v & 2:
                pipe += 1
    st[c, S_PIPE] = pipe
    st[c, S_LOSTEND] = lostend


@njit(cache=True, error_model="numpy")
def prr_ack(c, delivered, st, fs, gpar, sb):
    """RFC 6937 Proportional Rate Reduction, PRR-SSRB (Sec. 3; Linux ``tcp_cwnd_reduction``,
    ns-3 ``TcpPrrRecovery``), on an ACK of a SACK recovery that delivered ``delivered``
    segments (cumulative advance + newly SACKed - SACKed segments the advance passed).

    prr_delivered += delivered; with pipe from the scoreboard, ``sndcnt`` =
    ceil(prr_delivered x ssthresh / RecoverFS) - prr_out while pipe > ssthresh (the
    proportional part), else min(ssthresh - pipe, max(prr_delivered - prr_out, delivered)
    + 1) (slow start reduction bound); cwnd = pipe + max(sndcnt, 0).
    """
    sack_scoreboard(c, st, gpar, sb)
    st[c, S_PRRDEL] += delivered
    pipe = st[c, S_PIPE]
    ss = np.int64(fs[c, F_SSTH])
    prr_del = st[c, S_PRRDEL]
    prr_out = st[c, S_PRROUT]
    if pipe > ss:
        fs_ = st[c, S_RECOVFS]
        if fs_ < 1:
            fs_ = 1
        sndcnt = (prr_del * ss + fs_ - 1) // fs_ - prr_out
    else:
        limit = prr_del - prr_out
        if delivered > limit:
            limit = delivered
        limit += 1
        sndcnt = ss - pipe
        if limit < sndcnt:
            sndcnt = limit
    if sndcnt < 0:
        sndcnt = 0
    fs[c, F_CWND] = float(pipe + sndcnt)
