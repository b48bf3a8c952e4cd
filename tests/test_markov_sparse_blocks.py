"""The matrix-free structured solve (K > 2) factors its SCC blocks of at least
``solvers.SPARSE_BLOCK_FROM`` states sparse (SuperLU) instead of inverting them dense
(docs/model.md sec. 5a item 8): the results agree with the dense inverse's to rounding, the
blocks below the threshold keep the dense inverse (their bits: tests/test_markov_bitwise.py),
and a solve from wrong factors still raises instead of returning a number."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import _small_chains
from tcpabr_model.capacity import read_trace
from tcpabr_model.errors import SolveError
from tcpabr_model.markov import analyze, solvers
from tcpabr_model.markov import skeleton as _skeleton
from tcpabr_model.markov.skeleton import skeleton_for
from tcpabr_model.trace_study import fit_link

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "traces"
DENSE = 10**9   # SPARSE_BLOCK_FROM that keeps every block dense (the path before sparse blocks)


def _bounds(sc) -> np.ndarray:
    _skeleton._CACHE.clear()
    r = analyze(sc)
    assert r.method == "structured (matrix-free)"
    return np.array([r.prediction, r.conservative, r.optimistic, r.loss_probability])


@pytest.fixture(scope="module")
def small_instcap():
    return _small_chains.small_instcap()


def test_every_block_sparse_agrees_with_the_dense_inverses(small_instcap, monkeypatch):
    """Every SCC of >= 2 states through SuperLU (threshold 2) against every block dense."""
    monkeypatch.setattr(solvers, "SPARSE_BLOCK_FROM", DENSE)
    dense = _bounds(small_instcap)
    monkeypatch.setattr(solvers, "SPARSE_BLOCK_FROM", 2)
    sparse = _bounds(small_instcap)
    s = solvers._structure(skeleton_for(small_instcap))
    assert s.max_scc >= 2
    np.testing.assert_allclose(sparse, dense, rtol=1e-12, atol=0.0)


def test_wrong_sparse_factors_raise_instead_of_returning_a_number(small_instcap, monkeypatch):
    """The residual check stays: U's diagonal 1 % off must end in SolveError."""
    real = solvers._sparse_blocks

    def skewed(*args):
        f = real(*args)
        f[4][:] *= 1.01   # udiag
        return f

    monkeypatch.setattr(solvers, "SPARSE_BLOCK_FROM", 2)
    monkeypatch.setattr(solvers, "_sparse_blocks", skewed)
    _skeleton._CACHE.clear()
    with pytest.raises(SolveError):
        analyze(small_instcap)


def test_factors_beyond_the_memory_refuse_with_the_reason(small_instcap, monkeypatch):
    """The factors' fill is known only once factored: beyond the memory available the solve
    stops with ChainTooLargeError naming it, never an out-of-memory kill or a number."""
    from tcpabr_model.errors import ChainTooLargeError
    from tcpabr_model.markov import estimate

    monkeypatch.setattr(solvers, "SPARSE_BLOCK_FROM", 2)
    _skeleton._CACHE.clear()
    sk = skeleton_for(small_instcap)          # built with the machine's memory
    monkeypatch.setattr(estimate, "available_memory", lambda: 100)
    with pytest.raises(ChainTooLargeError, match=r"sparse LU factors .* above the 0.0 GB of memory available"):
        solvers.structured_matrix_free(sk, small_instcap.rate_matrix)


def test_the_largest_blocks_are_ordered_by_minimum_degree(small_instcap, monkeypatch):
    """Blocks of SPARSE_MMD_FROM states or more take the minimum-degree order (less fill on
    the study's 13,064-state blocks); the results agree with the natural order to rounding."""
    monkeypatch.setattr(solvers, "SPARSE_BLOCK_FROM", 2)
    natural = _bounds(small_instcap)
    monkeypatch.setattr(solvers, "SPARSE_MMD_FROM", 2)
    mmd = _bounds(small_instcap)
    np.testing.assert_allclose(mmd, natural, rtol=1e-12, atol=0.0)


@pytest.mark.skipif(not (SHARED / "TMobile-UMTS-driving.down").is_file(),
                    reason="the shared cellular traces are absent")
def test_study_point_with_large_blocks_agrees_with_the_dense_inverses(monkeypatch):
    """The study's setting (TMobile-UMTS-driving half A, rtt 50 ms, 4 patterns, B_max 5:
    90,633 states since coincident opportunities are served through their millisecond (90,337
    before, docs/model.md sec. 11), SCC blocks up to 632 states): the sparse factors against
    the dense inverses, 1e-12 relative on every bound."""
    from tcpabr_model.trace_study import link_scenario, trace_halves

    link = fit_link(trace_halves(read_trace(SHARED / "TMobile-UMTS-driving.down"))[0], 0.05, patterns=4)
    sc = link_scenario(link, 5, "instcap", ca_increment="binomial")   # the chain counted with eq. 1's coins
    sparse = _bounds(sc)
    s = solvers._structure(skeleton_for(sc))
    assert skeleton_for(sc).n_states == 90633
    assert s.max_scc >= solvers.SPARSE_BLOCK_FROM   # the sparse path is taken
    monkeypatch.setattr(solvers, "SPARSE_BLOCK_FROM", DENSE)
    dense = _bounds(sc)
    np.testing.assert_allclose(sparse, dense, rtol=1e-12, atol=0.0)
