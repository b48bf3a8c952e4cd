"""Design of the rate feedback for a given link (issue 26 item 3, first part).

:func:`design` evaluates candidate feedbacks (EFFCAP's M, N, measurement interval s and
minimum rate; INSTCAP feeding back a target utilisation below 1; TCP alone, INSTCAP and the
paper's EFFCAP rule as references) on one :class:`~tcpabr_model.sim.Scenario` with the
cell-level simulator, and returns each candidate's throughput and p95 delay with confidence
intervals, the Pareto front of throughput against p95 delay, and the best candidate under
a p95-delay limit.  ``tcpabr design`` is its command line (:mod:`tcpabr_model.design.cli`).
"""

from .search import Candidate, Design, DesignPoint, candidate_grid, design, pareto_front

__all__ = ["Candidate", "Design", "DesignPoint", "candidate_grid", "design", "pareto_front"]
