"""Rate changes inside the round trip (docs/model.md sec. 17): the chain on (level, next level, instant).

Assumption III-B.1 puts every change of the bottleneck rate at an epoch ``t_k`` of the
connection, so a whole round trip (and the ACK burst at its start) sees one level.  A link
whose rate changes at times of its own changes it anywhere inside the connection's round trip.
``switch_time='uniform'`` models that: the interval ``[t_k, t_{k+1})`` is served at the level of
``X_k`` up to ``u_k Delta`` and at the level of ``X_{k+1}`` after it, with ``u_k`` uniform on
``n_phases`` points ``(m + 1/2) / n_phases`` and drawn afresh in every interval.  The capacity
state of the embedded chain becomes ``(X_k, X_{k+1}, u_k)`` (``u`` only where the level changes):
``(i, j, u) -> (j, l, u')`` with probability ``P[j, l] / n_phases`` (``P[j, j]`` to ``(j, j)``).
Each state's interval is one within-interval pattern of the engine (docs/model.md sec. 11), so no
kernel changes, and its level is the rate that interval serves, which INSTCAP feeds back over the
next interval (III-A.8, sec. 16).  Plain numpy.
"""

from __future__ import annotations

import numpy as np

__all__ = ["SWITCH_TIMES", "level_opportunities", "pair_chain", "pair_pattern", "pair_stationary"]

#: when the rate changes inside the round trip: at the connection's epochs (III-B.1, the paper's) or at a
#: uniformly distributed instant inside it (docs/model.md sec. 17)
SWITCH_TIMES = ("epoch", "uniform")


def level_opportunities(c: float, delta: float) -> np.ndarray:
    """The service instants of a constant level ``c`` (packets per time unit) over one interval:
    ``m / c`` for ``m = 1 .. floor(c delta)`` (time units from the epoch).  **[choice]** A fraction
    of a packet left at the interval's end is not carried over, as in every pattern of sec. 11."""
    n = int(np.floor(c * delta + 1e-9))
    return np.arange(1, n + 1, dtype=float) / c


def pair_chain(levels, P, delta: float, n_phases: int):
    """The chain of ``switch_time='uniform'`` on the states ``(i, j, m)``.

    Returns ``(states, rates, matrix, key)``: the states as ``(i, j, m)`` tuples (``m = 0`` where
    ``i == j``; ``m`` the instant ``u = (m + 1/2) / n_phases`` otherwise), in the order
    ``(0, 0), (0, 1, 0..n-1), ..., (K-1, K-1)``; the rate each serves (its pattern's packets over
    ``delta``, packets per time unit); the transition matrix per round trip; and the kernels'
    pattern arrays ``(pat_ptr, pat_w, opp_ptr, opp_t)`` (engine time units, one pattern per state,
    Scenario's ``_service_key``).  State ``(i, j, m)`` serves the level ``i``'s instants up to
    ``u delta`` and the level ``j``'s after it (each level keeps its own grid ``m / c``).
    """
    c = np.asarray(levels, dtype=float)
    P = np.asarray(P, dtype=float)
    k = c.size
    states = [(i, j, m) for i in range(k) for j in range(k) for m in (range(1) if i == j else range(n_phases))]
    index = {s: a for a, s in enumerate(states)}
    Pp = np.zeros((len(states), len(states)))
    for a, (_, j, _) in enumerate(states):
        for l in range(k):
            if l == j:
                Pp[a, index[(j, j, 0)]] += P[j, j]
            else:
                for m in range(n_phases):
                    Pp[a, index[(j, l, m)]] += P[j, l] / n_phases
    grids = [level_opportunities(ci, delta) for ci in c]
    pat_ptr, pat_w, opp_ptr, opp_t = [0], [], [0], []
    rates = np.empty(len(states))
    for a, (i, j, m) in enumerate(states):
        if i == j:
            o = grids[i]
        else:
            cut = (m + 0.5) / n_phases * delta
            o = np.concatenate([grids[i][grids[i] <= cut], grids[j][grids[j] > cut]])
        opp_t.extend(float(x) for x in o)
        opp_ptr.append(len(opp_t))
        pat_w.append(1.0)
        pat_ptr.append(len(pat_w))
        rates[a] = o.size / delta
    key = (tuple(pat_ptr), tuple(pat_w), tuple(opp_ptr), tuple(min(x, delta) for x in opp_t))
    return states, rates, Pp, key


def pair_stationary(states, pi, P, n_phases: int) -> np.ndarray:
    """The stationary law of :func:`pair_chain` from the rate chain's ``pi``: ``pi_i P[i, j] /
    n_phases`` on ``(i, j, m)``, ``pi_i P[i, i]`` on ``(i, i)`` (a pair ``(X_k, X_{k+1})`` has the
    probability of its step, and ``u`` is uniform and independent).  A pair the rate chain never
    takes (``P[i, j] = 0``, e.g. ``(0, 0)`` at psi 1, where the level alternates) has mass 0: the
    pair chain is then reducible (those states are transient) while the rate chain is not, so the
    law is taken from the rate chain instead of being solved on the pair chain."""
    pi = np.asarray(pi, dtype=float)
    P = np.asarray(P, dtype=float)
    return np.array([pi[i] * P[i, j] * (1.0 if i == j else 1.0 / n_phases) for i, j, _ in states])


def pair_pattern(states) -> tuple:
    """Which pair states can follow which, whatever the rate chain: ``(i, j, m) -> (j', l, m')``
    only where ``j' == j`` (M12).  A tuple of row tuples of bools (a part of the skeleton's key)."""
    return tuple(tuple(b[0] == a[1] for b in states) for a in states)

