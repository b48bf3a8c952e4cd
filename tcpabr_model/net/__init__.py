"""Network (topology) cell-level simulator: service categories, UBR+/GFR drop policies,
VBR with a guaranteed rate for UBR, SACK TCP, and the seeds' scenarios.

Public names
------------
Network, Port, Vc, VbrSource, TcpParams, DropPolicy, CapacityProcess
    Validated description of a network (``docs/network.md``).
simulate_network, NetResult
    Replications with confidence intervals.
from_sim_scenario
    The single-bottleneck system of :mod:`tcpabr_model.sim` as a network.
PRESETS, preset, preset_names
    The seeds' configurations (``presets.py``), each with its provenance.
"""

from .compat import from_sim_scenario
from .model import CapacityProcess, DropPolicy, Network, Port, TcpParams, VbrSource, Vc
from .run import NetResult, simulate_network

__all__ = ["Network", "Port", "Vc", "VbrSource", "TcpParams", "DropPolicy", "CapacityProcess",
           "simulate_network", "NetResult", "from_sim_scenario"]
