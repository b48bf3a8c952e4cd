"""Test helper: the fast path against the general kernel on one replication of a Scenario."""

from __future__ import annotations

import numpy as np

from tcpabr_model.sim.arrays import layout as L
from tcpabr_model.sim.driver import run_network_replication
from tcpabr_model.sim.driver import run_replication

#: The per-connection counters both kernels keep (``st`` columns).
COUNTERS = [L.S_GOOD, L.S_GOODALL, L.S_CSENT, L.S_CDROP, L.S_FDROP, L.S_FSENT, L.S_TIMEOUTS, L.S_ACKS,
            L.S_FASTRTX, L.S_RETX, L.S_SEGSENT, L.S_FDELIV]


def fast_vs_general(sc, seed: int):
    """Run ``sc`` on both kernels with the same random draws; assert identical counters and
    final cwnd; return the fast path's outputs."""
    child = np.random.SeedSequence(seed).spawn(1)[0]
    fast, _, _ = run_replication(sc, np.random.default_rng(child), trace=False)
    gen, _, _ = run_network_replication(sc.to_network(), np.random.default_rng(child))
    np.testing.assert_array_equal(gen[0][:, COUNTERS], fast[0][:, COUNTERS])
    np.testing.assert_array_equal(gen[1][:, L.F_CWND], fast[1][:, L.F_CWND])
    return fast
