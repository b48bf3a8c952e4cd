"""Standard views of tcpabr-model results (matplotlib; return the Axes or Figure, never show).

Public names
------------
plot_efficiency_vs_psi
    Efficiency against psi: analysis bound band shaded, simulation points with 95 % error bars.
plot_fairness_vs_psi
    Jain's fairness index, or each connection's efficiency, against psi.
plot_traces
    Window, queue and source-rate traces from ``simulate(..., trace=True).trace``.
"""

from ._efficiency import plot_efficiency_vs_psi, plot_fairness_vs_psi
from ._traces import plot_traces

__all__ = [
    "plot_efficiency_vs_psi",
    "plot_fairness_vs_psi",
    "plot_traces",
]
