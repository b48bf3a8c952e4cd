"""Building blocks of a figure reproduction: sizes, sweep parts, claims and verdicts.

A :class:`FigureSpec` says which sweeps a figure needs (:class:`Part`, at the ``tiny``,
``quick`` or ``full`` :class:`Size`), how to draw the table they produce, and which of
the paper's claims (:class:`Claim`, quoted from seed 004 with their numbers) the table
is checked against.  A claim's ``check`` turns the regenerated numbers into a
:class:`Verdict` backed by :class:`Est` values (mean with a 95 % confidence half-width).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd

__all__ = ["Size", "SIZES", "Part", "Claim", "Verdict", "FigureSpec", "Est", "est", "VERDICTS"]

VERDICTS = ("supported", "partly", "not supported", "not evaluated")


@dataclass(frozen=True)
class Size:
    """Simulation effort of one reproduction size.

    Parameters
    ----------
    name : str
    replications : int
        Independent replications per simulated point (Student-t 95 % CI over them).
    duration : float
        Measured simulated time per replication, seconds (after ``warmup``).
    warmup : float
        Discarded initial transient per replication, seconds.
    """

    name: str
    replications: int
    duration: float
    warmup: float

    def sim_fixed(self) -> dict:
        """Sweep keys that set this size on a ``"simulation"`` point."""
        return {"replications": self.replications, "duration": self.duration, "warmup": self.warmup}


# CHOICE: tiny = for tests only (seconds); quick = CI (< 5 min on 2 cores); full =
# publication quality (95 % half-widths of about 1 % of the efficiency or less).
SIZES = {
    "tiny": Size("tiny", replications=2, duration=40.0, warmup=5.0),
    "quick": Size("quick", replications=6, duration=500.0, warmup=20.0),
    "full": Size("full", replications=10, duration=2000.0, warmup=20.0),
}


@dataclass(frozen=True)
class Part:
    """One sweep behind a figure: a method, a grid and tag columns added to its rows.

    ``grid`` is a :class:`tcpabr_model.sweep.Grid`; ``tags`` (e.g. ``{"mode":
    "embedded"}``) label the rows so that several parts can share one table.
    """

    method: str
    grid: object
    tags: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Verdict:
    """Outcome of checking one claim: ``status`` in :data:`VERDICTS`, the ``reason`` and
    the regenerated ``numbers`` (strings with 95 % CI half-widths) it rests on.

    'not evaluated' is used only when the size's grid has no point the claim speaks
    about (the ``tiny`` test size) or every such point failed."""

    status: str
    reason: str
    numbers: tuple = ()

    def __post_init__(self):
        if self.status not in VERDICTS:
            raise ValueError(f"status={self.status!r} is invalid: must be one of {VERDICTS}")


@dataclass(frozen=True)
class Claim:
    """A claim of the paper about a figure.

    Parameters
    ----------
    figure : str
        e.g. ``"Fig. 10"``.
    quote : str
        The paper's words, verbatim (with their numbers).
    rule : str
        How the verdict is decided from the regenerated numbers (stated before looking).
    check : callable
        ``check(df) -> Verdict`` on the figure's table.
    """

    figure: str
    quote: str
    rule: str
    check: Callable[[pd.DataFrame], Verdict]


@dataclass(frozen=True)
class FigureSpec:
    """How to regenerate one figure (or a group drawn together).

    Parameters
    ----------
    key : str
        File stem of the outputs (``fig08_09`` -> ``fig08_09.png``, ``fig08_09.csv``).
    numbers : tuple of int
        The paper's figure numbers covered.
    title : str
    parts : callable
        ``parts(size: Size) -> list[Part]``: the sweeps to run at that size.
    draw : callable
        ``draw(df) -> matplotlib.figure.Figure`` (paper's axes, units, legends).
    claims : tuple of Claim
    settings : str
        The parameters, as the paper states them, in one paragraph (for REPORT.md).
    """

    key: str
    numbers: tuple
    title: str
    parts: Callable
    draw: Callable
    claims: tuple
    settings: str = ""


# ---- estimates with confidence intervals -------------------------------------------

@dataclass(frozen=True)
class Est:
    """A mean with its 95 % half-width ``hw`` (0 for exact/deterministic values).

    Arithmetic propagates independent half-widths to first order (delta method), which is
    what the verdicts need: differences, ratios and averages of independent estimates.
    """

    mean: float
    hw: float = 0.0

    @property
    def lo(self) -> float:
        return self.mean - self.hw

    @property
    def hi(self) -> float:
        return self.mean + self.hw

    def __sub__(self, other):
        o = _as_est(other)
        return Est(self.mean - o.mean, math.hypot(self.hw, o.hw))

    def __add__(self, other):
        o = _as_est(other)
        return Est(self.mean + o.mean, math.hypot(self.hw, o.hw))

    def __truediv__(self, other):
        o = _as_est(other)
        if o.mean == 0:
            return Est(math.nan, math.nan)
        r = self.mean / o.mean
        rel = math.hypot(self.hw / self.mean if self.mean else 0.0, o.hw / o.mean)
        return Est(r, abs(r) * rel)

    def rel_to(self, other) -> "Est":
        """Relative difference self / other - 1."""
        q = self / other
        return Est(q.mean - 1.0, q.hw)

    def fmt(self, digits: int = 3, pct: bool = False) -> str:
        if pct:
            return f"{100 * self.mean:+.{max(digits - 2, 1)}f} % ± {100 * self.hw:.{max(digits - 2, 1)}f}"
        return f"{self.mean:.{digits}f} ± {self.hw:.{digits}f}"

    @staticmethod
    def average(values) -> "Est":
        vals = list(values)
        if not vals:
            return Est(math.nan, math.nan)
        m = float(np.mean([v.mean for v in vals]))
        hw = math.sqrt(sum(v.hw ** 2 for v in vals)) / len(vals)
        return Est(m, hw)


def _as_est(x) -> Est:
    return x if isinstance(x, Est) else Est(float(x), 0.0)


def est(row, value: str = "efficiency", hw: str | None = None) -> Est:
    """The estimate in column ``value`` of ``row`` with its half-width column
    (``value + '_hw'`` by default; 0 where absent or NaN)."""
    hwc = hw if hw is not None else f"{value}_hw"
    h = row.get(hwc, 0.0) if hasattr(row, "get") else 0.0
    h = 0.0 if h is None or (isinstance(h, float) and math.isnan(h)) else float(h)
    return Est(float(row[value]), h)
