"""Markov renewal analysis of TCP over INSTCAP ABR and of TCP alone (seed 004, Sec. III).

- :class:`Scenario` -- validated operating point (delta, bmax, psi, rate_ratio, wmax, feedback),
  or a K-level capacity chain (``capacity=CapacityModel``, docs/model.md sec. 10)
- :func:`analyze` -- optimistic / conservative efficiency and throughput (eqs. 14-21)
- :func:`sweep_psi` -- the same over a psi grid, skeleton built once (pandas DataFrame)
- :func:`estimate_chain` -- exact state count, nonzeros, memory and time before building
- :func:`switch_probability` -- psi -> per-epoch switch probability of the embedded rate chain
- :func:`pair_chain` -- the chain on (level, next level, instant of the change) of
  ``switch_time='uniform'`` (rate changes inside the round trip, docs/model.md sec. 17)
- :func:`skeleton_for`, :func:`stationary_distribution` -- the chain and its solvers
- :func:`simulate_embedded` -- independent Monte Carlo of the same Markov renewal process

Names are imported on first use (PEP 562), so ``tcpabr analyze`` answers argument errors
without loading numba kernels, scipy or pandas.
"""

from __future__ import annotations

import importlib

_WHERE = {
    "AnalysisResult": "analysis", "analyze": "analysis", "sweep_psi": "analysis",
    "EmbeddedMCResult": "embedded_mc", "simulate_embedded": "embedded_mc",
    "ChainEstimate": "estimate", "estimate_chain": "estimate",
    "FEEDBACKS": "scenario", "ACK_CLOCKS": "scenario", "ROUND_TRIPS": "scenario", "Scenario": "scenario",
    "switch_probability": "scenario", "SWITCH_TIMES": "switching", "pair_chain": "switching",
    "Skeleton": "skeleton", "skeleton_for": "skeleton",
    "METHODS": "solvers", "stationary_distribution": "solvers",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str):
    mod = _WHERE.get(name)
    if mod is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{mod}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_WHERE))
