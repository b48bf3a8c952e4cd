"""The graph of P read from the skeleton without building it (docs/model.md sec. 5a item 9):
``kernels.classes.factored_scc`` and ``factored_leaving`` must give the strongly connected
components and the closed classes of the assembled P, whatever zeros the rate chain has
(the edges with ``Q = 0`` are skipped, the loss events are pass-through nodes)."""

from __future__ import annotations

import os

import numpy as np
import scipy.sparse.csgraph as csg
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tcpabr_model.capacity import from_arrays
from tcpabr_model.markov import Scenario, skeleton_for
from tcpabr_model.markov.kernels.classes import factored_leaving, factored_scc
from tcpabr_model.markov.skeleton import rate_chain
from tcpabr_model.markov.solvers import _event_targets, _structure

SETTINGS = settings(max_examples=int(os.environ.get("HYP_EXAMPLES", 25)), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def _partition(labels: np.ndarray) -> set:
    groups: dict = {}
    for i, lab in enumerate(labels):
        groups.setdefault(int(lab), []).append(i)
    return {tuple(g) for g in groups.values()}


def _factored(sk, Q):
    s = _structure(sk)
    g_ev, g_st, _ = _event_targets(sk, Q)
    g_ptr = np.zeros(s.n_events + 1, dtype=np.int64)
    np.cumsum(np.bincount(g_ev, minlength=s.n_events), out=g_ptr[1:])
    args = (sk.states, sk.nl_ptr, sk.nl_t, Q, sk.ls_ptr, s.e_idx, g_ptr, g_st)
    order, ptr = factored_scc(*args)
    lab = np.empty(sk.n_states + s.n_events, dtype=np.int64)
    lab[order] = np.repeat(np.arange(ptr.size - 1), np.diff(ptr))
    closed = ~factored_leaving(*args, lab, ptr.size - 1)
    return lab, closed


# irreducible rate chains (capacity models refuse others) with zeros: a 3-cycle, a periodic
# star, a lazy cycle, a full one, a one-way ring with holding
CHAINS = [
    [[0, 1, 0], [0, 0, 1], [1, 0, 0]],
    [[0, 0.5, 0.5], [1, 0, 0], [1, 0, 0]],
    [[0.5, 0.5, 0], [0, 0.5, 0.5], [0.5, 0, 0.5]],
    [[0.8, 0.1, 0.1], [0.2, 0.6, 0.2], [0.1, 0.2, 0.7]],
    [[0.9, 0.1, 0], [0, 0.9, 0.1], [0.1, 0, 0.9]],
]


@SETTINGS
@given(chain=st.sampled_from(CHAINS), bmax=st.integers(1, 4), wmax=st.integers(4, 14),
       feedback=st.sampled_from(["instcap", "none"]))
def test_factored_graph_has_the_components_and_closed_classes_of_p(chain, bmax, wmax, feedback):
    sc = Scenario(delta=8.0, bmax=bmax, wmax=wmax, feedback=feedback,
                  capacity=from_arrays([1.0, 0.6, 0.3], chain, epoch=8.0))
    sk = skeleton_for(sc)
    Q = rate_chain(sc.rate_matrix, None, sk.n_levels)
    P = sk.transition_matrix(Q)
    n = sk.n_states
    lab, closed = _factored(sk, Q)
    # SCCs over the states (paths through an event node are P's loss transitions)
    _, p_lab = csg.connected_components(P, directed=True, connection="strong")
    assert _partition(lab[:n]) == _partition(p_lab)
    # closed classes: a class of P is closed iff no positive entry leaves it
    coo = P.tocoo()
    leaves = np.zeros(p_lab.max() + 1, dtype=bool)
    out = (p_lab[coo.row] != p_lab[coo.col]) & (coo.data > 0)
    leaves[p_lab[coo.row[out]]] = True
    in_closed_p = ~leaves[p_lab]
    assert np.array_equal(closed[lab[:n]], in_closed_p)


def test_structural_graph_is_every_next_level():
    """With Q all ones and no loss entries the factored graph is the loss-free structural
    graph of the solver (every entry to every next level), as the expanded targets give it."""
    sc = Scenario(delta=8.0, bmax=3, wmax=12, feedback="instcap",
                  capacity=from_arrays([1.0, 0.6, 0.3], CHAINS[0], epoch=8.0))
    sk = skeleton_for(sc)
    s = _structure(sk)
    n, k = sk.n_states, sk.n_levels
    tg = sk.targets()
    rows = np.repeat(np.arange(n), k * np.diff(sk.nl_ptr))
    import scipy.sparse as sp

    T = sp.csr_matrix((np.ones(rows.size), (rows, tg.reshape(-1))), shape=(n, n))
    _, t_lab = csg.connected_components(T, directed=True, connection="strong")
    lab = np.empty(n, dtype=np.int64)
    lab[s.order] = np.repeat(np.arange(s.ptr.size - 1), np.diff(s.ptr))
    assert _partition(lab) == _partition(t_lab)


def test_closed_count_is_kept_per_pattern_of_q_and_g():
    """``solvers._closed_count`` counts the closed classes once per pattern of Q and G on a
    skeleton (a psi sweep keeps its pattern) and counts again where the pattern changes: over
    rate chains with other zeros on one skeleton it always equals a fresh count."""
    from tcpabr_model.markov.solvers import _closed_count

    sc = Scenario(delta=8.0, bmax=2, wmax=10, feedback="instcap",
                  capacity=from_arrays([1.0, 0.6, 0.3], CHAINS[3], epoch=8.0))
    sk = skeleton_for(sc)
    s = _structure(sk)
    for chain in CHAINS + CHAINS[::-1]:
        Q = rate_chain(np.array(chain, dtype=float), None, sk.n_levels)
        g_ev, g_st, _ = _event_targets(sk, Q)
        lab, closed = _factored(sk, Q)
        fresh = int(np.unique(lab[: sk.n_states][closed[lab[: sk.n_states]]]).size)
        assert _closed_count(sk, s, Q, g_ev, g_st) == fresh
        assert s.closed[0] == (Q > 0).tobytes() and s.closed[3] == fresh
    # the same pattern with other values: the kept count is returned, not recounted
    Q = rate_chain(np.array(CHAINS[3], dtype=float), None, sk.n_levels)
    g_ev, g_st, _ = _event_targets(sk, Q)
    _closed_count(sk, s, Q, g_ev, g_st)
    s.closed = s.closed[:3] + (-7,)
    Q2 = rate_chain(np.array([[0.5, 0.3, 0.2], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4]]), None, sk.n_levels)
    g_ev2, g_st2, _ = _event_targets(sk, Q2)
    assert np.array_equal(g_ev, g_ev2) and np.array_equal(g_st, g_st2)
    assert _closed_count(sk, s, Q2, g_ev2, g_st2) == -7
    s.closed = None
