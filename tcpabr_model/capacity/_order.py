r"""The second-order chain of a fitted capacity model: the level *and the one before it*.

A chain fitted epoch by epoch (:func:`~._fit.fit_trace`) forgets where the link came from:
after a step from level 3 to level 5 it is as likely to fall back as after a step from 7 to
5.  On the shared cellular traces that is what TCP notices most (``docs/traces.md`` sec.
7.2x, ``analytics/level_memory.py``): replaying the trace's *own* level path with the fitted
within-epoch patterns gives TCP's throughput on the trace within a median 3.1 % (+0.8 to +1.4 %
at 2 BDP), a path of the fitted chain 9-10 % less at 2 BDP; a chain whose sojourns follow the
trace's (the level and its age) does no better, the chain that remembers the previous level
takes it to -3 to -4 %.

**The chain** (``order=2``).  Its states are the pairs :math:`(i, j)` of consecutive
first-order states (previous, current) that the fitted label sequence visits, counted
cyclically as the first-order counts are (the trace repeats), so the pair counts form a
closed walk and

.. math:: \hat P_{(i,j),(j,k)} = n_{ijk} / n_{ij}

is stochastic and irreducible on the visited pairs, with the pair frequencies as its
stationary law.  The level of :math:`(i, j)` is :math:`c_j`: the chain serves what the
first-order chain serves, epoch by epoch, and its stationary level law and mean are the
first-order fit's exactly (each first-order state's count is the sum of its pairs'). It is
the maximum-likelihood second-order Markov chain of the label sequence.

**[choices]** K is chosen on the first-order chain (the effective-capacity criterion) and
then expanded, so the expansion does not pick its own K; unvisited pairs are not states
(K' <= K^2, 26-64 on the shared traces at K = 8); the within-epoch patterns stay per
first-order level (:func:`expand_patterns`: the previous level does not change what a level
serves inside an epoch, and splitting the epochs over K' states would leave a few per
pattern).

The Markov renewal engine needs nothing new: it takes any K-state chain, levels may repeat.
Over INSTCAP the chain already carries the rate of the previous epoch, which is the pair's
first level, so the reachable states grow by a median 1.4x there on the shared traces
(docs/traces.md sec. 7.2x), by a median 2.1x for TCP alone.
"""

from __future__ import annotations

import numpy as np

from ._model import CapacityModel
from ._patterns import ServicePatterns

#: the orders of chain :func:`~._fit.fit_trace` fits
ORDERS = (1, 2)


def _visited_pairs(labels, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, pairs)``: the visited pair codes ``previous * k + current`` in increasing order
    and the index into them of each epoch's pair (cyclic: epoch 0's previous is the last)."""
    lab = np.asarray(labels, dtype=np.int64)
    if lab.ndim != 1 or lab.size < 2:
        raise ValueError(f"labels has shape {lab.shape}: need a 1-D sequence of at least 2 epochs")
    if lab.min() < 0 or lab.max() >= k:
        raise ValueError(f"labels is invalid: values must be in [0, {k - 1}]")
    codes, pairs = np.unique(np.roll(lab, 1) * k + lab, return_inverse=True)
    return codes, pairs.astype(np.int64)


def pair_labels(labels, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The pair state of each epoch of a first-order label sequence and the first-order state
    of each pair state.

    ``labels[t]`` in ``0..k-1``; the pair of epoch ``t`` is ``(labels[t-1], labels[t])``
    with ``labels[-1]`` the last epoch's (cyclic).  Returns ``(pairs, base)``: ``pairs[t]``
    numbers the visited pairs ``0..K'-1`` in the order of ``(previous, current)``, and
    ``base[s]`` is the *current* first-order state of pair ``s`` (its previous one is
    :func:`previous_states`).
    """
    codes, pairs = _visited_pairs(labels, k)
    return pairs, codes % k


def previous_states(labels, k: int) -> np.ndarray:
    """The *previous* first-order state of each pair state of :func:`pair_labels`."""
    return _visited_pairs(labels, k)[0] // k


def second_order_chain(model: CapacityModel, labels) -> tuple[CapacityModel, np.ndarray, np.ndarray]:
    """The second-order chain of ``model`` fitted to ``labels`` (module docstring).

    ``model``: the first-order chain (discrete time) whose state each epoch of ``labels`` is.
    Returns ``(chain, pairs, base)``: the chain on the visited pairs (levels ``c_j`` of each
    pair's current state, same epoch, time unit and packet size), the pair state of each
    epoch, and the first-order state of each pair.
    """
    if not isinstance(model, CapacityModel) or model.time != "discrete":
        raise ValueError(f"model={model!r} is invalid: must be a discrete-time CapacityModel")
    pairs, base = pair_labels(labels, model.n_levels)
    n = base.size
    counts = np.bincount(pairs * n + np.roll(pairs, -1), minlength=n * n).reshape(n, n).astype(float)
    # every visited pair has a successor: the cyclic walk is closed
    chain = CapacityModel(np.asarray(model.levels)[base], transition=counts / counts.sum(axis=1, keepdims=True),
                          epoch=model.epoch, time_unit=model.time_unit, packet_bytes=model.packet_bytes)
    return chain, pairs, base


def expand_patterns(service: ServicePatterns, base) -> ServicePatterns:
    """Per-state patterns of a second-order chain: each pair state takes the patterns of its
    first-order state ``base[s]``."""
    base = np.asarray(base, dtype=np.int64)
    if base.size and (base.min() < 0 or base.max() >= len(service.offsets)):
        raise ValueError(f"base is invalid: first-order states must be in [0, {len(service.offsets) - 1}]")
    return ServicePatterns(epoch=service.epoch, offsets=tuple(service.offsets[b] for b in base),
                           weights=tuple(service.weights[b] for b in base))


def level_sojourns(model: CapacityModel, base) -> np.ndarray:
    """Mean sojourn, in epochs, of each first-order state in a chain whose state ``s`` is
    first-order state ``base[s]``: one over the stationary rate of leaving it per epoch
    (``inf`` for a state never left)."""
    base = np.asarray(base, dtype=np.int64)
    P = np.asarray(model.transition)
    pi = np.asarray(model.stationary)
    out = np.empty(int(base.max()) + 1)
    for b in range(out.size):
        s = base == b
        occ = float(pi[s].sum())
        leave = float(pi[s] @ P[np.ix_(s, ~s)].sum(axis=1)) if occ > 0 else 0.0
        out[b] = occ / leave if leave > 0 else np.inf
    return out
