"""Design of the rate feedback for a given link (issue 26 items 3-4; docs/design.md).

:func:`design` evaluates candidate feedbacks (EFFCAP's M, N, measurement interval s and
minimum rate; INSTCAP feeding back a target utilisation below 1; TCP alone, INSTCAP and the
paper's EFFCAP rule as references) on one :class:`~tcpabr_model.sim.Scenario` with the
cell-level simulator (trace replay for a trace), and returns each candidate's throughput and
p95 delay with confidence intervals, the Pareto front of throughput against p95 delay, and
the best candidate under a p95-delay limit; beside TCP alone and INSTCAP it reports the
Markov analysis where it has one (:func:`analysis_beside`: throughput and mean delays, never
a p95).  :func:`design_held_out` designs on one half of a trace and reports on the other;
:func:`design_over_psi` is the max-min design of the two-state link over several psi.
``tcpabr design`` is its command line (:mod:`tcpabr_model.design.cli`), ``tcpabr plot
DESIGN.json`` and :func:`tcpabr_model.plot.plot_design` its figure.
"""

from .analysis import analysis_beside
from .robust import HeldOut, HeldOutRound, PsiDesign, best_within, design_held_out, design_over_psi
from .search import Candidate, Design, DesignPoint, candidate_grid, design, pareto_front

__all__ = ["Candidate", "Design", "DesignPoint", "candidate_grid", "design", "pareto_front", "analysis_beside",
           "design_held_out", "HeldOut", "HeldOutRound", "design_over_psi", "PsiDesign", "best_within"]
