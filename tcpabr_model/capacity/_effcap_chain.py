"""The capacity chain as an EFFCAP source sees it (docs/model.md sec. 20).

EFFCAP(M, N) feeds back, after each measurement, the minimum of the N most recent sliding
averages of M capacity samples (seed 004 eq. 28; :func:`~tcpabr_model.closed_forms.
effcap_feedback_series`).  With one sample per epoch of the embedded chain, that rate is a
function of the last ``L = M + N - 1`` levels, and the history ``H_k = (R_k, ..., R_{k-L+1})``
is a Markov chain whenever ``R`` is: ``H -> (r', H_0, ..., H_{L-2})`` with probability
``P[H_0, r']``.  Given to the engine as a capacity chain whose state ``H`` serves at level
``c[H_0]`` and whose *source* level (the rate fed back after ``H``, used over the next epoch
exactly as INSTCAP's ``S_{k+1} = R_k``) is eq. 28 of ``H``, it makes TCP over EFFCAP the
INSTCAP chain of Section III on histories.  M = N = 1 is INSTCAP itself.

The ``K^L`` histories are lumped exactly: two histories are merged when they have the same
newest level, the same fed-back rate and, level by level, successors that are merged
(partition refinement; the lumped chain is exactly Markov because each move is deterministic
given the next level, with a probability that depends on the newest level only).  For the
two-state link and ``M = 1`` this leaves ``N + 1``-ish states (how many epochs the link has
been high), not ``2^N``.  The refinement uses the zeros of ``P`` but not its values, so the
lumping is the same for every psi.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validate import check_int, check_real

__all__ = ["HistoryChain", "effcap_history_chain", "MAX_HISTORIES"]

#: K^(M + N - 1) histories at most before lumping [choice: the arrays of the refinement, a few
#: hundred MB at this size]
MAX_HISTORIES = 2_000_000


@dataclass(frozen=True)
class HistoryChain:
    """The lumped history chain of :func:`effcap_history_chain`.

    Attributes
    ----------
    levels : ndarray
        Service level of each state (its newest level's), the input's unit.
    source_levels : ndarray
        EFFCAP's rate fed back after the state's history, ``max(eq. 28, mcr)``, same unit.
    matrix : ndarray
        Transition matrix per epoch; state 0 holds the history that has been at level
        ``start`` for ``L`` epochs.
    base : ndarray of int
        The input's level index of each state's newest level.
    representative : ndarray of int
        One history per state, ``(n_states, L)``, newest level first.
    n_histories : int
        Histories reachable from state 0 before lumping.
    """

    levels: np.ndarray
    source_levels: np.ndarray
    matrix: np.ndarray
    base: np.ndarray
    representative: np.ndarray
    n_histories: int

    @property
    def n_states(self) -> int:
        return int(self.levels.size)


def _row_labels(sig: np.ndarray) -> np.ndarray:
    """``np.unique(sig, axis=0, return_inverse=True)``'s labels (rows in lexicographic order) of an integer
    matrix with entries >= -1, by one int64 key per row where the mixed radix fits (the same order, so the
    same labels; 10-20x faster on half a million rows), else by the rows."""
    radix = int(sig.max()) + 2
    if radix ** sig.shape[1] < 2 ** 62:
        key = np.zeros(sig.shape[0], dtype=np.int64)
        for col in sig.T:
            key = key * radix + (col.astype(np.int64) + 1)
        return np.unique(key, return_inverse=True)[1].ravel()
    return np.unique(sig, axis=0, return_inverse=True)[1].ravel()


def effcap_history_chain(levels, matrix, m: int, n: int, mcr: float = 0.0, *, lump: bool = True,
                         start: int = 0) -> HistoryChain:
    """The chain of the last ``M + N - 1`` levels with EFFCAP(M, N)'s rate after each (sec. 20).

    Parameters
    ----------
    levels : array of float
        Capacity levels ``c_1..c_K`` (>= 0, any unit).
    matrix : array
        K x K transition matrix per epoch (one EFFCAP sample per epoch).
    m, n : int
        EFFCAP's samples per average (M >= 1) and averages (N >= 1).
    mcr : float
        Minimum rate the source keeps (TM 4.0's MCR; 0, the default, is eq. 28 as printed).
    lump : bool
        Merge equivalent histories (default); False keeps one state per reachable history.
    start : int
        The level the chain starts in (state 0: ``L`` epochs at that level).
    """
    c = np.asarray(levels, dtype=float)
    P = np.asarray(matrix, dtype=float)
    k = c.size
    if c.ndim != 1 or k < 1 or not np.all(np.isfinite(c)) or c.min() < 0:
        raise ValueError(f"levels={levels!r} is invalid: must be a non-empty list of finite levels >= 0")
    if P.shape != (k, k) or not np.all(np.isfinite(P)) or P.min() < 0 or np.abs(P.sum(axis=1) - 1).max() > 1e-9:
        raise ValueError(f"matrix of shape {P.shape} is invalid: must be a {k} x {k} stochastic matrix")
    m = check_int("m", m, 1, 10_000)
    n = check_int("n", n, 1, 10_000)
    mcr = check_real("mcr", mcr, 0.0)
    start = check_int("start", start, 0, k - 1)
    hl = m + n - 1
    if hl * np.log(max(k, 1)) > np.log(MAX_HISTORIES) + 1e-9:
        raise ValueError(f"m={m!r}, n={n!r} are invalid with {k} levels: the {k}^{hl} histories of m + n - 1 = {hl} "
                         f"levels exceed {MAX_HISTORIES:,} (use fewer levels, or a smaller m + n)")
    n_hist = k ** hl
    codes = np.arange(n_hist, dtype=np.int64)
    powers = k ** np.arange(hl, dtype=np.int64)
    digits = (codes[:, None] // powers[None, :]) % k            # newest level first
    vals = c[digits]
    cs = np.concatenate([np.zeros((n_hist, 1)), np.cumsum(vals, axis=1)], axis=1)
    avg = (cs[:, m:m + n] - cs[:, 0:n]) / m                     # the N sliding M-averages
    src = np.maximum(avg.min(axis=1), mcr)
    base = digits[:, 0]
    succ = np.arange(k)[None, :] + k * (codes % (n_hist // k))[:, None]   # (H, r'): (r', H_0 .. H_{L-2})
    allowed = P[base] > 0

    # the histories reachable from L epochs at ``start`` (the zeros of P can forbid some)
    h0 = int(start * powers.sum())
    seen = np.zeros(n_hist, dtype=bool)
    seen[h0] = True
    front = np.array([h0])
    order = [front]
    while front.size:
        nxt = succ[front][allowed[front]]
        nxt = np.unique(nxt[~seen[nxt]])
        seen[nxt] = True
        if nxt.size:
            order.append(nxt)
        front = nxt
    reach = np.concatenate(order)                               # breadth-first from h0
    index = np.full(n_hist, -1, dtype=np.int64)
    index[reach] = np.arange(reach.size)
    r_succ = np.where(allowed[reach], index[succ[reach]], -1)   # (n, K) in reach's numbering
    r_base = base[reach]
    r_src = src[reach]

    if lump:
        # partition refinement: newest level and fed-back rate, then the successors' classes
        _, lab = np.unique(np.stack([r_base.astype(float), np.round(r_src, 12)], axis=1), axis=0,
                           return_inverse=True)
        lab = lab.ravel()
        while True:
            sig = np.concatenate([lab[:, None], np.where(r_succ >= 0, lab[np.maximum(r_succ, 0)], -1)], axis=1)
            new = _row_labels(sig)
            if new.max() == lab.max():
                break
            lab = new
        # classes numbered in the order their first history is reached (state 0: h0's)
        first = np.unique(lab, return_index=True)[1]
        rank = np.empty_like(first)
        rank[np.argsort(first, kind="stable")] = np.arange(first.size)
        cls = rank[lab]
        rep = np.sort(first)
    else:
        cls = np.arange(reach.size)
        rep = np.arange(reach.size)
    ns = rep.size
    Q = np.zeros((ns, ns))
    for j in range(k):
        ok = r_succ[rep, j] >= 0
        np.add.at(Q, (np.arange(ns)[ok], cls[r_succ[rep[ok], j]]), P[r_base[rep[ok]], j])
    return HistoryChain(levels=c[r_base[rep]], source_levels=r_src[rep], matrix=Q, base=r_base[rep].astype(np.int64),
                        representative=digits[reach[rep]], n_histories=int(reach.size))
