"""One row of the validation report (:class:`Check`) and how a check builds it.

Shared by every module of checks (``checks``, ``markov_checks``, ``validity_checks``) and
by the report printer (``__main__``), so that none of them imports another for the row.
Simulation checks use ``K_SE`` standard errors from independent replications as their
tolerance, plus, where stated, a deterministic allowance.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["K_SE", "Check", "make_check", "relative_error"]

#: Standard errors of a Monte Carlo estimate allowed by a simulation check.
K_SE = 4.0


@dataclass(frozen=True)
class Check:
    name: str
    formula: str
    closed_form: float
    independent: float
    rel_error: float
    tolerance: float
    basis: str

    @property
    def passed(self) -> bool:
        return bool(np.isfinite(self.rel_error) and self.rel_error <= self.tolerance)


def relative_error(a, b):
    """|a - b| / |b| (``b`` floored at 1e-300)."""
    a = float(a)
    b = float(b)
    return abs(a - b) / max(abs(b), 1e-300)


def make_check(name, formula, closed, indep, tol, basis, rel=None):
    """A :class:`Check` of ``closed`` against ``indep``; its error is :func:`relative_error`
    unless ``rel`` gives another measure."""
    return Check(name, formula, float(closed), float(indep), relative_error(closed, indep) if rel is None else float(rel),
                 float(tol), basis)
