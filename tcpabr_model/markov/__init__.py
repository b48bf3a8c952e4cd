"""Markov renewal analysis of TCP over INSTCAP ABR and of TCP alone (seed 004, Sec. III).

- :class:`Scenario` -- validated operating point (delta, bmax, psi, rate_ratio, wmax, feedback)
- :func:`analyze` -- optimistic / conservative efficiency and throughput (eqs. 14-21)
- :func:`sweep_psi` -- the same over a psi grid, skeleton built once (pandas DataFrame)
- :func:`switch_probability` -- psi -> per-epoch switch probability of the embedded rate chain
- :func:`skeleton_for`, :func:`stationary_distribution` -- the chain and its solvers
- :func:`simulate_embedded` -- independent Monte Carlo of the same Markov renewal process
"""

from .analysis import AnalysisResult, analyze, sweep_psi
from .embedded_mc import EmbeddedMCResult, simulate_embedded
from .scenario import FEEDBACKS, Scenario, switch_probability
from .skeleton import Skeleton, skeleton_for
from .solvers import METHODS, stationary_distribution

__all__ = [
    "AnalysisResult", "EmbeddedMCResult", "FEEDBACKS", "METHODS", "Scenario", "Skeleton",
    "analyze", "simulate_embedded", "skeleton_for", "stationary_distribution", "sweep_psi",
    "switch_probability",
]
