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
"""

from ._efficiency import plot_efficiency_vs_psi, plot_fairness_vs_psi
from ._traces import plot_traces
from ._validity import plot_gap_heatmap

__all__ = [
    "plot_efficiency_vs_psi",
    "plot_fairness_vs_psi",
    "plot_traces",
    "plot_gap_heatmap",
]
