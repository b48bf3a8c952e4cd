"""Standard views of tcpabr-model results (matplotlib; return the Axes or Figure, never show).

Public names
------------
plot_efficiency_vs_psi
    Efficiency against psi: analysis bound band shaded, simulation points with 95 % error bars.
plot_fairness_vs_psi
    Jain's fairness index, or each connection's efficiency, against psi.
plot_traces
    Window, queue and source-rate traces from ``simulate(..., trace=True).trace``.
plot_gap_heatmap
    Heat map of the analysis-vs-simulation gap of a validity map, one panel per (feedback, mode).
plot_design_front
    The feedback designer's front: throughput against p95 delay, TCP alone, INSTCAP, the
    paper's EFFCAP rule and the designed points marked (one ``tcpabr design`` result).
plot_design
    A Figure of any ``tcpabr design --json`` result (held-out halves, psi panels).
"""

import importlib

__all__ = [
    "plot_efficiency_vs_psi",
    "plot_fairness_vs_psi",
    "plot_traces",
    "plot_gap_heatmap",
    "plot_design_front",
    "plot_design",
]

# Imported on first use (PEP 562): ``tcpabr plot`` checks its arguments before pandas.
_HOME = {"plot_efficiency_vs_psi": "._efficiency", "plot_fairness_vs_psi": "._efficiency",
         "plot_traces": "._traces", "plot_gap_heatmap": "._validity", "plot_design_front": "._design",
         "plot_design": "._design"}


def __getattr__(name):
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOME[name], __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
