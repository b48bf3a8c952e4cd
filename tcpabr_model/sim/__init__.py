"""One cell-level Monte Carlo simulator of TCP over ATM/ABR, UBR+/GFR and TCP alone.

Two kernels run over the same arrays (``_layout.py``) and the same TCP (``_tcp.py``): the
general network kernel (ports, VCs, VBR, drop policies, ERICA; ``docs/network.md``) and
the single-bottleneck fast path of the core paper's system (``docs/simulator.md``).

Public names
------------
Scenario, TcpConfig
    The single-bottleneck system in physical units (``Scenario.from_normalized`` for the
    paper's normalised units); ``Scenario.to_network()`` builds the same system as a
    :class:`Network`.
simulate, SimulationResult, Trace
    Replications of a :class:`Scenario` on the fast path.
Network, Port, Vc, VbrSource, TcpParams, DropPolicy, CapacityProcess
    A network (topology) description.
simulate_network, NetResult
    Replications of a :class:`Network` on the general kernel.
preset, preset_names
    The seeds' configurations (``presets.py``), each with its provenance.
Estimate, jain_index
    From :mod:`tcpabr_model.stats`.
capacity_path, m_from_delta, n_from_k, effcap_reference
    The two-state capacity process; EFFCAP helpers (Section VI) and eq. (28).
VARIANTS
    The TCP variants: timeout-only, reno, newreno, sack.
"""

from ..stats import Estimate, jain_index
from .capacity import capacity_path
from .compat import from_sim_scenario
from .feedback import effcap_reference, m_from_delta, n_from_k
from .network import CapacityProcess, DropPolicy, Network, Port, TcpParams, VbrSource, Vc
from .network_run import NetResult, simulate_network
from .presets import preset, preset_names
from .run import SimulationResult, Trace, simulate
from .scenario import Scenario, TcpConfig
from .variants import VARIANTS

__all__ = ["Scenario", "TcpConfig", "simulate", "SimulationResult", "Estimate", "Trace",
           "capacity_path", "m_from_delta", "n_from_k", "effcap_reference", "jain_index",
           "Network", "Port", "Vc", "VbrSource", "TcpParams", "DropPolicy", "CapacityProcess",
           "simulate_network", "NetResult", "from_sim_scenario", "preset", "preset_names", "VARIANTS"]
