"""Regenerate Figs. 8-22 of the core paper (seed 004) with their claims checked.

Public names
------------
reproduce, ReproduceResult, FigureResult
    Run the figures' sweeps (through :mod:`tcpabr_model.sweep`), write ``figNN.png``,
    ``figNN.csv`` and ``REPORT.md``.
SPECS
    The figure groups, in order (``fig08_09``, ``fig10_13``, ``fig14_16``, ``fig17_18``,
    ``fig19_22``), each a :class:`FigureSpec`.
FigureSpec, Claim, Verdict, Part, Size, SIZES, Est
    Building blocks of a figure reproduction.
"""

from . import fig08_09, fig10_13, fig14_16, fig17_18, fig19_22
from ._run import FigureResult, ReproduceResult, parse_figures, reproduce
from ._spec import SIZES, Claim, Est, FigureSpec, Part, Size, Verdict

SPECS = (fig08_09.SPEC, fig10_13.SPEC, fig14_16.SPEC, fig17_18.SPEC, fig19_22.SPEC)

__all__ = ["reproduce", "ReproduceResult", "FigureResult", "parse_figures", "SPECS", "FigureSpec", "Claim",
           "Verdict", "Part", "Size", "SIZES", "Est"]
