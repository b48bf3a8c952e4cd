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

import importlib

__all__ = ["reproduce", "ReproduceResult", "FigureResult", "parse_figures", "SPECS", "FigureSpec", "Claim",
           "Verdict", "Part", "Size", "SIZES", "Est"]

# Imported on first use (PEP 562), so that ``tcpabr reproduce --help`` and argument
# errors do not pay for pandas, matplotlib and the models.
_HOME = {"reproduce": "._run", "ReproduceResult": "._run", "FigureResult": "._run", "parse_figures": "._run",
         "FigureSpec": "._spec", "Claim": "._spec", "Verdict": "._spec", "Part": "._spec", "Size": "._spec",
         "SIZES": "._spec", "Est": "._spec"}
_FIGURE_MODULES = ("fig08_09", "fig10_13", "fig14_16", "fig17_18", "fig19_22")


def __getattr__(name):
    if name == "SPECS":
        value = tuple(importlib.import_module(f".{m}", __name__).SPEC for m in _FIGURE_MODULES)
    elif name in _HOME:
        value = getattr(importlib.import_module(_HOME[name], __name__), name)
    elif name in _FIGURE_MODULES:
        value = importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
