"""Cell-level Monte Carlo simulator of TCP over ATM/ABR (and TCP alone).

Public names
------------
Scenario, TcpConfig
    Validated scenario in physical units (``Scenario.from_normalized`` for the paper's
    normalised units).
simulate, SimulationResult, Estimate, Trace
    Run replications and get efficiency, fairness and loss estimates with confidence
    intervals.
capacity_path
    Sample path of the two-state available-capacity process.
m_from_delta, n_from_k, effcap_reference
    EFFCAP helpers (Section VI notation) and eq. (28) computed directly.
jain_index
    Jain's fairness index.
"""

from .capacity import capacity_path
from .feedback import effcap_reference, m_from_delta, n_from_k
from .run import Estimate, SimulationResult, Trace, jain_index, simulate
from .scenario import Scenario, TcpConfig

__all__ = ["Scenario", "TcpConfig", "simulate", "SimulationResult", "Estimate", "Trace",
           "capacity_path", "m_from_delta", "n_from_k", "effcap_reference", "jain_index"]
